/*
 * How deep the verbs send queues are (qp.c): the job's QPs from the budget
 * of 4096 entries over all data QPs, connected peers of other jobs from the
 * same budget, and how often a lane of each depth signals.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tl/verbs/ib.h"

/* SYMRAIL_IB_MAX_WR=0: deep queues for a few peers, 4096 entries over all
 * data QPs at scale (a power of two minus one each, 15 at least); a value
 * the user set stays, within the device's limit. */
static void test_queue_sizing(void **state)
{
    (void)state;
    static const struct {
        uint32_t set;
        size_t   peers;
        uint32_t want;
    } c[] = { { 0, 0, 255 },  { 0, 1, 255 },   { 0, 7, 127 }, { 0, 15, 63 },
              { 0, 31, 31 },  { 0, 63, 15 },   { 0, 999, 15 }, { 4, 999, 4 },
              { 600, 1, 600 }, { 0, 1, 100 } };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        sr_tl_ctx_t x = { .nrails = 2, .qpp = 2, .max_wr = c[i].set,
                          .dev_max_wr = i == 9 ? 100 : 16384 };
        sr_ib_size_queues(&x, c[i].peers);
        assert_int_equal(x.max_wr, c[i].want);
        sr_ib_lane_t lane;
        sr_ib_lane_depth(&lane, x.max_wr);
        assert_true(lane.sig_every >= 1 && lane.sig_every <= x.max_wr);
    }
}

/* Connected peers of other jobs share the same budget: each new one gets
 * the depth of a job of all the peers so far, never deeper than the job's
 * QPs, and what the user set stays.  Before, each got the job's depth, so a
 * job of 2 PEs with 60 connected peers held 61 x 4 QPs of 255 WRs, 15 times
 * the budget. */
static void test_connected_share_budget(void **state)
{
    (void)state;
    sr_tl_ctx_t x = { .nrails = 2, .qpp = 2, .dev_max_wr = 16384 };
    sr_ib_size_queues(&x, 1);
    assert_int_equal(x.max_wr, 255);
    static const uint32_t want[] = { 255, 255, 255, 127, 127, 127, 127, 63 };
    size_t total = 1 * 4 * (size_t)x.max_wr;
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        uint32_t wr = sr_ib_conn_wr(&x);
        assert_int_equal(wr, want[k]);  /* peers 2..9: 4096 / (4 n) */
        total += 4 * (size_t)wr;
    }
    for (int k = 0; k < 52; k++)
        total += 4 * (size_t)sr_ib_conn_wr(&x);
    assert_int_equal(sr_ib_conn_wr(&x), 15);  /* the floor */
    assert_int_equal(x.max_wr, 255);           /* the job's QPs keep theirs */
    assert_true(total < 3 * 4096);
    /* Peers whose QPs could not be made give their share back: with 59 of
     * the 61 taken back, the next one is as deep as the first. */
    for (int k = 0; k < 59; k++)
        sr_ib_conn_wr_put(&x);
    assert_int_equal(sr_ib_conn_wr(&x), 255);
    assert_int_equal(sr_ib_conn_wr(&x), 127);
    /* A shallow lane signals more often, so that completions come well
     * before its queue is full. */
    sr_ib_lane_t lane = { 0 };
    static const uint32_t depth[][2] = { { 255, 16 }, { 63, 15 }, { 31, 7 }, { 15, 3 },
                                         { 4, 1 } };
    for (size_t i = 0; i < sizeof(depth) / sizeof(depth[0]); i++) {
        sr_ib_lane_depth(&lane, depth[i][0]);
        assert_int_equal(lane.max_wr, depth[i][0]);
        assert_int_equal(lane.sig_every, depth[i][1]);
    }
    /* A depth the user set is every peer's. */
    sr_tl_ctx_t y = { .nrails = 2, .qpp = 2, .max_wr = 600, .dev_max_wr = 16384 };
    sr_ib_size_queues(&y, 1);
    for (int k = 0; k < 100; k++)
        assert_int_equal(sr_ib_conn_wr(&y), 600);
    sr_ib_conn_wr_put(&y);
    assert_int_equal(y.wr_peers, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_sizing),
        cmocka_unit_test(test_connected_share_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
