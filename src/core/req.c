/*
 * Requests: what a caller waits on.  The non-blocking operations of a
 * context share its nbi request until a quiet; every blocking call takes a
 * request of its own from its context's pool, so that a completion arriving
 * after its caller gave up never writes into a stack frame that is gone.
 */
#include "config.h"
#include "core/rt.h"
#include "core/batch.h"

#include <stddef.h>

static void sr_req_done(sr_tl_comp_t *comp, symrail_status_t status)
{
    sr_req_t *req = (sr_req_t *)(void *)comp;
    if (sr_op_defer(&req->op, status))
        return;
    sr_req_complete(req, status);
}

void sr_req_last(sr_req_t *req)
{
    if (req->orphan == SR_REQ_TASK) {
        sr_batch_task_done(req);
        return;
    }
    req->op.ctx->orphans--;
    req->orphan = 0;
    sr_req_put(req);
}

void sr_req_init(sr_ctx_t *ctx, sr_req_t *req)
{
    req->op.comp.cb = sr_req_done;
    req->op.comp.flags = 0;
    req->op.ctx = ctx;
    req->op.deferred = 0;
    req->op.done_status = SYMRAIL_OK;
    req->remaining = 0;
    req->orphan = 0;
    req->status = SYMRAIL_OK;
    req->result = 0;
}

sr_req_t *sr_req_get(sr_ctx_t *ctx)
{
    sr_req_t *req = sr_pool_get(&ctx->reqs);
    if (sr_likely(req != NULL))
        sr_req_init(ctx, req);
    return req;
}

void sr_req_put(sr_req_t *req)
{
    if (req->remaining) {
        if (!req->orphan)
            req->op.ctx->orphans++;
        req->orphan = SR_REQ_ORPHAN;
        return;
    }
    sr_pool_put(&req->op.ctx->reqs, req);
}

static int sr_req_idle(void *arg)
{
    return ((sr_req_t *)arg)->remaining == 0;
}

symrail_status_t sr_req_wait(sr_req_t *req, const char *what)
{
    return sr_req_wait_pe(req, what, SR_WAIT_PE_ANY);
}

symrail_status_t sr_req_wait_pe(sr_req_t *req, const char *what, int pe)
{
    symrail_status_t st = SYMRAIL_OK;
    if (req->remaining)
        st = sr_wait_pe(req->op.ctx, sr_req_idle, req, 0, sr_rt.env.op_timeout, what, pe);
    if (st == SYMRAIL_OK)
        st = req->status;
    req->status = SYMRAIL_OK;
    return st;
}
