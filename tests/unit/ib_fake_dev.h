/*
 * The fake verbs device of test_ib_fake: the provider's post_send and
 * poll_cq (which ibv_post_send and ibv_poll_cq reach through the context's
 * ops) record work requests and hand back the completions a test chooses,
 * and ibv_modify_qp is defined here; then a context with NLANES lanes to
 * one peer on it (setup, teardown), and the progress and put helpers the
 * tests share.  For one test program only: everything here is static.
 */
#ifndef SR_TEST_IB_FAKE_DEV_H
#define SR_TEST_IB_FAKE_DEV_H

#define NLANES 3
#define MAXWR  8
#define NWR    1024

/* ---- the fake device ---- */

typedef struct {
    uint64_t wr_id;
    int      qp;        /* lane */
    int      sig;
    int      done;
    uint64_t raddr;     /* a write's target and first 8 bytes (the reader's view) */
    uint64_t val;
} fake_wr_t;

static struct ibv_context fctx;
static struct ibv_cq fcq;
static struct ibv_qp fqp[NLANES];
static struct ibv_mr fmr;
static fake_wr_t wrs[NWR];
static int nwrs;
static struct ibv_wc ready[NWR];
static int nready, ready_pos;
/* Threads test: every signalled WR completes at once, in post order. */
static int auto_complete;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_wc ring[NWR];
static unsigned ring_head, ring_tail;

/* Atomics test: the fake NIC applies atomic WRs to `remote` (at
 * FAKE_RADDR), and before the first WR of each operation another NIC may
 * change the word (`meddle` is XORed into it once). */
#define FAKE_RADDR 0x10000
static uint64_t remote[4];
static uint64_t meddle;
static int amo_wrs;

static void fake_amo(struct ibv_send_wr *wr)
{
    uint64_t *w = &remote[(wr->wr.atomic.remote_addr - FAKE_RADDR) / 8];
    assert_int_equal(wr->wr.atomic.remote_addr % 8, 0);
    *w ^= meddle;
    meddle = 0;
    uint64_t old = *w;
    if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
        *w += wr->wr.atomic.compare_add;
    else if (old == wr->wr.atomic.compare_add)
        *w = wr->wr.atomic.swap;
    *(uint64_t *)(uintptr_t)wr->sg_list[0].addr = old;
    amo_wrs++;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    (void)bad;
    if (auto_complete) {
        pthread_mutex_lock(&fake_lock);
        for (; wr; wr = wr->next) {
            if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
                fake_amo(wr);
            if (wr->send_flags & IBV_SEND_SIGNALED) {
                assert_true(ring_tail - ring_head < NWR);
                ring[ring_tail++ % NWR] = (struct ibv_wc){ .wr_id = wr->wr_id,
                                                           .status = IBV_WC_SUCCESS };
            }
        }
        pthread_mutex_unlock(&fake_lock);
        return 0;
    }
    for (; wr; wr = wr->next) {
        assert_true(nwrs < NWR);
        wrs[nwrs] = (fake_wr_t){ wr->wr_id, (int)(qp - fqp),
                                 (wr->send_flags & IBV_SEND_SIGNALED) != 0, 0, 0, 0 };
        if (wr->opcode == IBV_WR_RDMA_WRITE && wr->num_sge == 1 && wr->sg_list[0].length >= 8) {
            wrs[nwrs].raddr = wr->wr.rdma.remote_addr;
            memcpy(&wrs[nwrs].val, (void *)(uintptr_t)wr->sg_list[0].addr, 8);
        }
        nwrs++;
    }
    return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    (void)cq;
    int k = 0;
    if (auto_complete) {
        pthread_mutex_lock(&fake_lock);
        while (k < n && ring_head != ring_tail)
            wc[k++] = ring[ring_head++ % NWR];
        pthread_mutex_unlock(&fake_lock);
        return k;
    }
    while (k < n && ready_pos < nready)
        wc[k++] = ready[ready_pos++];
    return k;
}

/* The library's would need a real device: the QP just goes to error. */
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    (void)qp, (void)attr, (void)mask;
    return 0;
}

/* Completes lane l's WRs: on success the signalled ones (each covers those
 * before it); on error every one, as a QP in error does. */
static void complete_lane(int l, enum ibv_wc_status st)
{
    for (int i = 0; i < nwrs; i++) {
        if (wrs[i].qp != l || wrs[i].done)
            continue;
        if (st == IBV_WC_SUCCESS && !wrs[i].sig)
            continue;
        for (int j = 0; j <= i; j++)
            if (wrs[j].qp == l)
                wrs[j].done = 1;
        ready[nready++] = (struct ibv_wc){ .wr_id = wrs[i].wr_id, .status = st };
    }
}

/* ---- a context and an endpoint on it ---- */

static sr_tl_ctx_t *ctx;
static sr_tl_ep_t *ep;
static sr_tl_ep_t *eps[1];

typedef struct {
    sr_tl_comp_t comp;
    int          calls;
    symrail_status_t status;
} tcomp_t;

static void tcomp_cb(sr_tl_comp_t *comp, symrail_status_t status)
{
    tcomp_t *t = (tcomp_t *)comp;
    t->calls++;
    t->status = status;
}

static int setup(void **state)
{
    (void)state;
    memset(wrs, 0, sizeof(wrs));
    nwrs = nready = ready_pos = 0;
    fctx.ops.post_send = fake_post_send;
    fctx.ops.poll_cq = fake_poll_cq;
    fcq.context = &fctx;
    ctx = calloc(1, sizeof(*ctx));
    ctx->mt = 1;
    pthread_mutex_init(&ctx->rlock, NULL);
    pthread_mutex_init(&ctx->flock, NULL);
    pthread_mutex_init(&ctx->plock, NULL);
    pthread_mutex_init(&ctx->nlock, NULL);
    ctx->params.n_pes = 1;
    ctx->max_wr = MAXWR;
    ctx->max_inline = 64;
    ctx->fault_lane = -1;
    ctx->ndevs = 1;
    ctx->devs[0].cq = &fcq;
    ctx->devs[0].cq_size = 64;
    ctx->devs[0].scratch_mr = &fmr;
    snprintf(ctx->devs[0].name, sizeof(ctx->devs[0].name), "fake0");
    ctx->nrails = 1;
    ctx->qpp = NLANES;
    ctx->rails[0].dev = &ctx->devs[0];
    ctx->rails[0].port = 1;
    ctx->rails[0].weight = 1;
    ctx->amo_free = ctx->bounce_free = ~0ull;
    ctx->amo_res = calloc(SR_IB_AMO_SLOTS, sizeof(uint64_t));
    ctx->scratch_len = 65536;
    ctx->scratch = calloc(1, ctx->scratch_len);  /* zero-copy sources */
    sr_pool_init(&ctx->ops, sizeof(sr_ib_op_t), 64);
    ctx->lanes = calloc(NLANES, sizeof(*ctx->lanes));
    ep = calloc(1, sizeof(*ep));
    ep->ctx = ctx;
    ep->nlanes = NLANES;
    ep->lanes = ctx->lanes;
    ep->raddr[0] = 0x10000;
    for (int l = 0; l < NLANES; l++) {
        fqp[l].context = &fctx;
        fqp[l].qp_num = 100 + (uint32_t)l;
        pthread_mutex_init(&ep->lanes[l].lock, NULL);
        ep->lanes[l].qp = &fqp[l];
        ep->lanes[l].rail = &ctx->rails[0];
        ep->lanes[l].max_wr = ctx->max_wr;
        ep->lanes[l].sig_every = 4;
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
    sr_ib_done_run(&done);
}

static void put8(int lane, uint64_t roff)
{
    uint64_t v = roff;
    assert_int_equal(sr_ib_put(ep, lane, &v, 0, roff, 8, NULL), SYMRAIL_OK);  /* inline */
}

static void tcomp_init(tcomp_t *t)
{
    memset(t, 0, sizeof(*t));
    t->comp.cb = tcomp_cb;
}

#endif
