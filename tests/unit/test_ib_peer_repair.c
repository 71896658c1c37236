/*
 * Lane repair between two jobs, without a device: two verbs contexts in one
 * process, each with the endpoint of a connected peer (the other one), whose
 * repair messages go through params.ctl_send into a queue that the test
 * hands to the other end's ep_ctl, as the cores do over TCP.  QPs are made,
 * queried and moved by the fakes below.  The two ends pair their rails
 * crosswise and have 2 and 1 QPs per rail, so a message that named a lane
 * by the sender's number would reach the wrong one.  Checked: the lane that
 * failed at either end (the acceptor takes the lower PE's part) comes back
 * connected to the peer's new QP, again and again (a refused key does not
 * use up the repairs), through a message that could not go at first; the
 * other lanes are untouched; without a channel a lane stays down, as before;
 * a peer that left ends a repair under way; a lane one end gives up is
 * dead at the other end at once, whichever end gave up and in whatever
 * state the other end was (connected, or waiting for the ACK), also when
 * the message could not go at first; and when it can never go, the giving
 * up still ends (the peer's end is left as it was).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "tl/verbs/ib.h"

#define NQPS 64

/* ---- the fake device: QPs and where each one is connected ---- */

static struct ibv_qp qps[NQPS];
static uint32_t dest_of[NQPS + 100];  /* by qp_num: the peer QP of its RTR */
static int nqps;

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    (void)pd, (void)ia;
    assert_true(nqps < NQPS);
    struct ibv_qp *qp = &qps[nqps];
    qp->qp_num = 100 + (uint32_t)nqps++;
    return qp;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
    (void)qp;
    return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *ia)
{
    (void)mask, (void)ia;
    a->qp_state = IBV_QPS_ERR;
    a->rq_psn = sr_ib_psn(qp->qp_num);
    return 0;
}

/* The library's ibv_query_port reaches this for a context without the
 * extended ops: every port is active. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *pa)
{
    (void)c, (void)port;
    ((struct ibv_port_attr *)(void *)pa)->state = IBV_PORT_ACTIVE;
    return 0;
}

static struct ibv_context fdev;

static int rnr_retry = -1;  /* what the last move to RTS set */
static int rtr_fails;       /* a move to RTR fails: the peer is not reached */
static int rtr_fail_port;   /* ... on this port only */

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    if (a->qp_state == IBV_QPS_RTR && (rtr_fails || (rtr_fail_port && a->ah_attr.port_num == rtr_fail_port)))
        return errno = ENETUNREACH;
    if (a->qp_state == IBV_QPS_RTR && (mask & IBV_QP_DEST_QPN))
        dest_of[qp->qp_num] = a->dest_qp_num;
    if (a->qp_state == IBV_QPS_RTS && (mask & IBV_QP_RNR_RETRY))
        rnr_retry = a->rnr_retry;
    return 0;
}

/* ---- two jobs ---- */

typedef struct {
    sr_tl_ctx_t *ctx;
    sr_tl_ep_t  *ep;
    sr_tl_ep_t  *eps[2];
} end_t;

static end_t A, B;  /* the acceptor (2 QPs per rail) and the connector (1) */

typedef struct {
    end_t   *to;
    uint8_t  msg[SR_TL_CTL_MAX];
    size_t   len;
} ctl_msg_t;

static ctl_msg_t queue[64];
static int nqueue, refuse_next, break_next;

static symrail_status_t fake_ctl_send(void *arg, int pe, const void *msg, size_t len)
{
    end_t *from = arg;
    assert_int_equal(pe, 1);
    assert_true(len <= SR_TL_CTL_MAX && nqueue < 64);
    if (refuse_next > 0) {
        refuse_next--;
        return SYMRAIL_ERR_AGAIN;  /* the receiver's slots are full */
    }
    if (break_next > 0) {
        break_next--;
        return SYMRAIL_ERR_TRANSPORT;  /* the other endpoint failed */
    }
    queue[nqueue].to = from == &A ? &B : &A;
    memcpy(queue[nqueue].msg, msg, len);
    queue[nqueue++].len = len;
    return SYMRAIL_OK;
}

static void end_make(end_t *e, int first, uint32_t qpp, uint32_t peer_qpp)
{
    sr_tl_ctx_t *ctx = calloc(1, sizeof(*ctx));
    sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
    assert_non_null(ctx);
    assert_non_null(ep);
    ctx->params.n_pes = 1;
    ctx->params.ctl_send = fake_ctl_send;
    ctx->params.cb_arg = e;
    ctx->max_wr = 8;
    ctx->max_inline = 64;
    ctx->ndevs = 1;
    snprintf(ctx->devs[0].name, sizeof(ctx->devs[0].name), "fake0");
    ctx->devs[0].ctx = &fdev;
    ctx->nrails = 2;
    ctx->qpp = qpp;
    for (int r = 0; r < 2; r++) {
        ctx->rails[r].dev = &ctx->devs[0];
        ctx->rails[r].port = 1 + r;
        ctx->rails[r].mtu = IBV_MTU_1024;
        ep->rail_addr[r].mtu = IBV_MTU_1024;
        ep->peer_rail[r] = (int8_t)(1 - r);  /* crosswise */
    }
    ep->ctx = ctx;
    ep->pe = 1;
    ep->conn = 1;
    ep->up = 1;
    ep->first = first;
    ep->peer_qpp = peer_qpp;
    ep->nlanes = 2 * (int)qpp;
    ep->lanes = calloc((size_t)ep->nlanes, sizeof(*ep->lanes));
    assert_non_null(ep->lanes);
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        lane->rail = &ctx->rails[l / (int)qpp];
        sr_ib_lane_depth(lane, ctx->max_wr);
        lane->qp = ibv_create_qp(NULL, NULL);
        int used = (uint32_t)l % qpp < peer_qpp;  /* min(qpp) QPs per pair of rails */
        lane->down = !used;
        lane->state = used ? SR_IB_LANE_UP : SR_IB_LANE_DEAD;
    }
    e->ctx = ctx;
    e->ep = ep;
    e->eps[1] = ep;
    ctx->eps = e->eps;
    ctx->neps = 2;
}

/* The peer end of lane l (rail r, QP q) of e: the other end's lane. */
static sr_ib_lane_t *peer_of(end_t *e, int l)
{
    end_t *o = e == &A ? &B : &A;
    int r = l / (int)e->ctx->qpp, q = l % (int)e->ctx->qpp;
    return &o->ep->lanes[(1 - r) * (int)o->ctx->qpp + q];
}

static void link_lanes(void)
{
    for (int l = 0; l < A.ep->nlanes; l++) {
        sr_ib_lane_t *a = &A.ep->lanes[l];
        if (a->state == SR_IB_LANE_DEAD)
            continue;
        sr_ib_lane_t *b = peer_of(&A, l);
        a->rqpn = dest_of[a->qp->qp_num] = b->qp->qp_num;
        b->rqpn = dest_of[b->qp->qp_num] = a->qp->qp_num;
    }
}

static int setup(void **state)
{
    (void)state;
    nqps = nqueue = refuse_next = break_next = rtr_fails = rtr_fail_port = 0;
    memset(dest_of, 0, sizeof(dest_of));
    end_make(&A, 1, 2, 1);
    end_make(&B, 0, 1, 2);
    link_lanes();
    return 0;
}

static void end_free(end_t *e)
{
    free(e->ep->lanes);
    free(e->ep);
    free(e->ctx);
}

static int teardown(void **state)
{
    (void)state;
    end_free(&A);
    end_free(&B);
    return 0;
}

/* Both ends' progress, and the messages between them, until quiet. */
static void pump(void)
{
    for (int i = 0; i < 50; i++) {
        sr_ib_repair(A.ctx);
        sr_ib_repair(B.ctx);
        int n = nqueue;
        nqueue = 0;
        for (int m = 0; m < n; m++)
            sr_ib_ep_ctl(queue[m].to->ep, queue[m].msg, queue[m].len);
    }
}

static void assert_connected(end_t *e, int l)
{
    sr_ib_lane_t *lane = &e->ep->lanes[l], *peer = peer_of(e, l);
    assert_int_equal(lane->state, SR_IB_LANE_UP);
    assert_int_equal(lane->down, 0);
    assert_int_equal(peer->state, SR_IB_LANE_UP);
    assert_int_equal(lane->rqpn, peer->qp->qp_num);
    assert_int_equal(peer->rqpn, lane->qp->qp_num);
    assert_int_equal(dest_of[lane->qp->qp_num], peer->qp->qp_num);
    assert_int_equal(dest_of[peer->qp->qp_num], lane->qp->qp_num);
}

/* A stale access at end e broke lane l there (the peer's end has not seen
 * it yet): its key was refused, which does not count against the lane. */
static void stale_access(end_t *e, int l)
{
    sr_ib_lane_t *lane = &e->ep->lanes[l];
    sr_ib_lane_fail(e->ep, lane, "remote access error (test)");
    lane->refused = 1;
    assert_int_equal(lane->state, SR_IB_LANE_DRAIN);
}

static void test_the_acceptors_lane_fails(void **state)
{
    (void)state;
    uint32_t before = A.ep->lanes[2].qp->qp_num, old = A.ep->lanes[0].qp->qp_num;
    for (int k = 0; k < 2 * SR_IB_MAX_REPAIRS; k++) {
        stale_access(&A, 0);
        pump();
        assert_connected(&A, 0);
    }
    assert_int_not_equal(A.ep->lanes[0].qp->qp_num, old);
    /* The other lanes kept their QPs; those without a pair stay down. */
    assert_int_equal(A.ep->lanes[2].qp->qp_num, before);
    assert_int_equal(A.ep->lanes[1].state, SR_IB_LANE_DEAD);
    assert_int_equal(A.ep->lanes[3].state, SR_IB_LANE_DEAD);
    assert_int_equal(A.ctx->n_repaired, 2 * SR_IB_MAX_REPAIRS);
    assert_int_equal(B.ctx->n_repaired, 2 * SR_IB_MAX_REPAIRS);
}

static void test_the_connectors_lane_fails(void **state)
{
    (void)state;
    refuse_next = 1;  /* its REQUEST goes on a later pass */
    for (int k = 0; k < 2 * SR_IB_MAX_REPAIRS; k++) {
        stale_access(&B, 0);
        pump();
        assert_connected(&B, 0);
        assert_connected(&B, 1);
    }
    assert_int_equal(refuse_next, 0);
}

static void test_both_ends_fail_at_once(void **state)
{
    (void)state;
    stale_access(&A, 2);
    stale_access(&B, 0);  /* the same pair of QPs */
    pump();
    assert_connected(&A, 2);
    assert_connected(&A, 0);
}

static void test_without_a_channel_a_lane_stays_down(void **state)
{
    (void)state;
    A.ctx->params.ctl_send = NULL;
    sr_ib_lane_fail(A.ep, &A.ep->lanes[0], "remote access error (test)");
    assert_int_equal(A.ep->lanes[0].state, SR_IB_LANE_DEAD);
    pump();
    assert_int_equal(nqueue, 0);
    assert_int_equal(A.ep->lanes[0].state, SR_IB_LANE_DEAD);
}

static void test_a_peer_that_left_ends_the_repair(void **state)
{
    (void)state;
    stale_access(&A, 0);
    sr_ib_repair(A.ctx);
    sr_ib_repair(A.ctx);
    assert_int_equal(A.ep->lanes[0].state, SR_IB_LANE_WAIT);
    sr_ib_peer_disconnect(A.ep);
    for (int l = 0; l < A.ep->nlanes; l++)
        assert_int_equal(A.ep->lanes[l].state, SR_IB_LANE_DEAD);
    pump();  /* what the peer answers is not taken any more */
    assert_int_equal(A.ep->lanes[0].state, SR_IB_LANE_DEAD);
    assert_int_equal(A.ctx->n_repaired, 0);
}

/* End e gives lane l up at its next failure: its repairs are used up. */
static void give_up(end_t *e, int l)
{
    e->ep->lanes[l].repairs = SR_IB_MAX_REPAIRS;
    sr_ib_lane_fail(e->ep, &e->ep->lanes[l], "retry counter exceeded (test)");
}

static void assert_dead(sr_ib_lane_t *lane)
{
    assert_int_equal(lane->state, SR_IB_LANE_DEAD);
    assert_int_equal(lane->down, 1);
    assert_int_equal(lane->tell_dead, 0);
}

/* Repairs are counted in a row: a lane that stayed up a good while since
 * its last repair is repaired again, however many it had before. */
static void test_repairs_are_forgotten_after_a_good_while(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &A.ep->lanes[0];
    lane->repairs = SR_IB_MAX_REPAIRS;
    lane->up_since = sr_time_ns() - 2 * SR_IB_REPAIR_FORGET_NS;
    sr_ib_lane_fail(A.ep, lane, "retry counter exceeded (test)");
    pump();
    assert_connected(&A, 0);
    assert_int_equal(lane->repairs, 1);
    /* Up again only just now: the next failures count on from there. */
    lane->repairs = SR_IB_MAX_REPAIRS;
    sr_ib_lane_fail(A.ep, lane, "retry counter exceeded (test)");
    pump();
    assert_dead(lane);
}

static void test_a_lane_the_acceptor_gives_up_dies_at_the_peer(void **state)
{
    (void)state;
    sr_ib_lane_t *peer = peer_of(&A, 0);
    uint32_t gen = peer->gen;
    give_up(&A, 0);
    pump();
    assert_dead(&A.ep->lanes[0]);
    /* The peer's end was up, connected to the QP given up. */
    assert_dead(peer);
    assert_int_not_equal(peer->gen, gen);  /* the core learns it is down */
    assert_connected(&A, 2);
    assert_int_equal(A.ctx->n_repaired + B.ctx->n_repaired, 0);
}

/* Between jobs too, a lane given up is tried again by the acceptor, once
 * its time has come, and comes back connected at both ends. */
static void test_a_lane_given_up_is_tried_again(void **state)
{
    (void)state;
    give_up(&B, 0);
    pump();
    sr_ib_lane_t *a = peer_of(&B, 0), *b = &B.ep->lanes[0];
    assert_dead(a);
    assert_dead(b);
    assert_int_equal(b->revive_at, 0);  /* the connector waits to be asked */
    assert_int_not_equal(a->revive_at, 0);
    sr_ib_revive_check(A.ep, a, a->revive_at);
    pump();
    assert_connected(&B, 0);
    assert_int_equal(a->repairs + b->repairs, 2);
}

/* e connects to the other end's process the way the cores do: the
 * connector offers (no blob), the acceptor links with the offer and
 * answers, the connector links with the answer.  Fresh endpoints. */
static const uint8_t not_local[2];

static symrail_status_t link_call(end_t *e, end_t *from)
{
    char addr[sizeof(sr_tl_peer_addr_t) + 512];
    size_t len = sizeof(addr) - sizeof(sr_tl_peer_addr_t);
    memset(addr, 0, sizeof(sr_tl_peer_addr_t));
    if (from == NULL)
        len = 0;
    else
        assert_int_equal(sr_ib_ep_addr_pack(from->ep, addr + sizeof(sr_tl_peer_addr_t), &len),
                         SYMRAIL_OK);
    sr_tl_ep_t *ep = NULL;
    symrail_status_t st = sr_ib_peer_connect(e->ctx, 1, addr, sizeof(sr_tl_peer_addr_t) + len,
                                             &ep);
    if (st == SYMRAIL_OK)
        e->ep = ep;
    return st;
}

static void test_a_rail_that_does_not_reach_the_peer_at_connect_is_left_out(void **state)
{
    (void)state;
    end_t *ends[2] = { &A, &B };
    for (int i = 0; i < 2; i++) {
        free(ends[i]->ep->lanes);
        free(ends[i]->ep);
        ends[i]->eps[1] = NULL;
        ends[i]->ctx->params.is_local = not_local;
    }
    assert_int_equal(link_call(&B, NULL), SYMRAIL_OK);  /* the offer */
    rtr_fail_port = 2;                                 /* A's second rail went down */
    assert_int_equal(link_call(&A, &B), SYMRAIL_OK);
    rtr_fail_port = 0;
    assert_int_equal(link_call(&B, &A), SYMRAIL_OK);
    /* A has 2 QPs per rail, B 1: lanes 1 and 3 of A have no counterpart. */
    assert_int_equal(A.ep->lanes[0].state, SR_IB_LANE_UP);
    assert_int_equal(A.ep->lanes[2].state, SR_IB_LANE_DEAD);
    assert_int_equal(A.ep->lanes[2].down, 1);
    assert_int_equal(A.ep->lanes[3].revive_at, 0);
    assert_int_equal(A.ep->lanes[0].down, 0);
    assert_int_equal(A.ep->lanes[1].down + A.ep->lanes[3].down, 2);
    assert_int_equal(A.ep->lanes[2].tell_dead, 1);
    assert_int_not_equal(A.ep->lanes[2].revive_at, 0);  /* A accepts: it tries again */
    assert_int_equal(B.ep->lanes[1].state, SR_IB_LANE_UP);  /* B's end of it, not told yet */
    pump();
    assert_int_equal(A.ep->lanes[2].tell_dead, 0);
    assert_int_equal(B.ep->lanes[1].state, SR_IB_LANE_DEAD);
    assert_int_equal(B.ep->lanes[0].state, SR_IB_LANE_UP);
    /* Back once tried again. */
    sr_ib_revive_check(A.ep, &A.ep->lanes[2], A.ep->lanes[2].revive_at);
    pump();
    assert_int_equal(A.ep->lanes[2].state, SR_IB_LANE_UP);
    assert_int_equal(B.ep->lanes[1].state, SR_IB_LANE_UP);
    assert_int_equal(dest_of[A.ep->lanes[2].qp->qp_num], B.ep->lanes[1].qp->qp_num);
    assert_int_equal(dest_of[B.ep->lanes[1].qp->qp_num], A.ep->lanes[2].qp->qp_num);
}

static void test_a_lane_the_connector_gives_up_dies_at_the_peer(void **state)
{
    (void)state;
    /* B asks, A makes its new QP and tells B of it, B cannot make its
     * own: A waits for an ACK that never comes. */
    give_up(&B, 0);
    pump();
    assert_dead(&B.ep->lanes[0]);
    assert_dead(peer_of(&B, 0));
    assert_connected(&B, 1);
    assert_int_equal(B.ctx->repairs_pending, 0);
    assert_int_equal(A.ctx->repairs_pending, 0);
}

static void test_giving_up_is_told_once_there_is_room(void **state)
{
    (void)state;
    refuse_next = 1;
    give_up(&A, 0);
    sr_ib_repair(A.ctx);
    assert_int_equal(A.ep->lanes[0].state, SR_IB_LANE_DEAD);
    assert_int_equal(A.ep->lanes[0].tell_dead, 1);
    assert_int_equal(nqueue, 0);
    /* Not at every repair pass meanwhile: once the peer may have caught up,
     * as a try is. */
    sr_ib_repair(A.ctx);
    assert_int_equal(nqueue, 0);
    assert_int_equal(A.ctx->repairs_pending, 0);
    assert_int_not_equal(A.ctx->revive_next, 0);
    usleep(SR_IB_TELL_RETRY_NS / 1000 + 100);
    sr_ib_revive_tick(A.ctx, sr_time_ns());
    assert_int_equal(A.ctx->repairs_pending, 1);
    pump();
    assert_int_equal(refuse_next, 0);
    assert_dead(&A.ep->lanes[0]);
    assert_dead(peer_of(&A, 0));
}

static void test_giving_up_that_cannot_be_told_ends(void **state)
{
    (void)state;
    break_next = 1;
    give_up(&A, 0);
    pump();
    assert_dead(&A.ep->lanes[0]);
    assert_int_equal(break_next, 0);
    assert_int_equal(A.ctx->repairs_pending, 0);
    /* As before: the peer's end learns it from its own failures. */
    assert_int_equal(peer_of(&A, 0)->state, SR_IB_LANE_UP);
}

/* A notification that finds no receive buffer is an accounting slip: the
 * QP must fail (7 would retry for ever, the sender stalled). */
static void test_a_qp_retries_rnr_a_finite_number_of_times(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &A.ep->lanes[0];
    rnr_retry = -1;
    assert_int_equal(sr_ib_qp_connect(lane->qp, lane->rail, &A.ep->rail_addr[0], 123, 1),
                     SYMRAIL_OK);
    assert_true(rnr_retry >= 0 && rnr_retry < 7);
}

/* Within a job too, a repair message names the peer's lane: its rails pair
 * with ours by reachability (here crosswise) and it may have other numbers
 * of QPs; a lane with no counterpart names none. */
/* Two QPs a rail at both ends. */
static int setup_two_qps(void **state)
{
    (void)state;
    nqps = nqueue = refuse_next = break_next = rtr_fails = 0;
    memset(dest_of, 0, sizeof(dest_of));
    end_make(&A, 1, 2, 2);
    end_make(&B, 0, 2, 2);
    link_lanes();
    return 0;
}

/* A rail that stopped reaching the peer (its link went down): one lane of
 * it fails and cannot be connected again.  The rail's other lane to that
 * peer, up and idle or waiting for a completion that will never come, is
 * broken at once and given up the same way, not after a stall of its own;
 * the other rail's lanes are untouched. */
static void test_a_rail_that_cannot_reach_the_peer_is_given_up_whole(void **state)
{
    (void)state;
    rtr_fails = 1;
    sr_ib_lane_fail(A.ep, &A.ep->lanes[0], "retry counter exceeded (test)");
    pump();
    for (int l = 0; l < 2; l++) {
        assert_dead(&A.ep->lanes[l]);
        assert_dead(peer_of(&A, l));
    }
    rtr_fails = 0;
    assert_connected(&A, 2);
    assert_connected(&A, 3);
    assert_int_equal(A.ctx->repairs_pending, 0);
    assert_int_equal(B.ctx->repairs_pending, 0);
}

static void test_lanes_within_a_job_are_named_by_the_pairing(void **state)
{
    (void)state;
    sr_tl_ctx_t ctx = { .qpp = 2, .nrails = 2 };
    sr_tl_ep_t ep = { .ctx = &ctx, .conn = 0, .peer_qpp = 2 };
    ep.peer_rail[0] = 1;
    ep.peer_rail[1] = 0;
    assert_int_equal(sr_ib_peer_lane(&ep, 0), 2);
    assert_int_equal(sr_ib_peer_lane(&ep, 1), 3);
    assert_int_equal(sr_ib_peer_lane(&ep, 2), 0);
    assert_int_equal(sr_ib_peer_lane(&ep, 3), 1);
    ep.peer_qpp = 1;  /* the peer has one QP a rail: our second has no peer */
    assert_int_equal(sr_ib_peer_lane(&ep, 2), 0);
    assert_int_equal(sr_ib_peer_lane(&ep, 3), UINT32_MAX);
    ep.peer_rail[1] = -1;  /* our second rail reaches none of the peer's */
    assert_int_equal(sr_ib_peer_lane(&ep, 2), UINT32_MAX);
    assert_int_equal(sr_ib_peer_lane(&ep, 0), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_acceptors_lane_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_connectors_lane_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_both_ends_fail_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_without_a_channel_a_lane_stays_down, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_peer_that_left_ends_the_repair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lane_the_acceptor_gives_up_dies_at_the_peer,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lane_given_up_is_tried_again, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_rail_that_does_not_reach_the_peer_at_connect_is_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lane_the_connector_gives_up_dies_at_the_peer,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_giving_up_is_told_once_there_is_room, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_giving_up_that_cannot_be_told_ends, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_qp_retries_rnr_a_finite_number_of_times, setup,
                                        teardown),
        cmocka_unit_test(test_lanes_within_a_job_are_named_by_the_pairing),
        cmocka_unit_test_setup_teardown(test_a_rail_that_cannot_reach_the_peer_is_given_up_whole,
                                        setup_two_qps, teardown),
        cmocka_unit_test_setup_teardown(test_repairs_are_forgotten_after_a_good_while, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
