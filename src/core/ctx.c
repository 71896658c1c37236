/*
 * Contexts: each owns its completion.  A context is core memory only (its
 * requests, slices, retries, per-peer tracking and counters); the
 * transports' endpoints and lanes are the runtime's and shared, with each
 * context flushing only the lanes it used.  So a context costs no file
 * descriptor or queue pair, creating one is cheap, and destroying one
 * frees all it holds (its own small struct waits for the next create).
 *
 * Threads.  Under SYMRAIL_THREAD_MULTIPLE a context that several threads
 * may use (the default one, and any created without SYMRAIL_CTX_PRIVATE or
 * SYMRAIL_CTX_SERIALIZED) is entered under its lock for a whole call,
 * waits included; a private context takes no lock.  Whichever thread runs a
 * transport's progress may find another context's completion: it pushes it
 * on that context's inbox (lock-free), and the owner handles it in its own
 * progress, so a context's state is only ever touched by the thread that
 * holds it.
 */
#include "config.h"
#include "core/rt.h"
#include "core/spray_core.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

__thread sr_ctx_t *sr_ctx_cur;

/* SYMRAIL_CTX_DEFAULT names it: a fixed address, so that the calls without
 * a context pass a constant and those with one need no test for it. */
struct symrail_ctx symrail_ctx_default;

static symrail_status_t sr_ctx_setup(sr_ctx_t *ctx, long options)
{
    int n = sr_rt.n_max;  /* connected peers too */
    memset(ctx, 0, sizeof(*ctx));
    ctx->peers = calloc((size_t)n, sizeof(*ctx->peers));
    ctx->touched = calloc((size_t)n, sizeof(*ctx->touched));
    if (ctx->peers == NULL || ctx->touched == NULL) {
        free(ctx->peers);
        free(ctx->touched);
        return SYMRAIL_ERR_NOMEM;
    }
    for (int pe = 0; pe < n; pe++) {
        ctx->peers[pe].fence_lane = SR_LANE_NONE;
        ctx->peers[pe].pin = -1;
    }
    ctx->options = options;
    uint64_t state = SR_CTX_LIVE;
    if (sr_rt.mt && !(options & (SYMRAIL_CTX_PRIVATE | SYMRAIL_CTX_SERIALIZED)))
        state |= SR_CTX_LOCKED;
    if (options & SYMRAIL_CTX_NOSTORE)
        state |= SR_CTX_NOSTORE;
    pthread_mutex_init(&ctx->lock, NULL);
    sr_req_init(ctx, &ctx->nbi);
    sr_pool_init(&ctx->reqs, sizeof(sr_req_t), 16);
    sr_pool_init(&ctx->slices, sizeof(sr_slice_t), 64);

    pthread_mutex_lock(&sr_rt.ctx_lock);
    ctx->id = sr_rt.ctx_ids++;
    ctx->next = sr_rt.ctxs;
    sr_rt.ctxs = ctx;
    pthread_mutex_unlock(&sr_rt.ctx_lock);
    /* The default context and the collectives' turn over every lane, so
     * that a single thread's transfers use every rail.  The contexts the
     * application creates each keep their one-slice operations on one lane
     * (its home, while it is up and has room; they take homes in turn), so
     * that threads with contexts of their own post to different queue pairs
     * or connections.  Long transfers go over every lane.  Order between
     * operations comes from fence alone. */
    ctx->home = ctx->id < 2 ? -1 : (int)((ctx->id - 2) % SR_TL_MAX_LANES);
    ctx->state = state;
    return SYMRAIL_OK;
}

symrail_status_t sr_ctx_new(long options, sr_ctx_t **ctx_p)
{
    /* A destroyed context's memory is kept for the next one, never given
     * back: a handle used after destroy then reads a dead context's state
     * (refused) rather than freed memory, until the memory is reused. */
    pthread_mutex_lock(&sr_rt.ctx_lock);
    sr_ctx_t *ctx = sr_rt.ctx_free;
    if (ctx && (sr_rt.ctx_free = ctx->next) == NULL)
        sr_rt.ctx_free_tail = NULL;
    pthread_mutex_unlock(&sr_rt.ctx_lock);
    if (ctx == NULL)
        ctx = malloc(sizeof(*ctx));
    if (ctx == NULL)
        return SYMRAIL_ERR_NOMEM;
    symrail_status_t st = sr_ctx_setup(ctx, options);
    if (st != SYMRAIL_OK) {
        free(ctx);  /* dead since its destroy (state 0): a stale handle can no longer be refused */
        return st;
    }
    *ctx_p = ctx;
    return SYMRAIL_OK;
}

symrail_status_t sr_ctx_new_default(void)
{
    symrail_status_t st = sr_ctx_setup(&symrail_ctx_default, 0);
    if (st == SYMRAIL_OK)
        sr_rt.dctx = &symrail_ctx_default;
    return st;
}

void sr_ctx_drain(sr_ctx_t *ctx)
{
    sr_op_t *list = __atomic_exchange_n(&ctx->inbox, NULL, __ATOMIC_ACQUIRE), *fifo = NULL;
    while (list) {  /* pushed newest first: handle them in the order found */
        sr_op_t *next = list->done_next;
        list->done_next = fifo;
        fifo = list;
        list = next;
    }
    sr_ctx_t *prev = sr_ctx_cur;
    sr_ctx_cur = ctx;
    while (fifo) {
        /* The link is read before the count is taken: from then on a thread
         * may put the node on the inbox again.  The status goes with the
         * first of the completions taken; a failure that comes in between
         * is charged to this batch or the next: only requests take several
         * completions, and their status is the first failure of all. */
        sr_op_t *next = fifo->done_next;
        uint32_t n = __atomic_exchange_n(&fifo->deferred, 0, __ATOMIC_ACQ_REL);
        symrail_status_t st = __atomic_exchange_n(&fifo->done_status, SYMRAIL_OK,
                                                  __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < n; i++)
            fifo->comp.cb(&fifo->comp, i == 0 ? st : SYMRAIL_OK);
        fifo = next;
    }
    sr_ctx_cur = prev;
}

symrail_status_t sr_ctx_quiet(sr_ctx_t *ctx)
{
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_quiet(ctx);
    sr_ctx_leave(ctx);
    return st;
}

static void sr_stats_add(sr_stats_t *to, const sr_stats_t *s)
{
    to->puts += s->puts;
    to->gets += s->gets;
    to->put_bytes += s->put_bytes;
    to->get_bytes += s->get_bytes;
    to->atomics += s->atomics;
    to->signals += s->signals;
    to->quiets += s->quiets;
    to->barriers += s->barriers;
    to->backpressure_stalls += s->backpressure_stalls;
    to->retries += s->retries;
}

/* Counters of every context, those destroyed included. */
void sr_ctx_stats_sum(sr_stats_t *sum_p)
{
    memset(sum_p, 0, sizeof(*sum_p));
    pthread_mutex_lock(&sr_rt.ctx_lock);
    sr_stats_add(sum_p, &sr_rt.retired);
    for (sr_ctx_t *c = sr_rt.ctxs; c; c = c->next)
        sr_stats_add(sum_p, &c->stats);
    pthread_mutex_unlock(&sr_rt.ctx_lock);
}

/* Frees what the context holds; its own memory goes to the free list
 * (under ctx_lock, which the caller holds), or back at finalize. */
static void sr_ctx_release(sr_ctx_t *ctx, int finalize)
{
    __atomic_store_n(&ctx->state, 0, __ATOMIC_RELAXED);
    sr_pool_fini(&ctx->reqs);
    sr_pool_fini(&ctx->slices);
    pthread_mutex_destroy(&ctx->lock);
    sr_spray_ctx_fini(ctx);
    free(ctx->peers);
    free(ctx->touched);
    ctx->peers = NULL;
    ctx->touched = NULL;
    if (ctx == &symrail_ctx_default)
        return;
    if (finalize) {
        free(ctx);
        return;
    }
    /* Reused oldest first, so that a stale handle stays refused as long as
     * it can. */
    ctx->next = NULL;
    if (sr_rt.ctx_free_tail)
        sr_rt.ctx_free_tail->next = ctx;
    else
        sr_rt.ctx_free = ctx;
    sr_rt.ctx_free_tail = ctx;
}

/* Nothing of the context is left where a transport or the core could
 * still complete into it: its non-blocking operations, the requests of
 * blocking calls that gave up, slices waiting to be posted again or held by
 * the test hook. */
static int sr_ctx_settled(void *arg)
{
    sr_ctx_t *ctx = arg;
    return ctx->nbi.remaining == 0 && ctx->orphans == 0 && ctx->retry_head == NULL &&
           ctx->held_head == NULL;
}

symrail_status_t sr_ctx_free(sr_ctx_t *ctx)
{
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_quiet(ctx);
    /* Requests whose callers gave up (timeouts) still point into the
     * pools: give their completions the usual time to come. */
    if (!sr_ctx_settled(ctx))
        (void)sr_wait(ctx, sr_ctx_settled, ctx, 0, sr_rt.env.op_timeout, "ctx_destroy");
    int settled = sr_ctx_settled(ctx);
    sr_ctx_leave(ctx);

    pthread_mutex_lock(&sr_rt.ctx_lock);
    for (sr_ctx_t **pc = &sr_rt.ctxs; *pc; pc = &(*pc)->next)
        if (*pc == ctx) {
            *pc = ctx->next;
            break;
        }
    sr_stats_add(&sr_rt.retired, &ctx->stats);
    if (settled) {
        sr_ctx_release(ctx, 0);
    } else {
        /* A transport may still complete into it: it lives until finalize,
         * when the transports are gone. */
        sr_warn("ctx_destroy: %u operations of context %u never completed; its memory is kept "
                "until finalize", ctx->nbi.remaining + ctx->orphans, ctx->id);
        __atomic_store_n(&ctx->state, 0, __ATOMIC_RELAXED);
        ctx->next = sr_rt.zombies;
        sr_rt.zombies = ctx;
    }
    pthread_mutex_unlock(&sr_rt.ctx_lock);
    return st;
}

/* After the transports are gone. */
void sr_ctxs_fini(void)
{
    sr_ctx_t *c, *next;
    for (c = sr_rt.ctxs; c; c = next) {
        next = c->next;
        sr_ctx_release(c, 1);
    }
    for (c = sr_rt.zombies; c; c = next) {
        next = c->next;
        sr_ctx_release(c, 1);
    }
    for (c = sr_rt.ctx_free; c; c = next) {
        next = c->next;
        free(c);
    }
    sr_rt.ctxs = sr_rt.zombies = sr_rt.ctx_free = sr_rt.ctx_free_tail = NULL;
    sr_rt.dctx = sr_rt.cctx = NULL;
    sr_rt.ctx_ids = 0;
    memset(&sr_rt.retired, 0, sizeof(sr_rt.retired));
}
