/*
 * RDMA verbs transport. Flush and replays: remote completion of the lanes
 * a flush names, and the puts of failed lanes posted again.
 *
 * A flush waits until every lane of its mask has retired (sq_done) the WRs
 * it had posted (sq_posted) when the flush began, and until no put that the
 * core had posted to one of those lanes waits in the replay list.  A put
 * replayed on another lane raises the target of the flushes that wait for
 * its first lane, on the lane it now goes on, and so does a flush of that
 * lane that begins later (lane->replay_orig); a put lost for good is
 * reported by the next flush of its first lane.  Lanes outside the mask are
 * never waited for, so one context's quiet does not wait for another's.
 * Everything here runs under ctx->flock (ib.h, "Threads").
 */
#include "config.h"
#include "tl/verbs/ib.h"

/* Puts of the lanes in `orig` went out again on lane l (flock and its lock
 * held, posted): the flushes of those lanes wait for them too, those under
 * way and those that begin later (lane->replay_orig). */
void sr_ib_replayed(sr_tl_ep_t *ep, int l, uint32_t orig)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    uint64_t posted = lane->sq_posted;
    if (SR_IB_LOAD(lane->sq_done) >= lane->replay_seq)
        lane->replay_orig = 0;
    lane->replay_orig |= orig;
    lane->replay_seq = posted;
    for (sr_ib_flush_t *f = ep->ctx->flushes; f; f = f->next)
        if (f->ep == ep && (f->lanes & orig) && f->target[l] < posted)
            f->target[l] = posted;
}

/* Posts the puts of failed lanes again, in order, on one lane that is up. */
static void sr_ib_replay(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    int alive = 0;
    for (int l = 0; l < ep->nlanes && ep->replay_head; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        sr_ib_lock(ctx, &lane->lock);
        alive |= lane->state != SR_IB_LANE_DEAD;
        if (lane->down) {
            sr_ib_unlock(ctx, &lane->lock);
            continue;
        }
        uint32_t orig = 0;
        while (ep->replay_head && sr_ib_room(ep, lane)) {
            sr_ib_op_t *op = ep->replay_head;
            SR_IB_STORE(ep->replay_head, op->next);
            if (ep->replay_head == NULL)
                ep->replay_tail = NULL;
            op->kind = SR_IB_OP_DATA;
            op->must_sig = ep->replay_head == NULL;
            orig |= 1u << op->orig;
            sr_ib_replay_wr(ep, lane, op);
            SR_IB_COUNT(ctx->n_replayed, 1);
        }
        sr_ib_post_lane(ep, lane);
        sr_ib_replayed(ep, l, orig);
        sr_ib_unlock(ctx, &lane->lock);
        break;
    }
    if (ep->replay_head && !alive) {
        /* Beyond repair: the next flush of their lanes says so. */
        sr_ib_op_t *op = ep->replay_head;
        if (ep->late_err == SYMRAIL_OK) {
            ep->late_err = SR_IB_LOAD(ep->gone) ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_ERR_TRANSPORT;
            snprintf(ep->late_why, sizeof(ep->late_why),
                     "a put of %zu bytes to PE %d that had completed locally was lost with QP "
                     "%u on %s:%d, and no lane is left to send it again", op->len, ep->pe,
                     op->fail_qpn, ctx->rails[op->fail_rail].dev->name,
                     ctx->rails[op->fail_rail].port);
            sr_error("verbs: %s", ep->late_why);
        }
        while ((op = ep->replay_head)) {
            SR_IB_STORE(ep->replay_head, op->next);
            ep->late_lanes |= 1u << op->orig;
            sr_ib_lane_t *lane = op->lane;
            sr_ib_lock(ctx, &lane->lock);
            sr_ib_op_put(ctx, op);
            sr_ib_unlock(ctx, &lane->lock);
        }
        ep->replay_tail = NULL;
    }
}

static int sr_ib_flushed(sr_tl_ep_t *ep, uint32_t lanes, const uint64_t *target)
{
    for (sr_ib_op_t *op = ep->replay_head; op; op = op->next)
        if (lanes >> op->orig & 1)
            return 0;
    if (sr_unlikely(sr_ib_limbo_holds(ep, lanes)))
        return 0;
    for (int l = 0; l < ep->nlanes; l++)
        if (target[l] && SR_IB_LOAD(ep->lanes[l].sq_done) < target[l])
            return 0;
    return 1;
}

/* The error a put posted to one of `lanes` met after it completed locally. */
static symrail_status_t sr_ib_late_err(sr_tl_ep_t *ep, uint32_t lanes)
{
    if (sr_likely(!(ep->late_lanes & lanes)))
        return SYMRAIL_OK;
    symrail_status_t st = ep->late_err;
    ep->late_lanes &= ~lanes;
    if (ep->late_lanes == 0)
        ep->late_err = SYMRAIL_OK;
    return st;
}

symrail_status_t sr_ib_flush(sr_tl_ep_t *ep, uint32_t lanes, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    uint64_t target[SR_TL_MAX_LANES] = { 0 };
    symrail_status_t st = SR_TL_INPROGRESS;
    sr_ib_ep_post_end(ep);
    sr_ib_lock(ctx, &ctx->flock);
    if (ep->replay_head)
        sr_ib_replay(ep);
    for (int l = 0; l < ep->nlanes; l++) {
        if (!(lanes & (1u << l)))
            continue;
        /* Under the lane lock: a chain another thread is posting for us
         * has its numbers, or is still held and goes out now. */
        sr_ib_lane_t *lane = &ep->lanes[l];
        sr_ib_lock(ctx, &lane->lock);
        sr_ib_post_lane(ep, lane);
        target[l] = lane->sq_posted;
        sr_ib_unlock(ctx, &lane->lock);
    }
    /* Puts of our lanes that went out again on another one. */
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        if ((lane->replay_orig & lanes) && target[l] < lane->replay_seq &&
            SR_IB_LOAD(lane->sq_done) < lane->replay_seq)
            target[l] = lane->replay_seq;
    }
    if (sr_ib_flushed(ep, lanes, target)) {
        st = sr_ib_late_err(ep, lanes);
        goto out;
    }
    sr_ib_flush_t *f = malloc(sizeof(*f));
    if (f == NULL) {
        st = SYMRAIL_ERR_NOMEM;
        goto out;
    }
    f->ep = ep;
    f->comp = comp;
    f->lanes = lanes;
    memcpy(f->target, target, sizeof(target));
    f->next = ctx->flushes;
    SR_IB_STORE(ctx->flushes, f);
    for (int l = 0; l < ep->nlanes; l++)
        if (SR_IB_LOAD(ep->lanes[l].sq_done) < target[l])
            sr_ib_cover(ep, &ep->lanes[l]);
out:
    sr_ib_unlock(ctx, &ctx->flock);
    return st;
}

/* Work requests the QP never took complete as flushed, after those it took. */
static void sr_ib_unposted(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, sr_ib_done_t *done)
{
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        sr_ib_lock(ctx, &lane->lock);
        while (lane->wq_head && (lane->wq_head->kind & SR_IB_OP_REFUSED)) {
            struct ibv_wc wc = { .wr_id = (uintptr_t)lane->wq_head,
                                 .status = IBV_WC_WR_FLUSH_ERR };
            sr_ib_complete_locked(ctx, &wc, done);
        }
        sr_ib_unlock(ctx, &lane->lock);
    }
}

/* From progress, after the CQs were polled; another thread in here already
 * does the work. */
int sr_ib_rma_progress(sr_tl_ctx_t *ctx, sr_ib_done_t *done)
{
    int n = 0;
    sr_ib_post_held(ctx);
    int repl = SR_IB_LOAD(ctx->replays) || SR_IB_LOAD(ctx->repairs_pending);
    if (sr_likely(!repl && SR_IB_LOAD(ctx->flushes) == NULL))
        return 0;
    if (!sr_ib_trylock(ctx, &ctx->flock))
        return 0;
    if (sr_unlikely(repl)) {
        int more = 0;
        SR_IB_STORE(ctx->replays, 0);
        for (int pe = 0; pe < ctx->neps; pe++) {
            sr_tl_ep_t *ep = SR_IB_LOAD(ctx->eps[pe]);
            if (ep == NULL)
                continue;
            sr_ib_unposted(ctx, ep, done);
            if (ep->replay_head)
                sr_ib_replay(ep);
            more |= ep->replay_head != NULL;
            more |= sr_ib_limbo_run(ctx, ep, done);
        }
        if (more)
            SR_IB_STORE(ctx->replays, 1);
    }
    for (sr_ib_flush_t **pf = &ctx->flushes; *pf;) {
        sr_ib_flush_t *f = *pf;
        if (!sr_ib_flushed(f->ep, f->lanes, f->target)) {
            for (int l = 0; l < f->ep->nlanes; l++) {
                sr_ib_lane_t *lane = &f->ep->lanes[l];
                if (SR_IB_LOAD(lane->sq_done) < f->target[l] &&
                    SR_IB_LOAD(lane->sig_seq) < f->target[l])
                    sr_ib_cover(f->ep, lane);
            }
            pf = &f->next;
            continue;
        }
        SR_IB_STORE(*pf, f->next);
        sr_ib_done_add(done, f->comp, sr_ib_late_err(f->ep, f->lanes));
        free(f);
        n++;
    }
    sr_ib_unlock(ctx, &ctx->flock);
    return n;
}
