/*
 * One copy routine for every transfer between a private buffer and shared or
 * staging memory.
 *
 * glibc's memcpy is fast for most relative alignments, but its speed depends
 * on (dst - src) modulo the page size and on which path it picks per size
 * (what was measured is at the top of copy.c).  sr_copy picks its own strategy above a
 * small threshold so that every relative alignment of a user's malloc'd
 * buffer and a page-aligned symmetric block runs at the same speed.  Small
 * copies stay a plain memcpy, which the compiler inlines for constant sizes:
 * they are the hot path of 8-byte puts.
 *
 * The buffers must not overlap.
 */
#ifndef SR_UTIL_COPY_H
#define SR_UTIL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* At or below this size memcpy's own code for short copies is as good as
 * anything and costs nothing to choose. */
#define SR_COPY_SMALL 1024

void sr_copy_large(void *dst, const void *src, size_t len);

/* Up to 16 bytes: two possibly overlapping loads and stores, no call (a
 * call to memcpy alone costs more instructions than an 8-byte put's share
 * of the transport). */
static inline void sr_copy_tiny(void *dst, const void *src, size_t len)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (len >= 8) {
        uint64_t a, b;
        __builtin_memcpy(&a, s, 8);
        __builtin_memcpy(&b, s + len - 8, 8);
        __builtin_memcpy(d, &a, 8);
        __builtin_memcpy(d + len - 8, &b, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        __builtin_memcpy(&a, s, 4);
        __builtin_memcpy(&b, s + len - 4, 4);
        __builtin_memcpy(d, &a, 4);
        __builtin_memcpy(d + len - 4, &b, 4);
    } else if (len) {
        /* 1..3 bytes: first, middle and last (some may coincide) */
        unsigned char a = s[0], m = s[len / 2], z = s[len - 1];
        d[0] = a;
        d[len / 2] = m;
        d[len - 1] = z;
    }
}

static inline void sr_copy(void *dst, const void *src, size_t len)
{
    if (__builtin_expect(len <= 16, 1))
        sr_copy_tiny(dst, src, len);
    else if (__builtin_expect(len <= SR_COPY_SMALL, 1))
        memcpy(dst, src, len);
    else
        sr_copy_large(dst, src, len);
}

/* The first line of a copy that follows soon, on its way into the cache
 * (write: it will be stored to).  A copy of a few KiB from lines nobody
 * touched lately (KV blocks scattered over a pool) starts with misses that
 * the hardware prefetchers, which follow streams, do not hide; issued one
 * copy ahead, they overlap with it. */
static inline void sr_prefetch(const void *p, int write)
{
    if (write)
        __builtin_prefetch(p, 1, 3);
    else
        __builtin_prefetch(p, 0, 3);
}

/* Which strategy sr_copy_large uses for this copy (for tests and tools; sr_copy
 * itself copies up to SR_COPY_SMALL bytes with memcpy):
 * "memcpy", "avx512", "avx2", "avx512-back", "avx2-back", "avx512-shift",
 * "avx512-shift-back", "movsb" or "stream". */
const char *sr_copy_strategy(const void *dst, const void *src, size_t len);

/* The vector code sr_copy_select(NULL, ...) picks for a CPU with these
 * features (amd_family: the family of an AMD CPU, 0 for other vendors). */
const char *sr_copy_pick(int avx512, int avx2, unsigned amd_family);

/* CPUs in a kernel CPU list such as "0-3,8,10-11". */
size_t sr_copy_cpu_count(const char *list);

/* One CPU's share of the last-level cache that dir describes (a CPU's
 * cache folder in sysfs: index0, index1, ... each with level, type, size
 * and shared_cpu_list), or 0 where it says too little. */
size_t sr_copy_llc_share(const char *dir);

/* For tests and benchmarks: use the vector code `name` ("avx512",
 * "avx512-split" (what AMD's Zen 5 and later take: split loads instead of
 * permutes, and pairs that alias a forward loop copied forwards, never
 * with `rep movsb`), "avx2-fwd" (Zen 4: AVX2 forwards for every pair, and
 * `rep movsb` above 16 KiB only for pairs whose lines line up),
 * "avx2", or "movsb" for none; NULL: the best this CPU has), `rep movsb`
 * above 16 KiB if movsb is 1 (0: never, -1: where the CPU has ERMS), streaming
 * stores from nt_min bytes (0: the default).  Returns -1, changing
 * nothing, if this CPU lacks it.  Not thread-safe against running copies. */
int sr_copy_select(const char *name, int movsb, size_t nt_min);

/* copy_cpu.c, for copy.c: streaming stores never start below this. */
#define SR_COPY_NT_FLOOR ((size_t)4 << 20)
/* 3/4 of this CPU's share of the last-level cache, at least the floor. */
size_t sr_copy_nt_default(void);
/* Whether the CPU has ERMS (fast `rep movsb`). */
int sr_copy_has_erms(void);
/* The family of an AMD CPU, 0 for other vendors. */
unsigned sr_copy_amd_family(void);

#endif
