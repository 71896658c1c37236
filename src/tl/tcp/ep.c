/*
 * TCP transport: endpoints: lanes, liveness, and put, get, atomics, notifications.
 */
#include "config.h"
#include "tl/tcp/tcp.h"

#include <sys/ioctl.h>

static sr_tcp_op_t *sr_tcp_op_get(sr_tcp_conn_t *c);
static int sr_tcp_check_lane(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, uint64_t now);

int sr_tcp_ep_lanes(sr_tl_ep_t *ep, uint32_t *weights_p, int max)
{
    int n = ep->nlanes < max ? ep->nlanes : max;
    if (ep->self) {
        weights_p[0] = 1;
        return 1;
    }
    for (int l = 0; l < n; l++)
        weights_p[l] = sr_tcp_up(ep->lanes[l]) ? 1 : 0;
    return n;
}

/* The frames our lanes to ep hold back (SR_TL_COMP_MORE) go out. */
void sr_tcp_ep_post_end(sr_tl_ep_t *ep)
{
    for (int l = 0; l < ep->nlanes; l++) {
        sr_tcp_conn_t *c = ep->lanes[l];
        if (c == NULL || __atomic_load_n(&c->tx_held, __ATOMIC_RELAXED) == 0)
            continue;
        sr_tcp_lock(c);
        if (c->state == SR_TCP_UP && c->tx_held)
            sr_tcp_flush(ep->ctx, c);
        sr_tcp_unlock(c);
    }
}

/*
 * Whether lane c, still up as far as its reader knows, was closed or reset
 * by its peer with nothing left that its reader has not handled: nothing in
 * the socket and nothing in its buffer (a BYE there says the peer left, not
 * that it died).  Looks only: poll and the queue's length leave the
 * socket's error for its reader.  No lock: the answer counts only while the
 * lane is still up on the same fd after the look, as its fd is closed only
 * after its state leaves UP (sr_tcp_conn_fail).
 */
static int sr_tcp_lane_ended(const sr_tcp_conn_t *c)
{
    int fd = __atomic_load_n(&c->fd, __ATOMIC_ACQUIRE);
    if (fd < 0)
        return 0;
    struct pollfd p = { .fd = fd, .events = POLLRDHUP };
    int queued = 0;
    if (poll(&p, 1, 0) != 1 || !(p.revents & (POLLRDHUP | POLLHUP | POLLERR)) ||
        ioctl(fd, FIONREAD, &queued) != 0 || queued != 0)
        return 0;
    size_t lo = __atomic_load_n(&c->rx_lo, __ATOMIC_RELAXED);
    size_t hi = __atomic_load_n(&c->rx_hi, __ATOMIC_RELAXED);
    return lo == hi && __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == SR_TCP_UP &&
           __atomic_load_n(&c->fd, __ATOMIC_ACQUIRE) == fd;
}

int sr_tcp_ep_alive(const sr_tl_ep_t *ep)
{
    int up = 0, down = 0;
    for (int l = 0; l < ep->nlanes; l++) {
        if (sr_tcp_up(ep->lanes[l]))
            up++;
        else if (ep->lanes[l])
            down++;
    }
    if (up == 0 || down == 0)
        return up > 0;
    /* A peer that died closes its lanes one after the other, and a lane
     * nobody posts on is read only when one does: when some lane has been
     * lost, the others' sockets are asked too, so that the last one of a
     * dead peer does not look up until it is used. */
    for (int l = 0; l < ep->nlanes; l++)
        if (sr_tcp_up(ep->lanes[l]) && !sr_tcp_lane_ended(ep->lanes[l]))
            return 1;
    return 0;
}

/* A local peer's lanes all down do not say that it died: a lane reset
 * (or the fault hook) closes them too, and its process says better. */
int sr_tcp_peer_gone(const sr_tl_ep_t *ep)
{
    if (__atomic_load_n(&ep->ctx->bye[ep->pe], __ATOMIC_RELAXED))
        return 1;
    if (ep->local && ep->pid > 0)
        return sr_pid_gone(ep->pid);
    return !sr_tcp_ep_alive(ep);
}

/* Fails request `op` of ours as unresponsive now, leaving it pending so
 * that its reply, if it ever comes, still finds it: the reply then goes
 * nowhere.  -1 when that cannot be done (no memory).  c's lock held. */
static int sr_tcp_abandon(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, sr_tcp_op_t *op)
{
    sr_tcp_op_t *proxy = sr_tcp_op_get(c);
    sr_tcp_tx_t *tx = c->tx_head;
    if (proxy == NULL)
        return -1;
    while (tx && tx != &op->tx)
        tx = tx->next;
    if (tx && op->tx.dlen) {
        /* Still (partly) queued: the caller may reuse its buffer once told. */
        char *copy = malloc(op->tx.dlen);
        if (copy == NULL) {
            sr_tcp_op_put(proxy);
            return -1;
        }
        sr_copy(copy, op->tx.data, op->tx.dlen);
        op->tx.data = op->copy = copy;
    }
    proxy->comp = op->comp;
    op->comp = NULL;
    op->dst = NULL;
    sr_tcp_done_push(ctx, proxy, SYMRAIL_ERR_PEER_UNRESPONSIVE);
    return 0;
}

/* Peers that stopped answering our requests.  A dead link resets nothing,
 * and a stopped process looks the same: silence is all there is to see, so
 * the requests fail but the connections stay, in case the peer resumes.
 * progress_lock held. */
void sr_tcp_check_lanes(sr_tl_ctx_t *ctx, uint64_t now)
{
    ctx->next_out_check_ns = now + SR_TCP_CHECK_NS;
    for (sr_tcp_conn_t *c = __atomic_load_n(&ctx->out_conns, __ATOMIC_ACQUIRE); c;
         c = c->next) {
        sr_tcp_lock(c);
        if (sr_tcp_check_lane(ctx, c, now) != 0)
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_PEER_UNRESPONSIVE);
        sr_tcp_unlock(c);
    }
}

/* One lane of sr_tcp_check_lanes; c's lock held.  -1: no memory, close it. */
static int sr_tcp_check_lane(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, uint64_t now)
{
    /* Another thread may have posted (and stamped) since `now` was read. */
    if (c->state != SR_TCP_UP || c->nops == 0 || c->last_rx_ns >= now ||
        now - c->last_rx_ns <= ctx->dead_ns)
        return 0;
    sr_tl_ep_t *ep = c->ep;
    uint32_t n = 0;
    for (sr_tcp_op_t *op = c->pend_head; op; op = op->next) {
        if (op->comp == NULL || op->t_ns >= now || now - op->t_ns <= ctx->dead_ns)
            continue;
        if (sr_tcp_abandon(ctx, c, op) != 0) {
            sr_error("tcp: out of memory while failing requests to PE %d: its lane %d "
                     "is closed", ep->pe, c->lane);
            return -1;
        }
        n++;
    }
    if (n == 0)
        return 0;
    if (!__atomic_load_n(&ep->unresp, __ATOMIC_RELAXED))
        sr_error("tcp: PE %d (%s) has not answered for %llu ms: %u requests fail, and "
                 "new ones until it answers again (peer unresponsive)", ep->pe, c->name,
                 (unsigned long long)((now - c->last_rx_ns) / 1000000), n);
    /* The time first: a post that sees the mark compares against it. */
    __atomic_store_n(&ep->unresp_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&ep->unresp, 1, __ATOMIC_RELEASE);
    return 0;
}

/* c's lock held.  The pool is the lane's; what other threads finished
 * waits on ops_back until the pool runs dry. */
static sr_tcp_op_t *sr_tcp_op_get(sr_tcp_conn_t *c)
{
    if (sr_unlikely(c->ops.free == NULL) && c->mt)
        c->ops.free = __atomic_exchange_n(&c->ops_back, NULL, __ATOMIC_ACQUIRE);
    sr_tcp_op_t *op = sr_pool_get(&c->ops);
    if (sr_unlikely(op == NULL))
        return NULL;
    memset(op, 0, sizeof(*op));
    op->tx.kind = SR_TCP_TX_OP;
    op->tx.hlen = SR_TCP_HDR_LEN;
    op->conn = c;
    return op;
}

/* Only after the op's reply (so its tx has left the send queue) or after
 * its connection failed (which drops the queue first).  From any thread
 * when mt: then onto the lane's return stack (the pool's free-list link is
 * the object's first word, so the stack is a free list as it stands). */
void sr_tcp_op_put(sr_tcp_op_t *op)
{
    sr_tcp_conn_t *c = op->conn;
    free(op->copy);
    if (!c->mt) {
        sr_pool_put(&c->ops, op);
        return;
    }
    void *head = __atomic_load_n(&c->ops_back, __ATOMIC_RELAXED);
    do
        *(void **)op = head;
    while (!__atomic_compare_exchange_n((void **)&c->ops_back, &head, op, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
}

/* Why lane `lane` takes nothing. */
static symrail_status_t sr_tcp_lane_gone(sr_tl_ep_t *ep)
{
    return sr_tcp_peer_gone(ep) ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_ERR_TRANSPORT;
}

/* Posts a request (frame `f`, `len` data bytes in flight, `dlen` of them
 * sent from `data`, the reply's data to `dst`) on lane c; its lock held
 * when mt. */
static inline __attribute__((always_inline)) symrail_status_t
sr_tcp_post(sr_tl_ep_t *ep, sr_tcp_conn_t *c, sr_tcp_frame_t *f, size_t len, const void *data,
            size_t dlen, void *dst, uint32_t rkey, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (sr_unlikely(c->state != SR_TCP_UP))
        return sr_tcp_lane_gone(ep);
    if (sr_unlikely(__atomic_load_n(&ep->unresp, __ATOMIC_ACQUIRE))) {
        if (__atomic_load_n(&ctx->heard[ep->pe], __ATOMIC_RELAXED) <=
            __atomic_load_n(&ep->unresp_ns, __ATOMIC_RELAXED))
            return SYMRAIL_ERR_PEER_UNRESPONSIVE;
        __atomic_store_n(&ep->unresp, 0, __ATOMIC_RELAXED);  /* it answers again */
    }
    if (c->nops >= ctx->max_ops || (c->nops > 0 && c->inflight + len > ctx->max_inflight)) {
        sr_tcp_count(&c->n_full, 1);
        /* What is held back goes out now: its replies are what makes room. */
        if (c->tx_held)
            sr_tcp_flush(ctx, c);
        return SYMRAIL_ERR_AGAIN;
    }
    sr_tcp_op_t *op = sr_tcp_op_get(c);
    if (sr_unlikely(op == NULL))
        return SYMRAIL_ERR_NOMEM;
    op->comp = comp;
    op->tx.data = data;
    op->tx.dlen = dlen;
    op->dst = dst;
    f->id = op->id = c->next_id++;
    sr_tcp_frame_encode(f, op->tx.hdr);
    op->op = f->op;
    op->rkey = (uint16_t)rkey;
    op->len = len;
    op->next = NULL;
    op->t_ns = sr_time_ns();
    if (c->nops == 0)
        c->last_rx_ns = op->t_ns;  /* the silence to time starts now */
    if (c->pend_tail)
        c->pend_tail->next = op;
    else
        c->pend_head = op;
    c->pend_tail = op;
    c->nops++;
    c->inflight += len;
    /* More of the same run follows (SR_TL_COMP_MORE): up to SR_TCP_GATHER
     * frames wait for one sendmsg, sent by ep_post_end if not before.  A
     * queue that waits for EPOLLOUT already is left to it. */
    int idle = sr_tcp_tx_idle(c);
    sr_tcp_enqueue(c, &op->tx);
    if (idle) {
        if (comp && (comp->flags & SR_TL_COMP_MORE) && c->tx_held + 1 < SR_TCP_GATHER)
            __atomic_store_n(&c->tx_held, c->tx_held + 1, __ATOMIC_RELAXED);
        else
            sr_tcp_flush(ctx, c);
    }
    /* Slices only: the core retries those, not atomics. */
    if (sr_unlikely(ctx->fault_lane == c->lane) && f->op != SR_TCP_OP_AMO &&
        ++c->posted == ctx->fault_after && c->state == SR_TCP_UP) {
        sr_warn("tcp: lane %d to PE %d (%s) is down: test fault hook (SYMRAIL_TCP_FAULT_CONN)",
                c->lane, ep->pe, c->name);
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
    }
    sr_tcp_count(&c->n_posted, 1);
    if (f->op != SR_TCP_OP_AMO) {
        sr_tcp_count(&c->n_slices, 1);
        sr_tcp_count(&c->n_bytes, len);
    }
    /* Failed on the way out or not: the outcome arrives through progress(). */
    return SR_TL_INPROGRESS;
}

/* The same under the lane's lock, out of line: the single-threaded path
 * pays one branch for it. */
static __attribute__((noinline)) symrail_status_t
sr_tcp_post_locked(sr_tl_ep_t *ep, sr_tcp_conn_t *c, sr_tcp_frame_t *f, size_t len,
                   const void *data, size_t dlen, void *dst, uint32_t rkey, sr_tl_comp_t *comp)
{
    pthread_mutex_lock(&c->lock);
    symrail_status_t st = sr_tcp_post(ep, c, f, len, data, dlen, dst, rkey, comp);
    pthread_mutex_unlock(&c->lock);
    return st;
}

static inline symrail_status_t sr_tcp_submit(sr_tl_ep_t *ep, int lane, sr_tcp_frame_t *f,
                                             size_t len, const void *data, size_t dlen,
                                             void *dst, sr_tl_comp_t *comp)
{
    /* The peer's segments by the owner's id and generation (frame.h). */
    uint32_t rkey = 0;
    if (sr_unlikely(f->region >= SR_TL_REGION_SEG0)) {
        rkey = f->region;
        const sr_tcp_rkey_t *k = sr_tcp_rkey_find(ep, rkey);
        if (k == NULL || !sr_tcp_span_ok(k->len, f->off, len))
            return SYMRAIL_ERR_INVALID;
        f->region = k->region;
        f->b = (uint32_t)__atomic_load_n(&k->key, __ATOMIC_RELAXED);
    }
    if (sr_unlikely(lane < 0 || lane >= ep->nlanes))
        return SYMRAIL_ERR_INVALID;
    sr_tcp_conn_t *c = ep->lanes[lane];
    if (sr_unlikely(c == NULL))
        return sr_tcp_lane_gone(ep);
    if (sr_unlikely(c->mt))
        return sr_tcp_post_locked(ep, c, f, len, data, dlen, dst, rkey, comp);
    return sr_tcp_post(ep, c, f, len, data, dlen, dst, rkey, comp);
}

static symrail_status_t sr_tcp_self_seg(sr_tl_ep_t *ep, uint32_t rkey, uint64_t off, void *buf,
                                        size_t len, int is_put)
{
    const sr_tcp_rkey_t *k = sr_tcp_rkey_find(ep, rkey);
    return k ? sr_tcp_seg_self(ep, rkey, k, off, buf, len, is_put) : SYMRAIL_ERR_INVALID;
}

symrail_status_t sr_tcp_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                            uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (ep->self) {
        if (region >= SR_TL_REGION_SEG0)
            return sr_tcp_self_seg(ep, region, roff, (void *)src, len, 1);
        sr_copy(ctx->base[region] + roff, src, len);
        return SYMRAIL_OK;
    }
    if (len > SR_TCP_MAX_PAYLOAD)
        return SYMRAIL_ERR_INVALID;
    sr_tcp_frame_t f = { .op = SR_TCP_OP_PUT, .region = region, .plen = (uint32_t)len,
                         .off = roff };
    return sr_tcp_submit(ep, lane, &f, len, src, len, NULL, comp);
}

symrail_status_t sr_tcp_get(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region,
                            uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (ep->self) {
        if (region >= SR_TL_REGION_SEG0)
            return sr_tcp_self_seg(ep, region, roff, dst, len, 0);
        sr_copy(dst, ctx->base[region] + roff, len);
        return SYMRAIL_OK;
    }
    if (len > SR_TCP_MAX_PAYLOAD)
        return SYMRAIL_ERR_INVALID;
    sr_tcp_frame_t f = { .op = SR_TCP_OP_GET, .region = region, .off = roff, .a = len };
    return sr_tcp_submit(ep, lane, &f, len, NULL, 0, dst, comp);
}

_Static_assert(SR_TCP_AMO_W32 == (int)SR_TL_AMO_W32 && SR_TCP_AMO_MAX + 1 == SR_TL_AMO_NKINDS,
               "the wire carries sr_tl_amo_t as it is");

symrail_status_t sr_tcp_atomic(sr_tl_ep_t *ep, int lane, sr_tl_amo_t kind, uint32_t region,
                               uint64_t roff, uint64_t operand, uint64_t compare,
                               uint64_t *result_p, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    /* Segments take put and get only (frame.h). */
    if ((unsigned)kind > SR_TCP_AMO_MAX || region >= SR_TL_REGION_SEG0)
        return SYMRAIL_ERR_UNSUPPORTED;
    if (ep->self) {
        uint64_t old;
        sr_cpu_amo(ctx->base[region] + roff, kind, operand, compare, &old);  /* kind checked */
        if (result_p)
            *result_p = old;
        return SYMRAIL_OK;
    }
    sr_tcp_frame_t f = { .op = SR_TCP_OP_AMO, .sub = (uint8_t)kind, .region = region,
                         .off = roff, .a = operand, .b = compare };
    symrail_status_t st = sr_tcp_submit(ep, lane, &f, 0, NULL, 0, result_p, comp);
    /* Nothing was sent: the core may pick a lane that is still up. */
    if (st == SYMRAIL_ERR_TRANSPORT && sr_tcp_ep_check(ep) == SYMRAIL_OK)
        st = SYMRAIL_ERR_AGAIN;
    return st;
}

_Static_assert(SR_TCP_NOTIFY_MAX >= SR_TL_NOTIFY_MAX, "a TCP notify frame carries a transport message");

symrail_status_t sr_tcp_notify(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                               size_t len)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    symrail_status_t st = SYMRAIL_OK;
    if (len > SR_TL_NOTIFY_MAX)
        return SYMRAIL_ERR_INVALID;
    if (ep->self) {
        sr_tcp_msg_push(ctx, ep->pe, tag, payload, (uint32_t)len);
        return SYMRAIL_OK;
    }
    /* Always the first lane that is up: one connection keeps them in order. */
    sr_tcp_conn_t *c = NULL;
    for (int l = 0; l < ep->nlanes && c == NULL; l++) {
        if (!sr_tcp_up(ep->lanes[l]))
            continue;
        c = ep->lanes[l];
        sr_tcp_lock(c);
        if (c->state != SR_TCP_UP) {  /* went down meanwhile */
            sr_tcp_unlock(c);
            c = NULL;
        }
    }
    if (c == NULL)
        return sr_tcp_peer_gone(ep) ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_ERR_TRANSPORT;
    /* Threads sending on two lanes (one went down meanwhile) count on one
     * counter: each takes its slot with a compare-exchange. */
    uint64_t sent = __atomic_load_n(&ep->n_sent, __ATOMIC_RELAXED);
    sr_tcp_txbuf_t *b;
    do {
        if (sent - __atomic_load_n(&ep->n_credit, __ATOMIC_RELAXED) >=
            ctx->params.env->notify_slots) {
            st = SYMRAIL_ERR_AGAIN;  /* the receiver has not consumed enough yet */
            goto out;
        }
    } while (!__atomic_compare_exchange_n(&ep->n_sent, &sent, sent + 1, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    if ((b = sr_tcp_txbuf_get(ctx, c)) == NULL) {
        __atomic_fetch_sub(&ep->n_sent, 1, __ATOMIC_RELAXED);
        st = SYMRAIL_ERR_NOMEM;
        goto out;
    }
    sr_tcp_frame_t f = { .op = SR_TCP_OP_NOTIFY, .plen = (uint32_t)len, .a = tag };
    sr_tcp_frame_encode(&f, b->tx.hdr);
    if (len)
        memcpy(b->inl, payload, len);
    b->tx.data = (const char *)b->inl;
    b->tx.dlen = len;
    int idle = sr_tcp_tx_idle(c);
    sr_tcp_enqueue(c, &b->tx);
    if (idle)
        sr_tcp_flush(ctx, c);
out:
    sr_tcp_unlock(c);
    return st;
}

/* Tells PE `pe` how many of its notifications the application consumed
 * (`more` since the last call). */
void sr_tcp_return_credits(sr_tl_ctx_t *ctx, int pe, uint64_t more)
{
    pthread_mutex_lock(&ctx->io_lock);
    ctx->consumed[pe] += more;
    sr_tcp_conn_t *c = ctx->credit_conn[pe];
    if (ctx->consumed[pe] != ctx->reported[pe] && c != NULL && c->state == SR_TCP_UP) {
        sr_tcp_frame_t f = { .op = SR_TCP_OP_CREDIT, .a = ctx->consumed[pe] };
        int idle = c->tx_head == NULL;
        if (sr_tcp_reply(ctx, c, &f, NULL) == 0) {
            ctx->reported[pe] = ctx->consumed[pe];
            if (idle)
                sr_tcp_flush(ctx, c);
        }
    }
    pthread_mutex_unlock(&ctx->io_lock);
}

void sr_tcp_notify_release(sr_tl_ep_t *ep)
{
    if (ep->self)
        return;  /* messages to oneself take no credit */
    sr_tcp_return_credits(ep->ctx, ep->pe, 1);
}

symrail_status_t sr_tcp_ep_check(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (ep->self)
        return SYMRAIL_OK;
    /* A PE of the job that finalized is not a failure; a connected peer that
     * said goodbye (disconnect, finalize) has left for good. */
    if (__atomic_load_n(&ctx->bye[ep->pe], __ATOMIC_RELAXED))
        return ep->pe < ctx->params.n_pes ? SYMRAIL_OK : SYMRAIL_ERR_PEER_GONE;
    return sr_tcp_peer_gone(ep) ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_OK;
}

uint64_t sr_tcp_ep_heard(sr_tl_ep_t *ep)
{
    if (ep->self)
        return sr_time_ns();
    return __atomic_load_n(&ep->ctx->heard[ep->pe], __ATOMIC_RELAXED);
}
