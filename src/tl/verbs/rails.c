#include "config.h"
#include "tl/verbs/rails.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/sanitizer.h"
#include "util/strlist.h"

#if HWLOC_API_VERSION < 0x00020000
#error "rails.c needs the hwloc 2.x API (I/O objects as osdevs, distances)"
#endif

/* Without a latency matrix, local and remote costs follow the ACPI SLIT
 * defaults, which Linux also reports when the firmware has no SLIT: a remote
 * rail gets half the weight of a local one and a max_ratio of 2 keeps it. */
#define SR_RAILS_LOCAL_COST  10
#define SR_RAILS_REMOTE_COST 20

/* Weight base of a rail when no rail knows its speed: large enough that
 * scaling by a distance ratio such as 10/21 still leaves distinct weights. */
#define SR_RAILS_NOMINAL_SPEED 100

/* ---- filter ---------------------------------------------------------------- */

typedef enum {
    SR_RAILS_ENTRY_BAD,     /* can never select a rail */
    SR_RAILS_ENTRY_DEV,     /* every port of a device */
    SR_RAILS_ENTRY_PORT,    /* one port of a device */
} sr_rails_entry_kind_t;

typedef struct {
    const char *dev;
    size_t      dev_len;
    int         port;
} sr_rails_entry_t;

/* Strict: strtol would accept "+1", " 1" and "1x" prefixes that hide typos. */
static int sr_rails_parse_port(const char *s, size_t len)
{
    int v = 0;

    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        int digit = s[i] - '0';
        if (v > (INT_MAX - digit) / 10)
            return -1;
        v = v * 10 + digit;
    }
    return v > 0 ? v : -1;
}

static sr_rails_entry_kind_t sr_rails_entry_parse(const char *s, size_t len,
                                                   sr_rails_entry_t *entry_p)
{
    const char *colon = memchr(s, ':', len);
    size_t dev_len = colon ? (size_t)(colon - s) : len;

    if (dev_len == 0)
        return SR_RAILS_ENTRY_BAD;
    entry_p->dev = s;
    entry_p->dev_len = dev_len;
    entry_p->port = 0;
    if (!colon)
        return SR_RAILS_ENTRY_DEV;
    entry_p->port = sr_rails_parse_port(colon + 1, len - dev_len - 1);
    return entry_p->port > 0 ? SR_RAILS_ENTRY_PORT : SR_RAILS_ENTRY_BAD;
}

/* Calls fn on every entry (util/strlist rules) until fn returns nonzero;
 * returns that value, or -1 when the filter has no entry at all. */
static int sr_rails_filter_walk(const char *filter,
                                int (*fn)(const char *s, size_t len, void *arg), void *arg)
{
    int seen = 0;
    const char *pos = filter, *item;
    size_t len;

    while (sr_list_next(&pos, &item, &len)) {
        seen = 1;
        int r = fn(item, len, arg);
        if (r)
            return r;
    }
    return seen ? 0 : -1;
}

typedef struct {
    const char *dev;
    int         port;
} sr_rails_match_arg_t;

static int sr_rails_match_entry(const char *s, size_t len, void *arg)
{
    const sr_rails_match_arg_t *m = arg;
    sr_rails_entry_t entry;

    switch (sr_rails_entry_parse(s, len, &entry)) {
    case SR_RAILS_ENTRY_BAD:
        return 0;
    case SR_RAILS_ENTRY_DEV:
        break;
    case SR_RAILS_ENTRY_PORT:
        if (entry.port != m->port)
            return 0;
        break;
    }
    return strlen(m->dev) == entry.dev_len && memcmp(m->dev, entry.dev, entry.dev_len) == 0;
}

int sr_rails_filter_match(const char *filter, const char *dev, int port)
{
    sr_rails_match_arg_t m = { .dev = dev, .port = port };

    if (!filter)
        return 1;
    if (!dev)
        return 0;
    int r = sr_rails_filter_walk(filter, sr_rails_match_entry, &m);
    return r != 0;   /* -1 (no entry at all) selects everything, like NULL */
}

static int sr_rails_check_entry(const char *s, size_t len, void *arg)
{
    sr_rails_entry_t entry;

    (void)arg;
    if (sr_rails_entry_parse(s, len, &entry) != SR_RAILS_ENTRY_BAD)
        return 0;
    sr_debug("rail filter entry \"%.*s\" selects nothing", (int)len, s);
    return 1;
}

symrail_status_t sr_rails_filter_check(const char *filter)
{
    if (!filter)
        return SYMRAIL_OK;
    return sr_rails_filter_walk(filter, sr_rails_check_entry, NULL) == 1 ? SYMRAIL_ERR_INVALID
                                                                          : SYMRAIL_OK;
}

/* ---- topology -------------------------------------------------------------- */

symrail_status_t sr_rails_topo_load(const char *xml_path_or_null, hwloc_topology_t *topo_p)
{
    hwloc_topology_t topo;
    symrail_status_t status;
    const char *what = xml_path_or_null ? xml_path_or_null : "this machine";

    if (!topo_p)
        return SYMRAIL_ERR_INVALID;
    if (hwloc_topology_init(&topo) != 0)
        return SYMRAIL_ERR_NOMEM;
    /* NICs are I/O objects, which hwloc drops by default; "important" keeps
     * them (and GPUs) without every USB and DMA device. */
    if (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
        status = SYMRAIL_ERR_SYSTEM;
        goto err_topo;
    }
    if (xml_path_or_null) {
        int rc;
        if (xml_path_or_null[0] == '<') {
            size_t size = strlen(xml_path_or_null) + 1;
            what = "an XML buffer";
            if (size > INT_MAX) {
                status = SYMRAIL_ERR_INVALID;
                goto err_topo;
            }
            rc = hwloc_topology_set_xmlbuffer(topo, xml_path_or_null, (int)size);
        } else {
            rc = hwloc_topology_set_xml(topo, xml_path_or_null);
        }
        if (rc != 0) {
            sr_warn("cannot read the topology from %s: %s", what, strerror(errno));
            status = SYMRAIL_ERR_INVALID;
            goto err_topo;
        }
    }
    /* hwloc's "pci" component (libpciaccess) keeps what it allocates past
     * hwloc_topology_destroy, about 430 KiB of device names a load: every
     * init over verbs leaked that much.  Without it the linux component
     * finds the same PCI devices and NICs in sysfs.  Whatever another
     * plugin may keep is left out of the leak checker: the plugin is
     * unloaded by then, so that no suppression can name it. */
    if (!xml_path_or_null &&
        hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci") != 0)
        sr_debug("hwloc: cannot leave out its pci component: %m");
    SR_LSAN_OFF();
    int load_rc = hwloc_topology_load(topo);
    SR_LSAN_ON();
    if (load_rc != 0) {
        sr_warn("cannot load the topology of %s: %s", what, strerror(errno));
        status = xml_path_or_null ? SYMRAIL_ERR_INVALID : SYMRAIL_ERR_SYSTEM;
        goto err_topo;
    }
    *topo_p = topo;
    return SYMRAIL_OK;

err_topo:
    hwloc_topology_destroy(topo);
    return status;
}

/* ---- ranking --------------------------------------------------------------- */

/* What the ranking needs to know about the process, computed once. */
typedef struct {
    hwloc_topology_t           topo;
    hwloc_cpuset_t             cpus;
    hwloc_nodeset_t            nodes;     /* NUMA nodes local to cpus */
    struct hwloc_distances_s  *dist;      /* NUMA latencies, or NULL */
    uint64_t                   local_cost;
} sr_rails_ctx_t;

static hwloc_obj_t sr_rails_find_osdev(hwloc_topology_t topo, const char *dev, size_t dev_size)
{
    hwloc_obj_t obj = NULL;

    /* An unterminated name cannot equal any device's. */
    if (!memchr(dev, '\0', dev_size))
        return NULL;
    /* Only OpenFabrics osdevs: verbs names are unique among those, not
     * necessarily among netdevs and disks. */
    while ((obj = hwloc_get_next_osdev(topo, obj)) != NULL)
        if (obj->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && obj->name &&
            strcmp(obj->name, dev) == 0)
            return obj;
    return NULL;
}

static int sr_rails_dist_index(const struct hwloc_distances_s *dist, unsigned node)
{
    for (unsigned i = 0; i < dist->nbobjs; i++)
        if (dist->objs[i] && dist->objs[i]->os_index == node)
            return (int)i;
    return -1;
}

/* Smallest latency from any node in `from` to any node in `to`; 0 when the
 * matrix covers no such pair. */
static uint64_t sr_rails_dist_min(const struct hwloc_distances_s *dist, hwloc_const_nodeset_t from,
                                  hwloc_const_nodeset_t to)
{
    uint64_t best = 0;
    int a, b;

    hwloc_bitmap_foreach_begin(a, from) {
        int i = sr_rails_dist_index(dist, (unsigned)a);
        if (i < 0)
            continue;
        hwloc_bitmap_foreach_begin(b, to) {
            int j = sr_rails_dist_index(dist, (unsigned)b);
            if (j < 0)
                continue;
            uint64_t v = dist->values[(size_t)i * dist->nbobjs + (size_t)j];
            if (v && (!best || v < best))
                best = v;
        } hwloc_bitmap_foreach_end();
    } hwloc_bitmap_foreach_end();
    return best;
}

static symrail_status_t sr_rails_ctx_init(hwloc_topology_t topo, hwloc_const_cpuset_t cpuset,
                                          sr_rails_ctx_t *ctx)
{
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    struct hwloc_distances_s *dist = NULL;
    unsigned nr = 1;

    memset(ctx, 0, sizeof(*ctx));
    ctx->topo = topo;
    ctx->local_cost = SR_RAILS_LOCAL_COST;
    ctx->cpus = hwloc_bitmap_alloc();
    if (!ctx->cpus)
        return SYMRAIL_ERR_NOMEM;
    ctx->nodes = hwloc_bitmap_alloc();
    if (!ctx->nodes)
        goto err_cpus;

    if (cpuset) {
        if (hwloc_bitmap_copy(ctx->cpus, cpuset) != 0)
            goto err_nodes;
    } else if (hwloc_get_cpubind(topo, ctx->cpus, HWLOC_CPUBIND_PROCESS) != 0) {
        /* Binding cannot be queried for a topology that is not this
         * machine's (XML); an unbound process may run anywhere. */
        if (hwloc_bitmap_copy(ctx->cpus, all) != 0)
            goto err_nodes;
    }
    if (hwloc_bitmap_and(ctx->cpus, ctx->cpus, all) != 0)
        goto err_nodes;
    if (hwloc_bitmap_iszero(ctx->cpus)) {
        /* A binding to CPUs the topology does not have says nothing about
         * which rails are near; better every rail than none. */
        sr_debug("rails: process cpuset is outside the topology; ranking as if unbound");
        if (hwloc_bitmap_copy(ctx->cpus, all) != 0)
            goto err_nodes;
    }
    if (hwloc_cpuset_to_nodeset(topo, ctx->cpus, ctx->nodes) != 0)
        goto err_nodes;

    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &dist,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 && nr == 1) {
        /* The process's own node is the yardstick; a matrix that does not
         * cover it (or has a zero diagonal) cannot rank anything. */
        uint64_t local = sr_rails_dist_min(dist, ctx->nodes, ctx->nodes);
        if (local) {
            ctx->dist = dist;
            ctx->local_cost = local;
        } else {
            hwloc_distances_release(topo, dist);
        }
    }
    return SYMRAIL_OK;

err_nodes:
    hwloc_bitmap_free(ctx->nodes);
err_cpus:
    hwloc_bitmap_free(ctx->cpus);
    return SYMRAIL_ERR_NOMEM;
}

static void sr_rails_ctx_fini(sr_rails_ctx_t *ctx)
{
    if (ctx->dist)
        hwloc_distances_release(ctx->topo, ctx->dist);
    hwloc_bitmap_free(ctx->nodes);
    hwloc_bitmap_free(ctx->cpus);
}

/* Fills numa and distance of one rail and returns its cost (the NUMA latency
 * scale: local_cost for a local rail), or 0 when its locality is unknown. */
static uint64_t sr_rails_locate(const sr_rails_ctx_t *ctx, sr_rail_t *rail)
{
    hwloc_topology_t topo = ctx->topo;
    hwloc_obj_t osdev, anc;

    rail->numa = -1;
    rail->distance = -1;
    osdev = sr_rails_find_osdev(topo, rail->dev, sizeof(rail->dev));
    if (!osdev)
        return 0;
    anc = hwloc_get_non_io_ancestor_obj(topo, osdev);
    if (!anc || !anc->cpuset || !anc->nodeset || hwloc_bitmap_iszero(anc->cpuset) ||
        hwloc_bitmap_iszero(anc->nodeset))
        return 0;
    /* hwloc hangs devices it cannot place under the root: on a machine with
     * several NUMA nodes that says "anywhere", not "near every CPU". */
    if (!anc->parent && hwloc_bitmap_weight(anc->nodeset) > 1)
        return 0;

    /* A device under an object spanning several nodes (a package split in
     * sub-NUMA clusters) is reported on the first; the cost uses them all. */
    rail->numa = hwloc_bitmap_first(anc->nodeset);
    if (hwloc_bitmap_intersects(anc->cpuset, ctx->cpus)) {
        rail->distance = 0;
        return ctx->local_cost;
    }
    if (ctx->dist) {
        uint64_t d = sr_rails_dist_min(ctx->dist, ctx->nodes, anc->nodeset);
        if (!d)
            d = 2 * ctx->local_cost;   /* node missing from the matrix */
        /* Not local by cpuset yet no farther by latency (a device on an
         * object without CPUs of ours but on our node): equal cost. */
        if (d < ctx->local_cost)
            d = ctx->local_cost;
        rail->distance = d > INT_MAX ? INT_MAX : (int)d;
        return d;
    }
    rail->distance = 1;
    return SR_RAILS_REMOTE_COST;
}

symrail_status_t sr_rails_rank(hwloc_topology_t topo, hwloc_const_cpuset_t cpuset,
                               double max_ratio, sr_rail_t *rails, int n)
{
    sr_rails_ctx_t ctx;
    uint64_t *cost;
    uint64_t nearest = 0, slowest = 0;
    symrail_status_t status;

    if (n < 0 || (n > 0 && !rails))
        return SYMRAIL_ERR_INVALID;
    if (n == 0)
        return SYMRAIL_OK;
    cost = calloc((size_t)n, sizeof(*cost));
    if (!cost)
        return SYMRAIL_ERR_NOMEM;

    if (topo) {
        status = sr_rails_ctx_init(topo, cpuset, &ctx);
        if (status != SYMRAIL_OK)
            goto err_cost;
        for (int i = 0; i < n; i++) {
            cost[i] = sr_rails_locate(&ctx, &rails[i]);
            if (cost[i] && (!nearest || cost[i] < nearest))
                nearest = cost[i];
        }
        sr_rails_ctx_fini(&ctx);
    } else {
        for (int i = 0; i < n; i++) {
            rails[i].numa = -1;
            rails[i].distance = -1;
        }
    }

    /* An unknown speed is most often a rate newer than the code that decodes
     * it, so counting it as 1 Mb/s would all but disable the rail; the
     * slowest known speed is the conservative guess. */
    for (int i = 0; i < n; i++)
        if (rails[i].speed_mbps && (!slowest || rails[i].speed_mbps < slowest))
            slowest = rails[i].speed_mbps;
    if (!slowest)
        slowest = SR_RAILS_NOMINAL_SPEED;

    for (int i = 0; i < n; i++) {
        sr_rail_t *r = &rails[i];
        uint64_t base = r->speed_mbps ? r->speed_mbps : slowest;
        if (base > UINT32_MAX)
            base = UINT32_MAX;

        if (!nearest) {
            /* No rail has locality: all are equally near as far as we know. */
            r->distance = 0;
            r->weight = (uint32_t)base;
            continue;
        }
        if (!cost[i]) {
            /* A device hwloc does not know (rxe0 on a netdev, a device hidden
             * by a container) may be near or far.  It keeps the weight of its
             * speed, since dropping it could drop the only working path, but
             * does not join the nearest group: it would otherwise set the
             * yardstick for the located rails.  distance stays -1 so callers
             * that order rails put it after the located ones. */
            r->weight = (uint32_t)base;
            continue;
        }
        /* Before the limit: whatever max_ratio says, even below 1, the
         * nearest rails carry the traffic. */
        if (cost[i] == nearest) {
            r->weight = (uint32_t)base;
            continue;
        }
        double ratio = (double)cost[i] / (double)nearest;
        if (max_ratio > 0 && ratio > max_ratio) {
            r->weight = 0;
            continue;
        }
        double w = (double)base / ratio + 0.5;
        r->weight = w < 1.0 ? 1 : w >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)w;
    }
    free(cost);
    return SYMRAIL_OK;

err_cost:
    free(cost);
    return status;
}

/* ---- output ---------------------------------------------------------------- */

void sr_rails_format(const sr_rail_t *rails, int n, char *buf, size_t len)
{
    size_t used = 0;

    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < n && rails; i++) {
        const sr_rail_t *r = &rails[i];
        char numa[16] = "?", dist[16] = "?", speed[32] = "?";
        char line[192];

        if (r->numa >= 0)
            snprintf(numa, sizeof(numa), "%d", r->numa);
        if (r->distance >= 0)
            snprintf(dist, sizeof(dist), "%d", r->distance);
        if (r->speed_mbps)
            snprintf(speed, sizeof(speed), "%llu Mb/s", (unsigned long long)r->speed_mbps);
        int w = snprintf(line, sizeof(line), "%.*s:%d  numa %s  distance %s  weight %" PRIu32 "  speed %s\n",
                         (int)strnlen(r->dev, sizeof(r->dev)), r->dev, r->port, numa, dist,
                         r->weight, speed);
        if (w < 0 || (size_t)w >= sizeof(line) || used + (size_t)w >= len)
            break;
        memcpy(buf + used, line, (size_t)w + 1);
        used += (size_t)w;
    }
}

/* ---- pairing by reachability ---------------------------------------------- */

static int sr_rails_v4mapped(const uint8_t *gid)
{
    static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    return memcmp(gid, pfx, 12) == 0;
}

static int sr_rails_zero(const uint8_t *gid)
{
    static const uint8_t zero[16];
    return memcmp(gid, zero, 16) == 0;
}

/* Do the first `bits` bits of x and y agree? */
static int sr_rails_prefix_eq(const uint8_t *x, const uint8_t *y, uint32_t bits)
{
    uint32_t bytes = bits / 8, rest = bits % 8;
    if (memcmp(x, y, bytes) != 0)
        return 0;
    if (rest == 0)
        return 1;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (x[bytes] & mask) == (y[bytes] & mask);
}

int sr_rails_reach(const sr_rail_link_t *a, const sr_rail_link_t *b)
{
    if (a->is_eth != b->is_eth)
        return 0;
    if (!a->is_eth) {
        if (sr_rails_zero(a->gid) || sr_rails_zero(b->gid))
            return 1;
        return sr_rails_prefix_eq(a->gid, b->gid, 64);
    }
    int v4a = sr_rails_v4mapped(a->gid), v4b = sr_rails_v4mapped(b->gid);
    if (v4a != v4b)
        return 0;
    if (v4a) {
        uint32_t bits = a->prefix_bits < b->prefix_bits ? a->prefix_bits : b->prefix_bits;
        if (bits > 32)
            bits = 32;
        return sr_rails_prefix_eq(a->gid + 12, b->gid + 12, bits);
    }
    return sr_rails_prefix_eq(a->gid, b->gid, 64);
}

void sr_rails_pair(const sr_rail_link_t *a, int na, const sr_rail_link_t *b, int nb,
                   int *pair_p)
{
    uint64_t taken = 0;  /* rails of b already paired (at most 64) */
    if (nb > 64)
        nb = 64;
    for (int i = 0; i < na; i++) {
        pair_p[i] = -1;
        if (i < nb && !(taken >> i & 1) && sr_rails_reach(&a[i], &b[i])) {
            pair_p[i] = i;
        } else {
            for (int j = 0; j < nb; j++) {
                /* Leave b[j] to a[j] when that pair will want it. */
                if (taken >> j & 1 || !sr_rails_reach(&a[i], &b[j]) ||
                    (j > i && j < na && sr_rails_reach(&a[j], &b[j])))
                    continue;
                pair_p[i] = j;
                break;
            }
        }
        if (pair_p[i] >= 0)
            taken |= 1ull << pair_p[i];
    }
}
