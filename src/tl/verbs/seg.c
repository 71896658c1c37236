/*
 * RDMA verbs transport. Segments (tl.h, "Regions"): registration on every
 * device at any time after init, the key blob that peers unpack, and the
 * peers' segments unpacked on endpoints.  seg.h has the post path's side.
 *
 * Deregistration is the invalidation: once ibv_dereg_mr returns, the device
 * refuses the rkeys.  A transfer through one completes with
 * IBV_WC_REM_ACCESS_ERR, reported as SYMRAIL_ERR_STALE; it breaks its QP
 * at both ends, which is repaired like any other (repair.c) without
 * counting against the lane, the work it flushed at either end going out
 * again (limbo.c, "Work caught in a failure"), and later
 * posts through that segment fail at once.  A device key
 * has few bits that change from one registration to the next (8 on common
 * NICs and on Soft-RoCE), so a registration whose rkey equals one recently
 * withdrawn on that device is made again while the first is held: an old
 * descriptor does not name new memory.
 */
#include "config.h"
#include "tl/verbs/ib.h"

#define SR_IB_DEAD_KEYS  256         /* withdrawn rkeys remembered per device */
#define SR_IB_FRESH_TRIES 4
#define SR_IB_MKEY_MAGIC 0x73726d6bu  /* "srmk" */
#define SR_IB_SEG_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
                          IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

typedef struct {
    void          *addr;
    size_t         len;
    uint32_t       generation;
    int            used;
    struct ibv_mr *mr[SR_IB_MAX_RAILS];  /* by device */
} sr_ib_mseg_t;

typedef struct sr_ib_segs {
    /* mem_reg, mem_dereg, mkey_pack, and the endpoints' chunks of rsegs */
    pthread_mutex_t lock;
    sr_ib_mseg_t   *v;       /* by id - SR_TL_REGION_SEG0 */
    size_t          cap;
    uint32_t        dead[SR_IB_MAX_RAILS][SR_IB_DEAD_KEYS];
    unsigned        ndead[SR_IB_MAX_RAILS];
} sr_ib_segs_t;

/* The key blob: then uint32_t rkey[nrails], in the rail order of the
 * owner's address blob. */
typedef struct {
    uint32_t magic;
    uint32_t nrails;
    uint32_t generation;
    uint32_t pad;
    uint64_t addr;
    uint64_t len;
} sr_ib_mkey_t;

symrail_status_t sr_ib_segs_init(sr_tl_ctx_t *ctx)
{
    ctx->segs = calloc(1, sizeof(*ctx->segs));
    if (ctx->segs == NULL)
        return SYMRAIL_ERR_NOMEM;
    pthread_mutex_init(&ctx->segs->lock, NULL);
    return SYMRAIL_OK;
}

static sr_ib_mseg_t *sr_ib_mseg(sr_tl_ctx_t *ctx, uint32_t region)
{
    sr_ib_segs_t *S = ctx->segs;
    if (region < SR_TL_REGION_SEG0 || region - SR_TL_REGION_SEG0 >= S->cap ||
        !S->v[region - SR_TL_REGION_SEG0].used)
        return NULL;
    return &S->v[region - SR_TL_REGION_SEG0];
}

/* ---- the address table of the post path (seg.h) --------------------------------- */

/* Publishes the table with `add` (non-NULL) or without the entry whose
 * first lkey is `drop_lkey`, and frees the old one once no post reads it. */
static symrail_status_t sr_ib_lsegs_publish(sr_tl_ctx_t *ctx, const sr_ib_lseg_t *add,
                                            uint32_t drop_lkey)
{
    sr_ib_lsegs_t *old = ctx->lsegs, *nw = NULL;
    size_t n = old ? old->n : 0, m = 0;
    size_t cap = add ? n + 1 : n;
    if (cap > 0) {
        nw = malloc(sizeof(*nw) + cap * sizeof(nw->v[0]));
        if (nw == NULL)
            return SYMRAIL_ERR_NOMEM;
        int placed = add == NULL;
        for (size_t i = 0; i < n; i++) {
            if (!placed && add->lo < old->v[i].lo) {
                nw->v[m++] = *add;
                placed = 1;
            }
            if (add || old->v[i].lkey[0] != drop_lkey)
                nw->v[m++] = old->v[i];
        }
        if (!placed)
            nw->v[m++] = *add;
        for (size_t i = 0; i < m; i++)
            nw->v[i].max_hi = i && nw->v[i - 1].max_hi > nw->v[i].hi ? nw->v[i - 1].max_hi
                                                                     : nw->v[i].hi;
        nw->n = m;
        if (m == 0) {
            free(nw);
            nw = NULL;
        }
    }
    SR_IB_STORE(ctx->lsegs, nw);
    /* Posts read the table under their lane's lock only (seg.h). */
    if (ctx->mt) {
        size_t nlanes = (size_t)ctx->params.n_pes * ctx->nrails * ctx->qpp;
        for (size_t l = 0; l < nlanes; l++) {
            pthread_mutex_lock(&ctx->lanes[l].lock);
            pthread_mutex_unlock(&ctx->lanes[l].lock);
        }
        for (int pe = ctx->params.n_pes; pe < ctx->neps; pe++) {
            sr_tl_ep_t *ep = SR_IB_LOAD(ctx->eps[pe]);
            for (int l = 0; ep && l < ep->nlanes; l++) {
                pthread_mutex_lock(&ep->lanes[l].lock);
                pthread_mutex_unlock(&ep->lanes[l].lock);
            }
        }
    }
    free(old);
    return SYMRAIL_OK;
}

/* ---- registration ---------------------------------------------------------------- */

static int sr_ib_key_dead(const sr_ib_segs_t *S, int d, uint32_t rkey)
{
    unsigned n = S->ndead[d] < SR_IB_DEAD_KEYS ? S->ndead[d] : SR_IB_DEAD_KEYS;
    for (unsigned i = 0; i < n; i++)
        if (S->dead[d][i] == rkey)
            return 1;
    return 0;
}

static struct ibv_mr *sr_ib_reg_fresh(sr_tl_ctx_t *ctx, int d, void *addr, size_t len)
{
    sr_ib_dev_t *dev = &ctx->devs[d];
    struct ibv_mr *held[SR_IB_FRESH_TRIES], *mr;
    int nheld = 0;
    for (;;) {
        mr = ibv_reg_mr(dev->pd, addr, len, SR_IB_SEG_ACCESS);
        if (mr == NULL || !sr_ib_key_dead(ctx->segs, d, mr->rkey))
            break;
        if (nheld == SR_IB_FRESH_TRIES) {
            sr_warn("verbs: %s keeps giving rkey %#x, withdrawn lately: using it", dev->name,
                    mr->rkey);
            break;
        }
        /* Held while registering again, so that the device picks another key. */
        held[nheld++] = mr;
    }
    int err = errno;
    while (nheld > 0)
        ibv_dereg_mr(held[--nheld]);
    errno = err;
    return mr;
}

/* Pinning is most of what ibv_reg_mr costs: a large segment is registered
 * on every device at once, each in its own thread, so that it costs about
 * what one registration does. */
#define SR_IB_REG_PARALLEL (64u << 20)

typedef struct {
    sr_tl_ctx_t   *ctx;
    sr_ib_mseg_t  *m;
    int            d, err, threaded;
    pthread_t      thread;
} sr_ib_reg_job_t;

static void *sr_ib_reg_job(void *arg)
{
    sr_ib_reg_job_t *j = arg;
    j->m->mr[j->d] = sr_ib_reg_fresh(j->ctx, j->d, j->m->addr, j->m->len);
    j->err = errno;
    return NULL;
}

/* m->mr[d] for every device; -1 for the first that failed (errno set). */
static int sr_ib_reg_all(sr_tl_ctx_t *ctx, sr_ib_mseg_t *m)
{
    sr_ib_reg_job_t jobs[SR_IB_MAX_RAILS];
    int par = m->len >= SR_IB_REG_PARALLEL && ctx->ndevs > 1;
    for (int d = 0; d < ctx->ndevs; d++) {
        jobs[d] = (sr_ib_reg_job_t){ .ctx = ctx, .m = m, .d = d };
        jobs[d].threaded = d > 0 && par &&
                           pthread_create(&jobs[d].thread, NULL, sr_ib_reg_job, &jobs[d]) == 0;
        if (!jobs[d].threaded)
            sr_ib_reg_job(&jobs[d]);
    }
    int bad = -1;
    for (int d = ctx->ndevs - 1; d >= 0; d--) {
        if (jobs[d].threaded)
            pthread_join(jobs[d].thread, NULL);
        if (m->mr[d] == NULL) {
            bad = d;
            errno = jobs[d].err;
        }
    }
    return bad;
}

static void sr_ib_mseg_drop(sr_tl_ctx_t *ctx, sr_ib_mseg_t *m)
{
    sr_ib_segs_t *S = ctx->segs;
    for (int d = 0; d < ctx->ndevs; d++) {
        if (m->mr[d] == NULL)
            continue;
        S->dead[d][S->ndead[d]++ % SR_IB_DEAD_KEYS] = m->mr[d]->rkey;
        int rc = ibv_dereg_mr(m->mr[d]);
        if (rc != 0)
            sr_error("verbs: ibv_dereg_mr of %zu bytes at %p on %s failed: %s", m->len, m->addr,
                     ctx->devs[d].name, strerror(rc));
    }
    memset(m, 0, sizeof(*m));
}

symrail_status_t sr_ib_seg_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem)
{
    sr_ib_segs_t *S = ctx->segs;
    size_t i = region - SR_TL_REGION_SEG0;
    symrail_status_t st = SYMRAIL_OK;
    if (mem->addr == NULL || mem->len == 0 || (uintptr_t)mem->addr + mem->len < (uintptr_t)mem->addr)
        return SYMRAIL_ERR_INVALID;
    pthread_mutex_lock(&S->lock);
    if (i >= S->cap) {
        size_t cap = S->cap ? S->cap : 16;
        while (cap <= i)
            cap *= 2;
        sr_ib_mseg_t *v = realloc(S->v, cap * sizeof(*v));
        if (v == NULL) {
            st = SYMRAIL_ERR_NOMEM;
            goto out;
        }
        memset(v + S->cap, 0, (cap - S->cap) * sizeof(*v));
        S->v = v;
        S->cap = cap;
    }
    sr_ib_mseg_t *m = &S->v[i];
    if (m->used) {
        sr_error("verbs: segment %u is registered already", region);
        st = SYMRAIL_ERR_STATE;
        goto out;
    }
    m->addr = mem->addr;
    m->len = mem->len;
    m->generation = mem->generation;
    sr_ib_lseg_t e = { .lo = (uintptr_t)mem->addr, .hi = (uintptr_t)mem->addr + mem->len };
    int bad = sr_ib_reg_all(ctx, m);
    if (bad >= 0) {
        sr_error("verbs: registering segment %u (%zu bytes at %p) on %s failed: %m (pinned "
                 "memory limit: ulimit -l)", region, mem->len, mem->addr, ctx->devs[bad].name);
        st = SYMRAIL_ERR_NOMEM;
        goto err_drop;
    }
    for (int d = 0; d < ctx->ndevs; d++)
        e.lkey[d] = m->mr[d]->lkey;
    st = sr_ib_lsegs_publish(ctx, &e, 0);
    if (st != SYMRAIL_OK)
        goto err_drop;
    m->used = 1;
    sr_debug("verbs: segment %u: %zu bytes at %p registered on %d device(s), generation %u",
             region, mem->len, mem->addr, ctx->ndevs, mem->generation);
    goto out;
err_drop:
    sr_ib_mseg_drop(ctx, m);
out:
    pthread_mutex_unlock(&S->lock);
    return st;
}

symrail_status_t sr_ib_mem_dereg(sr_tl_ctx_t *ctx, uint32_t region)
{
    sr_ib_segs_t *S = ctx->segs;
    pthread_mutex_lock(&S->lock);
    sr_ib_mseg_t *m = sr_ib_mseg(ctx, region);
    symrail_status_t st = m ? sr_ib_lsegs_publish(ctx, NULL, m->mr[0]->lkey) : SYMRAIL_ERR_INVALID;
    if (st == SYMRAIL_OK)
        sr_ib_mseg_drop(ctx, m);
    pthread_mutex_unlock(&S->lock);
    return st;
}

symrail_status_t sr_ib_mkey_pack(sr_tl_ctx_t *ctx, uint32_t region, void *buf, size_t *len_p)
{
    size_t need = sizeof(sr_ib_mkey_t) + (size_t)ctx->nrails * sizeof(uint32_t);
    symrail_status_t st = SYMRAIL_OK;
    pthread_mutex_lock(&ctx->segs->lock);
    sr_ib_mseg_t *m = sr_ib_mseg(ctx, region);
    if (m == NULL) {
        st = SYMRAIL_ERR_INVALID;
    } else if (buf == NULL || *len_p < need) {
        st = buf == NULL ? SYMRAIL_OK : SYMRAIL_ERR_TRUNCATED;
    } else {
        sr_ib_mkey_t k = { .magic = SR_IB_MKEY_MAGIC, .nrails = (uint32_t)ctx->nrails,
                           .generation = m->generation, .addr = (uintptr_t)m->addr,
                           .len = m->len };
        memcpy(buf, &k, sizeof(k));
        for (int r = 0; r < ctx->nrails; r++) {
            uint32_t rkey = m->mr[ctx->rails[r].dev - ctx->devs]->rkey;
            memcpy((char *)buf + sizeof(k) + (size_t)r * sizeof(rkey), &rkey, sizeof(rkey));
        }
    }
    pthread_mutex_unlock(&ctx->segs->lock);
    if (st == SYMRAIL_OK)
        *len_p = need;
    return st;
}

/* ---- peers' segments ------------------------------------------------------------- */

/* The entry for rkey number rk on ep, made if need be. */
static sr_ib_rseg_t *sr_ib_rseg_make(sr_tl_ep_t *ep, uint32_t rk)
{
    sr_ib_segs_t *S = ep->ctx->segs;
    sr_ib_rseg_t *rs = NULL;
    pthread_mutex_lock(&S->lock);
    sr_ib_rseg_t **dir = ep->rsegs;
    if (dir == NULL) {
        dir = calloc(SR_IB_RSEG_MAX / SR_IB_RSEG_CHUNK, sizeof(*dir));
        if (dir == NULL)
            goto out;
        SR_IB_STORE(ep->rsegs, dir);
    }
    sr_ib_rseg_t *chunk = dir[rk / SR_IB_RSEG_CHUNK];
    if (chunk == NULL) {
        chunk = calloc(SR_IB_RSEG_CHUNK, sizeof(*chunk));
        if (chunk == NULL)
            goto out;
        SR_IB_STORE(dir[rk / SR_IB_RSEG_CHUNK], chunk);
    }
    rs = &chunk[rk % SR_IB_RSEG_CHUNK];
out:
    pthread_mutex_unlock(&S->lock);
    return rs;
}

symrail_status_t sr_ib_rkey_unpack(sr_tl_ep_t *ep, uint32_t rk, const void *buf, size_t len)
{
    sr_ib_mkey_t k;
    if (rk < SR_TL_REGION_SEG0 || rk >= SR_IB_RSEG_MAX || len < sizeof(k))
        return SYMRAIL_ERR_INVALID;
    memcpy(&k, buf, sizeof(k));
    if (k.magic != SR_IB_MKEY_MAGIC || k.nrails < 1 || k.nrails > SR_IB_MAX_RAILS ||
        len != sizeof(k) + k.nrails * sizeof(uint32_t)) {
        sr_error("verbs: the key of PE %d's segment is not one of this transport's (%zu bytes)",
                 ep->pe, len);
        return SYMRAIL_ERR_INVALID;
    }
    sr_ib_rseg_t *rs = sr_ib_rseg_make(ep, rk);
    if (rs == NULL)
        return SYMRAIL_ERR_NOMEM;
    rs->raddr = k.addr;
    for (int r = 0; r < ep->ctx->nrails; r++) {
        int pr = ep->peer_rail[r];
        rs->rkey[r] = 0;  /* a rail without a counterpart at the peer carries nothing to it */
        if (pr >= 0 && (uint32_t)pr < k.nrails)
            memcpy(&rs->rkey[r], (const char *)buf + sizeof(k) + (size_t)pr * 4, 4);
    }
    SR_IB_STORE(rs->state, SR_IB_RSEG_LIVE);
    return SYMRAIL_OK;
}

void sr_ib_rkey_release(sr_tl_ep_t *ep, uint32_t rk)
{
    sr_ib_rseg_t *rs = sr_ib_rseg(ep, rk);
    if (rs)
        SR_IB_STORE(rs->state, SR_IB_RSEG_FREE);
}

symrail_status_t sr_ib_fail_status(sr_tl_ep_t *ep, sr_ib_op_t *op, enum ibv_wc_status wst)
{
    if (SR_IB_LOAD(ep->gone))
        return SYMRAIL_ERR_PEER_GONE;  /* a connected peer that left (peer.c) */
    sr_ib_rseg_t *rs = op->region >= SR_TL_REGION_SEG0 ? sr_ib_rseg(ep, op->region) : NULL;
    if (rs && wst == IBV_WC_REM_ACCESS_ERR) {
        int live = SR_IB_RSEG_LIVE;
        if (__atomic_compare_exchange_n(&rs->state, &live, SR_IB_RSEG_DEAD, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            sr_warn("verbs: PE %d refused the rkey of its segment (import %u): it was "
                    "deregistered; transfers through it fail (SYMRAIL_ERR_STALE)", ep->pe,
                    op->region);
        if (!op->lane->refused && op->lane->state == SR_IB_LANE_DRAIN)
            op->lane->refused = 1;  /* see sr_ib_lane_weight */
        return SYMRAIL_ERR_STALE;
    }
    if (rs && SR_IB_LOAD(rs->state) == SR_IB_RSEG_DEAD)
        return SYMRAIL_ERR_STALE;  /* behind the refused one on its QP */
    return wst == IBV_WC_RETRY_EXC_ERR ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_ERR_TRANSPORT;
}

void sr_ib_rsegs_free(sr_tl_ep_t *ep)
{
    if (ep == NULL || ep->rsegs == NULL)
        return;
    for (size_t c = 0; c < SR_IB_RSEG_MAX / SR_IB_RSEG_CHUNK; c++)
        free(ep->rsegs[c]);
    free(ep->rsegs);
    ep->rsegs = NULL;
}

/* Before the devices close: their protection domains go with them. */
void sr_ib_segs_fini(sr_tl_ctx_t *ctx)
{
    sr_ib_segs_t *S = ctx->segs;
    if (S == NULL)
        return;
    for (size_t i = 0; i < S->cap; i++)
        if (S->v[i].used)
            sr_ib_mseg_drop(ctx, &S->v[i]);
    free(ctx->lsegs);
    ctx->lsegs = NULL;
    free(S->v);
    pthread_mutex_destroy(&S->lock);
    free(S);
    ctx->segs = NULL;
}
