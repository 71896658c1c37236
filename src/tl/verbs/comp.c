/*
 * RDMA verbs transport. Completions: a completion retires every earlier
 * work request of its QP (rma.c says which are signalled); a failed one
 * breaks its lane (repair.c).  What the failure flushed waits for the
 * repair to say whether it was executed, and goes again on the repaired
 * lane (limbo.c, "Work caught in a failure"); otherwise a put goes out
 * again elsewhere (flush.c) or its callback gets the error.
 */
#include "config.h"
#include "tl/verbs/ib.h"

/* ---- completions ----------------------------------------------------------------- */

/* A locally completed put whose QP failed: posted again elsewhere (flock
 * held). */
void sr_ib_replay_add(sr_tl_ep_t *ep, sr_ib_op_t *op)
{
    op->next = NULL;
    op->fail_qpn = op->lane->qp ? op->lane->qp->qp_num : 0;
    op->fail_rail = (int)(op->lane->rail - ep->ctx->rails);
    if (ep->replay_tail)
        ep->replay_tail->next = op;
    else
        SR_IB_STORE(ep->replay_head, op);
    ep->replay_tail = op;
    SR_IB_STORE(ep->ctx->replays, 1);
}

/* Frees what op holds on its lane; `ok`: its work request succeeded.
 * Lane lock held (and flock when !ok); callbacks go to done. */
static void sr_ib_retire(sr_tl_ctx_t *ctx, sr_ib_op_t *op, int ok, enum ibv_wc_status wst,
                         sr_ib_done_t *done)
{
    sr_ib_lane_t *lane = op->lane;
    sr_tl_ep_t *ep = op->ep;
    uint64_t seq = op->seq;
    if (ok && op->amo_loop && ctx->amo_res[op->amo_slot] != op->expect) {
        /* Wrong guess: again from the value seen, in the slot it has. */
        SR_IB_STORE(lane->sq_done, seq);
        op->expect = ctx->amo_res[op->amo_slot];
        sr_ib_post_amo(ep, op, 1, op->expect, sr_ib_amo_next(op, op->expect), 0);
        return;
    }
    lane->outstanding--;
    if (sr_likely(!(op->kind & SR_IB_OP_REFUSED)))
        sr_ib_cq_give(ctx, lane->rail->dev);  /* a refused WR gave its entry back */
    SR_IB_COUNT(lane->n_completed, 1);
    if ((op->kind & SR_IB_OP_TYPE) == SR_IB_OP_COVER) {
        sr_ib_op_put(ctx, op);
        SR_IB_STORE(lane->sq_done, seq);
        return;
    }
    sr_tl_comp_t *comp = op->comp;
    if (sr_unlikely(!ok)) {
        if (wst == IBV_WC_WR_FLUSH_ERR && sr_ib_limbo_add(ep, lane, op)) {
            /* the repair says whether it was executed (repair.c) */
        } else if (comp == NULL) {
            sr_ib_replay_add(ep, op);
        } else {
            sr_ib_done_add(done, comp, sr_ib_fail_status(ep, op, wst));
            sr_ib_op_put(ctx, op);
        }
        SR_IB_STORE(lane->sq_done, seq);
        return;
    }
    if (comp == NULL) {
        sr_ib_op_put(ctx, op);
        SR_IB_STORE(lane->sq_done, seq);
        return;
    }
    if (op->amo_slot >= 0) {
        uint64_t res = ctx->amo_res[op->amo_slot];
        if (op->amo_loop) {
            __atomic_store_n(&ep->guess_raddr, op->raddr, __ATOMIC_RELAXED);
            __atomic_store_n(&ep->guess_val, sr_ib_amo_next(op, res), __ATOMIC_RELAXED);
        }
        if (op->amo_w32)
            res = (res >> op->amo_shift) & UINT64_C(0xffffffff);
        if (op->dst)
            *(uint64_t *)op->dst = res;
    } else if (op->dst && op->bounce >= 0) {
        sr_copy(op->dst, ctx->bounce + (size_t)op->bounce * ctx->bounce_len, op->len);
    }
    sr_ib_op_put(ctx, op);
    sr_ib_done_add(done, comp, SYMRAIL_OK);
    SR_IB_STORE(lane->sq_done, seq);
}

/* A completion covers every earlier WR of its QP; those completed without
 * error (a QP in error completes every WR, signalled or not, on its own). */
void sr_ib_complete_locked(sr_tl_ctx_t *ctx, struct ibv_wc *wc, sr_ib_done_t *done)
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
        if (lane->wc_err == 0)
            lane->wc_err = (int)wc->status;
    } else {
        /* Flushed before anything of ours failed or we broke the lane
         * ourselves: the QP went to error at its responder, which refused
         * a request of the peer's (a withdrawn rkey of ours, class C): the
         * peer's doing, so the lane stays offered while it is repaired, as
         * at the peer (seg.h, sr_ib_lane_weight), and a slice it flushed
         * can wait for it when no other lane is left. */
        if (!lane->down)
            lane->refused = 1;
        sr_ib_lane_fail(ep, lane, NULL);
    }
    sr_ib_op_t *x;
    do {
        x = lane->wq_head;
        lane->wq_head = x->next;
        if (lane->wq_head == NULL)
            lane->wq_tail = NULL;
        sr_ib_retire(ctx, x, x != op || ok, wc->status, done);
    } while (x != op);
}

/* One thread at a time polls a CQ and retires a batch of it; a second one
 * skips the CQ rather than wait.  The op a completion names stays in its
 * lane's wq until retired, so its lane can be read before its lock is
 * taken. */
int sr_ib_poll(sr_tl_ctx_t *ctx, sr_ib_done_t *done)
{
    struct ibv_wc wc[SR_IB_POLL_BATCH];
    int total = 0;
    for (int d = 0; d < ctx->ndevs; d++) {
        sr_ib_dev_t *dev = &ctx->devs[d];
        for (;;) {
            if (ctx->mt && __atomic_exchange_n(&dev->polling, 1, __ATOMIC_ACQUIRE))
                break;
            int n = ibv_poll_cq(dev->cq, SR_IB_POLL_BATCH, wc);
            for (int i = 0; i < n; i++) {
                SR_IB_TAKEOVER((void *)(uintptr_t)wc[i].wr_id);
                sr_ib_lane_t *lane = ((sr_ib_op_t *)(uintptr_t)wc[i].wr_id)->lane;
                int ok = wc[i].status == IBV_WC_SUCCESS;
                if (!ok)
                    sr_ib_lock(ctx, &ctx->flock);
                sr_ib_lock(ctx, &lane->lock);
                sr_ib_complete_locked(ctx, &wc[i], done);
                sr_ib_unlock(ctx, &lane->lock);
                if (!ok)
                    sr_ib_unlock(ctx, &ctx->flock);
            }
            if (ctx->mt)
                __atomic_store_n(&dev->polling, 0, __ATOMIC_RELEASE);
            if (n <= 0)
                break;
            total += n;
        }
    }
    return total;
}

void sr_ib_done_add(sr_ib_done_t *d, sr_tl_comp_t *comp, symrail_status_t status)
{
    if (sr_unlikely(d->n == d->cap)) {
        sr_ib_cb_t *v = malloc(2 * d->cap * sizeof(*v));
        if (v == NULL) {
            /* Out of memory: better a callback under a lock than none. */
            sr_error("verbs: out of memory: a completion callback runs under a lock");
            comp->cb(comp, status);
            return;
        }
        memcpy(v, d->v, d->n * sizeof(*v));
        if (d->v != d->inl)
            free(d->v);
        d->v = v;
        d->cap *= 2;
    }
    d->v[d->n++] = (sr_ib_cb_t){ comp, status };
}

int sr_ib_done_run(sr_ib_done_t *d)
{
    int n = (int)d->n;
    for (size_t i = 0; i < d->n; i++)
        d->v[i].comp->cb(d->v[i].comp, d->v[i].status);
    if (d->v != d->inl)
        free(d->v);
    sr_ib_done_init(d);
    return n;
}
