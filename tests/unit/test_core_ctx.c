/*
 * Contexts and fence in the core, against the scripted transport: quiet on
 * one context waits for its own operations only and flushes only its lanes;
 * a fence that does not wait keeps what follows on the fenced lane (atomics
 * retried for room included), and a long transfer after it waits and
 * sprays; a context destroyed with operations in the transport is kept.
 */
#include "fake_tl.h"

/* A fence that does not wait (what is pending is on one ordered lane) must
 * keep what follows on that lane: on another lane it could overtake. */
static void test_fence_keeps_lane(void **state)
{
    (void)state;
    static char buf[200];
    fk.hold = 1;
    assert_int_equal(sr_rma(C, 1, buf, 0, 100, 0, 0), SYMRAIL_OK);
    assert_int_equal(sr_fence(C), SYMRAIL_OK);
    assert_int_equal(sr_rma(C, 1, buf + 100, 100, 100, 0, 0), SYMRAIL_OK);
    assert_int_equal(fk.nq, 2);
    assert_int_equal(fk.q[1].lane, fk.q[0].lane);
    fk.hold = 0;
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
    assert_each_byte_once(200);
}

/* An atomic that finds no room on the lane a fence pinned waits for it:
 * on another lane it could overtake the put before the fence. */
static void test_atomic_keeps_pinned_lane(void **state)
{
    (void)state;
    static char buf[100];
    fk.hold = 1;
    assert_int_equal(sr_rma(C, 1, buf, 0, 100, 0, 0), SYMRAIL_OK);
    int lane = fk.q[0].lane;
    assert_int_equal(sr_fence(C), SYMRAIL_OK);
    fake_ops.atomic = fake_atomic_room;
    fk.amo_again = 3;
    assert_int_equal(sr_amo(C, SR_TL_AMO_ADD, 0, 1, 0, 0, NULL), SYMRAIL_OK);
    assert_int_equal(fk.namo, 4);
    for (int i = 0; i < fk.namo; i++)
        assert_int_equal(fk.amo_tries[i], lane);
    fake_ops.atomic = fake_atomic;
    fk.hold = 0;
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
}

/* A long transfer after such a fence waits for what the fence left pending
 * and then goes over every lane, rather than keeping to the one. */
static void test_long_transfer_after_fence_sprays(void **state)
{
    (void)state;
    static char buf[9000];
    fk.hold = 1;
    assert_int_equal(sr_rma(C, 1, buf, 0, 100, 0, 0), SYMRAIL_OK);
    assert_int_equal(sr_fence(C), SYMRAIL_OK);
    fk.hold = 0;
    int before[NLANES];
    memcpy(before, fk.posted, sizeof(before));
    assert_int_equal(sr_rma(C, 1, buf + 1000, 1000, 8000, 0, 1), SYMRAIL_OK);
    int used = 0;
    for (int l = 0; l < NLANES; l++)
        used += fk.posted[l] > before[l];
    assert_true(used > 1);
    assert_int_equal(sr_quiet(C), SYMRAIL_OK);
}

/* A context destroyed while its operations are still in the transport
 * (its quiet failed) is kept, not reused: they may still complete into it. */
static void test_destroy_after_failed_quiet(void **state)
{
    (void)state;
    static char buf[3000];
    sr_ctx_t *x;
    assert_int_equal(sr_ctx_new(0, &x), SYMRAIL_OK);
    sr_rt.env.op_timeout = 50;
    fk.hold = 1;
    assert_int_equal(sr_rma(x, 1, buf, 0, 3000, 0, 0), SYMRAIL_OK);
    assert_int_equal(sr_ctx_free(x), SYMRAIL_ERR_TIMEOUT);
    assert_ptr_equal(sr_rt.zombies, x);
    assert_null(sr_rt.ctx_free);
    fk.hold = 0;
    fake_progress(NULL);  /* the late completions land in the kept context */
    assert_int_equal(x->nbi.remaining, 0);
}

/* quiet on one context does not wait for another's operations, and
 * flushes only the lanes it used. */
static void test_quiet_isolation(void **state)
{
    (void)state;
    static char buf[400];
    sr_ctx_t *x, *b, *a;
    /* Ids 0 (C) and 1 turn over the lanes; the next take homes 0, 1, ... */
    assert_int_equal(sr_ctx_new(0, &x), SYMRAIL_OK);
    assert_int_equal(sr_ctx_new(0, &b), SYMRAIL_OK);  /* home lane 0 */
    assert_int_equal(sr_ctx_new(0, &a), SYMRAIL_OK);  /* home lane 1 */
    fk.hold_lane = 0;
    assert_int_equal(sr_rma(b, 1, buf, 0, 100, 0, 0), SYMRAIL_OK);
    assert_int_equal(sr_rma(a, 1, buf + 100, 100, 100, 0, 0), SYMRAIL_OK);
    assert_int_equal(sr_quiet(a), SYMRAIL_OK);
    assert_true(b->nbi.remaining > 0);  /* still held back */
    assert_int_equal(fk.done[0], 0);
    assert_int_equal(fk.done[100], 1);
    fk.hold_lane = -1;
    assert_int_equal(sr_quiet(b), SYMRAIL_OK);
    assert_int_equal(b->nbi.remaining, 0);

    fk.local = 1;
    sr_rt.peers[0].local_comp = 1;
    assert_int_equal(sr_rma(a, 1, buf + 200, 200, 8, 0, 1), SYMRAIL_OK);
    assert_int_equal(sr_rma(b, 1, buf + 300, 300, 8, 0, 1), SYMRAIL_OK);
    assert_int_equal(sr_quiet(a), SYMRAIL_OK);
    assert_int_equal(fk.flush_lanes, 1u << 1);
    assert_int_equal(sr_quiet(b), SYMRAIL_OK);
    assert_int_equal(fk.flush_lanes, 1u << 0);
    assert_int_equal(sr_ctx_free(a), SYMRAIL_OK);
    assert_int_equal(sr_ctx_free(b), SYMRAIL_OK);
    assert_int_equal(sr_ctx_free(x), SYMRAIL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fence_keeps_lane, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiet_isolation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomic_keeps_pinned_lane, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_transfer_after_fence_sprays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_after_failed_quiet, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
