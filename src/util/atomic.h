/*
 * CPU atomics on a 64- or 32-bit symmetric word, for every transport that applies
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
 *  - ADD, SWAP, CSWAP, AND, OR and XOR acquire and release (locks and counters are built
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
    SR_CPU_AMO_AND,    /* old = *t; *t &= operand */
    SR_CPU_AMO_OR,     /* old = *t; *t |= operand */
    SR_CPU_AMO_XOR,    /* old = *t; *t ^= operand */
    SR_CPU_AMO_W32 = 8, /* flag: t is a 4-byte word (operands truncated, old zero-extended) */
};

#define SR_CPU_AMO_CASES(_w, _T)                                                              \
    case SR_CPU_AMO_ADD | (_w):                                                               \
        old = __atomic_fetch_add((_T *)t, (_T)operand, __ATOMIC_ACQ_REL);                     \
        break;                                                                                \
    case SR_CPU_AMO_FETCH | (_w):                                                             \
        *old_p = __atomic_load_n((_T *)t, __ATOMIC_ACQUIRE);                                  \
        return SR_CPU_AMO_READ;                                                               \
    case SR_CPU_AMO_SET | (_w):                                                               \
        __atomic_store_n((_T *)t, (_T)operand, __ATOMIC_RELEASE);                             \
        *old_p = 0;                                                                           \
        return SR_CPU_AMO_STORE;                                                              \
    case SR_CPU_AMO_SWAP | (_w):                                                              \
        old = __atomic_exchange_n((_T *)t, (_T)operand, __ATOMIC_ACQ_REL);                    \
        break;                                                                                \
    case SR_CPU_AMO_CSWAP | (_w): {                                                           \
        _T expect = (_T)compare;                                                              \
        __atomic_compare_exchange_n((_T *)t, &expect, (_T)operand, 0, __ATOMIC_ACQ_REL,       \
                                    __ATOMIC_ACQUIRE);                                        \
        old = expect;                                                                         \
        break;                                                                                \
    }                                                                                         \
    case SR_CPU_AMO_AND | (_w):                                                               \
        old = __atomic_fetch_and((_T *)t, (_T)operand, __ATOMIC_ACQ_REL);                     \
        break;                                                                                \
    case SR_CPU_AMO_OR | (_w):                                                                \
        old = __atomic_fetch_or((_T *)t, (_T)operand, __ATOMIC_ACQ_REL);                      \
        break;                                                                                \
    case SR_CPU_AMO_XOR | (_w):                                                               \
        old = __atomic_fetch_xor((_T *)t, (_T)operand, __ATOMIC_ACQ_REL);                     \
        break;

/* The value a kind (without SR_CPU_AMO_W32) makes of cur: for a device
 * that applies the others as compare-swaps of the value it computed.  A
 * kind that stores nothing (FETCH, a CSWAP that did not match, one not
 * above) leaves cur. */
static inline uint64_t sr_amo_value(int kind, uint64_t cur, uint64_t operand, uint64_t compare)
{
    switch (kind) {
    case SR_CPU_AMO_SET:
    case SR_CPU_AMO_SWAP:  return operand;
    case SR_CPU_AMO_ADD:   return cur + operand;
    case SR_CPU_AMO_CSWAP: return cur == compare ? operand : cur;
    case SR_CPU_AMO_AND:   return cur & operand;
    case SR_CPU_AMO_OR:    return cur | operand;
    case SR_CPU_AMO_XOR:   return cur ^ operand;
    default:               return cur;
    }
}

/* What an atomic did to its word, for a transport that wakes the waiters
 * of writes. */
enum { SR_CPU_AMO_INVALID = 0, SR_CPU_AMO_READ, SR_CPU_AMO_STORE, SR_CPU_AMO_RMW };

/* Applies `op` to the word at t (aligned to its width); SR_CPU_AMO_INVALID
 * when op is not one of the kinds above, with or without SR_CPU_AMO_W32. */
static inline int sr_cpu_amo(void *t, int op, uint64_t operand, uint64_t compare,
                             uint64_t *old_p)
{
    uint64_t old;
    /* Counters are the common case: no jump through the table for them. */
    if (__builtin_expect(op == SR_CPU_AMO_ADD, 1)) {
        *old_p = __atomic_fetch_add((uint64_t *)t, operand, __ATOMIC_ACQ_REL);
        return SR_CPU_AMO_RMW;
    }
    switch (op) {
    SR_CPU_AMO_CASES(0, uint64_t)
    SR_CPU_AMO_CASES(SR_CPU_AMO_W32, uint32_t)
    default:
        return SR_CPU_AMO_INVALID;
    }
    *old_p = old;
    return SR_CPU_AMO_RMW;
}

#undef SR_CPU_AMO_CASES

#endif
