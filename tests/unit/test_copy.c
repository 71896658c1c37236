/* sr_copy against a reference for many lengths and offsets of both ends,
 * with guard bytes on both sides of the destination. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "util/copy.h"
#include "util/sys.h"

#define GUARD 128
#define PAGE  4096

static unsigned char *src_buf, *dst_buf;
static size_t buf_len;

static int setup(void **state)
{
    (void)state;
    /* aligned_alloc takes a size that is a multiple of the alignment. */
    buf_len = SR_ALIGN_UP(((size_t)6 << 20) + 2 * PAGE + 2 * GUARD, (size_t)PAGE);
    src_buf = aligned_alloc(PAGE, buf_len);
    dst_buf = aligned_alloc(PAGE, buf_len);
    if (src_buf == NULL || dst_buf == NULL)
        return -1;
    /* A pattern whose period (251) is prime to every block size, so a byte
     * copied from the wrong place is caught. */
    for (size_t i = 0; i < buf_len; i++)
        src_buf[i] = (unsigned char)(i % 251 + 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(src_buf);
    free(dst_buf);
    return 0;
}

/* Copies len bytes from src+soff to dst+doff with `copy`: every byte
 * arrives, and none around the destination changes. */
static void check_with(void (*copy)(void *, const void *, size_t), size_t len, size_t soff,
                       size_t doff)
{
    unsigned char *src = src_buf + GUARD + soff;
    unsigned char *dst = dst_buf + GUARD + doff;
    memset(dst - GUARD, 0xa5, len + 2 * GUARD);
    copy(dst, src, len);
    for (size_t i = 0; i < GUARD; i++) {
        if (dst[-1 - (ptrdiff_t)i] != 0xa5 || dst[len + i] != 0xa5)
            fail_msg("guard byte %zu overwritten: len %zu src+%zu dst+%zu (%s)", i, len, soff,
                     doff, sr_copy_strategy(dst, src, len));
    }
    if (memcmp(dst, src, len) != 0) {
        size_t i = 0;
        while (dst[i] == src[i])
            i++;
        fail_msg("byte %zu differs: len %zu src+%zu dst+%zu (%s)", i, len, soff, doff,
                 sr_copy_strategy(dst, src, len));
    }
}

static void sr_copy_fn(void *dst, const void *src, size_t len)
{
    sr_copy(dst, src, len);  /* inline in copy.h: a function to pass */
}

static void check_one(size_t len, size_t soff, size_t doff)
{
    check_with(sr_copy_fn, len, soff, doff);
}

/* Offsets within a page that matter: aligned, small, vector-size and cache
 * line steps, half a page, and just short of a page (dst - src negative). */
static const size_t offsets[] = {0, 1, 7, 16, 31, 33, 63, 64, 100, 2048, 4032, 4080, 4095};
#define NOFF (sizeof(offsets) / sizeof(offsets[0]))

static void test_every_small_length(void **state)
{
    (void)state;
    for (size_t len = 0; len <= 1200; len++)
        for (size_t a = 0; a < NOFF; a += 3)
            for (size_t b = 0; b < NOFF; b += 2)
                check_one(len, offsets[a], offsets[b]);
}

static void test_lengths_to_70k(void **state)
{
    (void)state;
    for (size_t len = 1201; len <= 70 * 1024; len += len < 8192 ? 37 : 509)
        for (size_t a = 0; a < NOFF; a++)
            for (size_t b = 0; b < NOFF; b++)
                check_one(len, offsets[a], offsets[b]);
    /* Powers of two and their neighbours, where strategies switch. */
    for (size_t p = 256; p <= 65536; p *= 2)
        for (size_t len = p - 65; len <= p + 65; len++)
            for (size_t a = 0; a < NOFF; a += 4)
                for (size_t b = 0; b < NOFF; b += 3)
                    check_one(len, offsets[a], offsets[b]);
}

static void test_megabytes(void **state)
{
    (void)state;
    const size_t lens[] = {(size_t)1 << 20, ((size_t)4 << 20) - 1, (size_t)4 << 20,
                           ((size_t)4 << 20) + 77, ((size_t)6 << 20) - 33};
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
        for (size_t a = 0; a < NOFF; a += 4)
            for (size_t b = 0; b < NOFF; b += 4)
                check_one(lens[l], offsets[a], offsets[b]);
}

static void test_strategy_named(void **state)
{
    (void)state;
    assert_string_equal(sr_copy_strategy(dst_buf, src_buf, 8), "memcpy");
    assert_non_null(sr_copy_strategy(dst_buf, src_buf, (size_t)1 << 20));
    assert_string_not_equal(sr_copy_strategy(dst_buf, src_buf, (size_t)1 << 20), "");
}

/* Every way sr_copy_large can be set up on this CPU: the vector code, with
 * and without `rep movsb` above 16 KiB, and streaming stores from 64 KiB so
 * that they are reached with small buffers. */
static const struct {
    const char *name;
    int         movsb;
} impls[] = { { "avx512", 0 },       { "avx512", 1 },   { "avx512-split", 0 },
              { "avx512-split", 1 }, { "avx2-fwd", 0 }, { "avx2-fwd", 1 },
              { "avx2", 0 },         { "avx2", 1 },     { "movsb", 0 },
              { "movsb", 1 } };
#define NIMPL (sizeof(impls) / sizeof(impls[0]))
#define TEST_NT_MIN ((size_t)64 << 10)

static void check_large(size_t len, size_t soff, size_t doff)
{
    check_with(sr_copy_large, len, soff, doff);
}

/* Every length up to past the vector/movsb switch in steps, every length
 * to 2100 exactly, each against every dst alignment in a cache line; and
 * every relative offset modulo the page (the forward/backward choice) at
 * lengths around each switch. */
static void test_every_impl(void **state)
{
    (void)state;
    const size_t lens[] = { 256, 1025, 4096, 4097, 16383, 16384, 16385, 65535, 65536, 70001 };
    int ran = 0;
    for (size_t m = 0; m < NIMPL; m++) {
        if (sr_copy_select(impls[m].name, impls[m].movsb, TEST_NT_MIN) != 0)
            continue;
        ran++;
        for (size_t len = 0; len <= 2100; len++)
            for (size_t soff = 0; soff < 64; soff += 21)
                for (size_t doff = 0; doff < 64; doff += len < 1024 ? 7 : 1)
                    check_large(len, soff, doff);
        for (size_t len = 2101; len <= 70 * 1024; len += 263)
            for (size_t doff = 0; doff < 64; doff += 5)
                check_large(len, 3, doff);
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
            for (size_t rel = 0; rel < PAGE; rel += lens[l] < 16384 ? 1 : 3)
                check_large(lens[l], 64, 64 + rel);
    }
    sr_copy_select(NULL, -1, 0);
    /* memcpy-only and movsb are there on any x86-64. */
    assert_true(ran >= 2);
}

/* A destination a little past the source modulo 4096 (a get into a
 * malloc'd buffer from a page-aligned block) is copied backwards, except in
 * the AMD profile; a little before, and aligned, forwards.  With AVX-512,
 * offsets that are multiples of 4 take aligned loads and a permute. */
static void test_aliasing_backwards(void **state)
{
    (void)state;
    const char *name[] = { "avx512", "avx512-split", "avx2" };
    int ran = 0;
    for (int i = 0; i < 3; i++) {
        char back[32], shift[32], shift_back[32];
        if (sr_copy_select(name[i], 0, 0) != 0)
            continue;
        ran++;
        int has_shift = i == 0, split = i == 1;
        const char *vec = split ? "avx512" : name[i];
        /* The AMD profile copies every pair forwards. */
        snprintf(back, sizeof(back), split ? "%s" : "%s-back", vec);
        snprintf(shift, sizeof(shift), "%s", has_shift ? "avx512-shift" : vec);
        snprintf(shift_back, sizeof(shift_back), "%s", has_shift ? "avx512-shift-back" : back);
        assert_string_equal(sr_copy_strategy(dst_buf + 16, src_buf, 4096), shift_back);
        assert_string_equal(sr_copy_strategy(dst_buf + 4096 + 63, src_buf, 8192), back);
        assert_string_equal(sr_copy_strategy(dst_buf + 4080, src_buf, 4096), shift);
        assert_string_equal(sr_copy_strategy(dst_buf + 4095, src_buf, 4096), vec);
        assert_string_equal(sr_copy_strategy(dst_buf + 64, src_buf, 4096), vec);
        assert_string_equal(sr_copy_strategy(dst_buf, src_buf, 4096), vec);
        /* movsb and streaming stores are not direction-sensitive. */
        assert_int_equal(sr_copy_select(name[i], 1, (size_t)1 << 20), 0);
        /* Except, in the AMD profile, for pairs that alias a forward loop. */
        assert_string_equal(sr_copy_strategy(dst_buf + 16, src_buf, 65536),
                            split ? back : "movsb");
        assert_string_equal(sr_copy_strategy(dst_buf + 4080, src_buf, 65536), "movsb");
        assert_string_equal(sr_copy_strategy(dst_buf + 16, src_buf, 16384), shift_back);
        /* At 16 KiB a pair the shift loop takes stays in vectors (a put from
         * a malloc'd buffer), with split loads too; one whose lines line up
         * goes to movsb. */
        assert_string_equal(sr_copy_strategy(dst_buf + 4080, src_buf, 16384),
                            has_shift || split ? shift : "movsb");
        assert_string_equal(sr_copy_strategy(dst_buf + 2048, src_buf, 16384), "movsb");
        assert_string_equal(sr_copy_strategy(dst_buf + 4080, src_buf, 16385), "movsb");
        assert_string_equal(sr_copy_strategy(dst_buf + 16, src_buf, (size_t)1 << 20), "stream");
    }
    sr_copy_select(NULL, -1, 0);
    if (!ran)
        skip();
}

/* Zen 4's profile: AVX2 forwards for every pair at every size below the
 * streaming stores, except `rep movsb` above 16 KiB for pairs whose lines
 * line up. */
static void test_zen4_profile(void **state)
{
    (void)state;
    if (sr_copy_select("avx2-fwd", 1, (size_t)1 << 20) != 0)
        skip();
    const size_t lens[] = { 4096, 16384, 16385, 65536, 262144 };
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        size_t len = lens[l];
        const char *lines = len > 16384 ? "movsb" : "avx2";
        assert_string_equal(sr_copy_strategy(dst_buf, src_buf, len), lines);
        assert_string_equal(sr_copy_strategy(dst_buf + 64, src_buf, len), lines);
        assert_string_equal(sr_copy_strategy(dst_buf + 2048, src_buf + 4096 - 64, len), lines);
        assert_string_equal(sr_copy_strategy(dst_buf + 16, src_buf, len), "avx2");
        assert_string_equal(sr_copy_strategy(dst_buf + 4080, src_buf, len), "avx2");
        assert_string_equal(sr_copy_strategy(dst_buf + 2048 + 1, src_buf, len), "avx2");
        assert_string_equal(sr_copy_strategy(dst_buf + 63, src_buf, len), "avx2");
    }
    assert_string_equal(sr_copy_strategy(dst_buf + 16, src_buf, (size_t)1 << 20), "stream");
    /* Without movsb, AVX2 everywhere. */
    assert_int_equal(sr_copy_select("avx2-fwd", 0, (size_t)1 << 20), 0);
    assert_string_equal(sr_copy_strategy(dst_buf, src_buf, 65536), "avx2");
    sr_copy_select(NULL, -1, 0);
}

/* A kernel CPU list, as shared_cpu_list gives it. */
static void test_cpu_list(void **state)
{
    (void)state;
    assert_int_equal(sr_copy_cpu_count("0\n"), 1);
    assert_int_equal(sr_copy_cpu_count("0-1\n"), 2);
    assert_int_equal(sr_copy_cpu_count("0-3,8,10-11\n"), 7);
    assert_int_equal(sr_copy_cpu_count("0,64"), 2);
    assert_int_equal(sr_copy_cpu_count(""), 0);
    assert_int_equal(sr_copy_cpu_count("\n"), 0);
}

static void cache_file(const char *dir, int index, const char *what, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/index%d", dir, index);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/index%d/%s", dir, index, what);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void cache_level(const char *dir, int index, const char *level, const char *type,
                        const char *size, const char *cpus)
{
    cache_file(dir, index, "level", level);
    cache_file(dir, index, "type", type);
    cache_file(dir, index, "size", size);
    if (cpus != NULL)
        cache_file(dir, index, "shared_cpu_list", cpus);
}

/* The last-level cache share from a cache folder as the kernel lays it
 * out: the highest level's size over the CPUs sharing it; instruction
 * caches and lower levels listed after it do not count; a level without
 * its CPU list says too little (0: sysconf's guess instead). */
static void test_llc_share_from_sysfs(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_copy.XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(sr_copy_llc_share(dir), 0); /* no index0 */
    cache_level(dir, 0, "1\n", "Data\n", "32K\n", "0\n");
    cache_level(dir, 1, "1\n", "Instruction\n", "32K\n", "0\n");
    assert_int_equal(sr_copy_llc_share(dir), 32 << 10);
    cache_level(dir, 2, "2\n", "Unified\n", "1024K\n", "0\n");
    cache_level(dir, 3, "3\n", "Unified\n", "32768K\n", "0-1,4-5\n");
    assert_int_equal(sr_copy_llc_share(dir), (size_t)8 << 20);
    cache_level(dir, 4, "2\n", "Unified\n", "2M\n", "0\n"); /* lower, after it */
    assert_int_equal(sr_copy_llc_share(dir), (size_t)8 << 20);
    cache_level(dir, 5, "4\n", "Unified\n", "64M\n", NULL); /* no CPU list */
    assert_int_equal(sr_copy_llc_share(dir), 0);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Which code a CPU gets: AVX2 forwards on Zen 4 (family 0x19 with AVX-512),
 * the AMD profile from Zen 5 on, the permutes on other CPUs with AVX-512. */
static void test_pick_per_cpu(void **state)
{
    (void)state;
#if defined(__x86_64__) && defined(__GNUC__)
    assert_string_equal(sr_copy_pick(1, 1, 0), "avx512");         /* Intel */
    assert_string_equal(sr_copy_pick(1, 1, 0x19), "avx2-fwd");     /* Zen 4 */
    assert_string_equal(sr_copy_pick(1, 1, 0x1a), "avx512-split"); /* Zen 5 */
    assert_string_equal(sr_copy_pick(0, 1, 0x19), "avx2");         /* Zen 3 */
    assert_string_equal(sr_copy_pick(0, 1, 0), "avx2");
    assert_string_equal(sr_copy_pick(0, 0, 0x17), "movsb");
    /* The default is what sr_copy_pick says for this CPU, its vendor and
     * family read here from the kernel's report, not through CPUID as the
     * library does. */
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        skip();
    char line[256];
    int amd = 0;
    unsigned family = 0;
    while (fgets(line, sizeof(line), f) != NULL && !(family && line[0] == '\n')) {
        if (strncmp(line, "vendor_id", 9) == 0)
            amd = strstr(line, "AuthenticAMD") != NULL;
        else if (strncmp(line, "cpu family", 10) == 0)
            family = (unsigned)strtoul(strchr(line, ':') + 1, NULL, 10);
    }
    fclose(f);
    __builtin_cpu_init();
    const char *want = sr_copy_pick(__builtin_cpu_supports("avx512f"),
                                    __builtin_cpu_supports("avx2"), amd ? family : 0);
    /* Pairs on which every two profiles differ. */
    const struct {
        size_t doff, len;
    } probe[] = { { 16, 4096 }, { 4080, 4096 }, { 0, 4096 } };
    char got[3][32];
    assert_int_equal(sr_copy_select(NULL, 0, 0), 0);
    for (int i = 0; i < 3; i++)
        snprintf(got[i], sizeof(got[i]), "%s",
                 sr_copy_strategy(dst_buf + probe[i].doff, src_buf, probe[i].len));
    assert_int_equal(sr_copy_select(want, 0, 0), 0);
    for (int i = 0; i < 3; i++)
        assert_string_equal(got[i],
                            sr_copy_strategy(dst_buf + probe[i].doff, src_buf, probe[i].len));
    sr_copy_select(NULL, -1, 0);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_small_length),
        cmocka_unit_test(test_lengths_to_70k),
        cmocka_unit_test(test_megabytes),
        cmocka_unit_test(test_strategy_named),
        cmocka_unit_test(test_every_impl),
        cmocka_unit_test(test_aliasing_backwards),
        cmocka_unit_test(test_zen4_profile),
        cmocka_unit_test(test_cpu_list),
        cmocka_unit_test(test_llc_share_from_sysfs),
        cmocka_unit_test(test_pick_per_cpu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
