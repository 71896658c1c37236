/*
 * RDMA verbs transport. Connected peers: processes of another job, reached
 * for segments only (tl.h, "Connected peers", peer_handshake).
 *
 * The job's QPs are made at init for its PEs and their numbers travel in
 * the address blob; a connected peer comes later, so its QPs are made when
 * it connects, one per rail and QP of a pair of rails, and held by its
 * endpoint.  Numbers cannot be fixed in an exported blob: the connector
 * makes its QPs first (the offer, with no address) and sends their numbers
 * with its rails; the acceptor makes its own, pairs the rails (its own go
 * first: PE numbers of two jobs say nothing), connects and answers with
 * its numbers; the connector then connects its side.  Notifications and
 * liveness stay on the peer's other endpoint (TCP): there is no notify QP
 * and no heartbeat.  A lane that fails (a stale key's access breaks the
 * QPs it was on) is repaired as within a job (repair.c), its messages
 * carried by that other endpoint (params.ctl_send there, ep_ctl here); the
 * acceptor takes the lower PE's part, and a message names the lane by the
 * receiver's number (sr_ib_peer_lane), since the two ends may pair rails in
 * another order and have other numbers of QPs.  When the other endpoint
 * reports the peer gone, disconnect moves every QP to the error state, so
 * that what is outstanding, and what a repair held, fails with
 * SYMRAIL_ERR_PEER_GONE.  The endpoint stays (a tombstone) until fini,
 * since the core may still release its keys.
 */
#include "config.h"
#include "tl/verbs/ib.h"

#define SR_IB_PEER_MAGIC 0x7372696270310000ull  /* "sribp1" */

/* The blob of ep_addr_pack: this header, the rails, then the QP numbers
 * [nrails][qpp]. */
typedef struct {
    uint64_t magic;
    int32_t  pid;
    uint32_t nrails;
    uint32_t qpp;
    uint32_t pad;
} sr_ib_peer_hdr_t;

static size_t sr_ib_peer_len(uint32_t nrails, uint32_t qpp)
{
    return sizeof(sr_ib_peer_hdr_t) + nrails * sizeof(sr_ib_rail_addr_t) +
           (size_t)nrails * qpp * sizeof(uint32_t);
}

/* The endpoint and its QPs, in INIT. */
static symrail_status_t sr_ib_peer_make(sr_tl_ctx_t *ctx, int pe, int first, int pid,
                                        sr_tl_ep_t **ep_p)
{
    sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
    int n = ctx->nrails * (int)ctx->qpp;
    if (ep == NULL || (ep->lanes = calloc((size_t)n, sizeof(*ep->lanes))) == NULL) {
        free(ep);
        return SYMRAIL_ERR_NOMEM;
    }
    ep->ctx = ctx;
    ep->pe = pe;
    ep->pid = pid;
    ep->local = ctx->params.is_local[pe];
    ep->conn = 1;
    ep->first = first;
    ep->nlanes = n;
    uint32_t wr = sr_ib_conn_wr(ctx);
    for (int r = 0; r < SR_IB_MAX_RAILS; r++)
        ep->peer_rail[r] = -1;
    for (int l = 0; l < n; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        pthread_mutex_init(&lane->lock, NULL);
        lane->rail = &ctx->rails[l / (int)ctx->qpp];
        /* Not offered to the core before it is connected. */
        lane->down = 1;
        lane->state = SR_IB_LANE_DEAD;
        sr_ib_lane_depth(lane, wr);
        lane->qp = sr_ib_qp_create(ctx, lane->rail, lane->rail->dev->cq, wr, NULL);
        if (lane->qp == NULL) {
            sr_ib_conn_wr_put(ctx);
            sr_ib_peer_free(ep);
            return SYMRAIL_ERR_TRANSPORT;
        }
    }
    *ep_p = ep;
    return SYMRAIL_OK;
}

/* Connects ep's QPs to the peer's that blob (ep_addr_pack there) names. */
static symrail_status_t sr_ib_peer_link(sr_tl_ep_t *ep, const char *blob, size_t len)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_peer_hdr_t h;
    if (len < sizeof(h))
        return SYMRAIL_ERR_INVALID;
    memcpy(&h, blob, sizeof(h));
    if (h.magic != SR_IB_PEER_MAGIC || h.nrails < 1 || h.nrails > SR_IB_MAX_RAILS || h.qpp < 1 ||
        h.qpp > 8 || len != sr_ib_peer_len(h.nrails, h.qpp))
        return SYMRAIL_ERR_INVALID;
    sr_ib_rail_addr_t ras[SR_IB_MAX_RAILS];
    const char *p = blob + sizeof(h);
    for (uint32_t i = 0; i < h.nrails; i++, p += sizeof(ras[0]))
        memcpy(&ras[i], p, sizeof(ras[i]));
    const char *qpns = p;
    int peer_of[SR_IB_MAX_RAILS];
    sr_ib_pair_rails(ctx, ep->pe, ras, (int)h.nrails, ep->first, peer_of);
    uint32_t qpp = ctx->qpp < h.qpp ? ctx->qpp : h.qpp;
    int nup = 0;
    ep->peer_qpp = h.qpp;  /* names the peer's lanes (sr_ib_peer_lane) */
    for (int r = 0; r < ctx->nrails; r++) {
        int pr = peer_of[r];
        if (pr < 0)
            continue;  /* its lanes stay down */
        ep->rail_addr[r] = ras[pr];
        ep->peer_rail[r] = (int8_t)pr;
        int err = 0;
        for (uint32_t q = 0; q < qpp && err == 0; q++) {
            uint32_t rqpn;
            memcpy(&rqpn, qpns + ((size_t)pr * h.qpp + q) * sizeof(uint32_t), 4);
            sr_ib_lane_t *lane = &ep->lanes[r * (int)ctx->qpp + (int)q];
            const char *step = "";
            err = sr_ib_qp_move(lane->qp, lane->rail, &ras[pr], rqpn, ep->pe, &step);
            if (err != 0) {
                /* As within a job (qp.c, sr_ib_rail_left_out): the rail
                 * is left out for this peer, which is told, and tried
                 * again later; the other rails carry it. */
                sr_warn("verbs: rail %s:%d does not reach connected peer %d now (QP %u to %s "
                        "failed: %s): left out for it, and tried again from time to time",
                        lane->rail->dev->name, lane->rail->port, ep->pe, lane->qp->qp_num, step,
                        strerror(err));
                break;
            }
            lane->rqpn = rqpn;
            sr_ib_lane_connected(lane, &ras[pr]);
            lane->down = 0;
            lane->state = SR_IB_LANE_UP;
            nup++;
        }
        for (uint32_t q = 0; err != 0 && q < qpp; q++) {
            sr_ib_lane_t *lane = &ep->lanes[r * (int)ctx->qpp + (int)q];
            nup -= lane->state == SR_IB_LANE_UP;
            lane->down = 1;
            lane->state = SR_IB_LANE_DEAD;
            lane->tell_dead = ctx->params.ctl_send != NULL;
            sr_ib_revive_plan(ep, r * (int)ctx->qpp + (int)q);
            SR_IB_STORE(ctx->repairs_pending, 1);
        }
    }
    if (nup == 0) {
        sr_info("verbs: no rail of ours reaches a rail of connected peer %d", ep->pe);
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    ep->pid = h.pid;
    ep->up = 1;
    sr_info("verbs: connected peer %d (process %d): %d lanes, %u QPs per pair of rails", ep->pe,
            (int)h.pid, nup, qpp);
    return SYMRAIL_OK;
}

symrail_status_t sr_ib_peer_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                    sr_tl_ep_t **ep_p)
{
    if (pe >= ctx->neps || addr == NULL || len < sizeof(sr_tl_peer_addr_t))
        return SYMRAIL_ERR_INVALID;
    const char *blob = (const char *)addr + sizeof(sr_tl_peer_addr_t);
    size_t blen = len - sizeof(sr_tl_peer_addr_t);
    sr_tl_ep_t *ep = ctx->eps[pe];
    if (ep != NULL) {
        /* The connector's second call: the acceptor's answer. */
        if (ep->first || ep->up || ep->gone || blen == 0)
            return SYMRAIL_ERR_AGAIN;
    } else {
        symrail_status_t st = sr_ib_peer_make(ctx, pe, blen > 0, 0, &ep);
        if (st != SYMRAIL_OK)
            return st;
        SR_IB_STORE(ctx->eps[pe], ep);
        if (blen == 0) {
            *ep_p = ep;  /* the offer */
            return SYMRAIL_OK;
        }
    }
    symrail_status_t st = sr_ib_peer_link(ep, blob, blen);
    if (st != SYMRAIL_OK) {
        /* Numbers are never used again: the endpoint stays, gone. */
        sr_ib_peer_disconnect(ep);
        return st;
    }
    SR_IB_STORE(ctx->lane_events, 1);
    *ep_p = ep;
    return SYMRAIL_OK;
}

symrail_status_t sr_ib_ep_addr_pack(sr_tl_ep_t *ep, void *buf, size_t *len_p)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (!ep->conn)
        return SYMRAIL_ERR_UNSUPPORTED;
    size_t len = sr_ib_peer_len((uint32_t)ctx->nrails, ctx->qpp);
    if (buf == NULL || *len_p < len) {
        *len_p = len;
        return buf == NULL ? SYMRAIL_OK : SYMRAIL_ERR_TRUNCATED;
    }
    sr_ib_peer_hdr_t h = { .magic = SR_IB_PEER_MAGIC, .pid = (int32_t)getpid(),
                           .nrails = (uint32_t)ctx->nrails, .qpp = ctx->qpp };
    char *p = buf;
    memcpy(p, &h, sizeof(h));
    p += sizeof(h);
    for (int r = 0; r < ctx->nrails; r++, p += sizeof(sr_ib_rail_addr_t)) {
        sr_ib_rail_addr_t ra;
        sr_ib_rail_addr_fill(&ctx->rails[r], &ra);
        memcpy(p, &ra, sizeof(ra));
    }
    for (int l = 0; l < ep->nlanes; l++, p += 4)
        memcpy(p, &ep->lanes[l].qp->qp_num, 4);
    *len_p = len;
    return SYMRAIL_OK;
}

uint32_t sr_ib_peer_lane(const sr_tl_ep_t *ep, int l)
{
    /* Within a job as between jobs, lane r * qpp + q is connected to the
     * peer's lane peer_rail[r] * peer_qpp + q (qp.c, sr_ib_connect): the
     * rails are paired by reachability, not by index, and the two ends may
     * have other numbers of QPs. */
    uint32_t qpp = ep->ctx->qpp, r = (uint32_t)l / qpp, q = (uint32_t)l % qpp;
    return ep->peer_rail[r] < 0 || q >= ep->peer_qpp
               ? UINT32_MAX
               : (uint32_t)ep->peer_rail[r] * ep->peer_qpp + q;
}

void sr_ib_ep_ctl(sr_tl_ep_t *ep, const void *msg, size_t len)
{
    if (ep->conn && ep->up && !SR_IB_LOAD(ep->gone))
        sr_ib_ctl_recv(ep->ctx, ep->pe, msg, len);
}

void sr_ib_peer_disconnect(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (__atomic_exchange_n(&ep->gone, 1, __ATOMIC_ACQ_REL))
        return;
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lane_t *lane = &ep->lanes[l];
        sr_ib_lock(ctx, &lane->lock);
        if (lane->qp) {
            struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
            ibv_modify_qp(lane->qp, &a, IBV_QP_STATE);
        }
        if (!lane->down || lane->state != SR_IB_LANE_DEAD) {
            lane->down = 1;
            lane->state = SR_IB_LANE_DEAD;
            lane->gen++;
        }
        sr_ib_unlock(ctx, &lane->lock);
    }
    /* Its QPs stay (in error) until fini, as the endpoint does: its share
     * of the WR budget stays taken with them. */
    SR_IB_STORE(ctx->replays, 1);      /* what its lanes still hold fails */
    SR_IB_STORE(ctx->lane_events, 1);
    sr_debug("verbs: connected peer %d (process %d) disconnected", ep->pe, ep->pid);
}

/* At fini, after every completion is in. */
void sr_ib_peer_free(sr_tl_ep_t *ep)
{
    for (int l = 0; ep->lanes && l < ep->nlanes; l++) {
        if (ep->lanes[l].qp)
            ibv_destroy_qp(ep->lanes[l].qp);
        pthread_mutex_destroy(&ep->lanes[l].lock);
    }
    free(ep->lanes);
    sr_ib_rsegs_free(ep);
    free(ep);
}
