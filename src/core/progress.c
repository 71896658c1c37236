#include "config.h"
#include "core/ctx.h"
#include "util/log.h"
#include "util/sys.h"

#include <stddef.h>
#include <time.h>

/* How long one sleep lasts before the waiter looks at its peers again. */
#define SR_WAIT_SLICE_NS   (20u * 1000u * 1000u)
#define SR_BACKOFF_MAX_NS  (1000u * 1000u)

int sr_progress(void)
{
    int n = 0;
    for (int i = 0; i < sr_ctx.ntls; i++)
        n += sr_ctx.tls[i].ops->progress(sr_ctx.tls[i].tl);
    if (sr_unlikely(sr_ctx.retry_head != NULL))
        sr_rma_progress_retries();
    return n;
}

/* The first peer found dead, or -1. */
static int sr_dead_peer(void)
{
    for (int pe = 0; pe < sr_ctx.n_pes; pe++) {
        sr_peer_t *p = &sr_ctx.peers[pe];
        if (p->ep && p->ops->ep_check(p->ep) == SYMRAIL_ERR_PEER_GONE)
            return pe;
    }
    return -1;
}

symrail_status_t sr_wait(sr_cond_fn_t cond, void *arg, unsigned flags, uint64_t timeout_ms,
                         const char *what)
{
    uint64_t spins = sr_ctx.env.spin_count;
    uint64_t start = 0, next_check = 0, backoff = 1000;

    for (uint64_t i = 0; i < spins; i++) {
        sr_progress();
        if (cond(arg))
            return SYMRAIL_OK;
        sr_cpu_relax();
    }

    start = sr_time_ns();
    next_check = start + SR_WAIT_SLICE_NS;
    for (;;) {
        sr_progress();
        if (cond(arg))
            return SYMRAIL_OK;
        if ((flags & SR_WAIT_REMOTE) && sr_ctx.sleeper >= 0) {
            sr_tl_slot_t *s = &sr_ctx.tls[sr_ctx.sleeper];
            uint32_t token = s->ops->wait_prepare(s->tl);
            int done = cond(arg);
            if (!done) {
                sr_ctx.stats.waits_slept++;
                s->ops->wait(s->tl, token, SR_WAIT_SLICE_NS);
            }
            s->ops->wait_done(s->tl);
            if (done)
                return SYMRAIL_OK;
        } else {
            /* Progress depends on a peer that cannot wake us: back off. */
            struct timespec ts = { 0, (long)backoff };
            nanosleep(&ts, NULL);
            if (backoff < SR_BACKOFF_MAX_NS)
                backoff *= 2;
        }

        uint64_t now = sr_time_ns();
        if (now >= next_check) {
            next_check = now + SR_WAIT_SLICE_NS;
            int dead = sr_dead_peer();
            if (dead >= 0) {
                /* A peer writes everything it owes us before it exits. */
                sr_progress();
                if (cond(arg))
                    return SYMRAIL_OK;
                sr_error("%s: PE %d (pid %d) is gone", what, dead, sr_ctx.pids[dead]);
                return SYMRAIL_ERR_PEER_GONE;
            }
        }
        if (timeout_ms && now - start >= timeout_ms * 1000000ull) {
            if (flags & SR_WAIT_USER_TIMEOUT)
                return SYMRAIL_ERR_TIMEOUT;
            sr_error("%s: no progress for %llu ms (SYMRAIL_OP_TIMEOUT)", what,
                     (unsigned long long)timeout_ms);
            return SYMRAIL_ERR_TIMEOUT;
        }
    }
}

static void sr_req_done(sr_tl_comp_t *comp, symrail_status_t status)
{
    sr_req_t *req = (sr_req_t *)((char *)comp - offsetof(sr_req_t, comp));
    if (status != SYMRAIL_OK && req->status == SYMRAIL_OK)
        req->status = status;
    req->remaining--;
}

void sr_req_init(sr_req_t *req)
{
    req->comp.cb = sr_req_done;
    req->remaining = 0;
    req->status = SYMRAIL_OK;
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
