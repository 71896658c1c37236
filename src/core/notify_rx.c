/*
 * Notification messages, the receiving side.  Fragments from one PE are
 * appended to its message until it is whole; the slot of every fragment but
 * the last goes back as soon as it is copied (from progress: a transport's
 * callback posts nothing), the last one's when the message is consumed, so
 * a receiver that never consumes stalls its senders.  Whole messages wait
 * in order of arrival: user tags for the application, reserved tags for the
 * library's handlers or internal receivers.
 */
#include "config.h"
#include "core/notify.h"
#include "core/rt.h"
#include "core/endpoint.h"
#include "util/log.h"
#include "util/msgq.h"
#include "util/sys.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    sr_msg_t  *part;             /* being reassembled */
    uint32_t   owed[SR_MAX_TLS];  /* slots of copied fragments to give back (atomic) */
} sr_notify_rx_t;

static sr_notify_rx_t *sr_nrx;
static int             sr_nrx_n;
/* Under sr_rt.notify_lock, like every sr_nrx[].part. */
static sr_msgq_t       sr_userq, sr_resq;

#define SR_NOTIFY_HANDLERS 16
static struct {
    uint32_t            tag;
    sr_notify_handler_t fn;
    void               *arg;
} sr_nh[SR_NOTIFY_HANDLERS];
/* One dispatcher at a time, and registrations meanwhile. */
static pthread_mutex_t sr_nh_lock = PTHREAD_MUTEX_INITIALIZER;

static void sr_notify_lock(void)
{
    if (sr_rt.mt)
        pthread_mutex_lock(&sr_rt.notify_lock);
}

static void sr_notify_unlock(void)
{
    if (sr_rt.mt)
        pthread_mutex_unlock(&sr_rt.notify_lock);
}

/* `count` slots go back to PE src on transport tl (a peer may have a
 * second endpoint, for atomics, on another transport). */
static void sr_notify_release(int src, uint32_t tl, uint32_t count)
{
    sr_peer_t *peer = &sr_rt.peers[src];
    const sr_tl_ops_t *ops = sr_rt.tls[tl].ops;
    sr_tl_ep_t *ep = peer->ops == ops ? peer->ep : peer->amo_ops == ops ? peer->amo_ep
                     : peer->msg_ops == ops ? peer->msg_ep : NULL;
    for (; ep != NULL && count > 0; count--)
        ops->notify_release(ep);
    /* A connected peer not yet accepted has no endpoint here: accept gives
     * its slots back. */
    for (; ep == NULL && src >= sr_rt.n_pes && count > 0; count--)
        sr_endpoint_owe(src);
}

static void sr_notify_owe(sr_notify_rx_t *r, uint32_t tl)
{
    __atomic_fetch_add(&r->owed[tl], 1, __ATOMIC_RELAXED);
    __atomic_fetch_or(&sr_notify_work, SR_NOTIFY_WORK_RELEASE, __ATOMIC_RELEASE);
}

/* A first fragment: the message it starts, or NULL when it is not one. */
static sr_msg_t *sr_notify_start(int src, uint32_t tag, uint32_t tl, const void *payload,
                                  size_t len)
{
    sr_notify_hdr_t h;
    if (len < sizeof(h))
        return NULL;
    memcpy(&h, payload, sizeof(h));
    if (h.magic != SR_NOTIFY_MAGIC || h.len > SYMRAIL_NOTIFY_MAX_PAYLOAD ||
        len - sizeof(h) > h.len)
        return NULL;
    sr_msg_t *m = malloc(sizeof(*m) + h.len);
    /* Losing a notification would hang its receiver later. */
    if (m == NULL)
        sr_core_abort(1, "out of memory queueing a notification message");
    *m = (sr_msg_t){ .src = src, .tag = tag, .tl = tl, .status = h.status, .len = h.len };
    return m;
}

void sr_notify_deliver(void *arg, int src_pe, uint32_t tag, const void *payload, size_t len)
{
    uint32_t tl = (uint32_t)((sr_tl_slot_t *)arg - sr_rt.tls);
    const unsigned char *p = payload;
    if (src_pe < 0 || src_pe >= sr_nrx_n)
        return;
    sr_notify_rx_t *r = &sr_nrx[src_pe];
    sr_notify_lock();
    sr_msg_t *m = r->part;
    /* Whatever else comes while a message is open means its sender broke
     * it off (and maybe starts the next one). */
    if (m != NULL && (tag != m->tag || tl != m->tl || len == 0 || len > m->len - m->have)) {
        sr_error("notification from PE %d (tag %#x) broken off after %u of %u bytes: dropped",
                 src_pe, m->tag, m->have, m->len);
        free(m);
        m = r->part = NULL;
    }
    if (m == NULL) {
        m = sr_notify_start(src_pe, tag, tl, p, len);
        if (m == NULL) {
            sr_notify_owe(r, tl);
            sr_notify_unlock();
            sr_error("malformed notification from PE %d (tag %#x, %zu bytes): dropped", src_pe,
                     tag, len);
            return;
        }
        p += sizeof(sr_notify_hdr_t);
        len -= sizeof(sr_notify_hdr_t);
    }
    if (len)
        memcpy(m->payload + m->have, p, len);
    m->have += (uint32_t)len;
    if (m->have < m->len) {
        r->part = m;
        sr_notify_owe(r, tl);
        sr_notify_unlock();
        return;
    }
    r->part = NULL;
    int reserved = m->tag >= SYMRAIL_NOTIFY_TAG_RESERVED;
    sr_msgq_link(reserved ? &sr_resq : &sr_userq, m, 0);
    sr_notify_unlock();
    if (reserved)
        __atomic_fetch_or(&sr_notify_work, SR_NOTIFY_WORK_HANDLER, __ATOMIC_RELEASE);
    __atomic_fetch_add(&sr_rt.notifies_recv, 1, __ATOMIC_RELAXED);
}

static int sr_notify_handler_find(uint32_t tag)
{
    for (int i = 0; i < SR_NOTIFY_HANDLERS; i++)
        if (sr_nh[i].fn != NULL && sr_nh[i].tag == tag)
            return i;
    return -1;
}

symrail_status_t sr_notify_handler_set(uint32_t tag, sr_notify_handler_t fn, void *arg)
{
    symrail_status_t st = SYMRAIL_OK;
    if (tag < SYMRAIL_NOTIFY_TAG_RESERVED)
        return SYMRAIL_ERR_INVALID;
    pthread_mutex_lock(&sr_nh_lock);
    int i = sr_notify_handler_find(tag);
    for (int j = 0; i < 0 && fn != NULL && j < SR_NOTIFY_HANDLERS; j++)
        if (sr_nh[j].fn == NULL)
            i = j;
    if (i >= 0) {
        sr_nh[i].tag = tag;
        sr_nh[i].arg = arg;
        sr_nh[i].fn = fn;
    } else if (fn != NULL) {
        sr_error("notify: no room for a handler of tag %#x (%d handlers at most)", tag,
                 SR_NOTIFY_HANDLERS);
        st = SYMRAIL_ERR_NOMEM;
    }
    pthread_mutex_unlock(&sr_nh_lock);
    /* Messages that came before their handler. */
    if (fn != NULL)
        __atomic_fetch_or(&sr_notify_work, SR_NOTIFY_WORK_HANDLER, __ATOMIC_RELEASE);
    return st;
}

/* Hands reserved messages to their handlers, oldest first per tag; a tag
 * whose handler asks to wait is left alone until the next progress. */
static void sr_notify_dispatch(void)
{
    uint32_t blocked[SR_NOTIFY_HANDLERS];
    int nblocked = 0;
    if (pthread_mutex_trylock(&sr_nh_lock) != 0) {
        __atomic_fetch_or(&sr_notify_work, SR_NOTIFY_WORK_HANDLER, __ATOMIC_RELEASE);
        return;
    }
    for (;;) {
        sr_msg_t *prev = NULL, *m;
        int h = -1;
        sr_notify_lock();
        for (m = sr_resq.head; m != NULL; prev = m, m = m->next) {
            h = sr_notify_handler_find(m->tag);
            for (int b = 0; h >= 0 && b < nblocked; b++)
                if (blocked[b] == m->tag)
                    h = -1;
            if (h >= 0)
                break;
        }
        if (m != NULL)
            sr_msgq_unlink(&sr_resq, prev, m);
        sr_notify_unlock();
        if (m == NULL)
            break;
        symrail_status_t st = sr_nh[h].fn(sr_nh[h].arg, m->src, m->tag, m->status, m->payload,
                                          m->len);
        if (st == SYMRAIL_ERR_AGAIN) {
            /* Still the oldest of its tag. */
            sr_notify_lock();
            sr_msgq_link(&sr_resq, m, 1);
            sr_notify_unlock();
            blocked[nblocked++] = m->tag;
            continue;
        }
        sr_notify_release(m->src, m->tl, 1);
        free(m);
    }
    pthread_mutex_unlock(&sr_nh_lock);
    if (nblocked)
        __atomic_fetch_or(&sr_notify_work, SR_NOTIFY_WORK_HANDLER, __ATOMIC_RELEASE);
}

void sr_notify_rx_progress(uint32_t work)
{
    if (work & SR_NOTIFY_WORK_RELEASE) {
        for (int pe = 0; pe < sr_nrx_n; pe++)
            for (int tl = 0; tl < sr_rt.ntls; tl++) {
                uint32_t *owed = &sr_nrx[pe].owed[tl];
                if (__atomic_load_n(owed, __ATOMIC_RELAXED) == 0)
                    continue;
                sr_notify_release(pe, (uint32_t)tl, __atomic_exchange_n(owed, 0, __ATOMIC_ACQ_REL));
            }
    }
    if (work & SR_NOTIFY_WORK_HANDLER)
        sr_notify_dispatch();
}

typedef struct {
    sr_msgq_t *q;
    int         any;
    uint32_t    tag;
} sr_notify_sel_t;

/* Unlinks the oldest message that sel selects (lock held). */
static sr_msg_t *sr_notify_find(const sr_notify_sel_t *sel, int unlink)
{
    sr_msg_t *prev = NULL, *m;
    for (m = sel->q->head; m != NULL && !sel->any && m->tag != sel->tag; prev = m, m = m->next)
        ;
    if (m != NULL && unlink)
        sr_msgq_unlink(sel->q, prev, m);
    return m;
}

static sr_msg_t *sr_notify_take(const sr_notify_sel_t *sel)
{
    sr_notify_lock();
    sr_msg_t *m = sr_notify_find(sel, 1);
    sr_notify_unlock();
    return m;
}

static int sr_notify_ready(void *arg)
{
    const sr_notify_sel_t *sel = arg;
    if (__atomic_load_n(&sel->q->count, __ATOMIC_RELAXED) == 0)
        return 0;
    if (sel->any)
        return 1;
    sr_notify_lock();
    int found = sr_notify_find(sel, 0) != NULL;
    sr_notify_unlock();
    return found;
}

symrail_status_t sr_notify_recv(int any_tag, uint32_t tag, int timeout_ms, int blocking,
                                symrail_notify_t *msg_p)
{
    sr_notify_sel_t sel = { any_tag || tag < SYMRAIL_NOTIFY_TAG_RESERVED ? &sr_userq : &sr_resq,
                            any_tag, tag };
    sr_msg_t *m;
    uint64_t start = sr_time_ns();
    sr_progress(NULL);
    /* Another thread may take the message we saw arrive: look again, in
     * what is left of the timeout. */
    while ((m = sr_notify_take(&sel)) == NULL) {
        uint64_t left = 0;
        if (!blocking)
            return SYMRAIL_ERR_AGAIN;
        if (timeout_ms >= 0) {
            uint64_t spent = (sr_time_ns() - start) / 1000000u;
            if ((uint64_t)timeout_ms <= spent)
                return SYMRAIL_ERR_TIMEOUT;
            left = (uint64_t)timeout_ms - spent;
        }
        symrail_status_t st = sr_wait(NULL, sr_notify_ready, &sel,
                                      SR_WAIT_REMOTE | SR_WAIT_USER_TIMEOUT, left,
                                      any_tag ? "notify_wait" : "notify_wait_tag");
        if (st != SYMRAIL_OK)
            return st;
    }
    msg_p->src_pe = m->src;
    msg_p->tag = m->tag;
    msg_p->status = (symrail_status_t)m->status;
    msg_p->len = m->len;
    memcpy(msg_p->payload, m->payload, m->len);
    /* Only now may the sender use the slot again. */
    sr_notify_release(m->src, m->tl, 1);
    free(m);
    return SYMRAIL_OK;
}

symrail_status_t sr_notify_rx_init(int n_pes)
{
    sr_nrx = calloc((size_t)n_pes, sizeof(*sr_nrx));
    if (sr_nrx == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_nrx_n = n_pes;
    return SYMRAIL_OK;
}

void sr_notify_rx_fini(void)
{
    for (int pe = 0; pe < sr_nrx_n; pe++)
        free(sr_nrx[pe].part);
    free(sr_nrx);
    sr_nrx = NULL;
    sr_nrx_n = 0;
    sr_msgq_clear(&sr_userq);
    sr_msgq_clear(&sr_resq);
}
