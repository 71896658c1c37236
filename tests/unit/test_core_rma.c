/*
 * The core's request/slice machinery against a scripted transport: slices
 * are spread over lanes by weight, a lane with no room makes the core
 * progress and post again, a failed slice is retried on another lane, and a
 * request completes exactly when all its slices have (or fails with the
 * slice's error).  The transport here is a fault-injection stand-in; real
 * data movement is proven by the integration tests.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/ctx.h"
#include "core/lanes.h"

#define NLANES  3
#define MAXOPS  4096

typedef struct {
    sr_tl_comp_t *comp;
    int           lane;
    uint64_t      roff;
    size_t        len;
} fake_op_t;

static struct {
    uint32_t  weights[NLANES];
    int       room;              /* outstanding ops allowed per lane */
    int       failing_lane;      /* completions on it fail; -1 none */
    int       outstanding[NLANES];
    int       posted[NLANES];
    int       again;             /* AGAIN answers given */
    fake_op_t q[MAXOPS];
    int       nq;
    unsigned char done[1 << 20]; /* bytes completed successfully */
} fk;

static symrail_status_t fake_rma(sr_tl_ep_t *ep, int lane, void *buf, uint32_t region,
                                 uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    (void)ep, (void)buf, (void)region;
    assert_true(lane >= 0 && lane < NLANES);
    assert_true(fk.weights[lane] != 0);  /* the core never picks a down lane */
    if (fk.outstanding[lane] >= fk.room) {
        fk.again++;
        return SYMRAIL_ERR_AGAIN;
    }
    assert_true(fk.nq < MAXOPS);
    fk.q[fk.nq++] = (fake_op_t){ comp, lane, roff, len };
    fk.outstanding[lane]++;
    fk.posted[lane]++;
    return SR_TL_INPROGRESS;
}

static symrail_status_t fake_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                                 uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    return fake_rma(ep, lane, (void *)src, region, roff, len, comp);
}

static int fake_progress(sr_tl_ctx_t *ctx)
{
    (void)ctx;
    int n = fk.nq;
    fake_op_t q[MAXOPS];
    memcpy(q, fk.q, (size_t)n * sizeof(q[0]));
    fk.nq = 0;
    for (int i = 0; i < n; i++) {
        fk.outstanding[q[i].lane]--;
        if (q[i].lane == fk.failing_lane) {
            /* The lane is found broken: it reports itself down from now on. */
            fk.weights[q[i].lane] = 0;
            q[i].comp->cb(q[i].comp, SYMRAIL_ERR_TRANSPORT);
        } else {
            for (size_t b = 0; b < q[i].len; b++)
                fk.done[q[i].roff + b]++;
            q[i].comp->cb(q[i].comp, SYMRAIL_OK);
        }
    }
    return n;
}

static int fake_lanes(sr_tl_ep_t *ep, uint32_t *w, int max)
{
    (void)ep, (void)max;
    memcpy(w, fk.weights, sizeof(fk.weights));
    return NLANES;
}

static symrail_status_t fake_ep_check(sr_tl_ep_t *ep)
{
    (void)ep;
    return SYMRAIL_OK;
}

static sr_tl_ops_t fake_ops;
static char *fake_getenv(const char *name)
{
    (void)name;
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    memset(&fk, 0, sizeof(fk));
    fk.weights[0] = 1;
    fk.weights[1] = 2;
    fk.weights[2] = 1;
    fk.room = 1000;
    fk.failing_lane = -1;
    fake_ops.put = fake_put;
    fake_ops.get = fake_rma;
    fake_ops.progress = fake_progress;
    fake_ops.ep_lanes = fake_lanes;
    fake_ops.ep_check = fake_ep_check;
    memset(&sr_ctx, 0, sizeof(sr_ctx));
    assert_int_equal(sr_env_load(fake_getenv, &sr_ctx.env), SYMRAIL_OK);
    sr_ctx.env.spin_count = 10;
    sr_ctx.env.op_timeout = 2000;
    sr_ctx.n_pes = 1;
    sr_ctx.sleeper = -1;
    sr_ctx.peers = calloc(1, sizeof(*sr_ctx.peers));
    sr_ctx.pids = calloc(1, sizeof(int));
    sr_ctx.peers[0].ops = &fake_ops;
    sr_ctx.peers[0].ep = (sr_tl_ep_t *)&fk;
    sr_ctx.peers[0].slice = 1000;
    sr_ctx.tls[0].ops = &fake_ops;
    sr_ctx.ntls = 1;
    sr_req_init(&sr_ctx.nbi);
    sr_pool_init(&sr_ctx.slices, sizeof(sr_slice_t), 256);
    sr_peer_lanes_refresh(0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sr_slices_fini();
    free(sr_ctx.peers);
    free(sr_ctx.pids);
    sr_env_release(&sr_ctx.env);
    return 0;
}

static void assert_each_byte_once(size_t len)
{
    for (size_t b = 0; b < len; b++)
        if (fk.done[b] != 1)
            fail_msg("byte %zu completed %d times", b, fk.done[b]);
}

static void test_weights(void **state)
{
    (void)state;
    static char buf[8000];
    assert_int_equal(sr_rma(1, buf, 0, 8000, 0, 1), SYMRAIL_OK);
    /* 8 slices over weights 1:2:1 */
    assert_int_equal(fk.posted[0], 2);
    assert_int_equal(fk.posted[1], 4);
    assert_int_equal(fk.posted[2], 2);
    assert_each_byte_once(8000);
}

static void test_pick_interleaves(void **state)
{
    (void)state;
    sr_lanes_t l;
    uint32_t w[3] = { 1, 2, 1 };
    sr_lanes_set(&l, w, 3);
    /* Smooth: the heavy lane never gets more than two in a row. */
    int prev = -1, run = 0;
    for (int i = 0; i < 400; i++) {
        int p = sr_lanes_pick(&l, -1);
        run = p == prev ? run + 1 : 1;
        prev = p;
        assert_true(run <= 2);
    }
    assert_int_equal(sr_lanes_pick(&l, 1) == 1, 0);  /* avoid honoured while others are up */
    w[0] = w[2] = 0;
    sr_lanes_set(&l, w, 3);
    assert_int_equal(sr_lanes_pick(&l, 1), 1);  /* ... but not when it is the only one */
    w[1] = 0;
    sr_lanes_set(&l, w, 3);
    assert_int_equal(sr_lanes_pick(&l, -1), -1);
}

static void test_backpressure(void **state)
{
    (void)state;
    static char buf[50000];
    fk.room = 2;  /* far fewer slots than slices */
    assert_int_equal(sr_rma(1, buf, 0, 50000, 0, 1), SYMRAIL_OK);
    assert_true(fk.again > 0);
    assert_true(sr_ctx.stats.backpressure_stalls > 0);
    for (int l = 0; l < NLANES; l++)
        assert_true(fk.outstanding[l] == 0);
    assert_each_byte_once(50000);
}

static void test_retry_other_lane(void **state)
{
    (void)state;
    static char buf[20000];
    fk.failing_lane = 1;
    assert_int_equal(sr_rma(0, buf, 0, 20000, 0, 1), SYMRAIL_OK);
    assert_true(sr_ctx.stats.retries > 0);
    assert_int_equal(fk.weights[1], 0);
    assert_each_byte_once(20000);
}

static void test_all_lanes_fail(void **state)
{
    (void)state;
    static char buf[5000];
    fk.weights[0] = 0;
    fk.weights[2] = 0;
    sr_peer_lanes_refresh(0);
    fk.failing_lane = 1;
    assert_int_equal(sr_rma(1, buf, 0, 5000, 0, 1), SYMRAIL_ERR_TRANSPORT);
    /* Nothing is left in flight or queued after the failure. */
    assert_int_equal(fk.nq, 0);
    assert_null(sr_ctx.retry_head);
}

static void test_nbi_quiet(void **state)
{
    (void)state;
    static char buf[30000];
    for (int i = 0; i < 3; i++)
        assert_int_equal(sr_rma(1, buf + i * 10000, (uint64_t)i * 10000, 10000, 0, 0), SYMRAIL_OK);
    assert_true(sr_ctx.nbi.remaining > 0);
    assert_int_equal(sr_quiet(), SYMRAIL_OK);
    assert_int_equal(sr_ctx.nbi.remaining, 0);
    assert_each_byte_once(30000);
    /* A failure in an nbi transfer surfaces at quiet, once. */
    fk.failing_lane = 0;
    fk.weights[1] = fk.weights[2] = 0;
    sr_peer_lanes_refresh(0);
    assert_int_equal(sr_rma(1, buf, 0, 3000, 0, 0), SYMRAIL_OK);
    assert_int_equal(sr_quiet(), SYMRAIL_ERR_TRANSPORT);
    assert_int_equal(sr_quiet(), SYMRAIL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_weights, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pick_interleaves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backpressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_other_lane, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_lanes_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nbi_quiet, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
