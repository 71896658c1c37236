#include "config.h"
#include "util/doorbell.h"
#include "util/log.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Doorbell without a fence per put (or per write of the TCP progress thread).
 *
 * A sleeper and a writer form a Dekker pair: the sleeper stores `waiters`
 * and then loads the data it waits for; the writer stores data and then
 * loads `waiters`.  On x86 (and weaker machines) each side's load may pass
 * its own earlier store, so both could read the old value: the sleeper goes
 * to sleep and the writer sees nobody to wake.  The usual cure is a full
 * fence on both sides, which puts one on every put.
 *
 * Instead the fence is moved to the side that is about to sleep anyway: a
 * sleeper calls membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) after raising
 * `waiters` and before re-checking its condition.  That call runs a full
 * barrier on every CPU that runs a thread of a registered process (each
 * process registers in sr_doorbell_setup at init, and a TCP progress thread
 * belongs to the sleeper's own process) and a context switch is one too, so
 * for any writer one of two things holds:
 *  - its barrier point came before its load of `waiters`: the load then
 *    sees the raised count (the sleeper's store was ordered before the
 *    system call) and the writer rings the doorbell; or
 *  - it came after that load, hence after the data store that precedes the
 *    load in program order (the compiler barrier in sr_doorbell_kick keeps
 *    that order):
 *    the data is visible before membarrier returns, and the sleeper's
 *    re-check sees it and does not sleep.
 * Either way no wake-up is lost.  The writer's cost is one plain load of a
 * line that is written only when somebody goes to sleep.
 *
 * Where membarrier is not available (old kernel, seccomp), registration
 * fails in every process of the node alike, and writers fall back to a full
 * fence before the load (sr_doorbell_fence_per_kick).
 *
 * Only the first writer after the sleeper armed pays for the system call;
 * the sleeper re-checks its condition after re-arming, so later writes are
 * seen.
 */
#ifndef MEMBARRIER_CMD_GLOBAL_EXPEDITED
#define MEMBARRIER_CMD_QUERY                        0
#define MEMBARRIER_CMD_GLOBAL_EXPEDITED             (1 << 1)
#define MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED    (1 << 2)
#endif

int sr_doorbell_fence_per_kick = 1;

static int sr_doorbell_membarrier(int cmd)
{
#ifdef SYS_membarrier
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
#else
    (void)cmd;
    errno = ENOSYS;
    return -1;
#endif
}

void sr_doorbell_setup(void)
{
    int cmds = sr_doorbell_membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) ||
        sr_doorbell_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) {
        sr_debug("no expedited membarrier (%m): a fence per write that may wake a sleeper");
        __atomic_store_n(&sr_doorbell_fence_per_kick, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&sr_doorbell_fence_per_kick, 0, __ATOMIC_RELAXED);
}

void sr_doorbell_ring(sr_doorbell_t *db)
{
    /* A wake-up is on its way already: only look, so that writers on many
     * threads do not take the line from each other on every put.  (Seen as
     * the waiters count is: the sleeper clears it before its fence.) */
    if (__atomic_load_n(&db->wake_pending, __ATOMIC_SEQ_CST) != 0)
        return;
    if (__atomic_exchange_n(&db->wake_pending, 1, __ATOMIC_SEQ_CST) == 0) {
        __atomic_fetch_add(&db->seq, 1, __ATOMIC_RELEASE);
        /* Shared (not PRIVATE) futex: the waker may be another process. */
        syscall(SYS_futex, &db->seq, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
    }
}

uint32_t sr_doorbell_arm(sr_doorbell_t *db, int *nap_p)
{
    __atomic_fetch_add(&db->waiters, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&db->wake_pending, 0, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* The writers' half of the fence (see sr_doorbell_kick).  Without it a
     * writer that does not fence could be missed: sleep in short naps. */
    *nap_p = __atomic_load_n(&sr_doorbell_fence_per_kick, __ATOMIC_RELAXED) ||
             sr_doorbell_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0;
    return __atomic_load_n(&db->seq, __ATOMIC_SEQ_CST);
}

void sr_doorbell_sleep(sr_doorbell_t *db, uint32_t token, uint64_t timeout_ns, int nap)
{
    if (nap && timeout_ns > SR_DOORBELL_NAP_NS)
        timeout_ns = SR_DOORBELL_NAP_NS;
    struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000ull),
                           .tv_nsec = (long)(timeout_ns % 1000000000ull) };
    syscall(SYS_futex, &db->seq, FUTEX_WAIT, token, &ts, NULL, 0);
}

void sr_doorbell_disarm(sr_doorbell_t *db)
{
    __atomic_fetch_sub(&db->waiters, 1, __ATOMIC_RELAXED);
}
