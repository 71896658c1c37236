/*
 * RDMA verbs transport. Notification channel: receive buffers, credits, sends, the progress thread.
 */
#include "config.h"
#include "tl/verbs/ib.h"

#include <arpa/inet.h>

/* 0, or the errno of ibv_post_srq_recv (the callers log it: once for a
 * buffer that is posted again at every poll until it goes). */
static int sr_ib_post_recv_rc(sr_tl_ctx_t *ctx, uint32_t i)
{
    sr_ib_dev_t *dev = ctx->rails[0].dev;
    struct ibv_sge sge = { .addr = (uintptr_t)sr_ib_slot(ctx->recv_slots, i),
                           .length = SR_IB_MSG_SIZE, .lkey = dev->scratch_mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = SR_IB_WR_RECV | i, .sg_list = &sge, .num_sge = 1 }, *bad;
    return ibv_post_srq_recv(ctx->srq, &wr, &bad);
}

symrail_status_t sr_ib_post_recv(sr_tl_ctx_t *ctx, uint32_t i)
{
    int rc = sr_ib_post_recv_rc(ctx, i);
    if (rc != 0) {
        sr_error("verbs: ibv_post_srq_recv on %s failed: %s", ctx->rails[0].dev->name,
                 strerror(rc));
        return SYMRAIL_ERR_TRANSPORT;
    }
    return SYMRAIL_OK;
}

/* One more buffer for the pool (nlock held): it first pays back what the
 * pool lent to buffers that could not be posted again. */
static void sr_ib_pool_give(sr_tl_ctx_t *ctx, uint32_t n)
{
    uint32_t pay = n < ctx->pool_owed ? n : ctx->pool_owed;
    ctx->pool_owed -= pay;
    ctx->pool_free += n - pay;
}

/*
 * Buffer i goes back on the shared queue (nlock held); 1 when it is
 * posted.  One that could not be posted is not counted as posted: it waits
 * in ctx->unposted, in no window and not in the pool (a window of buffers
 * not posted would be an RNR), and goes again at the next poll.
 */
static int sr_ib_repost(sr_tl_ctx_t *ctx, uint32_t i)
{
    int rc = sr_ib_post_recv_rc(ctx, i);
    if (rc == 0)
        return 1;
    if (ctx->nunposted == 0)
        sr_error("verbs: ibv_post_srq_recv on %s failed: %s; the notification buffers it did "
                 "not take are posted again at every poll", ctx->rails[0].dev->name,
                 strerror(rc));
    ctx->unposted[ctx->nunposted++] = i;  /* each buffer at most once: never past nrecv */
    return 0;
}

/* A buffer that came back without a message (an error completion): it was
 * in some window or in the pool, which lends it while it is not posted. */
static void sr_ib_recv_back(sr_tl_ctx_t *ctx, uint32_t i)
{
    if (sr_ib_repost(ctx, i))
        return;
    if (ctx->pool_free > 0)
        ctx->pool_free--;
    else
        ctx->pool_owed++;
}

/* The buffers whose post failed, again (nlock held). */
static void sr_ib_repost_owed(sr_tl_ctx_t *ctx)
{
    while (ctx->nunposted > 0) {
        uint32_t i = ctx->unposted[ctx->nunposted - 1];
        if (sr_ib_post_recv_rc(ctx, i) != 0)
            return;
        ctx->nunposted--;
        sr_ib_pool_give(ctx, 1);
        if (ctx->nunposted == 0)
            sr_info("verbs: every notification buffer is posted again");
    }
}

/* ep's notify QP failed for good: the buffers of its window, kept posted
 * for it alone, go back to the pool for the others (nlock held). */
static void sr_ib_window_drop(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep)
{
    uint64_t w = ep->n_limit > ep->n_recv ? ep->n_limit - ep->n_recv : 0;
    ep->n_limit = ep->n_recv;
    sr_ib_pool_give(ctx, (uint32_t)w);
    sr_debug("verbs: PE %d's notification window of %llu buffers went back to the pool", ep->pe,
             (unsigned long long)w);
}

/* The notification CQ and the shared receive queue, with every buffer
 * posted.  The CQ has room for every receive, every send (bounded by the
 * send slots) and every credit write at once. */
symrail_status_t sr_ib_notify_init(sr_tl_ctx_t *ctx)
{
    sr_ib_dev_t *dev = ctx->rails[0].dev;
    struct ibv_device_attr da;
    if (ibv_query_device(dev->ctx, &da) != 0) {
        sr_error("verbs: ibv_query_device on %s failed: %m", dev->name);
        return SYMRAIL_ERR_TRANSPORT;
    }
    size_t n = (size_t)ctx->params.n_pes;
    size_t ncqe = ctx->nrecv + SR_IB_SEND_SLOTS + n * SR_IB_CREDIT_WRITES + 8;
    if (ncqe > (size_t)da.max_cqe || ctx->nrecv > (uint32_t)da.max_srq_wr) {
        sr_error("verbs: the notification queues for %zu PEs (SYMRAIL_IB_NOTIFY_POOL=%u) need "
                 "%zu CQ entries and %u shared receives, %s has at most %d and %d "
                 "(max_cqe, max_srq_wr)", n, (unsigned)ctx->params.env->ib_notify_pool, ncqe,
                 ctx->nrecv, dev->name, da.max_cqe, da.max_srq_wr);
        return SYMRAIL_ERR_INVALID;
    }
    ctx->nch = ibv_create_comp_channel(dev->ctx);
    ctx->ncq = ctx->nch && !sr_ib_init_fault(ctx, 2)
                   ? ibv_create_cq(dev->ctx, (int)ncqe, NULL, ctx->nch, 0) : NULL;
    if (ctx->ncq == NULL) {
        sr_error("verbs: creating the notification CQ on %s failed: %m", dev->name);
        return SYMRAIL_ERR_TRANSPORT;
    }
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = ctx->nrecv, .max_sge = 1 } };
    ctx->srq = sr_ib_init_fault(ctx, 5) ? NULL : ibv_create_srq(dev->pd, &sa);
    if (ctx->srq == NULL) {
        sr_error("verbs: creating a shared receive queue of %u on %s failed: %m", ctx->nrecv,
                 dev->name);
        return SYMRAIL_ERR_TRANSPORT;
    }
    ctx->unposted = calloc(ctx->nrecv, sizeof(*ctx->unposted));
    if (ctx->unposted == NULL) {
        sr_error("verbs: out of memory for the notification queue's %u buffers", ctx->nrecv);
        return SYMRAIL_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < ctx->nrecv; i++) {
        symrail_status_t st = sr_ib_post_recv(ctx, i);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

static void *sr_ib_thread(void *arg);

void sr_ib_wireup_done(sr_tl_ctx_t *ctx)
{
    if (ctx->thread_up)
        return;
    if (pipe(ctx->wake_pipe) != 0) {
        ctx->wake_pipe[0] = ctx->wake_pipe[1] = -1;
        sr_warn("verbs: no progress thread (pipe: %m); notifications progress in calls only");
        return;
    }
    uint64_t now = sr_time_ns();
    for (int pe = 0; pe < ctx->params.n_pes; pe++)
        if (ctx->eps[pe]) {
            __atomic_store_n(&ctx->eps[pe]->heard, now, __ATOMIC_RELAXED);
            ctx->eps[pe]->hb_sent = now;
        }
    ibv_req_notify_cq(ctx->ncq, 0);
    if (pthread_create(&ctx->thread, NULL, sr_ib_thread, ctx) != 0) {
        sr_warn("verbs: no progress thread; notifications progress in calls only");
        return;
    }
    ctx->thread_up = 1;
}

/* ---- notify channel -------------------------------------------------------------------- */

/* The endpoint whose notify QP is qpn (error completions of the shared
 * receive queue name no PE otherwise). */
static sr_tl_ep_t *sr_ib_ep_of_qpn(sr_tl_ctx_t *ctx, uint32_t qpn)
{
    for (int pe = 0; pe < ctx->params.n_pes; pe++)
        if (ctx->eps[pe] && ctx->eps[pe]->nqp && ctx->eps[pe]->nqp->qp_num == qpn)
            return ctx->eps[pe];
    return NULL;
}

/* A message of ep's peer arrived in receive buffer i; nlock held.  Its
 * buffer is posted again at once and goes back to the pool, and the
 * sender's window is grown back (credits.h). */
static void sr_ib_arrived(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep, uint32_t i, uint32_t byte_len)
{
    int pe = ep->pe;
    const char *slot = sr_ib_slot(ctx->recv_slots, i);
    uint32_t tag, len, internal;
    memcpy(&tag, slot, 4);
    memcpy(&len, slot + 4, 4);
    internal = len & SR_IB_MSG_INTERNAL;
    len &= ~SR_IB_MSG_INTERNAL;
    if (len > SR_TL_NOTIFY_MAX || len + SR_IB_MSG_HDR > byte_len) {
        sr_error("verbs: malformed notification from PE %d (%u bytes) dropped", pe, len);
        len = 0;
    }
    uint32_t ctl_op = 0;
    if (internal && len >= 4)
        memcpy(&ctl_op, slot + SR_IB_MSG_HDR, 4);
    /* A heartbeat says only that the peer lives: already noted. */
    if (ctl_op != SR_IB_CTL_HEARTBEAT &&
        sr_msgq_push_flags(&ctx->mq, pe, tag, internal, slot + SR_IB_MSG_HDR, len) != SYMRAIL_OK)
        sr_error("verbs: out of memory: notification from PE %d lost", pe);
    /* The slot is free again as soon as its content is copied. */
    ep->n_recv++;
    if (sr_unlikely(ep->nqp_error)) {
        /* Polled after its QP's failure gave the window back, this buffer
         * with it (sr_ib_window_drop): it is the pool's already, and the
         * dead QP gets no window again. */
        sr_ib_recv_back(ctx, i);
        ep->n_limit = ep->n_recv;
        if (internal)
            ep->n_released++;
        return;
    }
    if (sr_ib_repost(ctx, i))
        sr_ib_pool_give(ctx, 1);
    /* A sender past its window broke the rules: it gets the static one. */
    uint64_t w = ep->n_limit > ep->n_recv ? ep->n_limit - ep->n_recv : 0;
    uint32_t g = sr_ib_grant((uint32_t)w, ctx->pool_free, ctx->depth, ctx->pool_low);
    ep->n_limit += g;
    ctx->pool_free -= g;
    /* The transport consumes its own messages at once. */
    if (internal)
        ep->n_released++;
}

/* Polls the notification CQ; called with nlock held. */
int sr_ib_npoll(sr_tl_ctx_t *ctx)
{
    struct ibv_wc wc[SR_IB_POLL_BATCH];
    int total = 0, n;
    if (sr_unlikely(ctx->nunposted > 0))
        sr_ib_repost_owed(ctx);
    while ((n = ibv_poll_cq(ctx->ncq, SR_IB_POLL_BATCH, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            uint64_t kind = SR_IB_WR_KIND(wc[i].wr_id);
            uint32_t idx = (uint32_t)(wc[i].wr_id & 0xffffff);
            sr_tl_ep_t *ep;
            if (kind == SR_IB_WR_RECV) {
                /* The sender names itself in the immediate; its QP must agree. */
                uint32_t src = ntohl(wc[i].imm_data);
                ep = wc[i].status == IBV_WC_SUCCESS && (wc[i].wc_flags & IBV_WC_WITH_IMM) &&
                             src < (uint32_t)ctx->params.n_pes
                         ? ctx->eps[src] : NULL;
                if (ep && (ep->nqp == NULL || ep->nqp->qp_num != wc[i].qp_num))
                    ep = NULL;
                if (ep == NULL)
                    ep = sr_ib_ep_of_qpn(ctx, wc[i].qp_num);
            } else {
                int pe = (int)((wc[i].wr_id >> 24) & 0xffffffff);
                ep = pe < ctx->params.n_pes ? ctx->eps[pe] : NULL;
                if (kind == SR_IB_WR_SEND)
                    ctx->send_free[ctx->nsend_free++] = idx;
                else if (kind == SR_IB_WR_CREDIT && ep)
                    ep->n_cw--;
            }
            if (wc[i].status != IBV_WC_SUCCESS) {
                if (ep && !ep->nqp_error && wc[i].status != IBV_WC_WR_FLUSH_ERR)
                    sr_error("verbs: notify QP %u to PE %d failed: %s", wc[i].qp_num, ep->pe,
                             ibv_wc_status_str(wc[i].status));
                if (ep && !ep->nqp_error) {
                    ep->nqp_error = 1;
                    sr_ib_window_drop(ctx, ep);
                }
                /* The buffer belongs to the shared queue, not to the QP. */
                if (kind == SR_IB_WR_RECV)
                    sr_ib_recv_back(ctx, idx);
                continue;
            }
            if (ep == NULL) {
                if (kind == SR_IB_WR_RECV) {
                    sr_error("verbs: notification on QP %u from no known PE dropped",
                             wc[i].qp_num);
                    sr_ib_recv_back(ctx, idx);
                }
                continue;
            }
            __atomic_store_n(&ep->heard, sr_time_ns(), __ATOMIC_RELAXED);
            if (kind == SR_IB_WR_RECV)
                sr_ib_arrived(ctx, ep, idx, wc[i].byte_len);
            else if (kind == SR_IB_WR_SEND)
                ep->n_send_done++;
            total++;
        }
    }
    return total;
}

/* Tells the peer how many of its messages were consumed and how far its
 * window reaches (both counts only grow, so a write that lands late says
 * too little, never too much); nlock held. */
static void sr_ib_return_credit(sr_tl_ep_t *ep)
{
    if ((ep->n_released == ep->n_recv_reported && ep->n_limit == ep->n_limit_reported) ||
        ep->nqp_error || ep->n_cw >= SR_IB_CREDIT_WRITES)
        return;
    uint64_t val[2] = { ep->n_released, ep->n_limit };
    struct ibv_sge sge = { .addr = (uintptr_t)val, .length = 16, .lkey = 0 };
    struct ibv_send_wr wr = { .wr_id = SR_IB_WR_CREDIT | ((uint64_t)ep->pe << 24),
                              .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                              .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED }, *bad;
    wr.wr.rdma.remote_addr = ep->credit_raddr;
    wr.wr.rdma.rkey = ep->credit_rkey;
    int rc = ibv_post_send(ep->nqp, &wr, &bad);
    if (rc == 0) {
        ep->n_recv_reported = val[0];
        ep->n_limit_reported = val[1];
        ep->n_cw++;
    } else if (rc != ENOMEM)
        sr_error("verbs: returning credits to PE %d failed: %s", ep->pe, strerror(rc));
}

void sr_ib_return_credits(sr_tl_ctx_t *ctx)
{
    for (int pe = 0; pe < ctx->params.n_pes; pe++)
        if (ctx->eps[pe])
            sr_ib_return_credit(ctx->eps[pe]);
}

/* The application consumed a message from ep's peer: its credit goes back
 * now, not when the message was copied out of its receive buffer, so a
 * receiver that does not consume stalls its senders. */
void sr_ib_notify_release(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    pthread_mutex_lock(&ctx->nlock);
    ep->n_released++;
    sr_ib_return_credit(ep);
    pthread_mutex_unlock(&ctx->nlock);
}

static void *sr_ib_thread(void *arg)
{
    sr_tl_ctx_t *ctx = arg;
    struct pollfd pfd[2] = { { .fd = ctx->nch->fd, .events = POLLIN },
                             { .fd = ctx->wake_pipe[0], .events = POLLIN } };
    int ms = 50;
    if (ctx->hb_ns && ctx->hb_ns / 2000000 < (uint64_t)ms)
        ms = ctx->hb_ns / 2000000 > 0 ? (int)(ctx->hb_ns / 2000000) : 1;
    while (!SR_IB_LOAD(ctx->stop)) {
        /* Bounded sleep: credits owed are returned and heartbeats sent even
         * without events. */
        if (poll(pfd, 2, ms) < 0 && errno != EINTR)
            break;
        if (SR_IB_LOAD(ctx->stop))
            break;
        if (pfd[0].revents & POLLIN) {
            struct ibv_cq *cq;
            void *cq_ctx;
            if (ibv_get_cq_event(ctx->nch, &cq, &cq_ctx) == 0) {
                ibv_ack_cq_events(cq, 1);
                ibv_req_notify_cq(cq, 0);
            }
        }
        pthread_mutex_lock(&ctx->nlock);
        sr_ib_npoll(ctx);
        sr_ib_return_credits(ctx);
        sr_ib_heartbeats(ctx);
        pthread_mutex_unlock(&ctx->nlock);
        sr_ib_revive_tick(ctx, sr_time_ns());
    }
    return NULL;
}

/* nlock held. */
static symrail_status_t sr_ib_send_locked(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                          size_t len, uint32_t flags)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    symrail_status_t st = SYMRAIL_OK;
    sr_ib_credit_t cr = { ep->n_sent, ep->n_send_done,
                          __atomic_load_n(&ctx->credits[2 * ep->pe], __ATOMIC_ACQUIRE),
                          __atomic_load_n(&ctx->credits[2 * ep->pe + 1], __ATOMIC_ACQUIRE) };
    int internal = (flags & SR_IB_MSG_INTERNAL) != 0;
    if (ep->nqp_error) {
        st = SYMRAIL_ERR_PEER_GONE;
    } else if (ctx->nsend_free == 0 ||
               !sr_ib_credit_avail(&cr, internal ? ctx->depth : ctx->slots,
                                   internal ? 0 : SR_IB_CTL_RESERVE, SR_IB_NQP_SENDS)) {
        st = SYMRAIL_ERR_AGAIN;  /* no credit (or send slot) until the peer catches up */
    } else {
        uint32_t si = ctx->send_free[--ctx->nsend_free];
        char *slot = sr_ib_slot(ctx->send_slots, si);
        uint32_t l32 = (uint32_t)len | flags;
        memcpy(slot, &tag, 4);
        memcpy(slot + 4, &l32, 4);
        if (len)
            memcpy(slot + SR_IB_MSG_HDR, payload, len);
        struct ibv_sge sge = { .addr = (uintptr_t)slot, .length = (uint32_t)(SR_IB_MSG_HDR + len),
                               .lkey = ctx->rails[0].dev->scratch_mr->lkey };
        struct ibv_send_wr wr = { .wr_id = SR_IB_WR_SEND | ((uint64_t)ep->pe << 24) | si,
                                  .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
                                  .send_flags = IBV_SEND_SIGNALED,
                                  .imm_data = htonl((uint32_t)ctx->params.my_pe) }, *bad;
        int rc = ibv_post_send(ep->nqp, &wr, &bad);
        if (rc == 0) {
            ep->n_sent++;
            ep->hb_sent = sr_time_ns();
        } else {
            ctx->send_free[ctx->nsend_free++] = si;
            sr_error("verbs: sending a notification to PE %d (QP %u) failed: %s", ep->pe,
                     ep->nqp->qp_num, strerror(rc));
            st = SYMRAIL_ERR_TRANSPORT;
        }
    }
    return st;
}

symrail_status_t sr_ib_send_msg(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                size_t len, uint32_t flags)
{
    if (len > SR_TL_NOTIFY_MAX)
        return SYMRAIL_ERR_INVALID;
    pthread_mutex_lock(&ep->ctx->nlock);
    symrail_status_t st = sr_ib_send_locked(ep, tag, payload, len, flags);
    pthread_mutex_unlock(&ep->ctx->nlock);
    return st;
}

/* A heartbeat to every peer we sent nothing to for the interval, so that
 * it hears from us while we compute; nlock held.  It is an internal
 * message: it takes one of the reserved receive buffers, never an
 * application credit, and the receiver consumes it at once. */
void sr_ib_heartbeats(sr_tl_ctx_t *ctx)
{
    if (ctx->hb_ns == 0)
        return;
    uint64_t now = sr_time_ns();
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        sr_tl_ep_t *ep = ctx->eps[pe];
        if (ep == NULL || pe == ctx->params.my_pe || ep->nqp_error || now - ep->hb_sent < ctx->hb_ns)
            continue;
        sr_ib_ctl_t c = { SR_IB_CTL_HEARTBEAT, 0, 0, 0 };
        if (sr_ib_send_locked(ep, 0, &c, sizeof(c), SR_IB_MSG_INTERNAL) != SYMRAIL_OK)
            ep->hb_sent = now;  /* no credit now: the peer is behind; try next interval */
    }
}

uint64_t sr_ib_ep_heard(sr_tl_ep_t *ep)
{
    if (ep->conn)
        return 0;  /* no heartbeats between jobs: the peer's TCP endpoint tells */
    return __atomic_load_n(&ep->heard, __ATOMIC_RELAXED);
}

symrail_status_t sr_ib_notify(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                              size_t len)
{
    return sr_ib_send_msg(ep, tag, payload, len, 0);
}
