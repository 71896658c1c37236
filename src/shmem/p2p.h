/*
 * What the OpenSHMEM point-to-point, signal and lock calls share: their
 * argument checks (every bad argument ends the job with one line naming the
 * call and the argument) and the comparison operators; the rest is sh.h's.
 */
#ifndef SR_SHMEM_P2P_H
#define SR_SHMEM_P2P_H

#include "shmem/sh.h"

#include <stdint.h>

/* The typed names come from shmem.h's tables: SHMEM_X_P2P_TYPES (waits and
 * tests), SHMEM_X_OLD_WAIT_TYPES (deprecated wait), SHMEM_X_RMA_TYPES and
 * SHMEM_X_SIZES (put-with-signal), each X(TYPENAME, TYPE, extra). */

/* SHMEM_CMP_* to the core's comparison. */
static inline symrail_cmp_t sr_sh_cmp(const char *fn, int cmp)
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return SYMRAIL_CMP_EQ;
    case SHMEM_CMP_NE: return SYMRAIL_CMP_NE;
    case SHMEM_CMP_GT: return SYMRAIL_CMP_GT;
    case SHMEM_CMP_GE: return SYMRAIL_CMP_GE;
    case SHMEM_CMP_LT: return SYMRAIL_CMP_LT;
    case SHMEM_CMP_LE: return SYMRAIL_CMP_LE;
    }
    sr_sh_fatal(fn, "cmp %d is none of SHMEM_CMP_EQ, _NE, _GT, _GE, _LT, _LE", cmp);
}

/* [addr, addr + len) in this PE's symmetric memory (the api layer's check,
 * which knows every symmetric region): its offset there. */
static inline uint64_t sr_sh_sym_check(const char *fn, const char *arg, const void *addr,
                                       size_t len, size_t align)
{
    uint64_t off = 0;
    if (sr_unlikely(!sr_api_sym_ok(fn, arg, addr, len, &off)))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    if (sr_unlikely(align > 1 && ((uintptr_t)addr & (align - 1))))
        sr_sh_fatal(fn, "%s %p is not aligned to %zu bytes", arg, addr, align);
    return off;
}

/* A signal word: symmetric, 8-byte aligned. */
static inline uint64_t sr_sh_sig_check(const char *fn, const uint64_t *sig_addr)
{
    return sr_sh_sym_check(fn, "sig_addr", sig_addr, sizeof(uint64_t), sizeof(uint64_t));
}

#endif
