/*
 * copy_micro: the copy kernels of util/copy.c and the alternatives tried
 * against them, in one process, cache-hot, one call after another on the
 * same buffers, for the pairs of copy_bench: put (destination page-aligned,
 * source at +offset) and get (the other way round), offsets 0, 16, 64 and
 * 2048.  The candidates run interleaved, best of many short timings each,
 * so that other load on the machine drops out.  Prints GB/s per candidate.
 *
 *   copy_micro [MAXSIZE [REPS [MINSIZE]]]     (default 16384 25 4096)
 *
 * For choosing between kernels on another CPU.  Alternatives that lost on
 * the AVX-512 Xeon this was written on (numbers in copy.c): valignd or
 * vpermt2b instead of vpermt2d, three lines of four by permute and one by
 * a split load, aligned loads with split stores, masked head and tail.
 */
#include "util/copy.c" /* its static kernels */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
typedef void (*cm_fn_t)(void *, const void *, size_t);

static void cm_memcpy(void *d, const void *s, size_t n) { memcpy(d, s, n); }
static void cm_movsb(void *d, const void *s, size_t n) { sr_copy_movsb(d, s, n); }
static void cm_fwd(void *d, const void *s, size_t n) { sr_copy_avx512(d, s, n, 0); }
static void cm_avx2(void *d, const void *s, size_t n) { sr_copy_avx2(d, s, n, 0); }
/* The shift kernels take multiples of 4 only; other pairs as copy.c does. */
static void cm_shift(void *d, const void *s, size_t n)
{
    if (sr_copy_shift(d, s))
        sr_copy_avx512_shift(d, s, n);
    else
        sr_copy_avx512(d, s, n, 0);
}
static void cm_shift_back(void *d, const void *s, size_t n)
{
    (sr_copy_shift(d, s) ? sr_copy_avx512_shift_back : sr_copy_avx512_back)(d, s, n);
}

/* Forward with aligned stores: the head line, then the body of `LINE` per
 * 64 bytes of destination from aligned source lines sa (prev: the line
 * before), then the tail line.  K: source offset within its line. */
#define CM_KERNEL(NAME, TARGET, SETUP, LINE)                                                  \
    __attribute__((target(TARGET), no_sanitize_address)) static void NAME(                    \
        void *dst, const void *src, size_t len)                                               \
    {                                                                                         \
        char *d = dst;                                                                        \
        const char *s = src;                                                                  \
        _mm512_storeu_si512((void *)d, _mm512_loadu_si512((const void *)s));                 \
        size_t head = 64 - ((uintptr_t)d & 63);                                               \
        d += head, s += head, len -= head;                                                    \
        unsigned k = (uintptr_t)s & 63;                                                       \
        const char *sa = s - k;                                                               \
        SETUP;                                                                                \
        __m512i prev = _mm512_load_si512((const void *)sa);                                   \
        for (size_t i = 0; len >= 64; d += 64, sa += 64, len -= 64, i++) {                    \
            __m512i next = _mm512_load_si512((const void *)(sa + 64));                        \
            _mm512_store_si512((void *)d, LINE);                                              \
            prev = next;                                                                      \
        }                                                                                     \
        s = sa + k;                                                                           \
        if (len)                                                                              \
            _mm512_storeu_si512((void *)(d + len - 64),                                       \
                                _mm512_loadu_si512((const void *)(s + len - 64)));            \
    }

/* vpermt2b: any offset, one byte permute per line. */
CM_KERNEL(cm_vbmi, "avx512f,avx512bw,avx512vbmi",
          __m512i idx = _mm512_add_epi8(
              _mm512_set_epi64(0x3f3e3d3c3b3a3938, 0x3736353433323130, 0x2f2e2d2c2b2a2928,
                               0x2726252423222120, 0x1f1e1d1c1b1a1918, 0x1716151413121110,
                               0x0f0e0d0c0b0a0908, 0x0706050403020100),
              _mm512_set1_epi8((char)k)),
          _mm512_permutex2var_epi8(prev, idx, next))
/* Three lines of four by vpermt2d, the fourth by a split load. */
CM_KERNEL(cm_mix, "avx512f", __m512i idx = SR_COPY_SHIFT_IDX(k & ~3u),
          (i & 3) == 3 ? _mm512_loadu_si512((const void *)(sa + k))
                       : _mm512_permutex2var_epi32(prev, idx, next))

/* valignd takes its shift as an immediate: one loop per multiple of 4. */
#define CM_VALIGN_CASE(n)                                                                    \
    case n:                                                                                  \
        for (; len >= 64; d += 64, sa += 64, len -= 64) {                                    \
            __m512i next = _mm512_load_si512((const void *)(sa + 64));                       \
            _mm512_store_si512((void *)d, _mm512_alignr_epi32(next, prev, n));               \
            prev = next;                                                                     \
        }                                                                                    \
        break;
__attribute__((target("avx512f"), no_sanitize_address)) static void
cm_valign(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;
    if (!sr_copy_shift(dst, src)) {
        sr_copy_avx512(dst, src, len, 0);
        return;
    }
    _mm512_storeu_si512((void *)d, _mm512_loadu_si512((const void *)s));
    size_t head = 64 - ((uintptr_t)d & 63);
    d += head, s += head, len -= head;
    unsigned k = (uintptr_t)s & 63;
    const char *sa = s - k;
    __m512i prev = _mm512_load_si512((const void *)sa);
    switch (k / 4) {
        CM_VALIGN_CASE(1) CM_VALIGN_CASE(2) CM_VALIGN_CASE(3) CM_VALIGN_CASE(4)
        CM_VALIGN_CASE(5) CM_VALIGN_CASE(6) CM_VALIGN_CASE(7) CM_VALIGN_CASE(8)
        CM_VALIGN_CASE(9) CM_VALIGN_CASE(10) CM_VALIGN_CASE(11) CM_VALIGN_CASE(12)
        CM_VALIGN_CASE(13) CM_VALIGN_CASE(14) CM_VALIGN_CASE(15)
    }
    s = sa + k;
    if (len)
        _mm512_storeu_si512((void *)(d + len - 64), _mm512_loadu_si512((const void *)(s + len - 64)));
}

/* Aligned loads, split stores. */
__attribute__((target("avx512f"))) static void cm_split_stores(void *dst, const void *src,
                                                               size_t len)
{
    char *d = dst;
    const char *s = src;
    _mm512_storeu_si512((void *)d, _mm512_loadu_si512((const void *)s));
    size_t head = 64 - ((uintptr_t)s & 63);
    d += head, s += head, len -= head;
    for (; len >= 64; d += 64, s += 64, len -= 64)
        _mm512_storeu_si512((void *)d, _mm512_load_si512((const void *)s));
    if (len)
        _mm512_storeu_si512((void *)(d + len - 64), _mm512_loadu_si512((const void *)(s + len - 64)));
}

/* Forward with head and tail as masked stores within their lines. */
__attribute__((target("avx512f,avx512bw"), no_sanitize_address)) static void
cm_masked(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;
    unsigned h = (uintptr_t)d & 63;
    __mmask64 m = ~0ULL << h;
    _mm512_mask_storeu_epi8(d - h, m, _mm512_maskz_loadu_epi8(m, s - h));
    d += 64 - h, s += 64 - h, len -= 64 - h;
    for (; len >= 64; d += 64, s += 64, len -= 64)
        _mm512_store_si512((void *)d, _mm512_loadu_si512((const void *)s));
    if (len) {
        m = ~0ULL >> (64 - len);
        _mm512_mask_storeu_epi8(d, m, _mm512_maskz_loadu_epi8(m, s));
    }
}

static const struct {
    const char *name;
    cm_fn_t     fn;
} cm_cands[] = {
    { "memcpy", cm_memcpy },   { "movsb", cm_movsb },       { "movsb-al", sr_copy_movsb_avx512 },
    { "fwd", cm_fwd },         { "back", sr_copy_avx512_back }, { "shift", cm_shift },
    { "shift-bk", cm_shift_back }, { "valignd", cm_valign }, { "vpermt2b", cm_vbmi },
    { "mix3:1", cm_mix },      { "st-split", cm_split_stores }, { "masked", cm_masked },
    { "avx2", cm_avx2 },       { "avx2-bk", sr_copy_avx2_back }, { "sr_copy", sr_copy_large },
};
#define CM_N (sizeof(cm_cands) / sizeof(cm_cands[0]))

static double cm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : 16384;
    int reps = argc > 2 ? atoi(argv[2]) : 25;
    size_t min = argc > 3 ? strtoull(argv[3], NULL, 0) : 4096;
    static const size_t offs[] = { 0, 16, 64, 2048 };
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512vbmi") || max < 256 || min < 256) {
        fprintf(stderr, "copy_micro: needs AVX512-VBMI and sizes from 256 bytes\n");
        return 77;
    }
    char *a = aligned_alloc(4096, max), *b = aligned_alloc(4096, max + 4096);
    if (a == NULL || b == NULL)
        return 1;
    for (size_t i = 0; i < max; i++)
        a[i] = (char)(i % 251 + 1);
    for (size_t i = 0; i < max + 4096; i++)
        b[i] = (char)(i % 241 + 1);
    printf("%-4s %5s %8s", "op", "off", "size");
    for (size_t c = 0; c < CM_N; c++)
        printf(" %8s", cm_cands[c].name);
    printf("\n");
    for (int get = 0; get <= 1; get++)
        for (size_t size = min; size <= max; size *= 4)
            for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
                char *dst = get ? b + offs[o] : a, *src = get ? a : b + offs[o];
                size_t iters = 3000000 / size + 1;
                double best[CM_N] = { 0 };
                for (int r = 0; r < reps; r++)
                    for (size_t c = 0; c < CM_N; c++) {
                        cm_fn_t volatile fv = cm_cands[c].fn;
                        cm_fn_t f = fv;
                        memset(dst, 0, size);
                        f(dst, src, size);
                        if (memcmp(dst, src, size) != 0) {
                            fprintf(stderr, "copy_micro: %s copied wrong bytes\n",
                                    cm_cands[c].name);
                            return 1;
                        }
                        double t0 = cm_now();
                        for (size_t i = 0; i < iters; i++) {
                            f(dst, src, size);
                            __asm__ __volatile__("" ::: "memory");
                        }
                        double gbs = (double)size * (double)iters / (cm_now() - t0) / 1e9;
                        best[c] = gbs > best[c] ? gbs : best[c];
                    }
                printf("%-4s %5zu %8zu", get ? "get" : "put", offs[o], size);
                for (size_t c = 0; c < CM_N; c++)
                    printf(" %8.1f", best[c]);
                printf("\n");
                fflush(stdout);
            }
    free(a);
    free(b);
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "copy_micro: x86-64 only\n");
    return 77;
}
#endif
