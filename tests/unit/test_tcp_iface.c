/* What the TCP transport says of itself: the core relies on these. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "tl/tl.h"
#include "util/env.h"

extern const sr_tl_ops_t sr_tl_tcp_ops;
int sr_tcp_if_match(const char *filter, const char *ifname, uint32_t ip);
int sr_tcp_if_valid(const char *filter);

/* SYMRAIL_TCP_IF follows the one comma-list rule (util/strlist): blanks
 * around entries and empty entries do not count. */
static void test_if_filter(void **state)
{
    (void)state;
    uint32_t ip = htonl(0x0a0a0105);  /* 10.10.1.5 */
    assert_true(sr_tcp_if_valid("lo,10.10.0.0/16"));
    assert_true(sr_tcp_if_valid(" lo , 10.10.0.0/16 ,"));
    assert_true(sr_tcp_if_valid("eth0,,lo"));
    assert_false(sr_tcp_if_valid("lo,10.10.0.0/33"));
    assert_false(sr_tcp_if_valid("10.10.0/16x"));
    assert_int_equal(sr_tcp_if_match(" lo ", "lo", 0), 1);
    assert_int_equal(sr_tcp_if_match("eth0, 10.10.0.0/16", "eth1", ip), 1);
    assert_int_equal(sr_tcp_if_match("eth0,\t10.11.0.0/16", "eth1", ip), 0);
    assert_int_equal(sr_tcp_if_match(" , ", "lo", 0), 0);
    assert_int_equal(sr_tcp_if_match("lo0", "lo", 0), 0);  /* exact names */
}

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

static int ev_n, ev_pe, ev_lane;
static uint32_t ev_weight, ev_gen;

static void on_lane(void *arg, int pe, int lane, uint32_t weight, uint32_t generation)
{
    (void)arg;
    ev_n++, ev_pe = pe, ev_lane = lane, ev_weight = weight, ev_gen = generation;
}

static void on_notify(void *arg, int src, uint32_t tag, const void *p, size_t len)
{
    (void)arg, (void)src, (void)tag, (void)p, (void)len;
}

static void put_done(sr_tl_comp_t *comp, symrail_status_t st)
{
    (void)comp, (void)st;
}

/* Two PEs in one process; the fault hook breaks lane 0 of PE 0 after one
 * slice, and the core hears of it from progress with a generation. */
static void test_lane_down_event(void **state)
{
    (void)state;
    static char heap[2][4096];
    static const uint8_t local[2] = { 1, 1 };
    sr_env_t env;
    setenv("SYMRAIL_TCP_FAULT_CONN", "0:1", 1);
    assert_int_equal(sr_env_load(getenv, &env), SYMRAIL_OK);
    unsetenv("SYMRAIL_TCP_FAULT_CONN");
    sr_tl_ctx_t *ctx[2];
    uint8_t addr[2][1024];
    size_t alen[2];
    for (int pe = 0; pe < 2; pe++) {
        sr_tl_params_t p = { .my_pe = pe, .n_pes = 2, .job = "unit", .is_local = local,
                             .env = &env, .serve_local = 1, .notify_cb = on_notify,
                             .lane_cb = on_lane };
        assert_int_equal(sr_tl_tcp_ops.init(&p, &ctx[pe]), SYMRAIL_OK);
        sr_tl_mem_t m = { .addr = heap[pe], .len = sizeof(heap[pe]) };
        assert_int_equal(sr_tl_tcp_ops.mem_reg(ctx[pe], 0, &m), SYMRAIL_OK);
        alen[pe] = sizeof(addr[pe]);
        assert_int_equal(sr_tl_tcp_ops.addr_pack(ctx[pe], addr[pe], &alen[pe]), SYMRAIL_OK);
    }
    sr_tl_ep_t *ep01, *ep10;
    assert_int_equal(sr_tl_tcp_ops.connect(ctx[0], 1, addr[1], alen[1], &ep01), SYMRAIL_OK);
    assert_int_equal(sr_tl_tcp_ops.connect(ctx[1], 0, addr[0], alen[0], &ep10), SYMRAIL_OK);
    sr_tl_comp_t comp = { .cb = put_done };
    char src[8] = "lanecb";
    symrail_status_t st = sr_tl_tcp_ops.put(ep01, 0, src, 0, 0, sizeof(src), &comp);
    assert_int_equal(st, SR_TL_INPROGRESS);
    assert_int_equal(ev_n, 0);  /* not from inside the op */
    for (int i = 0; i < 100 && ev_n == 0; i++)
        sr_tl_tcp_ops.progress(ctx[0]);
    assert_int_equal(ev_n, 1);
    assert_int_equal(ev_pe, 1);
    assert_int_equal(ev_lane, 0);
    assert_int_equal(ev_weight, 0);
    assert_int_equal(ev_gen, 1);
    uint32_t w[4];
    assert_int_equal(sr_tl_tcp_ops.ep_lanes(ep01, w, 4), 2);
    assert_int_equal(w[0], 0);
    assert_int_equal(w[1], 1);
    sr_tl_tcp_ops.fini(ctx[1]);
    sr_tl_tcp_ops.fini(ctx[0]);
    sr_env_release(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attr),
        cmocka_unit_test(test_if_filter),
        cmocka_unit_test(test_lane_down_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
