#include "config.h"
#include "core/ctx.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

/* Messages drained from the transports wait here until the application
 * polls; a transport must free its receive slots promptly. */
void sr_notify_deliver(void *arg, int src_pe, uint32_t tag, const void *payload, size_t len)
{
    sr_notify_queue_t *q = arg;
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        symrail_notify_t *msgs = malloc(cap * sizeof(*msgs));
        if (msgs == NULL) {
            /* Losing a notification would hang its receiver later. */
            sr_core_abort(1, "out of memory queueing a notification message");
        }
        for (size_t i = 0; i < q->count; i++)
            msgs[i] = q->msgs[(q->head + i) % q->cap];
        free(q->msgs);
        q->msgs = msgs;
        q->cap = cap;
        q->head = 0;
    }
    symrail_notify_t *m = &q->msgs[(q->head + q->count) % q->cap];
    m->src_pe = src_pe;
    m->tag = tag;
    m->len = len;
    memcpy(m->payload, payload, len);
    q->count++;
    sr_ctx.stats.notifies_recv++;
}

typedef struct {
    sr_peer_t       *peer;
    uint32_t         tag;
    const void      *payload;
    size_t           len;
    symrail_status_t st;
} sr_notify_try_t;

static int sr_notify_try(void *arg)
{
    sr_notify_try_t *t = arg;
    t->st = t->peer->ops->notify(t->peer->ep, t->tag, t->payload, t->len);
    return t->st != SYMRAIL_ERR_AGAIN;
}

symrail_status_t sr_notify_send(int pe, uint32_t tag, const void *payload, size_t len)
{
    sr_notify_try_t t = { &sr_ctx.peers[pe], tag, payload, len, SYMRAIL_OK };
    symrail_status_t st = SYMRAIL_OK;
    if (!sr_notify_try(&t)) {
        /* The receiver's slots are full: wait for it to drain them. */
        sr_ctx.stats.backpressure_stalls++;
        st = sr_wait(sr_notify_try, &t, 0, sr_ctx.env.op_timeout, "notify_send");
    }
    if (st == SYMRAIL_OK)
        st = t.st;
    if (st == SYMRAIL_OK)
        sr_ctx.stats.notifies_sent++;
    else if (st != SYMRAIL_ERR_TIMEOUT && st != SYMRAIL_ERR_PEER_GONE)
        sr_error("notify_send to PE %d failed: %s", pe, symrail_strerror(st));
    return st;
}

static int sr_notify_ready(void *arg)
{
    return ((sr_notify_queue_t *)arg)->count != 0;
}

symrail_status_t sr_notify_recv(int timeout_ms, int blocking, symrail_notify_t *msg_p)
{
    sr_notify_queue_t *q = &sr_ctx.notifyq;
    sr_progress();
    if (q->count == 0) {
        if (!blocking)
            return SYMRAIL_ERR_AGAIN;
        if (timeout_ms == 0)
            return SYMRAIL_ERR_TIMEOUT;
        symrail_status_t st = sr_wait(sr_notify_ready, q, SR_WAIT_REMOTE | SR_WAIT_USER_TIMEOUT,
                                      timeout_ms < 0 ? 0 : (uint64_t)timeout_ms, "notify_wait");
        if (st != SYMRAIL_OK)
            return st;
    }
    *msg_p = q->msgs[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    /* Consumed: its slot goes back to the sender (tl.h, notify_release). */
    sr_peer_t *peer = &sr_ctx.peers[msg_p->src_pe];
    peer->ops->notify_release(peer->ep);
    return SYMRAIL_OK;
}

void sr_notify_fini(void)
{
    free(sr_ctx.notifyq.msgs);
    memset(&sr_ctx.notifyq, 0, sizeof(sr_ctx.notifyq));
}
