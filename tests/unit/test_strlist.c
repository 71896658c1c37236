/* The one comma-list parser: blanks around items, empty items, exact names. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "boot/boot.h"
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

/* PMIX_LOCAL_PEERS is read with the same rules. */
static void test_local_peers(void **state)
{
    (void)state;
    uint8_t local[8];
    int n = 0;
    memset(local, 0, sizeof(local));
    assert_int_equal(sr_boot_local_peers_parse(" 0, 2 ,,5,2", 8, local, &n), SYMRAIL_OK);
    assert_int_equal(n, 3);  /* 2 twice is one peer */
    assert_true(local[0] && local[2] && local[5]);
    assert_false(local[1] || local[3] || local[4] || local[6] || local[7]);
    const char *bad[] = { "0,x", "0,8", "1 2", "-1", "+1", "99999999999999999999" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(local, 0, sizeof(local));
        n = 0;
        if (sr_boot_local_peers_parse(bad[i], 8, local, &n) == SYMRAIL_OK)
            fail_msg("PMIX_LOCAL_PEERS='%s' was accepted", bad[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_has),
        cmocka_unit_test(test_local_peers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
