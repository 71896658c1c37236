/*
 * RDMA verbs transport. Memory: registration of the regions and of the scratch area (credits, atomic
 * results, notify slots, bounce buffers), and the work-request contexts.
 */
#include "config.h"
#include "tl/verbs/ib.h"

/* ---- memory ------------------------------------------------------------------ */

symrail_status_t sr_ib_scratch_init(sr_tl_ctx_t *ctx)
{
    size_t n = (size_t)ctx->params.n_pes;
    size_t pool = ctx->params.env->ib_notify_pool;
    /* Every peer's static window, whether or not it is reached over verbs:
     * a few hundred bytes a peer, and the sums stay simple. */
    ctx->nrecv = (uint32_t)(n * SR_IB_CREDIT_STATIC + pool);
    /* Half the pool goes out at once, evenly (the address blob says how
     * much): a burst at the start need not wait for windows to grow. */
    size_t w0 = SR_IB_CREDIT_STATIC + pool / (2 * n);
    ctx->window0 = (uint32_t)(w0 < ctx->depth ? w0 : ctx->depth);
    ctx->pool_free = (uint32_t)(pool - n * (ctx->window0 - SR_IB_CREDIT_STATIC));
    ctx->pool_low = (uint32_t)(pool / 4);
    size_t rslots = (size_t)ctx->nrecv * SR_IB_MSG_SIZE;
    size_t sslots = (size_t)SR_IB_SEND_SLOTS * SR_IB_MSG_SIZE;
    ctx->bounce_len = ctx->params.env->slice_size + ctx->params.env->slice_size / 4;
    size_t credits = SR_ALIGN_UP(2 * n * sizeof(uint64_t), SR_CACHE_LINE);
    size_t amo = SR_IB_AMO_SLOTS * sizeof(uint64_t);
    ctx->scratch_len = credits + amo + SR_ALIGN_UP(rslots, 4096) + SR_ALIGN_UP(sslots, 4096) +
                       SR_IB_BOUNCE_SLOTS * SR_ALIGN_UP(ctx->bounce_len, 4096);
    if (posix_memalign((void **)&ctx->scratch, 4096, ctx->scratch_len) != 0)
        return SYMRAIL_ERR_NOMEM;
    memset(ctx->scratch, 0, credits + amo);
    ctx->credits = (uint64_t *)(void *)ctx->scratch;
    /* Until a peer says more, our window there is the static one. */
    for (size_t pe = 0; pe < n; pe++)
        ctx->credits[2 * pe + 1] = SR_IB_CREDIT_STATIC;
    ctx->amo_res = (uint64_t *)(void *)(ctx->scratch + credits);
    ctx->recv_slots = ctx->scratch + credits + amo;
    ctx->send_slots = ctx->recv_slots + SR_ALIGN_UP(rslots, 4096);
    ctx->bounce = ctx->send_slots + SR_ALIGN_UP(sslots, 4096);
    for (uint32_t i = 0; i < SR_IB_SEND_SLOTS; i++)
        ctx->send_free[i] = SR_IB_SEND_SLOTS - 1 - i;
    ctx->nsend_free = SR_IB_SEND_SLOTS;
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

/* Ops come back to the lane they were posted on, so in a steady state each
 * lane lives off its own cache and posting takes no shared lock. */
sr_ib_op_t *sr_ib_op_get(sr_tl_ctx_t *ctx, sr_ib_lane_t *lane)
{
    sr_ib_op_t *op = lane->free;
    if (sr_likely(op != NULL)) {
        lane->free = op->next;
    } else {
        sr_ib_lock(ctx, &ctx->plock);
        op = sr_pool_get(&ctx->ops);
        sr_ib_unlock(ctx, &ctx->plock);
        if (sr_unlikely(op == NULL))
            return NULL;
    }
    memset(op, 0, sizeof(*op));
    op->bounce = op->amo_slot = -1;
    op->lane = lane;
    return op;
}

void sr_ib_op_put(sr_tl_ctx_t *ctx, sr_ib_op_t *op)
{
    if (op->bounce >= 0)
        sr_ib_bit_give(ctx, &ctx->bounce_free, op->bounce);
    if (op->amo_slot >= 0)
        sr_ib_bit_give(ctx, &ctx->amo_free, op->amo_slot);
    if (op->rc_ent != NULL)
        sr_ib_rc_put(ctx, op->rc_ent);
    op->next = op->lane->free;
    op->lane->free = op;
}

symrail_status_t sr_ib_mem_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem)
{
    if (region >= SR_TL_REGION_SEG0)
        return sr_ib_seg_reg(ctx, region, mem);
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
