/*
 * Large copies.  What was measured on the x86 machines this was built on:
 *
 * - A loop whose stores are aligned to the vector size and whose loads are
 *   unaligned keeps one store per cycle for every relative offset; the
 *   misaligned side is always the load, and a split load is cheaper than a
 *   split store.  Loads run ahead of the stores in the same direction, so
 *   a store to dst + k (which aliases src + k + (dst - src) in the low 12
 *   address bits) never sits in front of a load it could be mistaken for:
 *   the 4 KiB false store-to-load dependency does not stall the loop.
 * - Non-temporal stores win for copies too large to stay in the caches
 *   (4 MiB and up: about 1.5x cache-cold, equal cache-hot) and lose badly
 *   below that (the destination is read back soon and is evicted by them).
 * - Without AVX-512 or AVX2 `rep movsb` (with ERMS/FSRM) is the best plain
 *   alternative and is not sensitive to the relative offset above 2 KiB.
 */
#include "config.h"
#include "util/copy.h"

#include <stdint.h>

#define SR_COPY_NT_MIN ((size_t)4 << 20)

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

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

__attribute__((target("avx2"))) static void sr_copy_avx2(void *dst, const void *src, size_t len,
                                                         int nt)
{
    char *d = dst;
    const char *s = src;
    _mm256_storeu_si256((void *)d, _mm256_loadu_si256((const void *)s));
    size_t head = 32 - ((uintptr_t)d & 31);
    d += head, s += head, len -= head;
    for (; len >= 128; d += 128, s += 128, len -= 128) {
        __m256i a = _mm256_loadu_si256((const void *)s);
        __m256i b = _mm256_loadu_si256((const void *)(s + 32));
        __m256i c = _mm256_loadu_si256((const void *)(s + 64));
        __m256i e = _mm256_loadu_si256((const void *)(s + 96));
        if (nt) {
            _mm256_stream_si256((void *)d, a);
            _mm256_stream_si256((void *)(d + 32), b);
            _mm256_stream_si256((void *)(d + 64), c);
            _mm256_stream_si256((void *)(d + 96), e);
        } else {
            _mm256_store_si256((void *)d, a);
            _mm256_store_si256((void *)(d + 32), b);
            _mm256_store_si256((void *)(d + 64), c);
            _mm256_store_si256((void *)(d + 96), e);
        }
    }
    if (nt)
        _mm_sfence();
    for (; len >= 32; d += 32, s += 32, len -= 32)
        _mm256_store_si256((void *)d, _mm256_loadu_si256((const void *)s));
    if (len)
        _mm256_storeu_si256((void *)(d + len - 32), _mm256_loadu_si256((const void *)(s + len - 32)));
}

static void sr_copy_movsb(void *dst, const void *src, size_t len, int nt)
{
    (void)nt;
    __asm__ __volatile__("rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

typedef void (*sr_copy_fn_t)(void *dst, const void *src, size_t len, int nt);

static sr_copy_fn_t sr_copy_pick(const char **name_p)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        *name_p = "avx512";
        return sr_copy_avx512;
    }
    if (__builtin_cpu_supports("avx2")) {
        *name_p = "avx2";
        return sr_copy_avx2;
    }
    *name_p = "movsb";
    return sr_copy_movsb;
}

static sr_copy_fn_t sr_copy_fn;
static const char *sr_copy_name;

static sr_copy_fn_t sr_copy_get(void)
{
    sr_copy_fn_t fn = __atomic_load_n(&sr_copy_fn, __ATOMIC_RELAXED);
    if (__builtin_expect(fn == NULL, 0)) {
        const char *name;
        fn = sr_copy_pick(&name);
        __atomic_store_n(&sr_copy_name, name, __ATOMIC_RELAXED);
        __atomic_store_n(&sr_copy_fn, fn, __ATOMIC_RELAXED);
    }
    return fn;
}

void sr_copy_large(void *dst, const void *src, size_t len)
{
    /* The vector loops need at least two vectors (head and tail). */
    if (len < 256) {
        memcpy(dst, src, len);
        return;
    }
    sr_copy_get()(dst, src, len, len >= SR_COPY_NT_MIN);
}

const char *sr_copy_strategy(size_t len)
{
    if (len <= SR_COPY_SMALL)
        return "memcpy";
    sr_copy_fn_t fn = sr_copy_get();
    return len >= SR_COPY_NT_MIN && fn != sr_copy_movsb ? "stream" : sr_copy_name;
}

#else /* not x86-64 */

void sr_copy_large(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

const char *sr_copy_strategy(size_t len)
{
    (void)len;
    return "memcpy";
}

#endif
