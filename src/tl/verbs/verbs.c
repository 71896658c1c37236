/*
 * RDMA verbs transport (RC queue pairs).
 *
 * Rails are the active (device, port) pairs.  Every peer gets
 * SYMRAIL_QPS_PER_PEER data QPs on each rail: the lanes the core sprays
 * slices over.  All QP numbers for all peers travel in this PE's address
 * blob, so one PMIx fence connects the whole job.
 *
 * Backpressure has two levels: a lane accepts a work request only while its
 * QP has fewer than SYMRAIL_MAX_WR outstanding, and only while its device's
 * CQ has room for one more completion; otherwise the op returns
 * SYMRAIL_ERR_AGAIN and the core progresses.  So ibv_post_send never fails
 * for lack of room and a CQ never overruns.
 *
 * Notifications use one more RC QP per peer (on the first rail) with its own
 * CQ and pre-posted receive buffers.  Credits: a receiver writes the count of
 * messages it has consumed (and re-posted buffers for) into the sender's
 * memory with an RDMA WRITE; a sender never has more than the receive depth
 * in flight, so there is never an RNR.  A progress thread keeps receive
 * buffers posted while the application computes.
 */
#include "config.h"
#include "tl/tl.h"
#include "tl/verbs/credits.h"
#include "tl/verbs/rails.h"
#include "util/log.h"
#include "util/pool.h"
#include "util/sys.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SR_IB_MAGIC        0x7372696276310000ull  /* "sribv1" */
#define SR_IB_MAX_RAILS    8
#define SR_IB_MAX_REGIONS  4
#define SR_IB_NAME_LEN     32
#define SR_IB_MSG_HDR      8
#define SR_IB_MSG_SIZE     (SR_IB_MSG_HDR + SYMRAIL_NOTIFY_MAX_PAYLOAD)
#define SR_IB_AMO_SLOTS    64
#define SR_IB_BOUNCE_SLOTS 64
#define SR_IB_POLL_BATCH   64
/* Ack timeout 4.096 us * 2^16 = 268 ms, 7 retries: a dead peer shows as a
 * completion error in about 2 s, a slow emulated peer does not. */
#define SR_IB_QP_TIMEOUT   16
#define SR_IB_QP_RETRY     7

/* wr_id of notify-channel work requests: kind in the top bits. */
#define SR_IB_WR_RECV   (1ull << 62)
#define SR_IB_WR_SEND   (2ull << 62)
#define SR_IB_WR_CREDIT (3ull << 62)
#define SR_IB_WR_KIND(x) ((x) & (3ull << 62))

typedef struct sr_ib_dev {
    struct ibv_context *ctx;
    struct ibv_pd      *pd;
    struct ibv_cq      *cq;
    struct ibv_mr      *mr[SR_IB_MAX_REGIONS];
    struct ibv_mr      *scratch_mr;
    char                name[SR_IB_NAME_LEN];
    uint32_t            cq_size;
    _Alignas(SR_CACHE_LINE) uint32_t cq_outstanding;
} sr_ib_dev_t;

typedef struct {
    sr_ib_dev_t   *dev;
    int            port;
    int            gid_index;
    union ibv_gid  gid;
    uint16_t       lid;
    uint8_t        mtu;          /* enum ibv_mtu */
    uint8_t        is_eth;
    uint32_t       weight;
    uint64_t       speed_mbps;
    uint64_t       bytes;        /* put/get data carried */
    uint64_t       slices;
} sr_ib_rail_t;

/*
 * A lane whose QP failed is repaired: it drains (every outstanding WR
 * completes, flushed), then the lower-numbered PE of the pair creates a new
 * QP and sends its number over the notify channel (RECONNECT); the other PE
 * drains its side too, creates and connects its new QP and answers (ACK).
 * A higher-numbered PE that sees the failure first asks for this (REQUEST).
 */
typedef enum {
    SR_IB_LANE_UP = 0,
    SR_IB_LANE_DRAIN,     /* in error, waiting for outstanding WRs to flush */
    SR_IB_LANE_WAIT,      /* new QP made, waiting for the peer's half */
    SR_IB_LANE_DEAD,      /* beyond repair */
} sr_ib_lane_state_t;

#define SR_IB_MAX_REPAIRS 3

typedef struct {
    struct ibv_qp *qp;
    sr_ib_rail_t  *rail;
    int            down;         /* not usable now (any state but UP) */
    int            state;
    int            repairs;
    int            asked;        /* REQUEST sent for this outage */
    uint32_t       peer_qpn;     /* the peer's new QP, once told (0: not yet) */
    uint64_t       posted;       /* for the test fault hook */
    _Alignas(SR_CACHE_LINE) uint32_t outstanding;
} sr_ib_lane_t;

/* Internal notify messages: flagged in the length word, never shown to users. */
#define SR_IB_MSG_INTERNAL 0x80000000u
enum { SR_IB_CTL_REQUEST = 1, SR_IB_CTL_RECONNECT = 2, SR_IB_CTL_ACK = 3 };
typedef struct {
    uint32_t op;
    uint32_t lane;
    uint32_t qpn;
} sr_ib_ctl_t;

/* One outstanding data work request; its address is the wr_id. */
typedef struct sr_ib_op {
    sr_tl_comp_t     *comp;
    struct sr_tl_ep  *ep;
    sr_ib_lane_t     *lane;
    void             *dst;       /* get through a bounce buffer, or atomic result */
    size_t            len;
    int               bounce;    /* bounce slot or -1 */
    int               amo_slot;  /* atomic result slot or -1 */
    int               amo_loop;  /* SET/SWAP built from compare-swap */
    uint64_t          expect, operand, raddr;
    uint32_t          rkey;
} sr_ib_op_t;

/* What a peer publishes for each rail. */
typedef struct {
    char     dev[SR_IB_NAME_LEN];
    uint8_t  gid[16];
    uint32_t port;
    uint32_t lid;
    uint32_t mtu;
    uint32_t is_eth;
    uint32_t rkey[SR_IB_MAX_REGIONS];
    uint32_t scratch_rkey;
} sr_ib_rail_addr_t;

typedef struct {
    uint64_t magic;
    int32_t  pid;
    uint32_t nrails;
    uint32_t n_pes;
    uint32_t qpp;
    uint32_t depth;
    uint32_t pad;
    uint64_t region_addr[SR_IB_MAX_REGIONS];
    uint64_t scratch_addr;
    /* then: sr_ib_rail_addr_t[nrails], uint32_t qpn[n_pes][nrails * qpp + 1] */
} sr_ib_addr_hdr_t;

struct sr_tl_ep {
    struct sr_tl_ctx *ctx;
    int               pe;
    int               pid;
    int               local;
    int               nlanes;
    sr_ib_lane_t     *lanes;
    uint64_t          raddr[SR_IB_MAX_REGIONS];
    uint32_t          rkey[SR_IB_MAX_RAILS][SR_IB_MAX_REGIONS];
    /* notify channel (guarded by ctx->nlock) */
    struct ibv_qp    *nqp;
    uint64_t          n_sent;          /* messages sent to the peer */
    uint64_t          n_send_done;     /* their send completions */
    uint64_t          n_recv;          /* messages received and re-posted */
    uint64_t          n_recv_reported; /* ... of which the peer knows */
    uint64_t          credit_raddr;    /* where the peer counts what we consumed */
    uint32_t          credit_rkey;
    int               nqp_error;
    sr_ib_rail_addr_t rail_addr[SR_IB_MAX_RAILS];  /* to reconnect repaired lanes */
    /* The last word we set there and its value: the first guess of the next
     * compare-swap loop, right for flags and counters a PE keeps setting. */
    uint64_t          guess_raddr, guess_val;
};

typedef struct sr_ib_msg {
    struct sr_ib_msg *next;
    int               src;
    uint32_t          tag;
    uint32_t          len;
    unsigned char     payload[];
} sr_ib_msg_t;

struct sr_tl_ctx {
    sr_tl_params_t  params;
    sr_ib_dev_t     devs[SR_IB_MAX_RAILS];
    int             ndevs;
    sr_ib_rail_t    rails[SR_IB_MAX_RAILS];
    int             nrails;
    uint32_t        qpp;
    uint32_t        max_wr;
    uint32_t        depth;
    int             max_inline;
    sr_tl_mem_t     regions[SR_IB_MAX_REGIONS];
    uint32_t        nregions;
    uint8_t        *use;           /* [n_pes]: peers reached over verbs */
    sr_ib_lane_t   *lanes;         /* [n_pes][nrails * qpp] */
    struct ibv_qp **nqps;          /* [n_pes] */
    sr_tl_ep_t    **eps;           /* [n_pes] */

    /* Registered scratch: credits, atomic results, notify slots, bounce. */
    char           *scratch;
    size_t          scratch_len;
    uint64_t       *credits;       /* [n_pes]: messages each peer consumed of ours */
    uint64_t       *amo_res;       /* [SR_IB_AMO_SLOTS] */
    char           *recv_slots;    /* [n_pes][depth][SR_IB_MSG_SIZE] */
    char           *send_slots;    /* [n_pes][depth][SR_IB_MSG_SIZE] */
    char           *bounce;        /* [SR_IB_BOUNCE_SLOTS][bounce_len] */
    size_t          bounce_len;
    uint64_t        amo_free;      /* bitmap */
    uint64_t        bounce_free;   /* bitmap */

    sr_pool_t       ops;           /* sr_ib_op_t */

    /* Notify channel, shared with the progress thread. */
    pthread_mutex_t nlock;
    struct ibv_comp_channel *nch;
    struct ibv_cq  *ncq;
    sr_ib_msg_t    *mq_head, *mq_tail;
    pthread_t       thread;
    int             thread_up;
    volatile int    stop;
    int             wake_pipe[2];

    int             fault_lane;
    uint64_t        fault_after;
    uint64_t        n_posted, n_completed, n_qp_full, n_cq_full, n_repaired;
    int             repairs_pending;
};

static inline uint32_t sr_ib_psn(uint32_t qpn)
{
    return (qpn * 2654435761u) & 0xffffff;
}

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
    ctx->ndevs++;
    *dev_p = dev;
    return SYMRAIL_OK;

err_pd:
    ibv_dealloc_pd(dev->pd);
err_close:
    ibv_close_device(dev->ctx);
    return SYMRAIL_ERR_TRANSPORT;
}

static void sr_ib_dev_close(sr_ib_dev_t *dev)
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

static symrail_status_t sr_ib_find_rails(sr_tl_ctx_t *ctx)
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
static void sr_ib_weigh_rails(sr_tl_ctx_t *ctx)
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

/* ---- memory ------------------------------------------------------------------ */

static symrail_status_t sr_ib_scratch_init(sr_tl_ctx_t *ctx)
{
    size_t n = (size_t)ctx->params.n_pes;
    size_t slots = n * ctx->depth * SR_IB_MSG_SIZE;
    ctx->bounce_len = ctx->params.env->slice_size + ctx->params.env->slice_size / 4;
    size_t credits = SR_ALIGN_UP(n * sizeof(uint64_t), SR_CACHE_LINE);
    size_t amo = SR_IB_AMO_SLOTS * sizeof(uint64_t);
    ctx->scratch_len = credits + amo + 2 * SR_ALIGN_UP(slots, 4096) +
                       SR_IB_BOUNCE_SLOTS * SR_ALIGN_UP(ctx->bounce_len, 4096);
    if (posix_memalign((void **)&ctx->scratch, 4096, ctx->scratch_len) != 0)
        return SYMRAIL_ERR_NOMEM;
    memset(ctx->scratch, 0, credits + amo);
    ctx->credits = (uint64_t *)(void *)ctx->scratch;
    ctx->amo_res = (uint64_t *)(void *)(ctx->scratch + credits);
    ctx->recv_slots = ctx->scratch + credits + amo;
    ctx->send_slots = ctx->recv_slots + SR_ALIGN_UP(slots, 4096);
    ctx->bounce = ctx->send_slots + SR_ALIGN_UP(slots, 4096);
    ctx->bounce_len = SR_ALIGN_UP(ctx->bounce_len, 4096);
    ctx->amo_free = ~0ull;
    ctx->bounce_free = ~0ull;
    for (int d = 0; d < ctx->ndevs; d++) {
        sr_ib_dev_t *dev = &ctx->devs[d];
        dev->scratch_mr = ibv_reg_mr(dev->pd, ctx->scratch, ctx->scratch_len,
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                         IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
        if (dev->scratch_mr == NULL) {
            sr_error("verbs: registering %zu bytes of scratch memory on %s failed: %m "
                     "(ulimit -l?)", ctx->scratch_len, dev->name);
            return SYMRAIL_ERR_NOMEM;
        }
    }
    return SYMRAIL_OK;
}

static int sr_ib_bit_take(uint64_t *map)
{
    if (*map == 0)
        return -1;
    int i = __builtin_ctzll(*map);
    *map &= ~(1ull << i);
    return i;
}

static inline char *sr_ib_slot(char *base, sr_tl_ctx_t *ctx, int pe, uint64_t i)
{
    return base + ((size_t)pe * ctx->depth + (size_t)(i % ctx->depth)) * SR_IB_MSG_SIZE;
}

/* lkey of [addr, addr+len) on `dev` when it lies in a registered region. */
static inline int sr_ib_lkey(sr_tl_ctx_t *ctx, sr_ib_dev_t *dev, const void *addr, size_t len,
                             uint32_t *lkey_p)
{
    uintptr_t a = (uintptr_t)addr;
    for (uint32_t r = 0; r < ctx->nregions; r++) {
        uintptr_t lo = (uintptr_t)ctx->regions[r].addr;
        if (dev->mr[r] && a >= lo && a - lo <= ctx->regions[r].len &&
            len <= ctx->regions[r].len - (a - lo)) {
            *lkey_p = dev->mr[r]->lkey;
            return 1;
        }
    }
    uintptr_t slo = (uintptr_t)ctx->scratch;
    if (a >= slo && a + len <= slo + ctx->scratch_len) {
        *lkey_p = dev->scratch_mr->lkey;
        return 1;
    }
    return 0;
}

static sr_ib_op_t *sr_ib_op_get(sr_tl_ctx_t *ctx)
{
    sr_ib_op_t *op = sr_pool_get(&ctx->ops);
    if (sr_unlikely(op == NULL))
        return NULL;
    memset(op, 0, sizeof(*op));
    op->bounce = op->amo_slot = -1;
    return op;
}

static void sr_ib_op_put(sr_tl_ctx_t *ctx, sr_ib_op_t *op)
{
    if (op->bounce >= 0)
        ctx->bounce_free |= 1ull << op->bounce;
    if (op->amo_slot >= 0)
        ctx->amo_free |= 1ull << op->amo_slot;
    sr_pool_put(&ctx->ops, op);
}

/* ---- queue pairs ----------------------------------------------------------------- */

static struct ibv_qp *sr_ib_qp_create(sr_tl_ctx_t *ctx, sr_ib_rail_t *rail, struct ibv_cq *cq,
                                      uint32_t send_wr, uint32_t recv_wr)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 0,
        .cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr ? recv_wr : 1,
                 .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 64 },
    };
    struct ibv_qp *qp = ibv_create_qp(rail->dev->pd, &ia);
    if (qp == NULL) {
        sr_error("verbs: ibv_create_qp on %s:%d failed: %m", rail->dev->name, rail->port);
        return NULL;
    }
    if (ctx->max_inline < 0 || (int)ia.cap.max_inline_data < ctx->max_inline)
        ctx->max_inline = (int)ia.cap.max_inline_data;
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (uint8_t)rail->port,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE,
    };
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                  IBV_QP_ACCESS_FLAGS) != 0) {
        sr_error("verbs: QP %u to INIT on %s:%d failed: %m", qp->qp_num, rail->dev->name,
                 rail->port);
        ibv_destroy_qp(qp);
        return NULL;
    }
    return qp;
}

static symrail_status_t sr_ib_qp_connect(struct ibv_qp *qp, const sr_ib_rail_t *rail,
                                         const sr_ib_rail_addr_t *ra, uint32_t rqpn, int pe)
{
    enum ibv_mtu mtu = (enum ibv_mtu)(rail->mtu < ra->mtu ? rail->mtu : ra->mtu);
    if (rail->mtu != ra->mtu)
        sr_info("verbs: MTU %d on %s:%d, %d at PE %d's %s: using %d", 128 << rail->mtu,
                rail->dev->name, rail->port, 128 << ra->mtu, pe, ra->dev, 128 << mtu);
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = rqpn,
        .rq_psn = sr_ib_psn(rqpn), .max_dest_rd_atomic = 16, .min_rnr_timer = 12,
        .ah_attr = { .is_global = 0, .dlid = (uint16_t)ra->lid, .sl = 0, .src_path_bits = 0,
                     .port_num = (uint8_t)rail->port },
    };
    if (rail->is_eth || ra->is_eth) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, ra->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)rail->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                  IBV_QP_MIN_RNR_TIMER) != 0) {
        sr_error("verbs: QP %u to RTR (peer PE %d QP %u on %s) failed: %m", qp->qp_num, pe, rqpn,
                 ra->dev);
        return SYMRAIL_ERR_TRANSPORT;
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = SR_IB_QP_TIMEOUT;
    a.retry_cnt = SR_IB_QP_RETRY;
    a.rnr_retry = 7;
    a.sq_psn = sr_ib_psn(qp->qp_num);
    a.max_rd_atomic = 16;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
        sr_error("verbs: QP %u to RTS (peer PE %d) failed: %m", qp->qp_num, pe);
        return SYMRAIL_ERR_TRANSPORT;
    }
    return SYMRAIL_OK;
}

static symrail_status_t sr_ib_post_recv(sr_tl_ctx_t *ctx, struct ibv_qp *qp, int pe, uint64_t i)
{
    sr_ib_dev_t *dev = ctx->rails[0].dev;
    struct ibv_sge sge = { .addr = (uintptr_t)sr_ib_slot(ctx->recv_slots, ctx, pe, i),
                           .length = SR_IB_MSG_SIZE, .lkey = dev->scratch_mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = SR_IB_WR_RECV | ((uint64_t)pe << 24) | (i % ctx->depth),
                              .sg_list = &sge, .num_sge = 1 }, *bad;
    int rc = ibv_post_recv(qp, &wr, &bad);
    if (rc != 0) {
        sr_error("verbs: ibv_post_recv on notify QP %u (PE %d) failed: %s", qp->qp_num, pe,
                 strerror(rc));
        return SYMRAIL_ERR_TRANSPORT;
    }
    return SYMRAIL_OK;
}

/* ---- init / fini -------------------------------------------------------------------- */

static void *sr_ib_thread(void *arg);

static symrail_status_t sr_ib_parse_fault(sr_tl_ctx_t *ctx)
{
    const char *f = ctx->params.env->fault_qp;
    ctx->fault_lane = -1;
    if (f == NULL || *f == '\0')
        return SYMRAIL_OK;
    int lane;
    unsigned long long after;
    if (sscanf(f, "%d:%llu", &lane, &after) != 2 || lane < 0) {
        sr_error("SYMRAIL_FAULT_QP_ERROR='%s' is not LANE:N", f);
        return SYMRAIL_ERR_INVALID;
    }
    ctx->fault_lane = lane;
    ctx->fault_after = after;
    sr_warn("verbs: test fault hook armed: lane %d fails after %llu slices", lane, after);
    return SYMRAIL_OK;
}

static void sr_ib_fini(sr_tl_ctx_t *ctx);

static symrail_status_t sr_ib_init(const sr_tl_params_t *params, sr_tl_ctx_t **ctx_p)
{
    symrail_status_t st;
    sr_tl_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return SYMRAIL_ERR_NOMEM;
    ctx->params = *params;
    ctx->qpp = (uint32_t)params->env->qps_per_peer;
    ctx->max_wr = (uint32_t)params->env->ib_max_wr;
    ctx->depth = (uint32_t)params->env->ib_recv_depth;
    ctx->max_inline = -1;
    ctx->wake_pipe[0] = ctx->wake_pipe[1] = -1;
    pthread_mutex_init(&ctx->nlock, NULL);
    sr_pool_init(&ctx->ops, sizeof(sr_ib_op_t), 512);
    if (ctx->qpp < 1 || ctx->qpp > 8 || ctx->max_wr < 4 || ctx->depth < 4 || ctx->depth > 65536) {
        sr_error("verbs: SYMRAIL_QPS_PER_PEER (1..8), SYMRAIL_MAX_WR (>= 4) or "
                 "SYMRAIL_IB_NOTIFY_DEPTH (4..65536) out of range");
        free(ctx);
        return SYMRAIL_ERR_INVALID;
    }
    st = sr_ib_parse_fault(ctx);
    if (st != SYMRAIL_OK) {
        free(ctx);
        return st;
    }
    st = sr_ib_find_rails(ctx);
    if (st != SYMRAIL_OK)
        goto err;
    if (ctx->nrails * ctx->qpp > SR_TL_MAX_LANES) {
        ctx->qpp = SR_TL_MAX_LANES / (uint32_t)ctx->nrails;
        sr_warn("verbs: %d rails: using %u QPs per peer and rail", ctx->nrails, ctx->qpp);
    }
    sr_ib_weigh_rails(ctx);
    st = sr_ib_scratch_init(ctx);
    if (st != SYMRAIL_OK)
        goto err;

    int n = params->n_pes;
    ctx->use = calloc((size_t)n, 1);
    ctx->lanes = calloc((size_t)n * (size_t)ctx->nrails * ctx->qpp, sizeof(*ctx->lanes));
    ctx->nqps = calloc((size_t)n, sizeof(*ctx->nqps));
    ctx->eps = calloc((size_t)n, sizeof(*ctx->eps));
    if (!ctx->use || !ctx->lanes || !ctx->nqps || !ctx->eps) {
        st = SYMRAIL_ERR_NOMEM;
        goto err;
    }
    ctx->nch = ibv_create_comp_channel(ctx->rails[0].dev->ctx);
    /* Room for every receive, send and credit write of every peer at once. */
    struct ibv_device_attr da;
    ibv_query_device(ctx->rails[0].dev->ctx, &da);
    size_t ncqe = (size_t)n * (3 * ctx->depth + 8);
    if (ncqe > (size_t)da.max_cqe) {
        sr_error("verbs: %d peers x SYMRAIL_IB_NOTIFY_DEPTH=%u needs %zu CQ entries, %s has %d",
                 n, ctx->depth, ncqe, ctx->rails[0].dev->name, da.max_cqe);
        st = SYMRAIL_ERR_INVALID;
        goto err;
    }
    ctx->ncq = ctx->nch ? ibv_create_cq(ctx->rails[0].dev->ctx, (int)ncqe, NULL, ctx->nch, 0)
                        : NULL;
    if (ctx->ncq == NULL) {
        sr_error("verbs: creating the notification CQ on %s failed: %m", ctx->rails[0].dev->name);
        st = SYMRAIL_ERR_TRANSPORT;
        goto err;
    }
    for (int pe = 0; pe < n; pe++) {
        ctx->use[pe] = !params->is_local[pe] || params->serve_local;
        if (!ctx->use[pe])
            continue;
        for (int r = 0; r < ctx->nrails; r++) {
            for (uint32_t q = 0; q < ctx->qpp; q++) {
                sr_ib_lane_t *l = &ctx->lanes[((size_t)pe * ctx->nrails + r) * ctx->qpp + q];
                l->rail = &ctx->rails[r];
                l->qp = sr_ib_qp_create(ctx, l->rail, l->rail->dev->cq, ctx->max_wr, 0);
                if (l->qp == NULL) {
                    st = SYMRAIL_ERR_TRANSPORT;
                    goto err;
                }
            }
        }
        /* Sends in flight are bounded by credits, plus credit writes. */
        ctx->nqps[pe] = sr_ib_qp_create(ctx, &ctx->rails[0], ctx->ncq, 2 * ctx->depth + 8,
                                        ctx->depth);
        if (ctx->nqps[pe] == NULL) {
            st = SYMRAIL_ERR_TRANSPORT;
            goto err;
        }
        for (uint32_t i = 0; i < ctx->depth; i++) {
            st = sr_ib_post_recv(ctx, ctx->nqps[pe], pe, i);
            if (st != SYMRAIL_OK)
                goto err;
        }
    }
    *ctx_p = ctx;
    return SYMRAIL_OK;

err:
    sr_ib_fini(ctx);
    return st;
}

static void sr_ib_fini(sr_tl_ctx_t *ctx)
{
    if (ctx->thread_up) {
        ctx->stop = 1;
        if (ctx->wake_pipe[1] >= 0) {
            char c = 0;
            (void)!write(ctx->wake_pipe[1], &c, 1);
        }
        pthread_join(ctx->thread, NULL);
    }
    if (ctx->wake_pipe[0] >= 0) {
        close(ctx->wake_pipe[0]);
        close(ctx->wake_pipe[1]);
    }
    int n = ctx->params.n_pes;
    for (int pe = 0; ctx->lanes && pe < n; pe++) {
        for (int l = 0; l < ctx->nrails * (int)ctx->qpp; l++) {
            sr_ib_lane_t *lane = &ctx->lanes[(size_t)pe * ctx->nrails * ctx->qpp + l];
            if (lane->qp)
                ibv_destroy_qp(lane->qp);
        }
        if (ctx->nqps[pe])
            ibv_destroy_qp(ctx->nqps[pe]);
        free(ctx->eps[pe]);
    }
    if (ctx->ncq) {
        /* Events handed out must be acknowledged before the CQ goes. */
        ibv_destroy_cq(ctx->ncq);
    }
    if (ctx->nch)
        ibv_destroy_comp_channel(ctx->nch);
    for (int d = 0; d < ctx->ndevs; d++)
        sr_ib_dev_close(&ctx->devs[d]);
    sr_pool_fini(&ctx->ops);
    while (ctx->mq_head) {
        sr_ib_msg_t *m = ctx->mq_head;
        ctx->mq_head = m->next;
        free(m);
    }
    free(ctx->scratch);
    free(ctx->use);
    free(ctx->lanes);
    free(ctx->nqps);
    free(ctx->eps);
    pthread_mutex_destroy(&ctx->nlock);
    free(ctx);
}

static void sr_ib_attr(const sr_tl_ctx_t *ctx, sr_tl_attr_t *attr_p)
{
    (void)ctx;
    attr_p->max_slice = 1u << 30;
    attr_p->can_sleep = 0;
    attr_p->ordered_lanes = 1;  /* RC: a QP executes its requests in order */
}

static symrail_status_t sr_ib_mem_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem)
{
    if (region >= SR_IB_MAX_REGIONS)
        return SYMRAIL_ERR_UNSUPPORTED;
    for (int d = 0; d < ctx->ndevs; d++) {
        sr_ib_dev_t *dev = &ctx->devs[d];
        dev->mr[region] = ibv_reg_mr(dev->pd, mem->addr, mem->len,
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                         IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
        if (dev->mr[region] == NULL) {
            sr_error("verbs: registering region %u (%zu bytes) on %s failed: %m (pinned memory "
                     "limit: ulimit -l; or lower SYMRAIL_HEAP_SIZE)", region, mem->len, dev->name);
            return SYMRAIL_ERR_NOMEM;
        }
    }
    ctx->regions[region] = *mem;
    if (region >= ctx->nregions)
        ctx->nregions = region + 1;
    return SYMRAIL_OK;
}

static size_t sr_ib_addr_len(const sr_tl_ctx_t *ctx)
{
    return sizeof(sr_ib_addr_hdr_t) + (size_t)ctx->nrails * sizeof(sr_ib_rail_addr_t) +
           (size_t)ctx->params.n_pes * (ctx->nrails * ctx->qpp + 1) * sizeof(uint32_t);
}

static symrail_status_t sr_ib_addr_pack(sr_tl_ctx_t *ctx, void *buf, size_t *len_p)
{
    size_t len = sr_ib_addr_len(ctx);
    if (buf == NULL || *len_p < len) {
        *len_p = len;
        return buf == NULL ? SYMRAIL_OK : SYMRAIL_ERR_TRUNCATED;
    }
    sr_ib_addr_hdr_t hdr = { .magic = SR_IB_MAGIC, .pid = (int32_t)getpid(),
                             .nrails = (uint32_t)ctx->nrails,
                             .n_pes = (uint32_t)ctx->params.n_pes, .qpp = ctx->qpp,
                             .depth = ctx->depth, .scratch_addr = (uintptr_t)ctx->scratch };
    for (uint32_t r = 0; r < ctx->nregions; r++)
        hdr.region_addr[r] = (uintptr_t)ctx->regions[r].addr;
    char *p = buf;
    memcpy(p, &hdr, sizeof(hdr));
    p += sizeof(hdr);
    for (int r = 0; r < ctx->nrails; r++) {
        sr_ib_rail_t *rail = &ctx->rails[r];
        sr_ib_rail_addr_t ra;
        memset(&ra, 0, sizeof(ra));
        snprintf(ra.dev, sizeof(ra.dev), "%s", rail->dev->name);
        memcpy(ra.gid, rail->gid.raw, 16);
        ra.port = (uint32_t)rail->port;
        ra.lid = rail->lid;
        ra.mtu = rail->mtu;
        ra.is_eth = rail->is_eth;
        for (uint32_t g = 0; g < ctx->nregions; g++)
            ra.rkey[g] = rail->dev->mr[g] ? rail->dev->mr[g]->rkey : 0;
        ra.scratch_rkey = rail->dev->scratch_mr->rkey;
        memcpy(p, &ra, sizeof(ra));
        p += sizeof(ra);
    }
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        for (int l = 0; l < ctx->nrails * (int)ctx->qpp; l++) {
            sr_ib_lane_t *lane = &ctx->lanes[(size_t)pe * ctx->nrails * ctx->qpp + l];
            uint32_t qpn = lane->qp ? lane->qp->qp_num : 0;
            memcpy(p, &qpn, 4);
            p += 4;
        }
        uint32_t nqpn = ctx->nqps[pe] ? ctx->nqps[pe]->qp_num : 0;
        memcpy(p, &nqpn, 4);
        p += 4;
    }
    *len_p = len;
    return SYMRAIL_OK;
}

static int sr_ib_reachable(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len)
{
    sr_ib_addr_hdr_t hdr;
    if (!ctx->use[pe] || len < sizeof(hdr))
        return 0;
    memcpy(&hdr, addr, sizeof(hdr));
    return hdr.magic == SR_IB_MAGIC && hdr.nrails > 0 && hdr.n_pes == (uint32_t)ctx->params.n_pes &&
           len == sizeof(hdr) + hdr.nrails * sizeof(sr_ib_rail_addr_t) +
                      (size_t)hdr.n_pes * (hdr.nrails * hdr.qpp + 1) * sizeof(uint32_t);
}

static symrail_status_t sr_ib_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                      sr_tl_ep_t **ep_p)
{
    sr_ib_addr_hdr_t hdr;
    const char *p = addr;
    memcpy(&hdr, p, sizeof(hdr));
    const char *rails = p + sizeof(hdr);
    const char *qpns = rails + hdr.nrails * sizeof(sr_ib_rail_addr_t);
    int me = ctx->params.my_pe;
    (void)len;

    sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return SYMRAIL_ERR_NOMEM;
    ep->ctx = ctx;
    ep->pe = pe;
    ep->pid = hdr.pid;
    ep->local = ctx->params.is_local[pe];
    int nrails = ctx->nrails < (int)hdr.nrails ? ctx->nrails : (int)hdr.nrails;
    uint32_t qpp = ctx->qpp < hdr.qpp ? ctx->qpp : hdr.qpp;
    if (nrails != ctx->nrails || qpp != ctx->qpp)
        sr_info("verbs: PE %d has %u rails x %u QPs, we have %d x %u: using %d x %u", pe,
                hdr.nrails, hdr.qpp, ctx->nrails, ctx->qpp, nrails, qpp);
    ep->lanes = &ctx->lanes[(size_t)pe * ctx->nrails * ctx->qpp];
    for (uint32_t g = 0; g < SR_IB_MAX_REGIONS; g++)
        ep->raddr[g] = hdr.region_addr[g];
    /* The peer's table row for us: its QPs dedicated to this PE. */
    const char *row = qpns + (size_t)me * (hdr.nrails * hdr.qpp + 1) * sizeof(uint32_t);
    for (int r = 0; r < nrails; r++) {
        sr_ib_rail_addr_t ra;
        memcpy(&ra, rails + r * sizeof(ra), sizeof(ra));
        ep->rail_addr[r] = ra;
        for (uint32_t g = 0; g < SR_IB_MAX_REGIONS; g++)
            ep->rkey[r][g] = ra.rkey[g];
        for (uint32_t q = 0; q < qpp; q++) {
            uint32_t rqpn;
            memcpy(&rqpn, row + (r * hdr.qpp + q) * sizeof(uint32_t), 4);
            sr_ib_lane_t *lane = &ep->lanes[r * ctx->qpp + q];
            symrail_status_t st = sr_ib_qp_connect(lane->qp, lane->rail, &ra, rqpn, pe);
            if (st != SYMRAIL_OK) {
                free(ep);
                return st;
            }
        }
        if (r == 0) {
            uint32_t nqpn;
            memcpy(&nqpn, row + hdr.nrails * hdr.qpp * sizeof(uint32_t), 4);
            symrail_status_t st = sr_ib_qp_connect(ctx->nqps[pe], &ctx->rails[0], &ra, nqpn, pe);
            if (st != SYMRAIL_OK) {
                free(ep);
                return st;
            }
            ep->nqp = ctx->nqps[pe];
            ep->credit_raddr = hdr.scratch_addr + (uint64_t)me * sizeof(uint64_t);
            ep->credit_rkey = ra.scratch_rkey;
        }
    }
    /* Lanes beyond what the peer offers stay unused. */
    for (int l = 0; l < ctx->nrails * (int)ctx->qpp; l++)
        if (l / (int)ctx->qpp >= nrails || (uint32_t)(l % (int)ctx->qpp) >= qpp) {
            ep->lanes[l].down = 1;
            ep->lanes[l].state = SR_IB_LANE_DEAD;
        }
    ep->nlanes = ctx->nrails * (int)ctx->qpp;
    ctx->eps[pe] = ep;
    *ep_p = ep;
    return SYMRAIL_OK;
}

static void sr_ib_wireup_done(sr_tl_ctx_t *ctx)
{
    if (ctx->thread_up)
        return;
    if (pipe(ctx->wake_pipe) != 0) {
        ctx->wake_pipe[0] = ctx->wake_pipe[1] = -1;
        sr_warn("verbs: no progress thread (pipe: %m); notifications progress in calls only");
        return;
    }
    ibv_req_notify_cq(ctx->ncq, 0);
    if (pthread_create(&ctx->thread, NULL, sr_ib_thread, ctx) != 0) {
        sr_warn("verbs: no progress thread; notifications progress in calls only");
        return;
    }
    ctx->thread_up = 1;
}

static void sr_ib_disconnect(sr_tl_ep_t *ep)
{
    /* QPs belong to the context and go at fini; the endpoint struct too. */
    (void)ep;
}

static int sr_ib_ep_lanes(sr_tl_ep_t *ep, uint32_t *weights_p, int max)
{
    int n = ep->nlanes < max ? ep->nlanes : max;
    for (int l = 0; l < n; l++)
        weights_p[l] = ep->lanes[l].down ? 0 : ep->lanes[l].rail->weight;
    return n;
}

/* ---- data path --------------------------------------------------------------------- */

static void sr_ib_lane_fail(sr_tl_ep_t *ep, sr_ib_lane_t *lane, const char *why)
{
    if (lane->down)
        return;
    lane->down = 1;
    lane->state = SR_IB_LANE_DRAIN;
    lane->asked = 0;
    ep->ctx->repairs_pending = 1;
    /* In error, the QP flushes what it still holds: that is the drain. */
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
    ibv_modify_qp(lane->qp, &a, IBV_QP_STATE);
    if (why)
        sr_warn("verbs: lane to PE %d on %s:%d (QP %u) is down: %s; repairing",
                ep->pe, lane->rail->dev->name, lane->rail->port, lane->qp->qp_num, why);
}

/* Room check for both levels of backpressure, then post one WR. */
static symrail_status_t sr_ib_post(sr_tl_ep_t *ep, sr_ib_lane_t *lane, struct ibv_send_wr *wr,
                                   sr_ib_op_t *op)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_dev_t *dev = lane->rail->dev;
    struct ibv_send_wr *bad;
    wr->wr_id = (uintptr_t)op;
    wr->send_flags |= IBV_SEND_SIGNALED;
    /* The test fault hook breaks the QP just before a data WR goes in: the
     * WR comes back flushed, certainly not executed, and is retried on
     * another lane while this one is repaired.  (An atomic caught in a
     * failure may have been applied, so it fails instead: not what this
     * hook is for.) */
    if (sr_unlikely(ctx->fault_lane >= 0 && &ep->lanes[ctx->fault_lane] == lane &&
                    lane->posted + 1 >= ctx->fault_after &&
                    (wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_READ))) {
        ctx->fault_lane = -1;
        sr_ib_lane_fail(ep, lane, "test fault hook (SYMRAIL_FAULT_QP_ERROR)");
    }
    int rc = ibv_post_send(lane->qp, wr, &bad);
    if (sr_unlikely(rc != 0)) {
        sr_error("verbs: ibv_post_send on QP %u to PE %d failed: %s", lane->qp->qp_num, ep->pe,
                 strerror(rc));
        sr_ib_lane_fail(ep, lane, "post failed");
        return SYMRAIL_ERR_TRANSPORT;
    }
    lane->outstanding++;
    dev->cq_outstanding++;
    lane->posted++;
    ctx->n_posted++;
    return SR_TL_INPROGRESS;
}

static inline int sr_ib_room(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    if (sr_unlikely(lane->outstanding >= ep->ctx->max_wr)) {
        ep->ctx->n_qp_full++;
        return 0;
    }
    if (sr_unlikely(lane->rail->dev->cq_outstanding >= lane->rail->dev->cq_size)) {
        ep->ctx->n_cq_full++;
        return 0;
    }
    return 1;
}

static symrail_status_t sr_ib_rdma(sr_tl_ep_t *ep, int lane_idx, int is_put, void *local,
                                   uint32_t region, uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[lane_idx];
    /* Nothing was posted: safe to take elsewhere, or here once repaired. */
    if (sr_unlikely(lane->down))
        return lane->state == SR_IB_LANE_DEAD ? SYMRAIL_ERR_TRANSPORT : SYMRAIL_ERR_AGAIN;
    if (!sr_ib_room(ep, lane))
        return SYMRAIL_ERR_AGAIN;
    sr_ib_op_t *op = sr_ib_op_get(ctx);
    if (op == NULL)
        return SYMRAIL_ERR_NOMEM;
    uint32_t lkey = 0;
    void *addr = local;
    int inl = is_put && ctx->max_inline > 0 && len <= (size_t)ctx->max_inline;
    if (!inl && !sr_ib_lkey(ctx, lane->rail->dev, local, len, &lkey)) {
        /* Private memory: stage through a registered bounce buffer. */
        if (len > ctx->bounce_len || (op->bounce = sr_ib_bit_take(&ctx->bounce_free)) < 0) {
            sr_ib_op_put(ctx, op);
            return len > ctx->bounce_len ? SYMRAIL_ERR_INVALID : SYMRAIL_ERR_AGAIN;
        }
        addr = ctx->bounce + (size_t)op->bounce * ctx->bounce_len;
        lkey = lane->rail->dev->scratch_mr->lkey;
        if (is_put)
            memcpy(addr, local, len);
        else
            op->dst = local;
    }
    op->comp = comp;
    op->ep = ep;
    op->lane = lane;
    op->len = len;
    struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = (uint32_t)len, .lkey = lkey };
    struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
                              .opcode = is_put ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ };
    if (inl)
        wr.send_flags = IBV_SEND_INLINE;  /* copied at post time: no key, no bounce */
    int rail = (int)(lane->rail - ctx->rails);
    wr.wr.rdma.remote_addr = ep->raddr[region] + roff;
    wr.wr.rdma.rkey = ep->rkey[rail][region];
    symrail_status_t st = sr_ib_post(ep, lane, &wr, op);
    if (st != SR_TL_INPROGRESS) {
        sr_ib_op_put(ctx, op);
    } else {
        lane->rail->bytes += len;
        lane->rail->slices++;
    }
    return st;
}

static symrail_status_t sr_ib_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                                  uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    return sr_ib_rdma(ep, lane, 1, (void *)src, region, roff, len, comp);
}

static symrail_status_t sr_ib_get(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region,
                                  uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    return sr_ib_rdma(ep, lane, 0, dst, region, roff, len, comp);
}

static symrail_status_t sr_ib_post_amo(sr_tl_ep_t *ep, sr_ib_op_t *op, int cswap,
                                       uint64_t compare, uint64_t operand)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = op->lane;
    struct ibv_sge sge = { .addr = (uintptr_t)&ctx->amo_res[op->amo_slot], .length = 8,
                           .lkey = lane->rail->dev->scratch_mr->lkey };
    struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
                              .opcode = cswap ? IBV_WR_ATOMIC_CMP_AND_SWP
                                              : IBV_WR_ATOMIC_FETCH_AND_ADD };
    wr.wr.atomic.remote_addr = op->raddr;
    wr.wr.atomic.rkey = op->rkey;
    wr.wr.atomic.compare_add = cswap ? compare : operand;
    wr.wr.atomic.swap = cswap ? operand : 0;
    return sr_ib_post(ep, lane, &wr, op);
}

static symrail_status_t sr_ib_atomic(sr_tl_ep_t *ep, int lane_idx, sr_tl_amo_t op_kind,
                                     uint32_t region, uint64_t roff, uint64_t operand,
                                     uint64_t compare, uint64_t *result_p, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[lane_idx];
    if (sr_unlikely(lane->down))
        return lane->state == SR_IB_LANE_DEAD ? SYMRAIL_ERR_TRANSPORT : SYMRAIL_ERR_AGAIN;
    if (!sr_ib_room(ep, lane) || ctx->amo_free == 0)
        return SYMRAIL_ERR_AGAIN;
    sr_ib_op_t *op = sr_ib_op_get(ctx);
    if (op == NULL)
        return SYMRAIL_ERR_NOMEM;
    op->amo_slot = sr_ib_bit_take(&ctx->amo_free);
    op->comp = comp;
    op->ep = ep;
    op->lane = lane;
    op->dst = result_p;
    op->raddr = ep->raddr[region] + roff;
    op->rkey = ep->rkey[lane->rail - ctx->rails][region];
    symrail_status_t st;
    switch (op_kind) {
    case SR_TL_AMO_FETCH:
        st = sr_ib_post_amo(ep, op, 0, 0, 0);
        break;
    case SR_TL_AMO_ADD:
        st = sr_ib_post_amo(ep, op, 0, 0, operand);
        break;
    case SR_TL_AMO_CSWAP:
        st = sr_ib_post_amo(ep, op, 1, compare, operand);
        break;
    case SR_TL_AMO_SET:
    case SR_TL_AMO_SWAP:
        /* No verbs swap: compare-swap from a guess until the guess is right,
         * so the update stays atomic with the peers' NIC atomics. */
        op->amo_loop = 1;
        op->expect = ep->guess_raddr == op->raddr ? ep->guess_val : 0;
        op->operand = operand;
        st = sr_ib_post_amo(ep, op, 1, op->expect, operand);
        break;
    default:
        st = SYMRAIL_ERR_UNSUPPORTED;
    }
    if (st != SR_TL_INPROGRESS)
        sr_ib_op_put(ctx, op);
    return st;
}

static void sr_ib_complete(sr_tl_ctx_t *ctx, struct ibv_wc *wc)
{
    sr_ib_op_t *op = (sr_ib_op_t *)(uintptr_t)wc->wr_id;
    sr_ib_lane_t *lane = op->lane;
    lane->outstanding--;
    lane->rail->dev->cq_outstanding--;
    ctx->n_completed++;
    if (sr_unlikely(wc->status != IBV_WC_SUCCESS)) {
        if (wc->status != IBV_WC_WR_FLUSH_ERR) {
            char why[160];
            snprintf(why, sizeof(why), "%s (vendor error %#x)", ibv_wc_status_str(wc->status),
                     wc->vendor_err);
            sr_ib_lane_fail(op->ep, lane, why);
        } else {
            sr_ib_lane_fail(op->ep, lane, NULL);
        }
        sr_tl_comp_t *comp = op->comp;
        sr_ib_op_put(ctx, op);
        comp->cb(comp, wc->status == IBV_WC_RETRY_EXC_ERR ? SYMRAIL_ERR_PEER_GONE
                                                         : SYMRAIL_ERR_TRANSPORT);
        return;
    }
    if (op->amo_slot >= 0) {
        uint64_t res = ctx->amo_res[op->amo_slot];
        if (op->amo_loop && res != op->expect) {
            /* The completion just freed the room the next try needs. */
            op->expect = res;
            if (sr_ib_post_amo(op->ep, op, 1, res, op->operand) == SR_TL_INPROGRESS)
                return;
            sr_tl_comp_t *comp = op->comp;
            sr_ib_op_put(ctx, op);
            comp->cb(comp, SYMRAIL_ERR_TRANSPORT);
            return;
        }
        if (op->amo_loop) {
            op->ep->guess_raddr = op->raddr;
            op->ep->guess_val = op->operand;
        }
        if (op->dst)
            *(uint64_t *)op->dst = res;
    } else if (op->dst && op->bounce >= 0) {
        memcpy(op->dst, ctx->bounce + (size_t)op->bounce * ctx->bounce_len, op->len);
    }
    sr_tl_comp_t *comp = op->comp;
    sr_ib_op_put(ctx, op);
    comp->cb(comp, SYMRAIL_OK);
}

/* ---- notify channel -------------------------------------------------------------------- */

/* Polls the notification CQ; called with nlock held. */
static int sr_ib_npoll(sr_tl_ctx_t *ctx)
{
    struct ibv_wc wc[SR_IB_POLL_BATCH];
    int total = 0, n;
    while ((n = ibv_poll_cq(ctx->ncq, SR_IB_POLL_BATCH, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            uint64_t kind = SR_IB_WR_KIND(wc[i].wr_id);
            int pe = (int)((wc[i].wr_id >> 24) & 0xffffffff);
            sr_tl_ep_t *ep = pe < ctx->params.n_pes ? ctx->eps[pe] : NULL;
            if (wc[i].status != IBV_WC_SUCCESS) {
                if (ep && !ep->nqp_error && wc[i].status != IBV_WC_WR_FLUSH_ERR)
                    sr_error("verbs: notify QP %u to PE %d failed: %s", ctx->nqps[pe]->qp_num, pe,
                             ibv_wc_status_str(wc[i].status));
                if (ep)
                    ep->nqp_error = 1;
                continue;
            }
            if (ep == NULL)
                continue;
            if (kind == SR_IB_WR_RECV) {
                const char *slot = sr_ib_slot(ctx->recv_slots, ctx, pe, wc[i].wr_id & 0xffffff);
                uint32_t tag, len, internal;
                memcpy(&tag, slot, 4);
                memcpy(&len, slot + 4, 4);
                internal = len & SR_IB_MSG_INTERNAL;
                len &= ~SR_IB_MSG_INTERNAL;
                if (len > SYMRAIL_NOTIFY_MAX_PAYLOAD || len + SR_IB_MSG_HDR > wc[i].byte_len) {
                    sr_error("verbs: malformed notification from PE %d (%u bytes) dropped", pe, len);
                    len = 0;
                }
                sr_ib_msg_t *m = malloc(sizeof(*m) + len);
                if (m) {
                    m->next = NULL;
                    m->src = pe;
                    m->tag = tag;
                    m->len = len | internal;
                    memcpy(m->payload, slot + SR_IB_MSG_HDR, len);
                    if (ctx->mq_tail)
                        ctx->mq_tail->next = m;
                    else
                        ctx->mq_head = m;
                    ctx->mq_tail = m;
                } else {
                    sr_error("verbs: out of memory: notification from PE %d lost", pe);
                }
                /* The slot is free again as soon as its content is copied. */
                sr_ib_post_recv(ctx, ep->nqp, pe, wc[i].wr_id & 0xffffff);
                ep->n_recv++;
            } else if (kind == SR_IB_WR_SEND) {
                ep->n_send_done++;
            }
            total++;
        }
    }
    return total;
}

/* Tells peers how many of their messages we consumed; nlock held. */
static void sr_ib_return_credits(sr_tl_ctx_t *ctx)
{
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        sr_tl_ep_t *ep = ctx->eps[pe];
        if (ep == NULL || ep->n_recv == ep->n_recv_reported || ep->nqp_error)
            continue;
        uint64_t val = ep->n_recv;
        struct ibv_sge sge = { .addr = (uintptr_t)&val, .length = 8, .lkey = 0 };
        struct ibv_send_wr wr = { .wr_id = SR_IB_WR_CREDIT | ((uint64_t)pe << 24), .sg_list = &sge,
                                  .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED }, *bad;
        wr.wr.rdma.remote_addr = ep->credit_raddr;
        wr.wr.rdma.rkey = ep->credit_rkey;
        int rc = ibv_post_send(ep->nqp, &wr, &bad);
        if (rc == 0)
            ep->n_recv_reported = val;
        else if (rc != ENOMEM)
            sr_error("verbs: returning credits to PE %d failed: %s", pe, strerror(rc));
    }
}

static void *sr_ib_thread(void *arg)
{
    sr_tl_ctx_t *ctx = arg;
    struct pollfd pfd[2] = { { .fd = ctx->nch->fd, .events = POLLIN },
                             { .fd = ctx->wake_pipe[0], .events = POLLIN } };
    while (!ctx->stop) {
        /* Bounded sleep: credits owed are returned even without events. */
        if (poll(pfd, 2, 50) < 0 && errno != EINTR)
            break;
        if (ctx->stop)
            break;
        if (pfd[0].revents & POLLIN) {
            struct ibv_cq *cq;
            void *cq_ctx;
            if (ibv_get_cq_event(ctx->nch, &cq, &cq_ctx) == 0) {
                ibv_ack_cq_events(cq, 1);
                ibv_req_notify_cq(cq, 0);
            }
        }
        pthread_mutex_lock(&ctx->nlock);
        sr_ib_npoll(ctx);
        sr_ib_return_credits(ctx);
        pthread_mutex_unlock(&ctx->nlock);
    }
    return NULL;
}

static symrail_status_t sr_ib_send_msg(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                       size_t len, uint32_t flags)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    symrail_status_t st = SYMRAIL_OK;
    if (len > SYMRAIL_NOTIFY_MAX_PAYLOAD)
        return SYMRAIL_ERR_INVALID;
    pthread_mutex_lock(&ctx->nlock);
    sr_ib_credit_t cr = { ep->n_sent, ep->n_send_done,
                          __atomic_load_n(&ctx->credits[ep->pe], __ATOMIC_ACQUIRE) };
    if (ep->nqp_error) {
        st = SYMRAIL_ERR_PEER_GONE;
    } else if (!sr_ib_credit_avail(&cr, ctx->depth)) {
        st = SYMRAIL_ERR_AGAIN;  /* no credit (or send slot) until the peer catches up */
    } else {
        char *slot = sr_ib_slot(ctx->send_slots, ctx, ep->pe, ep->n_sent);
        uint32_t l32 = (uint32_t)len | flags;
        memcpy(slot, &tag, 4);
        memcpy(slot + 4, &l32, 4);
        if (len)
            memcpy(slot + SR_IB_MSG_HDR, payload, len);
        struct ibv_sge sge = { .addr = (uintptr_t)slot, .length = (uint32_t)(SR_IB_MSG_HDR + len),
                               .lkey = ctx->rails[0].dev->scratch_mr->lkey };
        struct ibv_send_wr wr = { .wr_id = SR_IB_WR_SEND | ((uint64_t)ep->pe << 24),
                                  .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                                  .send_flags = IBV_SEND_SIGNALED }, *bad;
        int rc = ibv_post_send(ep->nqp, &wr, &bad);
        if (rc == 0) {
            ep->n_sent++;
        } else {
            sr_error("verbs: sending a notification to PE %d (QP %u) failed: %s", ep->pe,
                     ep->nqp->qp_num, strerror(rc));
            st = SYMRAIL_ERR_TRANSPORT;
        }
    }
    pthread_mutex_unlock(&ctx->nlock);
    return st;
}

static symrail_status_t sr_ib_notify(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                     size_t len)
{
    return sr_ib_send_msg(ep, tag, payload, len, 0);
}

/* ---- lane repair ------------------------------------------------------------------------- */

static void sr_ib_ctl_send(sr_tl_ep_t *ep, uint32_t op, int lane, uint32_t qpn)
{
    sr_ib_ctl_t c = { op, (uint32_t)lane, qpn };
    /* Out of credits now: the repair loop tries again on a later pass. */
    if (sr_ib_send_msg(ep, 0, &c, sizeof(c), SR_IB_MSG_INTERNAL) != SYMRAIL_OK)
        sr_debug("verbs: repair message %u for lane %d to PE %d deferred", op, lane, ep->pe);
}

static void sr_ib_lane_dead(sr_tl_ep_t *ep, int l, const char *why)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    lane->state = SR_IB_LANE_DEAD;
    sr_error("verbs: lane %d to PE %d on %s:%d cannot be repaired: %s", l, ep->pe,
             lane->rail->dev->name, lane->rail->port, why);
}

/* Replaces a drained lane's QP; connects it when the peer's number is known. */
static int sr_ib_lane_rebuild(sr_tl_ep_t *ep, int l, uint32_t rqpn)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (++lane->repairs > SR_IB_MAX_REPAIRS) {
        sr_ib_lane_dead(ep, l, "failed too often");
        return -1;
    }
    ibv_destroy_qp(lane->qp);
    lane->qp = sr_ib_qp_create(ctx, lane->rail, lane->rail->dev->cq, ctx->max_wr, 0);
    if (lane->qp == NULL) {
        sr_ib_lane_dead(ep, l, "no new QP");
        return -1;
    }
    if (ep->pe == ctx->params.my_pe)
        rqpn = lane->qp->qp_num;  /* a lane to ourselves loops back into itself */
    if (rqpn) {
        int r = (int)(lane->rail - ctx->rails);
        if (sr_ib_qp_connect(lane->qp, lane->rail, &ep->rail_addr[r], rqpn, ep->pe) != SYMRAIL_OK) {
            sr_ib_lane_dead(ep, l, "reconnect failed");
            return -1;
        }
    }
    return 0;
}

static void sr_ib_lane_up(sr_tl_ep_t *ep, int l)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    lane->state = SR_IB_LANE_UP;
    lane->down = 0;
    lane->peer_qpn = 0;
    ep->ctx->n_repaired++;
    sr_info("verbs: lane %d to PE %d on %s:%d repaired (QP %u)", l, ep->pe,
            lane->rail->dev->name, lane->rail->port, lane->qp->qp_num);
}

static void sr_ib_repair(sr_tl_ctx_t *ctx)
{
    int pending = 0, me = ctx->params.my_pe;
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        sr_tl_ep_t *ep = ctx->eps[pe];
        for (int l = 0; ep && l < ep->nlanes; l++) {
            sr_ib_lane_t *lane = &ep->lanes[l];
            if (lane->state == SR_IB_LANE_UP || lane->state == SR_IB_LANE_DEAD)
                continue;
            pending = 1;
            if (lane->state != SR_IB_LANE_DRAIN || lane->outstanding != 0)
                continue;
            if (pe == me) {
                if (sr_ib_lane_rebuild(ep, l, 0) == 0)
                    sr_ib_lane_up(ep, l);
            } else if (me < pe) {
                if (sr_ib_lane_rebuild(ep, l, 0) == 0) {
                    lane->state = SR_IB_LANE_WAIT;
                    sr_ib_ctl_send(ep, SR_IB_CTL_RECONNECT, l, lane->qp->qp_num);
                }
            } else if (lane->peer_qpn) {
                /* The peer already made its new QP: connect ours and answer. */
                if (sr_ib_lane_rebuild(ep, l, lane->peer_qpn) == 0) {
                    sr_ib_ctl_send(ep, SR_IB_CTL_ACK, l, lane->qp->qp_num);
                    sr_ib_lane_up(ep, l);
                }
            } else if (!lane->asked) {
                sr_ib_ctl_send(ep, SR_IB_CTL_REQUEST, l, 0);
                lane->asked = 1;
            }
        }
    }
    ctx->repairs_pending = pending;
}

static void sr_ib_ctl_recv(sr_tl_ctx_t *ctx, int pe, const void *payload, size_t len)
{
    sr_tl_ep_t *ep = ctx->eps[pe];
    sr_ib_ctl_t c;
    if (ep == NULL || len != sizeof(c))
        return;
    memcpy(&c, payload, sizeof(c));
    if ((int)c.lane >= ep->nlanes)
        return;
    sr_ib_lane_t *lane = &ep->lanes[c.lane];
    if (lane->state == SR_IB_LANE_DEAD)
        return;
    switch (c.op) {
    case SR_IB_CTL_REQUEST:      /* we are the lower PE: start over from our side */
        sr_ib_lane_fail(ep, lane, "the peer saw it fail");
        break;
    case SR_IB_CTL_RECONNECT:    /* we are the higher PE */
        sr_ib_lane_fail(ep, lane, "the peer saw it fail");
        lane->peer_qpn = c.qpn;
        ctx->repairs_pending = 1;
        break;
    case SR_IB_CTL_ACK:
        if (lane->state == SR_IB_LANE_WAIT) {
            int r = (int)(lane->rail - ctx->rails);
            if (sr_ib_qp_connect(lane->qp, lane->rail, &ep->rail_addr[r], c.qpn, pe) == SYMRAIL_OK)
                sr_ib_lane_up(ep, (int)c.lane);
            else
                sr_ib_lane_dead(ep, (int)c.lane, "reconnect failed");
        }
        break;
    }
}

static int sr_ib_progress(sr_tl_ctx_t *ctx)
{
    struct ibv_wc wc[SR_IB_POLL_BATCH];
    int total = 0;
    for (int d = 0; d < ctx->ndevs; d++) {
        int n;
        while ((n = ibv_poll_cq(ctx->devs[d].cq, SR_IB_POLL_BATCH, wc)) > 0) {
            for (int i = 0; i < n; i++)
                sr_ib_complete(ctx, &wc[i]);
            total += n;
        }
    }
    if (pthread_mutex_trylock(&ctx->nlock) == 0) {
        total += sr_ib_npoll(ctx);
        sr_ib_return_credits(ctx);
        sr_ib_msg_t *m = ctx->mq_head;
        ctx->mq_head = ctx->mq_tail = NULL;
        pthread_mutex_unlock(&ctx->nlock);
        while (m) {
            sr_ib_msg_t *next = m->next;
            if (m->len & SR_IB_MSG_INTERNAL)
                sr_ib_ctl_recv(ctx, m->src, m->payload, m->len & ~SR_IB_MSG_INTERNAL);
            else
                ctx->params.notify_cb(ctx->params.cb_arg, m->src, m->tag, m->payload, m->len);
            free(m);
            m = next;
            total++;
        }
    }
    if (sr_unlikely(ctx->repairs_pending))
        sr_ib_repair(ctx);
    return total;
}

static symrail_status_t sr_ib_ep_check(sr_tl_ep_t *ep)
{
    if (ep->local && ep->pe != ep->ctx->params.my_pe && !sr_pid_alive(ep->pid))
        return SYMRAIL_ERR_PEER_GONE;
    /* Lanes under repair still count: the peer may well be alive. */
    for (int l = 0; l < ep->nlanes; l++)
        if (ep->lanes[l].state != SR_IB_LANE_DEAD)
            return SYMRAIL_OK;
    return SYMRAIL_ERR_PEER_GONE;
}

static void sr_ib_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p)
{
    stats_p->slices_posted += ctx->n_posted;
    stats_p->completions += ctx->n_completed;
    stats_p->qp_full += ctx->n_qp_full;
    stats_p->cq_full += ctx->n_cq_full;
    stats_p->repairs += ctx->n_repaired;
    for (int r = 0; r < ctx->nrails && stats_p->nrails < SYMRAIL_STATS_MAX_RAILS; r++) {
        sr_ib_rail_t *rail = &ctx->rails[r];
        __typeof__(stats_p->rails[0]) *out = &stats_p->rails[stats_p->nrails++];
        snprintf(out->name, sizeof(out->name), "%.20s:%d", rail->dev->name, rail->port);
        out->bytes = rail->bytes;
        out->slices = rail->slices;
    }
}

static uint32_t sr_ib_wait_prepare(sr_tl_ctx_t *ctx)
{
    (void)ctx;
    return 0;
}

static void sr_ib_wait(sr_tl_ctx_t *ctx, uint32_t token, uint64_t timeout_ns)
{
    (void)ctx, (void)token, (void)timeout_ns;
}

static void sr_ib_wait_done(sr_tl_ctx_t *ctx)
{
    (void)ctx;
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

const sr_tl_ops_t sr_tl_verbs_ops = {
    .name         = "verbs",
    .init         = sr_ib_init,
    .fini         = sr_ib_fini,
    .attr         = sr_ib_attr,
    .mem_reg      = sr_ib_mem_reg,
    .addr_pack    = sr_ib_addr_pack,
    .reachable    = sr_ib_reachable,
    .connect      = sr_ib_connect,
    .wireup_done  = sr_ib_wireup_done,
    .disconnect   = sr_ib_disconnect,
    .ptr          = sr_tl_no_ptr,
    .ep_lanes     = sr_ib_ep_lanes,
    .put          = sr_ib_put,
    .get          = sr_ib_get,
    .atomic       = sr_ib_atomic,
    .notify       = sr_ib_notify,
    .flush        = sr_tl_flush_nothing,
    .ep_post_end  = sr_tl_ep_nothing,
    .notify_release = sr_tl_ep_nothing,
    .ep_heard     = sr_tl_heard_unknown,
    .progress     = sr_ib_progress,
    .ep_check     = sr_ib_ep_check,
    .stats        = sr_ib_stats,
    .wait_prepare = sr_ib_wait_prepare,
    .wait         = sr_ib_wait,
    .wait_done    = sr_ib_wait_done,
};
