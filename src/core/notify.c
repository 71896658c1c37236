#include "config.h"
#include "core/rt.h"
#include "util/log.h"
#include "util/msgq.h"
#include "util/sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages drained from the transports wait here until the application
 * polls.  Their slots stay taken until then (notify_release), so the queue
 * never holds more than the senders' slots. */
void sr_notify_deliver(void *arg, int src_pe, uint32_t tag, const void *payload, size_t len)
{
    /* The message remembers its transport, whose slot goes back on consume. */
    uint32_t tl = (uint32_t)((sr_tl_slot_t *)arg - sr_rt.tls);
    if (sr_rt.mt)
        pthread_mutex_lock(&sr_rt.notify_lock);
    symrail_status_t st = sr_msgq_push_flags(&sr_rt.notifyq, src_pe, tag, tl, payload, len);
    if (sr_rt.mt)
        pthread_mutex_unlock(&sr_rt.notify_lock);
    /* Losing a notification would hang its receiver later. */
    if (st != SYMRAIL_OK)
        sr_core_abort(1, "out of memory queueing a notification message");
    __atomic_fetch_add(&sr_rt.notifies_recv, 1, __ATOMIC_RELAXED);
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

symrail_status_t sr_notify_send(int pe, uint32_t tag, const void *payload, size_t len,
                                int blocking)
{
    sr_notify_try_t t = { &sr_rt.peers[pe], tag, payload, len, SYMRAIL_OK };
    symrail_status_t st = SYMRAIL_OK;
    if (!sr_notify_try(&t)) {
        if (!blocking) {
            sr_progress(NULL);  /* so that a caller looping on us sees slots come back */
            return SYMRAIL_ERR_AGAIN;
        }
        /* The receiver's slots are full: wait for it to consume messages. */
        char what[64];
        snprintf(what, sizeof(what), "notify_send to PE %d (its slots are full)", pe);
        __atomic_fetch_add(&sr_rt.notify_stalls, 1, __ATOMIC_RELAXED);
        st = sr_wait(NULL, sr_notify_try, &t, 0, sr_rt.env.op_timeout, what);
    }
    if (st == SYMRAIL_OK)
        st = t.st;
    if (st == SYMRAIL_OK)
        __atomic_fetch_add(&sr_rt.notifies_sent, 1, __ATOMIC_RELAXED);
    else if (st != SYMRAIL_ERR_TIMEOUT && st != SYMRAIL_ERR_PEER_GONE)
        sr_error("notify_send to PE %d failed: %s", pe, symrail_strerror(st));
    return st;
}

static int sr_notify_ready(void *arg)
{
    return __atomic_load_n(&((sr_msgq_t *)arg)->count, __ATOMIC_RELAXED) != 0;
}

static sr_msg_t *sr_notify_pop(sr_msgq_t *q)
{
    if (!sr_rt.mt)
        return sr_msgq_pop(q);
    pthread_mutex_lock(&sr_rt.notify_lock);
    sr_msg_t *m = sr_msgq_pop(q);
    pthread_mutex_unlock(&sr_rt.notify_lock);
    return m;
}

symrail_status_t sr_notify_recv(int timeout_ms, int blocking, symrail_notify_t *msg_p)
{
    sr_msgq_t *q = &sr_rt.notifyq;
    sr_msg_t *m;
    uint64_t start = sr_time_ns();
    sr_progress(NULL);
    /* Another thread may take the message we saw arrive: look again, in
     * what is left of the timeout. */
    while ((m = sr_notify_pop(q)) == NULL) {
        uint64_t left = 0;
        if (!blocking)
            return SYMRAIL_ERR_AGAIN;
        if (timeout_ms >= 0) {
            uint64_t spent = (sr_time_ns() - start) / 1000000u;
            if ((uint64_t)timeout_ms <= spent)
                return SYMRAIL_ERR_TIMEOUT;
            left = (uint64_t)timeout_ms - spent;
        }
        symrail_status_t st = sr_wait(NULL, sr_notify_ready, q,
                                      SR_WAIT_REMOTE | SR_WAIT_USER_TIMEOUT, left, "notify_wait");
        if (st != SYMRAIL_OK)
            return st;
    }
    msg_p->src_pe = m->src;
    msg_p->tag = m->tag;
    msg_p->status = SYMRAIL_OK;
    msg_p->len = m->len;
    memcpy(msg_p->payload, m->payload, m->len);
    uint32_t tl = m->flags;
    free(m);
    /* Only now may the sender use the slot again, on the transport that
     * carried the message (a peer may have a second one, for atomics). */
    sr_peer_t *src = &sr_rt.peers[msg_p->src_pe];
    const sr_tl_ops_t *ops = sr_rt.tls[tl].ops;
    sr_tl_ep_t *ep = src->ops == ops ? src->ep : src->amo_ops == ops ? src->amo_ep : NULL;
    if (ep)
        ops->notify_release(ep);
    return SYMRAIL_OK;
}

void sr_notify_fini(void)
{
    sr_msgq_clear(&sr_rt.notifyq);
}

/* Until messages carry a status: a batch's failure reaches its receiver as
 * a message that says so. */
symrail_status_t sr_notify_send_msg(int pe, uint32_t tag, symrail_status_t status,
                                    const void *payload, size_t len, int blocking)
{
    (void)status;
    return sr_notify_send(pe, tag, payload, len, blocking);
}
