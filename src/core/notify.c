/*
 * Notification messages, the sending side: a message goes out as fragments
 * of at most SR_TL_NOTIFY_MAX bytes on the transport that carries its PE,
 * the first one led by a header (length, status).  One message to a PE goes
 * out whole before the next one starts, so the receiver reassembles by
 * appending what comes from that PE.
 */
#include "config.h"
#include "core/notify.h"
#include "core/rt.h"
#include "util/log.h"
#include "util/sys.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(SYMRAIL_NOTIFY_MAX_PAYLOAD <= UINT16_MAX, "the header's len is 16 bits");
_Static_assert(SR_TL_NOTIFY_MAX > sizeof(sr_notify_hdr_t), "a first fragment carries data");

uint32_t sr_notify_work;

/* What goes to one PE.  active: a message is going out, off wire bytes of
 * it (header and payload) sent so far; queued: a call returned with the
 * rest left to progress, payload then pointing to buf (our copy). */
typedef struct {
    pthread_mutex_t      lock;  /* THREAD_MULTIPLE: one sender to a PE at a time */
    /* waiting: one thread only, and a sender waits for room: what progress
     * sends meanwhile (a handler's answer, a transport's control message)
     * waits for it, as the lock makes it wait with THREAD_MULTIPLE. */
    int                  active, queued, waiting;
    uint32_t             tag;
    size_t               off;
    sr_notify_hdr_t      hdr;
    const unsigned char *payload;
    unsigned char       *buf;   /* SYMRAIL_NOTIFY_MAX_PAYLOAD bytes, taken when needed */
} sr_notify_tx_t;

static sr_notify_tx_t *sr_ntx;
static int             sr_ntx_n;
static __thread int    sr_notify_in_progress;

static inline size_t sr_notify_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* queued is read without the lock by progress (tx_progress). */
static void sr_notify_tx_done(sr_notify_tx_t *tx)
{
    tx->active = 0;
    __atomic_store_n(&tx->queued, 0, __ATOMIC_RELAXED);
}

/* Sends the fragments of tx's message while the transport takes them:
 * SYMRAIL_OK when the last one went, SYMRAIL_ERR_AGAIN when the receiver
 * has no room now, or the transport's error (the message is dropped). */
static symrail_status_t sr_notify_tx_advance(sr_notify_tx_t *tx, int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    size_t hlen = sizeof(tx->hdr), wire = hlen + tx->hdr.len;
    do {
        unsigned char first[SR_TL_NOTIFY_MAX];
        const void *frag;
        size_t n;
        if (tx->off == 0) {
            n = sr_notify_min(tx->hdr.len, SR_TL_NOTIFY_MAX - hlen);
            memcpy(first, &tx->hdr, hlen);
            if (n)
                memcpy(first + hlen, tx->payload, n);
            frag = first;
            n += hlen;
        } else {
            size_t at = tx->off - hlen;
            n = sr_notify_min(tx->hdr.len - at, SR_TL_NOTIFY_MAX);
            frag = tx->payload + at;
        }
        symrail_status_t st = peer->msg_ops ? peer->msg_ops->notify(peer->msg_ep, tx->tag, frag, n)
                                            : peer->ops->notify(peer->ep, tx->tag, frag, n);
        if (st == SYMRAIL_ERR_AGAIN)
            return st;
        if (st != SYMRAIL_OK) {
            if (tx->off)
                sr_error("notification to PE %d broken off after %zu of %zu bytes: %s", pe,
                         tx->off, wire, symrail_strerror(st));
            sr_notify_tx_done(tx);
            return st;
        }
        tx->off += n;
    } while (tx->off < wire);
    sr_notify_tx_done(tx);
    return SYMRAIL_OK;
}

typedef struct {
    sr_notify_tx_t      *tx;
    int                  pe;
    uint32_t             tag;
    sr_notify_hdr_t      hdr;
    const unsigned char *payload;
    int                  started;  /* our message is tx's (an earlier one has gone) */
    symrail_status_t     st;
} sr_notify_try_t;

/* A wait condition: first the rest of an earlier message, then ours. */
static int sr_notify_try(void *arg)
{
    sr_notify_try_t *t = arg;
    sr_notify_tx_t *tx = t->tx;
    symrail_status_t st;
    if (!t->started) {
        if (tx->active) {
            st = sr_notify_tx_advance(tx, t->pe);
            if (st == SYMRAIL_ERR_AGAIN)
                return 0;
            if (st != SYMRAIL_OK) {
                t->st = st;
                return 1;
            }
        }
        tx->active = 1;
        tx->off = 0;
        tx->tag = t->tag;
        tx->hdr = t->hdr;
        tx->payload = t->payload;
        t->started = 1;
    }
    st = sr_notify_tx_advance(tx, t->pe);
    if (st == SYMRAIL_ERR_AGAIN)
        return 0;
    t->st = st;
    return 1;
}

/* Our message could not go whole: what settles the call (tx locked). */
static symrail_status_t sr_notify_settle(sr_notify_try_t *t, symrail_status_t st, int blocking)
{
    sr_notify_tx_t *tx = t->tx;
    if (!t->started || !tx->active)
        return st;  /* an earlier message still holds the way, or ours failed */
    if (tx->off == 0 || (st != SYMRAIL_ERR_AGAIN && st != SYMRAIL_ERR_TIMEOUT)) {
        tx->active = 0;  /* nothing of it went (or the peer is gone): it never will */
        return st;
    }
    /* Part of it is at the receiver: the rest must follow before anything
     * else to that PE, from progress (buf was taken before we started). */
    memcpy(tx->buf, tx->payload, tx->hdr.len);
    tx->payload = tx->buf;
    __atomic_store_n(&tx->queued, 1, __ATOMIC_RELAXED);
    __atomic_fetch_or(&sr_notify_work, SR_NOTIFY_WORK_TX, __ATOMIC_RELEASE);
    if (blocking)
        sr_warn("notification to PE %d: %zu of %zu bytes went within SYMRAIL_OP_TIMEOUT; "
                "the rest follows from progress", t->pe, tx->off,
                sizeof(tx->hdr) + tx->hdr.len);
    return SYMRAIL_OK;
}

symrail_status_t sr_notify_send_msg(int pe, uint32_t tag, symrail_status_t status,
                                    const void *payload, size_t len, int blocking)
{
    if (pe < 0 || pe >= sr_ntx_n || len > SYMRAIL_NOTIFY_MAX_PAYLOAD || (len && !payload))
        return SYMRAIL_ERR_INVALID;
    if (sr_peer_failed(pe))
        return SYMRAIL_ERR_PEER_GONE;  /* its change of state was logged */
    sr_notify_tx_t *tx = &sr_ntx[pe];
    if (sr_rt.mt) {
        if (!blocking && pthread_mutex_trylock(&tx->lock) != 0)
            return SYMRAIL_ERR_AGAIN;
        if (blocking)
            pthread_mutex_lock(&tx->lock);
    } else if (tx->waiting && !blocking) {
        return SYMRAIL_ERR_AGAIN;
    }
    symrail_status_t st = SYMRAIL_OK;
    sr_notify_try_t t = { tx, pe, tag, { SR_NOTIFY_MAGIC, (uint16_t)len, (int32_t)status },
                          payload, 0, SYMRAIL_OK };
    /* A message that may not go in one fragment may have to be kept: room
     * for its copy first, so that failing leaves nothing half sent. */
    if (len > SR_TL_NOTIFY_MAX - sizeof(sr_notify_hdr_t) && tx->buf == NULL &&
        (tx->buf = malloc(SYMRAIL_NOTIFY_MAX_PAYLOAD)) == NULL) {
        st = SYMRAIL_ERR_NOMEM;
        goto out;
    }
    if (!sr_notify_try(&t)) {
        if (blocking) {
            char what[64];
            snprintf(what, sizeof(what), "notify_send to PE %d (its slots are full)", pe);
            __atomic_fetch_add(&sr_rt.notify_stalls, 1, __ATOMIC_RELAXED);
            tx->waiting = !sr_rt.mt;
            st = sr_wait_pe(NULL, sr_notify_try, &t, SR_WAIT_USER_TIMEOUT,
                            sr_rt.env.op_timeout, what, pe);
            tx->waiting = 0;
            if (st == SYMRAIL_ERR_TIMEOUT && (!t.started || tx->off == 0))
                sr_error("%s: no progress for %llu ms (SYMRAIL_OP_TIMEOUT)", what,
                         (unsigned long long)sr_rt.env.op_timeout);
        } else {
            st = SYMRAIL_ERR_AGAIN;
        }
        if (st == SYMRAIL_OK)
            st = t.st;
        else
            st = sr_notify_settle(&t, st, blocking);
    } else {
        st = t.st;
    }
out:
    if (sr_rt.mt)
        pthread_mutex_unlock(&tx->lock);
    if (st == SYMRAIL_OK)
        __atomic_fetch_add(&sr_rt.notifies_sent, 1, __ATOMIC_RELAXED);
    else if (st != SYMRAIL_ERR_AGAIN && st != SYMRAIL_ERR_TIMEOUT && st != SYMRAIL_ERR_PEER_GONE)
        sr_error("notify_send to PE %d failed: %s", pe, symrail_strerror(st));
    return st;
}

symrail_status_t sr_notify_send(int pe, uint32_t tag, const void *payload, size_t len,
                                int blocking)
{
    symrail_status_t st = sr_notify_send_msg(pe, tag, SYMRAIL_OK, payload, len, blocking);
    if (st == SYMRAIL_ERR_AGAIN) {
        sr_progress(NULL);
        /* The receiver that would make room may need our CPU. */
        if (sr_rt.oversubscribed)
            sched_yield();
    }
    return st;
}

/* The rest of messages that calls left queued. */
static void sr_notify_tx_progress(void)
{
    int left = 0;
    for (int pe = 0; pe < sr_ntx_n; pe++) {
        sr_notify_tx_t *tx = &sr_ntx[pe];
        if (!__atomic_load_n(&tx->queued, __ATOMIC_RELAXED))
            continue;
        /* A sender holding the lock sends the rest itself. */
        if (sr_rt.mt && pthread_mutex_trylock(&tx->lock) != 0) {
            left = 1;
            continue;
        }
        if (tx->queued && sr_notify_tx_advance(tx, pe) == SYMRAIL_ERR_AGAIN)
            left = 1;
        if (sr_rt.mt)
            pthread_mutex_unlock(&tx->lock);
    }
    if (left)
        __atomic_fetch_or(&sr_notify_work, SR_NOTIFY_WORK_TX, __ATOMIC_RELEASE);
}

void sr_notify_progress(void)
{
    /* A handler that waits would come back here: its messages wait for the
     * outer call. */
    if (sr_notify_in_progress)
        return;
    sr_notify_in_progress = 1;
    uint32_t work = __atomic_exchange_n(&sr_notify_work, 0, __ATOMIC_ACQUIRE);
    if (work & SR_NOTIFY_WORK_TX)
        sr_notify_tx_progress();
    sr_notify_rx_progress(work);
    sr_notify_in_progress = 0;
}

symrail_status_t sr_notify_init(int n_pes)
{
    sr_ntx = calloc((size_t)n_pes, sizeof(*sr_ntx));
    if (sr_ntx == NULL)
        return SYMRAIL_ERR_NOMEM;
    for (int pe = 0; pe < n_pes; pe++)
        pthread_mutex_init(&sr_ntx[pe].lock, NULL);
    sr_ntx_n = n_pes;
    return sr_notify_rx_init(n_pes);
}

void sr_notify_fini(void)
{
    for (int pe = 0; pe < sr_ntx_n; pe++) {
        if (sr_ntx[pe].queued)
            sr_warn("finalize: the rest of a notification to PE %d was never sent", pe);
        free(sr_ntx[pe].buf);
        pthread_mutex_destroy(&sr_ntx[pe].lock);
    }
    free(sr_ntx);
    sr_ntx = NULL;
    sr_ntx_n = 0;
    __atomic_store_n(&sr_notify_work, 0, __ATOMIC_RELAXED);
    sr_notify_rx_fini();
}
