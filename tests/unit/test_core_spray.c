/*
 * Adaptive spraying and rail health inside the core, against the scripted
 * transport: slices are counted out and back per lane, a lane that keeps
 * failing is paused (its traffic goes to the others), probed after its
 * pause and resumed by a success, with every change in the counters.
 */
#include "fake_tl.h"
#include "core/spray.h"

static void fake_stats(sr_tl_ctx_t *tl, symrail_stats_t *st)
{
    (void)tl, (void)st;
}

static int setup_adaptive(void **state)
{
    setup(state);
    fake_ops.stats = fake_stats;
    sr_rt.spray = 1;
    sr_rt.env.rail_pause_errors = 2;
    sr_rt.env.rail_pause = 20;       /* ms */
    sr_rt.env.rail_pause_max = 1000;
    return sr_spray_setup() == SYMRAIL_OK ? 0 : -1;
}

static void sleep_ms(unsigned ms)
{
    usleep(ms * 1000u);
}

/* Every lane takes slices; nothing stays counted in flight afterwards. */
static void test_adaptive_spreads_and_counts(void **state)
{
    (void)state;
    static char buf[60000];
    fk.room = 4;
    assert_int_equal(sr_rma(C, 1, buf, 0, 60000, 0, 1), SYMRAIL_OK);
    assert_each_byte_once(60000);
    const sr_spray_t *sp = C->peers[0].spray;
    assert_non_null(sp);
    for (int l = 0; l < NLANES; l++) {
        assert_true(fk.posted[l] > 0);
        assert_int_equal(sp->lane[l].inflight, 0);
    }
    assert_true(sp->lane[1].bw > 0);
}

/* SYMRAIL_SPRAY=static: no estimates are kept, the weights split exactly
 * as before (1:2:1). */
static void test_static_is_the_old_split(void **state)
{
    (void)state;
    static char buf[8000];
    assert_int_equal(sr_rma(C, 1, buf, 0, 8000, 0, 1), SYMRAIL_OK);
    assert_null(C->peers[0].spray);
    assert_int_equal(fk.posted[0], 2);
    assert_int_equal(fk.posted[1], 4);
    assert_int_equal(fk.posted[2], 2);
}

static void fail_once_on(int lane, char *buf)
{
    /* The lane fails under a transfer and is repaired after it. */
    fk.failing_lane = lane;
    assert_int_equal(sr_rma(C, 1, buf, 0, 6000, 0, 1), SYMRAIL_OK);
    fk.failing_lane = -1;
    fk.weights[lane] = 2;
    sr_peer_lanes_refresh(0);
}

static void test_pause_probe_resume(void **state)
{
    (void)state;
    static char buf[6000];
    fail_once_on(1, buf);
    sr_peer_health_t *p = sr_peer_health(0);
    assert_non_null(p);
    assert_int_equal(p->paused, 0);  /* one failure is not a pattern */
    sleep_ms(3);
    fail_once_on(1, buf);
    assert_int_equal(p->paused, 1u << 1);
    assert_int_equal(__atomic_load_n(&sr_rt.lanes_paused, __ATOMIC_RELAXED), 1);
    symrail_stats_t st;
    sr_stats_collect(&st);
    assert_int_equal(st.lanes_paused, 1);
    /* Paused: up, but given nothing. */
    int before = fk.posted[1];
    memset(fk.done, 0, sizeof(fk.done));
    assert_int_equal(sr_rma(C, 1, buf, 0, 6000, 0, 1), SYMRAIL_OK);
    assert_int_equal(fk.posted[1], before);
    assert_each_byte_once(6000);
    /* After the pause, a probe; its success resumes the lane. */
    sleep_ms(25);
    memset(fk.done, 0, sizeof(fk.done));
    assert_int_equal(sr_rma(C, 1, buf, 0, 6000, 0, 1), SYMRAIL_OK);
    assert_true(fk.posted[1] > before);
    assert_int_equal(p->paused, 0);
    assert_int_equal(p->probing, 0);
    sr_stats_collect(&st);
    assert_int_equal(st.lane_probes, 1);
    assert_int_equal(st.lanes_resumed, 1);
}

/* A probe that fails pauses the lane again, for twice as long. */
static void test_failed_probe_doubles(void **state)
{
    (void)state;
    static char buf[6000];
    fail_once_on(1, buf);
    sr_peer_health_t *p = sr_peer_health(0);
    sleep_ms(3);
    fail_once_on(1, buf);
    assert_int_equal(p->paused, 1u << 1);
    assert_int_equal(p->lane[1].pause_ns, 20000000ull);
    sleep_ms(25);
    fail_once_on(1, buf);
    assert_int_equal(p->paused, 1u << 1);
    assert_int_equal(p->lane[1].pause_ns, 40000000ull);
    symrail_stats_t st;
    sr_stats_collect(&st);
    assert_int_equal(st.lanes_paused, 2);
    assert_int_equal(st.lane_probes, 1);
    assert_int_equal(st.lanes_resumed, 0);
}

/* Health off (SYMRAIL_RAIL_PAUSE_ERRORS=0): a failing lane is never paused. */
static void test_health_off(void **state)
{
    (void)state;
    static char buf[6000];
    sr_rt.health.errors = 0;
    for (int i = 0; i < 3; i++) {
        fail_once_on(1, buf);
        sleep_ms(2);
    }
    assert_null(sr_peer_health(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_adaptive_spreads_and_counts, setup_adaptive,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_static_is_the_old_split, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pause_probe_resume, setup_adaptive, teardown),
        cmocka_unit_test_setup_teardown(test_failed_probe_doubles, setup_adaptive, teardown),
        cmocka_unit_test_setup_teardown(test_health_off, setup_adaptive, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
