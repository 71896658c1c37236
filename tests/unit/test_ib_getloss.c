/*
 * Gets through lane failures, against a fake device that moves the data
 * (fake_ibdev.h: each QP executes its work requests in order, completes the
 * signalled ones, and in error flushes everything it still holds; the lanes
 * loop back to their own PE, so a repair needs no peer).  A small model of
 * the core posts the slices of a get over 2 rails x 2 QPs and posts a
 * failed slice again on another lane.  Faults come at random: a
 * retry-exceeded error, a responder that refused (flush with no error of
 * ours), a read executed whose response was lost or only partly landed,
 * the stall watch, a lane broken from outside, a post the QP refuses part
 * way through its chain, a limbo that stops waiting for the PSN, lanes
 * given up (all but lane 0); through zero-copy and bounce buffers.
 * Checked: every slice is called back once per post, and when with
 * success, its bytes are in place at that moment; no QP is destroyed with
 * work or completions of it still to come; at the end every byte arrived
 * and nothing is left outstanding.  Then the same faults under the core's
 * own slices, retries and requests (its progress drives the device): a
 * blocking put and get return success only with every byte in place.  And
 * a lane broken from outside drains behind an unsignalled WR its QP had
 * executed (no completion ever comes for it); work queued behind a post
 * the QP refused is never retired as done by a later completion.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tl/verbs/ib.h"
#include "ib_test_ctx.h"
#include "core/rt.h"
#include "core/spray_core.h"

#define NRAILS  2
#define QPP     2
#define NL      (NRAILS * QPP)
#define SLICE   4096
#define NSLICES 24
#define TOTAL   (SLICE * NSLICES)
#define RADDR   0x100000ull

#include "fake_ibdev.h"

/* ---- a context whose 4 lanes loop back to its own PE ---- */

static sr_tl_ctx_t *ctx;
static sr_tl_ep_t *ep;
static sr_tl_ep_t *eps[1];
static uint64_t rng;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static int setup(void **state)
{
    (void)state;
    nfqps = 0;
    post_fails = 0;
    memset(cq_head, 0, sizeof(cq_head));
    memset(cq_tail, 0, sizeof(cq_tail));
    fctx.ops.post_send = fake_post_send;
    fctx.ops.poll_cq = fake_poll_cq;
    for (size_t i = 0; i < TOTAL; i++)
        rmem[i] = (unsigned char)(1 + (i * 7 + i / SLICE) % 251);  /* never 0 */
    ctx = calloc(1, sizeof(*ctx));
    ctx->mt = 1;
    pthread_mutex_init(&ctx->rlock, NULL);
    pthread_mutex_init(&ctx->flock, NULL);
    pthread_mutex_init(&ctx->plock, NULL);
    pthread_mutex_init(&ctx->nlock, NULL);
    ctx->params.n_pes = 1;
    ctx->params.my_pe = 0;
    ctx->max_wr = 6;
    ctx->max_inline = 48;
    ctx->fault_lane = -1;
    ctx->stall_ns = 1000000000ull;
    ctx->ndevs = NRAILS;
    ctx->nrails = NRAILS;
    ctx->qpp = QPP;
    for (int r = 0; r < NRAILS; r++) {
        fcq[r].context = &fctx;
        ctx->devs[r].cq = &fcq[r];
        ctx->devs[r].cq_size = 64;
        fmr[r].lkey = 10 + (uint32_t)r;
        ctx->devs[r].scratch_mr = &fmr[r];
        snprintf(ctx->devs[r].name, sizeof(ctx->devs[r].name), "fake%d", r);
        ctx->rails[r].dev = &ctx->devs[r];
        ctx->rails[r].port = 1;
        ctx->rails[r].weight = 1;
        ctx->rails[r].mtu = IBV_MTU_1024;
    }
    ctx->amo_free = ctx->bounce_free = ~0ull;
    ctx->amo_res = calloc(SR_IB_AMO_SLOTS, sizeof(uint64_t));
    ctx->bounce_len = SLICE;
    ctx->bounce = calloc(64, SLICE);
    ctx->scratch_len = TOTAL;
    ctx->scratch = calloc(1, TOTAL);  /* registered: read into in place */
    sr_pool_init(&ctx->ops, sizeof(sr_ib_op_t), 64);
    ctx->lanes = calloc(NL, sizeof(*ctx->lanes));
    ep = calloc(1, sizeof(*ep));
    ep->ctx = ctx;
    ep->pe = 0;
    ep->nlanes = NL;
    ep->lanes = ctx->lanes;
    ep->raddr[0] = RADDR;
    for (int r = 0; r < NRAILS; r++)
        ep->rail_addr[r].mtu = IBV_MTU_1024;
    for (int l = 0; l < NL; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        struct ibv_qp_init_attr ia = { .send_cq = &fcq[l / QPP] };
        pthread_mutex_init(&lane->lock, NULL);
        lane->rail = &ctx->rails[l / QPP];
        lane->max_wr = ctx->max_wr;
        lane->sig_every = 2;
        lane->qp = ibv_create_qp(NULL, &ia);
        assert_int_equal(sr_ib_qp_connect(lane->qp, lane->rail, &ep->rail_addr[0],
                                          lane->qp->qp_num, 0), SYMRAIL_OK);
        sr_ib_lane_connected(lane, &ep->rail_addr[0]);
    }
    eps[0] = ep;
    ctx->eps = eps;
    ctx->neps = 1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ib_test_ctx_free(ctx, ep);
    return 0;
}

static void progress(void)
{
    sr_ib_done_t done;
    sr_ib_done_init(&done);
    sr_ib_poll(ctx, &done);
    sr_ib_rma_progress(ctx, &done);
    if (SR_IB_LOAD(ctx->repairs_pending))
        sr_ib_repair(ctx);
    sr_ib_done_run(&done);
    sr_ib_lane_report(ctx);
}

/* ---- the core, as far as a get's slices go ---- */

typedef struct {
    sr_tl_comp_t comp;
    int          idx, lane, posts, calls, done, waiting;
} slice_t;

static slice_t sl[NSLICES];
static unsigned char *dst;
static int ok_calls, failed_calls;

static void slice_cb(sr_tl_comp_t *comp, symrail_status_t status)
{
    slice_t *s = (slice_t *)comp;
    s->calls++;
    assert_int_equal(s->calls, s->posts);  /* one callback per post */
    assert_false(s->done);
    if (status == SYMRAIL_OK) {
        /* Success: its bytes are there now, not later. */
        size_t off = (size_t)s->idx * SLICE;
        if (memcmp(dst + off, rmem + off, SLICE) != 0)
            fail_msg("slice %d called back OK on lane %d, its bytes not written", s->idx,
                     s->lane);
        s->done = 1;
        ok_calls++;
        return;
    }
    failed_calls++;
    s->waiting = 1;
    s->lane = (s->lane + 1 + (int)rnd(NL - 1)) % NL;  /* another lane */
}

/* Fresh slices reading into buf, which is cleared; none posted yet. */
static void slices_reset(unsigned char *buf)
{
    assert_non_null(buf);
    dst = buf;
    memset(dst, 0, TOTAL);
    memset(sl, 0, sizeof(sl));
    ok_calls = failed_calls = 0;
    for (int i = 0; i < NSLICES; i++) {
        sl[i].comp.cb = slice_cb;
        sl[i].idx = i;
    }
}

/* Slice i, posted on lane 0 where the test wants it, taken for now. */
static void slice_post(int i)
{
    size_t off = (size_t)i * SLICE;
    assert_int_equal(sr_ib_get(ep, 0, dst + off, 0, off, SLICE, &sl[i].comp), SR_TL_INPROGRESS);
    sl[i].posts++;
}

/* Posts the slices that wait; a lane with no room or down sends them on. */
static void post_waiting(void)
{
    for (int i = 0; i < NSLICES; i++) {
        slice_t *s = &sl[i];
        if (!s->waiting)
            continue;
        size_t off = (size_t)i * SLICE;
        s->comp.flags = rnd(2) ? SR_TL_COMP_MORE : 0;
        symrail_status_t st = sr_ib_get(ep, s->lane, dst + off, 0, off, SLICE, &s->comp);
        if (st == SR_TL_INPROGRESS) {
            s->posts++;
            s->waiting = 0;
        } else {
            assert_true(st == SYMRAIL_ERR_AGAIN || st == SYMRAIL_ERR_TRANSPORT);
            s->lane = (s->lane + 1) % NL;
        }
    }
    sr_ib_ep_post_end(ep);
}

static int all_done(void)
{
    for (int i = 0; i < NSLICES; i++)
        if (!sl[i].done)
            return 0;
    return 1;
}

/* One fault on lane l's QP. */
static void fault(int l)
{
    sr_ib_lane_t *lane = &ep->lanes[l];
    fqp_t *q = fq(lane->qp);
    /* Lane 0 is repaired as often as it takes; the others may be given up. */
    if (l == 0 || rnd(4))
        lane->repairs = 0;
    switch (rnd(8)) {
    case 6:  /* the QP refuses a post, part way through its chain */
        post_fails = 1 + (int)rnd(3);
        return;
    case 7:  /* the work its failure caught waits no longer for the PSN */
        ctx->limbo_ns = ctx->limbo_ns ? 0 : 1;
        return;
    case 0:  /* the peer stopped answering */
        if (fqp_busy(q) && !q->err)
            fqp_retry_exceeded(q);
        break;
    case 1:  /* the responder refused a request of the peer's: flushed, no error of ours */
        if (!q->err)
            fqp_flush(q);
        break;
    case 2:  /* a read executed, its response lost or only partly landed */
    case 3:
        if (fqp_busy(q) && !q->err) {
            fwr_t *w = fqp_exec(q, rnd(2) ? 0 : q->sq[q->head % RING].len / 2);
            if (w->opcode == IBV_WR_RDMA_READ) {
                cqe_add(q, q->sq[q->head++ % RING].wr_id, IBV_WC_RETRY_EXC_ERR);
                fqp_flush(q);
            } else {
                fqp_complete_head(q);
            }
        }
        break;
    case 4:  /* nothing completes for a while: the stall watch */
        assert_int_equal(sr_tl_verbs_ops.ep_check(ep), SYMRAIL_OK);
        sr_ib_lock(ctx, &lane->lock);
        lane->watch_since -= 2 * ctx->stall_ns;
        sr_ib_unlock(ctx, &lane->lock);
        assert_int_equal(sr_tl_verbs_ops.ep_check(ep), SYMRAIL_OK);
        break;
    default:  /* broken from outside (the peer saw it fail) */
        sr_ib_lock(ctx, &lane->lock);
        sr_ib_lane_fail(ep, lane, "the peer saw it fail");
        sr_ib_unlock(ctx, &lane->lock);
        break;
    }
}

/* The device's step: some QP executes its head WR, or a QP in error
 * flushes what it holds. */
static void device_step(void)
{
    for (int i = 0; i < nfqps; i++)
        if (fqp_busy(&fqps[i]) && fqps[i].err)
            fqp_flush(&fqps[i]);
    int l = (int)rnd(NL);
    fqp_t *q = fq(ep->lanes[l].qp);
    for (unsigned n = rnd(3) + 1; n-- && fqp_busy(q) && !q->err;)
        fqp_complete_head(q);
}

/* A lane broken from outside (the peer saw it fail) when all its QP still
 * owes is an unsignalled put that the QP executed: no completion will ever
 * come for it, and the lane must drain and be repaired all the same. */
static void test_lane_drains_behind_an_executed_unsignalled_put(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &ep->lanes[0];
    uint64_t v = 7;
    assert_int_equal(sr_ib_put(ep, 0, &v, 0, 0, 8, NULL), SYMRAIL_OK);  /* inline */
    assert_true(lane->sig_seq < lane->sq_posted);  /* unsignalled */
    fqp_complete_head(fq(lane->qp));               /* done: no completion */
    sr_ib_lock(ctx, &lane->lock);
    sr_ib_lane_fail(ep, lane, "the peer saw it fail");
    sr_ib_unlock(ctx, &lane->lock);
    for (int i = 0; i < 10 && lane->state != SR_IB_LANE_UP; i++) {
        device_step();
        progress();
    }
    assert_int_equal(lane->state, SR_IB_LANE_UP);
    assert_int_equal(lane->outstanding, 0);
    assert_null(lane->wq_head);
}

/* The same behind a chain the QP refused whole, which filled the lane: the
 * slots its WRs hold (the signalled one among them) are none of the QP's,
 * and the write that drains the lane goes in all the same. */
static void refused_chain_that_filled_it(void)
{
    sr_ib_lane_t *lane = &ep->lanes[0];
    uint64_t v = 7;
    sr_tl_comp_t more = { .cb = NULL, .flags = SR_TL_COMP_MORE };
    assert_int_equal(sr_ib_put(ep, 0, &v, 0, 0, 8, NULL), SYMRAIL_OK);
    fqp_complete_head(fq(lane->qp));  /* done, unsignalled: no completion */
    post_fails = 1;                   /* the next chain: refused from its first WR */
    for (uint32_t i = 1; i < ctx->max_wr; i++)
        assert_int_equal(sr_ib_put(ep, 0, &v, 0, 8 * i, 8, &more), SYMRAIL_OK);
    sr_ib_ep_post_end(ep);
    assert_int_equal(lane->down, 1);
    assert_int_equal(lane->outstanding, ctx->max_wr);
    for (int i = 0; i < 10 && lane->state != SR_IB_LANE_UP; i++) {
        device_step();
        progress();
    }
    assert_int_equal(lane->state, SR_IB_LANE_UP);
    assert_null(lane->wq_head);
    /* The refused puts went again on another lane, or on this one repaired. */
    for (int i = 0; i < 10; i++) {
        device_step();
        progress();
    }
    for (uint32_t i = 1; i < ctx->max_wr; i++)
        assert_int_equal(rmem[8 * i], 7);
}

static void test_lane_drains_behind_a_refused_chain_that_filled_it(void **state)
{
    (void)state;
    refused_chain_that_filled_it();
}

/* The same when the chain took the last entries of its CQ as well: they
 * will never be used, and the write that drains the lane needs one. */
static void test_lane_drains_behind_a_refused_chain_that_filled_its_cq(void **state)
{
    (void)state;
    ctx->devs[0].cq_size = ctx->max_wr;
    refused_chain_that_filled_it();
}

/* A lane given up before it drained (here: a connected peer with no
 * channel to repair over) whose QP owes an unsignalled put it executed and
 * a get it refused: the get is still called back, and the lane drains. */
static void test_a_lane_given_up_before_it_drained_still_drains(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &ep->lanes[0];
    uint64_t v = 7;
    ep->conn = 1;
    ctx->params.ctl_send = NULL;
    assert_int_equal(sr_ib_put(ep, 0, &v, 0, 0, 8, NULL), SYMRAIL_OK);  /* inline */
    fqp_complete_head(fq(lane->qp));  /* done, unsignalled: no completion */
    slices_reset(calloc(1, TOTAL));
    post_fails = 1;
    slice_post(1);
    assert_int_equal(lane->state, SR_IB_LANE_DEAD);
    for (int k = 0; k < 20; k++) {
        device_step();
        progress();
    }
    assert_int_equal(sl[1].calls, 1);
    assert_int_equal(failed_calls, 1);
    assert_int_equal(lane->outstanding, 0);
    assert_null(lane->wq_head);
    free(dst);
}

static int amo_calls;
static symrail_status_t amo_status;

static void amo_cb(sr_tl_comp_t *comp, symrail_status_t status)
{
    (void)comp;
    amo_calls++;
    amo_status = status;
}

/* A chain the QP refused part way waits on its lane for the WRs the QP did
 * take; a WR posted on that lane later (a compare-swap loop going round
 * again after its guess was wrong) must not retire the refused ones as
 * done when its own completion comes: a get among them would be called
 * back with success and no bytes. */
static void test_work_behind_a_refused_post_is_not_retired_as_done(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &ep->lanes[0];
    fqp_t *q = fq(lane->qp);
    uint64_t res = 0;
    sr_tl_comp_t acomp = { .cb = amo_cb };
    amo_calls = 0;
    rng = 1;
    /* An 8-byte SET is a compare-swap loop from a guess of the word. */
    assert_int_equal(sr_ib_atomic(ep, 0, SR_TL_AMO_SET, 0, 0, 9, 0, &res, &acomp),
                     SR_TL_INPROGRESS);
    sr_ib_op_t *a = lane->wq_head;
    assert_true(a->amo_loop);
    fqp_complete_head(q);            /* executed, its completion waits in the CQ */
    ctx->amo_res[a->amo_slot] = 5;   /* the word was not the guess: round again */
    slices_reset(calloc(1, TOTAL));
    sl[1].comp.flags = SR_TL_COMP_MORE;
    post_fails = 1;                  /* the chain of two gets: refused from its first */
    slice_post(1);
    slice_post(2);
    assert_int_equal(lane->down, 1);
    /* Two polls before the refused work is seen to (another thread holds
     * the flush lock meanwhile): the loop goes round, and its WR is
     * flushed behind the refused ones. */
    sr_ib_done_t done;
    sr_ib_done_init(&done);
    sr_ib_poll(ctx, &done);
    device_step();
    sr_ib_poll(ctx, &done);
    sr_ib_done_run(&done);
    for (int k = 0; k < 200 && !(sl[1].done && sl[2].done && amo_calls); k++) {
        post_waiting();
        device_step();
        progress();
    }
    assert_true(sl[1].done && sl[2].done);
    assert_int_equal(amo_calls, 1);
    /* Never executed the second time round: posted again, not lost. */
    assert_int_equal(amo_status, SYMRAIL_OK);
    free(dst);
}

static void get_through_failures(int zcopy, uint64_t seed, int faults)
{
    rng = seed;
    slices_reset(zcopy ? (unsigned char *)ctx->scratch : calloc(1, TOTAL));
    for (int i = 0; i < NSLICES; i++) {
        sl[i].lane = i % NL;
        sl[i].waiting = 1;
    }
    int steps = 0;
    while (!all_done()) {
        assert_true(++steps < 200000);
        post_waiting();
        unsigned a = rnd(100);
        if (a < 55)
            device_step();
        else if (a < 58 && faults > 0 && steps > 3) {
            faults--;
            fault((int)rnd(NL));
        }
        if (rnd(3) == 0 || faults == 0)
            progress();
        if (faults == 0)
            device_step();
    }
    /* Nothing is called back after the get is done, and nothing is left. */
    for (int k = 0; k < 50; k++) {
        device_step();
        progress();
    }
    assert_memory_equal(dst, rmem, TOTAL);
    for (int i = 0; i < NSLICES; i++)
        assert_int_equal(sl[i].calls, sl[i].posts);
    for (int l = 0; l < NL; l++) {
        assert_true(ep->lanes[l].state == SR_IB_LANE_UP || ep->lanes[l].state == SR_IB_LANE_DEAD);
        assert_null(ep->lanes[l].limbo_head);
    }
    assert_int_equal(ok_calls, NSLICES);
    if (!zcopy)
        free(dst);
}

static void test_get_through_failures_zcopy(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        teardown(NULL);
        setup(NULL);
        get_through_failures(1, seed * 0x9e3779b97f4a7c15ull, 1 + (int)(seed % 6));
    }
}

static void test_get_through_failures_bounce(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        teardown(NULL);
        setup(NULL);
        get_through_failures(0, seed * 0x2545f4914f6cdd1dull, 1 + (int)(seed % 6));
    }
}

/* ---- the same through the core: its slices, retries and request ---- */

static int core_faults;

/* The core's progress drives the device too, and brings the faults. */
static int core_progress(sr_tl_ctx_t *c)
{
    (void)c;
    if (core_faults > 0 && rnd(25) == 0) {
        core_faults--;
        fault((int)rnd(NL));
    }
    for (unsigned n = rnd(4); n--;)
        device_step();
    progress();
    return 1;
}

static sr_tl_ops_t core_ops;

static char *core_getenv(const char *name)
{
    (void)name;
    return NULL;
}

static void core_setup(void)
{
    core_ops = sr_tl_verbs_ops;
    core_ops.progress = core_progress;
    core_ops.local_hint = sr_tl_no_local_hint;
    memset(&sr_rt, 0, sizeof(sr_rt));
    assert_int_equal(sr_env_load(core_getenv, &sr_rt.env), SYMRAIL_OK);
    sr_rt.env.spin_count = 10;
    sr_rt.env.op_timeout = 60000;
    assert_int_equal(sr_spray_setup(), SYMRAIL_OK);
    sr_rt.n_pes = 1;
    sr_rt.n_max = 1;
    sr_rt.sleeper = -1;
    sr_rt.hold_lane = -1;
    sr_rt.peers = calloc(1, sizeof(*sr_rt.peers));
    sr_rt.pids = calloc(1, sizeof(int));
    sr_rt.peers[0].ops = &core_ops;
    sr_rt.peers[0].ep = ep;
    sr_rt.peers[0].slice = SLICE;
    sr_rt.peers[0].ordered = 1;
    sr_rt.peers[0].local_comp = 1;  /* puts of bounce buffers complete at post */
    sr_rt.tls[0].ops = &core_ops;
    sr_rt.tls[0].tl = ctx;
    sr_rt.ntls = 1;
    ctx->params.lane_cb = sr_lane_event;  /* the core's weights follow the lanes */
    ctx->params.cb_arg = &sr_rt.tls[0];
    assert_int_equal(sr_ctx_new(0, &sr_rt.dctx), SYMRAIL_OK);
    sr_peer_lanes_refresh(0);
}

static void core_teardown(void)
{
    sr_ctxs_fini();
    sr_health_fini();
    free(sr_rt.peers);
    free(sr_rt.pids);
    sr_env_release(&sr_rt.env);
}

/* A put of the whole heap and then a get of it, each returning only once
 * every byte is where it belongs, whatever failed on the way. */
static void core_get_through_failures(int zcopy, uint64_t seed, int faults)
{
    rng = seed;
    core_faults = faults;
    core_setup();
    unsigned char *buf = zcopy ? (unsigned char *)ctx->scratch : calloc(1, TOTAL);
    unsigned char *want = malloc(TOTAL);
    for (size_t i = 0; i < TOTAL; i++)
        want[i] = buf[i] = (unsigned char)(3 + (i * 13 + seed) % 241);
    assert_int_equal(sr_rma_net(sr_rt.dctx, 1, buf, 0, TOTAL, 0, 1), SYMRAIL_OK);
    assert_int_equal(sr_quiet(sr_rt.dctx), SYMRAIL_OK);
    for (size_t i = 0; i < TOTAL; i++)
        if (rmem[i] != want[i])
            fail_msg("seed %llx: a put returned success, byte %zu (slice %zu) not written",
                     (unsigned long long)seed, i, i / SLICE);
    memset(buf, 0, TOTAL);
    assert_int_equal(sr_rma_net(sr_rt.dctx, 0, buf, 0, TOTAL, 0, 1), SYMRAIL_OK);
    for (size_t i = 0; i < TOTAL; i++)
        if (buf[i] != want[i])
            fail_msg("seed %llx: a get returned success, byte %zu (slice %zu) not written",
                     (unsigned long long)seed, i, i / SLICE);
    core_faults = 0;
    assert_int_equal(sr_quiet(sr_rt.dctx), SYMRAIL_OK);
    core_teardown();
    free(want);
    if (!zcopy)
        free(buf);
}

static void test_core_get_through_failures(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        teardown(NULL);
        setup(NULL);
        core_get_through_failures(seed & 1, seed * 0x9e3779b97f4a7c15ull, 1 + (int)(seed % 8));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lane_drains_behind_an_executed_unsignalled_put,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_lane_drains_behind_a_refused_chain_that_filled_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_lane_drains_behind_a_refused_chain_that_filled_its_cq,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lane_given_up_before_it_drained_still_drains,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_work_behind_a_refused_post_is_not_retired_as_done,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_through_failures_zcopy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_through_failures_bounce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_core_get_through_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
