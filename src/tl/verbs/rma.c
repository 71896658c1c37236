/*
 * RDMA verbs transport. Data path: room checks, posting puts, gets and atomics, their completions.
 */
#include "config.h"
#include "tl/verbs/ib.h"

/* ---- data path --------------------------------------------------------------------- */

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
        sr_ib_lane_fail(ep, lane, "test fault hook (SYMRAIL_IB_FAULT_QP_ERROR)");
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
            sr_copy(addr, local, len);
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

symrail_status_t sr_ib_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                           uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    return sr_ib_rdma(ep, lane, 1, (void *)src, region, roff, len, comp);
}

symrail_status_t sr_ib_get(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region,
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

symrail_status_t sr_ib_atomic(sr_tl_ep_t *ep, int lane_idx, sr_tl_amo_t op_kind,
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

void sr_ib_complete(sr_tl_ctx_t *ctx, struct ibv_wc *wc)
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
        sr_copy(op->dst, ctx->bounce + (size_t)op->bounce * ctx->bounce_len, op->len);
    }
    sr_tl_comp_t *comp = op->comp;
    sr_ib_op_put(ctx, op);
    comp->cb(comp, SYMRAIL_OK);
}
