/*
 * The notification channel's credit rules (credits.h), run against a model
 * of one receiver with a shared receive queue and several senders: random
 * interleavings of sends (the application's and the transport's own),
 * arrivals, consumption, late credit writes and send completions.  The
 * property that matters: a message never arrives when its receiver has no
 * buffer posted for it (an RNR on real hardware), i.e. no sender has more on
 * the wire than its window, and no grant takes more than the pool has; and
 * the limits hold: no more than `slots` application
 * messages unconsumed, and senders keep making progress.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tl/verbs/credits.h"

#define MAXS 16
#define RESERVE 2

typedef struct {
    sr_ib_credit_t c;         /* sender's view */
    uint64_t wire;            /* sent, not yet arrived */
    uint64_t arrived;         /* receiver: arrived (buffer re-posted at once) */
    uint64_t limit;           /* receiver: the window it keeps, absolute */
    uint64_t app_unconsumed;  /* receiver: application messages not consumed */
    uint64_t consumed;        /* receiver's counter */
    uint64_t pend_consumed, pend_limit;  /* a credit write on its way */
    int      pending;
    uint8_t  internal[4096];  /* kind of each message on the wire, in order (ring) */
} sender_t;

typedef struct {
    sender_t s[MAXS];
    int      n;
    uint32_t pool_free, depth, low, slots, sq;
} model_t;

static uint64_t run_model(int n, uint32_t pool, uint32_t depth, uint32_t slots, unsigned seed,
                          int steps, int busy_one)
{
    model_t m = { .n = n, .pool_free = pool, .depth = depth, .low = pool / 4, .slots = slots,
                  .sq = 16 };
    /* Half the pool handed out evenly at the start (md.c). */
    uint32_t w0 = SR_IB_CREDIT_STATIC + pool / (2 * (uint32_t)n);
    if (w0 > depth)
        w0 = depth;
    m.pool_free -= (uint32_t)n * (w0 - SR_IB_CREDIT_STATIC);
    for (int i = 0; i < n; i++)
        m.s[i].limit = m.s[i].c.limit = w0;
    uint64_t total_sent = 0;
    srand(seed);
    for (int step = 0; step < steps; step++) {
        int who = busy_one && rand() % 4 ? 0 : rand() % n;
        sender_t *s = &m.s[who];
        switch (rand() % 6) {
        case 0: case 5: { /* the sender posts if the rules allow */
            int internal = rand() % 8 == 0;
            if (sr_ib_credit_avail(&s->c, internal ? depth : slots, internal ? 0 : RESERVE,
                                   m.sq)) {
                s->internal[s->c.sent % 4096] = (uint8_t)internal;
                s->c.sent++;
                s->wire++;
                total_sent++;
            }
            break;
        }
        case 1: /* its oldest message arrives; the buffer is posted again */
            if (s->wire) {
                assert_true(s->limit > s->arrived);  /* a buffer was kept for it */
                int internal = s->internal[s->arrived % 4096];
                s->wire--;
                s->arrived++;
                m.pool_free++;
                uint32_t g = sr_ib_grant((uint32_t)(s->limit - s->arrived), m.pool_free, depth,
                                         m.low);
                assert_true(g <= m.pool_free);
                s->limit += g;
                m.pool_free -= g;
                assert_true(s->limit - s->arrived >= SR_IB_CREDIT_STATIC);
                assert_true(s->limit - s->arrived <= (depth > SR_IB_CREDIT_STATIC ? depth : SR_IB_CREDIT_STATIC));
                if (internal)
                    s->consumed++;
                else
                    s->app_unconsumed++;
            }
            break;
        case 2: /* the application consumes one */
            if (s->app_unconsumed) {
                s->app_unconsumed--;
                s->consumed++;
            }
            break;
        case 3: /* a credit write leaves (or the one before lands first) */
            if (!s->pending) {
                s->pend_consumed = s->consumed;
                s->pend_limit = s->limit;
                s->pending = 1;
            } else {
                s->c.consumed = s->pend_consumed;
                s->c.limit = s->pend_limit;
                s->pending = 0;
            }
            break;
        case 4: /* a send completes (RC: once it has arrived) */
            if (s->c.send_done < s->c.sent - s->wire)
                s->c.send_done++;
            break;
        }
        /* No RNR: every sender within its window.  (That the windows stay
         * within the queue is the model's own bookkeeping, which moves
         * what sr_ib_grant gives from the pool to a window; what can fail
         * there is a grant beyond the pool, asserted at the arrival.) */
        for (int i = 0; i < n; i++) {
            assert_true(m.s[i].wire <= m.s[i].limit - m.s[i].arrived);
            assert_true(m.s[i].app_unconsumed <= slots);
            assert_true(m.s[i].c.sent - m.s[i].c.send_done <= m.sq);
        }
    }
    return total_sent;
}

static void test_no_rnr_one_sender(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 30; seed++)
        assert_true(run_model(1, 8, 8, 6, seed, 20000, 0) > 1000);
}

static void test_no_rnr_many_senders_small_pool(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 30; seed++)
        assert_true(run_model(MAXS, 4, 64, 62, seed, 50000, 0) > 2000);
}

static void test_no_rnr_no_pool(void **state)
{
    (void)state;
    /* Only the static windows: still exact, still progress. */
    for (unsigned seed = 1; seed <= 20; seed++)
        assert_true(run_model(8, 0, 256, 64, seed, 20000, 0) > 1000);
}

static void test_no_rnr_busy_sender(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 20; seed++)
        assert_true(run_model(MAXS, 64, 256, 64, seed, 50000, 1) > 2000);
}

static void test_grant(void **state)
{
    (void)state;
    /* A window that fell below the static one is restored even at the low mark. */
    assert_int_equal(sr_ib_grant(SR_IB_CREDIT_STATIC - 1, 1, 256, 100), 1);
    /* While the pool has room a busy window grows by one per arrival. */
    assert_int_equal(sr_ib_grant(10, 100, 256, 10), 2);
    /* ... up to depth. */
    assert_int_equal(sr_ib_grant(255, 100, 256, 10), 1);
    assert_int_equal(sr_ib_grant(256, 100, 256, 10), 0);
    /* At the low mark it shrinks by one: the buffer stays in the pool. */
    assert_int_equal(sr_ib_grant(10, 10, 256, 10), 0);
    /* Never more than the pool has. */
    assert_int_equal(sr_ib_grant(10, 1, 256, 0), 1);
}

static void test_blocks(void **state)
{
    (void)state;
    sr_ib_credit_t c = { 0, 0, 0, 8 };
    for (int i = 0; i < 6; i++) {
        assert_true(sr_ib_credit_avail(&c, 64, RESERVE, 16));
        c.sent++;
        c.send_done++;
    }
    /* The window's last two are the transport's own. */
    assert_false(sr_ib_credit_avail(&c, 64, RESERVE, 16));
    assert_true(sr_ib_credit_avail(&c, 64, 0, 16));
    c.limit = 100;
    assert_true(sr_ib_credit_avail(&c, 64, RESERVE, 16));
    assert_false(sr_ib_credit_avail(&c, 6, RESERVE, 16));  /* nothing consumed yet */
    c.consumed = 1;
    assert_true(sr_ib_credit_avail(&c, 6, RESERVE, 16));
    c.send_done = 0;                                      /* sends not completed block too */
    assert_false(sr_ib_credit_avail(&c, 6, RESERVE, 6));
    /* Counters far past 2^32 wrap nothing. */
    sr_ib_credit_t big = { (1ull << 40) + 5, (1ull << 40) + 5, (1ull << 40), (1ull << 40) + 7 };
    assert_true(sr_ib_credit_avail(&big, 8, 0, 16));
    assert_false(sr_ib_credit_avail(&big, 8, RESERVE, 16));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_rnr_one_sender),
        cmocka_unit_test(test_no_rnr_many_senders_small_pool),
        cmocka_unit_test(test_no_rnr_no_pool),
        cmocka_unit_test(test_no_rnr_busy_sender),
        cmocka_unit_test(test_grant),
        cmocka_unit_test(test_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
