/*
 * Put and get: a transfer is cut into slices, each slice goes to one lane of
 * the peer's endpoint, and its request completes when every slice has.  A
 * slice whose lane fails is posted again on another lane, up to
 * SYMRAIL_RETRY_COUNT times; a transport with no room (SYMRAIL_ERR_AGAIN)
 * gets progress until it has room again, and the slice goes to whichever
 * lane has room first.
 *
 * Completion: a put returns when its source buffer may be reused.  Where the
 * transport completes puts locally (inline, bounce buffers), the data may
 * still be on its way: the peer is marked unflushed, and fence and quiet
 * ask the transport to flush it.
 */
#include "config.h"
#include "core/rt.h"
#include "core/lanes.h"
#include "core/slice.h"
#include "core/spray_core.h"
#include "core/endpoint.h"
#include "util/fault.h"
#include "util/log.h"
#include "util/sys.h"

#include <time.h>


static inline sr_slice_t *sr_slice_alloc(sr_ctx_t *ctx)
{
    sr_slice_t *s = sr_pool_get(&ctx->slices);
    if (sr_likely(s != NULL)) {
        s->op.ctx = ctx;
        s->op.deferred = 0;
        s->op.done_status = SYMRAIL_OK;
    }
    return s;
}

static inline void sr_slice_release(sr_slice_t *s)
{
    sr_pool_put(&s->op.ctx->slices, s);
}

void sr_peer_lanes_refresh(int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    uint32_t w[SR_TL_MAX_LANES];
    int n = peer->ops->ep_lanes(peer->ep, w, SR_TL_MAX_LANES);
    /* Not between a lane report's generation check and its weight. */
    if (sr_rt.mt)
        pthread_mutex_lock(&sr_rt.lane_lock);
    sr_lanes_set(&peer->lanes, w, n < 1 ? 1 : n);
    if (sr_rt.mt)
        pthread_mutex_unlock(&sr_rt.lane_lock);
}

void sr_lane_event(void *arg, int pe, int lane, uint32_t weight, uint32_t generation)
{
    const sr_tl_slot_t *slot = arg;
    if (pe < 0 || pe >= sr_rt.n_max || lane < 0 || lane >= SR_TL_MAX_LANES)
        return;
    sr_peer_t *peer = &sr_rt.peers[pe];
    sr_lanes_t *lanes = &peer->lanes;
    uint32_t *gen = peer->lane_gen;
    if (slot != NULL && slot->ops != peer->ops) {
        if (slot->ops == peer->msg_ops && weight == 0) {
            sr_endpoint_msg_down(pe);
            return;
        }
        if (slot->ops != peer->amo_ops)
            return;  /* no endpoint of ours on that transport is in use */
        lanes = &peer->amo_lanes;  /* the endpoint that carries the peer's atomics */
        gen = peer->amo_lane_gen;
    }
    if (sr_rt.mt)
        pthread_mutex_lock(&sr_rt.lane_lock);
    /* Reports can overtake each other (a progress thread, a repair): the
     * newer generation wins. */
    int stale = gen[lane] && (int32_t)(generation - gen[lane]) <= 0;
    if (!stale) {
        gen[lane] = generation;
        sr_lanes_set_one(lanes, lane, weight);
    }
    if (sr_rt.mt)
        pthread_mutex_unlock(&sr_rt.lane_lock);
    if (stale)
        return;
    sr_debug("PE %d lane %d is %s (generation %u)", pe, lane, weight ? "up" : "down",
             generation);
    if (weight == 0 && lanes == &peer->lanes)
        sr_health_lane_error(pe, lane, "lane went down");
}

static inline symrail_status_t sr_slice_post(sr_slice_t *s)
{
    sr_peer_t *peer = &sr_rt.peers[s->pe];
    const sr_tl_ops_t *ops = peer->ops;
    if (sr_unlikely(s->lane < 0))
        return SYMRAIL_ERR_TRANSPORT;
    uint32_t region = SR_OFF_REGION(s->roff);
    uint64_t roff = SR_OFF_IN(s->roff);
    return s->is_put ? ops->put(peer->ep, s->lane, s->local, region, roff, s->len, &s->op.comp)
                     : ops->get(peer->ep, s->lane, s->local, region, roff, s->len, &s->op.comp);
}

static void sr_slice_finish(sr_slice_t *s, symrail_status_t status)
{
    if (s->inflight)
        s->op.ctx->peers[s->pe].inflight--;
    sr_req_complete(s->req, status);
    sr_slice_release(s);
}

/* A slice failed on its lane: try another one, or give up. */
static void sr_slice_failed(sr_slice_t *s, symrail_status_t status)
{
    sr_ctx_t *ctx = s->op.ctx;
    sr_cpeer_t *cp = &ctx->peers[s->pe];
    int failed_lane = s->lane;
    /* A stale key fails on every lane alike: no retry. */
    if (status != SYMRAIL_ERR_STALE && failed_lane >= 0)
        sr_health_lane_error(s->pe, failed_lane, symrail_strerror(status));
    if (status != SYMRAIL_ERR_STALE && s->tries++ < sr_rt.env.retry_count) {
        ctx->stats.retries++;
        sr_peer_lanes_refresh(s->pe);
        s->lane = sr_spray_repick(ctx, cp, failed_lane, s->len);
        if (s->lane >= 0) {
            sr_debug("%s slice of %zu bytes to PE %d failed on lane %d (%s); retry %u on lane %d",
                     s->is_put ? "put" : "get", s->len, s->pe, failed_lane,
                     symrail_strerror(status), s->tries, s->lane);
            /* Its order against the slices behind it on its first lane is
             * lost, and a fence must wait for it even if it never got in
             * flight (it failed at post). */
            sr_peer_note(ctx, cp, s->pe, failed_lane);
            cp->fence_lane = SR_LANE_MANY;
            if (!s->inflight) {
                s->inflight = 1;
                cp->inflight++;
            }
            s->op.comp.flags = 0;
            s->next = NULL;
            if (ctx->retry_tail)
                ctx->retry_tail->next = s;
            else
                ctx->retry_head = s;
            ctx->retry_tail = s;
            return;
        }
    }
    /* Say why the lanes failed when the answer is that the peer is gone.  A
     * local peer that is exiting breaks its lanes (its memory goes) a moment
     * before its process is seen gone: give it that moment. */
    if (status != SYMRAIL_ERR_STALE && sr_peer_gone_soon(s->pe))
        status = SYMRAIL_ERR_PEER_GONE;
    /* One line per failed request, not per slice; a stale key is logged by
     * the transport once, not per task of a batch. */
    if (s->req->status == SYMRAIL_OK && status != SYMRAIL_ERR_STALE)
        sr_error("%s slice of %zu bytes to PE %d failed on lane %d after %u attempts: %s",
                 s->is_put ? "put" : "get", s->len, s->pe, failed_lane, s->tries,
                 symrail_strerror(status));
    sr_slice_finish(s, status);
}

/* Testing only: the completion waits, and the slice stays outstanding. */
static __attribute__((noinline)) void sr_slice_hold(sr_slice_t *s, symrail_status_t status)
{
    sr_ctx_t *ctx = s->op.ctx;
    s->held = 1;
    s->held_until = sr_time_ns() + sr_rt.hold_ns;
    s->op.done_status = status;
    s->next = NULL;
    if (ctx->held_tail)
        ctx->held_tail->next = s;
    else
        ctx->held_head = s;
    ctx->held_tail = s;
}

static void sr_slice_done(sr_tl_comp_t *comp, symrail_status_t status)
{
    sr_slice_t *s = (sr_slice_t *)(void *)comp;
    if (sr_op_defer(&s->op, status))
        return;
    if (sr_unlikely(sr_rt.hold_lane >= 0) && s->lane == sr_rt.hold_lane && !s->held) {
        sr_slice_hold(s, status);
        return;
    }
    if (s->inflight & SR_SLICE_SPRAYED)
        sr_spray_slice_done(s, status);
    if (sr_likely(status == SYMRAIL_OK))
        sr_slice_finish(s, SYMRAIL_OK);
    else
        sr_slice_failed(s, status);
}

/* Handles the outcome of posting slice `s`; returns 0 when it must be posted
 * again later (no room). */
static inline int sr_slice_posted(sr_slice_t *s, symrail_status_t st)
{
    sr_ctx_t *ctx = s->op.ctx;
    sr_cpeer_t *cp = &ctx->peers[s->pe];
    if (sr_likely(st == SYMRAIL_OK)) {
        cp->unflushed |= (uint32_t)(s->is_put & sr_rt.peers[s->pe].local_comp) << s->lane;
        sr_peer_note(ctx, cp, s->pe, s->lane);
        sr_slice_finish(s, SYMRAIL_OK);
    } else if (st == SR_TL_INPROGRESS) {
        /* the transport calls sr_slice_done; a retried slice is counted already */
        if (!s->inflight) {
            s->inflight = 1;
            cp->inflight++;
        }
        if (cp->spray)
            sr_spray_slice_posted(cp, s);
        sr_peer_note(ctx, cp, s->pe, s->lane);
    } else if (st == SYMRAIL_ERR_AGAIN) {
        return 0;
    } else {
        sr_slice_failed(s, st);
    }
    return 1;
}

void sr_rma_progress_retries(sr_ctx_t *ctx)
{
    sr_slice_t *s = ctx->retry_head, *keep = NULL, *keep_tail = NULL;
    ctx->retry_head = ctx->retry_tail = NULL;
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
        keep_tail->next = ctx->retry_head;
        if (!ctx->retry_head)
            ctx->retry_tail = keep_tail;
        ctx->retry_head = keep;
    }
}

void sr_rma_progress_held(sr_ctx_t *ctx)
{
    uint64_t now = sr_time_ns();
    while (ctx->held_head && ctx->held_head->held_until <= now) {
        sr_slice_t *s = ctx->held_head;
        ctx->held_head = s->next;
        if (ctx->held_head == NULL)
            ctx->held_tail = NULL;
        symrail_status_t st = s->op.done_status;
        s->op.done_status = SYMRAIL_OK;
        sr_slice_done(&s->op.comp, st);
    }
}

symrail_status_t sr_rma_hold_parse(const char *spec)
{
    sr_fault_t h;
    sr_rt.hold_lane = -1;
    symrail_status_t st = sr_hook_parse(spec, "SYMRAIL_TEST_HOLD_LANE", "MS", 0, &h);
    if (st != SYMRAIL_OK || h.lane < 0)
        return st;
    sr_warn("test hook armed (SYMRAIL_TEST_HOLD_LANE): completions on lane %d are held back "
            "%llu ms", h.lane, (unsigned long long)h.after);
    sr_rt.hold_lane = h.lane;
    sr_rt.hold_ns = h.after * 1000000ull;
    return SYMRAIL_OK;
}

typedef struct {
    sr_slice_t *s;
    int         done;
} sr_post_retry_t;

static int sr_post_retry(void *arg)
{
    sr_post_retry_t *p = arg;
    sr_peer_t *peer = &sr_rt.peers[p->s->pe];
    /* Another lane may have room where this one has none, or be up where
     * this one went down: offer the slice to the next lane in turn. */
    sr_cpeer_t *cp = &p->s->op.ctx->peers[p->s->pe];
    if (__atomic_load_n(&peer->lanes.n, __ATOMIC_RELAXED) > 1 && cp->pin != p->s->lane) {  /* a pinned slice waits for its lane */
        sr_peer_lanes_refresh(p->s->pe);
        p->s->lane = sr_spray_repick(p->s->op.ctx, cp, p->s->lane, p->s->len);
    }
    p->done = sr_slice_posted(p->s, sr_slice_post(p->s));
    return p->done;
}

/* A fresh slice, its lane picked. */
static inline void sr_slice_fill(sr_slice_t *s, int is_put, char *local, uint64_t roff,
                                 size_t len, int pe, sr_req_t *req, uint32_t flags, int spray)
{
    sr_ctx_t *ctx = s->op.ctx;
    sr_cpeer_t *cp = &ctx->peers[pe];
    s->op.comp.cb = sr_slice_done;
    s->op.comp.flags = flags;
    s->req = req;
    s->local = local;
    s->roff = roff;
    s->len = len;
    s->pe = pe;
    s->is_put = (uint8_t)is_put;
    s->tries = 0;
    s->inflight = 0;
    s->held = 0;
    s->lane = sr_ctx_lane(ctx, cp, &sr_rt.peers[pe].lanes, -1, spray, len);
}

/* Posts slice `s` (already counted in its request) whose first post
 * returned `st`, waiting for room when there is none. */
static symrail_status_t sr_slice_start(sr_slice_t *s, symrail_status_t st)
{
    if (sr_likely(sr_slice_posted(s, st)))
        return SYMRAIL_OK;
    /* What the endpoint holds back (SR_TL_COMP_MORE) goes out before we
     * wait for room: its completions are what makes room. */
    sr_peer_t *peer = &sr_rt.peers[s->pe];
    peer->ops->ep_post_end(peer->ep);
    sr_post_retry_t p = { s, 0 };
    s->op.ctx->stats.backpressure_stalls++;
    st = sr_wait_pe(s->op.ctx, sr_post_retry, &p, 0, sr_rt.env.op_timeout,
                    s->is_put ? "put" : "get", s->pe);
    if (st != SYMRAIL_OK)
        sr_slice_finish(s, st);
    return st;
}

static symrail_status_t sr_rma_wait(sr_req_t *req, int is_put, int pe, symrail_status_t st)
{
    /* Slices already posted must finish before the caller's buffer is reused. */
    symrail_status_t wst = sr_req_wait_pe(req, is_put ? "put" : "get", pe);
    sr_req_put(req);
    return st == SYMRAIL_OK ? wst : st;
}

/* A one-slice transfer that did not complete when posted. */
static __attribute__((noinline)) symrail_status_t sr_rma_one_slow(sr_slice_t *s, symrail_status_t st, int blocking)
{
    sr_req_t *req = &s->op.ctx->nbi;
    if (blocking) {
        /* The transport calls back only from progress: not before this. */
        req = sr_req_get(s->op.ctx);
        if (sr_unlikely(req == NULL)) {
            if (st == SR_TL_INPROGRESS)
                sr_core_abort(1, "out of memory for a request in flight");
            sr_slice_release(s);
            return SYMRAIL_ERR_NOMEM;
        }
    }
    s->req = req;
    req->remaining++;
    st = sr_slice_start(s, st);
    return blocking ? sr_rma_wait(req, s->is_put, s->pe, st) : st;
}

/* Posts every slice of a transfer, counted in req (waiting for room where
 * there is none).  more: other transfers to pe follow, and the caller ends
 * them with ep_post_end, so the transport may gather them all. */
static symrail_status_t sr_rma_slices(sr_ctx_t *ctx, int is_put, char *local, uint64_t roff,
                                      size_t len, int pe, sr_req_t *req, int more)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    sr_slicer_t sl;
    symrail_status_t st = SYMRAIL_OK;
    sr_slicer_init(&sl, len, peer->slice);
    if (sl.count > 1)
        peer->ops->local_hint(peer->ep, local, len);
    for (size_t i = 0; i < sl.count && st == SYMRAIL_OK; i++) {
        size_t off, n;
        sr_slice_t *s = sr_slice_alloc(ctx);
        if (sr_unlikely(s == NULL)) {
            st = SYMRAIL_ERR_NOMEM;
            break;
        }
        sr_slicer_get(&sl, i, &off, &n);
        sr_slice_fill(s, is_put, local + off, roff + off, n, pe, req,
                      more || i + 1 < sl.count ? SR_TL_COMP_MORE : 0, 1);
        req->remaining++;
        st = sr_slice_start(s, sr_slice_post(s));
    }
    if (!more)
        peer->ops->ep_post_end(peer->ep);
    return st;
}

static __attribute__((noinline)) symrail_status_t sr_rma_sliced(sr_ctx_t *ctx, int is_put, char *local, uint64_t roff, size_t len, int pe,
                                      int blocking)
{
    sr_req_t *req = &ctx->nbi;
    /* After a fence that did not wait, a long transfer would have to keep
     * to one lane: wait for what the fence left pending instead, and spray. */
    if (sr_unlikely(ctx->peers[pe].pin >= 0)) {
        symrail_status_t st = sr_peer_settle(ctx, pe, is_put ? "put" : "get");
        if (st != SYMRAIL_OK)
            return st;
    }
    if (blocking) {
        req = sr_req_get(ctx);
        if (sr_unlikely(req == NULL))
            return SYMRAIL_ERR_NOMEM;
    }
    symrail_status_t st = sr_rma_slices(ctx, is_put, local, roff, len, pe, req, 0);
    return blocking ? sr_rma_wait(req, is_put, pe, st) : st;
}

symrail_status_t sr_rma_req(sr_ctx_t *ctx, int is_put, void *local, uint64_t roff, size_t len,
                            int pe, sr_req_t *req, int more)
{
    if (sr_unlikely(ctx->peers[pe].pin >= 0)) {
        symrail_status_t st = sr_peer_settle(ctx, pe, is_put ? "put" : "get");
        if (st != SYMRAIL_OK)
            return st;
    }
    return sr_rma_slices(ctx, is_put, local, roff, len, pe, req, more);
}

/* One slice: no request unless the transport takes it in flight. */
static __attribute__((noinline)) symrail_status_t sr_rma_one(sr_ctx_t *ctx, int is_put,
                                                             void *local, uint64_t roff,
                                                             size_t len, int pe, int blocking)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    sr_slice_t *s = sr_slice_alloc(ctx);
    if (sr_unlikely(s == NULL))
        return SYMRAIL_ERR_NOMEM;
    sr_slice_fill(s, is_put, local, roff, len, pe, NULL, 0, 0);
    symrail_status_t st = sr_slice_post(s);
    if (sr_likely(st == SYMRAIL_OK)) {
        sr_cpeer_t *cp = &ctx->peers[pe];
        cp->unflushed |= (uint32_t)(is_put & peer->local_comp) << s->lane;
        sr_peer_note(ctx, cp, pe, s->lane);
        sr_slice_release(s);
        return SYMRAIL_OK;
    }
    return sr_rma_one_slow(s, st, blocking);
}

symrail_status_t sr_rma_region(sr_peer_t *peer, int is_put, void *local, uint64_t roff,
                               size_t len)
{
    uint32_t region = SR_OFF_REGION(roff);
    roff = SR_OFF_IN(roff);
    return is_put ? peer->ops->put(peer->ep, 0, local, region, roff, len, NULL)
                  : peer->ops->get(peer->ep, 0, local, region, roff, len, NULL);
}

symrail_status_t sr_rma_net(sr_ctx_t *ctx, int is_put, void *local, uint64_t roff, size_t len,
                            int pe, int blocking)
{
    if (sr_unlikely(len > sr_rt.peers[pe].slice))
        return sr_rma_sliced(ctx, is_put, local, roff, len, pe, blocking);
    return sr_rma_one(ctx, is_put, local, roff, len, pe, blocking);
}

symrail_status_t sr_peer_flush(sr_ctx_t *ctx, int pe, const char *what)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    sr_cpeer_t *cp = &ctx->peers[pe];
    uint32_t lanes = cp->unflushed;
    if (!lanes)
        return SYMRAIL_OK;
    sr_req_t *req = sr_req_get(ctx);
    if (req == NULL)
        return SYMRAIL_ERR_NOMEM;
    cp->unflushed = 0;
    symrail_status_t st = peer->ops->flush(peer->ep, lanes, &req->op.comp);
    if (st == SR_TL_INPROGRESS) {
        req->remaining++;
        st = sr_req_wait_pe(req, what, pe);
    }
    sr_req_put(req);
    if (st != SYMRAIL_OK)
        cp->unflushed |= lanes;  /* the next quiet asks again */
    return st;
}

symrail_status_t sr_quiet_slow(sr_ctx_t *ctx)
{
    /* Where everything went to one peer, a wait that fails can name it. */
    symrail_status_t st = sr_req_wait_pe(&ctx->nbi, "quiet",
                                         ctx->ntouched == 1 ? ctx->touched[0] : SR_WAIT_PE_ANY);
    for (int i = 0; i < ctx->ntouched; i++) {
        int pe = ctx->touched[i];
        sr_cpeer_t *cp = &ctx->peers[pe];
        symrail_status_t fst = sr_peer_flush(ctx, pe, "quiet");
        if (st == SYMRAIL_OK)
            st = fst;
        cp->touched = 0;
        cp->fence_lane = SR_LANE_NONE;
        cp->pin = -1;
    }
    ctx->ntouched = 0;
    return st;
}

static int sr_peer_idle(void *arg)
{
    return ((sr_cpeer_t *)arg)->inflight == 0;
}

/* Everything ctx posted to pe is applied at pe; it need keep to no lane. */
symrail_status_t sr_peer_settle(sr_ctx_t *ctx, int pe, const char *what)
{
    sr_cpeer_t *cp = &ctx->peers[pe];
    symrail_status_t st = SYMRAIL_OK;
    if (cp->inflight) {
        sr_peer_t *peer = &sr_rt.peers[pe];
        peer->ops->ep_post_end(peer->ep);  /* nothing held back may wait */
        st = sr_wait_pe(ctx, sr_peer_idle, cp, 0, sr_rt.env.op_timeout, what, pe);
    }
    if (st == SYMRAIL_OK)
        st = sr_peer_flush(ctx, pe, what);
    if (st == SYMRAIL_OK)
        cp->pin = -1;
    return st;
}

/*
 * Orders what was posted before against what is posted after, per PE.  A
 * peer whose operations since the last fence all went down one ordered lane
 * needs nothing; any other waits for its own operations only.
 */
symrail_status_t sr_fence(sr_ctx_t *ctx)
{
    symrail_status_t st = SYMRAIL_OK;
    for (int i = 0; i < ctx->ntouched && st == SYMRAIL_OK; i++) {
        int pe = ctx->touched[i];
        sr_cpeer_t *cp = &ctx->peers[pe];
        /* Atomics through a second endpoint are on no lane of ours. */
        if (cp->fence_lane == SR_LANE_NONE ||
            (sr_rt.peers[pe].ordered && cp->fence_lane >= 0 && sr_rt.peers[pe].amo_ep == NULL)) {
            /* What follows keeps to that lane while any of it is pending. */
            if (cp->fence_lane >= 0 && (cp->inflight || cp->unflushed))
                cp->pin = cp->fence_lane;
            cp->fence_lane = SR_LANE_NONE;
            continue;
        }
        st = sr_peer_settle(ctx, pe, "fence");
        if (st == SYMRAIL_OK)
            cp->fence_lane = SR_LANE_NONE;
    }
    return st;
}
