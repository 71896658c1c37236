/*
 * A PE killed with SIGKILL mid-run, under each SYMRAIL_ON_PEER_FAILURE policy.
 *   t_peerfail report   3 PEs, SYMRAIL_ON_PEER_FAILURE=report: PE 0 kills PE 2
 *                       while PE 2 streams puts to both others and PE 1 waits on
 *                       a signal nobody sends.  PE 0 and PE 1 see PE 2 FAILED
 *                       within SYMRAIL_OP_TIMEOUT, every call to PE 2 returns
 *                       SYMRAIL_ERR_PEER_GONE, PE 1's wait ends with it, data
 *                       between PE 0 and PE 1 still moves and verifies, and
 *                       barrier_all fails at once; then both finalize.
 *   t_peerfail abort    the same kill under the default policy: the job ends
 *                       (the driver checks the launcher names PE 2).
 *   t_peerfail timeout  2 PEs over TCP with SYMRAIL_TEST_HOLD_LANE=0:MS longer
 *                       than SYMRAIL_OP_TIMEOUT: a get and a quiet time out
 *                       (the driver checks that their messages name PE 1).
 *   t_peerfail inbar    4 PEs under report: the last PE dies while the others
 *                       wait in barrier_all, each for a PE that is alive; the
 *                       barrier fails on all three within the bound, none hangs.
 *   t_peerfail fin      3 PEs under report: PE 2 dies; PE 0 finalizes at once
 *                       while PE 1 still reads PE 0's heap for a while: PE 0's
 *                       finalize waits for PE 1's (the survivors synchronise,
 *                       the failed PE is left out), PE 1's reads all succeed.
 *   t_peerfail first K  2 PEs under report: PE 1 dies; PE 0 makes no call for
 *                       longer than SYMRAIL_OP_TIMEOUT, then its first call to
 *                       PE 1, of kind K (put, get, fadd, set, put_signal),
 *                       fails with SYMRAIL_ERR_PEER_GONE: no other call has
 *                       looked at PE 1 before it.
 *   t_peerfail inflight K  2 PEs under report: PE 0 streams calls of kind K
 *                       (get, put, fadd) to PE 1, which kills itself: the call
 *                       that fails returns SYMRAIL_ERR_PEER_GONE.
 *   t_peerfail lanereset  2 PEs over TCP with one lane that the fault hook
 *                       breaks (SYMRAIL_TCP_LANES=1 SYMRAIL_TCP_FAULT_CONN=0:N):
 *                       PE 1's get fails with SYMRAIL_ERR_TRANSPORT and PE 0,
 *                       alive, stays OK in PE 1's eyes.
 */
#include "tcommon.h"

#include <signal.h>
#include <unistd.h>

#define BLK 65536

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double op_timeout_s(void)
{
    const char *v = getenv("SYMRAIL_OP_TIMEOUT");
    T_ASSERT(v && strcmp(v, "2s") == 0, "run with SYMRAIL_OP_TIMEOUT=2s");
    return 2.0;
}

/* Waits until this PE sees PE `pe` FAILED; returns how long it took. */
static double wait_failed(int pe, double limit)
{
    double t0 = now_s(), dt = 0;
    symrail_peer_state_t s = SYMRAIL_PEER_OK;
    while (dt < limit) {
        T_CHECK(symrail_peer_state(pe, &s));
        if (s == SYMRAIL_PEER_FAILED)
            return now_s() - t0;
        usleep(1000);
        dt = now_s() - t0;
    }
    T_ASSERT(0, "PE %d still in state %d after %.1f s", pe, (int)s, dt);
    return dt;
}

/* Every kind of call to the failed PE returns PEER_GONE, each at once. */
static void calls_to_failed(int pe, unsigned char *buf, uint64_t *words)
{
    unsigned char local[64] = { 0 };
    uint64_t old = 0;
    symrail_notify_t msg;
    double t0 = now_s();
    T_EXPECT(symrail_put(buf, local, sizeof(local), pe), SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(symrail_get(local, buf, sizeof(local), pe), SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(symrail_put_nbi(buf, local, sizeof(local), pe), SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(symrail_put(buf, buf, BLK, pe), SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(symrail_atomic_fetch_add(words, 1, pe, &old), SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(symrail_atomic_set(words, 1, pe), SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(symrail_put_signal(buf, local, 8, words + 1, 1, SYMRAIL_SIGNAL_SET, pe),
             SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(symrail_notify_send(pe, 7, local, 8), SYMRAIL_ERR_PEER_GONE);
    double dt = now_s() - t0;
    T_ASSERT(dt < 1.0, "calls to a failed PE took %.2f s", dt);
    (void)msg;
}

static void report(int me)
{
    double limit = op_timeout_s() + 6.0;  /* a loaded machine schedules late */
    unsigned char *buf = symrail_malloc(5 * BLK);
    uint64_t *words = symrail_calloc(8, sizeof(uint64_t));
    int64_t *pid = symrail_calloc(1, sizeof(*pid));
    T_ASSERT(buf && words && pid, "symrail_malloc failed");
    *pid = getpid();
    symrail_peer_state_t st[3];
    int nbad = -1;
    T_CHECK(symrail_peer_states(st, &nbad));
    T_ASSERT(nbad == 0 && st[0] == SYMRAIL_PEER_OK && st[1] == SYMRAIL_PEER_OK &&
             st[2] == SYMRAIL_PEER_OK, "states before the kill: %d %d %d (%d bad)",
             (int)st[0], (int)st[1], (int)st[2], nbad);
    int64_t victim = 0;
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_CHECK(symrail_get(&victim, pid, sizeof(victim), 2));
    T_ASSERT(me != 0 || victim > 0, "PE 2's pid is %lld", (long long)victim);
    T_CHECK(symrail_barrier_all());

    if (me == 2) {
        /* Mid-transfer when the kill comes: puts to both others, forever. */
        unsigned char src[BLK];
        t_fill(src, sizeof(src), 2, 0);
        for (unsigned i = 0;; i++) {
            (void)symrail_put_nbi(buf + 4 * BLK, src, sizeof(src), (int)(i % 2));
            (void)symrail_quiet();
        }
    }
    double dt_seen;
    if (me == 0) {
        /* PE 1 is on its way into the wait: the kill must come while it
         * waits, and local peers are watched (on a loaded machine PE 1 could
         * be late enough to find PE 2 failed before it waits). */
        T_CHECK(symrail_signal_wait_until(words + 7, SYMRAIL_CMP_EQ, 1, NULL));
        usleep(200 * 1000);
        T_ASSERT(kill((pid_t)victim, SIGKILL) == 0, "kill PE 2 (pid %lld)", (long long)victim);
        dt_seen = wait_failed(2, limit);
    } else {
        /* A wait that names no peer ends when one fails while it waits. */
        T_CHECK(symrail_atomic_set(words + 7, 1, 0));
        double t0 = now_s();
        symrail_status_t s = symrail_signal_wait_until(words + 2, SYMRAIL_CMP_EQ, 1, NULL);
        dt_seen = now_s() - t0;
        T_ASSERT(s == SYMRAIL_ERR_PEER_GONE, "signal wait while PE 2 died returned %d (%s)",
                 (int)s, symrail_strerror(s));
        symrail_peer_state_t s2;
        T_CHECK(symrail_peer_state(2, &s2));
        T_ASSERT(s2 == SYMRAIL_PEER_FAILED, "PE 1 sees PE 2 in state %d", (int)s2);
    }
    T_ASSERT(dt_seen < limit, "PE 2 seen failed after %.1f s", dt_seen);
    calls_to_failed(2, buf, words);

    /* PE 0 and PE 1 go on: data both ways, atomics, signals, verified. */
    int other = 1 - me;
    unsigned char *out = malloc(BLK), *in = malloc(BLK);
    T_ASSERT(out && in, "malloc failed");
    for (unsigned round = 1; round <= 8; round++) {
        /* Two slots a sender, by round: one PE may be a round ahead. */
        unsigned char *mine = buf + (size_t)(2 * me + (round & 1)) * BLK;
        unsigned char *theirs = buf + (size_t)(2 * other + (round & 1)) * BLK;
        t_fill(out, BLK, me, round);
        T_CHECK(symrail_put_signal(mine, out, BLK, words + 3 + me, round, SYMRAIL_SIGNAL_SET,
                                   other));
        T_CHECK(symrail_signal_wait_until(words + 3 + other, SYMRAIL_CMP_GE, round, NULL));
        size_t bad = t_verify(theirs, BLK, other, round);
        T_ASSERT(bad == SIZE_MAX, "round %u: byte %zu from PE %d is wrong", round, bad, other);
        T_CHECK(symrail_get(in, mine, BLK, other));
        bad = t_verify(in, BLK, me, round);
        T_ASSERT(bad == SIZE_MAX, "round %u: byte %zu read back from PE %d is wrong", round,
                 bad, other);
        uint64_t old = 0;
        T_CHECK(symrail_atomic_fetch_add(words + 5, 1, 0, &old));
    }
    T_CHECK(symrail_quiet());

    /* A collective that includes the failed PE fails, and at once. */
    double t0 = now_s();
    symrail_status_t bs = symrail_barrier_all();
    double dtb = now_s() - t0;
    T_ASSERT(bs == SYMRAIL_ERR_PEER_GONE, "barrier_all without PE 2 returned %d (%s)", (int)bs,
             symrail_strerror(bs));
    T_ASSERT(dtb < limit, "barrier_all took %.1f s to fail", dtb);

    T_CHECK(symrail_peer_states(st, &nbad));
    T_ASSERT(nbad == 1 && st[other] == SYMRAIL_PEER_OK && st[2] == SYMRAIL_PEER_FAILED,
             "states after: %d %d %d (%d bad)", (int)st[0], (int)st[1], (int)st[2], nbad);
    symrail_stats_t stats;
    T_CHECK(symrail_stats(&stats));
    T_ASSERT(stats.peers_failed == 1, "stats count %llu failed peers",
             (unsigned long long)stats.peers_failed);

    /* Both are done with each other before either finalizes. */
    T_CHECK(symrail_atomic_add(words + 6, 1, other));
    T_CHECK(symrail_signal_wait_until(words + 6, SYMRAIL_CMP_EQ, 1, NULL));
    if (me == 0) {
        uint64_t sum = 0;
        T_CHECK(symrail_atomic_fetch(words + 5, 0, &sum));
        T_ASSERT(sum == 16, "the counter on PE 0 is %llu, not 16", (unsigned long long)sum);
    }
    printf("ok: PE %d saw PE 2 failed after %.2f s; calls to it fail, PE %d works, "
           "barrier_all fails in %.2f s\n", me, dt_seen, other, dtb);
    fflush(stdout);
    free(out);
    free(in);
    T_CHECK(symrail_finalize_status());
}

static void abort_policy(int me)
{
    int64_t *pid = symrail_calloc(1, sizeof(*pid));
    T_ASSERT(pid, "symrail_calloc failed");
    *pid = getpid();
    int64_t victim = 0;
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_CHECK(symrail_get(&victim, pid, sizeof(victim), 2));
    T_ASSERT(me != 0 || victim > 0, "PE 2's pid is %lld", (long long)victim);
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        usleep(100 * 1000);
        T_ASSERT(kill((pid_t)victim, SIGKILL) == 0, "kill PE 2 (pid %lld)", (long long)victim);
    }
    /* The launcher ends the job; until then barriers fail (or complete,
     * before the death is seen). */
    for (;;) {
        if (symrail_barrier_all() != SYMRAIL_OK)
            usleep(10 * 1000);
    }
}

static void in_barrier(int me, int n)
{
    uint64_t *left = symrail_calloc(1, sizeof(*left));
    T_ASSERT(left, "symrail_calloc failed");
    T_CHECK(symrail_barrier_all());
    if (me == n - 1) {
        /* Late enough that the others are inside the barrier. */
        usleep(500 * 1000);
        raise(SIGKILL);
    }
    double t0 = now_s(), limit = 4 * op_timeout_s();
    symrail_status_t bs = symrail_barrier_all();
    double dt = now_s() - t0;
    T_ASSERT(bs == SYMRAIL_ERR_PEER_GONE, "barrier_all with PE %d killed in it returned %d (%s)",
             n - 1, (int)bs, symrail_strerror(bs));
    T_ASSERT(dt < limit, "barrier_all took %.1f s to fail", dt);
    /* PE 0, whose release the others wait for, stays until they are out:
     * they must not need it to go for their wait to end. */
    if (me == 0)
        T_CHECK(symrail_signal_wait_until(left, SYMRAIL_CMP_EQ, (uint64_t)n - 2, NULL));
    else
        T_CHECK(symrail_atomic_add(left, 1, 0));
    printf("ok: PE %d left the barrier PE %d died in after %.2f s\n", me, n - 1, dt);
    fflush(stdout);
    T_CHECK(symrail_finalize_status());
}

static void fin_survivors(int me)
{
    double limit = op_timeout_s() + 6.0;
    unsigned char *buf = symrail_malloc(BLK);
    T_ASSERT(buf, "symrail_malloc failed");
    t_fill(buf, BLK, me, 5);
    T_CHECK(symrail_barrier_all());
    if (me == 2)
        raise(SIGKILL);
    double dt = wait_failed(2, limit);
    T_ASSERT(dt < limit, "PE 2 seen failed after %.1f s", dt);
    if (me == 0) {
        double t0 = now_s();
        T_CHECK(symrail_finalize_status());
        double dtf = now_s() - t0;
        /* PE 1 reads for 1 s more before its own finalize. */
        T_ASSERT(dtf >= 0.5, "PE 0's finalize returned after %.2f s, before PE 1's", dtf);
        printf("ok: PE 0's finalize waited %.2f s for PE 1's\n", dtf);
        fflush(stdout);
        return;
    }
    unsigned char *in = malloc(BLK);
    T_ASSERT(in, "malloc failed");
    double t0 = now_s();
    unsigned reads = 0;
    while (now_s() - t0 < 1.0) {
        memset(in, 0, BLK);
        symrail_status_t s = symrail_get(in, buf, BLK, 0);
        T_ASSERT(s == SYMRAIL_OK, "get %u from PE 0 returned %d (%s)", reads, (int)s,
                 symrail_strerror(s));
        size_t bad = t_verify(in, BLK, 0, 5);
        T_ASSERT(bad == SIZE_MAX, "get %u: byte %zu from PE 0 is wrong", reads, bad);
        reads++;
        usleep(20 * 1000);
    }
    free(in);
    printf("ok: PE 1 read PE 0's heap %u times while PE 0 was in finalize\n", reads);
    fflush(stdout);
    T_CHECK(symrail_finalize_status());
}

static void first_call(int me, const char *kind)
{
    uint64_t *words = symrail_calloc(4, sizeof(uint64_t));
    T_ASSERT(words, "symrail_calloc failed");
    T_CHECK(symrail_barrier_all());
    if (me == 1)
        raise(SIGKILL);
    /* No call at all meanwhile: nothing of the library's looks but itself. */
    usleep((useconds_t)((op_timeout_s() + 1.0) * 1e6));
    uint64_t local[2] = { 1, 2 }, old = 0;
    symrail_status_t s;
    if (strcmp(kind, "put") == 0)
        s = symrail_put(words, local, sizeof(local), 1);
    else if (strcmp(kind, "get") == 0)
        s = symrail_get(local, words, sizeof(local), 1);
    else if (strcmp(kind, "fadd") == 0)
        s = symrail_atomic_fetch_add(words, 1, 1, &old);
    else if (strcmp(kind, "set") == 0)
        s = symrail_atomic_set(words, 1, 1);
    else if (strcmp(kind, "put_signal") == 0)
        s = symrail_put_signal(words, local, 8, words + 2, 1, SYMRAIL_SIGNAL_SET, 1);
    else
        s = SYMRAIL_ERR_INVALID;
    T_ASSERT(s == SYMRAIL_ERR_PEER_GONE, "the first %s to PE 1, %.0f s after it died, "
             "returned %d (%s)", kind, op_timeout_s() + 1.0, (int)s, symrail_strerror(s));
    printf("ok: the first %s to the dead PE 1 fails\n", kind);
    fflush(stdout);
    T_CHECK(symrail_finalize_status());
}

static void in_flight(int me, const char *kind)
{
    unsigned char *buf = symrail_malloc(BLK);
    uint64_t *words = symrail_calloc(2, sizeof(uint64_t));
    T_ASSERT(buf && words, "symrail_malloc failed");
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        usleep(300 * 1000);
        raise(SIGKILL);
    }
    unsigned char *local = malloc(BLK);
    T_ASSERT(local, "malloc failed");
    memset(local, 1, BLK);
    symrail_status_t s = SYMRAIL_OK;
    uint64_t old = 0;
    unsigned n = 0;
    double t0 = now_s();
    while (s == SYMRAIL_OK && now_s() - t0 < 30.0) {
        if (strcmp(kind, "get") == 0)
            s = symrail_get(local, buf, BLK, 1);
        else if (strcmp(kind, "put") == 0)
            s = symrail_put(buf, local, BLK, 1);
        else
            s = symrail_atomic_fetch_add(words, 1, 1, &old);
        n++;
    }
    T_ASSERT(s == SYMRAIL_ERR_PEER_GONE, "%s %u to PE 1 as it died returned %d (%s)", kind, n,
             (int)s, symrail_strerror(s));
    printf("ok: the %s to PE 1 as it died fails with PEER_GONE after %u calls\n", kind, n);
    fflush(stdout);
    free(local);
    T_CHECK(symrail_finalize_status());
}

static void lane_reset(int me)
{
    unsigned char *buf = symrail_malloc(BLK);
    T_ASSERT(buf, "symrail_malloc failed");
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        /* Alive all along; PE 1 cannot reach it after its lane broke. */
        sleep(3);
        symrail_finalize();
        return;
    }
    unsigned char local[4096];
    symrail_status_t s = SYMRAIL_OK;
    unsigned n = 0;
    while (s == SYMRAIL_OK && n < 100000) {
        s = symrail_get(local, buf, sizeof(local), 0);
        n++;
    }
    T_ASSERT(s == SYMRAIL_ERR_TRANSPORT, "get %u after PE 0's only lane broke returned %d (%s)",
             n, (int)s, symrail_strerror(s));
    symrail_peer_state_t ps;
    T_CHECK(symrail_peer_state(0, &ps));
    T_ASSERT(ps == SYMRAIL_PEER_OK, "PE 0, alive, is in state %d after its lane broke", (int)ps);
    printf("ok: the broken lane fails get %u with TRANSPORT, PE 0 stays OK\n", n);
    fflush(stdout);
    symrail_finalize();
}

static void timeouts(int me)
{
    unsigned char *buf = symrail_malloc(BLK);
    unsigned char local[256];
    T_ASSERT(buf, "symrail_malloc failed");
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        symrail_status_t s = symrail_get(local, buf, sizeof(local), 1);
        T_ASSERT(s == SYMRAIL_ERR_TIMEOUT, "a held get returned %d (%s)", (int)s,
                 symrail_strerror(s));
        T_CHECK(symrail_put_nbi(buf, local, sizeof(local), 1));
        s = symrail_quiet();
        T_ASSERT(s == SYMRAIL_ERR_TIMEOUT, "quiet of a held put returned %d (%s)", (int)s,
                 symrail_strerror(s));
        /* The held completions come (SYMRAIL_TEST_HOLD_LANE's MS are more
         * than one timeout, and less than ten), and quiet is done. */
        for (int i = 0; i < 10 && (s = symrail_quiet()) == SYMRAIL_ERR_TIMEOUT; i++)
            ;
        T_CHECK(s);
        printf("ok: a held get and quiet time out\n");
        fflush(stdout);
    }
    T_CHECK(symrail_barrier_all());
    symrail_finalize();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "report";
    T_CHECK(symrail_init_status());
    int me = symrail_my_pe();
    if (strcmp(mode, "timeout") == 0) {
        T_ASSERT(symrail_n_pes() == 2, "run with 2 PEs");
        timeouts(me);
        return 0;
    }
    if (strcmp(mode, "first") == 0) {
        T_ASSERT(symrail_n_pes() == 2 && argc > 2, "run with 2 PEs and a kind");
        first_call(me, argv[2]);
        return 0;
    }
    if (strcmp(mode, "inflight") == 0 || strcmp(mode, "lanereset") == 0) {
        T_ASSERT(symrail_n_pes() == 2, "run with 2 PEs");
        if (mode[0] == 'i')
            in_flight(me, argc > 2 ? argv[2] : "get");
        else
            lane_reset(me);
        return 0;
    }
    if (strcmp(mode, "inbar") == 0) {
        T_ASSERT(symrail_n_pes() == 4, "run with 4 PEs");
        in_barrier(me, 4);
        return 0;
    }
    T_ASSERT(symrail_n_pes() == 3, "run with 3 PEs");
    if (strcmp(mode, "fin") == 0)
        fin_survivors(me);
    else if (strcmp(mode, "abort") == 0)
        abort_policy(me);
    else
        report(me);
    return 0;
}
