/*
 * Unit tests of the transfer slicer.  A slicing mistake silently drops or
 * duplicates bytes of a network transfer, so beyond the documented shapes the
 * tests check coverage exhaustively over many (length, slice) pairs.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/slice.h"

/* Checks the slicer's promises for one pair and returns the slice count. */
static size_t check_cover(size_t len, size_t slice)
{
    sr_slicer_t s;
    size_t next = 0, eff = slice ? slice : 1;

    sr_slicer_init(&s, len, slice);
    if (s.count == 0)
        fail_msg("len %zu slice %zu: no slices", len, slice);
    for (size_t i = 0; i < s.count; i++) {
        size_t off = (size_t)-1, n = (size_t)-1;
        sr_slicer_get(&s, i, &off, &n);
        if (off != next)
            fail_msg("len %zu slice %zu: slice %zu starts at %zu, expected %zu", len, slice, i,
                     off, next);
        /* Only a transfer of zero bytes may have an empty slice. */
        if (n == 0 && len != 0)
            fail_msg("len %zu slice %zu: slice %zu is empty", len, slice, i);
        /* Written so that huge slices cannot overflow the bound. */
        if (n > eff && n - eff > eff / 4)
            fail_msg("len %zu slice %zu: slice %zu has %zu bytes, more than %zu + %zu", len,
                     slice, i, n, eff, eff / 4);
        if (i + 1 < s.count && n != eff)
            fail_msg("len %zu slice %zu: inner slice %zu has %zu bytes", len, slice, i, n);
        if (i + 1 == s.count && s.count > 1 && n < eff / 4)
            fail_msg("len %zu slice %zu: tail slice of %zu bytes is below a quarter", len, slice,
                     n);
        next = off + n;
    }
    if (next != len)
        fail_msg("len %zu slice %zu: slices end at %zu", len, slice, next);
    return s.count;
}

static void expect_slices(size_t len, size_t slice, size_t count, size_t last_len)
{
    sr_slicer_t s;
    size_t off, n;
    sr_slicer_init(&s, len, slice);
    if (s.count != count)
        fail_msg("len %zu slice %zu: %zu slices, expected %zu", len, slice, s.count, count);
    sr_slicer_get(&s, s.count - 1, &off, &n);
    if (n != last_len)
        fail_msg("len %zu slice %zu: last slice %zu bytes, expected %zu", len, slice, n,
                 last_len);
    check_cover(len, slice);
}

static void test_single_slice(void **state)
{
    (void)state;
    expect_slices(0, 65536, 1, 0);
    expect_slices(1, 65536, 1, 1);
    expect_slices(8, 65536, 1, 8);
    expect_slices(65535, 65536, 1, 65535);
    expect_slices(65536, 65536, 1, 65536);
}

static void test_exact_multiple(void **state)
{
    (void)state;
    expect_slices(2 * 65536, 65536, 2, 65536);
    expect_slices(16 * 65536, 65536, 16, 65536);
    expect_slices(1000 * 4096, 4096, 1000, 4096);
}

static void test_tail_own_slice(void **state)
{
    (void)state;
    /* A tail of exactly a quarter travels on its own. */
    expect_slices(65536 + 16384, 65536, 2, 16384);
    expect_slices(65536 + 16385, 65536, 2, 16385);
    expect_slices(3 * 65536 + 65535, 65536, 4, 65535);
    expect_slices(100 + 25, 100, 2, 25);
}

static void test_tail_merges(void **state)
{
    (void)state;
    expect_slices(65536 + 1, 65536, 1, 65537);
    expect_slices(65536 + 16383, 65536, 1, 65536 + 16383);
    expect_slices(5 * 65536 + 100, 65536, 5, 65636);
    expect_slices(100 + 24, 100, 1, 124);
}

static void test_degenerate_slice(void **state)
{
    (void)state;
    /* Slice 0 is treated as 1 rather than looping forever or dividing by 0. */
    expect_slices(5, 0, 5, 1);
    expect_slices(0, 0, 1, 0);
    /* Below four bytes a quarter is zero, so any tail is a slice of its own. */
    expect_slices(7, 3, 3, 1);
    expect_slices(3, 2, 2, 1);
}

static void test_sweep(void **state)
{
    static const size_t slices[] = { 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 63, 64, 100, 127, 1000,
                                     4096, 65536 };
    size_t pairs = 0;
    (void)state;
    for (size_t k = 0; k < sizeof(slices) / sizeof(slices[0]); k++) {
        size_t sl = slices[k];
        /* Every length up to forty slices, then strides through larger ones. */
        size_t dense = sl * 40 + 10 < 40000 ? sl * 40 + 10 : 40000;
        for (size_t len = 0; len <= dense; len++, pairs++)
            check_cover(len, sl);
        for (size_t len = dense; len < sl * 300; len += sl / 4 + 1, pairs++)
            check_cover(len, sl);
        /* Around each multiple of the slice, where the rules change. */
        for (size_t m = 1; m <= 40; m++) {
            size_t base = m * sl;
            for (size_t d = 0; d <= 2; d++, pairs += 4) {
                check_cover(base + d, sl);
                check_cover(base + sl / 4 + d, sl);
                if (base >= d + 1)
                    check_cover(base - d - 1, sl);
                if (base + sl / 4 >= d + 1)
                    check_cover(base + sl / 4 - d - 1, sl);
            }
        }
    }
    /* Lengths near the top of the address space must not overflow offsets. */
    size_t big = (size_t)-1;
    check_cover(big / 2 + 12345, (size_t)1 << 40);
    assert_int_equal(check_cover(big, big), 1);
    assert_true(pairs > 100000);
}

static void test_count_formula(void **state)
{
    (void)state;
    /* Cross-check the count against the rule as the header states it, with
     * a quarter slice rounded down (below 4 bytes it is 0, so any tail is a
     * slice of its own). */
    for (size_t sl = 1; sl <= 64; sl++) {
        for (size_t len = 0; len <= 64 * 12; len++) {
            size_t full = len / sl, tail = len % sl, want;
            if (len <= sl)
                want = 1;
            else if (tail == 0)
                want = full;
            else if (tail < sl / 4)
                want = full;        /* merged into the last full slice */
            else
                want = full + 1;
            if (check_cover(len, sl) != want)
                fail_msg("len %zu slice %zu: count differs from the rule (%zu)", len, sl, want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_slice),
        cmocka_unit_test(test_exact_multiple),
        cmocka_unit_test(test_tail_own_slice),
        cmocka_unit_test(test_tail_merges),
        cmocka_unit_test(test_degenerate_slice),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_count_formula),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
