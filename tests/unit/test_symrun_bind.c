/* Unit tests of symrun's CPU plan on synthetic machines: a core each in
 * hwloc's order, only CPUs the launcher may use, one PU each when cores
 * run short, and no binding when the ranks would share CPUs. */
#define _GNU_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../launcher/symrun_bind.h"

#define MAXR 16

static hwloc_topology_t synth(const char *desc)
{
    hwloc_topology_t t;

    assert_int_equal(hwloc_topology_init(&t), 0);
    assert_int_equal(hwloc_topology_set_synthetic(t, desc), 0);
    assert_int_equal(hwloc_topology_load(t), 0);
    return t;
}

/* Plans nranks over the PUs in allowed (a hwloc list string such as
 * "0-3,6") and checks each rank's set against want[r], also a list. */
static void expect_plan(const char *desc, const char *allowed, int nranks,
                        int want_n, const char *const *want)
{
    hwloc_topology_t t = synth(desc);
    hwloc_bitmap_t a = hwloc_bitmap_alloc(), sets[MAXR];
    char buf[128];

    assert_int_equal(hwloc_bitmap_list_sscanf(a, allowed), 0);
    memset(sets, 0, sizeof(sets));
    assert_int_equal(sr_symrun_bind_plan(t, a, nranks, sets), want_n);
    for (int r = 0; r < want_n; r++) {
        hwloc_bitmap_list_snprintf(buf, sizeof(buf), sets[r]);
        assert_string_equal(buf, want[r]);
        hwloc_bitmap_free(sets[r]);
    }
    for (int r = want_n; r < MAXR; r++)
        assert_null(sets[r]);
    hwloc_bitmap_free(a);
    hwloc_topology_destroy(t);
}

static void test_core_each(void **state)
{
    const char *const want[] = {"0-1", "2-3", "4-5"};

    (void)state;
    expect_plan("pack:1 core:4 pu:2", "0-7", 3, 3, want);
}

static void test_across_packages(void **state)
{
    const char *const want[] = {"0", "1", "2", "3"};

    (void)state;
    expect_plan("pack:2 core:2 pu:1", "0-3", 4, 4, want);
}

/* taskset -c 3-7: the first core is left out, the second only has PU 3. */
static void test_launcher_mask(void **state)
{
    const char *const want[] = {"3", "4-5", "6-7"};

    (void)state;
    expect_plan("pack:1 core:4 pu:2", "3-7", 3, 3, want);
}

/* A mask with holes: ranks get the next core that has an allowed PU. */
static void test_mask_holes(void **state)
{
    const char *const want[] = {"0", "4", "6"};

    (void)state;
    expect_plan("pack:1 core:4 pu:2", "0,4,6", 3, 3, want);
}

/* Five ranks, four cores of two PUs: one PU each. */
static void test_pus_when_cores_short(void **state)
{
    const char *const want[] = {"0", "1", "2", "3", "4"};

    (void)state;
    expect_plan("pack:1 core:4 pu:2", "0-7", 5, 5, want);
}

static void test_oversubscribed(void **state)
{
    (void)state;
    expect_plan("pack:1 core:4 pu:2", "0-7", 9, 0, NULL);
    expect_plan("pack:1 core:2 pu:1", "0-1", 3, 0, NULL);
    /* Two CPUs on the machine, one allowed: two ranks share it. */
    expect_plan("pack:1 core:2 pu:1", "1", 2, 0, NULL);
}

static void test_exact_fit(void **state)
{
    const char *const want[] = {"0", "1"};

    (void)state;
    expect_plan("pack:1 core:2 pu:1", "0-1", 2, 2, want);
    expect_plan("pack:1 core:2 pu:1", "0-1", 0, 0, NULL);
}

/* The whole path on this machine: mode none never binds, and a plan that
 * binds gives every rank CPUs this process may use, no two alike. */
static void test_make_here(void **state)
{
    cpu_set_t self, *sets = (cpu_set_t *)1;
    int n;

    (void)state;
    assert_int_equal(sr_symrun_bind_make(SR_SYMRUN_BIND_NONE, true, 1, &sets), 0);
    assert_null(sets);
    assert_int_equal(sched_getaffinity(0, sizeof(self), &self), 0);
    n = CPU_COUNT(&self);
    assert_int_equal(sr_symrun_bind_make(SR_SYMRUN_BIND_CORE, false, n + 1, &sets), 0);
    assert_null(sets);
    assert_int_equal(sr_symrun_bind_make(SR_SYMRUN_BIND_CORE, false, n, &sets), 0);
    assert_non_null(sets);
    for (int r = 0; r < n; r++) {
        cpu_set_t both;

        assert_true(CPU_COUNT(&sets[r]) >= 1);
        CPU_AND(&both, &sets[r], &self);
        assert_true(CPU_EQUAL(&both, &sets[r]));
        for (int q = 0; q < r; q++) {
            CPU_AND(&both, &sets[r], &sets[q]);
            assert_int_equal(CPU_COUNT(&both), 0);
        }
    }
    free(sets);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_each),
        cmocka_unit_test(test_across_packages),
        cmocka_unit_test(test_launcher_mask),
        cmocka_unit_test(test_mask_holes),
        cmocka_unit_test(test_pus_when_cores_short),
        cmocka_unit_test(test_oversubscribed),
        cmocka_unit_test(test_exact_fit),
        cmocka_unit_test(test_make_here),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
