/*
 * A stopped peer (SIGSTOP) makes a wait fail as "unresponsive" within
 * SYMRAIL_OP_TIMEOUT, naming it, instead of hanging; once it runs again the
 * pair works again.  Run with 2 PEs and SYMRAIL_OP_TIMEOUT=2s.  T_CALL picks
 * the call that meets the stopped peer: barrier (the default), sync
 * (symrail_sync_all) or malloc (symrail_malloc, whose barrier fails and
 * which returns NULL; PE 1's malloc after SIGCONT then succeeds alone, so
 * the two heaps differ from there on: the program ends right after, and a
 * job goes on after a failed collective call at its own risk).
 */
#include "tcommon.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

    const char *call = getenv("T_CALL") ? getenv("T_CALL") : "barrier";
    int sync = strcmp(call, "sync") == 0, alloc = strcmp(call, "malloc") == 0;
    if (me == 1) {
        raise(SIGSTOP);
        /* PE 0's failed call already counted us in: this one completes. */
        if (alloc)
            T_ASSERT(symrail_malloc(64) != NULL, "malloc after the peer gave up failed");
        else
            T_CHECK(sync ? symrail_sync_all() : symrail_barrier_all());
        T_CHECK(symrail_put_signal(resumed, resumed, 0, resumed, 1, SYMRAIL_SIGNAL_SET, 0));
    } else {
        double t0 = now_s();
        symrail_status_t st = SYMRAIL_ERR_PEER_UNRESPONSIVE;
        if (alloc)
            T_ASSERT(symrail_malloc(64) == NULL, "malloc with a stopped peer succeeded");
        else
            st = sync ? symrail_sync_all() : symrail_barrier_all();
        double dt = now_s() - t0;
        T_ASSERT(st == SYMRAIL_ERR_PEER_UNRESPONSIVE,
                 "%s with a stopped peer returned %d (%s)", call, (int)st, symrail_strerror(st));
        T_ASSERT(dt >= 1.5 && dt < 8.0, "%s failed after %.1f s, SYMRAIL_OP_TIMEOUT is 2 s",
                 call, dt);
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
        printf("ok: a stopped peer is unresponsive after %.1f s (%s) and works again after "
               "SIGCONT\n", dt, call);
    }
    symrail_finalize();
    return 0;
}
