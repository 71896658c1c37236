/*
 * The verbs data path against a fake device (ib_fake_dev.h), so no RDMA
 * device is needed.  What matters: a flush of lane 1 completes while
 * lane 0 holds unfinished work, and a put of lane 0 that is lost and sent
 * again elsewhere, or lost for good, concerns the flushes of lane 0 only;
 * and with thread_multiple, threads posting to shared lanes while others
 * progress lose no completion, call none twice and leave every lane and
 * the CQ empty (run under ThreadSanitizer in a --enable-sanitizers=thread
 * build, this is also the race check of the lanes' locking).
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
#include "ib_fake_dev.h"

/* ---- tests ---- */

static void test_flush_one_lane_while_another_is_busy(void **state)
{
    (void)state;
    put8(0, 0);
    put8(0, 8);
    put8(1, 16);
    tcomp_t f1, f0;
    tcomp_init(&f1);
    assert_int_equal(sr_ib_flush(ep, 1u << 1, &f1.comp), SR_TL_INPROGRESS);
    complete_lane(1, IBV_WC_SUCCESS);
    progress();
    assert_int_equal(f1.calls, 1);
    assert_int_equal(f1.status, SYMRAIL_OK);
    /* Lane 0 was never covered nor completed: still outstanding. */
    assert_int_equal(ep->lanes[0].outstanding, 2);
    tcomp_init(&f0);
    assert_int_equal(sr_ib_flush(ep, 1u << 0, &f0.comp), SR_TL_INPROGRESS);
    progress();
    assert_int_equal(f0.calls, 0);
    complete_lane(0, IBV_WC_SUCCESS);
    progress();
    assert_int_equal(f0.calls, 1);
    assert_int_equal(ep->lanes[0].outstanding, 0);
    /* Nothing left anywhere: at once. */
    assert_int_equal(sr_ib_flush(ep, 7, &f0.comp), SYMRAIL_OK);
}

/* Lane 0's put is lost with its QP; lane 1, where it would go again, is
 * full.  A flush of lane 1 waits for lane 1's own work only. */
static void test_replay_of_another_lane_does_not_hold_a_flush(void **state)
{
    (void)state;
    put8(0, 0);
    for (int i = 0; i < MAXWR; i++)
        put8(1, 64 + 8 * (uint64_t)i);
    complete_lane(0, IBV_WC_RETRY_EXC_ERR);
    progress();
    assert_non_null(ep->replay_head);  /* lane 1 has no room */
    tcomp_t f1;
    tcomp_init(&f1);
    symrail_status_t st = sr_ib_flush(ep, 1u << 1, &f1.comp);
    assert_int_equal(st, SR_TL_INPROGRESS);
    complete_lane(1, IBV_WC_SUCCESS);
    progress();
    /* Lane 1's puts are done; lane 0's went out again on lane 1 since. */
    assert_null(ep->replay_head);
    assert_int_equal(f1.calls, 1);
    assert_int_equal(f1.status, SYMRAIL_OK);
}

/* Puts that completed at post, flushed by their QP's error before anything
 * of ours failed (its responder refused the peer: the lane stays offered):
 * they wait in their lane's limbo, and so does a flush of that lane, until
 * the peer's old receive PSN says which were executed; the first was, and
 * is done, the second goes again on the repaired lane, and the flush waits
 * for it there. */
static void test_flush_waits_for_its_put_caught_in_a_failure(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &ep->lanes[0];
    put8(0, 0);
    put8(0, 8);
    complete_lane(0, IBV_WC_WR_FLUSH_ERR);
    progress();
    assert_null(ep->replay_head);
    assert_non_null(lane->limbo_head);
    assert_int_equal(lane->refused, 1);
    tcomp_t f0;
    tcomp_init(&f0);
    assert_int_equal(sr_ib_flush(ep, 1u << 0, &f0.comp), SR_TL_INPROGRESS);
    progress();
    assert_int_equal(f0.calls, 0);
    /* The repair: the peer executed up to the second put. */
    sr_ib_lock(ctx, &lane->lock);
    sr_ib_limbo_sort(ep, lane, 1, lane->limbo_head->next->psn);
    lane->down = 0;
    lane->state = SR_IB_LANE_UP;
    sr_ib_unlock(ctx, &lane->lock);
    uint64_t posted = lane->sq_posted;
    progress();
    assert_null(lane->limbo_head);
    assert_int_equal(lane->sq_posted, posted + 1);
    assert_int_equal(f0.calls, 0);
    complete_lane(0, IBV_WC_SUCCESS);
    progress();
    assert_int_equal(f0.calls, 1);
    assert_int_equal(f0.status, SYMRAIL_OK);
    assert_int_equal(lane->outstanding, 0);
}

/* The owner puts data, fences (one ordered lane: no wait) and puts the
 * flag, while its QP goes to error because its responder refused the
 * peer's stale access.  The data put, complete at post, is flushed into
 * the limbo; the lane is repaired (the peer executed none of it) before a
 * progress has posted it again.  The flag must not reach the QP ahead of
 * the data: the reader, seeing the flag, must see the data. */
static void test_flag_after_fence_waits_for_the_replayed_put(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &ep->lanes[0];
    uint64_t data = 42, flag = 1;
    assert_int_equal(sr_ib_put(ep, 0, &data, 0, 0, 8, NULL), SYMRAIL_OK);
    int first = nwrs;  /* what the failed QP got never arrived */
    complete_lane(0, IBV_WC_WR_FLUSH_ERR);
    progress();
    assert_non_null(lane->limbo_head);
    sr_ib_lock(ctx, &lane->lock);
    sr_ib_limbo_sort(ep, lane, 1, lane->limbo_head->psn);
    lane->down = 0;
    lane->state = SR_IB_LANE_UP;
    sr_ib_unlock(ctx, &lane->lock);
    /* The fence pins the lane: the core retries on it. */
    symrail_status_t st;
    for (int tries = 0; (st = sr_ib_put(ep, 0, &flag, 0, 64, 8, NULL)) == SYMRAIL_ERR_AGAIN &&
                        tries < 10; tries++)
        progress();
    assert_int_equal(st, SYMRAIL_OK);
    progress();
    assert_null(lane->limbo_head);
    /* The reader: lane 0's new QP executes its writes in the order it got them. */
    uint64_t mem[16] = { 0 };
    int saw_flag = 0;
    for (int i = first; i < nwrs; i++) {
        if (wrs[i].qp != 0 || wrs[i].raddr < FAKE_RADDR ||
            wrs[i].raddr >= FAKE_RADDR + sizeof(mem))
            continue;
        mem[(wrs[i].raddr - FAKE_RADDR) / 8] = wrs[i].val;
        if (mem[8] == flag) {
            assert_int_equal(mem[0], data);
            saw_flag = 1;
        }
    }
    assert_true(saw_flag);
}

/* A limbo whose PSN never comes: it waits while ctx->limbo_ns (half of
 * SYMRAIL_OP_TIMEOUT) has not passed, 0 being no limit; then its put
 * goes out on another lane, as when the PSN is unknown. */
static void test_limbo_waits_for_the_op_timeout(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &ep->lanes[0];
    put8(0, 0);
    complete_lane(0, IBV_WC_WR_FLUSH_ERR);
    progress();
    assert_non_null(lane->limbo_head);
    ctx->limbo_ns = 0;
    progress();
    assert_non_null(lane->limbo_head);
    ctx->limbo_ns = 60ull * 1000 * 1000 * 1000;
    progress();
    assert_non_null(lane->limbo_head);
    ctx->limbo_ns = 1;
    uint64_t posted = ep->lanes[1].sq_posted + ep->lanes[2].sq_posted;
    progress();
    assert_null(lane->limbo_head);
    progress();
    assert_null(ep->replay_head);
    assert_int_equal(ep->lanes[1].sq_posted + ep->lanes[2].sq_posted, posted + 1);
}

/* Atomics flushed the same way: of those the peer executed, one whose
 * result is not wanted is done, one whose fetched value was lost fails with
 * SYMRAIL_ERR_RESULT_LOST (never applied twice), a fetch (which changes
 * nothing) is read again; one the peer never executed goes again; those
 * that go again are answered this time. */
static void test_atomics_caught_in_a_failure(void **state)
{
    (void)state;
    sr_ib_lane_t *lane = &ep->lanes[1];
    tcomp_t c[4];
    uint64_t res[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < 4; i++) {
        tcomp_init(&c[i]);
        assert_int_equal(sr_ib_atomic(ep, 1, i == 2 ? SR_TL_AMO_FETCH : SR_TL_AMO_ADD, 0, 8, 1,
                                      0, i == 0 ? NULL : &res[i], &c[i].comp),
                         SR_TL_INPROGRESS);
    }
    complete_lane(1, IBV_WC_WR_FLUSH_ERR);
    progress();
    for (int i = 0; i < 4; i++)
        assert_int_equal(c[i].calls, 0);
    sr_ib_lock(ctx, &lane->lock);
    sr_ib_limbo_sort(ep, lane, 1, lane->limbo_head->next->next->next->psn);
    lane->down = 0;
    lane->state = SR_IB_LANE_UP;
    sr_ib_unlock(ctx, &lane->lock);
    progress();
    assert_int_equal(c[0].calls, 1);
    assert_int_equal(c[0].status, SYMRAIL_OK);
    assert_int_equal(c[1].calls, 1);
    assert_int_equal(c[1].status, SYMRAIL_ERR_RESULT_LOST);
    assert_int_equal(c[2].calls, 0);
    assert_int_equal(c[3].calls, 0);
    for (int s = 0; s < SR_IB_AMO_SLOTS; s++)
        ctx->amo_res[s] = 41;
    complete_lane(1, IBV_WC_SUCCESS);
    progress();
    for (int i = 2; i < 4; i++) {
        assert_int_equal(c[i].calls, 1);
        assert_int_equal(c[i].status, SYMRAIL_OK);
        assert_int_equal(res[i], 41);
    }
    assert_int_equal(ctx->amo_free, ~0ull);
}

/* A put of lane 0 lost for good is the error of the next flush of lane 0,
 * not of lane 2's. */
static void test_late_error_goes_to_the_flush_of_its_lane(void **state)
{
    (void)state;
    for (int l = 1; l < NLANES; l++) {
        ep->lanes[l].down = 1;
        ep->lanes[l].state = SR_IB_LANE_DEAD;
    }
    put8(0, 0);
    complete_lane(0, IBV_WC_RETRY_EXC_ERR);
    progress();
    assert_non_null(ep->replay_head);      /* no lane up to send it again */
    ep->lanes[0].state = SR_IB_LANE_DEAD;  /* as if its repair had failed */
    tcomp_t f;
    tcomp_init(&f);
    assert_int_equal(sr_ib_flush(ep, 1u << 2, &f.comp), SYMRAIL_OK);
    assert_int_equal(sr_ib_flush(ep, 1u << 0, &f.comp), SYMRAIL_ERR_TRANSPORT);
    assert_int_equal(sr_ib_flush(ep, 1u << 0, &f.comp), SYMRAIL_OK);  /* reported once */
}

/* Three zero-copy puts (or gets) of one transfer on lane 0, posted as one
 * chain: only its last WR is signalled. */
static void chain3(tcomp_t c[3], int get)
{
    for (int i = 0; i < 3; i++) {
        tcomp_init(&c[i]);
        c[i].comp.flags = i < 2 ? SR_TL_COMP_MORE : 0;
        char *local = ctx->scratch + 1024 * i;
        uint64_t roff = 1024 * (uint64_t)i;
        assert_int_equal(get ? sr_ib_get(ep, 0, local, 0, roff, 1024, &c[i].comp)
                             : sr_ib_put(ep, 0, local, 0, roff, 1024, &c[i].comp),
                         SR_TL_INPROGRESS);
    }
    sr_ib_ep_post_end(ep);
    assert_int_equal(nwrs, 3);
    assert_int_equal(wrs[0].sig + wrs[1].sig, 0);
    assert_int_equal(wrs[2].sig, 1);
}

/* Each callback came once, with success or (ok 0) a failure, and nothing
 * is left on the lane. */
static void chain3_done(const tcomp_t c[3], int ok)
{
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c[i].calls, 1);
        if (ok)
            assert_int_equal(c[i].status, SYMRAIL_OK);
        else
            assert_int_not_equal(c[i].status, SYMRAIL_OK);
    }
    assert_int_equal(ep->lanes[0].outstanding, 0);
}

/* Zero-copy puts of one transfer on one lane go out as a chain of which
 * only the last is signalled (before: each, for its callback); the last
 * one's completion covers the others, and every callback comes. */
static void test_chain_covers_its_callbacks(void **state)
{
    (void)state;
    tcomp_t c[3];
    chain3(c, 0);
    progress();
    assert_int_equal(c[0].calls + c[1].calls + c[2].calls, 0);
    complete_lane(0, IBV_WC_SUCCESS);
    progress();
    chain3_done(c, 1);
}

/* The same for gets into registered memory (this fake device has no
 * bounce buffers). */
static void test_chain_covers_its_gets(void **state)
{
    (void)state;
    tcomp_t c[3];
    chain3(c, 1);
    complete_lane(0, IBV_WC_SUCCESS);
    progress();
    chain3_done(c, 1);
}

/* A QP that fails under such a chain completes each of its WRs with an
 * error of its own, signalled or not: every callback comes, once, with a
 * failure, and nothing is left on the lane. */
static void test_chain_caught_in_a_failure(void **state)
{
    (void)state;
    tcomp_t c[3];
    chain3(c, 0);
    complete_lane(0, IBV_WC_RETRY_EXC_ERR);
    progress();
    chain3_done(c, 0);
}

/* A lane whose device neither completes nor fails what it was given (rxe
 * whose netdev went down did so): a look at the peer once stall_ns has
 * passed with a signalled WR waiting and nothing completed breaks the lane
 * as the QP's own retries would have, and the put behind it fails to the
 * core, which sends it elsewhere.  A lane that completes something between
 * looks, or holds only unsignalled WRs (puts complete at post), is left
 * alone however long it waits. */
static void test_stalled_lane_breaks(void **state)
{
    (void)state;
    ctx->stall_ns = 1000000000ull;
    sr_ib_lane_t *stuck = &ep->lanes[0], *slow = &ep->lanes[1], *idle = &ep->lanes[2];
    tcomp_t c0, c1;
    tcomp_init(&c0);
    tcomp_init(&c1);
    uint64_t *v = (uint64_t *)(void *)ctx->scratch;  /* registered: read in place */
    assert_int_equal(sr_ib_get(ep, 0, &v[0], 0, 0, 8, &c0.comp), SR_TL_INPROGRESS);
    assert_int_equal(sr_ib_get(ep, 1, &v[1], 0, 8, 8, &c1.comp), SR_TL_INPROGRESS);
    put8(2, 16);
    sr_ib_ep_post_end(ep);
    assert_true(stuck->sig_seq > stuck->sq_done);
    assert_int_equal(idle->sig_seq, idle->sq_done);
    assert_int_equal(sr_tl_verbs_ops.ep_check(ep), SYMRAIL_OK);  /* the watch starts */
    assert_int_equal(stuck->down, 0);
    /* Lane 1 completes its get and takes another; then a stall's time passes. */
    complete_lane(1, IBV_WC_SUCCESS);
    progress();
    assert_int_equal(c1.calls, 1);
    assert_int_equal(sr_ib_get(ep, 1, &v[1], 0, 8, 8, &c1.comp), SR_TL_INPROGRESS);
    for (int l = 0; l < NLANES; l++)
        ep->lanes[l].watch_since -= 2 * ctx->stall_ns;
    assert_int_equal(sr_tl_verbs_ops.ep_check(ep), SYMRAIL_OK);
    assert_int_equal(stuck->down, 1);
    assert_int_equal(stuck->state, SR_IB_LANE_DRAIN);
    assert_int_equal(slow->down, 0);  /* it completed since the last look */
    assert_int_equal(idle->down, 0);  /* nothing of it waits for a completion */
    /* In error, the QP flushes the get: not kept for the PSN (the peer may
     * never answer), it fails to the core. */
    complete_lane(0, IBV_WC_WR_FLUSH_ERR);
    progress();
    assert_int_equal(c0.calls, 1);
    assert_int_equal(c0.status, SYMRAIL_ERR_TRANSPORT);
    assert_null(stuck->limbo_head);
    assert_int_equal(stuck->outstanding, 0);
    /* Off: stall_ns 0 never breaks a lane. */
    ctx->stall_ns = 0;
    slow->watch_since -= 100000000000ull;
    assert_int_equal(sr_tl_verbs_ops.ep_check(ep), SYMRAIL_OK);
    assert_int_equal(slow->down, 0);
}

/* Every kind of both widths, built from fetch-add and compare-swap on the
 * 8-byte word, against a model: with another NIC changing the word before
 * each operation (so the first guess is wrong), the result is the value
 * after that change, the operation applies to its own 4 bytes only, and
 * the neighbour keeps what the other NIC wrote. */
static void test_atomics_emulated(void **state)
{
    (void)state;
    static const struct { sr_tl_amo_t kind; uint64_t operand, compare; } ops[] = {
        { SR_TL_AMO_FETCH, 0, 0 },          { SR_TL_AMO_SET, 0x1122334455667788ull, 0 },
        { SR_TL_AMO_ADD, 0xfffffffffull, 0 }, { SR_TL_AMO_SWAP, 0xa5a5a5a5a5a5a5a5ull, 0 },
        { SR_TL_AMO_CSWAP, 7, 0 },          { SR_TL_AMO_AND, 0xff00ff00ff00ff00ull, 0 },
        { SR_TL_AMO_OR, 0x0f0f0f0f0f0f0f0full, 0 }, { SR_TL_AMO_XOR, 0xffffffffffffffffull, 0 },
    };
    auto_complete = 1;
    ring_head = ring_tail = 0;
    ep->raddr[0] = FAKE_RADDR;
    uint64_t seed = 88172645463325252ull;
    for (int round = 0; round < 64; round++)
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
            for (int w32 = 0; w32 < 2; w32++)
                for (int half = 0; half < 1 + w32; half++) {
                    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                    remote[1] = seed;
                    meddle = round & 1 ? seed * 0x9e3779b97f4a7c15ull : 0;
                    uint64_t word = remote[1] ^ meddle;
                    unsigned sh = (unsigned)half * 32;
                    uint64_t mask = w32 ? 0xffffffffull : UINT64_MAX;
                    uint64_t cur = (word >> sh) & mask, v = ops[i].operand & mask;
                    uint64_t cmp = round & 2 ? cur : ops[i].compare;  /* hits, or misses */
                    switch (ops[i].kind) {
                    case SR_TL_AMO_ADD:   v = cur + v; break;
                    case SR_TL_AMO_CSWAP: v = cur == cmp ? v : cur; break;
                    case SR_TL_AMO_AND:   v = cur & v; break;
                    case SR_TL_AMO_OR:    v = cur | v; break;
                    case SR_TL_AMO_XOR:   v = cur ^ v; break;
                    case SR_TL_AMO_FETCH: v = cur; break;
                    default: break;
                    }
                    uint64_t want = (word & ~(mask << sh)) | ((v & mask) << sh);
                    tcomp_t c;
                    uint64_t result = 0xdeadbeef;
                    tcomp_init(&c);
                    sr_tl_amo_t op = (sr_tl_amo_t)(ops[i].kind | (w32 ? SR_TL_AMO_W32 : 0));
                    amo_wrs = 0;
                    assert_int_equal(sr_ib_atomic(ep, round % NLANES, op, 0, 8 + 4 * (uint64_t)half,
                                                  ops[i].operand, cmp, &result, &c.comp),
                                     SR_TL_INPROGRESS);
                    sr_ib_ep_post_end(ep);
                    for (int k = 0; k < 100 && c.calls == 0; k++)
                        progress();
                    assert_int_equal(c.calls, 1);
                    assert_int_equal(c.status, SYMRAIL_OK);
                    if (ops[i].kind != SR_TL_AMO_SET)
                        assert_int_equal(result, cur);
                    assert_int_equal(remote[1], want);
                    assert_true(amo_wrs >= 1 && amo_wrs <= 3);
                }
    auto_complete = 0;
    assert_int_equal(ctx->amo_free, ~0ull);
}

/* ---- threads ---- */

#define TTHREADS 4
#define TROUNDS  400

typedef struct {
    sr_tl_comp_t comp;
    int          calls;   /* atomic */
} acomp_t;

static int stop_progress, thread_errors;

static void acomp_cb(sr_tl_comp_t *comp, symrail_status_t status)
{
    if (status != SYMRAIL_OK)
        __atomic_fetch_add(&thread_errors, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&((acomp_t *)comp)->calls, 1, __ATOMIC_RELEASE);
}

static void acomp_wait(acomp_t *c)
{
    while (__atomic_load_n(&c->calls, __ATOMIC_ACQUIRE) == 0)
        progress();
}

#define RETRY(call) ({ symrail_status_t s_; \
    while ((s_ = (call)) == SYMRAIL_ERR_AGAIN) \
        progress(); \
    s_; })

static void *poster(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned seed = 77u + (unsigned)t;
    uint64_t src = (uint64_t)t, result[4];
    for (int r = 0; r < TROUNDS; r++) {
        uint32_t used = 0;
        acomp_t c[4];
        int n = 1 + (int)(rand_r(&seed) % 4);
        for (int i = 0; i < n; i++) {
            int lane = (int)(rand_r(&seed) % NLANES);
            used |= 1u << lane;
            memset(&c[i], 0, sizeof(c[i]));
            c[i].comp.cb = acomp_cb;
            symrail_status_t st;
            switch (rand_r(&seed) % 3) {
            case 0:   /* inline: complete at once */
                st = RETRY(sr_ib_put(ep, lane, &src, 0, 8 * (uint64_t)t, 8, &c[i].comp));
                if (st == SYMRAIL_OK)
                    c[i].calls = 1;
                break;
            case 1:   /* zero-copy from registered memory: a callback */
                st = RETRY(sr_ib_put(ep, lane, ctx->scratch + 1024 * t, 0, 0, 1024,
                                     &c[i].comp));
                break;
            default:
                st = RETRY(sr_ib_atomic(ep, lane, SR_TL_AMO_ADD, 0, 0, 1, 0, &result[i],
                                        &c[i].comp));
                break;
            }
            if (st != SYMRAIL_OK && st != SR_TL_INPROGRESS)
                __atomic_fetch_add(&thread_errors, 1, __ATOMIC_RELAXED);
        }
        for (int i = 0; i < n; i++)
            acomp_wait(&c[i]);
        acomp_t f = { .comp.cb = acomp_cb };
        symrail_status_t st = sr_ib_flush(ep, used, &f.comp);
        if (st == SYMRAIL_OK)
            f.calls = 1;
        else if (st != SR_TL_INPROGRESS)
            __atomic_fetch_add(&thread_errors, 1, __ATOMIC_RELAXED);
        acomp_wait(&f);
        for (int i = 0; i < n; i++)
            if (__atomic_load_n(&c[i].calls, __ATOMIC_ACQUIRE) != 1)
                __atomic_fetch_add(&thread_errors, 1, __ATOMIC_RELAXED);
        if (__atomic_load_n(&f.calls, __ATOMIC_ACQUIRE) != 1)
            __atomic_fetch_add(&thread_errors, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void *progressor(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_progress, __ATOMIC_ACQUIRE))
        progress();
    return NULL;
}

static void test_threads_share_lanes(void **state)
{
    (void)state;
    auto_complete = 1;
    stop_progress = thread_errors = 0;
    ring_head = ring_tail = 0;
    pthread_t th[TTHREADS], pth;
    pthread_create(&pth, NULL, progressor, NULL);
    for (int t = 0; t < TTHREADS; t++)
        pthread_create(&th[t], NULL, poster, (void *)(intptr_t)t);
    for (int t = 0; t < TTHREADS; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&stop_progress, 1, __ATOMIC_RELEASE);
    pthread_join(pth, NULL);
    auto_complete = 0;
    assert_int_equal(thread_errors, 0);
    /* Every WR retired: nothing outstanding, no CQ entry still reserved. */
    for (int l = 0; l < NLANES; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        if (lane->outstanding != 0 && lane->sig_seq < lane->sq_posted) {
            /* An unsignalled tail: a cover retires it. */
            assert_int_equal(sr_ib_cover(ep, lane), 1);
            progress();
        }
        assert_int_equal(lane->outstanding, 0);
        assert_int_equal(lane->sq_done, lane->sq_posted);
    }
    assert_int_equal(ctx->devs[0].cq_outstanding, 0);
    assert_int_equal(ctx->amo_free, ~0ull);
    assert_null(ctx->flushes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_flush_one_lane_while_another_is_busy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_replay_of_another_lane_does_not_hold_a_flush,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_waits_for_its_put_caught_in_a_failure, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_flag_after_fence_waits_for_the_replayed_put, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_limbo_waits_for_the_op_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomics_caught_in_a_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_error_goes_to_the_flush_of_its_lane, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stalled_lane_breaks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chain_covers_its_callbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chain_covers_its_gets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chain_caught_in_a_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomics_emulated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_share_lanes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
