/*
 * RDMA verbs transport. Devices, ports and GIDs: which (device, port) pairs become rails, and their weights.
 */
#include "config.h"
#include "tl/verbs/ib.h"

#include <ifaddrs.h>
#include <netinet/in.h>

static const char *sr_ib_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
    snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
             gid->raw[0], gid->raw[1], gid->raw[2], gid->raw[3], gid->raw[4], gid->raw[5],
             gid->raw[6], gid->raw[7], gid->raw[8], gid->raw[9], gid->raw[10], gid->raw[11],
             gid->raw[12], gid->raw[13], gid->raw[14], gid->raw[15]);
    return buf;
}

/* ---- devices, rails, GIDs -------------------------------------------------- */

static uint64_t sr_ib_port_speed(const struct ibv_port_attr *pa)
{
    static const uint64_t lane_mbps[] = { [1] = 2500, [2] = 5000, [4] = 10000, [8] = 10000,
                                          [16] = 14000, [32] = 25000, [64] = 50000,
                                          [128] = 100000 };
    int width = pa->active_width == 1 ? 1 : pa->active_width == 2 ? 4 : pa->active_width == 4 ? 8
              : pa->active_width == 8 ? 12 : pa->active_width == 16 ? 2 : 1;
    uint64_t per = pa->active_speed < 129 ? lane_mbps[pa->active_speed] : 0;
    return (per ? per : 10000) * (uint64_t)width;
}

static int sr_ib_gid_usable(const union ibv_gid *gid)
{
    static const uint8_t zero[16];
    if (memcmp(gid->raw, zero, 16) == 0)
        return 0;
    return !(gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80);  /* fe80::/10 */
}

static int sr_ib_gid_v4mapped(const union ibv_gid *gid)
{
    static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    return memcmp(gid->raw, pfx, 12) == 0;
}

/* Netmask length of the interface that holds the GID's IPv4 address, so that
 * peers can tell which of their rails share its subnet; 0 when not found. */
static uint32_t sr_ib_gid_prefix(const union ibv_gid *gid)
{
    struct ifaddrs *ifa, *i;
    uint32_t bits = 0;
    if (!sr_ib_gid_v4mapped(gid) || getifaddrs(&ifa) != 0)
        return 0;
    for (i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask)
            continue;
        const struct sockaddr_in *a = (const void *)i->ifa_addr;
        if (memcmp(&a->sin_addr.s_addr, gid->raw + 12, 4) == 0) {
            const struct sockaddr_in *m = (const void *)i->ifa_netmask;
            bits = (uint32_t)__builtin_popcount(m->sin_addr.s_addr);
            break;
        }
    }
    freeifaddrs(ifa);
    return bits;
}

/* RoCE v2 with an IPv4-mapped address first, then any v2, then v1; never a
 * zero or link-local GID.  -1 when the port has none usable. */
static int sr_ib_pick_gid(struct ibv_context *ctx, int port, const char *override,
                          union ibv_gid *gid_p)
{
    struct ibv_gid_entry ent[256];
    ssize_t n = ibv_query_gid_table(ctx, ent, 256, 0);
    int best = -1, best_score = -1;

    if (override && strcmp(override, "auto") != 0 && override[0]) {
        char *end;
        long idx = strtol(override, &end, 10);
        if (*end || idx < 0 || idx > 255 || ibv_query_gid(ctx, (uint8_t)port, (int)idx, gid_p)) {
            sr_error("SYMRAIL_IB_GID_INDEX='%s' is not a valid GID index on %s:%d", override,
                     ibv_get_device_name(ctx->device), port);
            return -2;
        }
        return (int)idx;
    }
    for (ssize_t i = 0; i < n; i++) {
        if ((int)ent[i].port_num != port || !sr_ib_gid_usable(&ent[i].gid))
            continue;
        int score = ent[i].gid_type == IBV_GID_TYPE_ROCE_V2 ? 2 :
                    ent[i].gid_type == IBV_GID_TYPE_IB ? 2 : 1;
        score = score * 2 + sr_ib_gid_v4mapped(&ent[i].gid);
        if (score > best_score) {
            best_score = score;
            best = (int)ent[i].gid_index;
            *gid_p = ent[i].gid;
        }
    }
    return best;
}

static symrail_status_t sr_ib_dev_open(sr_tl_ctx_t *ctx, struct ibv_device *ibdev,
                                       sr_ib_dev_t **dev_p)
{
    sr_ib_dev_t *dev = &ctx->devs[ctx->ndevs];
    memset(dev, 0, sizeof(*dev));
    snprintf(dev->name, sizeof(dev->name), "%s", ibv_get_device_name(ibdev));
    dev->ctx = ibv_open_device(ibdev);
    if (dev->ctx == NULL) {
        sr_warn("verbs: cannot open %s: %m", dev->name);
        return SYMRAIL_ERR_TRANSPORT;
    }
    dev->pd = ibv_alloc_pd(dev->ctx);
    if (dev->pd == NULL) {
        sr_warn("verbs: ibv_alloc_pd on %s failed: %m", dev->name);
        goto err_close;
    }
    struct ibv_device_attr da;
    if (ibv_query_device(dev->ctx, &da) != 0)
        goto err_pd;
    dev->cq_size = (uint32_t)ctx->params.env->ib_cq_size;
    if ((int)dev->cq_size > da.max_cqe)
        dev->cq_size = (uint32_t)da.max_cqe;
    dev->cq = ibv_create_cq(dev->ctx, (int)dev->cq_size, NULL, NULL, 0);
    if (dev->cq == NULL) {
        sr_error("verbs: ibv_create_cq(%u) on %s failed: %m", dev->cq_size, dev->name);
        goto err_pd;
    }
    if (ctx->max_wr > (uint32_t)da.max_qp_wr)
        ctx->max_wr = (uint32_t)da.max_qp_wr;
    if (ctx->ndevs == 0 || ctx->dev_max_wr > (uint32_t)da.max_qp_wr)
        ctx->dev_max_wr = (uint32_t)da.max_qp_wr;
    ctx->ndevs++;
    *dev_p = dev;
    return SYMRAIL_OK;

err_pd:
    ibv_dealloc_pd(dev->pd);
err_close:
    ibv_close_device(dev->ctx);
    return SYMRAIL_ERR_TRANSPORT;
}

void sr_ib_dev_close(sr_ib_dev_t *dev)
{
    for (int r = 0; r < SR_IB_MAX_REGIONS; r++)
        if (dev->mr[r])
            ibv_dereg_mr(dev->mr[r]);
    if (dev->scratch_mr)
        ibv_dereg_mr(dev->scratch_mr);
    if (dev->cq)
        ibv_destroy_cq(dev->cq);
    if (dev->pd)
        ibv_dealloc_pd(dev->pd);
    if (dev->ctx)
        ibv_close_device(dev->ctx);
    memset(dev, 0, sizeof(*dev));
}

symrail_status_t sr_ib_find_rails(sr_tl_ctx_t *ctx)
{
    const char *filter = ctx->params.env->ib_devices;
    int ndev = 0;
    if (sr_rails_filter_check(filter) != SYMRAIL_OK) {
        sr_error("SYMRAIL_IB_DEVICES='%s' has an entry that names no rail (device[:port])", filter);
        return SYMRAIL_ERR_INVALID;
    }
    struct ibv_device **list = ibv_get_device_list(&ndev);
    if (list == NULL || ndev == 0) {
        if (list)
            ibv_free_device_list(list);
        sr_info("verbs: no RDMA device found");
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    for (int d = 0; d < ndev && ctx->nrails < SR_IB_MAX_RAILS; d++) {
        const char *name = ibv_get_device_name(list[d]);
        sr_ib_dev_t *dev = NULL;
        if (sr_ib_dev_open(ctx, list[d], &dev) != SYMRAIL_OK)
            continue;
        struct ibv_device_attr da;
        ibv_query_device(dev->ctx, &da);
        int used = 0;
        for (int port = 1; port <= da.phys_port_cnt && ctx->nrails < SR_IB_MAX_RAILS; port++) {
            struct ibv_port_attr pa;
            if (!sr_rails_filter_match(filter, name, port) ||
                ibv_query_port(dev->ctx, (uint8_t)port, &pa) != 0 || pa.state != IBV_PORT_ACTIVE)
                continue;
            sr_ib_rail_t *rail = &ctx->rails[ctx->nrails];
            memset(rail, 0, sizeof(*rail));
            rail->dev = dev;
            rail->port = port;
            rail->lid = pa.lid;
            rail->mtu = (uint8_t)pa.active_mtu;
            rail->is_eth = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
            rail->speed_mbps = sr_ib_port_speed(&pa);
            rail->gid_index = sr_ib_pick_gid(dev->ctx, port, ctx->params.env->ib_gid_index,
                                             &rail->gid);
            if (rail->gid_index == -2)
                goto err_list;
            if (rail->gid_index < 0) {
                if (rail->is_eth) {
                    sr_warn("verbs: %s:%d has no usable GID (no address on its netdev?); "
                            "skipped", name, port);
                    continue;
                }
                rail->gid_index = 0;  /* InfiniBand within one subnet: the LID is enough */
            }
            rail->prefix_bits = rail->is_eth ? sr_ib_gid_prefix(&rail->gid) : 0;
            char g[64];
            sr_info("verbs: rail %s:%d %s, GID index %d (%s), MTU %d, %llu Mb/s", name, port,
                    rail->is_eth ? "RoCE" : "InfiniBand", rail->gid_index,
                    sr_ib_gid_str(&rail->gid, g, sizeof(g)), 128 << rail->mtu,
                    (unsigned long long)rail->speed_mbps);
            ctx->nrails++;
            used = 1;
        }
        if (!used) {
            sr_ib_dev_close(dev);
            ctx->ndevs--;
        }
    }
    ibv_free_device_list(list);
    if (ctx->nrails == 0) {
        sr_info("verbs: no active port%s%s", filter && *filter ? " matches SYMRAIL_IB_DEVICES=" : "",
                filter && *filter ? filter : "");
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    return SYMRAIL_OK;

err_list:
    ibv_free_device_list(list);
    return SYMRAIL_ERR_INVALID;
}

/* Weights: locality (hwloc) and link speed; far rails may be left out. */
void sr_ib_weigh_rails(sr_tl_ctx_t *ctx)
{
    sr_rail_t info[SR_IB_MAX_RAILS];
    hwloc_topology_t topo = NULL;
    memset(info, 0, sizeof(info));
    for (int r = 0; r < ctx->nrails; r++) {
        snprintf(info[r].dev, sizeof(info[r].dev), "%s", ctx->rails[r].dev->name);
        info[r].port = ctx->rails[r].port;
        info[r].speed_mbps = ctx->rails[r].speed_mbps;
    }
    if (sr_rails_topo_load(NULL, &topo) != SYMRAIL_OK ||
        sr_rails_rank(topo, NULL, (double)ctx->params.env->ib_rail_ratio, info,
                      ctx->nrails) != SYMRAIL_OK) {
        for (int r = 0; r < ctx->nrails; r++)
            info[r].weight = (uint32_t)(ctx->rails[r].speed_mbps / 1000 + 1);
    }
    if (topo)
        hwloc_topology_destroy(topo);
    for (int r = 0; r < ctx->nrails; r++) {
        ctx->rails[r].weight = info[r].weight;
        sr_debug("verbs: rail %s:%d weight %u (numa %d, distance %d)", info[r].dev, info[r].port,
                 info[r].weight, info[r].numa, info[r].distance);
    }
}

void sr_tl_verbs_rails_report(FILE *out, const sr_env_t *env)
{
    sr_tl_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return;
    ctx->params.env = env;
    ctx->max_wr = (uint32_t)env->ib_max_wr;
    if (sr_ib_find_rails(ctx) != SYMRAIL_OK) {
        fprintf(out, "  no usable RDMA rail (no device, no active port, or filtered out by "
                     "SYMRAIL_IB_DEVICES)\n");
    } else {
        sr_ib_weigh_rails(ctx);
        for (int r = 0; r < ctx->nrails; r++) {
            sr_ib_rail_t *rail = &ctx->rails[r];
            char g[64];
            fprintf(out, "  %s:%d  %-10s GID[%d] %s  MTU %d  %llu Mb/s  weight %u%s\n",
                    rail->dev->name, rail->port, rail->is_eth ? "RoCE" : "InfiniBand",
                    rail->gid_index, sr_ib_gid_str(&rail->gid, g, sizeof(g)), 128 << rail->mtu,
                    (unsigned long long)rail->speed_mbps, rail->weight,
                    rail->weight ? "" : " (not used: too far from this process)");
        }
    }
    for (int d = 0; d < ctx->ndevs; d++)
        sr_ib_dev_close(&ctx->devs[d]);
    free(ctx);
}
