/*
 * RDMA verbs transport. Lane repair, and lanes given up tried again
 * (repair.c); the work a QP failure caught (limbo.c, "Work caught in a
 * failure"): the repair messages, the limbo, and the replays of flushed
 * work on the same or another lane.
 */
#ifndef SR_TL_VERBS_REPAIR_H
#define SR_TL_VERBS_REPAIR_H

/* Internal notify messages: flagged in the length word, never shown to users. */
#define SR_IB_MSG_INTERNAL 0x80000000u
enum { SR_IB_CTL_REQUEST = 1, SR_IB_CTL_RECONNECT = 2, SR_IB_CTL_ACK = 3,
       SR_IB_CTL_HEARTBEAT = 4, SR_IB_CTL_DEAD = 5 /* the sender gave the lane up */,
       SR_IB_CTL_REFUSED = 0x100 /* flag: lane->refused */,
       SR_IB_CTL_PSN = 0x200 /* flag: psn is the old QP's receive PSN */,
       SR_IB_CTL_REVIVE = 0x400 /* flag: a RECONNECT of a lane given up, tried again */ };
typedef struct {
    uint32_t op;
    uint32_t lane;
    uint32_t qpn;
    uint32_t psn;
} sr_ib_ctl_t;

/*
 * Whether new work may go on lane now (its lock held).  Not while it is
 * down, and not while its limbo still holds work its failure caught, even
 * once it is up again: what goes again must reach the peer before anything
 * posted later on the lane (a put, then a fence, then a flag), and
 * sr_ib_limbo_run posts it only on the next progress.  SYMRAIL_ERR_AGAIN:
 * the core tries again.
 */
static inline symrail_status_t sr_ib_lane_open(const sr_ib_lane_t *lane)
{
    if (sr_likely(!lane->down && lane->limbo_head == NULL))
        return SYMRAIL_OK;
    return lane->state == SR_IB_LANE_DEAD ? SYMRAIL_ERR_TRANSPORT : SYMRAIL_ERR_AGAIN;
}

/* rma.c, lane lock held, room checked: replay_wr queues a put of a failed
 * lane behind what lane holds; replay_same queues a WR its own lane's
 * failure caught after *after_p (at the head when NULL), before the newer
 * work the lane holds, and makes it *after_p. */
void sr_ib_replay_wr(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op);
void sr_ib_replay_same(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op,
                       sr_ib_op_t **after_p);
/* comp.c: a put to post again on another lane, or to report lost. */
void sr_ib_replay_add(sr_tl_ep_t *ep, sr_ib_op_t *op);
/* flush.c; flock and the lane's lock held. */
void sr_ib_replayed(sr_tl_ep_t *ep, int l, uint32_t orig);

/* repair.c, and revive.c (the tries of lanes given up, lane_report) */
void sr_ib_lane_fail(sr_tl_ep_t *ep, sr_ib_lane_t *lane, const char *why);
/* Lane l was given up: when it is tried again, if ever (lane lock held). */
void sr_ib_revive_plan(sr_tl_ep_t *ep, int l);
/* limbo.c: the drained QP's receive PSN, read before it is destroyed. */
void sr_ib_old_rq_psn(sr_ib_lane_t *lane);
/* From the repair pass and the liveness checks: a try that is due is made
 * by the repair pass; one that is not yet keeps ctx->revive_next. */
void sr_ib_revive_check(sr_tl_ep_t *ep, sr_ib_lane_t *lane, uint64_t now);
/* ctx->revive_next goes down to `at`. */
void sr_ib_revive_arm(sr_tl_ctx_t *ctx, uint64_t at);
/* From the progress thread: once ctx->revive_next has passed, a repair
 * pass is asked for (it touches no lane). */
void sr_ib_revive_tick(sr_tl_ctx_t *ctx, uint64_t now);
/* A DEAD owed to the peer: 1 when it may go now; otherwise the tick is
 * armed for it. */
int sr_ib_tell_due(sr_tl_ctx_t *ctx, const sr_ib_lane_t *lane, uint64_t now);
void sr_ib_repair(sr_tl_ctx_t *ctx);
void sr_ib_lane_report(sr_tl_ctx_t *ctx);
void sr_ib_ctl_recv(sr_tl_ctx_t *ctx, int pe, const void *payload, size_t len);
/* lane_connected: its QP is connected (lane lock held); limbo_add: 1 when
 * op (a flushed WR) waits there (lane lock and flock held); limbo_sort:
 * the peer's old receive PSN, when known, decides (lane lock held);
 * limbo_run: from progress (flock held), 1 while some wait; limbo_holds:
 * a put completed at post of one of `lanes` waits there (flock held). */
int sr_ib_limbo_holds(const sr_tl_ep_t *ep, uint32_t lanes);
void sr_ib_lane_connected(sr_ib_lane_t *lane, const sr_ib_rail_addr_t *ra);
int sr_ib_limbo_add(sr_tl_ep_t *ep, sr_ib_lane_t *lane, sr_ib_op_t *op);
void sr_ib_limbo_sort(sr_tl_ep_t *ep, sr_ib_lane_t *lane, int known, uint32_t psn);
int sr_ib_limbo_run(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, sr_ib_done_t *done);

#endif
