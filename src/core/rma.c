/*
 * Put and get: a transfer is cut into slices, each slice goes to one lane of
 * the peer's endpoint, and its request completes when every slice has.  A
 * slice whose lane fails is posted again on another lane, up to
 * SYMRAIL_RETRY_COUNT times; a transport with no room (SYMRAIL_ERR_AGAIN)
 * gets progress until it has room again.
 */
#include "config.h"
#include "core/ctx.h"
#include "core/lanes.h"
#include "core/slice.h"
#include "util/log.h"
#include "util/sys.h"


static inline sr_slice_t *sr_slice_alloc(void)
{
    return sr_pool_get(&sr_ctx.slices);
}

static inline void sr_slice_release(sr_slice_t *s)
{
    sr_pool_put(&sr_ctx.slices, s);
}

void sr_slices_fini(void)
{
    sr_pool_fini(&sr_ctx.slices);
    sr_ctx.retry_head = sr_ctx.retry_tail = NULL;
}

void sr_peer_lanes_refresh(int pe)
{
    sr_peer_t *peer = &sr_ctx.peers[pe];
    uint32_t w[SR_TL_MAX_LANES];
    int n = peer->ops->ep_lanes(peer->ep, w, SR_TL_MAX_LANES);
    sr_lanes_set(&peer->lanes, w, n < 1 ? 1 : n);
}

static inline symrail_status_t sr_slice_post(sr_slice_t *s)
{
    sr_peer_t *peer = &sr_ctx.peers[s->pe];
    const sr_tl_ops_t *ops = peer->ops;
    if (sr_unlikely(s->lane < 0))
        return SYMRAIL_ERR_TRANSPORT;
    return s->is_put ? ops->put(peer->ep, s->lane, s->local, SR_HEAP_REGION, s->roff, s->len,
                                &s->comp)
                     : ops->get(peer->ep, s->lane, s->local, SR_HEAP_REGION, s->roff, s->len,
                                &s->comp);
}

static void sr_slice_finish(sr_slice_t *s, symrail_status_t status)
{
    sr_req_t *req = s->req;
    if (status != SYMRAIL_OK && req->status == SYMRAIL_OK)
        req->status = status;
    req->remaining--;
    sr_slice_release(s);
}

/* A slice failed on its lane: try another one, or give up. */
static void sr_slice_failed(sr_slice_t *s, symrail_status_t status)
{
    sr_peer_t *peer = &sr_ctx.peers[s->pe];
    int failed_lane = s->lane;
    sr_ctx.stats.retries++;
    if (s->tries++ < sr_ctx.env.retry_count) {
        sr_peer_lanes_refresh(s->pe);
        s->lane = sr_lanes_pick(&peer->lanes, failed_lane);
        if (s->lane >= 0) {
            sr_debug("%s slice of %zu bytes to PE %d failed on lane %d (%s); retry %u on lane %d",
                     s->is_put ? "put" : "get", s->len, s->pe, failed_lane,
                     symrail_strerror(status), s->tries, s->lane);
            s->next = NULL;
            if (sr_ctx.retry_tail)
                sr_ctx.retry_tail->next = s;
            else
                sr_ctx.retry_head = s;
            sr_ctx.retry_tail = s;
            return;
        }
    }
    /* Say why the lanes failed when the answer is that the peer is gone. */
    if (peer->ops->ep_check(peer->ep) == SYMRAIL_ERR_PEER_GONE)
        status = SYMRAIL_ERR_PEER_GONE;
    if (s->req->status == SYMRAIL_OK)  /* one line per failed request, not per slice */
        sr_error("%s slice of %zu bytes to PE %d failed on lane %d after %u attempts: %s",
                 s->is_put ? "put" : "get", s->len, s->pe, failed_lane, s->tries,
                 symrail_strerror(status));
    sr_slice_finish(s, status);
}

static void sr_slice_done(sr_tl_comp_t *comp, symrail_status_t status)
{
    sr_slice_t *s = (sr_slice_t *)(void *)comp;
    if (sr_likely(status == SYMRAIL_OK))
        sr_slice_finish(s, SYMRAIL_OK);
    else
        sr_slice_failed(s, status);
}

/* Handles the outcome of posting slice `s`; returns 0 when it must be posted
 * again later (no room). */
static int sr_slice_posted(sr_slice_t *s, symrail_status_t st)
{
    if (sr_likely(st == SYMRAIL_OK)) {
        sr_slice_finish(s, SYMRAIL_OK);
    } else if (st == SR_TL_INPROGRESS) {
        /* the transport calls sr_slice_done */
    } else if (st == SYMRAIL_ERR_AGAIN) {
        return 0;
    } else {
        sr_slice_failed(s, st);
    }
    return 1;
}

void sr_rma_progress_retries(void)
{
    sr_slice_t *s = sr_ctx.retry_head, *keep = NULL, *keep_tail = NULL;
    sr_ctx.retry_head = sr_ctx.retry_tail = NULL;
    while (s) {
        sr_slice_t *next = s->next;
        if (!sr_slice_posted(s, sr_slice_post(s))) {
            s->next = NULL;
            if (keep_tail)
                keep_tail->next = s;
            else
                keep = s;
            keep_tail = s;
        }
        s = next;
    }
    /* Slices that failed again while we were here were queued anew. */
    if (keep) {
        keep_tail->next = sr_ctx.retry_head;
        if (!sr_ctx.retry_head)
            sr_ctx.retry_tail = keep_tail;
        sr_ctx.retry_head = keep;
    }
}

typedef struct {
    sr_slice_t *s;
    int         done;
} sr_post_retry_t;

static int sr_post_retry(void *arg)
{
    sr_post_retry_t *p = arg;
    /* Another lane may have room where this one has none, or be up where
     * this one went down. */
    if (sr_ctx.peers[p->s->pe].lanes.n > 1) {
        sr_peer_lanes_refresh(p->s->pe);
        p->s->lane = sr_lanes_pick(&sr_ctx.peers[p->s->pe].lanes, -1);
    }
    p->done = sr_slice_posted(p->s, sr_slice_post(p->s));
    return p->done;
}

symrail_status_t sr_rma(int is_put, void *local, uint64_t roff, size_t len, int pe, int blocking)
{
    sr_peer_t *peer = &sr_ctx.peers[pe];
    sr_req_t breq, *req = blocking ? &breq : &sr_ctx.nbi;
    sr_slicer_t sl;
    symrail_status_t st = SYMRAIL_OK;

    if (blocking)
        sr_req_init(&breq);
    if (is_put) {
        sr_ctx.stats.puts++;
        sr_ctx.stats.put_bytes += len;
    } else {
        sr_ctx.stats.gets++;
        sr_ctx.stats.get_bytes += len;
    }
    sr_slicer_init(&sl, len, peer->slice);
    for (size_t i = 0; i < sl.count; i++) {
        size_t off, n;
        sr_slice_t *s = sr_slice_alloc();
        if (sr_unlikely(s == NULL)) {
            st = SYMRAIL_ERR_NOMEM;
            break;
        }
        sr_slicer_get(&sl, i, &off, &n);
        s->comp.cb = sr_slice_done;
        s->req = req;
        s->local = (char *)local + off;
        s->roff = roff + off;
        s->len = n;
        s->pe = pe;
        s->is_put = (uint8_t)is_put;
        s->tries = 0;
        s->lane = sr_lanes_pick(&peer->lanes, -1);
        req->remaining++;
        if (sr_unlikely(!sr_slice_posted(s, sr_slice_post(s)))) {
            sr_post_retry_t p = { s, 0 };
            sr_ctx.stats.backpressure_stalls++;
            st = sr_wait(sr_post_retry, &p, 0, sr_ctx.env.op_timeout, is_put ? "put" : "get");
            if (st != SYMRAIL_OK) {
                sr_slice_finish(s, st);
                break;
            }
        }
    }
    if (blocking) {
        /* Slices already posted must finish before the caller's buffer is reused. */
        symrail_status_t wst = sr_req_wait(&breq, is_put ? "put" : "get");
        if (st == SYMRAIL_OK)
            st = wst;
    }
    return st;
}

typedef struct {
    int               pe;
    sr_tl_amo_t       op;
    uint64_t          roff, operand, compare;
    uint64_t         *result_p;
    sr_req_t         *req;
    symrail_status_t  st;
} sr_amo_post_t;

static int sr_amo_try(void *arg)
{
    sr_amo_post_t *a = arg;
    sr_peer_t *peer = &sr_ctx.peers[a->pe];
    if (peer->lanes.n > 1)
        sr_peer_lanes_refresh(a->pe);
    int lane = sr_lanes_pick(&peer->lanes, -1);
    a->st = lane < 0 ? SYMRAIL_ERR_TRANSPORT
                     : peer->ops->atomic(peer->ep, lane, a->op, SR_HEAP_REGION, a->roff,
                                         a->operand, a->compare, a->result_p, &a->req->comp);
    return a->st != SYMRAIL_ERR_AGAIN;
}

symrail_status_t sr_amo(sr_tl_amo_t op, uint64_t roff, uint64_t operand, uint64_t compare,
                        int pe, uint64_t *result_p)
{
    sr_req_t req;
    sr_amo_post_t a = { pe, op, roff, operand, compare, result_p, &req, SYMRAIL_OK };
    symrail_status_t st = SYMRAIL_OK;
    sr_req_init(&req);
    sr_ctx.stats.atomics++;
    /* Retried only while the transport says it posted nothing (no room, or
     * a lane being repaired): an atomic that failed in flight may still have
     * been applied, and applying it twice would be wrong. */
    if (!sr_amo_try(&a)) {
        sr_ctx.stats.backpressure_stalls++;
        st = sr_wait(sr_amo_try, &a, 0, sr_ctx.env.op_timeout, "atomic");
    }
    if (st == SYMRAIL_OK)
        st = a.st;
    if (st == SR_TL_INPROGRESS) {
        req.remaining++;
        st = sr_req_wait(&req, "atomic");
    }
    if (st != SYMRAIL_OK)
        sr_error("atomic on PE %d failed: %s", pe, symrail_strerror(st));
    return st;
}

/*
 * Data, then signal.  Where the data is one slice and a lane applies its
 * requests in order, both go down the same lane back to back and the caller
 * waits once: one round trip instead of two.  Otherwise every slice of the
 * data completes (on every lane) before the signal is posted.
 */
symrail_status_t sr_put_signal(const void *src, uint64_t roff, size_t len, uint64_t sig_off,
                               sr_tl_amo_t op, uint64_t value, int pe)
{
    sr_peer_t *peer = &sr_ctx.peers[pe];
    symrail_status_t st;
    sr_ctx.stats.signals++;
    if (peer->ordered && len > 0 && len <= peer->slice) {
        int lane = sr_lanes_pick(&peer->lanes, -1);
        sr_req_t req;
        sr_req_init(&req);
        st = lane < 0 ? SYMRAIL_ERR_AGAIN
                      : peer->ops->put(peer->ep, lane, src, SR_HEAP_REGION, roff, len, &req.comp);
        if (st == SYMRAIL_OK || st == SR_TL_INPROGRESS) {
            sr_ctx.stats.puts++;
            sr_ctx.stats.put_bytes += len;
            req.remaining += st == SR_TL_INPROGRESS;
            st = peer->ops->atomic(peer->ep, lane, op, SR_HEAP_REGION, sig_off, value, 0, NULL,
                                   &req.comp);
            int signalled = st == SYMRAIL_OK || st == SR_TL_INPROGRESS;
            req.remaining += st == SR_TL_INPROGRESS;
            sr_ctx.stats.atomics += signalled;
            symrail_status_t wst = sr_req_wait(&req, "put_signal");
            if (wst == SYMRAIL_OK)
                return signalled ? SYMRAIL_OK : sr_amo(op, sig_off, value, 0, pe, NULL);
            /* A failed lane: setting the same value again is harmless, adding
             * it again is not, so only SET starts over on the general path. */
            if (op != SR_TL_AMO_SET)
                return wst;
        }
    }
    st = len ? sr_rma(1, (void *)src, roff, len, pe, 1) : SYMRAIL_OK;
    if (st != SYMRAIL_OK)
        return st;
    return sr_amo(op, sig_off, value, 0, pe, NULL);
}

symrail_status_t sr_quiet(void)
{
    sr_ctx.stats.quiets++;
    return sr_req_wait(&sr_ctx.nbi, "quiet");
}
