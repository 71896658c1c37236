/*
 * RDMA verbs transport. Queue pairs: creation and the INIT/RTR/RTS steps, the address blob, connect.
 */
#include "config.h"
#include "tl/verbs/ib.h"

/* ---- queue pairs ----------------------------------------------------------------- */

/*
 * SYMRAIL_IB_MAX_WR=0: the send queues of all data QPs together get
 * SR_IB_WR_BUDGET entries, each QP a power of two minus one of them (a
 * queue of N entries takes the next power of two above N in Soft-RoCE's
 * and several providers' rings), between SR_IB_WR_MIN and SR_IB_WR_MAX.
 * Small jobs get deep queues; at scale a peer costs a few KiB of send
 * queue instead of 4 x 256 entries, and 15 entries of 64 KiB slices still
 * keep a megabyte in flight on each QP.
 */
#define SR_IB_WR_BUDGET 4096u
#define SR_IB_WR_MIN    15u
#define SR_IB_WR_MAX    255u

/* The send queue of each data QP when npeers peers share the budget. */
static uint32_t sr_ib_budget_wr(const sr_tl_ctx_t *ctx, size_t npeers)
{
    size_t nqps = npeers * (size_t)ctx->nrails * ctx->qpp;
    size_t per = nqps ? SR_IB_WR_BUDGET / nqps : SR_IB_WR_MAX + 1;
    uint32_t wr = SR_IB_WR_MAX + 1;
    while (wr > SR_IB_WR_MIN + 1 && wr > per)
        wr /= 2;
    return wr - 1 < ctx->dev_max_wr ? wr - 1 : ctx->dev_max_wr;
}

/* Every wr/4-th WR signals, at most every SR_IB_SIG_EVERY-th: a queue
 * keeps completions coming well before it is full. */
static uint32_t sr_ib_sig_for(uint32_t wr)
{
    uint32_t sig = wr / 4 < SR_IB_SIG_EVERY ? wr / 4 : SR_IB_SIG_EVERY;
    return sig < 1 ? 1 : sig;
}

void sr_ib_size_queues(sr_tl_ctx_t *ctx, size_t npeers)
{
    if (ctx->max_wr == 0) {
        ctx->max_wr = sr_ib_budget_wr(ctx, npeers);
        ctx->wr_auto = 1;
        ctx->wr_peers = (uint32_t)npeers;
        sr_info("verbs: %u work requests per data QP (%zu peers x %d rails x %u QPs)",
                ctx->max_wr, npeers, ctx->nrails, ctx->qpp);
    }
}

void sr_ib_lane_depth(sr_ib_lane_t *lane, uint32_t wr)
{
    lane->max_wr = wr;
    lane->sig_every = sr_ib_sig_for(wr);
}

/*
 * A connected peer of another job (a KV-cache worker meets many) comes on
 * top of the job's peers: with the depth of the job's QPs each, a few
 * hundred of them would cost what the budget keeps a whole job below.  So
 * each one shares the budget with all that came before it (never deeper
 * than the job's QPs; those made already keep theirs).  A smaller queue
 * signals more often, every wr/4-th WR as the job's do (sr_ib_lane_depth).
 */
uint32_t sr_ib_conn_wr(sr_tl_ctx_t *ctx)
{
    if (!ctx->wr_auto)
        return ctx->max_wr;  /* SYMRAIL_IB_MAX_WR: what the user set */
    uint32_t n = __atomic_add_fetch(&ctx->wr_peers, 1, __ATOMIC_RELAXED);
    uint32_t wr = sr_ib_budget_wr(ctx, n);
    return wr < ctx->max_wr ? wr : ctx->max_wr;
}

/* A connected peer whose QPs could not all be made: its share goes back.
 * (One that disconnects keeps its QPs, in error, until fini, and its share
 * with them.) */
void sr_ib_conn_wr_put(sr_tl_ctx_t *ctx)
{
    if (ctx->wr_auto)
        __atomic_sub_fetch(&ctx->wr_peers, 1, __ATOMIC_RELAXED);
}

struct ibv_qp *sr_ib_qp_create(sr_tl_ctx_t *ctx, sr_ib_rail_t *rail, struct ibv_cq *cq,
                               uint32_t send_wr, struct ibv_srq *srq)
{
    /* Data QPs put up to 48 bytes inline, notify QPs (those on the shared
     * receive queue) only their 16-byte credit writes: a Soft-RoCE send
     * WQE is 208 bytes plus the larger of the inline data and the SGEs,
     * rounded up to a power of two, so 64 bytes inline would double every
     * queue (48 and 16 both keep it at 256). */
    struct ibv_qp_init_attr ia = {
        .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC, .sq_sig_all = 0,
        .cap = { .max_send_wr = send_wr, .max_recv_wr = srq ? 0 : 1,
                 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1,
                 .max_inline_data = srq ? 16 : SR_IB_INLINE_QP },
    };
    struct ibv_qp *qp = ibv_create_qp(rail->dev->pd, &ia);
    if (qp == NULL) {
        sr_error("verbs: ibv_create_qp on %s:%d failed: %m", rail->dev->name, rail->port);
        return NULL;
    }
    /* Read by posting threads: changed (once, in practice) with an atomic store. */
    if (srq == NULL && (ctx->max_inline < 0 || (int)ia.cap.max_inline_data < ctx->max_inline))
        __atomic_store_n(&ctx->max_inline, (int)ia.cap.max_inline_data, __ATOMIC_RELAXED);
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (uint8_t)rail->port,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE,
    };
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                  IBV_QP_ACCESS_FLAGS) != 0) {
        sr_error("verbs: QP %u to INIT on %s:%d failed: %m", qp->qp_num, rail->dev->name,
                 rail->port);
        ibv_destroy_qp(qp);
        return NULL;
    }
    return qp;
}

int sr_ib_qp_move(struct ibv_qp *qp, const sr_ib_rail_t *rail, const sr_ib_rail_addr_t *ra,
                  uint32_t rqpn, int pe, const char **step_p)
{
    enum ibv_mtu mtu = (enum ibv_mtu)(rail->mtu < ra->mtu ? rail->mtu : ra->mtu);
    if (rail->mtu != ra->mtu)
        sr_info("verbs: MTU %d on %s:%d, %d at PE %d's %s: using %d", 128 << rail->mtu,
                rail->dev->name, rail->port, 128 << ra->mtu, pe, ra->dev, 128 << mtu);
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = rqpn,
        .rq_psn = sr_ib_psn(rqpn), .max_dest_rd_atomic = 16, .min_rnr_timer = 12,
        .ah_attr = { .is_global = 0, .dlid = (uint16_t)ra->lid, .sl = 0, .src_path_bits = 0,
                     .port_num = (uint8_t)rail->port },
    };
    if (rail->is_eth || ra->is_eth) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, ra->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)rail->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    /* rdma-core returns the errno (and may leave errno itself alone). */
    int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc != 0) {
        *step_p = "RTR";
        return rc > 0 ? rc : errno ? errno : EINVAL;
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = SR_IB_QP_TIMEOUT;
    a.retry_cnt = SR_IB_QP_RETRY;
    a.rnr_retry = SR_IB_QP_RNR_RETRY;
    a.sq_psn = sr_ib_psn(qp->qp_num);
    a.max_rd_atomic = 16;
    rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                   IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc != 0) {
        *step_p = "RTS";
        return rc > 0 ? rc : errno ? errno : EINVAL;
    }
    return 0;
}

symrail_status_t sr_ib_qp_connect(struct ibv_qp *qp, const sr_ib_rail_t *rail,
                                  const sr_ib_rail_addr_t *ra, uint32_t rqpn, int pe)
{
    const char *step = "";
    int err = sr_ib_qp_move(qp, rail, ra, rqpn, pe, &step);
    if (err == 0)
        return SYMRAIL_OK;
    sr_error("verbs: QP %u to %s (peer PE %d QP %u on %s) failed: %s", qp->qp_num, step, pe,
             rqpn, ra->dev, strerror(err));
    return SYMRAIL_ERR_TRANSPORT;
}

void sr_ib_rail_addr_fill(const sr_ib_rail_t *rail, sr_ib_rail_addr_t *ra_p)
{
    memset(ra_p, 0, sizeof(*ra_p));
    snprintf(ra_p->dev, sizeof(ra_p->dev), "%s", rail->dev->name);
    memcpy(ra_p->gid, rail->gid.raw, 16);
    ra_p->port = (uint32_t)rail->port;
    ra_p->lid = rail->lid;
    ra_p->mtu = rail->mtu;
    ra_p->is_eth = rail->is_eth;
    ra_p->prefix_bits = rail->prefix_bits;
}

static size_t sr_ib_addr_len(const sr_tl_ctx_t *ctx)
{
    return sizeof(sr_ib_addr_hdr_t) + (size_t)ctx->nrails * sizeof(sr_ib_rail_addr_t) +
           (size_t)ctx->params.n_pes * (ctx->nrails * ctx->qpp + 1) * sizeof(uint32_t);
}

symrail_status_t sr_ib_addr_pack(sr_tl_ctx_t *ctx, void *buf, size_t *len_p)
{
    size_t len = sr_ib_addr_len(ctx);
    if (buf == NULL || *len_p < len) {
        *len_p = len;
        return buf == NULL ? SYMRAIL_OK : SYMRAIL_ERR_TRUNCATED;
    }
    sr_ib_addr_hdr_t hdr = { .magic = SR_IB_MAGIC, .pid = (int32_t)getpid(),
                             .nrails = (uint32_t)ctx->nrails,
                             .n_pes = (uint32_t)ctx->params.n_pes, .qpp = ctx->qpp,
                             .depth = ctx->depth, .window = ctx->window0,
                             .scratch_addr = (uintptr_t)ctx->scratch };
    for (uint32_t r = 0; r < ctx->nregions; r++)
        hdr.region_addr[r] = (uintptr_t)ctx->regions[r].addr;
    char *p = buf;
    memcpy(p, &hdr, sizeof(hdr));
    p += sizeof(hdr);
    for (int r = 0; r < ctx->nrails; r++) {
        sr_ib_rail_t *rail = &ctx->rails[r];
        sr_ib_rail_addr_t ra;
        sr_ib_rail_addr_fill(rail, &ra);
        for (uint32_t g = 0; g < ctx->nregions; g++)
            ra.rkey[g] = rail->dev->mr[g] ? rail->dev->mr[g]->rkey : 0;
        ra.scratch_rkey = rail->dev->scratch_mr->rkey;
        memcpy(p, &ra, sizeof(ra));
        p += sizeof(ra);
    }
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        for (int l = 0; l < ctx->nrails * (int)ctx->qpp; l++) {
            sr_ib_lane_t *lane = &ctx->lanes[(size_t)pe * ctx->nrails * ctx->qpp + l];
            uint32_t qpn = lane->qp ? lane->qp->qp_num : 0;
            memcpy(p, &qpn, 4);
            p += 4;
        }
        uint32_t nqpn = ctx->nqps[pe] ? ctx->nqps[pe]->qp_num : 0;
        memcpy(p, &nqpn, 4);
        p += 4;
    }
    *len_p = len;
    return SYMRAIL_OK;
}

int sr_ib_reachable(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len)
{
    sr_ib_addr_hdr_t hdr;
    if (!ctx->use[pe] || len < sizeof(hdr))
        return 0;
    memcpy(&hdr, addr, sizeof(hdr));
    if (!(hdr.magic == SR_IB_MAGIC && hdr.nrails > 0 && hdr.n_pes == (uint32_t)ctx->params.n_pes &&
          len == sizeof(hdr) + hdr.nrails * sizeof(sr_ib_rail_addr_t) +
                     (size_t)hdr.n_pes * (hdr.nrails * hdr.qpp + 1) * sizeof(uint32_t)))
        return 0;
    /* The peer made QPs for us too (it may not have, for a local peer). */
    uint32_t nqpn;
    size_t row = sizeof(hdr) + hdr.nrails * sizeof(sr_ib_rail_addr_t) +
                 ((size_t)ctx->params.my_pe * (hdr.nrails * hdr.qpp + 1) + hdr.nrails * hdr.qpp) *
                     sizeof(uint32_t);
    memcpy(&nqpn, (const char *)addr + row, 4);
    return nqpn != 0;
}

static void sr_ib_rail_link(const sr_ib_rail_addr_t *ra, sr_rail_link_t *link_p)
{
    memset(link_p, 0, sizeof(*link_p));
    link_p->is_eth = (int)ra->is_eth;
    memcpy(link_p->gid, ra->gid, 16);
    link_p->prefix_bits = ra->prefix_bits;
}

/* Within a job the lower PE's rails go first, so both sides compute the
 * same pairs; between jobs PE numbers mean nothing, and the acceptor's go
 * first (peer.c). */
void sr_ib_pair_rails(sr_tl_ctx_t *ctx, int pe, const sr_ib_rail_addr_t *ras, int nr, int first,
                      int *peer_of)
{
    sr_rail_link_t mine[SR_IB_MAX_RAILS], theirs[SR_IB_MAX_RAILS];
    int pair[SR_IB_MAX_RAILS];
    memset(theirs, 0, sizeof(theirs));
    for (int r = 0; r < ctx->nrails; r++) {
        sr_rail_link_t *l = &mine[r];
        memset(l, 0, sizeof(*l));
        l->is_eth = ctx->rails[r].is_eth;
        memcpy(l->gid, ctx->rails[r].gid.raw, 16);
        l->prefix_bits = ctx->rails[r].prefix_bits;
        peer_of[r] = -1;
    }
    for (int i = 0; i < nr; i++)
        sr_ib_rail_link(&ras[i], &theirs[i]);
    if (first) {
        sr_rails_pair(mine, ctx->nrails, theirs, nr, peer_of);
    } else {
        sr_rails_pair(theirs, nr, mine, ctx->nrails, pair);
        for (int i = 0; i < nr; i++)
            if (pair[i] >= 0)
                peer_of[pair[i]] = i;
    }
    for (int r = 0; r < ctx->nrails; r++)
        sr_debug("verbs: rail %s:%d pairs with PE %d's %s", ctx->rails[r].dev->name,
                 ctx->rails[r].port, pe, peer_of[r] >= 0 ? ras[peer_of[r]].dev : "(none)");
}

/*
 * A rail that reached the peer when the rails were found (its port was
 * active) and does not now (its link went down since: a move to RTR fails,
 * ENETUNREACH on RoCE) is left out for that peer, its lanes given up as a
 * repair gives a lane up, and the job goes on over the other rails.  The
 * peer, whose end of these lanes may well have connected, is told once the
 * wireup is over (a repair pass: sr_ib_tell_dead), so that its slices on
 * them go elsewhere at once.
 */
static void sr_ib_rail_left_out(sr_tl_ep_t *ep, int r, uint32_t qpp, uint32_t qpn,
                                const char *step, int err)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_rail_t *rail = &ctx->rails[r];
    for (uint32_t q = 0; q < ctx->qpp; q++) {
        sr_ib_lane_t *lane = &ep->lanes[r * ctx->qpp + q];
        lane->down = 1;
        lane->state = SR_IB_LANE_DEAD;
        lane->tell_dead = q < qpp && ep->pe != ctx->params.my_pe;
        sr_ib_revive_plan(ep, (int)(r * ctx->qpp + q));
    }
    SR_IB_STORE(ctx->repairs_pending, 1);
    /* One line for the rail, the cause with it; the other peers: debug. */
    if (rail->left_out++ == 0)
        sr_warn("verbs: rail %s:%d does not reach PE %d now (QP %u to %s failed: %s): left out "
                "for it, and for any other PE it does not reach, and tried again from time to "
                "time; the job goes on over the other rails", rail->dev->name, rail->port,
                ep->pe, qpn, step, strerror(err));
    else
        sr_debug("verbs: rail %s:%d left out for PE %d too (QP %u to %s failed: %s)",
                 rail->dev->name, rail->port, ep->pe, qpn, step, strerror(err));
}

symrail_status_t sr_ib_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                               sr_tl_ep_t **ep_p)
{
    sr_ib_addr_hdr_t hdr;
    const char *p = addr;
    memcpy(&hdr, p, sizeof(hdr));
    const char *rails = p + sizeof(hdr);
    const char *qpns = rails + hdr.nrails * sizeof(sr_ib_rail_addr_t);
    int me = ctx->params.my_pe;
    if (pe >= ctx->params.n_pes)
        return sr_ib_peer_connect(ctx, pe, addr, len, ep_p);

    sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return SYMRAIL_ERR_NOMEM;
    ep->ctx = ctx;
    ep->pe = pe;
    ep->pid = hdr.pid;
    ep->local = ctx->params.is_local[pe];
    uint32_t qpp = ctx->qpp < hdr.qpp ? ctx->qpp : hdr.qpp;
    int peer_of[SR_IB_MAX_RAILS];
    sr_ib_rail_addr_t ras[SR_IB_MAX_RAILS];
    int nr = hdr.nrails < SR_IB_MAX_RAILS ? (int)hdr.nrails : SR_IB_MAX_RAILS;
    for (int i = 0; i < nr; i++)
        memcpy(&ras[i], rails + i * sizeof(ras[i]), sizeof(ras[i]));
    sr_ib_pair_rails(ctx, pe, ras, nr, ctx->params.my_pe <= pe, peer_of);
    for (int r = 0; r < ctx->nrails; r++)
        ep->peer_rail[r] = (int8_t)peer_of[r];
    ep->peer_qpp = hdr.qpp;
    if (qpp != ctx->qpp || nr != ctx->nrails)
        sr_info("verbs: PE %d has %u rails x %u QPs, we have %d x %u: using %u QPs per pair of "
                "rails that reach each other", pe, hdr.nrails, hdr.qpp, ctx->nrails, ctx->qpp, qpp);
    ep->lanes = &ctx->lanes[(size_t)pe * ctx->nrails * ctx->qpp];
    for (uint32_t g = 0; g < SR_IB_MAX_REGIONS; g++)
        ep->raddr[g] = hdr.region_addr[g];
    /* The notify channel runs between the first rails of both PEs. */
    if (peer_of[0] != 0) {
        sr_error("verbs: rail %s:%d does not reach PE %d's first rail (%s): no notification "
                 "channel to it", ctx->rails[0].dev->name, ctx->rails[0].port, pe, ras[0].dev);
        free(ep);
        return SYMRAIL_ERR_TRANSPORT;
    }
    /* The peer's table row for us: its QPs dedicated to this PE. */
    const char *row = qpns + (size_t)me * (hdr.nrails * hdr.qpp + 1) * sizeof(uint32_t);
    for (int r = 0; r < ctx->nrails; r++) {
        int pr = peer_of[r];
        /* A rail with no counterpart at that peer is not used for it. */
        for (uint32_t q = 0; q < ctx->qpp; q++)
            if (pr < 0 || q >= qpp) {
                ep->lanes[r * ctx->qpp + q].down = 1;
                ep->lanes[r * ctx->qpp + q].state = SR_IB_LANE_DEAD;
            }
        if (pr < 0)
            continue;
        sr_ib_rail_addr_t ra = ras[pr];
        ep->rail_addr[r] = ra;
        for (uint32_t g = 0; g < SR_IB_MAX_REGIONS; g++)
            ep->rkey[r][g] = ra.rkey[g];
        int err = 0;
        for (uint32_t q = 0; q < qpp && err == 0; q++) {
            uint32_t rqpn;
            memcpy(&rqpn, row + (pr * hdr.qpp + q) * sizeof(uint32_t), 4);
            sr_ib_lane_t *lane = &ep->lanes[r * ctx->qpp + q];
            lane->rqpn = rqpn;
            const char *step = "";
            err = sr_ib_qp_move(lane->qp, lane->rail, &ra, rqpn, pe, &step);
            if (err == 0) {
                sr_ib_lane_connected(lane, &ra);
            } else if (r == 0) {
                sr_error("verbs: QP %u to %s (peer PE %d QP %u on %s) failed: %s; the "
                         "notification channel to PE %d runs on this rail: no verbs to it",
                         lane->qp->qp_num, step, pe, rqpn, ra.dev, strerror(err), pe);
                free(ep);
                return SYMRAIL_ERR_TRANSPORT;
            } else {
                sr_ib_rail_left_out(ep, r, qpp, lane->qp->qp_num, step, err);
            }
        }
        if (err != 0)
            continue;
        if (r == 0) {
            uint32_t nqpn;
            memcpy(&nqpn, row + hdr.nrails * hdr.qpp * sizeof(uint32_t), 4);
            /* Set before our QP accepts the peer's credit writes. */
            __atomic_store_n(&ctx->credits[2 * pe + 1],
                             hdr.window > SR_IB_CREDIT_STATIC ? hdr.window : SR_IB_CREDIT_STATIC,
                             __ATOMIC_RELEASE);
            symrail_status_t st = sr_ib_qp_connect(ctx->nqps[pe], &ctx->rails[0], &ra, nqpn, pe);
            if (st != SYMRAIL_OK) {
                free(ep);
                return st;
            }
            ep->nqp = ctx->nqps[pe];
            ep->n_limit = ep->n_limit_reported = ctx->window0;
            ep->credit_raddr = hdr.scratch_addr + 2 * (uint64_t)me * sizeof(uint64_t);
            ep->credit_rkey = ra.scratch_rkey;
        }
    }
    ep->nlanes = ctx->nrails * (int)ctx->qpp;
    ctx->eps[pe] = ep;
    *ep_p = ep;
    return SYMRAIL_OK;
}

void sr_ib_disconnect(sr_tl_ep_t *ep)
{
    /* QPs belong to the context and go at fini; the endpoint struct too. */
    if (ep->conn)
        sr_ib_peer_disconnect(ep);
}

int sr_ib_ep_lanes(sr_tl_ep_t *ep, uint32_t *weights_p, int max)
{
    int n = ep->nlanes < max ? ep->nlanes : max;
    for (int l = 0; l < n; l++) {
        sr_ib_lock(ep->ctx, &ep->lanes[l].lock);
        weights_p[l] = sr_ib_lane_weight(&ep->lanes[l]);
        sr_ib_unlock(ep->ctx, &ep->lanes[l].lock);
    }
    return n;
}
