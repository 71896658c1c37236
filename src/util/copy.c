/*
 * Large copies.  What was measured on the x86 machines this was built on
 * (an AVX-512 Xeon with FSRM, glibc 2.36, tests/perf/copy_bench.sh):
 *
 * - Up to about the L1 size a vector loop with stores aligned to the vector
 *   size and unaligned loads is the fastest (the misaligned side is the
 *   load: a split load is much cheaper than a split store, 2x here).  Above
 *   16 KiB `rep movsb` (ERMS/FSRM) is faster than any loop we tried, by
 *   5-15% at 24 KiB .. 16 MiB, for every relative offset: it writes whole
 *   lines without reading them first.
 * - 4 KiB aliasing: a load is checked against older stores by the low 12
 *   address bits only.  When dst - src is a small positive number modulo
 *   4096 (a get into a malloc'd buffer 16 bytes past a page from a
 *   page-aligned block), each load of a forward loop looks like it depends
 *   on the store just issued before it, and the loop stalls (4 KiB get +16:
 *   0.63x of the aligned rate; glibc's memcpy and `rep movsb` likewise).
 *   Copying such a pair backwards turns that store into a later one, which
 *   no load waits for (0.75x; the rest is the split loads, see
 *   sr_copy_avx512_shift).  The tail is loaded first and stored after the first
 *   loads of the loop, the head is loaded and stored last, so that neither
 *   the next call's first loads nor this call's first loads meet a store
 *   still in flight.
 * - A source 16 bytes past a line boundary stays at about 0.8x of the
 *   aligned rate up to 16 KiB cache-hot whatever the loop (copy_micro,
 *   4 KiB put: split loads 204, vpermt2d 203, valignd 136, vpermt2b 114,
 *   aligned loads with split stores 90 GB/s, against 257 aligned; glibc's
 *   memcpy 180): every line costs either a second L1 access or a shuffle on
 *   the one port that does them.  A get the other way round (0.66x at 4 KiB)
 *   also waits on its previous call's stores, which are still in the store
 *   buffer when a 4 KiB copy follows another on the same lines.
 * - Non-temporal stores win only when the copy cannot stay in the caches
 *   anyway (cache-cold 4 MiB+: 1.3x), and lose cache-hot (0.86x at 4 MiB)
 *   and for whoever reads the destination next (a peer on this node reads
 *   it from the shared cache otherwise).  So they start where glibc's do:
 *   at 3/4 of this CPU's share of the last-level cache, and never below
 *   4 MiB.
 */
#include "config.h"
#include "util/copy.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Above this, `rep movsb` where the CPU has ERMS; at it too for pairs whose
 * lines line up (copy_bench at 16 KiB: the same rate cache-hot, 5-10% more
 * cache-cold, as KV blocks scattered over a pool are; 0.88x hot where a
 * forward copy aliases, which the backward loop avoids; misaligned pairs
 * see sr_copy_vec_pair). */
#define SR_COPY_VEC_MAX ((size_t)16 << 10)
#define SR_COPY_MOVSB(cfg, dst, src, len)                                                 \
    ((cfg)->movsb &&                                                                       \
     ((cfg)->movsb_lines                                                                   \
          ? (len) > SR_COPY_VEC_MAX && (((uintptr_t)(dst) - (uintptr_t)(src)) & 63) == 0  \
          : (((len) > SR_COPY_VEC_MAX && ((cfg)->movsb_alias || !sr_copy_aliases(dst, src))) || \
             ((len) == SR_COPY_VEC_MAX && !sr_copy_vec_pair(cfg, dst, src)))))

/* Relative offsets (dst - src modulo 4096) that alias a forward loop. */
static inline int sr_copy_aliases(const void *dst, const void *src)
{
    size_t rel = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    return rel != 0 && rel < 64;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* Forward, stores aligned to 64 bytes; nt: streaming stores. */
__attribute__((target("avx512f"))) static void sr_copy_avx512(void *dst, const void *src,
                                                              size_t len, int nt)
{
    char *d = dst;
    const char *s = src;
    /* First (unaligned) vector, then advance to a 64-byte aligned dst. */
    _mm512_storeu_si512((void *)d, _mm512_loadu_si512((const void *)s));
    size_t head = 64 - ((uintptr_t)d & 63);
    d += head, s += head, len -= head;
    if (nt) {
        for (; len >= 256; d += 256, s += 256, len -= 256) {
            __m512i a = _mm512_loadu_si512((const void *)s);
            __m512i b = _mm512_loadu_si512((const void *)(s + 64));
            __m512i c = _mm512_loadu_si512((const void *)(s + 128));
            __m512i e = _mm512_loadu_si512((const void *)(s + 192));
            _mm512_stream_si512((void *)d, a);
            _mm512_stream_si512((void *)(d + 64), b);
            _mm512_stream_si512((void *)(d + 128), c);
            _mm512_stream_si512((void *)(d + 192), e);
        }
        /* Streaming stores are weakly ordered: order them before whatever
         * store announces the data (a flag, a ring tail). */
        _mm_sfence();
    } else {
        for (; len >= 256; d += 256, s += 256, len -= 256) {
            __m512i a = _mm512_loadu_si512((const void *)s);
            __m512i b = _mm512_loadu_si512((const void *)(s + 64));
            __m512i c = _mm512_loadu_si512((const void *)(s + 128));
            __m512i e = _mm512_loadu_si512((const void *)(s + 192));
            _mm512_store_si512((void *)d, a);
            _mm512_store_si512((void *)(d + 64), b);
            _mm512_store_si512((void *)(d + 128), c);
            _mm512_store_si512((void *)(d + 192), e);
        }
    }
    for (; len >= 64; d += 64, s += 64, len -= 64)
        _mm512_store_si512((void *)d, _mm512_loadu_si512((const void *)s));
    /* Last (unaligned) vector ends exactly at the end; it may overlap what
     * was already written with the same bytes. */
    if (len)
        _mm512_storeu_si512((void *)(d + len - 64), _mm512_loadu_si512((const void *)(s + len - 64)));
}

/* Backward, for the pairs that alias a forward loop (see the top). */
__attribute__((target("avx512f"))) static void sr_copy_avx512_back(void *dst, const void *src,
                                                                   size_t len)
{
    char *d = dst;
    const char *s = src;
    __m512i last = _mm512_loadu_si512((const void *)(s + len - 64));
    /* Aligned lines [lo, hi) are copied by the loop, top down. */
    size_t hi = (((uintptr_t)d + len) & ~(uintptr_t)63) - (uintptr_t)d;
    size_t lo = 64 - ((uintptr_t)d & 63);
    size_t n = hi - lo;
    char *de = d + hi;
    const char *se = s + hi;
    int tail_done = 0;
    for (; n >= 256; n -= 256, de -= 256, se -= 256) {
        __m512i a = _mm512_loadu_si512((const void *)(se - 64));
        __m512i b = _mm512_loadu_si512((const void *)(se - 128));
        __m512i c = _mm512_loadu_si512((const void *)(se - 192));
        __m512i e = _mm512_loadu_si512((const void *)(se - 256));
        if (!tail_done) {
            _mm512_storeu_si512((void *)(d + len - 64), last);
            tail_done = 1;
        }
        _mm512_store_si512((void *)(de - 64), a);
        _mm512_store_si512((void *)(de - 128), b);
        _mm512_store_si512((void *)(de - 192), c);
        _mm512_store_si512((void *)(de - 256), e);
    }
    if (!tail_done)
        _mm512_storeu_si512((void *)(d + len - 64), last);
    for (; n >= 64; n -= 64, de -= 64, se -= 64)
        _mm512_store_si512((void *)(de - 64), _mm512_loadu_si512((const void *)(se - 64)));
    _mm512_storeu_si512((void *)d, _mm512_loadu_si512((const void *)s));
}

/*
 * Misaligned pairs whose offset is a multiple of 4 (malloc's 16 bytes past
 * a page and the like): aligned loads, and one permute per line puts the
 * bytes where the aligned store wants them (16 KiB +16: 0.77 -> 0.84x of
 * the aligned rate).  The loads are of whole aligned lines that hold at
 * least one byte of the source, so they stay within its pages; but they do
 * read bytes around it, which AddressSanitizer must not see.
 */
#define SR_COPY_SHIFT_IDX(k)                                                                     \
    _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),    \
                     _mm512_set1_epi32((int)((k) / 4)))

static inline unsigned sr_copy_shift(const void *dst, const void *src)
{
    unsigned k = (unsigned)(((uintptr_t)src - (uintptr_t)dst) & 63);
    return k % 4 == 0 ? k : 0;
}

/* At SR_COPY_VEC_MAX, pairs that alias or whose offset the shift loop
 * takes (the split loads take them where there is no shift loop) stay in
 * the vector loops: cache-hot they beat `rep movsb` there (16 KiB +16: 214
 * against 187-203 GB/s put, copy_micro; 221 against 149 on the Zen 5). */
#define sr_copy_vec_pair(cfg, dst, src)                                                   \
    (sr_copy_aliases(dst, src) || ((cfg)->vec_shift && sr_copy_shift(dst, src)))

__attribute__((target("avx512f"), no_sanitize_address)) static void
sr_copy_avx512_shift(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;
    _mm512_storeu_si512((void *)d, _mm512_loadu_si512((const void *)s));
    size_t head = 64 - ((uintptr_t)d & 63);
    d += head, s += head, len -= head;
    unsigned k = (uintptr_t)s & 63;
    const char *sa = s - k;
    __m512i idx = SR_COPY_SHIFT_IDX(k);
    __m512i prev = _mm512_load_si512((const void *)sa);
    for (; len >= 256; d += 256, sa += 256, len -= 256) {
        __m512i a = _mm512_load_si512((const void *)(sa + 64));
        __m512i b = _mm512_load_si512((const void *)(sa + 128));
        __m512i c = _mm512_load_si512((const void *)(sa + 192));
        __m512i e = _mm512_load_si512((const void *)(sa + 256));
        _mm512_store_si512((void *)d, _mm512_permutex2var_epi32(prev, idx, a));
        _mm512_store_si512((void *)(d + 64), _mm512_permutex2var_epi32(a, idx, b));
        _mm512_store_si512((void *)(d + 128), _mm512_permutex2var_epi32(b, idx, c));
        _mm512_store_si512((void *)(d + 192), _mm512_permutex2var_epi32(c, idx, e));
        prev = e;
    }
    for (; len >= 64; d += 64, sa += 64, len -= 64) {
        __m512i a = _mm512_load_si512((const void *)(sa + 64));
        _mm512_store_si512((void *)d, _mm512_permutex2var_epi32(prev, idx, a));
        prev = a;
    }
    s = sa + k;
    if (len)
        _mm512_storeu_si512((void *)(d + len - 64), _mm512_loadu_si512((const void *)(s + len - 64)));
}

/* The same, backwards, in the order of sr_copy_avx512_back. */
__attribute__((target("avx512f"), no_sanitize_address)) static void
sr_copy_avx512_shift_back(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;
    __m512i last = _mm512_loadu_si512((const void *)(s + len - 64));
    size_t hi = (((uintptr_t)d + len) & ~(uintptr_t)63) - (uintptr_t)d;
    size_t lo = 64 - ((uintptr_t)d & 63);
    size_t n = hi - lo;
    char *de = d + hi;
    unsigned k = (uintptr_t)(s + hi) & 63;
    const char *sa = s + hi - k;
    __m512i idx = SR_COPY_SHIFT_IDX(k);
    __m512i up = _mm512_load_si512((const void *)sa);
    int tail_done = 0;
    for (; n >= 256; n -= 256, de -= 256, sa -= 256) {
        __m512i a = _mm512_load_si512((const void *)(sa - 64));
        __m512i b = _mm512_load_si512((const void *)(sa - 128));
        __m512i c = _mm512_load_si512((const void *)(sa - 192));
        __m512i e = _mm512_load_si512((const void *)(sa - 256));
        if (!tail_done) {
            _mm512_storeu_si512((void *)(d + len - 64), last);
            tail_done = 1;
        }
        _mm512_store_si512((void *)(de - 64), _mm512_permutex2var_epi32(a, idx, up));
        _mm512_store_si512((void *)(de - 128), _mm512_permutex2var_epi32(b, idx, a));
        _mm512_store_si512((void *)(de - 192), _mm512_permutex2var_epi32(c, idx, b));
        _mm512_store_si512((void *)(de - 256), _mm512_permutex2var_epi32(e, idx, c));
        up = e;
    }
    if (!tail_done)
        _mm512_storeu_si512((void *)(d + len - 64), last);
    for (; n >= 64; n -= 64, de -= 64, sa -= 64) {
        __m512i a = _mm512_load_si512((const void *)(sa - 64));
        _mm512_store_si512((void *)(de - 64), _mm512_permutex2var_epi32(a, idx, up));
        up = a;
    }
    _mm512_storeu_si512((void *)d, _mm512_loadu_si512((const void *)s));
}

#define SR_COPY_AVX2_STORE4(d, nt, a, b, c, e)                                             \
    do {                                                                                  \
        if (nt) {                                                                         \
            _mm256_stream_si256((void *)(d), a);                                          \
            _mm256_stream_si256((void *)((d) + 32), b);                                   \
            _mm256_stream_si256((void *)((d) + 64), c);                                   \
            _mm256_stream_si256((void *)((d) + 96), e);                                   \
        } else {                                                                          \
            _mm256_store_si256((void *)(d), a);                                           \
            _mm256_store_si256((void *)((d) + 32), b);                                    \
            _mm256_store_si256((void *)((d) + 64), c);                                    \
            _mm256_store_si256((void *)((d) + 96), e);                                    \
        }                                                                                 \
    } while (0)

/*
 * Forward, stores aligned to 32 bytes, the loads of each block of 128 bytes
 * issued before the stores of the block before it.  Zen 4, copy_micro,
 * cache-hot: a put from +16 runs at 117 GB/s against 99.5 with the loads
 * and stores of one block together (4 KiB; 117 against 96 at 16 KiB), a
 * get into +16 at 93 against 83 (109 against 91 at 16 KiB), as fast as the
 * backward loop, and it stays a forward walk for the prefetchers.
 */
__attribute__((target("avx2"), always_inline)) static inline void
sr_copy_avx2_body(char *d, const char *s, size_t len, int nt)
{
    _mm256_storeu_si256((void *)d, _mm256_loadu_si256((const void *)s));
    size_t head = 32 - ((uintptr_t)d & 31);
    d += head, s += head, len -= head;
    if (len >= 256) {
        __m256i a = _mm256_loadu_si256((const void *)s);
        __m256i b = _mm256_loadu_si256((const void *)(s + 32));
        __m256i c = _mm256_loadu_si256((const void *)(s + 64));
        __m256i e = _mm256_loadu_si256((const void *)(s + 96));
        for (; len >= 256; d += 128, s += 128, len -= 128) {
            __m256i a2 = _mm256_loadu_si256((const void *)(s + 128));
            __m256i b2 = _mm256_loadu_si256((const void *)(s + 160));
            __m256i c2 = _mm256_loadu_si256((const void *)(s + 192));
            __m256i e2 = _mm256_loadu_si256((const void *)(s + 224));
            SR_COPY_AVX2_STORE4(d, nt, a, b, c, e);
            a = a2, b = b2, c = c2, e = e2;
        }
        SR_COPY_AVX2_STORE4(d, nt, a, b, c, e);
        d += 128, s += 128, len -= 128;
    }
    if (nt)
        _mm_sfence();
    for (; len >= 32; d += 32, s += 32, len -= 32)
        _mm256_store_si256((void *)d, _mm256_loadu_si256((const void *)s));
    if (len)
        _mm256_storeu_si256((void *)(d + len - 32), _mm256_loadu_si256((const void *)(s + len - 32)));
}

__attribute__((target("avx2"))) static void sr_copy_avx2(void *dst, const void *src, size_t len,
                                                         int nt)
{
    if (nt)
        sr_copy_avx2_body(dst, src, len, 1);
    else
        sr_copy_avx2_body(dst, src, len, 0);
}

__attribute__((target("avx2"))) static void sr_copy_avx2_back(void *dst, const void *src,
                                                              size_t len)
{
    char *d = dst;
    const char *s = src;
    __m256i last = _mm256_loadu_si256((const void *)(s + len - 32));
    size_t hi = (((uintptr_t)d + len) & ~(uintptr_t)31) - (uintptr_t)d;
    size_t lo = 32 - ((uintptr_t)d & 31);
    size_t n = hi - lo;
    char *de = d + hi;
    const char *se = s + hi;
    int tail_done = 0;
    for (; n >= 128; n -= 128, de -= 128, se -= 128) {
        __m256i a = _mm256_loadu_si256((const void *)(se - 32));
        __m256i b = _mm256_loadu_si256((const void *)(se - 64));
        __m256i c = _mm256_loadu_si256((const void *)(se - 96));
        __m256i e = _mm256_loadu_si256((const void *)(se - 128));
        if (!tail_done) {
            _mm256_storeu_si256((void *)(d + len - 32), last);
            tail_done = 1;
        }
        _mm256_store_si256((void *)(de - 32), a);
        _mm256_store_si256((void *)(de - 64), b);
        _mm256_store_si256((void *)(de - 96), c);
        _mm256_store_si256((void *)(de - 128), e);
    }
    if (!tail_done)
        _mm256_storeu_si256((void *)(d + len - 32), last);
    for (; n >= 32; n -= 32, de -= 32, se -= 32)
        _mm256_store_si256((void *)(de - 32), _mm256_loadu_si256((const void *)(se - 32)));
    _mm256_storeu_si256((void *)d, _mm256_loadu_si256((const void *)s));
}

static void sr_copy_movsb(void *dst, const void *src, size_t len)
{
    __asm__ __volatile__("rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

/*
 * `rep movsb` from a 64-byte boundary, the first line copied by a vector:
 * the destination's, unless the pair is less than 512 bytes apart modulo
 * 4096, where the source's keeps the string engine's loads off the lines
 * it has just stored (what glibc 2.36 does, so what Open MPI's shared
 * memory path runs at these sizes: one memcpy into the peer's mapping).
 */
__attribute__((target("avx512f"))) static void sr_copy_movsb_avx512(void *dst,
                                                                    const void *src,
                                                                    size_t len)
{
    char *d = dst;
    const char *s = src;
    __m512i first = _mm512_loadu_si512((const void *)s);
    uintptr_t base = (((uintptr_t)d - (uintptr_t)s) & 0xe00) ? (uintptr_t)d : (uintptr_t)s;
    size_t head = 64 - (base & 63);
    sr_copy_movsb(d + head, s + head, len - head);
    _mm512_storeu_si512((void *)d, first);
}

typedef struct {
    const char *name;
    void (*fwd)(void *dst, const void *src, size_t len, int nt); /* NULL: no vectors */
    void (*back)(void *dst, const void *src, size_t len); /* NULL: fwd for every pair */
    /* For offsets sr_copy_shift accepts, or NULL. */
    void (*shift)(void *dst, const void *src, size_t len);
    void (*shift_back)(void *dst, const void *src, size_t len);
    int         movsb;   /* `rep movsb` above SR_COPY_VEC_MAX */
    int         movsb_alias; /* also for pairs that alias a forward loop */
    int         vec_shift; /* pairs sr_copy_shift accepts stay in vectors at SR_COPY_VEC_MAX */
    int         movsb_lines; /* movsb only for pairs whose lines line up */
    size_t      nt_min;  /* streaming stores from here (with fwd) */
    void (*movsb_fn)(void *dst, const void *src, size_t len);
} sr_copy_cfg_t;

static sr_copy_cfg_t sr_copy_cfg;
static int sr_copy_ready;

static int sr_copy_make(const char *name, int movsb, size_t nt_min, sr_copy_cfg_t *cfg)
{
    __builtin_cpu_init();
    int avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2");
    if (name == NULL)
        name = sr_copy_pick(avx512, avx2, sr_copy_amd_family());
    if (strcmp(name, "avx512") == 0 && avx512)
        *cfg = (sr_copy_cfg_t){ .name = "avx512", .fwd = sr_copy_avx512,
                                .back = sr_copy_avx512_back, .shift = sr_copy_avx512_shift,
                                .shift_back = sr_copy_avx512_shift_back, .movsb_alias = 1,
                                .vec_shift = 1 };
    else if (strcmp(name, "avx512-split") == 0 && avx512)
        *cfg = (sr_copy_cfg_t){ .name = "avx512", .fwd = sr_copy_avx512, .vec_shift = 1 };
    else if (strcmp(name, "avx2-fwd") == 0 && avx2)
        *cfg = (sr_copy_cfg_t){ .name = "avx2", .fwd = sr_copy_avx2, .movsb_lines = 1 };
    else if (strcmp(name, "avx2") == 0 && avx2)
        *cfg = (sr_copy_cfg_t){ .name = "avx2", .fwd = sr_copy_avx2, .back = sr_copy_avx2_back,
                                .movsb_alias = 1 };
    else if (strcmp(name, "movsb") == 0)
        *cfg = (sr_copy_cfg_t){ .name = "movsb", .movsb = 1, .movsb_alias = 1 };
    else
        return -1;
    cfg->movsb_fn = cfg->fwd == sr_copy_avx512 || (cfg->movsb_lines && avx512)
                        ? sr_copy_movsb_avx512
                        : sr_copy_movsb;
    if (movsb >= 0)
        cfg->movsb = movsb;
    else
        cfg->movsb = cfg->movsb || sr_copy_has_erms();
    cfg->nt_min = nt_min ? nt_min : sr_copy_nt_default();
    return 0;
}

static pthread_once_t sr_copy_once = PTHREAD_ONCE_INIT;

static void sr_copy_init(void)
{
    sr_copy_cfg_t cfg;
    sr_copy_make(NULL, -1, 0, &cfg);
    sr_copy_cfg = cfg;
    __atomic_store_n(&sr_copy_ready, 1, __ATOMIC_RELEASE);
}

static const sr_copy_cfg_t *sr_copy_get(void)
{
    /* Once: first copies of several threads at the same time must not
     * write the configuration while another reads it. */
    if (__builtin_expect(!__atomic_load_n(&sr_copy_ready, __ATOMIC_ACQUIRE), 0))
        pthread_once(&sr_copy_once, sr_copy_init);
    return &sr_copy_cfg;
}

int sr_copy_select(const char *name, int movsb, size_t nt_min)
{
    sr_copy_cfg_t cfg;
    if (sr_copy_make(name, movsb, nt_min, &cfg) != 0)
        return -1;
    sr_copy_cfg = cfg;
    __atomic_store_n(&sr_copy_ready, 1, __ATOMIC_RELEASE);
    return 0;
}

void sr_copy_large(void *dst, const void *src, size_t len)
{
    /* The vector loops need at least two vectors (head and tail). */
    if (len < 256) {
        memcpy(dst, src, len);
        return;
    }
    const sr_copy_cfg_t *cfg = sr_copy_get();
    if (cfg->fwd != NULL && len >= cfg->nt_min)
        cfg->fwd(dst, src, len, 1);
    else if (SR_COPY_MOVSB(cfg, dst, src, len))
        cfg->movsb_fn(dst, src, len);
    else if (cfg->fwd == NULL)
        memcpy(dst, src, len);
    else if (cfg->shift != NULL && sr_copy_shift(dst, src))
        (sr_copy_aliases(dst, src) ? cfg->shift_back : cfg->shift)(dst, src, len);
    else if (cfg->back != NULL && sr_copy_aliases(dst, src))
        cfg->back(dst, src, len);
    else
        cfg->fwd(dst, src, len, 0);
}

const char *sr_copy_strategy(const void *dst, const void *src, size_t len)
{
    if (len < 256)
        return "memcpy";
    const sr_copy_cfg_t *cfg = sr_copy_get();
    if (cfg->fwd != NULL && len >= cfg->nt_min)
        return "stream";
    if (SR_COPY_MOVSB(cfg, dst, src, len))
        return "movsb";
    if (cfg->fwd == NULL)
        return "memcpy";
    if (cfg->shift != NULL && sr_copy_shift(dst, src))
        return sr_copy_aliases(dst, src) ? "avx512-shift-back" : "avx512-shift";
    if (cfg->back != NULL && sr_copy_aliases(dst, src))
        return cfg->back == sr_copy_avx512_back ? "avx512-back" : "avx2-back";
    return cfg->name;
}

#else /* not x86-64 */

void sr_copy_large(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

int sr_copy_select(const char *name, int movsb, size_t nt_min)
{
    (void)movsb, (void)nt_min;
    return name == NULL || strcmp(name, "memcpy") == 0 ? 0 : -1;
}

const char *sr_copy_strategy(const void *dst, const void *src, size_t len)
{
    (void)dst, (void)src, (void)len;
    return "memcpy";
}

#endif
