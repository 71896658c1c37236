/*
 * CPU atomics on a 64-bit symmetric word, for every transport that applies
 * them with the CPU (shm on a peer's mapping, the TCP target on its own
 * heap).  One switch, so all of them order memory alike.
 *
 * The kinds are numbered as the transports' sr_tl_amo_t (tl.c checks it).
 *
 * Memory orders are those of a flag that guards data:
 *  - FETCH acquires: a PE that reads a flag and then the data it guards
 *    sees what the writer stored before it set the flag;
 *  - SET releases: the data written before it is visible to whoever sees the
 *    new value;
 *  - ADD, SWAP and CSWAP acquire and release (locks and counters are built
 *    from them); a failed CSWAP still acquires, as it reads the word like
 *    FETCH does.
 * Nothing here is sequentially consistent: ordering against other words is
 * the job of fence and quiet.
 */
#ifndef SR_UTIL_ATOMIC_H
#define SR_UTIL_ATOMIC_H

#include <stdint.h>

enum {
    SR_CPU_AMO_FETCH,  /* old = *t */
    SR_CPU_AMO_SET,    /* *t = operand; old = 0 */
    SR_CPU_AMO_ADD,    /* old = *t; *t += operand */
    SR_CPU_AMO_SWAP,   /* old = *t; *t = operand */
    SR_CPU_AMO_CSWAP,  /* old = *t; if (old == compare) *t = operand */
};

/* Applies `op` to *t; 0 when op is not one of the kinds above. */
static inline int sr_cpu_amo(uint64_t *t, int op, uint64_t operand, uint64_t compare,
                             uint64_t *old_p)
{
    uint64_t old;
    switch (op) {
    case SR_CPU_AMO_FETCH:
        old = __atomic_load_n(t, __ATOMIC_ACQUIRE);
        break;
    case SR_CPU_AMO_SET:
        __atomic_store_n(t, operand, __ATOMIC_RELEASE);
        old = 0;
        break;
    case SR_CPU_AMO_ADD:
        old = __atomic_fetch_add(t, operand, __ATOMIC_ACQ_REL);
        break;
    case SR_CPU_AMO_SWAP:
        old = __atomic_exchange_n(t, operand, __ATOMIC_ACQ_REL);
        break;
    case SR_CPU_AMO_CSWAP:
        old = compare;
        __atomic_compare_exchange_n(t, &old, operand, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        break;
    default:
        return 0;
    }
    *old_p = old;
    return 1;
}

#endif
