/*
 * Peer states and the failure policy of waits, against a transport whose
 * connections and silence the test decides: a lost connection makes a peer
 * FAILED for good, silence makes it SUSPECT until it is heard again, each
 * change counted once; under report a wait on one peer does not end for
 * another that had failed, a wait that names no peer ends for one that
 * fails while it waits, and under abort any failed peer ends any wait.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/rt.h"
#include "util/sys.h"

#define NPES 3

static struct {
    symrail_status_t check[NPES];  /* what ep_check says of each peer */
    uint64_t         heard[NPES];  /* when each was last heard (0: never) */
    int              fail_at;      /* cond call at which PE 2's connection goes, or -1 */
    int              calls;
    uint64_t         done_ns;      /* cond holds from then on */
} fk;

static int ep_index(sr_tl_ep_t *ep)
{
    return (int)((char *)ep - (char *)&fk) - 1;
}

static symrail_status_t fake_ep_check(sr_tl_ep_t *ep)
{
    return fk.check[ep_index(ep)];
}

static uint64_t fake_heard(sr_tl_ep_t *ep)
{
    return fk.heard[ep_index(ep)];
}

static sr_tl_ops_t fake_ops;

static char *fake_getenv(const char *name)
{
    (void)name;
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    memset(&fk, 0, sizeof(fk));
    fk.fail_at = -1;
    fake_ops.ep_check = fake_ep_check;
    fake_ops.ep_heard = fake_heard;
    memset(&sr_rt, 0, sizeof(sr_rt));
    assert_int_equal(sr_env_load(fake_getenv, &sr_rt.env), SYMRAIL_OK);
    sr_rt.env.spin_count = 10;
    sr_rt.env.op_timeout = 1000;
    sr_rt.n_pes = sr_rt.n_max = NPES;
    sr_rt.sleeper = -1;
    sr_rt.hold_lane = -1;
    sr_rt.peers = calloc(NPES, sizeof(*sr_rt.peers));
    sr_rt.pids = calloc(NPES, sizeof(int));
    assert_non_null(sr_rt.peers);
    for (int pe = 1; pe < NPES; pe++) {
        sr_rt.peers[pe].ops = &fake_ops;
        sr_rt.peers[pe].ep = (sr_tl_ep_t *)((char *)&fk + pe + 1);
        sr_rt.pids[pe] = 1000 + pe;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(sr_rt.peers);
    free(sr_rt.pids);
    sr_env_release(&sr_rt.env);
    return 0;
}

static int state_of(int pe)
{
    return __atomic_load_n(&sr_rt.peers[pe].state, __ATOMIC_RELAXED);
}

static void test_lost_connection_fails_for_good(void **state)
{
    (void)state;
    uint64_t now = sr_time_ns();
    assert_int_equal(sr_peer_alive(2, now), SYMRAIL_OK);
    assert_int_equal(state_of(2), SYMRAIL_PEER_OK);
    assert_int_equal(sr_rt.peer_events, 0);
    fk.check[2] = SYMRAIL_ERR_PEER_GONE;
    assert_int_equal(sr_peer_alive(2, now), SYMRAIL_ERR_PEER_GONE);
    assert_int_equal(state_of(2), SYMRAIL_PEER_FAILED);
    assert_int_equal(sr_rt.peers_failed, 1);
    assert_int_equal(sr_rt.peers_down, 1);
    uint64_t gen = sr_rt.peer_events;
    assert_int_equal(gen, 1);
    assert_int_equal(sr_rt.peers[2].state_gen, gen);
    /* Once failed, always failed: nothing it says later brings it back. */
    fk.check[2] = SYMRAIL_OK;
    assert_int_equal(sr_peer_alive(2, now), SYMRAIL_ERR_PEER_GONE);
    assert_int_equal(state_of(2), SYMRAIL_PEER_FAILED);
    assert_int_equal(sr_rt.peer_events, gen);
    assert_int_equal(sr_rt.peers_failed, 1);
    assert_true(sr_peer_failed(2));
    assert_false(sr_peer_failed(1));
    assert_int_equal(state_of(1), SYMRAIL_PEER_OK);
}

static void test_silence_is_suspect_until_heard(void **state)
{
    (void)state;
    uint64_t now = sr_time_ns();
    uint64_t limit = sr_rt.env.op_timeout * 1000000ull;
    fk.heard[1] = now - limit / 2;
    assert_int_equal(sr_peer_alive(1, now), SYMRAIL_OK);
    fk.heard[1] = now - 2 * limit;
    assert_int_equal(sr_peer_alive(1, now), SYMRAIL_ERR_PEER_UNRESPONSIVE);
    assert_int_equal(state_of(1), SYMRAIL_PEER_SUSPECT);
    assert_int_equal(sr_rt.peers_suspect, 1);
    assert_int_equal(sr_rt.peers_down, 1);
    /* Still silent: no second change, no second count. */
    assert_int_equal(sr_peer_alive(1, now), SYMRAIL_ERR_PEER_UNRESPONSIVE);
    assert_int_equal(sr_rt.peers_suspect, 1);
    assert_int_equal(sr_rt.peer_events, 1);
    fk.heard[1] = now;
    assert_int_equal(sr_peer_alive(1, now), SYMRAIL_OK);
    assert_int_equal(state_of(1), SYMRAIL_PEER_OK);
    assert_int_equal(sr_rt.peers_down, 0);
    assert_int_equal(sr_rt.peer_events, 2);
    /* A suspect peer that then is gone is failed, and down once. */
    fk.heard[1] = now - 2 * limit;
    assert_int_equal(sr_peer_alive(1, now), SYMRAIL_ERR_PEER_UNRESPONSIVE);
    fk.check[1] = SYMRAIL_ERR_PEER_GONE;
    assert_int_equal(sr_peer_alive(1, now), SYMRAIL_ERR_PEER_GONE);
    assert_int_equal(state_of(1), SYMRAIL_PEER_FAILED);
    assert_int_equal(sr_rt.peers_down, 1);
    assert_int_equal(sr_rt.peers_suspect, 2);
    assert_int_equal(sr_rt.peers_failed, 1);
}

static void test_collective_members(void **state)
{
    (void)state;
    assert_int_equal(sr_peers_members_ok("t", NULL, 0, 1, NPES), SYMRAIL_OK);
    fk.check[2] = SYMRAIL_ERR_PEER_GONE;
    (void)sr_peer_alive(2, sr_time_ns());
    assert_int_equal(sr_peers_members_ok("t", NULL, 0, 1, NPES), SYMRAIL_ERR_PEER_GONE);
    assert_int_equal(sr_peers_members_ok("t", NULL, 0, 2, 2), SYMRAIL_ERR_PEER_GONE);
    assert_int_equal(sr_peers_members_ok("t", NULL, 0, 1, 2), SYMRAIL_OK);
    const int world[] = { 1, 0 };
    assert_int_equal(sr_peers_members_ok("t", world, 0, 0, 2), SYMRAIL_OK);
    const int with2[] = { 2, 0 };
    assert_int_equal(sr_peers_members_ok("t", with2, 0, 0, 2), SYMRAIL_ERR_PEER_GONE);
}

/* Holds 150 ms after its first call; PE 2's connection goes at call fail_at. */
static int cond_later(void *arg)
{
    (void)arg;
    uint64_t now = sr_time_ns();
    if (fk.done_ns == 0)
        fk.done_ns = now + 150 * 1000000ull;
    if (fk.calls++ == fk.fail_at)
        fk.check[2] = SYMRAIL_ERR_PEER_GONE;
    return now >= fk.done_ns;
}

static void fail_pe2_first(void)
{
    fk.check[2] = SYMRAIL_ERR_PEER_GONE;
    (void)sr_peer_alive(2, sr_time_ns());
    assert_int_equal(state_of(2), SYMRAIL_PEER_FAILED);
}

static void test_report_wait_on_other_peer_goes_on(void **state)
{
    (void)state;
    sr_rt.report = 1;
    fail_pe2_first();
    assert_int_equal(sr_wait_pe(NULL, cond_later, NULL, 0, 5000, "test", 1), SYMRAIL_OK);
    /* Nor does a wait that names no peer end for one that failed before. */
    fk.done_ns = 0;
    assert_int_equal(sr_wait(NULL, cond_later, NULL, 0, 5000, "test"), SYMRAIL_OK);
    /* A wait on the failed peer itself ends. */
    fk.done_ns = 0;
    assert_int_equal(sr_wait_pe(NULL, cond_later, NULL, 0, 5000, "test", 2),
                     SYMRAIL_ERR_PEER_GONE);
}

static void test_report_wait_ends_for_failure_during_it(void **state)
{
    (void)state;
    sr_rt.report = 1;
    fk.fail_at = 50;
    assert_int_equal(sr_wait(NULL, cond_later, NULL, 0, 5000, "test"), SYMRAIL_ERR_PEER_GONE);
    assert_int_equal(state_of(2), SYMRAIL_PEER_FAILED);
}

static void test_abort_any_failed_peer_ends_a_wait(void **state)
{
    (void)state;
    sr_rt.report = 0;
    fail_pe2_first();
    assert_int_equal(sr_wait_pe(NULL, cond_later, NULL, 0, 5000, "test", 1),
                     SYMRAIL_ERR_PEER_GONE);
}

/* A machine with more runnable threads than CPUs: every progress call that
 * finds nothing gives the CPU away (as TCP's does) and gets it back a time
 * slice later. */
static int slow_progress(sr_tl_ctx_t *tl)
{
    (void)tl;
    struct timespec ts = { 0, 2 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    return 0;
}

static uint32_t slow_wait_prepare(sr_tl_ctx_t *tl)
{
    (void)tl;
    return 0;
}

static void slow_wait(sr_tl_ctx_t *tl, uint32_t token, uint64_t timeout_ns)
{
    (void)tl, (void)token, (void)timeout_ns;
}

static void slow_wait_done(sr_tl_ctx_t *tl)
{
    (void)tl;
}

static int cond_never(void *arg)
{
    (void)arg;
    return 0;
}

/* The polls before a wait sleeps (SYMRAIL_SPIN_COUNT of them, and as many
 * after each wake) were bounded in number only: at a time slice each, a
 * wait on a stopped peer looked at it after 2000 of them, 13 s instead of
 * the 2 s of SYMRAIL_OP_TIMEOUT (t_liveness over TCP on a loaded machine).
 * They end after a wait slice, and the peers are looked at. */
static void test_slow_polls_still_look_at_peers(void **state)
{
    (void)state;
    static sr_tl_ops_t slow_ops;
    slow_ops.progress = slow_progress;
    slow_ops.wait_prepare = slow_wait_prepare;
    slow_ops.wait = slow_wait;
    slow_ops.wait_done = slow_wait_done;
    sr_rt.tls[0].ops = &slow_ops;
    sr_rt.ntls = 1;
    sr_rt.env.spin_count = 2000;
    sr_rt.report = 1;
    fk.check[1] = SYMRAIL_ERR_PEER_GONE;
    for (int sleeper = -1; sleeper <= 0; sleeper++) {
        sr_rt.sleeper = sleeper;  /* waits that poll, and waits that sleep */
        uint64_t t0 = sr_time_ns();
        assert_int_equal(sr_wait_pe(NULL, cond_never, NULL, SR_WAIT_REMOTE, 0, "test", 1),
                         SYMRAIL_ERR_PEER_GONE);
        uint64_t ms = (sr_time_ns() - t0) / 1000000u;
        print_message("sleeper %d: the gone peer ended the wait after %llu ms\n", sleeper,
                      (unsigned long long)ms);
        assert_true(ms < 1000);  /* 2000 polls: 4 s and more */
        fk.check[1] = SYMRAIL_OK;
        memset(&sr_rt.peers[1].state, 0, sizeof(sr_rt.peers[1].state));
        sr_rt.peers_down = sr_rt.peers_failed = 0;
        fk.check[1] = SYMRAIL_ERR_PEER_GONE;
    }
    sr_rt.ntls = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lost_connection_fails_for_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silence_is_suspect_until_heard, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collective_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_wait_on_other_peer_goes_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_wait_ends_for_failure_during_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_abort_any_failed_peer_ends_a_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_polls_still_look_at_peers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
