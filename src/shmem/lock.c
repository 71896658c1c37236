/*
 * OpenSHMEM distributed locks: an MCS queue lock over 64-bit atomics.
 *
 * The lock word on one PE (its home, chosen from the lock's symmetric
 * offset so that many locks spread over the PEs) holds the tail of the
 * queue: 0 when the lock is free, else the last PE to ask for it and which
 * of its queue nodes it waits on.  The nodes are words in each PE's
 * reserved part of the heap (one per lock the PE holds or waits for at
 * once); a node receives, by atomic additions from peers, the PE queued
 * behind it and the hand-over flag.  So a PE asking for the lock does one
 * swap at the home and, if the lock is taken, one add to its predecessor,
 * then waits on its own memory (sleeping on the transport, no traffic); a
 * PE giving it up does one add to its successor, or one compare-and-swap at
 * the home when nobody is queued.  PEs get the lock in the order their
 * swaps reached the home: no PE starves, none livelocks, and test_lock is
 * one compare-and-swap that never waits for the lock.
 */
#include "config.h"
#include "shmem/p2p.h"

#include <pthread.h>

/* A node word: the successor's tail value in the low bits, the hand-over
 * flag above them.  A tail value: (PE + 1) << SR_LOCK_SLOT_BITS | slot. */
#define SR_LOCK_SLOT_BITS 8
#define SR_LOCK_GO        (UINT64_C(1) << 56)
#define SR_LOCK_NEXT      (SR_LOCK_GO - 1)

_Static_assert(SR_LOCK_SLOTS <= (1 << SR_LOCK_SLOT_BITS), "slot numbers fit a tail value");
_Static_assert(sizeof(long) == sizeof(uint64_t), "the lock word is one 64-bit atomic");

/* Slots in use, and the lock each one is for (threads of a PE may hold
 * different locks at once). */
static uint64_t sr_lock_used;
static long    *sr_lock_of[SR_LOCK_SLOTS];
/* Looking a lock up and taking a slot for it are one step, so that two
 * threads of a PE asking for the same lock are told, not queued twice. */
static pthread_mutex_t sr_lock_mu = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t sr_lock_tail(int pe, int slot)
{
    return (uint64_t)(pe + 1) << SR_LOCK_SLOT_BITS | (uint64_t)slot;
}

static inline uint64_t sr_lock_node_off(int slot)
{
    return sr_heap_offset(&sr_intern()->lock_node[slot]);
}

/* The PE and slot of a tail value that a peer published. */
static void sr_lock_decode(const char *fn, const long *lock, uint64_t tail, int *pe_p,
                           int *slot_p)
{
    uint64_t pe1 = tail >> SR_LOCK_SLOT_BITS, slot = tail & ((1u << SR_LOCK_SLOT_BITS) - 1);
    if (sr_unlikely(pe1 == 0 || pe1 > (uint64_t)sr_rt.n_pes || slot >= SR_LOCK_SLOTS))
        sr_sh_fatal(fn, "lock %p holds %#llx, which no lock call wrote (was it set to 0 on "
                  "every PE before first use, and written by nothing else?)",
                  (const void *)lock, (unsigned long long)tail);
    *pe_p = (int)pe1 - 1;
    *slot_p = (int)slot;
}

/* The lock word's offset and home PE. */
static uint64_t sr_lock_word(const char *fn, long *lock, int *home_p)
{
    SR_SH_UP(fn);
    uint64_t off = sr_sh_sym_check(fn, "lock", lock, sizeof(long), sizeof(long));
    *home_p = (int)((off / sizeof(long)) % (uint64_t)sr_rt.n_pes);
    return off;
}

static int sr_lock_find(const long *lock)
{
    uint64_t used = __atomic_load_n(&sr_lock_used, __ATOMIC_ACQUIRE);
    for (int s = 0; s < SR_LOCK_SLOTS; s++)
        if ((used >> s & 1) && __atomic_load_n(&sr_lock_of[s], __ATOMIC_RELAXED) == lock)
            return s;
    return -1;
}

static int sr_lock_slot_get(const char *fn, long *lock)
{
    uint64_t used = __atomic_load_n(&sr_lock_used, __ATOMIC_RELAXED);
    int s;
    do {
        if (used == ~UINT64_C(0))
            sr_sh_fatal(fn, "this PE holds or waits for %d locks already, the most it may at once",
                        SR_LOCK_SLOTS);
        s = __builtin_ctzll(~used);
    } while (!__atomic_compare_exchange_n(&sr_lock_used, &used, used | UINT64_C(1) << s, 1,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    __atomic_store_n(&sr_lock_of[s], lock, __ATOMIC_RELAXED);
    __atomic_store_n(&sr_intern()->lock_node[s], 0, __ATOMIC_RELAXED);
    return s;
}

static void sr_lock_slot_put(int s)
{
    __atomic_store_n(&sr_lock_of[s], NULL, __ATOMIC_RELAXED);
    __atomic_fetch_and(&sr_lock_used, ~(UINT64_C(1) << s), __ATOMIC_RELEASE);
}

/* One atomic on the default context, held only for the atomic (a waiting
 * PE must not keep its other threads off the context). */
static uint64_t sr_lock_amo(const char *fn, sr_tl_amo_t op, uint64_t off, uint64_t operand,
                            uint64_t compare, int pe)
{
    sr_ctx_t *ctx = sr_rt.dctx;
    uint64_t old = 0;
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_amo(ctx, op, off, operand, compare, pe, &old);
    sr_ctx_leave(ctx);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal(fn, st);
    return old;
}

typedef struct {
    const uint64_t *node;
    uint64_t        mask;
} sr_lock_wait_t;

static int sr_lock_ready(void *arg)
{
    const sr_lock_wait_t *w = arg;
    return (__atomic_load_n(w->node, __ATOMIC_ACQUIRE) & w->mask) != 0;
}

/* Until a peer has written `mask` bits into our node `slot`. */
static uint64_t sr_lock_await(const char *fn, int slot, uint64_t mask)
{
    sr_lock_wait_t w = { &sr_intern()->lock_node[slot], mask };
    sr_wait_on_t on = { fn, SR_WAIT_PE_ANY, w.node, 0 };
    symrail_status_t st = sr_wait_on(NULL, sr_lock_ready, &w, SR_WAIT_REMOTE, 0, &on);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal(fn, st);
    return __atomic_load_n(w.node, __ATOMIC_ACQUIRE);
}

void shmem_set_lock(long *lock)
{
    static const char fn[] = "shmem_set_lock";
    int home, me = sr_rt.my_pe;
    uint64_t off = sr_lock_word(fn, lock, &home);
    pthread_mutex_lock(&sr_lock_mu);
    if (sr_unlikely(sr_lock_find(lock) >= 0))
        sr_sh_fatal(fn, "lock %p is held by this PE already (clear it first)", (void *)lock);
    int slot = sr_lock_slot_get(fn, lock);
    pthread_mutex_unlock(&sr_lock_mu);
    uint64_t prev = sr_lock_amo(fn, SR_TL_AMO_SWAP, off, sr_lock_tail(me, slot), 0, home);
    if (prev == 0)
        return;
    int ppe, pslot;
    sr_lock_decode(fn, lock, prev, &ppe, &pslot);
    /* Its successor field is 0 until we add ourselves: an add sets it. */
    sr_lock_amo(fn, SR_TL_AMO_ADD, sr_lock_node_off(pslot), sr_lock_tail(me, slot), 0, ppe);
    sr_lock_await(fn, slot, SR_LOCK_GO);
}

int shmem_test_lock(long *lock)
{
    static const char fn[] = "shmem_test_lock";
    int home, me = sr_rt.my_pe;
    uint64_t off = sr_lock_word(fn, lock, &home);
    pthread_mutex_lock(&sr_lock_mu);
    if (sr_lock_find(lock) >= 0) {
        pthread_mutex_unlock(&sr_lock_mu);
        return 1;  /* ours already: it is set */
    }
    int slot = sr_lock_slot_get(fn, lock);
    pthread_mutex_unlock(&sr_lock_mu);
    uint64_t prev = sr_lock_amo(fn, SR_TL_AMO_CSWAP, off, sr_lock_tail(me, slot), 0, home);
    if (prev == 0)
        return 0;
    sr_lock_slot_put(slot);
    return 1;
}

void shmem_clear_lock(long *lock)
{
    static const char fn[] = "shmem_clear_lock";
    int home, me = sr_rt.my_pe;
    uint64_t off = sr_lock_word(fn, lock, &home);
    int slot = sr_lock_find(lock);
    if (sr_unlikely(slot < 0))
        sr_sh_fatal(fn, "lock %p is not held by this PE", (void *)lock);
    /* What the critical section wrote is complete before anyone else enters. */
    sr_ctx_t *ctx = sr_rt.dctx;
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_quiet(ctx);
    sr_ctx_leave(ctx);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal(fn, st);

    uint64_t mine = sr_lock_tail(me, slot);
    uint64_t node = __atomic_load_n(&sr_intern()->lock_node[slot], __ATOMIC_ACQUIRE);
    if ((node & SR_LOCK_NEXT) == 0) {
        if (sr_lock_amo(fn, SR_TL_AMO_CSWAP, off, 0, mine, home) == mine)
            goto done;  /* nobody queued */
        /* Somebody swapped itself in and is about to tell us. */
        node = sr_lock_await(fn, slot, SR_LOCK_NEXT);
    }
    int npe, nslot;
    sr_lock_decode(fn, lock, node & SR_LOCK_NEXT, &npe, &nslot);
    sr_lock_amo(fn, SR_TL_AMO_ADD, sr_lock_node_off(nslot), SR_LOCK_GO, 0, npe);
done:
    sr_lock_slot_put(slot);
}
