/*
 * A stopped peer (SIGSTOP) makes a wait fail as "unresponsive" within
 * SYMRAIL_OP_TIMEOUT, naming it, instead of hanging; once it runs again the
 * pair works again.  Run with 2 PEs and SYMRAIL_OP_TIMEOUT=2s.
 */
#include "tcommon.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    T_CHECK(symrail_init_status());
    int me = symrail_my_pe();
    T_ASSERT(symrail_n_pes() == 2, "run with 2 PEs");
    int64_t *pid = symrail_calloc(1, sizeof(*pid));
    uint64_t *resumed = symrail_calloc(2, sizeof(*resumed));
    T_ASSERT(pid && resumed, "symrail_calloc failed");
    *pid = getpid();
    T_CHECK(symrail_barrier_all());
    int64_t peer = 0;
    if (me == 0)
        T_CHECK(symrail_get(&peer, pid, sizeof(peer), 1));
    T_CHECK(symrail_barrier_all());

    if (me == 1) {
        raise(SIGSTOP);
        /* PE 0's failed barrier already counted us in: this one completes. */
        T_CHECK(symrail_barrier_all());
        T_CHECK(symrail_put_signal(resumed, resumed, 0, resumed, 1, SYMRAIL_SIGNAL_SET, 0));
    } else {
        double t0 = now_s();
        symrail_status_t st = symrail_barrier_all();
        double dt = now_s() - t0;
        T_ASSERT(st == SYMRAIL_ERR_PEER_UNRESPONSIVE,
                 "barrier with a stopped peer returned %d (%s)", (int)st, symrail_strerror(st));
        T_ASSERT(dt >= 1.5 && dt < 8.0, "barrier failed after %.1f s, SYMRAIL_OP_TIMEOUT is 2 s",
                 dt);
        if (getenv("T_ATOMIC")) {
            /* One line in the log for one failed atomic (it was two). */
            uint64_t old;
            fprintf(stderr, "t_liveness: atomic to the stopped peer\n");
            st = symrail_atomic_fetch_add(resumed + 1, 1, 1, &old);
            T_ASSERT(st != SYMRAIL_OK, "an atomic to a stopped peer succeeded");
            fprintf(stderr, "t_liveness: atomic done\n");
        }
        kill((pid_t)peer, SIGCONT);
        T_CHECK(symrail_signal_wait_until(resumed, SYMRAIL_CMP_EQ, 1, NULL));
        printf("ok: a stopped peer is unresponsive after %.1f s and works again after SIGCONT\n",
               dt);
    }
    symrail_finalize();
    return 0;
}
