/*
 * RDMA verbs transport. Lane repair: a failed lane drains, is rebuilt and
 * reconnected over the notify channel, or for a connected peer of another
 * job over its other endpoint (peer.c).
 */
#include "config.h"
#include "tl/verbs/ib.h"

/* ---- lane repair ------------------------------------------------------------------------- */

_Static_assert(sizeof(sr_ib_ctl_t) <= SR_TL_CTL_MAX, "a repair message fits a control message");

/* Lane lock held. */
void sr_ib_lane_fail(sr_tl_ep_t *ep, sr_ib_lane_t *lane, const char *why)
{
    if (lane->down)
        return;
    lane->down = 1;
    lane->state = SR_IB_LANE_DRAIN;
    lane->gen++;
    SR_IB_STORE(ep->ctx->lane_events, 1);
    if (ep->conn && (ep->ctx->params.ctl_send == NULL || SR_IB_LOAD(ep->gone))) {
        /* No channel to repair over (peer.c), or the peer left. */
        lane->state = SR_IB_LANE_DEAD;
        lane->refused = 0;
        SR_IB_STORE(ep->ctx->replays, 1);
        struct ibv_qp_attr e = { .qp_state = IBV_QPS_ERR };
        ibv_modify_qp(lane->qp, &e, IBV_QP_STATE);
        if (why && !SR_IB_LOAD(ep->gone))
            sr_warn("verbs: lane to connected peer %d on %s:%d (QP %u) is down: %s; not "
                    "repaired (no channel to the peer)", ep->pe, lane->rail->dev->name,
                    lane->rail->port, lane->qp->qp_num, why);
        return;
    }
    lane->asked = 0;
    SR_IB_STORE(ep->ctx->repairs_pending, 1);
    /* In error, the QP flushes what it still holds: that is the drain. */
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
    ibv_modify_qp(lane->qp, &a, IBV_QP_STATE);
    if (why)
        sr_warn("verbs: lane %d to %s %d on %s:%d (QP %u) is down: %s; repairing",
                (int)(lane - ep->lanes), ep->conn ? "connected peer" : "PE", ep->pe,
                lane->rail->dev->name, lane->rail->port, lane->qp->qp_num, why);
}

static void sr_ib_lane_dead(sr_tl_ep_t *ep, int l, const char *why);
static void sr_ib_lane_dead_as(sr_tl_ep_t *ep, int l, const char *why, int tell);

/* Puts one repair message on its way: over the peer's other endpoint
 * between jobs, over the notify channel within one. */
static symrail_status_t sr_ib_ctl_out(sr_tl_ep_t *ep, uint32_t op, int lane, uint32_t qpn)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    const sr_ib_lane_t *ln = &ep->lanes[lane];
    sr_ib_ctl_t c = { op | (ln->refused ? SR_IB_CTL_REFUSED : 0) |
                          (ln->rq_psn_ok ? SR_IB_CTL_PSN : 0),
                      sr_ib_peer_lane(ep, lane), qpn, ln->rq_psn };
    if (sr_unlikely(ctx->fault_ctl > 0)) {
        ctx->fault_ctl--;
        return SYMRAIL_ERR_AGAIN;
    }
    if (ep->conn)
        return ctx->params.ctl_send(ctx->params.cb_arg, ep->pe, &c, sizeof(c));
    return sr_ib_send_msg(ep, 0, &c, sizeof(c), SR_IB_MSG_INTERNAL);
}

/* 1 when the message went out; 0 when it must be tried again on a later
 * pass (no credit now, or the test hook refused it). */
static int sr_ib_ctl_send(sr_tl_ep_t *ep, uint32_t op, int lane, uint32_t qpn)
{
    if (sr_ib_peer_lane(ep, lane) == UINT32_MAX) {
        sr_ib_lane_dead_as(ep, lane, "its rail has no counterpart at the peer", 0);
        return 0;
    }
    symrail_status_t st = sr_ib_ctl_out(ep, op, lane, qpn);
    /* Between jobs anything but AGAIN means no channel will ever carry it
     * (tl.h, ctl_send): waiting would keep the repair pending for good. */
    if (ep->conn && st != SYMRAIL_OK && st != SYMRAIL_ERR_AGAIN) {
        sr_ib_lane_dead_as(ep, lane, symrail_strerror(st), 0);
        return 0;
    }
    if (st != SYMRAIL_OK)
        sr_debug("verbs: repair message %u for lane %d to PE %d deferred", op, lane, ep->pe);
    return st == SYMRAIL_OK;
}

/*
 * The peer learns that we gave lane l up: a lane dead at one end is never
 * reconnected, so its other end would wait for a repair that never comes,
 * its slices held until SYMRAIL_OP_TIMEOUT.  1 when done: sent, or never
 * to be (the channel failed, or the peer left: the peer then learns it from
 * its own failures or the timeout, as before); 0: no credit now, again on
 * the next repair pass (lane->tell_dead).
 */
static int sr_ib_tell_dead(sr_tl_ep_t *ep, int l)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (SR_IB_LOAD(ep->gone) || (ep->conn && ep->ctx->params.ctl_send == NULL) ||
        (!ep->conn && ep->pe == ep->ctx->params.my_pe) || sr_ib_peer_lane(ep, l) == UINT32_MAX) {
        lane->tell_dead = 0;
        return 1;
    }
    symrail_status_t st = sr_ib_ctl_out(ep, SR_IB_CTL_DEAD, l, 0);
    if (st == SYMRAIL_ERR_AGAIN) {
        SR_IB_STORE(ep->ctx->repairs_pending, 1);
        return 0;
    }
    lane->tell_dead = 0;
    if (st != SYMRAIL_OK)
        sr_warn("verbs: PE %d cannot be told that lane %d on %s:%d is given up (%s): its "
                "operations on that lane end at SYMRAIL_OP_TIMEOUT", ep->pe, l,
                lane->rail->dev->name, lane->rail->port, symrail_strerror(st));
    return 1;
}

/* Lane l is beyond repair here; the peer is told (sr_ib_tell_dead) unless
 * it is the one that said so, or the channel to it is what failed. */
static void sr_ib_lane_dead_as(sr_tl_ep_t *ep, int l, const char *why, int tell)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    lane->state = SR_IB_LANE_DEAD;
    lane->tell_dead = tell;
    SR_IB_STORE(ep->ctx->replays, 1);  /* its limbo fails (sr_ib_limbo_run) */
    if (lane->refused) {
        /* Offered while it was repaired: the core learns it is gone now. */
        lane->refused = 0;
        lane->gen++;
        SR_IB_STORE(ep->ctx->lane_events, 1);
    }
    sr_error("verbs: lane %d to PE %d on %s:%d cannot be repaired: %s", l, ep->pe,
             lane->rail->dev->name, lane->rail->port, why);
}

static void sr_ib_lane_dead(sr_tl_ep_t *ep, int l, const char *why)
{
    sr_ib_lane_dead_as(ep, l, why, 1);
    sr_ib_tell_dead(ep, l);
}

/* Lane l could not be connected again: its rail does not reach the peer,
 * and the rail's other lanes to it will fail too, each after its own
 * stall; the next repair pass breaks them (sr_ib_repair_lane). */
static void sr_ib_rail_cut(sr_tl_ep_t *ep, int l)
{
    int r = (int)(ep->lanes[l].rail - ep->ctx->rails);
    __atomic_fetch_or(&ep->rails_cut, 1u << r, __ATOMIC_RELAXED);
    SR_IB_STORE(ep->ctx->repairs_pending, 1);
}

static void sr_ib_old_rq_psn(sr_ib_lane_t *lane);

/* Replaces a drained lane's QP; connects it when the peer's number is known. */
static int sr_ib_lane_rebuild(sr_tl_ep_t *ep, int l, uint32_t rqpn)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (lane->up_since && sr_time_ns() - lane->up_since > SR_IB_REPAIR_FORGET_NS)
        lane->repairs = 0;
    if (!lane->refused && ++lane->repairs > SR_IB_MAX_REPAIRS) {
        sr_ib_lane_dead(ep, l, "failed too often");
        return -1;
    }
    sr_ib_old_rq_psn(lane);
    ibv_destroy_qp(lane->qp);
    lane->qp = sr_ib_qp_create(ctx, lane->rail, lane->rail->dev->cq, ctx->max_wr, NULL);
    if (lane->qp == NULL) {
        sr_ib_lane_dead(ep, l, "no new QP");
        return -1;
    }
    if (ep->pe == ctx->params.my_pe && !ep->conn)
        rqpn = lane->qp->qp_num;  /* a lane to ourselves loops back into itself */
    if (rqpn) {
        int r = (int)(lane->rail - ctx->rails);
        if (sr_ib_qp_connect(lane->qp, lane->rail, &ep->rail_addr[r], rqpn, ep->pe) != SYMRAIL_OK) {
            sr_ib_lane_dead(ep, l, "reconnect failed");
            sr_ib_rail_cut(ep, l);
            return -1;
        }
        sr_ib_lane_connected(lane, &ep->rail_addr[r]);
    }
    return 0;
}

static void sr_ib_lane_up(sr_tl_ep_t *ep, int l)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    lane->state = SR_IB_LANE_UP;
    lane->down = 0;
    lane->refused = 0;
    lane->peer_qpn = 0;
    lane->wc_err = 0;
    lane->peer_psn_ok = 0;
    lane->up_since = sr_time_ns();
    __atomic_fetch_and(&ep->rails_cut, ~(1u << (lane->rail - ep->ctx->rails)), __ATOMIC_RELAXED);
    lane->gen++;
    SR_IB_STORE(ep->ctx->lane_events, 1);
    SR_IB_COUNT(ep->ctx->n_repaired, 1);
    sr_info("verbs: lane %d to PE %d on %s:%d repaired (QP %u)", l, ep->pe,
            lane->rail->dev->name, lane->rail->port, lane->qp->qp_num);
}

/*
 * One pass over the lanes under repair.  A state that promises the peer
 * something (WAIT: it has our new QP; UP: it has our ACK) is entered only
 * once the message has gone out; a message that could not go out is tried
 * again on the next pass, from the state before it.
 */
static int sr_ib_repair_lane(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, int l);

/* Under rlock, one lane at a time under its lock (which a repair message
 * to the peer keeps: lane lock before nlock).  A lane that fails during the
 * pass sets repairs_pending again after we cleared it. */
void sr_ib_repair(sr_tl_ctx_t *ctx)
{
    if (!sr_ib_trylock(ctx, &ctx->rlock))
        return;
    int pending = 0;
    __atomic_store_n(&ctx->repairs_pending, 0, __ATOMIC_SEQ_CST);
    for (int pe = 0; pe < ctx->neps; pe++) {
        sr_tl_ep_t *ep = SR_IB_LOAD(ctx->eps[pe]);
        for (int l = 0; ep && l < ep->nlanes; l++) {
            sr_ib_lock(ctx, &ep->lanes[l].lock);
            pending |= sr_ib_repair_lane(ctx, ep, l);
            sr_ib_unlock(ctx, &ep->lanes[l].lock);
        }
    }
    if (pending)
        SR_IB_STORE(ctx->repairs_pending, 1);
    sr_ib_unlock(ctx, &ctx->rlock);
}

/* One step of lane l's repair; 1 while it is not done. */
static int sr_ib_repair_lane(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, int l)
{
    int pending = 0, me = ctx->params.my_pe, pe = ep->pe;
    /* Between jobs PE numbers say nothing: the acceptor is the lower. */
    int lower = ep->conn ? ep->first : me < pe;
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (lane->state == SR_IB_LANE_DEAD)
        return lane->tell_dead && !sr_ib_tell_dead(ep, l);
    if (lane->state == SR_IB_LANE_UP &&
        (SR_IB_LOAD(ep->rails_cut) >> (lane->rail - ctx->rails) & 1)) {
        sr_ib_lane_fail(ep, lane, "another lane of its rail cannot reach the peer");
        return 1;
    }
    if (lane->state == SR_IB_LANE_UP) {
        /* A RECONNECT repeated after we answered: answer again. */
        if (lane->ack_owed && sr_ib_ctl_send(ep, SR_IB_CTL_ACK, l, lane->qp->qp_num))
            lane->ack_owed = 0;
        return lane->ack_owed;
    }
    pending = 1;
    switch (lane->state) {
    case SR_IB_LANE_DRAIN:
        if (lane->outstanding != 0) {
            sr_ib_drain_cover(ep, lane);
            break;
        }
        if (pe == me && !ep->conn) {
            /* Connected to itself: its own receive side says. */
            if (sr_ib_lane_rebuild(ep, l, 0) == 0) {
                sr_ib_limbo_sort(ep, lane, lane->rq_psn_ok, lane->rq_psn);
                sr_ib_lane_up(ep, l);
            }
        } else if (lower) {
            if (sr_ib_lane_rebuild(ep, l, 0) == 0)
                lane->state = SR_IB_LANE_TELL;
        } else if (lane->peer_qpn) {
            /* The peer already made its new QP: connect ours. */
            if (sr_ib_lane_rebuild(ep, l, lane->peer_qpn) == 0) {
                sr_ib_limbo_sort(ep, lane, lane->peer_psn_ok, lane->peer_psn);
                lane->rqpn = lane->peer_qpn;
                lane->state = SR_IB_LANE_ANSWER;
            }
        } else if (!lane->asked) {
            lane->asked = sr_ib_ctl_send(ep, SR_IB_CTL_REQUEST, l, 0);
        }
        break;
    case SR_IB_LANE_TELL:
        if (sr_ib_ctl_send(ep, SR_IB_CTL_RECONNECT, l, lane->qp->qp_num))
            lane->state = SR_IB_LANE_WAIT;
        break;
    case SR_IB_LANE_ANSWER:
        if (sr_ib_ctl_send(ep, SR_IB_CTL_ACK, l, lane->qp->qp_num))
            sr_ib_lane_up(ep, l);
        break;
    default:
        break;
    }
    return pending;
}

static void sr_ib_ctl_apply(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, int pe, sr_ib_ctl_t c);

/* A repair message: under rlock (a pass of sr_ib_repair is short) and the
 * lane's lock. */
void sr_ib_ctl_recv(sr_tl_ctx_t *ctx, int pe, const void *payload, size_t len)
{
    sr_tl_ep_t *ep = ctx->eps[pe];
    sr_ib_ctl_t c;
    if (ep == NULL || len != sizeof(c))
        return;
    memcpy(&c, payload, sizeof(c));
    /* Unsigned: the lane number comes from the peer, maybe of another job. */
    if (c.lane >= (uint32_t)ep->nlanes)
        return;
    sr_ib_lock(ctx, &ctx->rlock);
    sr_ib_lock(ctx, &ep->lanes[c.lane].lock);
    sr_ib_ctl_apply(ctx, ep, pe, c);
    sr_ib_unlock(ctx, &ep->lanes[c.lane].lock);
    sr_ib_unlock(ctx, &ctx->rlock);
}

/* The peer says the lane failed (no-op when it is draining already). */
static void sr_ib_lane_told(sr_tl_ep_t *ep, sr_ib_lane_t *lane, int refused)
{
    if (refused && !lane->down)
        lane->refused = 1;
    sr_ib_lane_fail(ep, lane, "the peer saw it fail");
}

static void sr_ib_ctl_apply(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, int pe, sr_ib_ctl_t c)
{
    sr_ib_lane_t *lane = &ep->lanes[c.lane];
    if (lane->state == SR_IB_LANE_DEAD)
        return;
    /* The peer's end refused a withdrawn rkey of ours: so did this end. */
    int refused = (c.op & SR_IB_CTL_REFUSED) != 0;
    switch (c.op & ~(uint32_t)(SR_IB_CTL_REFUSED | SR_IB_CTL_PSN)) {
    case SR_IB_CTL_REQUEST:      /* we are the lower PE */
        if (lane->state == SR_IB_LANE_WAIT)
            lane->state = SR_IB_LANE_TELL;  /* the peer has not seen our RECONNECT yet: again */
        else
            sr_ib_lane_told(ep, lane, refused);  /* no-op when already draining */
        break;
    case SR_IB_CTL_RECONNECT:    /* we are the higher PE */
        if (lane->rqpn == c.qpn && (lane->state == SR_IB_LANE_UP ||
                                    lane->state == SR_IB_LANE_ANSWER)) {
            lane->ack_owed = lane->state == SR_IB_LANE_UP;  /* a repeat: we are connected to it */
        } else {
            sr_ib_lane_told(ep, lane, refused);
            if (lane->state == SR_IB_LANE_DRAIN) {
                lane->peer_qpn = c.qpn;
                lane->peer_psn_ok = (c.op & SR_IB_CTL_PSN) != 0;
                lane->peer_psn = c.psn;
            }
        }
        SR_IB_STORE(ctx->repairs_pending, 1);
        break;
    case SR_IB_CTL_ACK:
        if (lane->state == SR_IB_LANE_WAIT) {
            int r = (int)(lane->rail - ctx->rails);
            /* Drained before we told the peer: all it flushed is in limbo. */
            sr_ib_limbo_sort(ep, lane, (c.op & SR_IB_CTL_PSN) != 0, c.psn);
            if (sr_ib_qp_connect(lane->qp, lane->rail, &ep->rail_addr[r], c.qpn, pe) == SYMRAIL_OK) {
                sr_ib_lane_connected(lane, &ep->rail_addr[r]);
                lane->rqpn = c.qpn;
                sr_ib_lane_up(ep, (int)c.lane);
            } else {
                sr_ib_lane_dead(ep, (int)c.lane, "reconnect failed");
                sr_ib_rail_cut(ep, (int)c.lane);
            }
        }
        break;
    case SR_IB_CTL_DEAD:
        /* The peer gave its end up: ours can never be reconnected. */
        if (!lane->down)
            sr_ib_lane_fail(ep, lane, NULL);
        if (lane->state != SR_IB_LANE_DEAD)
            sr_ib_lane_dead_as(ep, (int)c.lane, "the peer gave it up", 0);
        break;
    }
}

/* Tells the core which lanes went down or came back since the last call
 * (from progress, never from inside a post). */
void sr_ib_lane_report(sr_tl_ctx_t *ctx)
{
    if (!sr_ib_flag_take(ctx, &ctx->lane_events) || ctx->params.lane_cb == NULL)
        return;
    for (int pe = 0; pe < ctx->neps; pe++) {
        sr_tl_ep_t *ep = SR_IB_LOAD(ctx->eps[pe]);
        for (int l = 0; ep && l < ep->nlanes; l++) {
            sr_ib_lane_t *lane = &ep->lanes[l];
            sr_ib_lock(ctx, &lane->lock);
            uint32_t gen = lane->gen, told = lane->gen_told;
            uint32_t weight = sr_ib_lane_weight(lane);
            lane->gen_told = gen;
            sr_ib_unlock(ctx, &lane->lock);
            /* Two threads may both report a change: the generation lets
             * the core keep the newer. */
            if (gen != told)
                ctx->params.lane_cb(ctx->params.cb_arg, pe, l, weight, gen);
        }
    }
}

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
static void sr_ib_old_rq_psn(sr_ib_lane_t *lane)
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
