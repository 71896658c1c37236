/*
 * RDMA verbs transport. Lane repair: a failed lane drains, is rebuilt and reconnected over the notify channel.
 */
#include "config.h"
#include "tl/verbs/ib.h"

/* ---- lane repair ------------------------------------------------------------------------- */

/* Lane lock held. */
void sr_ib_lane_fail(sr_tl_ep_t *ep, sr_ib_lane_t *lane, const char *why)
{
    if (lane->down)
        return;
    lane->down = 1;
    lane->state = SR_IB_LANE_DRAIN;
    lane->gen++;
    SR_IB_STORE(ep->ctx->lane_events, 1);
    lane->asked = 0;
    SR_IB_STORE(ep->ctx->repairs_pending, 1);
    /* In error, the QP flushes what it still holds: that is the drain. */
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
    ibv_modify_qp(lane->qp, &a, IBV_QP_STATE);
    if (why)
        sr_warn("verbs: lane to PE %d on %s:%d (QP %u) is down: %s; repairing",
                ep->pe, lane->rail->dev->name, lane->rail->port, lane->qp->qp_num, why);
}

/* 1 when the message went out; 0 when it must be tried again on a later
 * pass (no credit now, or the test hook refused it). */
static int sr_ib_ctl_send(sr_tl_ep_t *ep, uint32_t op, int lane, uint32_t qpn)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_ctl_t c = { op | (ep->lanes[lane].refused ? SR_IB_CTL_REFUSED : 0), (uint32_t)lane,
                      qpn };
    symrail_status_t st = SYMRAIL_ERR_AGAIN;
    if (sr_likely(ctx->fault_ctl == 0))
        st = sr_ib_send_msg(ep, 0, &c, sizeof(c), SR_IB_MSG_INTERNAL);
    else
        ctx->fault_ctl--;
    if (st != SYMRAIL_OK)
        sr_debug("verbs: repair message %u for lane %d to PE %d deferred", op, lane, ep->pe);
    return st == SYMRAIL_OK;
}

static void sr_ib_lane_dead(sr_tl_ep_t *ep, int l, const char *why)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    lane->state = SR_IB_LANE_DEAD;
    if (lane->refused) {
        /* Offered while it was repaired: the core learns it is gone now. */
        lane->refused = 0;
        lane->gen++;
        SR_IB_STORE(ep->ctx->lane_events, 1);
    }
    sr_error("verbs: lane %d to PE %d on %s:%d cannot be repaired: %s", l, ep->pe,
             lane->rail->dev->name, lane->rail->port, why);
}

/* Replaces a drained lane's QP; connects it when the peer's number is known. */
static int sr_ib_lane_rebuild(sr_tl_ep_t *ep, int l, uint32_t rqpn)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (!lane->refused && ++lane->repairs > SR_IB_MAX_REPAIRS) {
        sr_ib_lane_dead(ep, l, "failed too often");
        return -1;
    }
    ibv_destroy_qp(lane->qp);
    lane->qp = sr_ib_qp_create(ctx, lane->rail, lane->rail->dev->cq, ctx->max_wr, 0);
    if (lane->qp == NULL) {
        sr_ib_lane_dead(ep, l, "no new QP");
        return -1;
    }
    if (ep->pe == ctx->params.my_pe)
        rqpn = lane->qp->qp_num;  /* a lane to ourselves loops back into itself */
    if (rqpn) {
        int r = (int)(lane->rail - ctx->rails);
        if (sr_ib_qp_connect(lane->qp, lane->rail, &ep->rail_addr[r], rqpn, ep->pe) != SYMRAIL_OK) {
            sr_ib_lane_dead(ep, l, "reconnect failed");
            return -1;
        }
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
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        sr_tl_ep_t *ep = ctx->eps[pe];
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
    sr_ib_lane_t *lane = &ep->lanes[l];
    if (lane->state == SR_IB_LANE_DEAD)
        return 0;
    if (lane->state == SR_IB_LANE_UP) {
        /* A RECONNECT repeated after we answered: answer again. */
        if (lane->ack_owed && sr_ib_ctl_send(ep, SR_IB_CTL_ACK, l, lane->qp->qp_num))
            lane->ack_owed = 0;
        return lane->ack_owed;
    }
    pending = 1;
    switch (lane->state) {
    case SR_IB_LANE_DRAIN:
        if (lane->outstanding != 0)
            break;
        if (pe == me) {
            if (sr_ib_lane_rebuild(ep, l, 0) == 0)
                sr_ib_lane_up(ep, l);
        } else if (me < pe) {
            if (sr_ib_lane_rebuild(ep, l, 0) == 0)
                lane->state = SR_IB_LANE_TELL;
        } else if (lane->peer_qpn) {
            /* The peer already made its new QP: connect ours. */
            if (sr_ib_lane_rebuild(ep, l, lane->peer_qpn) == 0) {
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
    if ((int)c.lane >= ep->nlanes)
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
    switch (c.op & ~(uint32_t)SR_IB_CTL_REFUSED) {
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
            if (lane->state == SR_IB_LANE_DRAIN)
                lane->peer_qpn = c.qpn;
        }
        SR_IB_STORE(ctx->repairs_pending, 1);
        break;
    case SR_IB_CTL_ACK:
        if (lane->state == SR_IB_LANE_WAIT) {
            int r = (int)(lane->rail - ctx->rails);
            if (sr_ib_qp_connect(lane->qp, lane->rail, &ep->rail_addr[r], c.qpn, pe) == SYMRAIL_OK) {
                lane->rqpn = c.qpn;
                sr_ib_lane_up(ep, (int)c.lane);
            } else {
                sr_ib_lane_dead(ep, (int)c.lane, "reconnect failed");
            }
        }
        break;
    }
}

/* Tells the core which lanes went down or came back since the last call
 * (from progress, never from inside a post). */
void sr_ib_lane_report(sr_tl_ctx_t *ctx)
{
    if (!sr_ib_flag_take(ctx, &ctx->lane_events) || ctx->params.lane_cb == NULL)
        return;
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        sr_tl_ep_t *ep = ctx->eps[pe];
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
