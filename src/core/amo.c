/*
 * Atomics and put-with-signal.  An atomic is one work item on one lane; its
 * fetched value lands in the request (never in the caller's frame, which
 * may be gone when a late completion arrives).
 */
#include "config.h"
#include "core/ctx.h"
#include "core/lanes.h"
#include "util/log.h"
#include "util/sys.h"

typedef struct {
    int               pe;
    sr_tl_amo_t       op;
    uint64_t          roff, operand, compare;
    sr_req_t         *req;
    int               lane;
    symrail_status_t  st;
} sr_amo_post_t;

static int sr_amo_try(void *arg)
{
    sr_amo_post_t *a = arg;
    sr_peer_t *peer = &sr_ctx.peers[a->pe];
    if (peer->lanes.n > 1)
        sr_peer_lanes_refresh(a->pe);
    a->lane = sr_lanes_pick(&peer->lanes, a->lane);
    a->st = a->lane < 0 ? SYMRAIL_ERR_TRANSPORT
                        : peer->ops->atomic(peer->ep, a->lane, a->op, SR_HEAP_REGION, a->roff,
                                            a->operand, a->compare, &a->req->result,
                                            &a->req->comp);
    return a->st != SYMRAIL_ERR_AGAIN;
}

static __attribute__((noinline)) symrail_status_t sr_amo_slow(sr_tl_amo_t op, uint64_t roff,
                                                              uint64_t operand, uint64_t compare,
                                                              int pe, uint64_t *result_p)
{
    sr_req_t *req = sr_req_get();
    if (sr_unlikely(req == NULL))
        return SYMRAIL_ERR_NOMEM;
    sr_amo_post_t a = { pe, op, roff, operand, compare, req, -1, SYMRAIL_OK };
    symrail_status_t st = SYMRAIL_OK;
    /* Retried only while the transport says it posted nothing (no room, or
     * a lane being repaired): an atomic that failed in flight may still have
     * been applied, and applying it twice would be wrong.  The wait logs its
     * own failure; what the transport returns is logged here. */
    if (!sr_amo_try(&a)) {
        sr_ctx.stats.backpressure_stalls++;
        st = sr_wait(sr_amo_try, &a, 0, sr_ctx.env.op_timeout, "atomic");
        if (st != SYMRAIL_OK)
            goto out;
    }
    st = a.st;
    if (st == SR_TL_INPROGRESS) {
        req->remaining++;
        st = sr_req_wait(req, "atomic");
        if (st == SYMRAIL_ERR_TIMEOUT || st == SYMRAIL_ERR_PEER_GONE ||
            st == SYMRAIL_ERR_PEER_UNRESPONSIVE)
            goto out;  /* the wait said so */
    }
    if (st != SYMRAIL_OK)
        sr_error("atomic on PE %d failed: %s", pe, symrail_strerror(st));
    else if (result_p)
        *result_p = req->result;
out:
    sr_req_put(req);
    return st;
}

symrail_status_t sr_amo(sr_tl_amo_t op, uint64_t roff, uint64_t operand, uint64_t compare,
                        int pe, uint64_t *result_p)
{
    sr_peer_t *peer = &sr_ctx.peers[pe];
    sr_ctx.stats.atomics++;
    /* Load/store peers answer at once, into the caller's result. */
    if (peer->immediate)
        return peer->ops->atomic(peer->ep, 0, op, SR_HEAP_REGION, roff, operand, compare,
                                 result_p, NULL);
    return sr_amo_slow(op, roff, operand, compare, pe, result_p);
}

/*
 * Data, then signal.  Where the data is one slice and a lane applies its
 * requests in order, both go down the same lane back to back and the caller
 * waits once: one round trip instead of two.  Otherwise every slice of the
 * data is applied at the target (on every lane) before the signal is posted.
 */
symrail_status_t sr_put_signal(const void *src, uint64_t roff, size_t len, uint64_t sig_off,
                               sr_tl_amo_t op, uint64_t value, int pe)
{
    sr_peer_t *peer = &sr_ctx.peers[pe];
    symrail_status_t st;
    sr_ctx.stats.signals++;
    if (peer->ordered && len > 0 && len <= peer->slice) {
        int lane = sr_lanes_pick(&peer->lanes, -1);
        sr_req_t *req = sr_req_get();
        if (req == NULL)
            return SYMRAIL_ERR_NOMEM;
        st = lane < 0 ? SYMRAIL_ERR_AGAIN
                      : peer->ops->put(peer->ep, lane, src, SR_HEAP_REGION, roff, len, &req->comp);
        if (st == SYMRAIL_OK || st == SR_TL_INPROGRESS) {
            sr_ctx.stats.puts++;
            sr_ctx.stats.put_bytes += len;
            peer->unflushed |= (st == SYMRAIL_OK) & peer->local_comp;
            sr_peer_note(peer, pe, lane);
            req->remaining += st == SR_TL_INPROGRESS;
            st = peer->ops->atomic(peer->ep, lane, op, SR_HEAP_REGION, sig_off, value, 0, NULL,
                                   &req->comp);
            int signalled = st == SYMRAIL_OK || st == SR_TL_INPROGRESS;
            req->remaining += st == SR_TL_INPROGRESS;
            sr_ctx.stats.atomics += signalled;
            symrail_status_t wst = sr_req_wait(req, "put_signal");
            sr_req_put(req);
            if (wst == SYMRAIL_OK) {
                if (signalled)
                    return SYMRAIL_OK;
                /* The data went alone: it must be there before the signal. */
                st = sr_peer_flush(pe, "put_signal");
                return st == SYMRAIL_OK ? sr_amo(op, sig_off, value, 0, pe, NULL) : st;
            }
            /* A failed lane: setting the same value again is harmless, adding
             * it again is not, so only SET starts over on the general path. */
            if (op != SR_TL_AMO_SET)
                return wst;
        } else {
            sr_req_put(req);
        }
    }
    st = len ? sr_rma(1, (void *)src, roff, len, pe, 1) : SYMRAIL_OK;
    if (st == SYMRAIL_OK)
        st = sr_peer_flush(pe, "put_signal");
    if (st != SYMRAIL_OK)
        return st;
    return sr_amo(op, sig_off, value, 0, pe, NULL);
}
