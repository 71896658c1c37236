/*
 * RDMA verbs transport: when a lane given up is tried again (the repair
 * pass in repair.c makes the try), and what the core is told of lanes that
 * went down or came back.
 */
#include "config.h"
#include "tl/verbs/ib.h"

/*
 * ---- Lanes given up, tried again -----------------------------------------------------------
 *
 * A lane given up (its link went down, its peer's end could not be made)
 * may work again later: the link comes back.  The end that starts repairs
 * (the lower PE, the acceptor between jobs, or a PE's lane to itself) tries
 * it again after SR_IB_REVIVE_MIN_NS, then twice as long after each try
 * that fails, up to SR_IB_REVIVE_MAX_NS: a repair from a new QP whose
 * RECONNECT says so (SR_IB_CTL_REVIVE), which the other end, given up as
 * well, takes as the start of a repair of its own, or answers DEAD when it
 * cannot.  The try is due once the time has come: the progress thread,
 * which wakes every 50 ms at most, sees ctx->revive_next pass and asks for
 * a repair pass, which makes the tries that are due (sr_ib_revive_check;
 * also from the liveness checks, for a context without that thread), so
 * that a lane given up costs progress nothing.  What fails during a try is
 * logged at info level: the lane was given up before, and said so.  A lane
 * with no counterpart at the peer, or no channel to repair over, is never
 * tried again.
 */
void sr_ib_revive_plan(sr_tl_ep_t *ep, int l)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_lane_t *lane = &ep->lanes[l];
    int self = ep->pe == ctx->params.my_pe && !ep->conn;
    int lower = ep->conn ? ep->first : ctx->params.my_pe < ep->pe;
    lane->revive_at = 0;
    lane->revive_due = 0;
    if (SR_IB_LOAD(ep->gone) || (ep->conn && ctx->params.ctl_send == NULL) ||
        (!ep->conn && !self && ep->nqp_error) || sr_ib_peer_lane(ep, l) == UINT32_MAX ||
        !(lower || self))
        return;
    uint64_t now = sr_time_ns();
    if (lane->up_since && now - lane->up_since > SR_IB_REPAIR_FORGET_NS)
        lane->revive_ns = 0;  /* up a good while: its tries start again from the first */
    lane->up_since = 0;       /* ... once, not at each try */
    lane->revive_ns = lane->revive_ns ? 2 * lane->revive_ns : SR_IB_REVIVE_MIN_NS;
    if (lane->revive_ns > SR_IB_REVIVE_MAX_NS)
        lane->revive_ns = SR_IB_REVIVE_MAX_NS;
    lane->revive_at = now + lane->revive_ns;
    sr_ib_revive_arm(ctx, lane->revive_at);
}

void sr_ib_revive_arm(sr_tl_ctx_t *ctx, uint64_t at)
{
    uint64_t cur = SR_IB_LOAD(ctx->revive_next);
    while ((cur == 0 || at < cur) &&
           !__atomic_compare_exchange_n(&ctx->revive_next, &cur, at, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
        ;
}

void sr_ib_revive_tick(sr_tl_ctx_t *ctx, uint64_t now)
{
    uint64_t at = SR_IB_LOAD(ctx->revive_next);
    if (at == 0 || now < at ||
        !__atomic_compare_exchange_n(&ctx->revive_next, &at, 0, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    SR_IB_STORE(ctx->repairs_pending, 1);
}

/* A DEAD owed to the peer: 1 when it may go now; otherwise the tick is
 * armed for it (the tick may have taken an earlier arming). */
int sr_ib_tell_due(sr_tl_ctx_t *ctx, const sr_ib_lane_t *lane, uint64_t now)
{
    if (now >= lane->tell_at)
        return 1;
    sr_ib_revive_arm(ctx, lane->tell_at);
    return 0;
}

void sr_ib_revive_check(sr_tl_ep_t *ep, sr_ib_lane_t *lane, uint64_t now)
{
    if (lane->state != SR_IB_LANE_DEAD)
        return;
    if (lane->tell_dead && sr_ib_tell_due(ep->ctx, lane, now))
        SR_IB_STORE(ep->ctx->repairs_pending, 1);  /* a DEAD that waited for credit */
    if (lane->revive_at == 0)
        return;
    if (now < lane->revive_at) {
        sr_ib_revive_arm(ep->ctx, lane->revive_at);  /* the tick may have taken it */
        return;
    }
    lane->revive_at = 0;
    lane->revive_due = 1;
    SR_IB_STORE(ep->ctx->repairs_pending, 1);
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
