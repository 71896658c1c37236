/* Pairing rails with a peer's by reachability (link layer, subnet), not by
 * index: pure functions of rails.c, no devices needed. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tl/verbs/rails.h"

static sr_rail_link_t roce4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint32_t bits)
{
    sr_rail_link_t l = { .is_eth = 1, .prefix_bits = bits };
    l.gid[10] = l.gid[11] = 0xff;
    l.gid[12] = a, l.gid[13] = b, l.gid[14] = c, l.gid[15] = d;
    return l;
}

static sr_rail_link_t ib(uint8_t subnet, uint8_t guid)
{
    sr_rail_link_t l = { .is_eth = 0 };
    l.gid[0] = 0xfe, l.gid[1] = 0x80, l.gid[7] = subnet, l.gid[15] = guid;
    return l;
}

static void test_reach(void **state)
{
    (void)state;
    sr_rail_link_t a = roce4(10, 1, 0, 5, 24), b = roce4(10, 1, 0, 9, 24), c = roce4(10, 2, 0, 9, 24);
    assert_true(sr_rails_reach(&a, &b));
    assert_false(sr_rails_reach(&a, &c));
    sr_rail_link_t w = roce4(10, 2, 0, 9, 8);  /* a /8 on one side: the shorter prefix rules */
    assert_true(sr_rails_reach(&a, &w));
    sr_rail_link_t u = roce4(192, 168, 0, 1, 0);  /* prefix unknown: any IPv4 */
    assert_true(sr_rails_reach(&a, &u));
    sr_rail_link_t i1 = ib(1, 1), i2 = ib(1, 2), i3 = ib(2, 3), iz = { .is_eth = 0 };
    assert_true(sr_rails_reach(&i1, &i2));
    assert_false(sr_rails_reach(&i1, &i3));
    assert_true(sr_rails_reach(&i1, &iz));
    assert_false(sr_rails_reach(&i1, &a));  /* link layers differ */
    sr_rail_link_t v6 = { .is_eth = 1 };
    v6.gid[0] = 0x20, v6.gid[1] = 0x01;
    assert_false(sr_rails_reach(&a, &v6));  /* IPv4 against IPv6 */
}

static void test_pair(void **state)
{
    (void)state;
    int p[4];
    /* Same rails on both sides: by index. */
    sr_rail_link_t a[2] = { roce4(10, 1, 0, 1, 24), roce4(10, 2, 0, 1, 24) };
    sr_rail_link_t b[2] = { roce4(10, 1, 0, 2, 24), roce4(10, 2, 0, 2, 24) };
    sr_rails_pair(a, 2, b, 2, p);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], 1);
    /* Listed in the other order at the peer: by subnet, not by index. */
    sr_rail_link_t bx[2] = { b[1], b[0] };
    sr_rails_pair(a, 2, bx, 2, p);
    assert_int_equal(p[0], 1);
    assert_int_equal(p[1], 0);
    /* The peer has one rail: the other has no counterpart. */
    sr_rails_pair(a, 2, &b[1], 1, p);
    assert_int_equal(p[0], -1);
    assert_int_equal(p[1], 0);
    sr_rails_pair(&a[1], 1, b, 2, p);
    assert_int_equal(p[0], 1);
    /* Two rails in one subnet against one: one to one, the first gets it. */
    sr_rail_link_t s[2] = { roce4(10, 1, 0, 1, 24), roce4(10, 1, 0, 3, 24) };
    sr_rails_pair(s, 2, &b[0], 1, p);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], -1);
    /* a[1] reaches only b[0], which a[0] took by index: a[1] is left out,
     * no rail of b is used twice. */
    sr_rail_link_t any = roce4(10, 1, 0, 7, 0);
    sr_rail_link_t m[2] = { any, roce4(10, 1, 0, 8, 24) };
    sr_rail_link_t n[2] = { roce4(10, 1, 0, 9, 24), roce4(10, 3, 0, 9, 24) };
    sr_rails_pair(m, 2, n, 2, p);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], -1);
    /* Different link layers never pair. */
    sr_rail_link_t i[1] = { ib(1, 1) };
    sr_rails_pair(i, 1, b, 2, p);
    assert_int_equal(p[0], -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reach),
        cmocka_unit_test(test_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
