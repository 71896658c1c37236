/* sr_copy against a reference for many lengths and offsets of both ends,
 * with guard bytes on both sides of the destination. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/copy.h"

#define GUARD 128
#define PAGE  4096

static unsigned char *src_buf, *dst_buf;
static size_t buf_len;

static int setup(void **state)
{
    (void)state;
    buf_len = ((size_t)6 << 20) + 2 * PAGE + 2 * GUARD;
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

static void check_one(size_t len, size_t soff, size_t doff)
{
    unsigned char *src = src_buf + GUARD + soff;
    unsigned char *dst = dst_buf + GUARD + doff;
    memset(dst - GUARD, 0xa5, len + 2 * GUARD);
    sr_copy(dst, src, len);
    for (size_t i = 0; i < GUARD; i++) {
        if (dst[-1 - (ptrdiff_t)i] != 0xa5 || dst[len + i] != 0xa5)
            fail_msg("guard byte %zu overwritten: len %zu src+%zu dst+%zu", i, len, soff, doff);
    }
    if (memcmp(dst, src, len) != 0) {
        size_t i = 0;
        while (dst[i] == src[i])
            i++;
        fail_msg("byte %zu differs: len %zu src+%zu dst+%zu (%s)", i, len, soff, doff,
                 sr_copy_strategy(len));
    }
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
    assert_string_equal(sr_copy_strategy(8), "memcpy");
    assert_non_null(sr_copy_strategy((size_t)1 << 20));
    assert_string_not_equal(sr_copy_strategy((size_t)1 << 20), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_small_length),
        cmocka_unit_test(test_lengths_to_70k),
        cmocka_unit_test(test_megabytes),
        cmocka_unit_test(test_strategy_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
