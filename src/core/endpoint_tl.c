/*
 * Independent jobs (endpoint.h): which transports carry a connected peer.
 * TCP always carries its JOIN, its notifications and the news that it
 * left; shared memory its segments and batches where both ends are on one
 * host and the transport reaches the peer's process; otherwise verbs where
 * both ends run it and their rails reach each other (a handshake both
 * ways: the connector's QPs travel in the JOIN, the acceptor's in its
 * ACK, endpoint.c).
 */
#include "config.h"
#include "core/endpoint.h"
#include "core/region.h"
#include "util/log.h"
#include "util/strlist.h"

#include <string.h>

static int sr_ep_shm_tried, sr_ep_verbs_tried;

void sr_ep_tl_reset(void)
{
    sr_ep_shm_tried = 0;
    sr_ep_verbs_tried = 0;
}

/* The running transport `name`, or NULL. */
static sr_tl_slot_t *sr_ep_running(const char *name)
{
    int n = __atomic_load_n(&sr_rt.ntls, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (strcmp(sr_rt.tls[i].ops->name, name) == 0)
            return &sr_rt.tls[i];
    return NULL;
}

/* Starts `ops` for connected peers: its slot, or NULL with the status. */
static sr_tl_slot_t *sr_ep_start(const sr_tl_ops_t *ops, symrail_status_t *st_p)
{
    *st_p = sr_tl_open(ops, 1);
    if (*st_p != SYMRAIL_OK)
        return NULL;
    sr_regions_tl_added(sr_rt.ntls - 1);
    /* Waits sleep on one transport only where it carries every peer; the
     * long shm wait reads job peers' words only. */
    sr_rt.sleeper = -1;
    sr_rt.spin_ns = 0;
    return &sr_rt.tls[sr_rt.ntls - 1];
}

/* The TCP transport's slot, started now if the job did not start it;
 * sr_ep_lock held. */
sr_tl_slot_t *sr_ep_tcp(const char *fn)
{
    sr_tl_slot_t *slot = sr_ep_running("tcp");
    if (slot != NULL)
        return slot;
    const sr_tl_ops_t *ops = sr_tl_by_name("tcp");
    if (ops == NULL) {
        sr_error("%s: this build has no TCP transport, which connected jobs use", fn);
        return NULL;
    }
    symrail_status_t st;
    if ((slot = sr_ep_start(ops, &st)) == NULL) {
        sr_error("%s: the TCP transport, which connected jobs use, cannot start: %s", fn,
                 symrail_strerror(st));
        return NULL;
    }
    sr_info("TCP started for connected jobs");
    return slot;
}

/* The transport `name` for connected peers, started now if
 * SYMRAIL_TRANSPORTS names it and the job did not start it (once per
 * *tried); NULL where there is none.  sr_ep_lock held. */
static sr_tl_slot_t *sr_ep_extra(const char *name, int *tried, const char *what)
{
    sr_tl_slot_t *slot = sr_ep_running(name);
    if (slot != NULL)
        return slot;
    const sr_tl_ops_t *ops = sr_tl_by_name(name);
    if (*tried || ops == NULL || !sr_list_has(sr_rt.env.transports, name))
        return NULL;
    *tried = 1;
    symrail_status_t st;
    if ((slot = sr_ep_start(ops, &st)) == NULL)
        sr_info("%s cannot start for connected jobs (%s): they use TCP", what,
                symrail_strerror(st));
    return slot;
}

/* The shared-memory transport for connected peers on this host. */
sr_tl_slot_t *sr_ep_shm(void)
{
    sr_tl_slot_t *s = sr_ep_extra("shm", &sr_ep_shm_tried, "shared memory");
    return s && s->attr.host_peers ? s : NULL;
}

/* The verbs transport for connected peers on other hosts (or on this one
 * where shared memory does not reach them). */
sr_tl_slot_t *sr_ep_verbs(void)
{
    sr_tl_slot_t *s = sr_ep_extra("verbs", &sr_ep_verbs_tried, "verbs");
    return s && s->attr.peer_handshake ? s : NULL;
}

symrail_status_t sr_ep_verbs_offer(sr_tl_slot_t *vs, int pe, const sr_tl_peer_addr_t *pa,
                                   const void *blob, size_t blen, sr_tl_ep_t **ep_p,
                                   void *out, size_t *out_len_p)
{
    char tmp[sizeof(*pa) + SR_TL_PEER_ADDR_MAX];
    if (blen > SR_TL_PEER_ADDR_MAX)
        return SYMRAIL_ERR_INVALID;
    memcpy(tmp, pa, sizeof(*pa));
    if (blen)
        memcpy(tmp + sizeof(*pa), blob, blen);
    symrail_status_t st = vs->ops->connect(vs->tl, pe, tmp, sizeof(*pa) + blen, ep_p);
    explicit_bzero(tmp, sizeof(tmp));
    if (st == SYMRAIL_OK && out != NULL) {
        st = vs->ops->ep_addr_pack(*ep_p, out, out_len_p);
        if (st != SYMRAIL_OK)
            vs->ops->disconnect(*ep_p);
    }
    return st;
}

const char *sr_ep_dial_verbs(int pe, int wanted, const sr_tl_peer_addr_t *pa, const void *vblob,
                             size_t vblen, sr_tl_slot_t **slot_p, sr_tl_ep_t **ep_p,
                             sr_tl_ep_t **offer_p, void *vout, size_t *vout_len_p)
{
    size_t vlen = *vout_len_p;
    *vout_len_p = 0;
    sr_tl_slot_t *vs = wanted ? sr_ep_verbs() : NULL;
    if (vs == NULL)
        return NULL;
    sr_tl_ep_t *vep = NULL;
    if (sr_ep_verbs_offer(vs, pe, pa, vblob, vblen, &vep, vout, &vlen) != SYMRAIL_OK)
        return "TCP (verbs does not reach it)";
    *vout_len_p = vlen;
    if (offer_p != NULL) {
        *offer_p = vep;
        return NULL;  /* told once the acceptor answered */
    }
    *slot_p = vs;
    *ep_p = vep;
    return "verbs (segments, batches), TCP (notifications)";
}

const char *sr_ep_verbs_take(int pe, sr_tl_ep_t *offer, const sr_tl_peer_addr_t *pa,
                             const void *blob, size_t blen)
{
    sr_tl_slot_t *vs = sr_ep_verbs();
    if (vs == NULL || offer == NULL)
        return "TCP (no verbs here)";
    const char *how = "TCP (the acceptor takes no verbs from it)";
    if (blen > 0) {
        sr_tl_ep_t *vep = NULL;
        if (sr_ep_verbs_offer(vs, pe, pa, blob, blen, &vep, NULL, NULL) == SYMRAIL_OK) {
            sr_peer_t *peer = &sr_rt.peers[pe];
            /* Nothing went over the data path yet: it changes hands whole,
             * and the generations of TCP's lanes say nothing of these. */
            peer->msg_ops = peer->ops;
            peer->msg_ep = peer->ep;
            memset(peer->lane_gen, 0, sizeof(peer->lane_gen));
            sr_peer_setup(pe, vs, vep);
            return "verbs (segments, batches), TCP (notifications)";
        }
        how = "TCP (verbs does not reach it)";
    }
    vs->ops->disconnect(offer);  /* not taken: a tombstone */
    return how;
}

const char *sr_ep_dial_shm(int pe, int same_host, int peer_shm, const sr_tl_peer_addr_t *pa,
                           const sr_tl_host_addr_t *ha, sr_tl_slot_t **slot_p, sr_tl_ep_t **ep_p)
{
    if (!same_host)
        return "TCP (another host, or another PID namespace)";
    if (!peer_shm)
        return "TCP (the peer takes no shared memory)";
    sr_tl_slot_t *shm = sr_ep_shm();
    if (shm == NULL)
        return "TCP (no shared-memory transport here: SYMRAIL_TRANSPORTS leaves it out, or it "
               "could not start)";
    char tmp[sizeof(*pa) + sizeof(*ha)];
    memcpy(tmp, pa, sizeof(*pa));
    memcpy(tmp + sizeof(*pa), ha, sizeof(*ha));
    sr_tl_ep_t *ep = NULL;
    symrail_status_t st = shm->ops->connect(shm->tl, pe, tmp, sizeof(tmp), &ep);
    explicit_bzero(tmp, sizeof(tmp));
    if (st != SYMRAIL_OK)
        return "TCP (shared memory does not reach its process)";
    *slot_p = shm;
    *ep_p = ep;
    return "shared memory (segments, batches), TCP (notifications)";
}

symrail_status_t sr_ep_check(int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    symrail_status_t st = peer->ops->ep_check(peer->ep);
    if (st == SYMRAIL_OK && peer->msg_ops)
        st = peer->msg_ops->ep_check(peer->msg_ep);
    return st;
}

void sr_ep_close(int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    peer->ops->disconnect(peer->ep);
    if (peer->msg_ops)
        peer->msg_ops->disconnect(peer->msg_ep);
}

void sr_endpoint_msg_down(int pe)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    sr_tl_ep_t *ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    uint32_t w[SR_TL_MAX_LANES];
    if (peer->msg_ops == NULL || ep == NULL)
        return;
    int n = peer->msg_ops->ep_lanes(peer->msg_ep, w, SR_TL_MAX_LANES);
    for (int l = 0; l < n; l++)
        if (w[l])
            return;
    /* A TCP lane does not come back: the peer left, or broke off. */
    sr_info("connected peer %d: its TCP connection is gone; its segments are not reached "
            "any more", pe);
    peer->ops->disconnect(ep);
}


/* Through the notify layer, which keeps messages to one PE whole and in
 * order; its non-blocking send never progresses, so a transport may call
 * this from its own progress.  Only where another endpoint carries the
 * peer's messages: within a job a transport has its own channel. */
symrail_status_t sr_ep_ctl_send(void *arg, int pe, const void *msg, size_t len)
{
    (void)arg;
    if (pe < sr_rt.n_pes || pe >= sr_rt.n_max || len > SR_TL_CTL_MAX)
        return SYMRAIL_ERR_INVALID;
    if (__atomic_load_n(&sr_rt.peers[pe].msg_ops, __ATOMIC_ACQUIRE) == NULL)
        return SYMRAIL_ERR_UNSUPPORTED;
    return sr_notify_send_msg(pe, SR_TAG_EP_CTL, SYMRAIL_OK, msg, len, 0);
}

/* The data path's endpoint of a connected peer, where it is not the
 * messages' one; NULL while there is none.  It is published last
 * (sr_peer_setup): once it is there, ops is its transport's. */
static sr_tl_ep_t *sr_ep_ctl_target(const sr_peer_t *peer)
{
    sr_tl_ep_t *ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    const sr_tl_ops_t *msg = __atomic_load_n(&peer->msg_ops, __ATOMIC_ACQUIRE);
    if (ep == NULL || msg == NULL || msg == peer->ops || ep == peer->msg_ep)
        return NULL;
    return ep;
}

/* One that comes while connect has not yet made the data path of the
 * verbs endpoint it offered (the acceptor's answer is in, connect takes it
 * next) waits for it; otherwise one for no data path of another transport
 * is dropped: that transport sent it before it was disconnected. */
symrail_status_t sr_ep_ctl_handler(void *arg, int src_pe, uint32_t tag,
                                   symrail_status_t status, const void *payload, size_t len)
{
    (void)arg, (void)tag, (void)status;
    if (src_pe < sr_rt.n_pes || src_pe >= sr_rt.n_max)
        return SYMRAIL_OK;
    sr_peer_t *peer = &sr_rt.peers[src_pe];
    sr_tl_ep_t *ep = sr_ep_ctl_target(peer);
    if (ep == NULL) {
        /* Connect publishes the data path before it ends its offer: looked
         * at again after the offer, a path made between the two looks is
         * found (a message dropped then would never be sent again). */
        int offering = sr_endpoint_offering(src_pe);
        ep = sr_ep_ctl_target(peer);
        if (ep == NULL)
            return offering ? SYMRAIL_ERR_AGAIN : SYMRAIL_OK;
    }
    peer->ops->ep_ctl(ep, payload, len);
    return SYMRAIL_OK;
}
