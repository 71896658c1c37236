/*
 * The checks of the public entry points: every argument is checked once, at
 * the API, so the core and the transports can trust what they are given.  A
 * bad argument is reported in one line naming the call and the argument.
 */
#ifndef SR_API_API_H
#define SR_API_API_H

#include "core/rt.h"
#include "util/log.h"
#include "util/sys.h"

#include <symrail.h>

#define SR_API_UP(_fn, _fail)                                                      \
    do {                                                                           \
        if (sr_unlikely(sr_rt.state != SR_STATE_UP)) {                            \
            sr_api_not_up(_fn);                                                    \
            return _fail;                                                          \
        }                                                                          \
    } while (0)

void sr_api_not_up(const char *fn);
/* OpenSHMEM-style calls that cannot return a status end the job. */
__attribute__((noreturn)) void sr_api_fatal(const char *fn, symrail_status_t st);
/* A context whose state is not plainly SR_CTX_LIVE: 0 (logged) when it is
 * not alive, or with SYMRAIL_CTX_NOSTORE for a store; 1 when it may go on
 * (under its lock, if it has one). */
__attribute__((cold)) int sr_api_ctx_check(const char *fn, const sr_ctx_t *ctx, int store);

static inline __attribute__((always_inline)) int sr_api_pe_ok(const char *fn, int pe)
{
    if (sr_likely(pe >= 0 && pe < sr_rt.n_pes))
        return 1;
    sr_error("%s: pe %d is out of range (0..%d)", fn, pe, sr_rt.n_pes - 1);
    return 0;
}

/* A PE of the job, or a connected peer (core/endpoint.h) that has its
 * endpoint: for notifications, segments and batches. */
__attribute__((cold)) int sr_api_peer_ok_slow(const char *fn, int pe);
static inline int sr_api_peer_ok(const char *fn, int pe)
{
    if (sr_likely(pe >= 0 && pe < sr_rt.n_pes))
        return 1;
    return sr_api_peer_ok_slow(fn, pe);
}

/* [addr, addr+len) lies in one live allocation of the symmetric heap: the
 * first test of the data paths, which take anything else out of line (a
 * call that the fast path returns through would make it save registers).
 * The table of block ends (core/heap_alloc.h) answers in one load, three
 * for a later block of a granule that blocks share; the library's reserved
 * part and free ranges read 0 there. */
static inline __attribute__((always_inline)) int sr_api_in_heap(const void *addr, size_t len, uint64_t *off_p)
{
    uint64_t off = (uintptr_t)addr - (uintptr_t)sr_rt.heap_base;
    *off_p = off;
    /* One test for both, and off + len cannot wrap after it; it refuses
     * (to the exact path) only accesses that reach the heap's last byte. */
    if (sr_unlikely((off | len) >= sr_rt.heap_size))
        return 0;
    return sr_heap_span_ok(&sr_rt.heap, off, len);
}

/* Is addr symmetric (heap or data segment)?  Silent: for queries such as
 * shmem_addr_accessible, to which a local address is no mistake. */
static inline int sr_api_is_sym(const void *addr, uint64_t *off_p)
{
    uintptr_t a = (uintptr_t)addr, dlo = (uintptr_t)sr_rt.data_base;
    uintptr_t hlo = (uintptr_t)sr_rt.heap_base + sr_rt.heap_reserved;
    if (a >= hlo && a < (uintptr_t)sr_rt.heap_base + sr_rt.heap_size) {
        *off_p = a - (uintptr_t)sr_rt.heap_base;
        return 1;
    }
    if (!sr_rt.data_on || a < dlo || a >= dlo + sr_rt.data_len)
        return 0;
    *off_p = SR_DATA_BIT | (a - dlo);
    return 1;
}

/* [addr, addr+len) must lie in the user part of the symmetric heap or in the
 * symmetric data segment. */
static inline __attribute__((always_inline)) int sr_api_sym_ok(const char *fn, const char *arg, const void *addr, size_t len,
                                uint64_t *off_p)
{
    if (sr_likely(sr_api_in_heap(addr, len, off_p)))
        return 1;
    uint64_t off = sr_sym_off(fn, arg, addr, len);
    *off_p = off;
    return off != SR_OFF_BAD;
}

/* The private buffer of a put or get must at least not wrap around. */
static inline __attribute__((always_inline)) int sr_api_buf_ok(const char *fn, const char *arg, const void *addr, size_t len)
{
    if (sr_likely(addr != NULL && (uintptr_t)addr + len >= (uintptr_t)addr) || len == 0)
        return 1;
    sr_error("%s: %s %p with %zu bytes is not a valid buffer", fn, arg, addr, len);
    return 0;
}

/* The word of an atomic: `width` bytes of the symmetric heap, aligned to
 * its width. */
static inline int sr_api_amo_ok(const char *fn, const char *arg, const void *addr, size_t width,
                                uint64_t *off_p)
{
    if (!sr_api_sym_ok(fn, arg, addr, width, off_p))
        return 0;
    if (sr_likely(((uintptr_t)addr & (width - 1)) == 0))
        return 1;
    sr_error("%s: %s %p is not aligned to %zu bytes", fn, arg, addr, width);
    return 0;
}

static inline int sr_api_word_ok(const char *fn, const char *arg, const void *addr,
                                 uint64_t *off_p)
{
    return sr_api_amo_ok(fn, arg, addr, sizeof(uint64_t), off_p);
}


#endif
