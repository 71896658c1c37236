/*
 * RDMA verbs transport. The work a QP failure caught: whether the peer
 * executed it, and what goes again (the limbo of a lane under repair).
 */
#include "config.h"
#include "tl/verbs/ib.h"

/*
 * ---- Work caught in a failure ------------------------------------------------------------
 *
 * A QP in error completes what it holds as IBV_WC_WR_FLUSH_ERR, and that
 * alone does not say whether the peer executed it:
 *  - RC applies requests at the responder in PSN order, and the
 *    responder's expected PSN moves past a request only once it has
 *    executed it.  A responder that refuses a request (a withdrawn rkey:
 *    a remote access error, of the IBA's class C; rxe NAKs it and puts its
 *    own QP in error) executes neither it nor anything later on that QP.  At the PE whose request was refused, the NAK acknowledges
 *    everything before it, and every later request was not executed.
 *  - At the other PE (the owner of the withdrawn key), the QP went to
 *    error because its responder refused the peer's request, and its own
 *    requests in flight complete flushed whether or not the peer executed
 *    them: a request that left before the error reached a responder that
 *    kept working until the NAK reached it, and the response was dropped
 *    by our QP in error.  Here the flush says nothing.
 * Both ends are decided alike by the peer's responder: a QP in the error
 * state executes nothing more, so once drained its receive PSN
 * (ibv_query_qp, IBV_QP_RQ_PSN; rxe reports the next PSN its responder
 * expects) is final: every request before it was executed, none at or
 * after it (a retransmitted duplicate of an executed request is answered
 * from the responder's record, not executed again).  Each PE reads its old
 * QP's before destroying it and sends it with RECONNECT or ACK; each WR's
 * PSNs are counted at post (sr_ib_post_lane) from the sq_psn the QP started
 * with, as RC assigns them: a WRITE one per path-MTU packet (at least one),
 * a READ request one per response packet, an atomic one.
 *
 * So the flushed WRs of a lane wait, in post order, for that PSN (its
 * limbo); then a write wholly before it landed and is done; an atomic
 * before it was applied and its result went with the response: a fetch
 * (which changes nothing) is read again, one that wants no result and is a
 * single device atomic (not a compare-swap loop, whose outcome we cannot
 * tell) is done, and the others, which going again would apply twice, end
 * with SYMRAIL_ERR_RESULT_LOST: applied once (a loop: at most once), the
 * old value unknown;
 * everything else
 * (not executed, a write only partly, a read whose data was lost) goes
 * again, in the same order, on the same lane once it is repaired, so that
 * what a lane orders (a put and the signal behind it, a fence) stays in
 * order.  A put that completed at post keeps the flushes of its lane
 * waiting meanwhile.  Without the PSN (the query failed), with a lane
 * beyond repair, a peer that stops answering (a retry-exceeded error: the
 * flush may be all we ever hear) or no answer in half of SYMRAIL_OP_TIMEOUT
 * (ctx->limbo_ns: the fallback is then done before the core gives up), all fails
 * as it did before: puts completed at post go out on another lane
 * (flush.c), the others end with an error (the core retries puts and gets).
 */
enum { SR_IB_FATE_UNKNOWN = 0, SR_IB_FATE_REPLAY, SR_IB_FATE_DONE, SR_IB_FATE_LOST,
       SR_IB_FATE_FAIL };

static inline int sr_ib_psn_before(uint32_t a, uint32_t b)
{
    uint32_t d = (b - a) & 0xffffff;
    return d != 0 && d < 0x800000;
}

/* The drained QP's receive PSN, before it goes (lane lock held). */
void sr_ib_old_rq_psn(sr_ib_lane_t *lane)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    lane->rq_psn_ok = ibv_query_qp(lane->qp, &a, IBV_QP_STATE | IBV_QP_RQ_PSN, &ia) == 0 &&
                      a.qp_state == IBV_QPS_ERR;
    lane->rq_psn = lane->rq_psn_ok ? a.rq_psn & 0xffffff : 0;
    if (!lane->rq_psn_ok)
        sr_warn("verbs: QP %u: its receive PSN is unknown: the peer's work its failure caught "
                "fails", lane->qp->qp_num);
}

void sr_ib_lane_connected(sr_ib_lane_t *lane, const sr_ib_rail_addr_t *ra)
{
    uint32_t mtu = lane->rail->mtu < ra->mtu ? lane->rail->mtu : ra->mtu;
    lane->mtu_shift = 7 + mtu;  /* IBV_MTU_256 is 1 */
    lane->psn = sr_ib_psn(lane->qp->qp_num);
}

int sr_ib_limbo_add(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op)
{
    if (lane->state == SR_IB_LANE_DEAD || lane->wc_err == IBV_WC_RETRY_EXC_ERR)
        return 0;
    sr_ib_rseg_t *rs = op->region >= SR_TL_REGION_SEG0 ? sr_ib_rseg(ep, op->region) : NULL;
    if (rs && SR_IB_LOAD(rs->state) == SR_IB_RSEG_DEAD)
        return 0;  /* behind the refused one: stale, like it */
    op->fate = SR_IB_FATE_UNKNOWN;
    op->next = NULL;
    if (lane->limbo_tail) {
        lane->limbo_tail->next = op;
    } else {
        lane->limbo_head = op;
        lane->limbo_since = sr_time_ns();
    }
    lane->limbo_tail = op;
    return 1;
}

void sr_ib_limbo_sort(sr_tl_ep_t *ep, sr_ib_lane_t *lane, int known, uint32_t psn)
{
    if (lane->limbo_head == NULL)
        return;
    for (sr_ib_op_t *op = lane->limbo_head; op; op = op->next) {
        if (op->fate != SR_IB_FATE_UNKNOWN)
            continue;  /* sorted in an earlier outage, not posted since */
        int atomic = op->amo_slot >= 0, read = op->wr.opcode == IBV_WR_RDMA_READ;
        if (!known)
            op->fate = SR_IB_FATE_FAIL;
        else if (!sr_ib_psn_before(op->psn, psn))
            op->fate = SR_IB_FATE_REPLAY;  /* not executed */
        else if (atomic && op->amo_kind == SR_TL_AMO_FETCH)
            op->fate = SR_IB_FATE_REPLAY;  /* changes nothing: read again */
        else if (atomic)
            op->fate = op->dst == NULL && !op->amo_loop ? SR_IB_FATE_DONE : SR_IB_FATE_LOST;
        else if (!read && !sr_ib_psn_before(psn, op->psn_next))
            op->fate = SR_IB_FATE_DONE;    /* a write wholly landed */
        else
            op->fate = SR_IB_FATE_REPLAY;  /* a read, or a write only partly */
    }
    SR_IB_STORE(ep->ctx->replays, 1);
}

int sr_ib_limbo_holds(const sr_tl_ep_t *ep, uint32_t lanes)
{
    for (int l = 0; l < ep->nlanes; l++)
        for (const sr_ib_op_t *op = ep->lanes[l].limbo_head; op; op = op->next)
            if (op->comp == NULL && (lanes >> op->orig & 1))
                return 1;
    return 0;
}

/* Ends one WR of the limbo that does not go again (flock and lane lock). */
static void sr_ib_limbo_end(sr_tl_ctx_t *ctx, sr_ib_op_t *op, int fate, sr_ib_done_t *done)
{
    if (op->comp == NULL) {
        if (fate == SR_IB_FATE_DONE)
            sr_ib_op_put(ctx, op);
        else
            sr_ib_replay_add(op->ep, op);  /* on another lane, or its loss reported */
        return;
    }
    symrail_status_t st = fate == SR_IB_FATE_DONE   ? SYMRAIL_OK
                          : fate == SR_IB_FATE_LOST ? SYMRAIL_ERR_RESULT_LOST
                          : SR_IB_LOAD(op->ep->gone) ? SYMRAIL_ERR_PEER_GONE
                                                     : SYMRAIL_ERR_TRANSPORT;
    sr_ib_done_add(done, op->comp, st);
    sr_ib_op_put(ctx, op);
}

int sr_ib_limbo_run(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, sr_ib_done_t *done)
{
    int more = 0, lost = 0, failed = 0, replayed = 0, applied = 0;
    uint64_t now = sr_time_ns();
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        sr_ib_lock(ctx, &lane->lock);
        if (lane->limbo_head == NULL) {
            sr_ib_unlock(ctx, &lane->lock);
            continue;
        }
        int dead = lane->state == SR_IB_LANE_DEAD;
        int late = ctx->limbo_ns && now - lane->limbo_since > ctx->limbo_ns;
        int blocked = 0;  /* what goes again goes in order */
        uint32_t orig = 0;
        sr_ib_op_t **pp = &lane->limbo_head, *op, *last = NULL, *after = NULL;
        while ((op = *pp) != NULL) {
            int fate = op->fate;
            if (dead || (late && fate == SR_IB_FATE_UNKNOWN))
                fate = SR_IB_FATE_FAIL;
            if (fate == SR_IB_FATE_UNKNOWN ||
                (fate == SR_IB_FATE_REPLAY &&
                 (blocked || (blocked = lane->down || !sr_ib_room(ep, lane))))) {
                last = op;
                pp = &op->next;
                continue;
            }
            *pp = op->next;
            if (fate == SR_IB_FATE_REPLAY) {
                orig |= 1u << op->orig;
                sr_ib_replay_same(ep, lane, op, &after);
                replayed++;
                continue;
            }
            applied += fate == SR_IB_FATE_DONE;
            lost += fate == SR_IB_FATE_LOST;
            failed += fate == SR_IB_FATE_FAIL;
            sr_ib_limbo_end(ctx, op, fate, done);
        }
        lane->limbo_tail = last;
        more |= lane->limbo_head != NULL;
        sr_ib_post_lane(ep, lane);
        if (orig)
            sr_ib_replayed(ep, l, orig);
        sr_ib_unlock(ctx, &lane->lock);
    }
    SR_IB_COUNT(ctx->n_replayed, (uint64_t)replayed);
    if (replayed || applied)
        sr_info("verbs: of the work requests to PE %d that a QP failure caught, %d were not "
                "executed, or are reads: posted again; %d were executed: done", ep->pe,
                replayed, applied);
    if (lost)
        sr_error("verbs: %d atomic(s) to PE %d were applied before their QP failed, and their "
                 "fetched values were lost with it: not applied again "
                 "(SYMRAIL_ERR_RESULT_LOST)", lost, ep->pe);
    if (failed)
        sr_error("verbs: %d work request(s) to PE %d were caught in the failure of their QP, "
                 "which cannot tell whether they were executed: they fail", failed, ep->pe);
    return more;
}
