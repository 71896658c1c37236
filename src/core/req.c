/*
 * Requests: what a caller waits on.  The non-blocking operations share
 * sr_ctx.nbi until a quiet; every blocking call takes a request of its own
 * from a pool, so that a completion arriving after its caller gave up never
 * writes into a stack frame that is gone.
 */
#include "config.h"
#include "core/ctx.h"

#include <stddef.h>

static void sr_req_done(sr_tl_comp_t *comp, symrail_status_t status)
{
    sr_req_complete((sr_req_t *)(void *)comp, status);
}

void sr_req_init(sr_req_t *req)
{
    req->comp.cb = sr_req_done;
    req->comp.flags = 0;
    req->remaining = 0;
    req->orphan = 0;
    req->status = SYMRAIL_OK;
    req->result = 0;
}

sr_req_t *sr_req_get(void)
{
    sr_req_t *req = sr_pool_get(&sr_ctx.reqs);
    if (sr_likely(req != NULL))
        sr_req_init(req);
    return req;
}

void sr_req_put(sr_req_t *req)
{
    if (req->remaining) {
        req->orphan = 1;
        return;
    }
    sr_pool_put(&sr_ctx.reqs, req);
}

static int sr_req_idle(void *arg)
{
    return ((sr_req_t *)arg)->remaining == 0;
}

symrail_status_t sr_req_wait(sr_req_t *req, const char *what)
{
    symrail_status_t st = SYMRAIL_OK;
    if (req->remaining)
        st = sr_wait(sr_req_idle, req, 0, sr_ctx.env.op_timeout, what);
    if (st == SYMRAIL_OK)
        st = req->status;
    req->status = SYMRAIL_OK;
    return st;
}

void sr_reqs_fini(void)
{
    /* Orphans still counting completions die with the pool: their
     * transports are gone by now. */
    sr_pool_fini(&sr_ctx.reqs);
}
