/*
 * RDMA verbs transport. Data path: room checks, posting puts, gets and
 * atomics (chained and selectively signalled); completions are in comp.c.
 *
 * A put to the heap or data sent inline or from a bounce buffer completes
 * at post (the source may be reused at once); the op keeps the data (its
 * inline copy or the bounce buffer) until a completion covers it, so that
 * it can be posted again on another lane should its QP fail.  Only some work requests are
 * signalled: atomics, every sig_every-th of a QP, the last of a chain (so
 * zero-copy puts and gets, which need a callback, are covered by the
 * completion of their chain's last WR), and one that takes the
 * last slot of its send queue, of its CQ or of the bounce buffers, so that a
 * full resource always has a completion on its way that frees some of it.
 * A completion covers every earlier work request of its QP.
 *
 * Every post runs under its lane's lock (ib.h, "Threads"); completions are
 * retired under it too, their callbacks collected and called later.
 */
#include "config.h"
#include "tl/verbs/ib.h"
#include "util/atomic.h"

#include <stddef.h>

/* ---- posting --------------------------------------------------------------------- */

/* Takes the send-queue slot of one WR (room checked, CQ entry reserved). */
static inline void sr_ib_take(sr_tl_ctx_t *ctx, sr_ib_lane_t *lane, sr_ib_op_t *op)
{
    sr_ib_dev_t *dev = lane->rail->dev;
    lane->outstanding++;
    if (lane->outstanding >= lane->max_wr || sr_ib_cq_used(ctx, dev) >= dev->cq_size ||
        (op->bounce >= 0 && SR_IB_LOAD(ctx->bounce_free) == 0))
        op->must_sig = 1;
}

/* A post that the QP refused (rc 0: work queued behind such a post): what
 * it did not take completes as flushed from progress, after whatever it did
 * take (see sr_ib_rma_progress). */
static void sr_ib_post_failed(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *bad, int rc)
{
    if (rc != 0)
        sr_error("verbs: ibv_post_send on QP %u to PE %d failed: %s", lane->qp->qp_num, ep->pe,
                 strerror(rc));
    /* Never reached the QP, and will take none of its CQ: their entries
     * go back now (sr_ib_retire gives none for them), so that a write
     * that drains the lane finds one (sr_ib_drain_cover). */
    for (sr_ib_op_t *op = bad; op; op = op->next) {
        op->kind |= SR_IB_OP_REFUSED;
        sr_ib_cq_give(ep->ctx, lane->rail->dev);
    }
    SR_IB_STORE(ep->ctx->repairs_pending, 1);
    sr_ib_lane_fail(ep, lane, "post failed");
}

/* Posts the lane's held WRs as one chain. */
void sr_ib_post_lane(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    sr_ib_op_t *first = lane->hold_head, *last = lane->hold_tail;
    if (first == NULL)
        return;
    SR_IB_STORE(lane->hold_head, NULL);
    lane->hold_tail = NULL;
    uint32_t n = 0, psn = lane->psn;
    uint64_t seq = lane->sq_posted;
    for (sr_ib_op_t *op = first; op; op = op->next) {
        /* The PSNs RC gives it (limbo.c, "Work caught in a failure"). */
        op->psn = psn & 0xffffff;
        psn += op->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
                       op->wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || op->wr.num_sge == 0 ||
                       op->sge.length == 0
                   ? 1 : ((op->sge.length - 1) >> lane->mtu_shift) + 1;
        op->psn_next = psn & 0xffffff;
        /* A WR with a callback (a zero-copy put, a get) in the middle of
         * the chain is covered by the last one's completion, which comes
         * as soon: only the last of a chain calls for one of its own. */
        int sig = op->must_sig || (op->comp != NULL && op == last) || op->amo_slot >= 0 ||
                  op->kind != SR_IB_OP_DATA || lane->unsig + 1 >= lane->sig_every ||
                  (op == last && op != first);
        op->seq = ++seq;
        op->wr.wr_id = (uintptr_t)op;
        op->wr.send_flags = (op->wr.send_flags & ~(unsigned)IBV_SEND_SIGNALED) |
                            (sig ? IBV_SEND_SIGNALED : 0);
        op->wr.next = op->next ? &op->next->wr : NULL;
        SR_IB_HANDOFF(op);
        if (sig) {
            lane->unsig = 0;
            SR_IB_STORE(lane->sig_seq, op->seq);
        } else {
            lane->unsig++;
        }
        n++;
    }
    SR_IB_STORE(lane->sq_posted, seq);
    lane->psn = psn & 0xffffff;
    sr_ib_op_t *tail = lane->wq_tail;
    if (tail)
        tail->next = first;
    else
        lane->wq_head = first;
    lane->wq_tail = last;
    if (sr_unlikely(tail && (tail->kind & SR_IB_OP_REFUSED))) {
        /* Behind WRs the QP refused, which complete as flushed once what it
         * took has: a completion of a WR posted now would retire them as
         * done (a get among them called back with no bytes).  The lane is
         * down already; these go with them. */
        sr_ib_post_failed(ep, lane, first, 0);
        return;
    }
    struct ibv_send_wr *bad = NULL;
    int rc = ibv_post_send(lane->qp, &first->wr, &bad);
    SR_IB_COUNT(lane->n_posted, n);
    if (sr_unlikely(rc != 0))
        sr_ib_post_failed(ep, lane, bad ? (sr_ib_op_t *)(uintptr_t)bad->wr_id : first, rc);
}

/* Another thread may be posting this endpoint's held chains at the same
 * time: whoever clears ep->held posts what the lanes hold then; a lane
 * whose hold list is seen empty has nothing of ours (a flush that must
 * know takes the lane lock, see flush.c). */
void sr_ib_ep_post_end(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (!sr_ib_flag_take(ctx, &ep->held))
        return;
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        if (SR_IB_LOAD(lane->hold_head) == NULL)
            continue;
        sr_ib_lock(ctx, &lane->lock);
        sr_ib_post_lane(ep, lane);
        sr_ib_unlock(ctx, &lane->lock);
    }
}

void sr_ib_post_held(sr_tl_ctx_t *ctx)
{
    if (!sr_ib_flag_take(ctx, &ctx->held))
        return;
    for (int pe = 0; pe < ctx->neps; pe++) {
        sr_tl_ep_t *ep = SR_IB_LOAD(ctx->eps[pe]);
        if (ep)
            sr_ib_ep_post_end(ep);
    }
}

/* Queues op on lane behind what it holds. */
static inline void sr_ib_hold(sr_ib_lane_t *lane, sr_ib_op_t *op)
{
    op->next = NULL;
    if (lane->hold_tail)
        lane->hold_tail->next = op;
    else
        SR_IB_STORE(lane->hold_head, op);
    lane->hold_tail = op;
}

/* Queues op; posts the lot unless more of the same transfer follows. */
static void sr_ib_enqueue(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op, int more)
{
    sr_ib_hold(lane, op);
    if (more) {
        /* Stored even when already set: a thread that clears the flag and
         * then reads the hold lists must find this op, or leave the flag
         * set for our own ep_post_end. */
        SR_IB_STORE(ep->held, 1);
        SR_IB_STORE(ep->ctx->held, 1);
    } else {
        sr_ib_post_lane(ep, lane);
    }
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
    /* Checked at the first post; a put posted again is on the heap or data. */
    (void)sr_ib_remote(ep, rail, op->region, op->roff, &op->wr.wr.rdma.remote_addr,
                       &op->wr.wr.rdma.rkey);
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

/* A put of a failed lane goes on `lane` (its lock held, room checked): held
 * until the caller posts the lane. */
void sr_ib_replay_wr(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op)
{
    sr_ib_local_wr(ep, lane, op);
    sr_ib_take(ep->ctx, lane, op);
    sr_ib_hold(lane, op);
}

/* A WR its QP's failure caught and that must go again (repair.c): on its
 * lane, repaired, as it was, behind the others of its lane caught with it
 * and ahead of what the lane held since (newer, whatever posted it); held
 * until the caller posts the lane. */
void sr_ib_replay_same(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op,
                       sr_ib_op_t **after_p)
{
    op->kind = SR_IB_OP_DATA;
    op->must_sig = 1;  /* rare: a completion of its own, for the flushes that wait */
    sr_ib_take(ep->ctx, lane, op);
    sr_ib_op_t **pp = *after_p ? &(*after_p)->next : &lane->hold_head;
    op->next = *pp;
    SR_IB_STORE(*pp, op);
    if (op->next == NULL)
        lane->hold_tail = op;
    *after_p = op;
}

/* The test fault hook breaks the QP just before a data WR goes in: the WR
 * comes back flushed, certainly not executed, and goes again once the lane
 * is repaired (limbo.c, "Work caught in a failure"); meanwhile new slices
 * take the other lanes. */
static inline void sr_ib_fault_hook(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    lane->posted++;
    int f = SR_IB_LOAD(ctx->fault_lane);
    if (sr_unlikely(f >= 0 && &ep->lanes[f] == lane && lane->posted >= ctx->fault_after &&
                    __atomic_compare_exchange_n(&ctx->fault_lane, &f, -1, 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_RELAXED)))
        sr_ib_lane_fail(ep, lane, "test fault hook (SYMRAIL_IB_FAULT_QP_ERROR)");
}

/* Lane lock held; SYMRAIL_ERR_AGAIN: the caller posts what is held. */
static symrail_status_t sr_ib_rdma_locked(sr_tl_ep_t *ep, sr_ib_lane_t *lane, int lane_idx,
                                          int is_put, void *local, uint32_t region,
                                          uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    /* A segment's puts complete when they are applied, never at post: a
     * refusal of its rkey is then that slice's status (SYMRAIL_ERR_STALE),
     * and nothing of it is posted again on another lane. */
    int seg = region >= SR_TL_REGION_SEG0;
    if (sr_unlikely(seg)) {
        uint64_t raddr;
        uint32_t rkey;
        symrail_status_t st = sr_ib_remote(ep, 0, region, roff, &raddr, &rkey);
        if (st != SYMRAIL_OK)
            return st;
    }
    /* Nothing was posted: safe to take elsewhere, or here once repaired. */
    symrail_status_t open = sr_ib_lane_open(lane);
    if (sr_unlikely(open != SYMRAIL_OK))
        return open;
    if (!sr_ib_room(ep, lane))
        return SYMRAIL_ERR_AGAIN;
    sr_ib_op_t *op = sr_ib_op_get(ctx, lane);
    if (op == NULL) {
        sr_ib_cq_give(ctx, lane->rail->dev);
        return SYMRAIL_ERR_NOMEM;
    }
    uint32_t lkey = 0;
    int inl = is_put && (int)len <= __atomic_load_n(&ctx->max_inline, __ATOMIC_RELAXED) &&
              len <= SR_IB_INLINE_MAX;
    op->ep = ep;
    op->len = len;
    op->region = region;
    op->roff = roff;
    op->orig = lane_idx;
    int more = comp && (comp->flags & SR_TL_COMP_MORE);
    if (inl) {
        /* Copied now: the caller's buffer is free at once. */
        memcpy(op->inl, local, len);
        op->comp = seg ? comp : NULL;
        sr_ib_rdma_wr(ep, lane, op, 1, op->inl, 0, 1);
    } else if (sr_ib_lkey(ctx, lane->rail->dev, local, len, &lkey)) {
        op->comp = comp;  /* zero-copy: the buffer is ours until the completion */
        sr_ib_rdma_wr(ep, lane, op, is_put, local, lkey, 0);
    } else if (ctx->rcache != NULL && comp != NULL && len >= ctx->zcopy_thresh &&
               sr_ib_rc_lkey(ctx, lane->rail->dev, local, len, &op->rc_ent, &lkey)) {
        op->comp = comp;  /* private memory in place (rcache.c), as above */
        sr_ib_rdma_wr(ep, lane, op, is_put, local, lkey, 0);
    } else {
        /* Private memory: stage through a registered bounce buffer. */
        if (len > ctx->bounce_len || (op->bounce = sr_ib_bit_take(ctx, &ctx->bounce_free)) < 0) {
            sr_ib_op_put(ctx, op);
            sr_ib_cq_give(ctx, lane->rail->dev);
            return len > ctx->bounce_len ? SYMRAIL_ERR_INVALID : SYMRAIL_ERR_AGAIN;
        }
        char *addr = ctx->bounce + (size_t)op->bounce * ctx->bounce_len;
        if (is_put) {
            sr_copy(addr, local, len);
            op->comp = seg ? comp : NULL;
        } else {
            op->dst = local;
            op->comp = comp;
        }
        sr_ib_rdma_wr(ep, lane, op, is_put, addr, lane->rail->dev->scratch_mr->lkey, 0);
    }
    sr_ib_take(ctx, lane, op);
    sr_ib_fault_hook(ep, lane);
    SR_IB_COUNT(lane->bytes, len);
    SR_IB_COUNT(lane->slices, 1);
    symrail_status_t st = op->comp ? SR_TL_INPROGRESS : SYMRAIL_OK;
    sr_ib_enqueue(ep, lane, op, more);
    return st;
}

static symrail_status_t sr_ib_rdma(sr_tl_ep_t *ep, int lane_idx, int is_put, void *local,
                                   uint32_t region, uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[lane_idx];
    sr_ib_lock(ctx, &lane->lock);
    symrail_status_t st = sr_ib_rdma_locked(ep, lane, lane_idx, is_put, local, region, roff,
                                            len, comp);
    sr_ib_unlock(ctx, &lane->lock);
    /* No room now: what is held goes out first, so that its completions come. */
    if (sr_unlikely(st == SYMRAIL_ERR_AGAIN))
        sr_ib_ep_post_end(ep);
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

/* Lane lock held; `take`: the op has no send-queue slot yet (a retry of a
 * compare-swap loop keeps the one it had). */
void sr_ib_post_amo(sr_tl_ep_t *ep, sr_ib_op_t *op, int cswap, uint64_t compare,
                    uint64_t operand, int take)
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
    if (take)
        sr_ib_take(ctx, lane, op);
    sr_ib_enqueue(ep, lane, op, 0);
}

/*
 * The device has 64-bit fetch-add and compare-swap only.  Everything else is
 * a compare-swap loop on the aligned 8-byte word that holds the target: from
 * a guess of the word, swap in what the operation makes of it; a wrong guess
 * comes back with the word's value, the next guess.  So each update is one
 * NIC atomic on the whole word, atomic with the peers' NIC atomics on it,
 * and a 4-byte operation writes its neighbour's bytes back as they were.
 * A loop that fails in flight fails the operation (it may have been
 * applied): it is never started over.
 */
uint64_t sr_ib_amo_next(const sr_ib_op_t *op, uint64_t word)
{
    unsigned sh = op->amo_shift;
    uint64_t mask = op->amo_w32 ? UINT64_C(0xffffffff) : UINT64_MAX;
    uint64_t cur = (word >> sh) & mask;
    uint64_t v = sr_amo_value((int)op->amo_kind, cur, op->operand, op->compare & mask);
    return (word & ~(mask << sh)) | ((v & mask) << sh);
}

static symrail_status_t sr_ib_atomic_locked(sr_tl_ep_t *ep, sr_ib_lane_t *lane, int lane_idx,
                                            sr_tl_amo_t op_kind, uint32_t region, uint64_t roff,
                                            uint64_t operand, uint64_t compare,
                                            uint64_t *result_p, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    uint64_t raddr;
    uint32_t rkey;
    symrail_status_t st = sr_ib_remote(ep, (int)(lane->rail - ctx->rails), region,
                                       roff & ~(uint64_t)7, &raddr, &rkey);
    if (sr_unlikely(st != SYMRAIL_OK))
        return st;
    st = sr_ib_lane_open(lane);
    if (sr_unlikely(st != SYMRAIL_OK))
        return st;
    if ((unsigned)op_kind >= SR_TL_AMO_NKINDS)
        return SYMRAIL_ERR_UNSUPPORTED;
    if (!sr_ib_room(ep, lane))
        return SYMRAIL_ERR_AGAIN;
    int slot = sr_ib_bit_take(ctx, &ctx->amo_free);
    sr_ib_op_t *op = slot < 0 ? NULL : sr_ib_op_get(ctx, lane);
    if (op == NULL) {
        if (slot >= 0)
            sr_ib_bit_give(ctx, &ctx->amo_free, slot);
        sr_ib_cq_give(ctx, lane->rail->dev);
        return slot < 0 ? SYMRAIL_ERR_AGAIN : SYMRAIL_ERR_NOMEM;
    }
    sr_tl_amo_t kind = SR_TL_AMO_KIND(op_kind);
    int w32 = (op_kind & SR_TL_AMO_W32) != 0;
    /* The 4 bytes at roff within their 8-byte word, in the host's order. */
    unsigned shift = w32 ? (unsigned)(roff & 4) * 8 : 0;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    shift = w32 ? 32 - shift : 0;
#endif
    op->amo_slot = slot;
    op->comp = comp;
    op->ep = ep;
    op->orig = lane_idx;
    op->dst = result_p;
    op->region = region;
    op->raddr = raddr;
    op->rkey = rkey;
    op->amo_kind = (uint8_t)kind;
    op->amo_w32 = (uint8_t)w32;
    op->amo_shift = (uint8_t)shift;
    if (kind == SR_TL_AMO_FETCH) {
        sr_ib_post_amo(ep, op, 0, 0, 0, 1);
    } else if (kind == SR_TL_AMO_ADD && (!w32 || shift == 32)) {
        /* The high half's carry leaves the word: fetch-add is exact there. */
        sr_ib_post_amo(ep, op, 0, 0, w32 ? operand << 32 : operand, 1);
    } else if (kind == SR_TL_AMO_CSWAP && !w32) {
        sr_ib_post_amo(ep, op, 1, compare, operand, 1);
    } else {
        /* The guess is a hint (the last word we wrote there): another lane
         * may change it under us. */
        op->amo_loop = 1;
        op->operand = operand;
        op->compare = compare;
        op->expect = __atomic_load_n(&ep->guess_raddr, __ATOMIC_RELAXED) == op->raddr
                         ? __atomic_load_n(&ep->guess_val, __ATOMIC_RELAXED) : 0;
        sr_ib_post_amo(ep, op, 1, op->expect, sr_ib_amo_next(op, op->expect), 1);
    }
    return SR_TL_INPROGRESS;
}

symrail_status_t sr_ib_atomic(sr_tl_ep_t *ep, int lane_idx, sr_tl_amo_t op_kind,
                              uint32_t region, uint64_t roff, uint64_t operand,
                              uint64_t compare, uint64_t *result_p, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[lane_idx];
    sr_ib_lock(ctx, &lane->lock);
    symrail_status_t st = sr_ib_atomic_locked(ep, lane, lane_idx, op_kind, region, roff,
                                              operand, compare, result_p, comp);
    sr_ib_unlock(ctx, &lane->lock);
    if (sr_unlikely(st == SYMRAIL_ERR_AGAIN))
        sr_ib_ep_post_end(ep);
    return st;
}

/*
 * A lane broken from outside (the peer's word, its responder's refusal, a
 * post that failed) may owe nothing but unsignalled WRs that its QP
 * executed before the error: no completion ever comes for those, and the
 * lane would never drain (nor be repaired, nor a flush of it end).  A
 * signalled zero-length write behind the last WR the QP took, posted to
 * the QP in error, comes back flushed and retires them (comp.c: a
 * completion covers the WRs before it); it goes ahead of any the QP never
 * took, which complete as flushed after it (flush.c, sr_ib_unposted), as
 * does work posted since (sr_ib_post_lane).  Lane lock held; again on the
 * next repair pass when there is no room.
 */
void sr_ib_drain_cover(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_op_t *last = NULL;
    if (lane->qp == NULL)
        return;
    uint32_t unposted = 0;
    for (sr_ib_op_t *x = lane->wq_head; x; x = x->next) {
        if (x->kind & SR_IB_OP_REFUSED)
            unposted++;
        else if (!unposted)
            last = x;
    }
    if (last == NULL || (last->wr.send_flags & IBV_SEND_SIGNALED))
        return;
    /* What the QP never took holds no slot of it (its CQ entries went back
     * at the refusal): it may have taken the slot whose WR was to be
     * signalled. */
    lane->outstanding -= unposted;
    int room = sr_ib_room(ep, lane);
    lane->outstanding += unposted;
    if (!room)
        return;
    sr_ib_op_t *op = sr_ib_op_get(ctx, lane);
    if (op == NULL) {
        sr_ib_cq_give(ctx, lane->rail->dev);
        return;
    }
    op->ep = ep;
    op->kind = SR_IB_OP_COVER;
    op->seq = last->seq;  /* it retires no further than the WRs before it */
    op->wr = (struct ibv_send_wr){ .wr_id = (uintptr_t)op, .num_sge = 0,
                                   .opcode = IBV_WR_RDMA_WRITE,
                                   .send_flags = IBV_SEND_SIGNALED };
    op->wr.wr.rdma.remote_addr = ep->raddr[0];
    op->wr.wr.rdma.rkey = ep->rkey[lane->rail - ctx->rails][0];
    struct ibv_send_wr *bad = NULL;
    SR_IB_HANDOFF(op);
    if (ibv_post_send(lane->qp, &op->wr, &bad) != 0) {
        sr_ib_op_put(ctx, op);
        sr_ib_cq_give(ctx, lane->rail->dev);
        return;
    }
    lane->outstanding++;
    op->next = last->next;
    last->next = op;
    if (lane->wq_tail == last)
        lane->wq_tail = op;
}

/* A signalled zero-length write at the end of lane, so that a flush never
 * waits on an unsignalled tail; 0 while there is no room for it (a
 * completion that frees some is on its way then).  A lane that is down
 * needs none: its QP completes every WR it holds, as flushed. */
int sr_ib_cover(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    int ok = 1;
    sr_ib_lock(ctx, &lane->lock);
    sr_ib_post_lane(ep, lane);
    if (lane->sig_seq >= lane->sq_posted || lane->down)
        goto out;
    if (!sr_ib_room(ep, lane)) {
        ok = 0;
        goto out;
    }
    sr_ib_op_t *op = sr_ib_op_get(ctx, lane);
    if (op == NULL) {
        sr_ib_cq_give(ctx, lane->rail->dev);
        ok = 0;
        goto out;
    }
    op->ep = ep;
    op->kind = SR_IB_OP_COVER;
    op->wr = (struct ibv_send_wr){ .num_sge = 0, .opcode = IBV_WR_RDMA_WRITE };
    op->wr.wr.rdma.remote_addr = ep->raddr[0];
    op->wr.wr.rdma.rkey = ep->rkey[lane->rail - ctx->rails][0];
    sr_ib_take(ctx, lane, op);
    sr_ib_enqueue(ep, lane, op, 0);
out:
    sr_ib_unlock(ctx, &lane->lock);
    return ok;
}
