/*
 * Independent jobs (endpoint.h): the endpoint blob, connect, accept,
 * disconnect, and which connected peer a segment descriptor belongs to.
 *
 * The blob and the JOIN message have one layout: a header, then the TCP
 * transport's address blob.  Jobs that connect may run different builds of
 * one version on one architecture: the header travels as laid out, with
 * fixed-width fields, and its version is checked.
 *
 * Which transport: TCP always carries the JOIN, the notifications and the
 * news that the peer left (its lanes do not come back).  Where both ends are
 * on one host (host hash), both run shared memory and it reaches the peer's
 * process (the transport reads the peer's incarnation word at `probe` by
 * cross-memory attach), segments and batches go over shared memory like
 * those of a local PE, and TCP stays for the messages.  Otherwise, where
 * both run verbs (the exporter says so in its blob) and their rails reach
 * each other, segments and batches go over RDMA: the connector makes its
 * QPs and sends their numbers and its rails in the JOIN (after the TCP
 * address); the acceptor makes and connects its own and sends them back in
 * an ACK (a message of the JOIN's tag), or an ACK without them where it
 * cannot; connect waits for that ACK (SYMRAIL_OP_TIMEOUT at most), so that
 * once it returns both ends take the same way.  Each end chooses shared
 * memory for what it sends; the choice is logged at info level.
 */
#include "config.h"
#include "core/endpoint.h"
#include "core/notify.h"
#include "core/region.h"
#include "util/crypto.h"
#include "util/log.h"
#include "util/sys.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SR_EP_MAGIC   0x50457253u  /* "SrEP" */
#define SR_EP_VERSION 3
#define SR_EP_ADDR_MAX (SYMRAIL_ENDPOINT_MAX - sizeof(sr_ep_hdr_t))
/* A JOIN or ACK: header, TCP address, verbs blob. */
#define SR_EP_MSG_MAX (SYMRAIL_ENDPOINT_MAX + SR_TL_PEER_ADDR_MAX)

enum { SR_EP_EXPORT = 1, SR_EP_JOIN = 2, SR_EP_ACK = 3 };
#define SR_EP_F_SHM   1u  /* the sender takes shared memory from connected peers */
#define SR_EP_F_VERBS 2u  /* ... verbs */
/* A number's state; GONE numbers keep who they were, for STALE. */
enum { SR_EP_FREE = 0, SR_EP_JOINING, SR_EP_UP, SR_EP_GONE };

typedef struct {
    uint32_t magic;
    uint16_t version;
    uint16_t kind;        /* SR_EP_EXPORT or SR_EP_JOIN */
    uint64_t job;         /* hash of the job's name */
    int32_t  pe;          /* in that job */
    int32_t  pid;
    uint64_t incarnation; /* random per process and init */
    uint64_t host;        /* hash of the host's name, boot and PID namespace */
    uint64_t probe;       /* address of the incarnation word in the sender */
    uint32_t flags;       /* SR_EP_F_* */
    uint32_t vlen;        /* JOIN, ACK: the verbs blob after the TCP address */
    uint8_t  secret[SR_TL_PEER_SECRET_LEN];  /* EXPORT: what a connector must know */
    uint32_t conn_id;     /* JOIN: names the pair at both ends */
    uint32_t alen;        /* the TCP address blob that follows */
} sr_ep_hdr_t;

typedef struct {
    uint8_t  state;
    uint64_t job, incarnation;
    int32_t  pe, pid;
    uint32_t owed;        /* messages consumed before accept made the endpoint */
    void    *join;        /* JOINING: the message, until accept takes it */
    size_t   join_len;
    int      want_ack;    /* connect waits for the acceptor's ACK ... */
    int      acked;       /* ... which came (atomic), in join */
    sr_tl_ep_t *offer;    /* ... to complete this verbs endpoint */
} sr_ep_peer_t;

static pthread_mutex_t sr_ep_lock = PTHREAD_MUTEX_INITIALIZER;
static sr_ep_peer_t   *sr_ep_peers;   /* [n_max - n_pes] */
static uint8_t         sr_ep_secret[SR_TL_PEER_SECRET_LEN];
static uint64_t        sr_ep_incarnation, sr_ep_host;
static int             sr_ep_njoins;  /* JOINING numbers (atomic) */

/* A JOIN, whole, from progress: it is consumed at once; its slot goes back
 * when accept makes the endpoint (sr_endpoint_owe, from notify). */
static symrail_status_t sr_ep_join_handler(void *arg, int src_pe, uint32_t tag,
                                           symrail_status_t status, const void *payload,
                                           size_t len)
{
    (void)arg, (void)status;
    sr_endpoint_deliver(src_pe, tag, payload, len);
    return SYMRAIL_OK;
}

symrail_status_t sr_endpoint_init(void)
{
    int n = sr_rt.n_max - sr_rt.n_pes;
    sr_ep_peers = n > 0 ? calloc((size_t)n, sizeof(*sr_ep_peers)) : NULL;
    if (n > 0 && sr_ep_peers == NULL)
        return SYMRAIL_ERR_NOMEM;
    if (sr_crypto_random(sr_ep_secret, sizeof(sr_ep_secret)) != SYMRAIL_OK ||
        sr_crypto_random(&sr_ep_incarnation, sizeof(sr_ep_incarnation)) != SYMRAIL_OK) {
        sr_error("libcrypto has no random bytes for the endpoint's secret");
        return SYMRAIL_ERR_SYSTEM;
    }
    sr_ep_host = sr_ep_host_hash();
    sr_ep_njoins = 0;
    sr_ep_tl_reset();
    symrail_status_t st = sr_notify_handler_set(SR_EP_TAG_JOIN, sr_ep_join_handler, NULL);
    return st != SYMRAIL_OK ? st : sr_notify_handler_set(SR_TAG_EP_CTL, sr_ep_ctl_handler, NULL);
}

void sr_endpoint_fini(void)
{
    for (int i = 0; sr_ep_peers && i < sr_rt.n_max - sr_rt.n_pes; i++)
        free(sr_ep_peers[i].join);
    free(sr_ep_peers);
    sr_ep_peers = NULL;
    explicit_bzero(sr_ep_secret, sizeof(sr_ep_secret));
}

const uint8_t *sr_endpoint_secret(void)
{
    return sr_ep_secret;
}

static sr_ep_peer_t *sr_ep_of(int pe)
{
    if (sr_ep_peers == NULL || pe < sr_rt.n_pes || pe >= sr_rt.n_max)
        return NULL;
    return &sr_ep_peers[pe - sr_rt.n_pes];
}

/* Header and TCP address of our own (not in an ACK), as `kind`, then
 * vlen bytes of vblob. */
static symrail_status_t sr_ep_pack(sr_tl_slot_t *slot, int kind, uint32_t conn_id,
                                   const void *vblob, size_t vlen, void *buf, size_t *len_p)
{
    sr_ep_hdr_t h = {
        .magic = SR_EP_MAGIC, .version = SR_EP_VERSION, .kind = (uint16_t)kind,
        .job = sr_job_hash(), .pe = sr_rt.my_pe, .pid = (int32_t)getpid(),
        .incarnation = sr_ep_incarnation, .host = sr_ep_host, .conn_id = conn_id,
        .probe = (uint64_t)(uintptr_t)&sr_ep_incarnation,
        .flags = (sr_ep_shm() ? SR_EP_F_SHM : 0) | (sr_ep_verbs() ? SR_EP_F_VERBS : 0),
        .vlen = (uint32_t)vlen,
    };
    if (kind == SR_EP_EXPORT)
        memcpy(h.secret, sr_ep_secret, sizeof(h.secret));
    char tmp[SR_EP_MSG_MAX];
    size_t alen = SR_EP_ADDR_MAX;
    symrail_status_t st = kind == SR_EP_ACK ? (alen = 0, SYMRAIL_OK)
                          : slot->ops->addr_pack(slot->tl, tmp + sizeof(h), &alen);
    if (st != SYMRAIL_OK) {
        sr_error("the TCP transport gives no address for the endpoint: %s",
                 symrail_strerror(st));
        return st;
    }
    h.alen = (uint32_t)alen;
    memcpy(tmp, &h, sizeof(h));
    if (vlen > SR_TL_PEER_ADDR_MAX)
        return SYMRAIL_ERR_INVALID;
    if (vlen)
        memcpy(tmp + sizeof(h) + alen, vblob, vlen);
    size_t len = sizeof(h) + alen + vlen;
    explicit_bzero(&h, sizeof(h));
    if (*len_p < len) {
        *len_p = len;
        explicit_bzero(tmp, sizeof(tmp));
        return SYMRAIL_ERR_TRUNCATED;
    }
    memcpy(buf, tmp, len);
    explicit_bzero(tmp, sizeof(tmp));
    *len_p = len;
    return SYMRAIL_OK;
}

/* Checks a blob or JOIN of `kind`; why not in one line naming fn. */
static symrail_status_t sr_ep_parse(const char *fn, const void *buf, size_t len, int kind,
                                    sr_ep_hdr_t *h_p)
{
    const char *why = NULL;
    if (len < sizeof(*h_p)) {
        why = "too short";
    } else {
        memcpy(h_p, buf, sizeof(*h_p));
        if (h_p->magic != SR_EP_MAGIC)
            why = "bad magic";
        else if (h_p->version != SR_EP_VERSION)
            why = "another version of symrail";
        else if (h_p->kind != kind)
            why = kind == SR_EP_EXPORT ? "not an exported endpoint"
                  : kind == SR_EP_JOIN ? "not a JOIN message" : "not an ACK message";
        else if (h_p->alen > SR_EP_ADDR_MAX || h_p->vlen > SR_TL_PEER_ADDR_MAX ||
                 (kind == SR_EP_EXPORT && h_p->vlen != 0) ||
                 (size_t)h_p->alen + h_p->vlen != len - sizeof(*h_p))
            why = "its length does not match what it says";
        else if (h_p->pe < 0 || (kind != SR_EP_EXPORT && h_p->conn_id == 0))
            why = "a field out of range";
    }
    if (why) {
        sr_error("%s: buf (%zu bytes) is not an endpoint of symrail %s: %s", fn, len,
                 SYMRAIL_VERSION_STRING, why);
        return SYMRAIL_ERR_INVALID;
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_endpoint_export(void *buf, size_t *len_p)
{
    pthread_mutex_lock(&sr_ep_lock);
    sr_tl_slot_t *slot = sr_ep_tcp("symrail_endpoint_export");
    symrail_status_t st = slot ? sr_ep_pack(slot, SR_EP_EXPORT, 0, NULL, 0, buf, len_p)
                               : SYMRAIL_ERR_NO_TRANSPORT;
    pthread_mutex_unlock(&sr_ep_lock);
    return st;
}

/* Connects number pe over slot to the peer `h` describes (address at addr);
 * verbs as sr_ep_dial_verbs says. */
static symrail_status_t sr_ep_dial(sr_tl_slot_t *slot, int pe, const sr_ep_hdr_t *h,
                                   const uint8_t *secret, uint32_t conn_id, const void *addr,
                                   int accepting, const void *vblob, void *vout,
                                   size_t *vout_len_p)
{
    char tmp[sizeof(sr_tl_peer_addr_t) + SYMRAIL_ENDPOINT_MAX];
    sr_tl_peer_addr_t pa = { .conn_id = conn_id, .pe = (uint32_t)h->pe };
    memcpy(pa.secret, secret, sizeof(pa.secret));
    memcpy(tmp, &pa, sizeof(pa));
    memcpy(tmp + sizeof(pa), addr, h->alen);
    sr_is_local[pe] = h->host == sr_ep_host;
    sr_rt.peers[pe].is_local = sr_is_local[pe];
    sr_rt.pids[pe] = h->pid;
    sr_tl_ep_t *ep = NULL;
    symrail_status_t st = slot->ops->connect(slot->tl, pe, tmp, sizeof(sr_tl_peer_addr_t) + h->alen,
                                             &ep);
    explicit_bzero(tmp, sizeof(tmp));
    if (st != SYMRAIL_OK) {
        explicit_bzero(&pa, sizeof(pa));
        return st;
    }
    sr_peer_t *peer = &sr_rt.peers[pe];
    sr_tl_slot_t *data = slot;
    sr_tl_ep_t *dep = ep;
    sr_tl_host_addr_t ha = { .pid = h->pid, .probe_addr = h->probe,
                             .probe_val = h->incarnation };
    const char *how = sr_ep_dial_shm(pe, h->host == sr_ep_host, h->flags & SR_EP_F_SHM, &pa,
                                     &ha, &data, &dep);
    const char *vhow = NULL;
    sr_ep_peer_t *p = sr_ep_of(pe);
    if (data == slot)
        vhow = sr_ep_dial_verbs(pe, accepting ? h->vlen > 0 : (h->flags & SR_EP_F_VERBS) != 0,
                                &pa, vblob, accepting ? h->vlen : 0, &data, &dep,
                                accepting ? NULL : &p->offer, vout, vout_len_p);
    else
        *vout_len_p = 0;
    if (vhow)
        how = vhow;
    explicit_bzero(&pa, sizeof(pa));
    if (data != slot) {
        peer->msg_ops = slot->ops;
        peer->msg_ep = ep;
    }
    if (!accepting && p->offer)
        sr_info("PE %d of job %016llx (pid %d), peer %d here, is offered verbs for segments",
                h->pe, (unsigned long long)h->job, h->pid, pe);
    else
        sr_info("PE %d of job %016llx (pid %d), peer %d here, is reached over %s", h->pe,
                (unsigned long long)h->job, h->pid, pe, how);
    p->job = h->job;
    p->pe = h->pe;
    p->pid = h->pid;
    p->incarnation = h->incarnation;
    sr_peer_setup(pe, data, dep);
    p->state = SR_EP_UP;
    return SYMRAIL_OK;
}

static int sr_ep_acked(void *arg)
{
    int pe = (int)(intptr_t)arg;
    sr_peer_t *peer = &sr_rt.peers[pe];
    if (__atomic_load_n(&sr_ep_of(pe)->acked, __ATOMIC_ACQUIRE))
        return 1;
    return peer->ops->ep_check(peer->ep) == SYMRAIL_ERR_PEER_GONE;
}

/* The connector's offer of verbs: waits for the acceptor's ACK, and takes
 * verbs for segments where it answered with its QPs. */
static symrail_status_t sr_ep_await_ack(const char *fn, int pe, uint32_t conn_id)
{
    sr_ep_peer_t *p = sr_ep_of(pe);
    symrail_status_t st = sr_wait_pe(NULL, sr_ep_acked, (void *)(intptr_t)pe, SR_WAIT_REMOTE,
                                     sr_rt.env.op_timeout, fn, pe);
    pthread_mutex_lock(&sr_ep_lock);
    sr_ep_hdr_t h = { 0 };
    if (st == SYMRAIL_OK && !__atomic_load_n(&p->acked, __ATOMIC_ACQUIRE)) {
        sr_error("%s: peer %d left before it accepted the connection", fn, pe);
        st = SYMRAIL_ERR_PEER_GONE;
    }
    if (st == SYMRAIL_OK)
        st = sr_ep_parse(fn, p->join, p->join_len, SR_EP_ACK, &h);
    if (st == SYMRAIL_OK && h.conn_id != conn_id) {
        sr_error("%s: peer %d answered for another connection", fn, pe);
        st = SYMRAIL_ERR_INVALID;
    }
    const char *how = NULL;
    if (st == SYMRAIL_OK) {
        sr_tl_peer_addr_t pa = { .conn_id = conn_id, .pe = (uint32_t)h.pe };
        how = sr_ep_verbs_take(pe, p->offer, &pa, (const char *)p->join + sizeof(h) + h.alen,
                               h.vlen);
    } else {
        sr_ep_verbs_take(pe, p->offer, NULL, NULL, 0);
    }
    p->offer = NULL;
    p->want_ack = 0;
    free(p->join);
    p->join = NULL;
    pthread_mutex_unlock(&sr_ep_lock);
    if (st == SYMRAIL_OK)
        sr_info("peer %d (PE %d of job %016llx) is reached over %s", pe, h.pe,
                (unsigned long long)h.job, how);
    return st;
}

symrail_status_t sr_endpoint_connect(const void *buf, size_t len, int *peer_p)
{
    static const char fn[] = "symrail_endpoint_connect";
    sr_ep_hdr_t h = { 0 };
    symrail_status_t st = sr_ep_parse(fn, buf, len, SR_EP_EXPORT, &h);
    if (st != SYMRAIL_OK)
        return st;
    if (h.job == sr_job_hash()) {
        sr_error("%s: the endpoint is of PE %d of this very job: address it by that number", fn,
                 h.pe);
        return SYMRAIL_ERR_INVALID;
    }
    const void *addr = (const char *)buf + sizeof(h);
    pthread_mutex_lock(&sr_ep_lock);
    sr_tl_slot_t *slot = sr_ep_tcp(fn);
    if (slot == NULL) {
        st = SYMRAIL_ERR_NO_TRANSPORT;
        goto out;
    }
    st = SYMRAIL_ERR_NOMEM;
    for (int pe = sr_rt.n_pes; pe < sr_rt.n_max; pe++) {
        sr_ep_peer_t *p = sr_ep_of(pe);
        if (p->state == SR_EP_UP && p->job == h.job && p->pe == h.pe &&
            p->incarnation == h.incarnation && sr_ep_check(pe) == SYMRAIL_OK) {
            *peer_p = pe;  /* connected already */
            st = SYMRAIL_OK;
            goto out;
        }
    }
    for (int pe = sr_rt.n_pes; pe < sr_rt.n_max; pe++) {
        sr_ep_peer_t *p = sr_ep_of(pe);
        uint32_t conn_id = 0;
        if (p->state != SR_EP_FREE)
            continue;
        while (conn_id == 0)
            if (sr_crypto_random(&conn_id, sizeof(conn_id)) != SYMRAIL_OK) {
                st = SYMRAIL_ERR_SYSTEM;
                goto out;
            }
        char vblob[SR_TL_PEER_ADDR_MAX];
        size_t vlen = sizeof(vblob);
        p->offer = NULL;
        st = sr_ep_dial(slot, pe, &h, h.secret, conn_id, addr, 0, NULL, vblob, &vlen);
        if (st == SYMRAIL_ERR_AGAIN)
            continue;  /* a peer that connects to us took the number meanwhile */
        if (st != SYMRAIL_OK) {
            p->state = SR_EP_GONE;  /* the transport may keep it: never again */
            sr_error("%s: PE %d of job %016llx (pid %d) cannot be reached: %s", fn, h.pe,
                     (unsigned long long)h.job, h.pid, symrail_strerror(st));
            goto out;
        }
        /* Where to find us, and the pair's id for the way back: sent without
         * the lock, since a send that waits for room progresses, and progress
         * delivers messages (sr_endpoint_deliver). */
        char join[SR_EP_MSG_MAX];
        size_t jlen = sizeof(join);
        st = sr_ep_pack(slot, SR_EP_JOIN, conn_id, vblob, vlen, join, &jlen);
        p->want_ack = p->offer != NULL;
        __atomic_store_n(&p->acked, 0, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&sr_ep_lock);
        if (st == SYMRAIL_OK)
            st = sr_notify_send(pe, SR_EP_TAG_JOIN, join, jlen, 1);
        if (st == SYMRAIL_OK && p->want_ack)
            st = sr_ep_await_ack(fn, pe, conn_id);
        if (st != SYMRAIL_OK) {
            sr_error("%s: PE %d of job %016llx (pid %d) did not take the connection: %s", fn,
                     h.pe, (unsigned long long)h.job, h.pid, symrail_strerror(st));
            pthread_mutex_lock(&sr_ep_lock);
            sr_ep_close(pe);
            p->state = SR_EP_GONE;
            pthread_mutex_unlock(&sr_ep_lock);
        } else {
            sr_info("connected to PE %d of job %016llx (pid %d) as PE %d", h.pe,
                    (unsigned long long)h.job, h.pid, pe);
            *peer_p = pe;
        }
        explicit_bzero(&h, sizeof(h));
        return st;
    }
    if (sr_rt.n_max == sr_rt.n_pes)
        sr_error("%s: SYMRAIL_CONNECT_MAX=0: this process takes no connected peers", fn);
    else
        sr_error("%s: all %d numbers for connected peers are used (SYMRAIL_CONNECT_MAX)", fn,
                 sr_rt.n_max - sr_rt.n_pes);
out:
    pthread_mutex_unlock(&sr_ep_lock);
    explicit_bzero(&h, sizeof(h));
    return st;
}

int sr_endpoint_deliver(int src_pe, uint32_t tag, const void *payload, size_t len)
{
    if (tag != SR_EP_TAG_JOIN)
        return 0;
    sr_ep_peer_t *p = sr_ep_of(src_pe);
    void *copy = malloc(len ? len : 1);
    sr_ep_hdr_t h = { 0 };
    if (len >= sizeof(h))
        memcpy(&h, payload, sizeof(h));
    pthread_mutex_lock(&sr_ep_lock);
    if (h.kind == SR_EP_ACK && p && p->want_ack && !p->acked && p->join == NULL && copy) {
        memcpy(copy, payload, len);
        p->join = copy;
        p->join_len = len;
        __atomic_store_n(&p->acked, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&sr_ep_lock);
        return 1;
    }
    if (p == NULL || p->state != SR_EP_FREE || copy == NULL) {
        pthread_mutex_unlock(&sr_ep_lock);
        sr_warn("a JOIN message from PE %d dropped (%s)", src_pe,
                copy == NULL ? "no memory" : "not a new connected peer");
        free(copy);
        return 1;
    }
    memcpy(copy, payload, len);
    p->join = copy;
    p->join_len = len;
    p->state = SR_EP_JOINING;
    __atomic_fetch_add(&sr_ep_njoins, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sr_ep_lock);
    return 1;
}

int sr_endpoint_offering(int pe)
{
    sr_ep_peer_t *p = sr_ep_of(pe);
    pthread_mutex_lock(&sr_ep_lock);
    int r = p && p->want_ack;
    pthread_mutex_unlock(&sr_ep_lock);
    return r;
}

void sr_endpoint_owe(int pe)
{
    sr_ep_peer_t *p = sr_ep_of(pe);
    if (p == NULL)
        return;
    pthread_mutex_lock(&sr_ep_lock);
    p->owed++;
    pthread_mutex_unlock(&sr_ep_lock);
}

static int sr_ep_joined(void *arg)
{
    (void)arg;
    return __atomic_load_n(&sr_ep_njoins, __ATOMIC_ACQUIRE) > 0;
}

symrail_status_t sr_endpoint_accept(int timeout_ms, int *peer_p)
{
    static const char fn[] = "symrail_endpoint_accept";
    /* Until then nothing listens: a connector would find no address. */
    pthread_mutex_lock(&sr_ep_lock);
    sr_tl_slot_t *slot = sr_ep_tcp(fn);
    pthread_mutex_unlock(&sr_ep_lock);
    if (slot == NULL)
        return SYMRAIL_ERR_NO_TRANSPORT;
    symrail_status_t st = SYMRAIL_OK;
    sr_progress(NULL);
    if (!sr_ep_joined(NULL)) {
        if (timeout_ms == 0)
            return SYMRAIL_ERR_AGAIN;
        st = sr_wait(NULL, sr_ep_joined, NULL, SR_WAIT_REMOTE | SR_WAIT_USER_TIMEOUT,
                     timeout_ms < 0 ? 0 : (uint64_t)timeout_ms, fn);
        if (st != SYMRAIL_OK)
            return st;
    }
    pthread_mutex_lock(&sr_ep_lock);
    int pe = sr_rt.n_pes;
    for (; pe < sr_rt.n_max && sr_ep_of(pe)->state != SR_EP_JOINING; pe++)
        ;
    if (pe == sr_rt.n_max) {  /* another thread took it */
        pthread_mutex_unlock(&sr_ep_lock);
        return SYMRAIL_ERR_AGAIN;
    }
    sr_ep_peer_t *p = sr_ep_of(pe);
    __atomic_fetch_sub(&sr_ep_njoins, 1, __ATOMIC_RELAXED);
    sr_ep_hdr_t h = { 0 };
    st = sr_ep_parse(fn, p->join, p->join_len, SR_EP_JOIN, &h);
    char ack[SR_EP_MSG_MAX], vblob[SR_TL_PEER_ADDR_MAX];
    size_t vlen = sizeof(vblob), alen = sizeof(ack);
    if (st == SYMRAIL_OK)
        st = sr_ep_dial(slot, pe, &h, sr_ep_secret, h.conn_id,
                        (const char *)p->join + sizeof(h), 1,
                        (const char *)p->join + sizeof(h) + h.alen, vblob, &vlen);
    /* The connector waits for an answer to its offer of verbs: with our
     * QPs, or without where we took another way. */
    int answer = st == SYMRAIL_OK && h.vlen > 0;
    if (answer && sr_ep_pack(slot, SR_EP_ACK, h.conn_id, vblob, vlen, ack, &alen) != SYMRAIL_OK)
        answer = 0;
    free(p->join);
    p->join = NULL;
    if (st != SYMRAIL_OK) {
        p->state = SR_EP_GONE;
        sr_error("%s: connecting back to PE %d of job %016llx (pid %d) failed: %s", fn, h.pe,
                 (unsigned long long)h.job, h.pid, symrail_strerror(st));
        pthread_mutex_unlock(&sr_ep_lock);
        return st;
    }
    sr_peer_t *peer = &sr_rt.peers[pe];
    for (; p->owed > 0; p->owed--)
        if (peer->msg_ops)
            peer->msg_ops->notify_release(peer->msg_ep);
        else
            peer->ops->notify_release(peer->ep);
    pthread_mutex_unlock(&sr_ep_lock);
    if (answer) {
        st = sr_notify_send(pe, SR_EP_TAG_JOIN, ack, alen, 1);
        if (st != SYMRAIL_OK) {
            sr_error("%s: PE %d of job %016llx (pid %d) did not take the answer: %s", fn, h.pe,
                     (unsigned long long)h.job, h.pid, symrail_strerror(st));
            sr_endpoint_disconnect(pe);
            return st;
        }
    }
    sr_info("accepted PE %d of job %016llx (pid %d) as PE %d", h.pe, (unsigned long long)h.job,
            h.pid, pe);
    *peer_p = pe;
    return SYMRAIL_OK;
}

symrail_status_t sr_endpoint_disconnect(int pe)
{
    pthread_mutex_lock(&sr_ep_lock);
    sr_ep_peer_t *p = sr_ep_of(pe);
    symrail_status_t st = SYMRAIL_OK;
    if (p == NULL || p->state != SR_EP_UP) {
        sr_error("symrail_endpoint_disconnect: peer %d is not a connected peer%s", pe,
                 p && p->state == SR_EP_GONE ? " any more (disconnected or failed)" : "");
        st = SYMRAIL_ERR_INVALID;
    } else {
        sr_ep_close(pe);
        p->state = SR_EP_GONE;
        sr_info("disconnected from PE %d (PE %d of job %016llx)", pe, p->pe,
                (unsigned long long)p->job);
    }
    pthread_mutex_unlock(&sr_ep_lock);
    return st;
}

symrail_status_t sr_endpoint_find(const char *fn, uint64_t job, int pe, int pid, int *pe_p)
{
    int stale = 0;
    pthread_mutex_lock(&sr_ep_lock);
    for (int n = sr_rt.n_pes; n < sr_rt.n_max; n++) {
        sr_ep_peer_t *p = sr_ep_of(n);
        if ((p->state != SR_EP_UP && p->state != SR_EP_GONE) || p->job != job || p->pe != pe)
            continue;
        /* One that left without a word stays UP until disconnected here. */
        if (p->state == SR_EP_UP && p->pid == pid && sr_ep_check(n) != SYMRAIL_ERR_PEER_GONE) {
            pthread_mutex_unlock(&sr_ep_lock);
            *pe_p = n;
            return SYMRAIL_OK;
        }
        stale = 1;
    }
    pthread_mutex_unlock(&sr_ep_lock);
    if (stale) {
        sr_error("%s: the descriptor is of PE %d of job %016llx (pid %d), a process that has "
                 "left or was replaced", fn, pe, (unsigned long long)job, pid);
        return SYMRAIL_ERR_STALE;
    }
    sr_error("%s: the descriptor is of PE %d of another job (%016llx), which this process is "
             "not connected to (symrail_endpoint_connect or _accept first)", fn, pe,
             (unsigned long long)job);
    return SYMRAIL_ERR_INVALID;
}
