/*
 * The notification channel's credit rules, run against a model of the
 * receiver: random interleavings of sends, arrivals, consumption, credit
 * reports and send completions.  The property that matters: a message never
 * arrives when its receiver has no buffer posted (an RNR on real hardware),
 * and a send slot is never reused while its send is still in flight.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tl/verbs/credits.h"

typedef struct {
    sr_ib_credit_t c;       /* sender's view */
    uint64_t wire;          /* sent, not yet arrived */
    uint64_t arrived;       /* arrived, not yet consumed */
    uint64_t posted;        /* receive buffers posted at the receiver */
    uint64_t consumed;      /* receiver's counter */
    uint64_t unreported;    /* consumed, not yet written back to the sender */
    uint64_t uncompleted;   /* sends whose completion the sender has not seen */
    uint32_t slot_busy[64];
} model_t;

static void run_model(uint32_t depth, unsigned seed, int steps)
{
    model_t m = { .posted = depth };
    uint64_t total_sent = 0;
    srand(seed);
    for (int i = 0; i < steps; i++) {
        switch (rand() % 5) {
        case 0: /* the sender posts if the rules allow */
            if (sr_ib_credit_avail(&m.c, depth)) {
                uint32_t slot = sr_ib_credit_slot(&m.c, depth);
                assert_int_equal(m.slot_busy[slot], 0);  /* slot reuse only after completion */
                m.slot_busy[slot] = 1;
                m.c.sent++;
                m.wire++;
                m.uncompleted++;
                total_sent++;
            }
            break;
        case 1: /* a message arrives: a buffer must be posted for it */
            if (m.wire) {
                assert_true(m.posted > 0);
                m.posted--;
                m.wire--;
                m.arrived++;
            }
            break;
        case 2: /* the receiver consumes and re-posts */
            if (m.arrived) {
                m.arrived--;
                m.posted++;
                m.consumed++;
                m.unreported++;
            }
            break;
        case 3: /* the receiver writes its counter back */
            if (m.unreported) {
                m.c.consumed = m.consumed;
                m.unreported = 0;
            }
            break;
        case 4: /* a send completes (RC: once it has arrived), in order on one QP */
            if (m.uncompleted && m.c.send_done < m.c.sent - m.wire) {
                m.slot_busy[m.c.send_done % depth] = 0;
                m.c.send_done++;
                m.uncompleted--;
            }
            break;
        }
        /* Every message on the wire has a receive buffer waiting for it.  (The
         * sum posted + wire + arrived is depth + wire by construction, so it
         * says nothing; this is the no-RNR property itself.) */
        assert_true(m.posted >= m.wire);
        assert_true(m.c.sent - m.c.consumed <= depth);
    }
    assert_true(total_sent > (uint64_t)steps / 20);  /* the model made progress */
}

static void test_no_rnr_small_depth(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 50; seed++)
        run_model(4, seed, 20000);
}

static void test_no_rnr_depth_64(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 20; seed++)
        run_model(64, seed, 50000);
}

static void test_blocks_at_depth(void **state)
{
    (void)state;
    sr_ib_credit_t c = { 0, 0, 0 };
    for (int i = 0; i < 8; i++) {
        assert_true(sr_ib_credit_avail(&c, 8));
        c.sent++;
        c.send_done++;
    }
    assert_false(sr_ib_credit_avail(&c, 8));  /* nothing consumed yet */
    c.consumed = 1;
    assert_true(sr_ib_credit_avail(&c, 8));
    c.send_done = 0;                          /* sends not completed block too */
    c.consumed = 8;
    assert_false(sr_ib_credit_avail(&c, 8));
    /* Counters far past 2^32 wrap nothing. */
    sr_ib_credit_t big = { (1ull << 40) + 5, (1ull << 40) + 5, (1ull << 40) };
    assert_true(sr_ib_credit_avail(&big, 8));
    assert_int_equal(sr_ib_credit_slot(&big, 8), ((1ull << 40) + 5) % 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_rnr_small_depth),
        cmocka_unit_test(test_no_rnr_depth_64),
        cmocka_unit_test(test_blocks_at_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
