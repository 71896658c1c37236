/* The one comma-list parser: blanks around items, empty items, exact names. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/strlist.h"

static void test_items(void **state)
{
    (void)state;
    const char *pos = " shm , ,verbs,\ttcp ,", *item;
    const char *want[] = { "shm", "verbs", "tcp" };
    size_t len;
    for (int i = 0; i < 3; i++) {
        assert_true(sr_list_next(&pos, &item, &len));
        assert_int_equal(len, strlen(want[i]));
        assert_memory_equal(item, want[i], len);
    }
    assert_false(sr_list_next(&pos, &item, &len));
    assert_false(sr_list_next(&pos, &item, &len));  /* stays exhausted */
    pos = "";
    assert_false(sr_list_next(&pos, &item, &len));
    pos = " , ";
    assert_false(sr_list_next(&pos, &item, &len));
}

static void test_has(void **state)
{
    (void)state;
    assert_true(sr_list_has("verbs, shm", "shm"));
    assert_false(sr_list_has("shmx,verbs", "shm"));  /* exact names only */
    assert_false(sr_list_has("xshm", "shm"));
    assert_false(sr_list_has("", "shm"));
    assert_true(sr_list_has("mlx5_0:1 , mlx5_1", "mlx5_1"));
    assert_true(sr_list_item_is("tcpx", 3, "tcp"));
    assert_false(sr_list_item_is("tcp", 3, "tc"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_has),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
