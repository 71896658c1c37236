/*
 * RDMA verbs transport. Data path: room checks, posting puts, gets and
 * atomics (chained and selectively signalled), their completions, flush.
 *
 * A put sent inline or from a bounce buffer completes at post (the source
 * may be reused at once); the op keeps the data (its inline copy or the
 * bounce buffer) until a completion covers it, so that it can be posted
 * again on another lane should its QP fail.  Only some work requests are
 * signalled: those that need a callback (zero-copy puts, gets, atomics),
 * every sig_every-th of a QP, the last of a chain, and one that takes the
 * last slot of its send queue, of its CQ or of the bounce buffers, so that a
 * full resource always has a completion on its way that frees some of it.
 * A completion covers every earlier work request of its QP.
 */
#include "config.h"
#include "tl/verbs/ib.h"

#include <stddef.h>

/* ---- posting --------------------------------------------------------------------- */

/* Takes the send-queue slot and the CQ entry of one WR (room checked). */
static inline void sr_ib_take(sr_tl_ctx_t *ctx, sr_ib_lane_t *lane, sr_ib_op_t *op)
{
    sr_ib_dev_t *dev = lane->rail->dev;
    lane->outstanding++;
    dev->cq_outstanding++;
    if (lane->outstanding >= ctx->max_wr || dev->cq_outstanding >= dev->cq_size ||
        (op->bounce >= 0 && ctx->bounce_free == 0))
        op->must_sig = 1;
}

/* A post that the QP refused: what it did not take completes as flushed
 * from progress, after whatever it did take (see sr_ib_rma_progress). */
static void sr_ib_post_failed(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *bad, int rc)
{
    sr_error("verbs: ibv_post_send on QP %u to PE %d failed: %s", lane->qp->qp_num, ep->pe,
             strerror(rc));
    for (sr_ib_op_t *op = bad; op; op = op->next)
        op->kind |= 0x100;  /* never reached the QP */
    ep->ctx->repairs_pending = 1;
    sr_ib_lane_fail(ep, lane, "post failed");
}

/* Posts the lane's held WRs as one chain. */
static void sr_ib_post_lane(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_op_t *first = lane->hold_head, *last = lane->hold_tail;
    if (first == NULL)
        return;
    lane->hold_head = lane->hold_tail = NULL;
    uint32_t n = 0;
    for (sr_ib_op_t *op = first; op; op = op->next) {
        int sig = op->must_sig || op->comp != NULL || op->kind != SR_IB_OP_DATA ||
                  lane->unsig + 1 >= ctx->sig_every || (op == last && op != first);
        op->seq = ++lane->sq_posted;
        op->wr.wr_id = (uintptr_t)op;
        op->wr.send_flags = (op->wr.send_flags & ~(unsigned)IBV_SEND_SIGNALED) |
                            (sig ? IBV_SEND_SIGNALED : 0);
        op->wr.next = op->next ? &op->next->wr : NULL;
        if (sig) {
            lane->unsig = 0;
            lane->sig_seq = op->seq;
        } else {
            lane->unsig++;
        }
        n++;
    }
    if (lane->wq_tail)
        lane->wq_tail->next = first;
    else
        lane->wq_head = first;
    lane->wq_tail = last;
    struct ibv_send_wr *bad = NULL;
    int rc = ibv_post_send(lane->qp, &first->wr, &bad);
    ctx->n_posted += n;
    if (sr_unlikely(rc != 0))
        sr_ib_post_failed(ep, lane, bad ? (sr_ib_op_t *)(uintptr_t)bad->wr_id : first, rc);
}

void sr_ib_ep_post_end(sr_tl_ep_t *ep)
{
    if (!ep->held)
        return;
    ep->held = 0;
    for (int l = 0; l < ep->nlanes; l++)
        if (ep->lanes[l].hold_head)
            sr_ib_post_lane(ep, &ep->lanes[l]);
}

void sr_ib_post_held(sr_tl_ctx_t *ctx)
{
    ctx->held = 0;
    for (int pe = 0; pe < ctx->params.n_pes; pe++)
        if (ctx->eps[pe])
            sr_ib_ep_post_end(ctx->eps[pe]);
}

/* Queues op on lane behind what it holds; posts the lot unless more of the
 * same transfer follows. */
static void sr_ib_enqueue(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op, int more)
{
    op->next = NULL;
    if (lane->hold_tail)
        lane->hold_tail->next = op;
    else
        lane->hold_head = op;
    lane->hold_tail = op;
    if (more) {
        ep->held = 1;
        ep->ctx->held = 1;
    } else {
        sr_ib_post_lane(ep, lane);
    }
}

/* No room now: what is held goes out first, so that its completions come. */
static symrail_status_t sr_ib_again(sr_tl_ep_t *ep)
{
    sr_ib_ep_post_end(ep);
    return SYMRAIL_ERR_AGAIN;
}

/* Fills op's WR for a put or get on lane (also when posting it again). */
static void sr_ib_rdma_wr(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op, int is_put,
                          void *addr, uint32_t lkey, int inl)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    int rail = (int)(lane->rail - ctx->rails);
    op->lane = lane;
    op->sge = (struct ibv_sge){ .addr = (uintptr_t)addr, .length = (uint32_t)op->len,
                                .lkey = lkey };
    op->wr = (struct ibv_send_wr){ .sg_list = &op->sge, .num_sge = 1,
                                   .opcode = is_put ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
                                   .send_flags = inl ? IBV_SEND_INLINE : 0 };
    op->wr.wr.rdma.remote_addr = ep->raddr[op->region] + op->roff;
    op->wr.wr.rdma.rkey = ep->rkey[rail][op->region];
}

/* Where a locally completed put's data lives, for (re)posting it on lane. */
static void sr_ib_local_wr(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op)
{
    if (op->bounce >= 0)
        sr_ib_rdma_wr(ep, lane, op, 1, ep->ctx->bounce + (size_t)op->bounce * ep->ctx->bounce_len,
                      lane->rail->dev->scratch_mr->lkey, 0);
    else
        sr_ib_rdma_wr(ep, lane, op, 1, op->inl, 0, 1);
}

/* The test fault hook breaks the QP just before a data WR goes in: the WR
 * comes back flushed, certainly not executed, and is retried on another
 * lane while this one is repaired.  (An atomic caught in a failure may have
 * been applied, so it fails instead: not what this hook is for.) */
static inline void sr_ib_fault_hook(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    lane->posted++;
    if (sr_unlikely(ctx->fault_lane >= 0 && &ep->lanes[ctx->fault_lane] == lane &&
                    lane->posted >= ctx->fault_after)) {
        ctx->fault_lane = -1;
        sr_ib_lane_fail(ep, lane, "test fault hook (SYMRAIL_IB_FAULT_QP_ERROR)");
    }
}

static symrail_status_t sr_ib_rdma(sr_tl_ep_t *ep, int lane_idx, int is_put, void *local,
                                   uint32_t region, uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[lane_idx];
    /* Nothing was posted: safe to take elsewhere, or here once repaired. */
    if (sr_unlikely(lane->down))
        return lane->state == SR_IB_LANE_DEAD ? SYMRAIL_ERR_TRANSPORT : sr_ib_again(ep);
    if (!sr_ib_room(ep, lane))
        return sr_ib_again(ep);
    sr_ib_op_t *op = sr_ib_op_get(ctx);
    if (op == NULL)
        return SYMRAIL_ERR_NOMEM;
    uint32_t lkey = 0;
    int inl = is_put && len <= (size_t)ctx->max_inline && len <= SR_IB_INLINE_MAX;
    op->ep = ep;
    op->len = len;
    op->region = region;
    op->roff = roff;
    int more = comp && (comp->flags & SR_TL_COMP_MORE);
    if (inl) {
        /* Copied now: the caller's buffer is free at once. */
        memcpy(op->inl, local, len);
        sr_ib_rdma_wr(ep, lane, op, 1, op->inl, 0, 1);
    } else if (sr_ib_lkey(ctx, lane->rail->dev, local, len, &lkey)) {
        op->comp = comp;  /* zero-copy: the buffer is ours until the completion */
        sr_ib_rdma_wr(ep, lane, op, is_put, local, lkey, 0);
    } else {
        /* Private memory: stage through a registered bounce buffer. */
        if (len > ctx->bounce_len || (op->bounce = sr_ib_bit_take(&ctx->bounce_free)) < 0) {
            sr_ib_op_put(ctx, op);
            return len > ctx->bounce_len ? SYMRAIL_ERR_INVALID : sr_ib_again(ep);
        }
        char *addr = ctx->bounce + (size_t)op->bounce * ctx->bounce_len;
        if (is_put) {
            sr_copy(addr, local, len);
        } else {
            op->dst = local;
            op->comp = comp;
        }
        sr_ib_rdma_wr(ep, lane, op, is_put, addr, lane->rail->dev->scratch_mr->lkey, 0);
    }
    sr_ib_take(ctx, lane, op);
    sr_ib_fault_hook(ep, lane);
    lane->rail->bytes += len;
    lane->rail->slices++;
    symrail_status_t st = op->comp ? SR_TL_INPROGRESS : SYMRAIL_OK;
    sr_ib_enqueue(ep, lane, op, more);
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

static void sr_ib_post_amo(sr_tl_ep_t *ep, sr_ib_op_t *op, int cswap, uint64_t compare,
                           uint64_t operand)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = op->lane;
    op->sge = (struct ibv_sge){ .addr = (uintptr_t)&ctx->amo_res[op->amo_slot], .length = 8,
                                .lkey = lane->rail->dev->scratch_mr->lkey };
    op->wr = (struct ibv_send_wr){ .sg_list = &op->sge, .num_sge = 1,
                                   .opcode = cswap ? IBV_WR_ATOMIC_CMP_AND_SWP
                                                   : IBV_WR_ATOMIC_FETCH_AND_ADD };
    op->wr.wr.atomic.remote_addr = op->raddr;
    op->wr.wr.atomic.rkey = op->rkey;
    op->wr.wr.atomic.compare_add = cswap ? compare : operand;
    op->wr.wr.atomic.swap = cswap ? operand : 0;
    sr_ib_take(ctx, lane, op);
    sr_ib_enqueue(ep, lane, op, 0);
}

symrail_status_t sr_ib_atomic(sr_tl_ep_t *ep, int lane_idx, sr_tl_amo_t op_kind,
                              uint32_t region, uint64_t roff, uint64_t operand,
                              uint64_t compare, uint64_t *result_p, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[lane_idx];
    if (sr_unlikely(lane->down))
        return lane->state == SR_IB_LANE_DEAD ? SYMRAIL_ERR_TRANSPORT : sr_ib_again(ep);
    if (!sr_ib_room(ep, lane) || ctx->amo_free == 0)
        return sr_ib_again(ep);
    if (op_kind > SR_TL_AMO_CSWAP)
        return SYMRAIL_ERR_UNSUPPORTED;
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
    switch (op_kind) {
    case SR_TL_AMO_FETCH:
        sr_ib_post_amo(ep, op, 0, 0, 0);
        break;
    case SR_TL_AMO_ADD:
        sr_ib_post_amo(ep, op, 0, 0, operand);
        break;
    case SR_TL_AMO_CSWAP:
        sr_ib_post_amo(ep, op, 1, compare, operand);
        break;
    case SR_TL_AMO_SET:
    case SR_TL_AMO_SWAP:
        /* No verbs swap: compare-swap from a guess until the guess is right,
         * so the update stays atomic with the peers' NIC atomics. */
        op->amo_loop = 1;
        op->expect = ep->guess_raddr == op->raddr ? ep->guess_val : 0;
        op->operand = operand;
        sr_ib_post_amo(ep, op, 1, op->expect, operand);
        break;
    }
    return SR_TL_INPROGRESS;
}

/* A signalled zero-length write at the end of lane, so that a flush never
 * waits on an unsignalled tail; 0 while there is no room for it (a
 * completion that frees some is on its way then). */
int sr_ib_cover(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_post_lane(ep, lane);
    if (lane->sig_seq >= lane->sq_posted)
        return 1;
    if (lane->outstanding >= ctx->max_wr ||
        lane->rail->dev->cq_outstanding >= lane->rail->dev->cq_size)
        return 0;
    sr_ib_op_t *op = sr_ib_op_get(ctx);
    if (op == NULL)
        return 0;
    op->ep = ep;
    op->lane = lane;
    op->kind = SR_IB_OP_COVER;
    op->wr = (struct ibv_send_wr){ .num_sge = 0, .opcode = IBV_WR_RDMA_WRITE };
    op->wr.wr.rdma.remote_addr = ep->raddr[0];
    op->wr.wr.rdma.rkey = ep->rkey[lane->rail - ctx->rails][0];
    sr_ib_take(ctx, lane, op);
    sr_ib_enqueue(ep, lane, op, 0);
    return 1;
}

/* ---- completions ----------------------------------------------------------------- */

/* A locally completed put whose QP failed: posted again elsewhere. */
static void sr_ib_replay_add(sr_tl_ep_t *ep, sr_ib_op_t *op)
{
    op->next = NULL;
    op->fail_qpn = op->lane->qp ? op->lane->qp->qp_num : 0;
    op->fail_rail = (int)(op->lane->rail - ep->ctx->rails);
    if (ep->replay_tail)
        ep->replay_tail->next = op;
    else
        ep->replay_head = op;
    ep->replay_tail = op;
    ep->ctx->replays = 1;
}

/* Frees what op holds on its lane; `ok`: its work request succeeded. */
static void sr_ib_retire(sr_tl_ctx_t *ctx, sr_ib_op_t *op, int ok, enum ibv_wc_status wst)
{
    sr_ib_lane_t *lane = op->lane;
    sr_tl_ep_t *ep = op->ep;
    lane->outstanding--;
    lane->rail->dev->cq_outstanding--;
    lane->sq_done = op->seq;
    ctx->n_completed++;
    if ((op->kind & 0xff) == SR_IB_OP_COVER) {
        sr_ib_op_put(ctx, op);
        return;
    }
    sr_tl_comp_t *comp = op->comp;
    if (comp == NULL) {
        if (sr_likely(ok))
            sr_ib_op_put(ctx, op);
        else
            sr_ib_replay_add(ep, op);
        return;
    }
    if (sr_unlikely(!ok)) {
        sr_ib_op_put(ctx, op);
        comp->cb(comp, wst == IBV_WC_RETRY_EXC_ERR ? SYMRAIL_ERR_PEER_GONE
                                                   : SYMRAIL_ERR_TRANSPORT);
        return;
    }
    if (op->amo_slot >= 0) {
        uint64_t res = ctx->amo_res[op->amo_slot];
        if (op->amo_loop && res != op->expect) {
            /* The completion just freed the room the next try needs. */
            op->expect = res;
            sr_ib_post_amo(ep, op, 1, res, op->operand);
            return;
        }
        if (op->amo_loop) {
            ep->guess_raddr = op->raddr;
            ep->guess_val = op->operand;
        }
        if (op->dst)
            *(uint64_t *)op->dst = res;
    } else if (op->dst && op->bounce >= 0) {
        sr_copy(op->dst, ctx->bounce + (size_t)op->bounce * ctx->bounce_len, op->len);
    }
    sr_ib_op_put(ctx, op);
    comp->cb(comp, SYMRAIL_OK);
}

/* A completion covers every earlier WR of its QP; those completed without
 * error (a QP in error completes every WR, signalled or not, on its own). */
void sr_ib_complete(sr_tl_ctx_t *ctx, struct ibv_wc *wc)
{
    sr_ib_op_t *op = (sr_ib_op_t *)(uintptr_t)wc->wr_id;
    sr_ib_lane_t *lane = op->lane;
    sr_tl_ep_t *ep = op->ep;
    int ok = wc->status == IBV_WC_SUCCESS;
    if (sr_likely(ok)) {
        __atomic_store_n(&ep->heard, sr_time_ns(), __ATOMIC_RELAXED);
    } else if (wc->status != IBV_WC_WR_FLUSH_ERR) {
        char why[160];
        snprintf(why, sizeof(why), "%s (vendor error %#x)", ibv_wc_status_str(wc->status),
                 wc->vendor_err);
        sr_ib_lane_fail(ep, lane, why);
    } else {
        sr_ib_lane_fail(ep, lane, NULL);
    }
    sr_ib_op_t *x;
    do {
        x = lane->wq_head;
        lane->wq_head = x->next;
        if (lane->wq_head == NULL)
            lane->wq_tail = NULL;
        sr_ib_retire(ctx, x, x != op || ok, wc->status);
    } while (x != op);
}

/* ---- flush, replays ----------------------------------------------------------- */

/* Posts the puts of failed lanes again, in order, on one lane that is up. */
static void sr_ib_replay(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    int alive = 0;
    for (int l = 0; l < ep->nlanes && ep->replay_head; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        alive |= lane->state != SR_IB_LANE_DEAD;
        if (lane->down)
            continue;
        while (ep->replay_head && sr_ib_room(ep, lane)) {
            sr_ib_op_t *op = ep->replay_head;
            ep->replay_head = op->next;
            if (ep->replay_head == NULL)
                ep->replay_tail = NULL;
            op->kind = SR_IB_OP_DATA;
            op->must_sig = ep->replay_head == NULL;
            sr_ib_local_wr(ep, lane, op);
            sr_ib_take(ctx, lane, op);
            sr_ib_enqueue(ep, lane, op, 1);
            ctx->n_replayed++;
        }
        sr_ib_post_lane(ep, lane);
        /* A flush under way waits for these too. */
        for (sr_ib_flush_t *f = ctx->flushes; f; f = f->next)
            if (f->ep == ep)
                f->target[l] = lane->sq_posted;
        break;
    }
    if (ep->replay_head && !alive) {
        /* Beyond repair: the next flush says so. */
        sr_ib_op_t *op = ep->replay_head;
        if (ep->late_err == SYMRAIL_OK) {
            ep->late_err = SYMRAIL_ERR_TRANSPORT;
            snprintf(ep->late_why, sizeof(ep->late_why),
                     "a put of %zu bytes to PE %d that had completed locally was lost with QP "
                     "%u on %s:%d, and no lane is left to send it again", op->len, ep->pe,
                     op->fail_qpn, ctx->rails[op->fail_rail].dev->name,
                     ctx->rails[op->fail_rail].port);
            sr_error("verbs: %s", ep->late_why);
        }
        while ((op = ep->replay_head)) {
            ep->replay_head = op->next;
            sr_ib_op_put(ctx, op);
        }
        ep->replay_tail = NULL;
    }
}

static int sr_ib_flushed(sr_tl_ep_t *ep, const uint64_t *target)
{
    if (ep->replay_head)
        return 0;
    for (int l = 0; l < ep->nlanes; l++)
        if (ep->lanes[l].sq_done < target[l] || ep->lanes[l].hold_head)
            return 0;
    return 1;
}

static symrail_status_t sr_ib_late_err(sr_tl_ep_t *ep)
{
    symrail_status_t st = ep->late_err;
    ep->late_err = SYMRAIL_OK;
    return st;
}

symrail_status_t sr_ib_flush(sr_tl_ep_t *ep, uint32_t lanes, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    uint64_t target[SR_TL_MAX_LANES] = { 0 };
    sr_ib_ep_post_end(ep);
    if (ep->replay_head)
        sr_ib_replay(ep);
    for (int l = 0; l < ep->nlanes; l++)
        if (lanes & (1u << l))
            target[l] = ep->lanes[l].sq_posted;
    if (sr_ib_flushed(ep, target))
        return sr_ib_late_err(ep);
    sr_ib_flush_t *f = malloc(sizeof(*f));
    if (f == NULL)
        return SYMRAIL_ERR_NOMEM;
    f->ep = ep;
    f->comp = comp;
    memcpy(f->target, target, sizeof(target));
    f->next = ctx->flushes;
    ctx->flushes = f;
    for (int l = 0; l < ep->nlanes; l++)
        if (ep->lanes[l].sq_done < target[l])
            sr_ib_cover(ep, &ep->lanes[l]);
    return SR_TL_INPROGRESS;
}

/* Work requests the QP never took complete as flushed, after those it took. */
static void sr_ib_unposted(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep)
{
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        while (lane->wq_head && (lane->wq_head->kind & 0x100)) {
            struct ibv_wc wc = { .wr_id = (uintptr_t)lane->wq_head,
                                 .status = IBV_WC_WR_FLUSH_ERR };
            sr_ib_complete(ctx, &wc);
        }
    }
}

/* From progress, after the CQs were polled. */
int sr_ib_rma_progress(sr_tl_ctx_t *ctx)
{
    int n = 0;
    if (sr_unlikely(ctx->held))
        sr_ib_post_held(ctx);
    if (sr_unlikely(ctx->replays || ctx->repairs_pending)) {
        ctx->replays = 0;
        for (int pe = 0; pe < ctx->params.n_pes; pe++) {
            sr_tl_ep_t *ep = ctx->eps[pe];
            if (ep == NULL)
                continue;
            sr_ib_unposted(ctx, ep);
            if (ep->replay_head)
                sr_ib_replay(ep);
            ctx->replays |= ep->replay_head != NULL;
        }
    }
    for (sr_ib_flush_t **pf = &ctx->flushes; *pf;) {
        sr_ib_flush_t *f = *pf;
        if (!sr_ib_flushed(f->ep, f->target)) {
            for (int l = 0; l < f->ep->nlanes; l++) {
                sr_ib_lane_t *lane = &f->ep->lanes[l];
                if (lane->sq_done < f->target[l] && lane->sig_seq < f->target[l])
                    sr_ib_cover(f->ep, lane);
            }
            pf = &f->next;
            continue;
        }
        *pf = f->next;
        f->comp->cb(f->comp, sr_ib_late_err(f->ep));
        free(f);
        n++;
    }
    return n;
}
