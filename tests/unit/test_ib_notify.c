/*
 * The notify channel's receive side against a fake device: the provider's
 * poll_cq and post_srq_recv (which ibv_poll_cq and ibv_post_srq_recv reach
 * through the context's ops) hand back the completions a test chooses and
 * fail a post when told to.  Checked, with the credit invariant of
 * credits.h (every buffer is in a window, in the pool, or waiting to be
 * posted again):
 *  - a peer whose notify QP failed gives its window back to the pool;
 *  - a buffer whose post failed is not counted as posted: it joins no
 *    window or pool until a later poll posts it;
 * and, on the data side of init, that a zero-copy threshold no slice can
 * reach is warned about.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "tl/verbs/ib.h"
#include "util/env.h"

#define NPES  3
#define NRECV 32

static struct ibv_context fctx;
static struct ibv_cq fcq;
static struct ibv_srq fsrq;
static struct ibv_qp fnqp[NPES];
static struct ibv_mr fmr;
static struct ibv_wc ready[64];
static int nready, ready_pos;
static int posted, fail_posts;

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    (void)cq;
    int k = 0;
    while (k < n && ready_pos < nready)
        wc[k++] = ready[ready_pos++];
    return k;
}

static int fake_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
                              struct ibv_recv_wr **bad)
{
    (void)srq;
    if (fail_posts > 0) {
        fail_posts--;
        *bad = wr;
        return ENOMEM;
    }
    posted++;
    return 0;
}

static sr_tl_ctx_t *ctx;
static sr_tl_ep_t *eps[NPES];
static char slots[NRECV * SR_IB_MSG_SIZE];

static void tl_notify_cb(void *arg, int pe, uint32_t tag, const void *p, size_t len)
{
    (void)arg, (void)pe, (void)tag, (void)p, (void)len;
}

static int setup(void **state)
{
    (void)state;
    nready = ready_pos = posted = fail_posts = 0;
    fctx.ops.poll_cq = fake_poll_cq;
    fctx.ops.post_srq_recv = fake_post_srq_recv;
    fcq.context = &fctx;
    fsrq.context = &fctx;
    ctx = calloc(1, sizeof(*ctx));
    assert_non_null(ctx);
    pthread_mutex_init(&ctx->nlock, NULL);
    ctx->params.n_pes = NPES;
    ctx->params.my_pe = 0;
    ctx->params.notify_cb = tl_notify_cb;
    ctx->ndevs = 1;
    ctx->devs[0].scratch_mr = &fmr;
    snprintf(ctx->devs[0].name, sizeof(ctx->devs[0].name), "fake0");
    ctx->nrails = 1;
    ctx->rails[0].dev = &ctx->devs[0];
    ctx->ncq = &fcq;
    ctx->srq = &fsrq;
    ctx->recv_slots = slots;
    ctx->nrecv = NRECV;
    ctx->depth = 16;
    ctx->pool_low = 2;
    ctx->unposted = calloc(NRECV, sizeof(uint32_t));
    /* Windows of 8 for PEs 1 and 2 (4 for ourselves), the rest pooled. */
    ctx->pool_free = NRECV - 8 - 8 - 4;
    for (int pe = 0; pe < NPES; pe++) {
        sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
        assert_non_null(ep);
        ep->ctx = ctx;
        ep->pe = pe;
        fnqp[pe].context = &fctx;
        fnqp[pe].qp_num = 200 + (uint32_t)pe;
        ep->nqp = &fnqp[pe];
        ep->n_limit = pe == 0 ? 4 : 8;
        eps[pe] = ep;
    }
    ctx->eps = eps;
    ctx->neps = NPES;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sr_msg_t *m;
    while ((m = sr_msgq_pop(&ctx->mq)) != NULL)
        free(m);
    for (int pe = 0; pe < NPES; pe++)
        free(eps[pe]);
    free(ctx->unposted);
    free(ctx);
    return 0;
}

/* The receiver's books: every one of the NRECV buffers is accounted for. */
static void assert_books(void)
{
    uint64_t windows = 0;
    for (int pe = 0; pe < NPES; pe++)
        windows += eps[pe]->n_limit - eps[pe]->n_recv;
    assert_int_equal(windows + ctx->pool_free + ctx->nunposted - ctx->pool_owed, NRECV);
}

/* A message of 8 payload bytes from pe in buffer i. */
static void arrive(int pe, uint32_t i)
{
    char *slot = slots + (size_t)i * SR_IB_MSG_SIZE;
    uint32_t tag = 7, len = 8;
    memcpy(slot, &tag, 4);
    memcpy(slot + 4, &len, 4);
    ready[nready++] = (struct ibv_wc){ .wr_id = SR_IB_WR_RECV | i, .status = IBV_WC_SUCCESS,
                                       .wc_flags = IBV_WC_WITH_IMM,
                                       .imm_data = htonl((uint32_t)pe),
                                       .qp_num = fnqp[pe].qp_num,
                                       .byte_len = SR_IB_MSG_HDR + len };
}

/* pe's notify QP fails: one of our sends to it completes in error. */
static void nqp_fails(int pe)
{
    ready[nready++] = (struct ibv_wc){ .wr_id = SR_IB_WR_SEND | ((uint64_t)pe << 24) | 0,
                                       .status = IBV_WC_RETRY_EXC_ERR,
                                       .qp_num = fnqp[pe].qp_num };
    ctx->nsend_free = 0;
    sr_ib_npoll(ctx);
    assert_int_equal(eps[pe]->nqp_error, 1);
}

static void test_a_failed_peer_gives_its_window_back(void **state)
{
    (void)state;
    assert_books();
    uint32_t free0 = ctx->pool_free;
    arrive(2, 0);
    sr_ib_npoll(ctx);
    assert_books();
    uint64_t window = eps[2]->n_limit - eps[2]->n_recv;
    assert_true(window >= SR_IB_CREDIT_STATIC);
    uint32_t free1 = ctx->pool_free;
    nqp_fails(2);
    assert_int_equal(ctx->pool_free, free1 + window);
    assert_true(ctx->pool_free > free0);
    assert_books();
    /* Its flushed receives and later errors give nothing twice. */
    ready[nready++] = (struct ibv_wc){ .wr_id = SR_IB_WR_SEND | (2ull << 24) | 1,
                                       .status = IBV_WC_WR_FLUSH_ERR,
                                       .qp_num = fnqp[2].qp_num };
    sr_ib_npoll(ctx);
    assert_int_equal(ctx->pool_free, free1 + window);
    assert_books();
}

/* A message polled after its peer's notify QP failed (receive and send
 * completions are not ordered): its buffer was given back with the window,
 * so the pool gains nothing twice and the dead QP gets no window again. */
static void test_a_late_message_after_the_window_went_back(void **state)
{
    (void)state;
    nqp_fails(2);
    assert_books();
    uint32_t free1 = ctx->pool_free;
    arrive(2, 3);
    sr_ib_npoll(ctx);
    assert_int_equal(eps[2]->n_limit, eps[2]->n_recv);
    assert_int_equal(ctx->pool_free, free1);
    assert_books();
}

static void test_a_failed_post_is_not_counted_posted(void **state)
{
    (void)state;
    uint32_t free0 = ctx->pool_free;
    uint64_t limit0 = eps[1]->n_limit;
    fail_posts = 1;
    arrive(1, 3);
    sr_ib_npoll(ctx);
    assert_int_equal(posted, 0);
    assert_int_equal(ctx->nunposted, 1);
    /* Not posted: not in the pool, nor in the window grown back. */
    assert_int_equal(ctx->pool_free + (eps[1]->n_limit - limit0), free0);
    assert_books();
    /* The next poll posts it, and only then does it count. */
    sr_ib_npoll(ctx);
    assert_int_equal(posted, 1);
    assert_int_equal(ctx->nunposted, 0);
    assert_books();
    /* A buffer back from an error completion, not posted either: the pool
     * lends it until it is. */
    fail_posts = 1;
    uint32_t free1 = ctx->pool_free;
    ready[nready++] = (struct ibv_wc){ .wr_id = SR_IB_WR_RECV | 5, .status = IBV_WC_WR_FLUSH_ERR,
                                       .qp_num = 999 /* no peer's: no window changes */ };
    sr_ib_npoll(ctx);
    assert_int_equal(ctx->pool_free, free1 - 1);
    assert_books();
    sr_ib_npoll(ctx);
    assert_int_equal(ctx->pool_free, free1);
    assert_int_equal(posted, 2);
    assert_books();
}

static void test_a_zcopy_threshold_no_slice_reaches_is_warned(void **state)
{
    (void)state;
    sr_env_t env;
    memset(&env, 0, sizeof(env));
    env.slice_size = 64 << 10;
    env.ib_zcopy_thresh = 128 << 10;
    env.ib_rcache_max = 1 << 20;
    ctx->params.env = &env;
    FILE *f = tmpfile();
    assert_non_null(f);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(f), 2) >= 0);
    symrail_status_t st = sr_ib_rc_init(ctx);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(st, SYMRAIL_OK);
    assert_null(ctx->rcache);  /* nothing is registered for it either */
    sr_ib_rc_fini(ctx);
    char buf[4096] = { 0 };
    rewind(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_non_null(strstr(buf, "SYMRAIL_IB_ZCOPY_THRESH"));
    assert_non_null(strstr(buf, "SYMRAIL_SLICE_SIZE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_failed_peer_gives_its_window_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_late_message_after_the_window_went_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_post_is_not_counted_posted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_zcopy_threshold_no_slice_reaches_is_warned, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
