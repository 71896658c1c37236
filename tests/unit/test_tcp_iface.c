/* What the TCP transport says of itself: the core relies on these. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tl/tl.h"

extern const sr_tl_ops_t sr_tl_tcp_ops;

static void test_attr(void **state)
{
    sr_tl_attr_t a;
    (void)state;
    memset(&a, 0xa5, sizeof(a));
    sr_tl_tcp_ops.attr(NULL, &a);
    /* One connection is read and applied in order at the target. */
    assert_int_equal(a.ordered_lanes, 1);
    /* A put completes only with its acknowledgement. */
    assert_int_equal(a.local_completion, 0);
    assert_int_equal(a.can_sleep, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
