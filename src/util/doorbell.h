/*
 * A doorbell: the word a PE sleeps on (a futex) while it waits for a peer to
 * change its memory, and the count of those asleep, so that writers pay for
 * a wake-up only when somebody may sleep.  It lives in memory the writers
 * share with the sleeper: another process's control segment (shm) or this
 * process (the TCP progress thread).  See doorbell.c for why no wake-up is
 * lost although writers do not fence.
 *
 * Writer:  store the data; sr_doorbell_kick (or _kick_rmw after a locked
 *          read-modify-write).
 * Sleeper: token = sr_doorbell_arm; re-check the condition;
 *          sr_doorbell_sleep(token); sr_doorbell_disarm.
 */
#ifndef SR_UTIL_DOORBELL_H
#define SR_UTIL_DOORBELL_H

#include <stdint.h>

#include "util/sys.h"

typedef struct {
    _Alignas(SR_CACHE_LINE) uint32_t seq;      /* bumped to wake sleepers */
    _Alignas(SR_CACHE_LINE) uint32_t waiters;  /* how many sleep on seq */
    uint32_t wake_pending;                     /* a wake-up is on its way */
} sr_doorbell_t;

/* Set when this process could not register for membarrier: its writers
 * fence before they look at `waiters`.  Read on every kick. */
extern int sr_doorbell_fence_per_kick;

/* Registers this process for expedited membarrier (once; every transport
 * that rings or sleeps calls it at init). */
void sr_doorbell_setup(void);
/* The slow path of a kick: somebody may sleep. */
void sr_doorbell_ring(sr_doorbell_t *db);

/* After plain stores to the sleeper's memory: wake it if it may be asleep. */
static inline void sr_doorbell_kick(sr_doorbell_t *db)
{
    if (sr_unlikely(__atomic_load_n(&sr_doorbell_fence_per_kick, __ATOMIC_RELAXED)))
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    else
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* data stores, then the load */
    if (sr_unlikely(__atomic_load_n(&db->waiters, __ATOMIC_RELAXED) != 0))
        sr_doorbell_ring(db);
}

/* After a locked read-modify-write, which is a full barrier by itself on
 * x86; elsewhere the acquire-release RMW is not, so fence as for a store. */
static inline void sr_doorbell_kick_rmw(sr_doorbell_t *db)
{
#if defined(__x86_64__) || defined(__i386__)
    if (sr_unlikely(__atomic_load_n(&db->waiters, __ATOMIC_RELAXED) != 0))
        sr_doorbell_ring(db);
#else
    sr_doorbell_kick(db);
#endif
}

/* Counts the caller among the sleepers and runs the writers' half of the
 * fence; returns the token for sr_doorbell_sleep.  *nap_p: a wake-up may be
 * missed (no membarrier), so sleep only in short naps. */
uint32_t sr_doorbell_arm(sr_doorbell_t *db, int *nap_p);
/* Sleeps until the doorbell rings after `token` was taken, or timeout_ns
 * (at most SR_DOORBELL_NAP_NS with nap). */
void sr_doorbell_sleep(sr_doorbell_t *db, uint32_t token, uint64_t timeout_ns, int nap);
void sr_doorbell_disarm(sr_doorbell_t *db);

#define SR_DOORBELL_NAP_NS 1000000ull  /* sleep limit when a wake-up may be lost */

#endif
