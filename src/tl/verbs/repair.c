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
                          (ln->rq_psn_ok ? SR_IB_CTL_PSN : 0) |
                          (ln->reviving && op == SR_IB_CTL_RECONNECT ? SR_IB_CTL_REVIVE : 0),
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
    symrail_status_t st = sr_ib_ctl_out(ep, SR_IB_CTL_DEAD, l, lane->dead_qpn);
    if (st == SYMRAIL_ERR_AGAIN) {
        /* The peer's thread is behind: asked again once it may have caught
         * up, as a try is (sr_ib_revive_check), not at every repair pass,
         * which would then run in every progress call meanwhile. */
        lane->tell_at = sr_time_ns() + SR_IB_TELL_RETRY_NS;
        sr_ib_revive_arm(ep->ctx, lane->tell_at);
        return 0;
    }
    lane->tell_dead = 0;
    lane->dead_qpn = 0;
    if (st != SYMRAIL_OK)
        sr_warn("verbs: PE %d cannot be told that lane %d on %s:%d is given up (%s): its "
                "operations on that lane end at SYMRAIL_OP_TIMEOUT", ep->pe, l,
                lane->rail->dev->name, lane->rail->port, symrail_strerror(st));
    return 1;
}

/* A port that is down would take a new QP to RTR on some devices, and its
 * lane would then wait for completions that never come: not tried. */
static int sr_ib_port_up(const sr_ib_rail_t *rail)
{
    struct ibv_port_attr pa;
    return ibv_query_port(rail->dev->ctx, (uint8_t)rail->port, &pa) == 0 &&
           pa.state == IBV_PORT_ACTIVE;
}

/* Lane l, given up, starts a repair of its own (from the repair pass); 1
 * while that is not done. */
static int sr_ib_revive(sr_tl_ep_t *ep, int l)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (lane->outstanding != 0 || lane->limbo_head != NULL)
        return 1;  /* what it held ends first (sr_ib_limbo_run) */
    lane->revive_due = 0;
    if (SR_IB_LOAD(ep->gone) || (!ep->conn && ep->pe != ep->ctx->params.my_pe && ep->nqp_error))
        return 0;  /* no channel left to repair over: for good */
    if (!sr_ib_port_up(lane->rail)) {
        sr_debug("verbs: lane %d to PE %d: port %s:%d is not active: tried again later", l,
                 ep->pe, lane->rail->dev->name, lane->rail->port);
        sr_ib_revive_plan(ep, l);
        return 0;
    }
    lane->reviving = 1;
    lane->try_fresh = 1;
    lane->try_until = sr_time_ns() + SR_IB_TRY_NS;
    lane->repairs = 0;
    lane->up_since = 0;  /* how long it was up before it was given up says nothing now */
    lane->asked = 0;
    lane->peer_qpn = 0;
    lane->wc_err = 0;
    lane->refused = 0;
    lane->state = SR_IB_LANE_DRAIN;
    sr_info("verbs: lane %d to PE %d on %s:%d, given up, is tried again", l, ep->pe,
            lane->rail->dev->name, lane->rail->port);
    return 1;
}

/* The peer tries a lane again that we gave up too (under rlock and the
 * lane's lock): our end starts its repair, or says it cannot now. */
static void sr_ib_revive_accept(sr_tl_ep_t *ep, int l, sr_ib_ctl_t c)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    SR_IB_STORE(ep->ctx->repairs_pending, 1);
    if (lane->outstanding != 0 || lane->limbo_head != NULL || !sr_ib_port_up(lane->rail)) {
        lane->tell_dead = 1;  /* not now: the peer tries again later */
        lane->dead_qpn = c.qpn;
        return;
    }
    lane->reviving = 1;
    lane->try_fresh = 1;
    lane->try_until = sr_time_ns() + SR_IB_TRY_NS;
    lane->tell_dead = 0;  /* a DEAD still owed is older than this try */
    lane->repairs = 0;
    lane->up_since = 0;
    lane->asked = 1;
    lane->wc_err = 0;
    lane->refused = 0;
    lane->revive_at = 0;
    lane->revive_due = 0;
    lane->peer_qpn = c.qpn;
    lane->peer_psn_ok = 0;
    lane->state = SR_IB_LANE_DRAIN;
    sr_info("verbs: lane %d to PE %d on %s:%d, given up, is tried again by the peer", l, ep->pe,
            lane->rail->dev->name, lane->rail->port);
}

/* Lane l is beyond repair here; the peer is told (sr_ib_tell_dead) unless
 * it is the one that said so, or the channel to it is what failed. */
static void sr_ib_lane_dead_as(sr_tl_ep_t *ep, int l, const char *why, int tell)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    lane->state = SR_IB_LANE_DEAD;
    lane->tell_dead = tell;
    lane->dead_qpn = lane->peer_qpn;  /* the RECONNECT this answers, if any */
    SR_IB_STORE(ep->ctx->replays, 1);  /* its limbo fails (sr_ib_limbo_run) */
    if (lane->refused) {
        /* Offered while it was repaired: the core learns it is gone now. */
        lane->refused = 0;
        lane->gen++;
        SR_IB_STORE(ep->ctx->lane_events, 1);
    }
    sr_ib_revive_plan(ep, l);
    unsigned long long again = lane->revive_at ? lane->revive_ns / 1000000000ull : 0;
    if (lane->reviving || sr_time_ns() < lane->quiet_until) {
        lane->reviving = 0;
        lane->quiet_until = 0;
        sr_info("verbs: lane %d to PE %d on %s:%d, tried again, still cannot be used: %s%s",
                l, ep->pe, lane->rail->dev->name, lane->rail->port, why,
                again ? "; tried again later" : "");
        return;
    }
    if (again)
        sr_error("verbs: lane %d to PE %d on %s:%d cannot be repaired: %s; given up, tried "
                 "again in %llu s", l, ep->pe, lane->rail->dev->name, lane->rail->port, why, again);
    else
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

/* Connects lane's new QP to the peer's rqpn; a lane given up and tried
 * again is expected to fail while its link is down: info, not an error. */
static symrail_status_t sr_ib_lane_connect(sr_tl_ep_t *ep, sr_ib_lane_t *lane, uint32_t rqpn)
{
    int r = (int)(lane->rail - ep->ctx->rails);
    const char *step = "";
    int err = sr_ib_qp_move(lane->qp, lane->rail, &ep->rail_addr[r], rqpn, ep->pe, &step);
    if (err == 0) {
        sr_ib_lane_connected(lane, &ep->rail_addr[r]);
        return SYMRAIL_OK;
    }
    if (lane->reviving)
        sr_info("verbs: QP %u to %s (peer PE %d QP %u on %s) failed: %s", lane->qp->qp_num, step,
                ep->pe, rqpn, ep->rail_addr[r].dev, strerror(err));
    else
        sr_error("verbs: QP %u to %s (peer PE %d QP %u on %s) failed: %s", lane->qp->qp_num, step,
                 ep->pe, rqpn, ep->rail_addr[r].dev, strerror(err));
    return SYMRAIL_ERR_TRANSPORT;
}

/* Replaces a drained lane's QP; connects it when the peer's number is known. */
static int sr_ib_lane_rebuild(sr_tl_ep_t *ep, int l, uint32_t rqpn)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (lane->up_since && sr_time_ns() - lane->up_since > SR_IB_REPAIR_FORGET_NS) {
        lane->repairs = 0;
        lane->revive_ns = 0;
        lane->reviving = 0;
    }
    if (!lane->refused && ++lane->repairs > SR_IB_MAX_REPAIRS) {
        sr_ib_lane_dead(ep, l, "failed too often");
        return -1;
    }
    if (lane->try_fresh) {
        lane->try_fresh = 0;
        lane->rq_psn_ok = 0;  /* given up: nothing of the peer's is caught in it */
    } else {
        sr_ib_old_rq_psn(lane);
    }
    ibv_destroy_qp(lane->qp);
    lane->qp = sr_ib_qp_create(ctx, lane->rail, lane->rail->dev->cq, lane->max_wr, NULL);
    if (lane->qp == NULL) {
        sr_ib_lane_dead(ep, l, "no new QP");
        return -1;
    }
    if (ep->pe == ctx->params.my_pe && !ep->conn)
        rqpn = lane->qp->qp_num;  /* a lane to ourselves loops back into itself */
    if (rqpn && sr_ib_lane_connect(ep, lane, rqpn) != SYMRAIL_OK) {
        /* A try that fails says nothing of the rail's other lanes. */
        int trying = lane->reviving;
        sr_ib_lane_dead(ep, l, "reconnect failed");
        if (!trying)
            sr_ib_rail_cut(ep, l);
        return -1;
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
    /* A try that came up: the peer's end may still fail to connect just
     * after, which is one more failed try, not news. */
    lane->quiet_until = lane->reviving ? lane->up_since + SR_IB_TRY_NS : 0;
    lane->reviving = 0;
    lane->try_fresh = 0;
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
    if (lane->state == SR_IB_LANE_DEAD) {
        if (lane->outstanding != 0) {
            /* Given up before it drained (the peer's DEAD, no channel):
             * what its QP owes must still come back, or be covered. */
            sr_ib_drain_cover(ep, lane);
            pending = 1;
        }
        if (lane->tell_dead &&
            (!sr_ib_tell_due(ctx, lane, sr_time_ns()) || !sr_ib_tell_dead(ep, l)))
            return pending;
        if (lane->revive_at)
            sr_ib_revive_check(ep, lane, sr_time_ns());
        return (lane->revive_due && sr_ib_revive(ep, l)) || pending;
    }
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
    if (lane->reviving && sr_time_ns() > lane->try_until) {
        sr_ib_lane_dead(ep, l, "no answer to the try");  /* the peer stopped answering */
        return 1;
    }
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
    uint32_t op = c.op & ~(uint32_t)(SR_IB_CTL_REFUSED | SR_IB_CTL_PSN | SR_IB_CTL_REVIVE);
    if (lane->state == SR_IB_LANE_DEAD) {
        if (op == SR_IB_CTL_RECONNECT && (c.op & SR_IB_CTL_REVIVE))
            sr_ib_revive_accept(ep, (int)c.lane, c);
        return;
    }
    /* The peer's end refused a withdrawn rkey of ours: so did this end. */
    int refused = (c.op & SR_IB_CTL_REFUSED) != 0;
    switch (op) {
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
            /* Drained before we told the peer: all it flushed is in limbo. */
            sr_ib_limbo_sort(ep, lane, (c.op & SR_IB_CTL_PSN) != 0, c.psn);
            if (sr_ib_lane_connect(ep, lane, c.qpn) == SYMRAIL_OK) {
                lane->rqpn = c.qpn;
                sr_ib_lane_up(ep, (int)c.lane);
            } else {
                int trying = lane->reviving;
                sr_ib_lane_dead(ep, (int)c.lane, "reconnect failed");
                if (!trying)
                    sr_ib_rail_cut(ep, (int)c.lane);
            }
        }
        break;
    case SR_IB_CTL_DEAD:
        /* During a try, only the answer to it counts: a DEAD the peer owed
         * from before crossed our RECONNECT, which it takes (the answer
         * names our new QP). */
        if (lane->reviving && c.qpn != lane->qp->qp_num)
            break;
        /* The peer gave its end up: ours can never be reconnected. */
        if (!lane->down)
            sr_ib_lane_fail(ep, lane, NULL);
        if (lane->state != SR_IB_LANE_DEAD)
            sr_ib_lane_dead_as(ep, (int)c.lane, "the peer gave it up", 0);
        break;
    }
}
