/*
 * RDMA verbs transport. Private buffers in place: above
 * SYMRAIL_IB_ZCOPY_THRESH a slice whose local buffer is in no registered
 * region is registered on the fly through the registration cache
 * (util/rcache.h) on every device, and posted from (or read into) the
 * caller's memory; its op holds a reference to the entry until a
 * completion covers it (sr_ib_op_put), so memory freed meanwhile is
 * deregistered only then.  Below the threshold, or when the cache is off,
 * full or the registration fails, it goes through a bounce buffer as
 * before.
 */
#include "config.h"
#include "tl/verbs/ib.h"
#include "util/rcache.h"

typedef struct {
    struct ibv_mr *mr[SR_IB_MAX_RAILS];  /* by device */
} sr_ib_rc_mr_t;

static int sr_ib_rc_reg(void *arg, void *addr, size_t len, void **handle_p)
{
    sr_tl_ctx_t *ctx = arg;
    sr_ib_rc_mr_t *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return ENOMEM;
    /* Local access only: a private buffer is the local end of a put or a
     * get, never a target, and a remote key for it would let any peer
     * that guesses it read the process's memory. */
    for (int d = 0; d < ctx->ndevs; d++) {
        h->mr[d] = ibv_reg_mr(ctx->devs[d].pd, addr, len,
                              IBV_ACCESS_LOCAL_WRITE);
        if (h->mr[d] == NULL) {
            int err = errno ? errno : ENOMEM;
            /* Read-only memory, or a pinned limit: copied instead, said once. */
            static int told;
            if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
                sr_info("verbs: registering %zu bytes of private memory at %p on %s failed: "
                        "%s; such buffers go through bounce buffers", len, addr,
                        ctx->devs[d].name, strerror(err));
            while (d-- > 0)
                ibv_dereg_mr(h->mr[d]);
            free(h);
            return err;
        }
    }
    *handle_p = h;
    return 0;
}

static void sr_ib_rc_dereg(void *arg, void *handle)
{
    sr_tl_ctx_t *ctx = arg;
    sr_ib_rc_mr_t *h = handle;
    for (int d = 0; d < ctx->ndevs; d++) {
        int rc = h->mr[d] ? ibv_dereg_mr(h->mr[d]) : 0;
        if (rc != 0)
            sr_error("verbs: deregistering cached memory on %s failed: %s", ctx->devs[d].name,
                     strerror(rc));
    }
    free(h);
}

symrail_status_t sr_ib_rc_init(sr_tl_ctx_t *ctx)
{
    const sr_env_t *env = ctx->params.env;
    ctx->zcopy_thresh = env->ib_zcopy_thresh;
    if (ctx->zcopy_thresh == 0 || env->ib_rcache_max == 0) {
        sr_debug("verbs: private buffers go through bounce buffers (SYMRAIL_IB_ZCOPY_THRESH=0)");
        return SYMRAIL_OK;
    }
    /* Slices are never larger than SYMRAIL_SLICE_SIZE, and the threshold is
     * a slice's length (rma.c). */
    if (ctx->zcopy_thresh > env->slice_size) {
        /* No cache either: a hint would pin buffers no slice uses. */
        sr_warn("verbs: SYMRAIL_IB_ZCOPY_THRESH (%zu) is above SYMRAIL_SLICE_SIZE (%zu): no "
                "slice reaches it, so private buffers always go through bounce buffers",
                (size_t)ctx->zcopy_thresh, (size_t)env->slice_size);
        return SYMRAIL_OK;
    }
    if (!sr_memhook_active()) {
        sr_info("verbs: private buffers go through bounce buffers: another library interposes "
                "free or munmap before libsymrail, so its registration cache could not see "
                "memory go");
        return SYMRAIL_OK;
    }
    sr_rcache_params_t p = { .max_bytes = env->ib_rcache_max, .reg = sr_ib_rc_reg,
                             .dereg = sr_ib_rc_dereg, .arg = ctx };
    return sr_rcache_create(&p, &ctx->rcache);
}

void sr_ib_rc_fini(sr_tl_ctx_t *ctx)
{
    sr_rcache_destroy(ctx->rcache);
    ctx->rcache = NULL;
}

int sr_ib_rc_lkey(sr_tl_ctx_t *ctx, sr_ib_dev_t *dev, void *addr, size_t len,
                  struct sr_rcache_ent **ent_p, uint32_t *lkey_p)
{
    sr_rcache_ent_t *ent;
    if (sr_rcache_get(ctx->rcache, addr, len, &ent) != SYMRAIL_OK)
        return 0;
    *ent_p = ent;
    *lkey_p = ((sr_ib_rc_mr_t *)ent->handle)->mr[dev - ctx->devs]->lkey;
    return 1;
}

void sr_ib_rc_put(sr_tl_ctx_t *ctx, struct sr_rcache_ent *ent)
{
    sr_rcache_put(ctx->rcache, ent);
}

/* The core is about to slice a transfer: register its whole buffer at
 * once, so that its slices find it rather than register a slice each. */
void sr_ib_local_hint(sr_tl_ep_t *ep, const void *local, size_t len)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (ctx->rcache == NULL || len < ctx->zcopy_thresh || ep->nlanes == 0)
        return;
    sr_ib_lane_t *lane = &ep->lanes[0];
    uint32_t lkey;
    sr_ib_lock(ctx, &lane->lock);  /* the segments' array (seg.h) */
    int registered = lane->rail != NULL &&
                     sr_ib_lkey(ctx, lane->rail->dev, local, len, &lkey);
    sr_ib_unlock(ctx, &lane->lock);
    sr_rcache_ent_t *ent;
    if (!registered && sr_rcache_get(ctx->rcache, local, len, &ent) == SYMRAIL_OK)
        sr_rcache_put(ctx->rcache, ent);
}

void sr_ib_rc_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p)
{
    if (ctx->rcache == NULL)
        return;
    sr_rcache_stats_t s;
    sr_rcache_stats(ctx->rcache, &s);
    stats_p->rcache_hits += s.hits;
    stats_p->rcache_misses += s.misses;
    stats_p->rcache_regs += s.regs;
    stats_p->rcache_invalidations += s.invalidations;
    stats_p->rcache_evictions += s.evictions;
    stats_p->rcache_bytes += s.bytes;
}
