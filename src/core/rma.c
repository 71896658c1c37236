#include "config.h"
#include "core/ctx.h"
#include "core/slice.h"
#include "util/log.h"
#include "util/sys.h"

typedef struct {
    int               is_put;
    sr_peer_t        *peer;
    char             *local;
    uint64_t          roff;
    size_t            len;
    sr_req_t         *req;
    symrail_status_t  st;
} sr_post_t;

static inline symrail_status_t sr_post_one(sr_post_t *p)
{
    const sr_tl_ops_t *ops = p->peer->ops;
    return p->is_put ? ops->put(p->peer->ep, p->local, SR_HEAP_REGION, p->roff, p->len,
                                &p->req->comp)
                     : ops->get(p->peer->ep, p->local, SR_HEAP_REGION, p->roff, p->len,
                                &p->req->comp);
}

/* Retries a slice the transport had no room for; the wait loop progresses. */
static int sr_post_retry(void *arg)
{
    sr_post_t *p = arg;
    p->st = sr_post_one(p);
    return p->st != SYMRAIL_ERR_AGAIN;
}

symrail_status_t sr_rma(int is_put, void *local, uint64_t roff, size_t len, int pe, int blocking)
{
    sr_peer_t *peer = &sr_ctx.peers[pe];
    sr_req_t breq, *req = blocking ? &breq : &sr_ctx.nbi;
    sr_slicer_t s;
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
    sr_slicer_init(&s, len, peer->slice);
    for (size_t i = 0; i < s.count; i++) {
        size_t off, n;
        sr_slicer_get(&s, i, &off, &n);
        sr_post_t p = { is_put, peer, (char *)local + off, roff + off, n, req, SYMRAIL_OK };
        st = sr_post_one(&p);
        if (sr_unlikely(st == SYMRAIL_ERR_AGAIN)) {
            sr_ctx.stats.backpressure_stalls++;
            st = sr_wait(sr_post_retry, &p, 0, sr_ctx.env.op_timeout,
                         is_put ? "put" : "get");
            if (st == SYMRAIL_OK)
                st = p.st;
        }
        if (st == SR_TL_INPROGRESS) {
            req->remaining++;
            st = SYMRAIL_OK;
        }
        if (st != SYMRAIL_OK) {
            sr_error("%s of %zu bytes to PE %d failed at slice %zu: %s", is_put ? "put" : "get",
                     len, pe, i, symrail_strerror(st));
            break;
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

symrail_status_t sr_amo(sr_tl_amo_t op, uint64_t roff, uint64_t operand, uint64_t compare,
                        int pe, uint64_t *result_p)
{
    sr_peer_t *peer = &sr_ctx.peers[pe];
    sr_req_t req;
    sr_req_init(&req);
    sr_ctx.stats.atomics++;
    symrail_status_t st = peer->ops->atomic(peer->ep, op, SR_HEAP_REGION, roff, operand, compare,
                                            result_p, &req.comp);
    if (st == SR_TL_INPROGRESS) {
        req.remaining++;
        st = sr_req_wait(&req, "atomic");
    }
    if (st != SYMRAIL_OK)
        sr_error("atomic on PE %d failed: %s", pe, symrail_strerror(st));
    return st;
}

symrail_status_t sr_quiet(void)
{
    sr_ctx.stats.quiets++;
    return sr_req_wait(&sr_ctx.nbi, "quiet");
}
