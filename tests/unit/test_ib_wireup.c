/*
 * Connecting two PEs of one job over verbs (sr_ib_addr_pack, sr_ib_connect)
 * without a device: two verbs contexts in one process, PE 0 and PE 1, two
 * rails each, QPs made and moved by the fakes below, the notify QP's sends
 * caught and handed to the other context as its progress would.  A rail
 * whose link went down between finding the rails and connecting (its move
 * to RTR fails, as rxe's does with ENETUNREACH) is left out for that peer:
 * the connect succeeds over the other rail, the lanes there are connected
 * to the peer's, the lost rail's lanes weigh nothing, and after the wireup
 * the peer is told, so that its end of those lanes is given up at once
 * rather than after its own retries.  The rail of the notify channel
 * cannot be left out: then the connect fails, saying why.  A PE connected
 * to itself (atomics through the NIC) tells nobody.  The lanes left out
 * are tried again by the lower PE once their time has come (not before),
 * and come back connected at both ends when the link is back; while it is
 * not (the port is not active at either end, or a move to RTR fails), each
 * try fails, the lanes stay given up at both ends, rail 0 is untouched, and
 * the wait before the next try doubles up to its bound.
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

#define NQPS 256

/* ---- the fake device ---- */

static struct ibv_context fctx;
static struct ibv_qp qps[NQPS];
static uint32_t dest_of[100 + NQPS];  /* by qp_num: the peer QP of its RTR */
static int nqps;
static int fail_port;                 /* moves to RTR on this port fail */
static uint8_t sent[8][SR_IB_MSG_SIZE];
static int nsent;

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    (void)qp, (void)bad;
    assert_true(nsent < 8);
    assert_int_equal(wr->opcode, IBV_WR_SEND_WITH_IMM);
    memcpy(sent[nsent++], (void *)(uintptr_t)wr->sg_list[0].addr, wr->sg_list[0].length);
    return 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    (void)pd, (void)ia;
    assert_true(nqps < NQPS);
    struct ibv_qp *qp = &qps[nqps];
    qp->qp_num = 100 + (uint32_t)nqps++;
    qp->context = &fctx;
    return qp;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
    (void)qp;
    return 0;
}

/* The library's ibv_query_port reaches this for a context without the
 * extended ops. */
static struct ibv_context dctx[2];  /* each PE's device */
static int port_down, port_down_pe;  /* this port of this PE's device is not active */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *pa)
{
    struct ibv_port_attr *a = (struct ibv_port_attr *)(void *)pa;
    a->state = port == port_down && c == &dctx[port_down_pe] ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
    return 0;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    if (a->qp_state == IBV_QPS_RTR && a->ah_attr.port_num == fail_port)
        return errno = ENETUNREACH;
    if (a->qp_state == IBV_QPS_RTR && (mask & IBV_QP_DEST_QPN))
        dest_of[qp->qp_num] = a->dest_qp_num;
    return 0;
}

/* ---- two PEs ---- */

#define NRAILS 2
#define QPP    2

static const uint8_t is_local[2] = { 0, 0 };
static struct ibv_mr fmr;

typedef struct {
    sr_tl_ctx_t *ctx;
    sr_tl_ep_t  *eps[2];
    uint64_t     credits[4];
    uint8_t      use[2];
    struct ibv_qp *nqps[2];
    char         slot[SR_IB_MSG_SIZE];
} pe_t;

static pe_t P[2];

static void pe_make(pe_t *p, int me)
{
    sr_tl_ctx_t *ctx = calloc(1, sizeof(*ctx));
    assert_non_null(ctx);
    memset(p, 0, sizeof(*p));
    ctx->params.my_pe = me;
    ctx->params.n_pes = 2;
    ctx->params.is_local = is_local;
    ctx->max_wr = 8;
    ctx->qpp = QPP;
    ctx->depth = 64;
    ctx->slots = 32;
    ctx->window0 = 16;
    ctx->ndevs = 1;
    snprintf(ctx->devs[0].name, sizeof(ctx->devs[0].name), "fake0");
    ctx->devs[0].scratch_mr = &fmr;
    ctx->devs[0].ctx = &dctx[me];
    ctx->nrails = NRAILS;
    for (int r = 0; r < NRAILS; r++) {
        ctx->rails[r].dev = &ctx->devs[0];
        ctx->rails[r].port = 1 + r;
        ctx->rails[r].mtu = IBV_MTU_1024;
        ctx->rails[r].weight = 1;
    }
    size_t nl = 2 * NRAILS * QPP;
    ctx->lanes = calloc(nl, sizeof(*ctx->lanes));
    assert_non_null(ctx->lanes);
    for (size_t l = 0; l < nl; l++) {
        ctx->lanes[l].rail = &ctx->rails[(l / QPP) % NRAILS];
        sr_ib_lane_depth(&ctx->lanes[l], ctx->max_wr);
        ctx->lanes[l].qp = ibv_create_qp(NULL, NULL);
        pthread_mutex_init(&ctx->lanes[l].lock, NULL);
    }
    for (int pe = 0; pe < 2; pe++)
        p->nqps[pe] = ibv_create_qp(NULL, NULL);
    p->use[0] = p->use[1] = 1;
    ctx->use = p->use;
    ctx->nqps = p->nqps;
    ctx->credits = p->credits;
    ctx->eps = p->eps;
    ctx->neps = 2;
    ctx->send_slots = p->slot;
    ctx->nsend_free = 1;
    pthread_mutex_init(&ctx->nlock, NULL);
    pthread_mutex_init(&ctx->rlock, NULL);
    pthread_mutex_init(&ctx->flock, NULL);
    p->ctx = ctx;
}

static int setup(void **state)
{
    (void)state;
    nqps = nsent = fail_port = port_down = port_down_pe = 0;
    memset(dest_of, 0, sizeof(dest_of));
    fctx.ops.post_send = fake_post_send;
    pe_make(&P[0], 0);
    pe_make(&P[1], 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        for (int pe = 0; pe < 2; pe++)
            free(P[i].eps[pe]);
        free(P[i].ctx->lanes);
        free(P[i].ctx);
    }
    return 0;
}

/* `from` connects to PE `to` (possibly itself) with the address it packed. */
static symrail_status_t connect_to(int from, int to)
{
    char addr[1024];
    size_t len = sizeof(addr);
    assert_int_equal(sr_ib_addr_pack(P[to].ctx, addr, &len), SYMRAIL_OK);
    assert_true(sr_ib_reachable(P[from].ctx, to, addr, len));
    sr_tl_ep_t *ep = NULL;
    symrail_status_t st = sr_ib_connect(P[from].ctx, to, addr, len, &ep);
    assert_true(st == SYMRAIL_OK ? ep != NULL : P[from].ctx->eps[to] == NULL);
    return st;
}

static sr_ib_lane_t *lane_of(int me, int pe, int r, int q)
{
    return &P[me].ctx->lanes[((size_t)pe * NRAILS + r) * QPP + q];
}

/* What `from` sent over its notify QPs goes to the other PE's progress. */
static void deliver(int from)
{
    for (int i = 0; i < nsent; i++)
        sr_ib_ctl_recv(P[1 - from].ctx, from, sent[i] + SR_IB_MSG_HDR, sizeof(sr_ib_ctl_t));
    nsent = 0;
}

static void test_a_rail_down_at_connect_is_left_out(void **state)
{
    (void)state;
    assert_int_equal(connect_to(1, 0), SYMRAIL_OK);  /* PE 1's rails both work */
    fail_port = 2;                                   /* PE 0's second rail went down */
    assert_int_equal(connect_to(0, 1), SYMRAIL_OK);
    fail_port = 0;
    sr_tl_ep_t *ep = P[0].ctx->eps[1];
    uint32_t w[NRAILS * QPP];
    assert_int_equal(sr_ib_ep_lanes(ep, w, NRAILS * QPP), NRAILS * QPP);
    for (int q = 0; q < QPP; q++) {
        sr_ib_lane_t *a = lane_of(0, 1, 0, q), *b = lane_of(1, 0, 0, q);
        assert_int_equal(a->state, SR_IB_LANE_UP);
        assert_int_equal(dest_of[a->qp->qp_num], b->qp->qp_num);
        assert_int_equal(w[q], 1);
        sr_ib_lane_t *d = lane_of(0, 1, 1, q);
        assert_int_equal(d->state, SR_IB_LANE_DEAD);
        assert_int_equal(d->down, 1);
        assert_int_equal(d->tell_dead, 1);
        assert_int_equal(w[QPP + q], 0);
        assert_int_equal(lane_of(1, 0, 1, q)->state, SR_IB_LANE_UP);  /* not told yet */
    }
    assert_int_equal(P[0].ctx->rails[1].left_out, 1);
    assert_int_equal(nsent, 0);  /* nothing goes out before the wireup is over */

    /* The first repair pass tells PE 1, whose end of the lanes goes too. */
    assert_int_equal(P[0].ctx->repairs_pending, 1);
    P[0].ctx->nsend_free = 0;  /* no send slot: told a little later */
    sr_ib_repair(P[0].ctx);
    assert_int_equal(nsent, 0);
    sr_ib_repair(P[0].ctx);
    assert_int_equal(P[0].ctx->repairs_pending, 0);  /* no pass in every progress call */
    for (int q = 0; q < QPP; q++) {
        assert_int_equal(lane_of(0, 1, 1, q)->tell_dead, 1);
        /* one slot, one message a pass */
        P[0].ctx->nsend_free = 1;
        usleep(SR_IB_TELL_RETRY_NS / 1000 + 100);
        sr_ib_revive_tick(P[0].ctx, sr_time_ns());
        assert_int_equal(P[0].ctx->repairs_pending, 1);
        sr_ib_repair(P[0].ctx);
        deliver(0);
    }
    sr_ib_repair(P[0].ctx);
    assert_int_equal(nsent, 0);
    for (int q = 0; q < QPP; q++) {
        assert_int_equal(lane_of(0, 1, 1, q)->tell_dead, 0);
        assert_int_equal(lane_of(1, 0, 1, q)->state, SR_IB_LANE_DEAD);
        assert_int_equal(lane_of(1, 0, 0, q)->state, SR_IB_LANE_UP);
    }
    assert_int_equal(sr_ib_ep_lanes(P[1].ctx->eps[0], w, NRAILS * QPP), NRAILS * QPP);
    assert_int_equal(w[0] + w[1] + w[2] + w[3], 2);
}

/* Both PEs' repair passes, and the messages between them, until quiet. */
static void pump(void)
{
    for (int i = 0; i < 20; i++) {
        for (int p = 0; p < 2; p++) {
            /* The fake completes no send, and the peer takes every message. */
            sr_tl_ep_t *ep = P[p].ctx->eps[1 - p];
            P[p].ctx->nsend_free = 1;
            ep->n_send_done = ep->n_sent;
            P[p].credits[2 * (1 - p)] = ep->n_sent;
            P[p].credits[2 * (1 - p) + 1] = ep->n_sent + 16;
            sr_ib_repair(P[p].ctx);
            deliver(p);
        }
        usleep(SR_IB_TELL_RETRY_NS / 1000 + 100);  /* a DEAD that found no slot goes again */
    }
}

/* Rail 1 down at PE 0's connect; both ends of its lanes given up. */
static void rail_left_out(void)
{
    assert_int_equal(connect_to(1, 0), SYMRAIL_OK);
    fail_port = 2;
    assert_int_equal(connect_to(0, 1), SYMRAIL_OK);
    pump();
    for (int q = 0; q < QPP; q++) {
        assert_int_equal(lane_of(0, 1, 1, q)->state, SR_IB_LANE_DEAD);
        assert_int_equal(lane_of(1, 0, 1, q)->state, SR_IB_LANE_DEAD);
        /* As if they had been up a good while before they were given up
         * (after some tries): the first try comes after the shortest
         * wait, and that must not make every later try the first. */
        lane_of(0, 1, 1, q)->up_since = lane_of(1, 0, 1, q)->up_since =
            sr_time_ns() - 2 * SR_IB_REPAIR_FORGET_NS;
        lane_of(0, 1, 1, q)->revive_ns = 8 * SR_IB_REVIVE_MIN_NS;
        sr_ib_revive_plan(P[0].ctx->eps[1], QPP + q);
        assert_int_equal(lane_of(0, 1, 1, q)->revive_ns, SR_IB_REVIVE_MIN_NS);
    }
}

/* The lower PE's tries of its lanes on rail 1 are due now. */
static void revive_due(void)
{
    for (int q = 0; q < QPP; q++) {
        sr_ib_lane_t *lane = lane_of(0, 1, 1, q);
        assert_int_not_equal(lane->revive_at, 0);
        assert_int_equal(lane_of(1, 0, 1, q)->revive_at, 0);  /* the lower PE tries */
        sr_ib_revive_check(P[0].ctx->eps[1], lane, lane->revive_at - 1);
        assert_int_equal(lane->revive_due, 0);                /* not yet */
        sr_ib_revive_check(P[0].ctx->eps[1], lane, lane->revive_at);
        assert_int_equal(lane->revive_due, 1);
    }
}

static void test_a_rail_left_out_comes_back_when_its_link_does(void **state)
{
    (void)state;
    rail_left_out();
    /* Before its time nothing is tried. */
    pump();
    assert_int_equal(lane_of(0, 1, 1, 0)->state, SR_IB_LANE_DEAD);
    fail_port = 0;  /* the link is back */
    /* The progress thread sees the first try come due, and asks for a
     * repair pass, which makes it; a pass before the time re-arms it. */
    sr_tl_ctx_t *c0 = P[0].ctx;
    uint64_t next = c0->revive_next, at0 = lane_of(0, 1, 1, 0)->revive_at;
    assert_true(next != 0 && next <= at0);
    c0->repairs_pending = 0;
    sr_ib_revive_tick(c0, next - 1);
    assert_int_equal(c0->repairs_pending, 0);
    sr_ib_revive_tick(c0, next);
    assert_int_equal(c0->repairs_pending, 1);
    assert_int_equal(c0->revive_next, 0);
    sr_ib_repair(c0);  /* too early by the clock: nothing tried, the try armed again */
    assert_int_equal(c0->revive_next, at0 < lane_of(0, 1, 1, 1)->revive_at
                                          ? at0 : lane_of(0, 1, 1, 1)->revive_at);
    assert_int_equal(lane_of(0, 1, 1, 0)->state, SR_IB_LANE_DEAD);
    for (int q = 0; q < QPP; q++)
        lane_of(0, 1, 1, q)->revive_at = 1;  /* time has passed */
    pump();
    uint32_t w[NRAILS * QPP];
    for (int q = 0; q < QPP; q++) {
        sr_ib_lane_t *a = lane_of(0, 1, 1, q), *b = lane_of(1, 0, 1, q);
        assert_int_equal(a->state, SR_IB_LANE_UP);
        assert_int_equal(b->state, SR_IB_LANE_UP);
        assert_int_equal(a->down, 0);
        assert_int_equal(dest_of[a->qp->qp_num], b->qp->qp_num);
        assert_int_equal(dest_of[b->qp->qp_num], a->qp->qp_num);
        assert_int_equal(a->rqpn, b->qp->qp_num);
        assert_int_equal(b->rqpn, a->qp->qp_num);
    }
    for (int p = 0; p < 2; p++) {
        assert_int_equal(sr_ib_ep_lanes(P[p].ctx->eps[1 - p], w, NRAILS * QPP), NRAILS * QPP);
        for (int l = 0; l < NRAILS * QPP; l++)
            assert_int_equal(w[l], 1);
    }
}

static void test_a_rail_still_down_is_tried_again_later_and_later(void **state)
{
    (void)state;
    rail_left_out();
    uint64_t first = lane_of(0, 1, 1, 0)->revive_ns;
    assert_int_equal(first, SR_IB_REVIVE_MIN_NS);
    /* Its port not active: no QP made, nothing sent, a later try. */
    port_down = 2;
    int made = nqps;
    revive_due();
    pump();
    assert_int_equal(nqps, made);
    assert_int_equal(lane_of(0, 1, 1, 0)->revive_ns, 2 * first);
    assert_int_equal(lane_of(0, 1, 1, 0)->state, SR_IB_LANE_DEAD);
    first *= 2;
    /* Its port active again at PE 0, not yet at PE 1: PE 1 says no. */
    port_down_pe = 1;
    fail_port = 0;
    made = nqps;
    revive_due();
    pump();
    assert_int_equal(nqps, made + QPP);  /* PE 0's new QPs only */
    for (int q = 0; q < QPP; q++) {
        assert_int_equal(lane_of(0, 1, 1, q)->state, SR_IB_LANE_DEAD);
        assert_int_equal(lane_of(1, 0, 1, q)->state, SR_IB_LANE_DEAD);
        assert_int_equal(lane_of(0, 1, 1, q)->revive_ns, 2 * first);
    }
    first *= 2;
    port_down = 0;
    fail_port = 2;
    revive_due();
    pump();  /* still down: PE 0's move to RTR fails when PE 1 answers */
    for (int q = 0; q < QPP; q++) {
        sr_ib_lane_t *a = lane_of(0, 1, 1, q);
        assert_int_equal(a->state, SR_IB_LANE_DEAD);
        assert_int_equal(lane_of(1, 0, 1, q)->state, SR_IB_LANE_DEAD);  /* told */
        assert_int_equal(a->revive_ns, 2 * first);
        assert_int_equal(lane_of(0, 1, 0, q)->state, SR_IB_LANE_UP);  /* rail 0 untouched */
    }
    /* The wait doubles up to its bound. */
    for (int i = 0; i < 10; i++) {
        revive_due();
        pump();
    }
    assert_int_equal(lane_of(0, 1, 1, 0)->revive_ns, SR_IB_REVIVE_MAX_NS);
    assert_int_equal(lane_of(0, 1, 1, 0)->state, SR_IB_LANE_DEAD);
    fail_port = 0;
    revive_due();
    pump();
    assert_int_equal(lane_of(0, 1, 1, 0)->state, SR_IB_LANE_UP);
    assert_int_equal(lane_of(1, 0, 1, 1)->state, SR_IB_LANE_UP);
}

/* One repair pass of PE p, its messages kept in sent[]. */
static void step(int p)
{
    sr_tl_ep_t *ep = P[p].ctx->eps[1 - p];
    P[p].ctx->nsend_free = 8;  /* one slot, copied at post by the fake */
    ep->n_send_done = ep->n_sent;
    P[p].credits[2 * (1 - p)] = ep->n_sent;
    P[p].credits[2 * (1 - p) + 1] = ep->n_sent + 16;
    sr_ib_repair(P[p].ctx);
}

/* A DEAD that PE 1 still owed from before crosses PE 0's try: PE 0 waits
 * for the answer to its RECONNECT instead, which PE 1 gives. */
static void test_a_stale_dead_does_not_end_a_try(void **state)
{
    (void)state;
    rail_left_out();
    fail_port = 0;  /* the link is back */
    for (int q = 0; q < QPP; q++)
        lane_of(1, 0, 1, q)->tell_dead = 1;  /* owed, not sent yet */
    revive_due();
    for (int i = 0; i < 3; i++)
        step(0);  /* tried, new QPs made, RECONNECTs out */
    for (int q = 0; q < QPP; q++)
        assert_int_equal(lane_of(0, 1, 1, q)->state, SR_IB_LANE_WAIT);
    uint8_t held[8][SR_IB_MSG_SIZE];
    int nheld = nsent;
    memcpy(held, sent, sizeof(held));
    nsent = 0;
    step(1);  /* PE 1 pays what it owed */
    assert_int_equal(nsent, QPP);
    deliver(1);
    for (int q = 0; q < QPP; q++)
        assert_int_equal(lane_of(0, 1, 1, q)->state, SR_IB_LANE_WAIT);
    memcpy(sent, held, sizeof(held));
    nsent = nheld;
    deliver(0);
    pump();
    for (int q = 0; q < QPP; q++) {
        assert_int_equal(lane_of(0, 1, 1, q)->state, SR_IB_LANE_UP);
        assert_int_equal(lane_of(1, 0, 1, q)->state, SR_IB_LANE_UP);
        assert_int_equal(dest_of[lane_of(0, 1, 1, q)->qp->qp_num], lane_of(1, 0, 1, q)->qp->qp_num);
    }
}

/* A try the peer never answers ends, and the lane waits for the next. */
static void test_a_try_with_no_answer_ends(void **state)
{
    (void)state;
    rail_left_out();
    uint64_t ns = lane_of(0, 1, 1, 0)->revive_ns;
    revive_due();
    for (int i = 0; i < 3; i++)
        step(0);
    nsent = 0;  /* lost */
    sr_ib_lane_t *a = lane_of(0, 1, 1, 0);
    assert_int_equal(a->state, SR_IB_LANE_WAIT);
    step(0);
    assert_int_equal(a->state, SR_IB_LANE_WAIT);  /* not yet */
    a->try_until = 1;
    step(0);
    assert_int_equal(a->state, SR_IB_LANE_DEAD);
    assert_int_equal(a->revive_ns, 2 * ns);
    assert_int_not_equal(a->revive_at, 0);
}

static void test_the_notify_rail_cannot_be_left_out(void **state)
{
    (void)state;
    fail_port = 1;
    assert_int_equal(connect_to(0, 1), SYMRAIL_ERR_TRANSPORT);
    assert_null(P[0].ctx->eps[1]);
}

static void test_a_pe_connected_to_itself_tells_nobody(void **state)
{
    (void)state;
    fail_port = 2;
    assert_int_equal(connect_to(0, 0), SYMRAIL_OK);
    for (int q = 0; q < QPP; q++) {
        assert_int_equal(lane_of(0, 0, 1, q)->state, SR_IB_LANE_DEAD);
        assert_int_equal(lane_of(0, 0, 1, q)->tell_dead, 0);
    }
    sr_ib_repair(P[0].ctx);
    assert_int_equal(nsent, 0);
    assert_int_equal(P[0].ctx->repairs_pending, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_rail_down_at_connect_is_left_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_rail_left_out_comes_back_when_its_link_does,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_rail_still_down_is_tried_again_later_and_later,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_stale_dead_does_not_end_a_try, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_try_with_no_answer_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_notify_rail_cannot_be_left_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_pe_connected_to_itself_tells_nobody, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
