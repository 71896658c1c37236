/* Batches (batch.h). */
#include "config.h"
#include "core/batch.h"
#include "util/copy.h"
#include "util/log.h"
#include "util/sys.h"

#include <stdlib.h>
#include <string.h>

#define SR_BATCH_MAGIC UINT64_C(0x7372424154434801)  /* "srBATCH" */

struct symrail_batch *sr_batch_active;
static pthread_mutex_t sr_batch_lock = PTHREAD_MUTEX_INITIALIZER;

static void sr_batch_link(struct symrail_batch *b)
{
    pthread_mutex_lock(&sr_batch_lock);
    b->prev_active = NULL;
    b->next_active = sr_batch_active;
    if (sr_batch_active)
        sr_batch_active->prev_active = b;
    __atomic_store_n(&sr_batch_active, b, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sr_batch_lock);
}

static void sr_batch_unlink(struct symrail_batch *b)
{
    pthread_mutex_lock(&sr_batch_lock);
    if (b->prev_active)
        b->prev_active->next_active = b->next_active;
    else
        __atomic_store_n(&sr_batch_active, b->next_active, __ATOMIC_RELEASE);
    if (b->next_active)
        b->next_active->prev_active = b->prev_active;
    b->next_active = b->prev_active = NULL;
    pthread_mutex_unlock(&sr_batch_lock);
}

symrail_status_t sr_batch_new(size_t capacity, struct symrail_batch **batch_p)
{
    struct symrail_batch *b = calloc(1, sizeof(*b));
    if (b == NULL)
        goto err_nomem;
    b->tasks = malloc(capacity * sizeof(*b->tasks));
    if (b->tasks == NULL)
        goto err_tasks;
    symrail_status_t st = sr_ctx_new(SYMRAIL_CTX_SERIALIZED, &b->ctx);
    if (st != SYMRAIL_OK)
        goto err_ctx;
    /* Tasks are mostly one slice each: they spray over every lane, rather
     * than keep to one lane as a context's one-slice operations do. */
    b->ctx->home = -1;
    b->ctx->batch = b;
    b->magic = SR_BATCH_MAGIC;
    b->cap = capacity;
    b->notify_pe = -1;
    *batch_p = b;
    return SYMRAIL_OK;

err_ctx:
    free(b->tasks);
    free(b);
    return st;
err_tasks:
    free(b);
err_nomem:
    sr_error("symrail_batch_create: no memory for a batch of %zu tasks", capacity);
    return SYMRAIL_ERR_NOMEM;
}

void sr_batch_push(struct symrail_batch *b, int op, char *local, struct symrail_rseg *rs,
                   uint64_t roff, uint64_t len)
{
    sr_task_t *t = &b->tasks[b->n++];
    t->local = local;
    t->rs = rs;
    t->roff = roff;
    t->len = len;
    t->op = (uint8_t)op;
    t->state = SYMRAIL_TASK_PENDING;
}

void sr_batch_hold_rseg(struct symrail_rseg *rs, size_t ntasks)
{
    __atomic_fetch_add(&rs->busy, (uint32_t)ntasks, __ATOMIC_RELAXED);
}

/* In the pump (one thread at a time); batch_status reads the task's state
 * and the bytes done from any thread meanwhile. */
static void sr_task_end(struct symrail_batch *b, sr_task_t *t, symrail_status_t st)
{
    t->req.status = st;
    __atomic_store_n(&t->state, st == SYMRAIL_OK ? SYMRAIL_TASK_DONE : SYMRAIL_TASK_FAILED,
                     __ATOMIC_RELEASE);
    if (st == SYMRAIL_OK)
        __atomic_store_n(&b->done_bytes, b->done_bytes + t->len, __ATOMIC_RELAXED);
    if (st != SYMRAIL_OK && b->first_err == SYMRAIL_OK)
        b->first_err = st;
    b->ended++;
}

void sr_batch_task_done(sr_req_t *req)
{
    sr_task_t *t = (sr_task_t *)(void *)req;
    struct symrail_batch *b = req->op.ctx->batch;
    b->inflight -= t->len;
    sr_task_end(b, t, req->status);
}

/* A task to or from this PE's own segment: a copy, if the segment is there. */
static symrail_status_t sr_task_self(sr_task_t *t)
{
    return sr_region_copy_self(t->rs->id, t->rs->generation, t->roff, t->local, t->len,
                               t->op == SYMRAIL_WRITE);
}

/* A copy posted in a run: the transport may leave what it owes after each
 * copy (shm: the peer's doorbell) to the run's ep_post_end.  Only its flags
 * are read: an immediate transport never calls back. */
static sr_tl_comp_t sr_task_more = { NULL, SR_TL_COMP_MORE };

/* A task to a load/store peer is a copy, as a put to it is (sr_rma): no
 * request and no slice, which cost as much as the copy's own setup.  0 if
 * it failed: it then goes the general way, which tries it again and, as for
 * any slice, retries, logs and says why it failed. */
static inline int sr_task_copy(struct symrail_batch *b, sr_task_t *t, int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    /* The next task's first lines on both sides come in while this one
     * copies (paged 16 KiB blocks over shm, medians of 13 runs on a busy
     * host timed by CPU time: 0.91 -> 0.93x of one contiguous task; two
     * tasks ahead did no better). */
    if (b->next < b->n && b->tasks[b->next].rs->pe == pe) {
        const sr_task_t *nt = &b->tasks[b->next];
        int put = nt->op == SYMRAIL_WRITE;
        sr_prefetch(nt->local, !put);
        peer->ops->prefetch(peer->ep, nt->rs->idx, nt->roff, put);
    }
    symrail_status_t st =
        t->op == SYMRAIL_WRITE
            ? peer->ops->put(peer->ep, 0, t->local, t->rs->idx, t->roff, t->len, &sr_task_more)
            : peer->ops->get(peer->ep, 0, t->local, t->rs->idx, t->roff, t->len, &sr_task_more);
    if (sr_unlikely(st != SYMRAIL_OK))
        return 0;
    sr_peer_note(b->ctx, &b->ctx->peers[pe], pe, 0);
    sr_task_end(b, t, SYMRAIL_OK);
    return 1;
}

/* Posts task t; its slices may be held back by the transport until the
 * caller's ep_post_end for that PE. */
static void sr_task_post(struct symrail_batch *b, sr_task_t *t)
{
    int pe = t->rs->pe;
    if (pe == sr_rt.my_pe) {
        sr_task_end(b, t, sr_task_self(t));
        return;
    }
    if (sr_rt.peers[pe].immediate && sr_likely(sr_task_copy(b, t, pe)))
        return;
    sr_req_init(b->ctx, &t->req);
    t->req.orphan = SR_REQ_TASK;
    /* One count for the posting itself: slices that end at once must not
     * end the task before its last slice is posted. */
    t->req.remaining = 1;
    b->inflight += t->len;
    symrail_status_t st = sr_rma_req(b->ctx, t->op == SYMRAIL_WRITE, t->local,
                                     SR_OFF_MAKE(t->rs->idx, t->roff), t->len, t->rs->pe,
                                     &t->req, 1);
    sr_req_complete(&t->req, st);
}

static void sr_batch_unhold_locals(struct symrail_batch *b)
{
    for (size_t i = 0; i < b->nheld; i++)
        sr_region_unhold(b->held[i]);
    b->nheld = 0;
}

/* Local segments in use may not be deregistered while the batch runs: those
 * that overlap the span of its local buffers are held (one pass over the
 * tasks without a lock, one over the segments under it). */
static symrail_status_t sr_batch_hold_locals(struct symrail_batch *b)
{
    if (b->n == 0)
        return SYMRAIL_OK;
    char *lo = b->tasks[0].local, *hi = lo + b->tasks[0].len;
    for (size_t i = 1; i < b->n; i++) {
        const sr_task_t *t = &b->tasks[i];
        if (t->local < lo)
            lo = t->local;
        if (t->local + t->len > hi)
            hi = t->local + t->len;
    }
    symrail_status_t st = sr_region_hold_span(lo, hi, &b->held, &b->held_cap, &b->nheld);
    if (st != SYMRAIL_OK)
        sr_error("symrail_batch_submit: out of memory for the batch's local segments");
    return st;
}

/* Consecutive tasks to one PE are posted as one run: the transport may
 * gather their slices (one send for many frames over TCP, one chain of work
 * requests over verbs) until ep_post_end, called when the PE changes and
 * at the end. */
static void sr_batch_post_more(struct symrail_batch *b)
{
    uint64_t window = sr_rt.env.batch_window;
    int held = -1;
    sr_ctx_enter(b->ctx);
    while (b->next < b->n && (b->inflight < window || b->inflight == 0) && !b->canceled) {
        sr_task_t *t = &b->tasks[b->next++];
        int pe = t->rs->pe;
        if (pe != held && pe != sr_rt.my_pe) {
            if (held >= 0)
                sr_rt.peers[held].ops->ep_post_end(sr_rt.peers[held].ep);
            held = pe;
        }
        sr_task_post(b, t);
    }
    if (held >= 0)
        sr_rt.peers[held].ops->ep_post_end(sr_rt.peers[held].ep);
    sr_ctx_leave(b->ctx);
}

/* Every task ended: complete them at their targets, then notify.  Once it
 * returns 1 the batch is another thread's to free: DONE is its last access,
 * and the caller's claim on `pumping` stays (sr_batch_clear lets it go), so
 * that no pump enters between the unlink and DONE. */
static int sr_batch_end(struct symrail_batch *b, symrail_status_t *err_p)
{
    if (b->state == SR_BATCH_RUNNING) {
        symrail_status_t st = sr_ctx_quiet(b->ctx);
        if (st != SYMRAIL_OK && b->first_err == SYMRAIL_OK)
            b->first_err = st;
        __atomic_store_n(&b->state, SR_BATCH_ENDING, __ATOMIC_RELAXED);
    }
    if (b->notify_pe >= 0) {
        symrail_status_t st = sr_notify_send_msg(b->notify_pe, b->notify_tag, b->first_err,
                                                 b->notify_payload, b->notify_len, 0);
        if (st == SYMRAIL_ERR_AGAIN) {
            /* No slot at the receiver yet: the next pump tries again, for
             * as long as any send may wait. */
            uint64_t now = sr_time_ns();
            if (b->end_since == 0)
                b->end_since = now;
            if (sr_rt.env.op_timeout == 0 ||
                now - b->end_since < sr_rt.env.op_timeout * 1000000ull)
                return 0;
            sr_error("the notification of a batch to PE %d (tag %u) found no free slot there "
                     "for %llu ms (SYMRAIL_OP_TIMEOUT): not sent", b->notify_pe, b->notify_tag,
                     (unsigned long long)sr_rt.env.op_timeout);
            st = SYMRAIL_ERR_TIMEOUT;
        }
        if (st != SYMRAIL_OK && b->first_err == SYMRAIL_OK)
            b->first_err = st;
        b->notify_pe = -1;
    }
    sr_batch_unhold_locals(b);
    sr_batch_unlink(b);
    *err_p = b->first_err;
    /* Another thread that sees it done reads first_err and the tasks, and
     * may free it at once. */
    __atomic_store_n(&b->state, SR_BATCH_DONE, __ATOMIC_RELEASE);
    return 1;
}

/* The pump, by the thread that claimed `pumping`: 1 if the batch ended
 * here (then *err_p is its status and b is not touched again). */
static int sr_batch_pump_claimed(struct symrail_batch *b, symrail_status_t *err_p)
{
    sr_progress(b->ctx);
    if (b->next < b->n && b->canceled) {
        for (; b->next < b->n; b->next++)
            sr_task_end(b, &b->tasks[b->next], SYMRAIL_ERR_CANCELED);
    }
    if (b->next < b->n)
        sr_batch_post_more(b);
    if (b->ended == b->n && sr_batch_end(b, err_p))
        return 1;
    __atomic_store_n(&b->pumping, 0, __ATOMIC_RELEASE);
    return 0;
}

static int sr_batch_pump_err(struct symrail_batch *b, symrail_status_t *err_p)
{
    sr_batch_state_t state = sr_batch_state(b);
    if (state == SR_BATCH_DONE || state == SR_BATCH_OPEN) {
        *err_p = b->first_err;
        return 1;
    }
    /* One pump at a time: the owner's progress and a wait of another
     * thread may both come here. */
    if (__atomic_exchange_n(&b->pumping, 1, __ATOMIC_ACQUIRE))
        return 0;
    return sr_batch_pump_claimed(b, err_p);
}

int sr_batch_pump(struct symrail_batch *b)
{
    symrail_status_t err;
    return sr_batch_pump_err(b, &err);
}

void sr_batch_progress(void)
{
    if (pthread_mutex_trylock(&sr_batch_lock) != 0)
        return;
    pthread_t me = pthread_self();
    struct symrail_batch *mine = NULL;
    /* Claimed under the lock: a batch on the list has not ended, and, once
     * claimed, ends (and may be freed) only in this pump. */
    for (struct symrail_batch *b = sr_batch_active; b && !mine; b = b->next_active)
        if (pthread_equal(b->owner, me) && !__atomic_load_n(&b->pumping, __ATOMIC_RELAXED) &&
            !__atomic_exchange_n(&b->pumping, 1, __ATOMIC_ACQUIRE))
            mine = b;
    pthread_mutex_unlock(&sr_batch_lock);
    /* One a call keeps this cheap; the others get their turn in the next. */
    if (mine) {
        symrail_status_t err;
        sr_batch_pump_claimed(mine, &err);
    }
}

symrail_status_t sr_batch_submit(struct symrail_batch *b, int pe, uint32_t tag,
                                 const void *payload, size_t len)
{
    symrail_status_t st = sr_batch_hold_locals(b);
    if (st != SYMRAIL_OK)
        return st;
    if (pe >= 0) {
        b->notify_payload = len ? malloc(len) : NULL;
        if (len && b->notify_payload == NULL) {
            sr_batch_unhold_locals(b);
            return SYMRAIL_ERR_NOMEM;
        }
        if (len)
            memcpy(b->notify_payload, payload, len);
        b->notify_pe = pe;
        b->notify_tag = tag;
        b->notify_len = len;
    }
    b->owner = pthread_self();
    __atomic_store_n(&b->state, SR_BATCH_RUNNING, __ATOMIC_RELEASE);
    b->canceled = 0;
    b->end_since = 0;
    __atomic_store_n(&b->pumping, 1, __ATOMIC_RELAXED);
    sr_batch_link(b);
    sr_batch_post_more(b);
    __atomic_store_n(&b->pumping, 0, __ATOMIC_RELEASE);
    sr_batch_pump(b);
    return SYMRAIL_OK;
}

typedef struct {
    struct symrail_batch *b;
    symrail_status_t      err;
} sr_batch_waiting_t;

static int sr_batch_over(void *arg)
{
    sr_batch_waiting_t *w = arg;
    return sr_batch_pump_err(w->b, &w->err);
}

symrail_status_t sr_batch_wait(struct symrail_batch *b, int timeout_ms)
{
    /* The thread that waits pumps it from its progress too (the owner is
     * read under the lock, by any thread's progress). */
    pthread_mutex_lock(&sr_batch_lock);
    b->owner = pthread_self();
    pthread_mutex_unlock(&sr_batch_lock);
    /* The status from the pump: a batch that ended there may be freed by
     * another thread before this one looks at it again. */
    sr_batch_waiting_t w = { b, SYMRAIL_OK };
    if (!sr_batch_over(&w)) {
        if (timeout_ms == 0)
            return SYMRAIL_ERR_TIMEOUT;
        /* -1: no limit but the peers' liveness, which ends any wait.  The
         * batch's context is progressed by the pump alone. */
        uint64_t ms = timeout_ms < 0 ? 0 : (uint64_t)timeout_ms;
        symrail_status_t st = sr_wait(NULL, sr_batch_over, &w, SR_WAIT_USER_TIMEOUT, ms,
                                      "batch_wait");
        if (st != SYMRAIL_OK)
            return st;
    }
    return w.err;
}

symrail_status_t sr_batch_cancel(struct symrail_batch *b)
{
    if (b->state == SR_BATCH_OPEN) {
        for (size_t i = 0; i < b->n; i++)
            sr_task_end(b, &b->tasks[i], SYMRAIL_ERR_CANCELED);
        b->state = SR_BATCH_DONE;
        return SYMRAIL_OK;
    }
    b->canceled = 1;
    if (b->first_err == SYMRAIL_OK && b->next < b->n)
        b->first_err = SYMRAIL_ERR_CANCELED;
    symrail_status_t st = sr_batch_wait(b, -1);
    return st == SYMRAIL_ERR_CANCELED ? SYMRAIL_OK : st;
}

void sr_batch_clear(struct symrail_batch *b)
{
    /* One atomic a run of tasks through the same import, as they were added. */
    for (size_t i = 0, run; i < b->n; i += run) {
        struct symrail_rseg *rs = b->tasks[i].rs;
        for (run = 1; i + run < b->n && b->tasks[i + run].rs == rs; run++)
            ;
        __atomic_fetch_sub(&rs->busy, (uint32_t)run, __ATOMIC_RELAXED);
    }
    free(b->notify_payload);
    b->notify_payload = NULL;
    b->notify_pe = -1;
    b->n = b->next = b->ended = 0;
    b->inflight = b->done_bytes = 0;
    b->first_err = SYMRAIL_OK;
    b->state = SR_BATCH_OPEN;
    b->canceled = 0;
    b->pumping = 0;  /* the claim its ending pump kept */
}

void sr_batch_delete(struct symrail_batch *b)
{
    sr_batch_clear(b);
    sr_ctx_free(b->ctx);
    b->magic = 0;
    free(b->held);
    free(b->tasks);
    free(b);
}

void sr_batches_fini(void)
{
    /* Batches still in flight at finalize: their contexts are quieted with
     * every other; they leave the active list so that nothing pumps them. */
    pthread_mutex_lock(&sr_batch_lock);
    sr_batch_active = NULL;
    pthread_mutex_unlock(&sr_batch_lock);
}
