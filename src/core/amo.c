/*
 * Atomics and put-with-signal.  An atomic is one work item on one lane; its
 * fetched value lands in the request (never in the caller's frame, which
 * may be gone when a late completion arrives).
 */
#include "config.h"
#include "core/rt.h"
#include "core/lanes.h"
#include "util/log.h"
#include "util/sys.h"

typedef struct {
    sr_ctx_t         *ctx;
    int               pe;
    sr_tl_amo_t       op;
    uint64_t          roff, operand, compare;
    uint64_t         *result_p;  /* where the transport puts the fetched word */
    sr_tl_comp_t     *comp;
    int               lane;
    int               avoid;  /* a lane its last try failed on, or -1 */
    int               own;  /* SET of a word only we write: the peer's own route */
    int               amo_ep;  /* it went through the peer's atomics endpoint */
    symrail_status_t  st;
} sr_amo_post_t;

/*
 * A non-blocking atomic in flight: counted in its context's nbi request and
 * in its peer's inflight (fence and quiet wait for it), its fetched word
 * lands here and goes to the caller's `fetch` (of `width` bytes) when it
 * completes, so before the quiet that waits for it returns.  It lives in the
 * context's slice pool.
 */
typedef struct {
    sr_op_t   op;  /* first: the transport hands it back */
    uint64_t  result;
    void     *fetch;
    int32_t   pe;
    uint8_t   width;
} sr_amo_nbi_t;

_Static_assert(sizeof(sr_amo_nbi_t) <= sizeof(sr_slice_t), "an nbi atomic fits a slice");

static int sr_amo_try(void *arg)
{
    sr_amo_post_t *a = arg;
    sr_peer_t *peer = &sr_rt.peers[a->pe];
    const sr_tl_ops_t *ops = peer->ops;
    sr_tl_ep_t *ep = peer->ep;
    sr_lanes_t *lanes = &peer->lanes;
    sr_cpeer_t *cp = &a->ctx->peers[a->pe];
    sr_lane_rr_t *rr = &cp->rr;
    int amo_ep = peer->amo_ep && !a->own;
    a->amo_ep = amo_ep;
    if (amo_ep) {
        ops = peer->amo_ops;
        ep = peer->amo_ep;
        lanes = &peer->amo_lanes;
        rr = &cp->amo_rr;
    }
    if (a->lane < 0 && !amo_ep) {
        a->lane = sr_ctx_lane(a->ctx, cp, lanes, a->avoid, 0, 0);
    } else if (a->lane < 0 || amo_ep || cp->pin != a->lane) {
        /* Lane events keep the weights current; after "no room" (a retry)
         * the transport is asked afresh, as another lane may have room.  A
         * lane that a fence pinned is waited for, not left. */
        if (a->lane >= 0 && __atomic_load_n(&lanes->n, __ATOMIC_RELAXED) > 1) {
            uint32_t w[SR_TL_MAX_LANES];
            int n = ops->ep_lanes(ep, w, SR_TL_MAX_LANES);
            if (sr_rt.mt)
                pthread_mutex_lock(&sr_rt.lane_lock);
            sr_lanes_set(lanes, w, n < 1 ? 1 : n);
            if (sr_rt.mt)
                pthread_mutex_unlock(&sr_rt.lane_lock);
        }
        a->lane = sr_lanes_pick(lanes, rr, a->lane);
    }
    a->st = a->lane < 0 ? SYMRAIL_ERR_TRANSPORT
                        : ops->atomic(ep, a->lane, a->op, SR_OFF_REGION(a->roff),
                                      SR_OFF_IN(a->roff), a->operand, a->compare, a->result_p,
                                      a->comp);
    return a->st != SYMRAIL_ERR_AGAIN;
}

/* Retried only while the transport says it posted nothing (no room, or a
 * lane being repaired): an atomic that failed in flight may still have been
 * applied, and applying it twice would be wrong.  Returns how the wait for
 * room ended (it logs its own failure); what the transport returned is in
 * a->st, for the caller to log. */
static symrail_status_t sr_amo_post(sr_amo_post_t *a)
{
    if (sr_likely(sr_amo_try(a)))
        return SYMRAIL_OK;
    a->ctx->stats.backpressure_stalls++;
    return sr_wait_pe(a->ctx, sr_amo_try, a, 0, sr_rt.env.op_timeout, "atomic", a->pe);
}

/* Where the transport puts the old value: nowhere when nobody wants it and
 * the kind allows that (tl.h).  A transport then knows no result is owed:
 * verbs completes an atomic that its QP's failure caught after it was
 * applied, instead of failing it for a result it lost. */
static inline uint64_t *sr_amo_res(sr_tl_amo_t op, int wanted, uint64_t *res)
{
    sr_tl_amo_t k = SR_TL_AMO_KIND(op);
    int optional = k == SR_TL_AMO_SET || k == SR_TL_AMO_ADD || k == SR_TL_AMO_AND ||
                   k == SR_TL_AMO_OR || k == SR_TL_AMO_XOR;
    return wanted || !optional ? res : NULL;
}

static __attribute__((noinline)) symrail_status_t sr_amo_slow(sr_ctx_t *ctx, sr_tl_amo_t op,
                                                              uint64_t roff, uint64_t operand,
                                                              uint64_t compare, int pe, int own,
                                                              uint64_t *result_p)
{
    int again = 0, avoid = -1;
post:;
    sr_req_t *req = sr_req_get(ctx);
    if (sr_unlikely(req == NULL))
        return SYMRAIL_ERR_NOMEM;
    sr_amo_post_t a = { ctx, pe, op, roff, operand, compare,
                        sr_amo_res(op, result_p != NULL, &req->result), &req->op.comp, -1,
                        avoid, own, 0, SYMRAIL_OK };
    symrail_status_t st = sr_amo_post(&a);
    if (st != SYMRAIL_OK)
        goto out;  /* the wait said so */
    st = a.st;
    if (st == SR_TL_INPROGRESS) {
        req->remaining++;
        st = sr_req_wait_pe(req, "atomic", pe);
        if (st == SYMRAIL_ERR_TIMEOUT || st == SYMRAIL_ERR_PEER_GONE ||
            st == SYMRAIL_ERR_PEER_UNRESPONSIVE)
            goto out;  /* the wait said so */
    }
    /* A QP that failed under it (a stale access on the same QPs) may have
     * applied it and lost the answer, and one whose rail went down fails it
     * outright.  A SET of a word only this PE writes (barrier flags) goes
     * again, on another lane where there is one: a second one leaves the
     * same value, and a failed QP carries nothing more. */
    int lanes_up = __atomic_load_n(&sr_rt.peers[pe].lanes.n, __ATOMIC_RELAXED) > 1;
    if ((st == SYMRAIL_ERR_RESULT_LOST || (st == SYMRAIL_ERR_TRANSPORT && lanes_up)) && own &&
        result_p == NULL && again++ < 3) {
        sr_info("atomic SET on PE %d: lane %d failed under it (%s); set again (the word is "
                "ours alone)", pe, a.lane, symrail_strerror(st));
        avoid = lanes_up ? a.lane : -1;
        sr_req_put(req);
        goto post;
    }
    /* Why the lanes failed, when the answer is that the peer is gone. */
    if (st == SYMRAIL_ERR_TRANSPORT && sr_peer_gone_soon(pe))
        st = SYMRAIL_ERR_PEER_GONE;
    if (st != SYMRAIL_OK)
        sr_error("atomic on PE %d failed: %s", pe, symrail_strerror(st));
    else if (result_p)
        *result_p = req->result;
out:
    sr_req_put(req);
    return st;
}

symrail_status_t sr_amo(sr_ctx_t *ctx, sr_tl_amo_t op, uint64_t roff, uint64_t operand,
                        uint64_t compare, int pe, uint64_t *result_p)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    ctx->stats.atomics++;
    if (sr_peer_failed(pe))
        return SYMRAIL_ERR_PEER_GONE;  /* its change of state was logged */
    /* Load/store peers answer at once, into the caller's result. */
    if (peer->amo_direct) {
        if (sr_likely(!(roff & SR_DATA_BIT)))
            return peer->ops->atomic(peer->ep, 0, op, SR_HEAP_REGION, roff, operand, compare,
                                     result_p, NULL);
        return peer->ops->atomic(peer->ep, 0, op, SR_OFF_REGION(roff), SR_OFF_IN(roff), operand,
                                 compare, result_p, NULL);
    }
    return sr_amo_slow(ctx, op, roff, operand, compare, pe, 0, result_p);
}

static inline void sr_amo_store(void *fetch, unsigned width, uint64_t value)
{
    if (width == 4)
        *(uint32_t *)fetch = (uint32_t)value;
    else
        *(uint64_t *)fetch = value;
}

static void sr_amo_nbi_done(sr_tl_comp_t *comp, symrail_status_t status)
{
    sr_amo_nbi_t *n = (sr_amo_nbi_t *)(void *)comp;
    if (sr_op_defer(&n->op, status))
        return;
    sr_ctx_t *ctx = n->op.ctx;
    ctx->peers[n->pe].inflight--;
    if (status == SYMRAIL_OK && n->fetch)
        sr_amo_store(n->fetch, n->width, n->result);
    else if (status != SYMRAIL_OK && ctx->nbi.status == SYMRAIL_OK)  /* once per quiet */
        sr_error("non-blocking atomic on PE %d failed: %s", n->pe, symrail_strerror(status));
    sr_req_complete(&ctx->nbi, status);
    sr_pool_put(&ctx->slices, n);
}

symrail_status_t sr_amo_nbi(sr_ctx_t *ctx, sr_tl_amo_t op, uint64_t roff, uint64_t operand,
                            uint64_t compare, int pe, void *fetch)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    unsigned width = SR_TL_AMO_WIDTH(op);
    uint64_t old;
    symrail_status_t st;
    ctx->stats.atomics++;
    if (sr_peer_failed(pe))
        return SYMRAIL_ERR_PEER_GONE;
    if (peer->amo_direct) {
        st = peer->ops->atomic(peer->ep, 0, op, SR_OFF_REGION(roff), SR_OFF_IN(roff), operand,
                               compare, &old, NULL);
        if (st == SYMRAIL_OK && fetch)
            sr_amo_store(fetch, width, old);
        return st;
    }
    sr_amo_nbi_t *n = sr_pool_get(&ctx->slices);
    if (sr_unlikely(n == NULL))
        return SYMRAIL_ERR_NOMEM;
    n->op.comp.cb = sr_amo_nbi_done;
    n->op.comp.flags = 0;
    n->op.ctx = ctx;
    n->op.deferred = 0;
    n->op.done_status = SYMRAIL_OK;
    n->fetch = fetch;
    n->pe = pe;
    n->width = (uint8_t)width;
    sr_amo_post_t a = { ctx, pe, op, roff, operand, compare,
                        sr_amo_res(op, fetch != NULL, &n->result), &n->op.comp, -1, -1, 0,
                        0, SYMRAIL_OK };
    st = sr_amo_post(&a);
    if (st != SYMRAIL_OK) {
        sr_pool_put(&ctx->slices, n);
        return st;  /* the wait said so */
    }
    st = a.st;
    if (st == SR_TL_INPROGRESS) {
        sr_cpeer_t *cp = &ctx->peers[pe];
        cp->inflight++;
        ctx->nbi.remaining++;
        /* A lane of the atomics endpoint is none of the peer's lanes: a
         * fence waits for it rather than trust an order. */
        sr_peer_note(ctx, cp, pe, a.lane);
        if (a.amo_ep)
            cp->fence_lane = SR_LANE_MANY;
        return SYMRAIL_OK;
    }
    if (st == SYMRAIL_OK && fetch)
        sr_amo_store(fetch, width, n->result);
    else if (st != SYMRAIL_OK)
        sr_error("non-blocking atomic on PE %d failed: %s", pe, symrail_strerror(st));
    sr_pool_put(&ctx->slices, n);
    return st;
}

symrail_status_t sr_amo_set_own(sr_ctx_t *ctx, uint64_t roff, uint64_t value, int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    ctx->stats.atomics++;
    if (sr_peer_failed(pe))
        return SYMRAIL_ERR_PEER_GONE;
    if (peer->immediate)
        return peer->ops->atomic(peer->ep, 0, SR_TL_AMO_SET, SR_OFF_REGION(roff),
                                 SR_OFF_IN(roff), value, 0, NULL, NULL);
    return sr_amo_slow(ctx, SR_TL_AMO_SET, roff, value, 0, pe, 1, NULL);
}

/*
 * Data, then a SET signal written behind it on the same ordered lane: an
 * aligned 8-byte write lands whole, and a lane that applies its requests in
 * order makes the data visible first.  Where the transport completes puts
 * locally (inline, bounce buffers), nothing waits for the network: the
 * caller's buffer is free at once, as after a blocking put, and quiet
 * completes both.  SYMRAIL_ERR_AGAIN: nothing was posted, take another path.
 */
static symrail_status_t sr_put_signal_write(sr_ctx_t *ctx, sr_peer_t *peer, int pe,
                                            const void *src, uint64_t roff, size_t len,
                                            uint64_t sig_off, uint64_t value)
{
    sr_cpeer_t *cp = &ctx->peers[pe];
    int lane = sr_ctx_lane(ctx, cp, &peer->lanes, -1, 0, 0);
    if (lane < 0)
        return SYMRAIL_ERR_AGAIN;
    sr_req_t *req = sr_req_get(ctx);
    if (req == NULL)
        return SYMRAIL_ERR_NOMEM;
    req->result = value;  /* the signal's source outlives a caller that gives up */
    symrail_status_t st = SYMRAIL_OK;
    if (len) {
        /* Held back and posted with the signal as one chain: one doorbell,
         * and on Soft-RoCE one kernel pass instead of two. */
        req->op.comp.flags = SR_TL_COMP_MORE;
        st = peer->ops->put(peer->ep, lane, src, SR_OFF_REGION(roff), SR_OFF_IN(roff), len,
                            &req->op.comp);
        req->op.comp.flags = 0;
        if (st != SYMRAIL_OK && st != SR_TL_INPROGRESS) {
            peer->ops->ep_post_end(peer->ep);
            sr_req_put(req);
            return st;
        }
        ctx->stats.puts++;
        ctx->stats.put_bytes += len;
        req->remaining += st == SR_TL_INPROGRESS;
    }
    cp->unflushed |= (uint32_t)peer->local_comp << lane;
    sr_peer_note(ctx, cp, pe, lane);
    symrail_status_t sst = peer->ops->put(peer->ep, lane, &req->result, SR_OFF_REGION(sig_off),
                                          SR_OFF_IN(sig_off), sizeof(uint64_t), &req->op.comp);
    peer->ops->ep_post_end(peer->ep);
    if (sst == SR_TL_INPROGRESS)
        req->remaining++;
    symrail_status_t wst = sr_req_wait_pe(req, "put_signal", pe);
    sr_req_put(req);
    if (sst == SYMRAIL_ERR_AGAIN && wst == SYMRAIL_OK) {
        /* No room for the signal: the data must be there before it goes. */
        wst = sr_peer_flush(ctx, pe, "put_signal");
        return wst == SYMRAIL_OK ? sr_amo(ctx, SR_TL_AMO_SET, sig_off, value, 0, pe, NULL) : wst;
    }
    if (sst != SYMRAIL_OK && sst != SR_TL_INPROGRESS && wst == SYMRAIL_OK)
        wst = sst;
    return wst;
}

/*
 * Data, then signal.  Where the data is one slice and a lane applies its
 * requests in order, both go down the same lane back to back and the caller
 * waits once: one round trip instead of two.  Otherwise every slice of the
 * data is applied at the target (on every lane) before the signal is posted.
 */
symrail_status_t sr_put_signal(sr_ctx_t *ctx, const void *src, uint64_t roff, size_t len,
                               uint64_t sig_off, sr_tl_amo_t op, uint64_t value, int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    sr_cpeer_t *cp = &ctx->peers[pe];
    symrail_status_t st;
    ctx->stats.signals++;
    if (sr_peer_failed(pe))
        return SYMRAIL_ERR_PEER_GONE;
    if (op == SR_TL_AMO_SET && peer->ordered && peer->local_comp && len <= peer->slice &&
        peer->amo_ep == NULL) {
        st = sr_put_signal_write(ctx, peer, pe, src, roff, len, sig_off, value);
        if (st != SYMRAIL_ERR_AGAIN)
            return st;
    }
    /* With atomics on another endpoint, nothing orders the two: the general path. */
    if (peer->ordered && len > 0 && len <= peer->slice && peer->amo_ep == NULL) {
        int lane = sr_ctx_lane(ctx, cp, &peer->lanes, -1, 0, 0);
        sr_req_t *req = sr_req_get(ctx);
        if (req == NULL)
            return SYMRAIL_ERR_NOMEM;
        st = lane < 0 ? SYMRAIL_ERR_AGAIN
                      : peer->ops->put(peer->ep, lane, src, SR_OFF_REGION(roff),
                                       SR_OFF_IN(roff), len, &req->op.comp);
        if (st == SYMRAIL_OK || st == SR_TL_INPROGRESS) {
            ctx->stats.puts++;
            ctx->stats.put_bytes += len;
            cp->unflushed |= (uint32_t)((st == SYMRAIL_OK) & peer->local_comp) << lane;
            sr_peer_note(ctx, cp, pe, lane);
            req->remaining += st == SR_TL_INPROGRESS;
            st = peer->ops->atomic(peer->ep, lane, op, SR_OFF_REGION(sig_off),
                                   SR_OFF_IN(sig_off), value, 0, NULL, &req->op.comp);
            int signalled = st == SYMRAIL_OK || st == SR_TL_INPROGRESS;
            req->remaining += st == SR_TL_INPROGRESS;
            ctx->stats.atomics += signalled;
            symrail_status_t wst = sr_req_wait_pe(req, "put_signal", pe);
            sr_req_put(req);
            if (wst == SYMRAIL_OK) {
                if (signalled)
                    return SYMRAIL_OK;
                /* The data went alone: it must be there before the signal. */
                st = sr_peer_flush(ctx, pe, "put_signal");
                return st == SYMRAIL_OK ? sr_amo(ctx, op, sig_off, value, 0, pe, NULL) : st;
            }
            /* A failed lane: setting the same value again is harmless, adding
             * it again is not, so only SET starts over on the general path. */
            if (op != SR_TL_AMO_SET)
                return wst;
        } else {
            sr_req_put(req);
        }
    }
    st = len ? sr_rma(ctx, 1, (void *)src, roff, len, pe, 1) : SYMRAIL_OK;
    if (st == SYMRAIL_OK)
        st = sr_peer_flush(ctx, pe, "put_signal");
    if (st != SYMRAIL_OK)
        return st;
    return sr_amo(ctx, op, sig_off, value, 0, pe, NULL);
}

/* ---- one provider for the atomics on each PE's words --------------------------------- */

static const sr_tl_attr_t *sr_attr_of(const sr_tl_ops_t *ops)
{
    for (int i = 0; i < sr_rt.ntls; i++)
        if (sr_rt.tls[i].ops == ops)
            return &sr_rt.tls[i].attr;
    return NULL;
}

/*
 * A NIC without global atomicity applies its atomics apart from the CPU's:
 * a fetch-add by a local peer through shared memory and one by a remote
 * peer through the NIC on the same word can lose one of them.  So a PE
 * whose words take NIC atomics from any peer (pairs are symmetric: we reach
 * it over such a transport iff it reaches us so) takes all of them through
 * the NIC: local peers and the PE itself use a QP to it.  Peers whose
 * atomics would still be CPU atomics (reached over TCP, whose target applies
 * them with the CPU, or without a NIC route here) are refused by name.
 */
symrail_status_t sr_amo_route_publish(void)
{
    int me = sr_rt.my_pe, n = sr_rt.n_pes, nic = -1, nbad = 0;
    char bad[256] = "";
    size_t pos = 0;
    for (int pe = 0; pe < n && nic < 0; pe++) {
        const sr_tl_attr_t *a = sr_attr_of(sr_rt.peers[pe].ops);
        if (a && a->nic_atomics)
            nic = pe;
    }
    if (nic < 0)
        return SYMRAIL_OK;
    for (int pe = 0; pe < n; pe++) {
        sr_peer_t *peer = &sr_rt.peers[pe];
        const sr_tl_attr_t *a = sr_attr_of(peer->ops);
        /* The peer learns our choice from our heap: it needs load/store access
         * to it, and a NIC endpoint to us (it has one iff we have one to it). */
        if ((a && a->nic_atomics) || (peer->base && peer->amo_cand))
            continue;
        if (nbad++ < 8 && pos < sizeof(bad))
            pos += (size_t)snprintf(bad + pos, sizeof(bad) - pos, "%s%d (over %s)",
                                    nbad > 1 ? ", " : "", pe, peer->ops->name);
    }
    if (nbad) {
        sr_error("PE %d takes NIC atomics from PE %d over %s, which are not atomic with the CPU "
                 "atomics that PE %s%s would apply to the same words; reach every PE over %s "
                 "or shared memory (SYMRAIL_TRANSPORTS), or use a device with global atomicity",
                 me, nic, sr_rt.peers[nic].ops->name, bad, nbad > 8 ? ", ..." : "",
                 sr_rt.peers[nic].ops->name);
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    __atomic_store_n(&sr_intern()->amo_nic, 1, __ATOMIC_RELEASE);
    sr_info("atomics on this PE's words go through the NIC (%s reaches PE %d and has no global "
            "atomicity), from local peers too", sr_rt.peers[nic].ops->name, nic);
    return SYMRAIL_OK;
}

void sr_amo_route_apply(const uint8_t *is_local)
{
    int me = sr_rt.my_pe, nrouted = 0, lowest_local = me;
    const char *via = NULL;
    for (int pe = 0; pe < sr_rt.n_pes; pe++) {
        sr_peer_t *peer = &sr_rt.peers[pe];
        if (is_local[pe] && pe < lowest_local)
            lowest_local = pe;
        if (peer->amo_cand == NULL || peer->base == NULL)
            continue;
        const sr_heap_intern_t *in = (const sr_heap_intern_t *)(const void *)peer->base;
        if (!__atomic_load_n(&in->amo_nic, __ATOMIC_ACQUIRE))
            continue;
        peer->amo_ops = peer->amo_cand_ops;
        peer->amo_ep = peer->amo_cand;
        peer->amo_direct = 0;
        uint32_t w[SR_TL_MAX_LANES];
        int nl = peer->amo_ops->ep_lanes(peer->amo_ep, w, SR_TL_MAX_LANES);
        sr_lanes_set(&peer->amo_lanes, w, nl < 1 ? 1 : nl);
        via = peer->amo_ops->name;
        nrouted++;
    }
    if (nrouted == 0) {
        sr_info("atomics to local PEs: CPU atomics");
        return;
    }
    sr_info("atomics to %d PE(s) of this node (this one included) go through %s, as their "
            "words take NIC atomics", nrouted,
            via);
    /* Once per node: it is the same on every PE there. */
    if (me == lowest_local)
        sr_warn("atomics between PEs of this node go through the NIC (%s loopback), slower than "
                "shared memory: the device has no global atomicity and PEs on other nodes use "
                "it", via);
}
