/*
 * The core's request/slice machinery against a scripted transport: slices
 * are spread over lanes by weight, a lane with no room makes the core
 * progress and post again, a failed slice is retried on another lane, and a
 * request completes exactly when all its slices have (or fails with the
 * slice's error).  The transport here is a fault-injection stand-in; real
 * data movement is proven by the integration tests.
 */
#include "fake_tl.h"

static void test_weights(void **state)
{
    (void)state;
    static char buf[8000];
    assert_int_equal(sr_rma(C, 1, buf, 0, 8000, 0, 1), SYMRAIL_OK);
    /* 8 slices over weights 1:2:1 */
    assert_int_equal(fk.posted[0], 2);
    assert_int_equal(fk.posted[1], 4);
    assert_int_equal(fk.posted[2], 2);
    assert_each_byte_once(8000);
}

static void test_pick_interleaves(void **state)
{
    (void)state;
    sr_lanes_t l;
    sr_lane_rr_t rr = { { 0 } };
    uint32_t w[3] = { 1, 2, 1 };
    sr_lanes_set(&l, w, 3);
    /* Smooth: the heavy lane never gets more than two in a row. */
    int prev = -1, run = 0;
    for (int i = 0; i < 400; i++) {
        int p = sr_lanes_pick(&l, &rr, -1);
        run = p == prev ? run + 1 : 1;
        prev = p;
        assert_true(run <= 2);
    }
    assert_int_equal(sr_lanes_pick(&l, &rr, 1) == 1, 0);  /* avoid honoured while others are up */
    w[0] = w[2] = 0;
    sr_lanes_set(&l, w, 3);
    assert_int_equal(sr_lanes_pick(&l, &rr, 1), 1);  /* ... but not when it is the only one */
    w[1] = 0;
    sr_lanes_set(&l, w, 3);
    assert_int_equal(sr_lanes_pick(&l, &rr, -1), -1);
}

static void test_backpressure(void **state)
{
    (void)state;
    static char buf[50000];
    fk.room = 2;  /* far fewer slots than slices */
    assert_int_equal(sr_rma(C, 1, buf, 0, 50000, 0, 1), SYMRAIL_OK);
    assert_true(fk.again > 0);
    assert_true(C->stats.backpressure_stalls > 0);
    for (int l = 0; l < NLANES; l++)
        assert_true(fk.outstanding[l] == 0);
    assert_each_byte_once(50000);
}

static void test_retry_other_lane(void **state)
{
    (void)state;
    static char buf[20000];
    fk.failing_lane = 1;
    assert_int_equal(sr_rma(C, 0, buf, 0, 20000, 0, 1), SYMRAIL_OK);
    assert_true(C->stats.retries > 0);
    assert_int_equal(fk.weights[1], 0);
    assert_each_byte_once(20000);
}

static void test_all_lanes_fail(void **state)
{
    (void)state;
    static char buf[5000];
    fk.weights[0] = 0;
    fk.weights[2] = 0;
    sr_peer_lanes_refresh(0);
    fk.failing_lane = 1;
    assert_int_equal(sr_rma(C, 1, buf, 0, 5000, 0, 1), SYMRAIL_ERR_TRANSPORT);
    /* Nothing is left in flight or queued after the failure. */
    assert_int_equal(fk.nq, 0);
    assert_null(C->retry_head);
}

static void test_nbi_quiet(void **state)
{
    (void)state;
    static char buf[30000];
    for (int i = 0; i < 3; i++)
        assert_int_equal(sr_rma(C, 1, buf + i * 10000, (uint64_t)i * 10000, 10000, 0, 0), SYMRAIL_OK);
    assert_true(C->nbi.remaining > 0);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
    assert_int_equal(C->nbi.remaining, 0);
    assert_each_byte_once(30000);
    /* A failure in an nbi transfer surfaces at quiet, once. */
    fk.failing_lane = 0;
    fk.weights[1] = fk.weights[2] = 0;
    sr_peer_lanes_refresh(0);
    assert_int_equal(sr_rma(C, 1, buf, 0, 3000, 0, 0), SYMRAIL_OK);
    assert_int_equal(sr_quiet(C), SYMRAIL_ERR_TRANSPORT);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
}

/* A lane that stays full must not keep being offered the slice while
 * another lane is free (once: 297 "no room" answers from lane 0 and a
 * timeout while lane 1 was idle). */
static void test_full_lane_is_passed_over(void **state)
{
    (void)state;
    static char buf[8000];
    fk.stuck_lane = 1;  /* the heaviest lane: the first one a reset round robin picks */
    assert_int_equal(sr_rma(C, 1, buf, 0, 8000, 0, 1), SYMRAIL_OK);
    assert_int_equal(fk.posted[1], 0);
    assert_each_byte_once(8000);
}

/* The round robin goes on where it was across a weight refresh. */
static void test_refresh_keeps_round_robin(void **state)
{
    (void)state;
    sr_lanes_t l;
    sr_lane_rr_t rr = { { 0 } };
    uint32_t w[2] = { 1, 1 };
    sr_lanes_set(&l, w, 2);
    int first = sr_lanes_pick(&l, &rr, -1);
    sr_lanes_set(&l, w, 2);
    assert_int_not_equal(sr_lanes_pick(&l, &rr, -1), first);
}

/* Lane reports from the transport: down, a stale "up", then a newer "up". */
static void test_lane_events(void **state)
{
    (void)state;
    sr_peer_t *p = &sr_rt.peers[0];
    sr_lane_event(NULL, 0, 1, 0, 2);
    assert_int_equal(p->lanes.weight[1], 0);
    sr_lane_event(NULL, 0, 1, 2, 1);  /* older than what we know */
    assert_int_equal(p->lanes.weight[1], 0);
    sr_lane_event(NULL, 0, 1, 5, 3);  /* repaired */
    assert_int_equal(p->lanes.weight[1], 5);
    sr_lane_event(NULL, 7, 1, 0, 9);  /* no such PE: ignored */
    sr_lane_event(NULL, 0, SR_TL_MAX_LANES, 0, 9);
}

/* Fills the stack where a finished call's frame was, lets late completions
 * in, and checks that none of them wrote there. */
static __attribute__((noinline)) int late_completions_hit_stack(void)
{
    volatile unsigned char frame[8192];
    for (size_t i = 0; i < sizeof(frame); i++)
        frame[i] = 0x5a;
    fk.hold = 0;
    fake_progress(NULL);
    for (size_t i = 0; i < sizeof(frame); i++)
        if (frame[i] != 0x5a)
            return 1;
    return 0;
}

/* A blocking call that timed out leaves its request behind, not its frame. */
static void test_timeout_then_late_completion(void **state)
{
    (void)state;
    static char buf[3000];
    sr_rt.env.op_timeout = 50;
    fk.hold = 1;
    assert_int_equal(sr_rma(C, 1, buf, 0, 3000, 0, 1), SYMRAIL_ERR_TIMEOUT);
    assert_true(fk.nq > 0);
    assert_int_equal(late_completions_hit_stack(), 0);
    assert_int_equal(fk.nq, 0);
}

/* A peer whose operations since the last fence all went down one ordered
 * lane needs no wait; one spread over lanes waits for its own. */
static void test_fence(void **state)
{
    (void)state;
    static char buf[6000];
    fk.weights[0] = fk.weights[2] = 0;
    sr_peer_lanes_refresh(0);
    assert_int_equal(sr_rma(C, 1, buf, 0, 3000, 0, 0), SYMRAIL_OK);
    fk.hold = 1;
    assert_int_equal(sr_fence(C), SYMRAIL_OK);  /* one ordered lane: returns at once */
    assert_true(C->peers[0].inflight > 0);
    fk.hold = 0;
    fake_progress(NULL);  /* done: what follows need not keep to its lane */
    fk.weights[0] = fk.weights[2] = 1;
    sr_peer_lanes_refresh(0);
    assert_int_equal(sr_rma(C, 1, buf + 3000, 3000, 3000, 0, 0), SYMRAIL_OK);
    assert_int_equal(C->peers[0].fence_lane, SR_LANE_MANY);
    assert_int_equal(sr_fence(C), SYMRAIL_OK);
    assert_int_equal(C->peers[0].inflight, 0);
    assert_int_equal(C->peers[0].fence_lane, SR_LANE_NONE);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
    assert_each_byte_once(6000);
}

/* A slice refused at post waits in the retry queue: a fence waits for it
 * too, or a later put could overtake it. */
static void test_fence_waits_for_retried_slice(void **state)
{
    (void)state;
    static char buf[1000];
    fk.refuse_lane = 1;  /* the lane the first pick takes */
    assert_int_equal(sr_rma(C, 1, buf, 0, 1000, 0, 0), SYMRAIL_OK);
    fk.refuse_lane = -1;
    fk.hold = 1;
    assert_non_null(C->retry_head);
    assert_true(C->peers[0].inflight > 0);
    fk.hold = 0;
    assert_int_equal(sr_fence(C), SYMRAIL_OK);
    assert_null(C->retry_head);
    assert_int_equal(C->peers[0].inflight, 0);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
    assert_each_byte_once(1000);
}

/* Puts that completed locally are flushed by quiet, and only once. */
static void test_local_completion_flush(void **state)
{
    (void)state;
    static char buf[100];
    fk.local = 1;
    sr_rt.peers[0].local_comp = 1;
    assert_int_equal(sr_rma(C, 1, buf, 0, 8, 0, 1), SYMRAIL_OK);  /* returns at post */
    assert_int_equal(sr_rma(C, 1, buf, 8, 8, 0, 0), SYMRAIL_OK);
    assert_int_equal(fk.flushes, 0);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
    assert_int_equal(fk.flushes, 1);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
    assert_int_equal(fk.flushes, 1);  /* nothing new to flush */
    assert_each_byte_once(16);
}
/* An atomic that times out is reported in one line, not two. */
static void test_atomic_timeout_logged_once(void **state)
{
    (void)state;
    char path[] = "/tmp/test_core_rma.XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    assert_true(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    sr_rt.env.op_timeout = 50;
    uint64_t old = 0;
    symrail_status_t st = sr_amo(C, SR_TL_AMO_ADD, 0, 1, 0, 0, &old);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(st, SYMRAIL_ERR_TIMEOUT);
    FILE *f = fdopen(fd, "r");
    rewind(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof(line), f))
        n += strstr(line, "error") != NULL;
    fclose(f);
    unlink(path);
    assert_int_equal(n, 1);
}

/* An atomic the transport takes in flight; its 8-byte result is there
 * before its completion, as a NIC's would be. */
static symrail_status_t fake_atomic_queued(sr_tl_ep_t *ep, int lane, sr_tl_amo_t op,
                                           uint32_t region, uint64_t roff, uint64_t operand,
                                           uint64_t compare, uint64_t *result_p,
                                           sr_tl_comp_t *comp)
{
    (void)op, (void)operand, (void)compare;
    symrail_status_t st = fake_rma(ep, lane, NULL, region, roff, 0, comp);
    if (st == SR_TL_INPROGRESS && result_p)
        *result_p = UINT64_C(0x1122334455667788) + roff;
    return st;
}

/* A non-blocking fetching atomic: its result reaches the caller's 4 or 8
 * bytes (and no more) when it completes, by the quiet that waits for it;
 * one that fails in flight is the quiet's error, is not posted again, and
 * leaves the caller's result alone. */
static void test_atomic_nbi(void **state)
{
    (void)state;
    const uint32_t G = 0xa5a5a5a5u;
    uint32_t f[3] = { G, G, G };
    uint64_t f64 = 0;
    fake_ops.atomic = fake_atomic_queued;
    fk.hold = 1;
    assert_int_equal(sr_amo_nbi(C, (sr_tl_amo_t)(SR_TL_AMO_ADD | SR_TL_AMO_W32), 8, 1, 0, 0,
                                &f[1]), SYMRAIL_OK);
    assert_int_equal(sr_amo_nbi(C, SR_TL_AMO_SWAP, 16, 5, 0, 0, &f64), SYMRAIL_OK);
    assert_int_equal(sr_amo_nbi(C, SR_TL_AMO_OR, 24, 5, 0, 0, NULL), SYMRAIL_OK);
    assert_int_equal(f[1], G);  /* not before it completes */
    assert_int_equal(C->peers[0].inflight, 3);  /* a fence waits for them */
    assert_int_equal(C->nbi.remaining, 3);
    fk.hold = 0;
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
    assert_int_equal(f[1], 0x55667790u);
    assert_int_equal(f[0], G);
    assert_int_equal(f[2], G);
    assert_true(f64 == UINT64_C(0x1122334455667798));
    assert_int_equal(C->peers[0].inflight, 0);

    f[1] = G;
    fk.hold = 1;
    assert_int_equal(sr_amo_nbi(C, (sr_tl_amo_t)(SR_TL_AMO_FETCH | SR_TL_AMO_W32), 8, 0, 0, 0,
                                &f[1]), SYMRAIL_OK);
    assert_int_equal(fk.nq, 1);
    fk.failing_lane = fk.q[0].lane;
    int posted = fk.posted[0] + fk.posted[1] + fk.posted[2];
    fk.hold = 0;
    assert_int_equal(sr_quiet(C), SYMRAIL_ERR_TRANSPORT);
    assert_int_equal(fk.posted[0] + fk.posted[1] + fk.posted[2], posted);  /* never twice */
    assert_int_equal(f[1], G);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
}

/* An atomic whose QP failed under it after it was applied, once. */
static int lost_calls;
static symrail_status_t fake_atomic_lost_once(sr_tl_ep_t *ep, int lane, sr_tl_amo_t op,
                                              uint32_t region, uint64_t roff, uint64_t operand,
                                              uint64_t compare, uint64_t *result_p,
                                              sr_tl_comp_t *comp)
{
    (void)ep, (void)lane, (void)op, (void)region, (void)roff, (void)operand, (void)compare;
    (void)result_p, (void)comp;
    return lost_calls++ == 0 ? SYMRAIL_ERR_RESULT_LOST : SYMRAIL_OK;
}

/* A SET of a word only this PE writes (barrier flags) goes again when its
 * answer was lost: a second one leaves the same value.  Any other atomic
 * is never applied twice: it ends with RESULT_LOST.  Before, the barrier's
 * SET failed the barrier with RESULT_LOST. */
static void test_set_own_again_after_lost(void **state)
{
    (void)state;
    fake_ops.atomic = fake_atomic_lost_once;
    lost_calls = 0;
    assert_int_equal(sr_amo_set_own(C, 8, 1, 0), SYMRAIL_OK);
    assert_int_equal(lost_calls, 2);
    lost_calls = 0;
    assert_int_equal(sr_amo(C, SR_TL_AMO_SET, 8, 1, 0, 0, NULL), SYMRAIL_ERR_RESULT_LOST);
    assert_int_equal(lost_calls, 1);
}

/* A rail taken down fails the SET posted on it outright (TRANSPORT, not
 * RESULT_LOST).  The barrier's SET of its own word goes again on another
 * lane; any other atomic still fails.  Before, the barrier failed the job
 * ("transport failure") while another rail was up. */
static int down_lane = -1, down_calls, down_last_lane = -1;
static symrail_status_t fake_atomic_lane_down(sr_tl_ep_t *ep, int lane, sr_tl_amo_t op,
                                              uint32_t region, uint64_t roff, uint64_t operand,
                                              uint64_t compare, uint64_t *result_p,
                                              sr_tl_comp_t *comp)
{
    (void)ep, (void)op, (void)region, (void)roff, (void)operand, (void)compare;
    (void)result_p, (void)comp;
    down_calls++;
    down_last_lane = lane;
    if (down_lane < 0)
        down_lane = lane;  /* the first lane tried is the one that went down */
    return lane == down_lane ? SYMRAIL_ERR_TRANSPORT : SYMRAIL_OK;
}

static void test_set_own_again_after_lane_down(void **state)
{
    (void)state;
    fake_ops.atomic = fake_atomic_lane_down;
    down_lane = -1, down_calls = 0;
    assert_int_equal(sr_amo_set_own(C, 8, 1, 0), SYMRAIL_OK);
    assert_int_equal(down_calls, 2);
    assert_int_not_equal(down_last_lane, down_lane);
    /* Not its own word: never applied twice, so it fails. */
    down_lane = -1, down_calls = 0;
    assert_int_equal(sr_amo(C, SR_TL_AMO_SET, 8, 1, 0, 0, NULL), SYMRAIL_ERR_TRANSPORT);
    assert_int_equal(down_calls, 1);
}

/* The same machinery with SYMRAIL_SPRAY=adaptive (the default at init). */
static int setup_adaptive(void **state)
{
    setup(state);
    sr_rt.spray = 1;
    return sr_spray_setup() == SYMRAIL_OK && sr_rt.spray ? 0 : -1;
}

#define ADAPTIVE(t) { #t " (adaptive)", t, setup_adaptive, teardown, NULL }

int main(void)
{
    const struct CMUnitTest tests[] = {
        ADAPTIVE(test_backpressure),
        ADAPTIVE(test_retry_other_lane),
        ADAPTIVE(test_all_lanes_fail),
        ADAPTIVE(test_nbi_quiet),
        ADAPTIVE(test_full_lane_is_passed_over),
        ADAPTIVE(test_lane_events),
        ADAPTIVE(test_timeout_then_late_completion),
        ADAPTIVE(test_local_completion_flush),
        ADAPTIVE(test_fence_waits_for_retried_slice),
        cmocka_unit_test_setup_teardown(test_weights, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pick_interleaves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backpressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_other_lane, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_lanes_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nbi_quiet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_lane_is_passed_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refresh_keeps_round_robin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lane_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_then_late_completion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_completion_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fence_waits_for_retried_slice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomic_timeout_logged_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomic_nbi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_own_again_after_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_own_again_after_lane_down, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
