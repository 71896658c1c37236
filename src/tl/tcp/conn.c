/*
 * TCP transport: one connection: its send queue, its receive state machine, its
 * failure.
 */
#include "config.h"
#include "tl/tcp/tcp.h"

void sr_tcp_conn_close_fd(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    if (c->fd >= 0) {
        /* Explicitly: a copy of the socket in a forked child would keep it
         * in the epoll set past close(). */
        epoll_ctl(c->is_out ? ctx->ep_out : ctx->ep_in, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        __atomic_store_n(&c->fd, -1, __ATOMIC_RELEASE);  /* sr_tcp_lane_ended looks */
    }
}

/* The target side has one pool (io_lock), each of our lanes its own (its
 * lock), so that none needs another's lock. */
static sr_tcp_txbuf_t **sr_tcp_pool(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    return c->is_out ? &c->txb_free : &ctx->txb_free;
}

void sr_tcp_tx_release(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, sr_tcp_tx_t *tx)
{
    if (tx->kind == SR_TCP_TX_POOL) {
        sr_tcp_txbuf_t *b = (sr_tcp_txbuf_t *)(void *)tx, **pool = sr_tcp_pool(ctx, c);
        free(b->copy);
        b->copy = NULL;
        b->next_free = *pool;
        *pool = b;
    }
}

sr_tcp_conn_t *sr_tcp_conn_new(sr_tl_ctx_t *ctx, int fd, int is_out, const char *name)
{
    sr_tcp_conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL || (c->rxbuf = malloc(SR_TCP_RXBUF)) == NULL) {
        free(c);
        return NULL;
    }
    c->kind = SR_TCP_K_CONN;
    c->fd = fd;
    c->is_out = (uint8_t)is_out;
    c->mt = (uint8_t)(is_out && ctx->mt);
    pthread_mutex_init(&c->lock, NULL);
    sr_pool_init(&c->ops, sizeof(sr_tcp_op_t), is_out ? 64 : 1);
    c->pe = -1;
    c->lane = -1;
    c->last_rx_ns = sr_time_ns();
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->events = EPOLLIN;
    struct epoll_event ev = { .events = c->events, .data.ptr = c };
    if (epoll_ctl(is_out ? ctx->ep_out : ctx->ep_in, EPOLL_CTL_ADD, fd, &ev) != 0) {
        sr_error("tcp: epoll_ctl for the connection with %s failed: %m", name);
        sr_tcp_conn_free(c);
        return NULL;
    }
    if (is_out) {
        /* progress() and stats may walk the list meanwhile. */
        c->next = __atomic_load_n(&ctx->out_conns, __ATOMIC_RELAXED);
        __atomic_store_n(&ctx->out_conns, c, __ATOMIC_RELEASE);
    } else {
        c->next = ctx->conns;
        ctx->conns = c;
    }
    return c;
}

/* The struct of a connection whose fd is closed, with what it still holds. */
void sr_tcp_conn_free(sr_tcp_conn_t *c)
{
    while (c->txb_free) {
        sr_tcp_txbuf_t *b = c->txb_free;
        c->txb_free = b->next_free;
        free(b);
    }
    sr_pool_fini(&c->ops);
    pthread_mutex_destroy(&c->lock);
    free(c->rxbuf);
    free(c);
}

/* A request of ours is over; comp->cb follows from progress(), never from
 * inside an op.  Pushed by whoever holds the request's lane lock, taken
 * whole by any caller of progress (sr_tcp_done_take). */
void sr_tcp_done_push(sr_tl_ctx_t *ctx, sr_tcp_op_t *op, symrail_status_t status)
{
    op->status = status;
    if (!ctx->mt) {
        op->next = ctx->done;
        ctx->done = op;
        return;
    }
    op->next = __atomic_load_n(&ctx->done, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&ctx->done, &op->next, op, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
        ;
}

/* Every finished request, oldest first. */
sr_tcp_op_t *sr_tcp_done_take(sr_tl_ctx_t *ctx)
{
    sr_tcp_op_t *op, *fifo = NULL;
    if (__atomic_load_n(&ctx->done, __ATOMIC_RELAXED) == NULL)
        return NULL;
    if (ctx->mt) {
        op = __atomic_exchange_n(&ctx->done, NULL, __ATOMIC_ACQUIRE);
    } else {
        op = ctx->done;
        ctx->done = NULL;
    }
    while (op) {
        sr_tcp_op_t *next = op->next;
        op->next = fifo;
        fifo = op;
        op = next;
    }
    return fifo;
}

/* Ends a connection: every request pending on it fails.  Held: io_lock for
 * the target side, the connection's lock for ours.  The struct stays until
 * sr_tcp_reap (or fini): the thread may hold an event naming it. */
void sr_tcp_conn_fail(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, symrail_status_t status)
{
    if (c->state == SR_TCP_DEAD)
        return;
    if (!c->is_out && c->state != SR_TCP_UP)
        ctx->nhs--;
    /* Before the fd goes: sr_tcp_lane_ended looks at it without a lock. */
    __atomic_store_n(&c->state, SR_TCP_DEAD, __ATOMIC_SEQ_CST);
    sr_tcp_conn_close_fd(ctx, c);
    free(c->rxbuf);
    c->rxbuf = NULL;
    for (sr_tcp_tx_t *tx = c->tx_head, *next; tx; tx = next) {
        next = tx->next;
        sr_tcp_tx_release(ctx, c, tx);
    }
    c->tx_head = c->tx_tail = NULL;
    c->tx_bytes = 0;
    __atomic_store_n(&c->tx_held, 0, __ATOMIC_RELAXED);
    if (!c->is_out && c->pe >= 0 && ctx->credit_conn[c->pe] == c)
        ctx->credit_conn[c->pe] = NULL;
    if (c->is_out && c->ep && c->lane >= 0) {
        /* Told to the core from progress(), never from inside an op. */
        __atomic_fetch_or(&c->ep->lanes_down, 1u << c->lane, __ATOMIC_RELAXED);
        __atomic_store_n(&ctx->lane_events, 1, __ATOMIC_RELEASE);
    }
    if (c->is_out && c->pend_head) {
        /* The peer is gone when this was its last lane (or it said goodbye;
         * a local one, when its process is). */
        if (sr_tcp_peer_gone(c->ep))
            status = SYMRAIL_ERR_PEER_GONE;
        for (sr_tcp_op_t *op = c->pend_head, *next; op; op = next) {
            next = op->next;
            sr_tcp_done_push(ctx, op, status);
        }
    }
    c->pend_head = c->pend_tail = NULL;
    c->nops = 0;
    c->inflight = 0;
}

static void sr_tcp_arm(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    uint32_t want = (c->throttled ? 0 : EPOLLIN) | (c->tx_head ? EPOLLOUT : 0);
    if (c->state == SR_TCP_DEAD || want == c->events)
        return;
    struct epoll_event ev = { .events = want, .data.ptr = c };
    if (epoll_ctl(c->is_out ? ctx->ep_out : ctx->ep_in, EPOLL_CTL_MOD, c->fd, &ev) == 0)
        c->events = want;
}

/* Writes what the connection has queued, as far as the socket takes it;
 * -1 when the connection failed, 1 when a throttled target may read requests
 * again.  io_lock held for the target side, the lane's lock for ours. */
int sr_tcp_flush(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    if (c->tx_held)
        __atomic_store_n(&c->tx_held, 0, __ATOMIC_RELAXED);
    while (c->tx_head) {
        struct iovec iov[SR_TCP_IOV];
        int n = 0;
        for (sr_tcp_tx_t *tx = c->tx_head; tx && n < SR_TCP_IOV - 1; tx = tx->next) {
            size_t s = tx->sent;
            if (s < tx->hlen) {
                iov[n++] = (struct iovec){ tx->hdr + s, tx->hlen - s };
                s = tx->hlen;
            }
            if (tx->dlen > s - tx->hlen)
                iov[n++] = (struct iovec){ (void *)(tx->data + (s - tx->hlen)),
                                           tx->dlen - (s - tx->hlen) };
        }
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            int err = errno;
            if (c->pe >= 0)
                sr_warn("tcp: sending to PE %d (%s) failed: %s; connection closed", c->pe,
                        c->name, strerror(err));
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
            return -1;
        }
        size_t left = (size_t)w;
        while (left > 0) {
            sr_tcp_tx_t *tx = c->tx_head;
            size_t rest = tx->hlen + tx->dlen - tx->sent;
            if (left < rest) {
                tx->sent += left;
                break;
            }
            left -= rest;
            c->tx_bytes -= tx->hlen + tx->dlen;
            c->tx_head = tx->next;
            if (c->tx_head == NULL)
                c->tx_tail = NULL;
            sr_tcp_tx_release(ctx, c, tx);
        }
    }
    int resume = c->throttled && c->tx_bytes < SR_TCP_REPLY_HIWAT / 2;
    if (resume)
        c->throttled = 0;
    sr_tcp_arm(ctx, c);
    /* The caller reads again: frames may be waiting in the buffer already,
     * and no event will say so. */
    return resume;
}

void sr_tcp_enqueue(sr_tcp_conn_t *c, sr_tcp_tx_t *tx)
{
    tx->next = NULL;
    tx->sent = 0;
    c->tx_bytes += tx->hlen + tx->dlen;
    if (c->tx_tail)
        c->tx_tail->next = tx;
    else
        c->tx_head = tx;
    c->tx_tail = tx;
}

sr_tcp_txbuf_t *sr_tcp_txbuf_get(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    sr_tcp_txbuf_t **pool = sr_tcp_pool(ctx, c), *b = *pool;
    if (b)
        *pool = b->next_free;
    else if ((b = malloc(sizeof(*b))) == NULL)
        return NULL;
    else
        b->copy = NULL;
    b->tx.kind = SR_TCP_TX_POOL;
    b->tx.data = NULL;
    b->tx.dlen = 0;
    b->tx.hlen = SR_TCP_HDR_LEN;
    return b;
}

/* Queues a reply (or credit) frame whose data, if any, stays where it is. */
int sr_tcp_reply(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const sr_tcp_frame_t *f,
                 const void *data)
{
    sr_tcp_txbuf_t *b = sr_tcp_txbuf_get(ctx, c);
    if (b == NULL) {
        sr_error("tcp: out of memory for a reply to PE %d: connection closed", c->pe);
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_NOMEM);
        return -1;
    }
    sr_tcp_frame_encode(f, b->tx.hdr);
    b->tx.data = data;
    b->tx.dlen = data ? f->plen : 0;
    sr_tcp_enqueue(c, &b->tx);
    return 0;
}

static void sr_tcp_pop(sr_tcp_conn_t *c, sr_tcp_op_t *op)
{
    c->pend_head = op->next;
    if (c->pend_head == NULL)
        c->pend_tail = NULL;
    c->nops--;
    c->inflight -= op->len;
}

/* A request or reply whose payload (if any) has fully arrived. */
static int sr_tcp_frame_done(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    sr_tcp_frame_t *f = &c->cur;
    if (c->is_out) {
        sr_tcp_op_t *op = c->pend_head;
        if (f->op == SR_TCP_OP_GET_REPLY) {
            sr_tcp_pop(c, op);
            sr_tcp_done_push(ctx, op, SYMRAIL_OK);
        }
        return 0;
    }
    return sr_tcp_request_done(ctx, c);
}

void sr_tcp_protocol_error(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const char *why)
{
    const sr_tcp_frame_t *f = &c->cur;
    sr_error("tcp: %s from PE %d (%s): op %u, region %u, offset %llu, length %llu; "
             "connection closed", why, c->pe, c->name, f->op, f->region,
             (unsigned long long)f->off,
             (unsigned long long)(f->op == SR_TCP_OP_GET ? f->a : f->plen));
    sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
}

/* A reply (or credit) to one of our requests. */
static int sr_tcp_on_reply(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    sr_tcp_frame_t *f = &c->cur;
    sr_tl_ep_t *ep = c->ep;
    sr_tcp_op_t *op = c->pend_head;
    if (f->op == SR_TCP_OP_CREDIT) {
        /* Only progress_lock's holder stores it: no lost update. */
        if (f->a > __atomic_load_n(&ep->n_credit, __ATOMIC_RELAXED) &&
            f->a <= __atomic_load_n(&ep->n_sent, __ATOMIC_RELAXED))
            __atomic_store_n(&ep->n_credit, f->a, __ATOMIC_RELAXED);
        return 0;
    }
    static const uint8_t want[] = { [SR_TCP_OP_PUT] = SR_TCP_OP_ACK,
                                    [SR_TCP_OP_GET] = SR_TCP_OP_GET_REPLY,
                                    [SR_TCP_OP_AMO] = SR_TCP_OP_AMO_REPLY };
    int stale = f->sub == SR_TCP_ST_STALE;
    if (op == NULL || op->id != f->id || want[op->op] != f->op ||
        (f->op == SR_TCP_OP_GET_REPLY && !stale && f->plen != op->len) ||
        (stale && op->rkey == 0)) {
        sr_tcp_protocol_error(ctx, c, "a reply that matches no request");
        return -1;
    }
    if (stale) {
        /* The owner has deregistered the segment: this request fails, the
         * lane is fine. */
        if (op->comp)
            sr_tcp_rkey_stale(ep, op->rkey);
        sr_tcp_pop(c, op);
        sr_tcp_done_push(ctx, op, SYMRAIL_ERR_STALE);
        return 0;
    }
    if (f->op == SR_TCP_OP_GET_REPLY) {
        c->rx_dst = op->dst;
        c->rx_discard = op->dst == NULL;  /* abandoned */
        c->rx_left = f->plen;
        return c->rx_left ? 0 : sr_tcp_frame_done(ctx, c);
    }
    if (f->op == SR_TCP_OP_AMO_REPLY && op->dst)
        *(uint64_t *)op->dst = f->a;
    sr_tcp_pop(c, op);
    sr_tcp_done_push(ctx, op, SYMRAIL_OK);
    return 0;
}

/* Handles one frame header; 0 when the connection lives on. */
static int sr_tcp_on_header(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const uint8_t *hdr)
{
    sr_tcp_frame_t *f = &c->cur;
    const char *why = sr_tcp_frame_decode(hdr, c->is_out ? SR_TCP_AT_INITIATOR : SR_TCP_AT_TARGET,
                                          f);
    if (why) {
        memset(f, 0, sizeof(*f));
        sr_error("tcp: malformed frame from PE %d (%s): %s; connection closed", c->pe, c->name,
                 why);
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
        return -1;
    }
    c->rx_left = 0;
    c->rx_discard = 0;
    c->rx_stale = 0;
    if (f->op == SR_TCP_OP_PING)
        return 0;  /* the heartbeat has done its work by arriving */
    if (f->op == SR_TCP_OP_BYE) {
        c->bye = 1;
        __atomic_store_n(&ctx->bye[c->pe], 1, __ATOMIC_RELAXED);
        return 0;
    }
    return c->is_out ? sr_tcp_on_reply(ctx, c) : sr_tcp_on_request(ctx, c);
}

static void sr_tcp_on_eof(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, int err)
{
    size_t partial = c->rx_hi - c->rx_lo;
    int pe = c->pe;
    if (c->state != SR_TCP_UP) {
        sr_warn("tcp: connection from %s ended during the handshake%s%s", c->name,
                err ? ": " : " (truncated message)", err ? strerror(err) : "");
    } else if (c->rx_state == SR_TCP_RX_PAYLOAD) {
        sr_error("tcp: connection with PE %d (%s) ended inside a frame (%zu payload bytes "
                 "missing)%s%s", pe, c->name, c->rx_left, err ? ": " : "",
                 err ? strerror(err) : "");
    } else if (partial) {
        sr_error("tcp: truncated frame header from PE %d (%s): %zu of %d bytes; connection "
                 "closed", pe, c->name, partial, SR_TCP_HDR_LEN);
    } else if (!c->bye && !__atomic_load_n(&ctx->bye[pe], __ATOMIC_RELAXED)) {
        if (c->is_out)
            sr_warn("tcp: lane %d to PE %d (%s) lost: %s", c->lane, pe, c->name,
                    err ? strerror(err) : "closed by the peer");
        else
            sr_info("tcp: connection from PE %d (%s) ended: %s", pe, c->name,
                    err ? strerror(err) : "closed by the peer");
    }
    sr_tcp_conn_fail(ctx, c, err == ETIMEDOUT ? SYMRAIL_ERR_TIMEOUT : SYMRAIL_ERR_TRANSPORT);
}

enum { SR_TCP_READ_GOT, SR_TCP_READ_RETRY, SR_TCP_READ_LATER, SR_TCP_READ_ENDED };

/* What one read of `r` bytes means: bytes to handle (the peer is heard, the
 * budget charged), a retry (a signal), nothing more now, or the end of the
 * connection (handled here). */
static int sr_tcp_read_done(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, ssize_t r, size_t *budget_p)
{
    if (r > 0) {
        sr_tcp_heard(ctx, c, sr_time_ns());
        *budget_p = (size_t)r >= *budget_p ? 0 : *budget_p - (size_t)r;
        return SR_TCP_READ_GOT;
    }
    if (r < 0 && errno == EINTR)
        return SR_TCP_READ_RETRY;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return SR_TCP_READ_LATER;
    sr_tcp_on_eof(ctx, c, r < 0 ? errno : 0);
    return SR_TCP_READ_ENDED;
}

/* Reads and handles what the connection has; io_lock held for the target
 * side, the lane's lock for ours. */
static void sr_tcp_rx(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    size_t budget = SR_TCP_IO_BUDGET;
again:
    while (c->state != SR_TCP_DEAD) {
        if (c->rx_state == SR_TCP_RX_PAYLOAD) {
            size_t have = c->rx_hi - c->rx_lo;
            size_t n = have < c->rx_left ? have : c->rx_left;
            if (n) {
                if (!c->rx_discard) {
                    sr_copy(c->rx_dst, c->rxbuf + c->rx_lo, n);
                    c->rx_dst += n;
                }
                c->rx_lo += n;
                c->rx_left -= n;
            }
            if (c->rx_left == 0) {
                c->rx_state = SR_TCP_RX_MSG;
                if (sr_tcp_frame_done(ctx, c) != 0)
                    return;
                continue;
            }
            if (budget == 0)
                break;
            /* The buffer is empty.  A payload with nowhere to go passes
             * through the buffer and is dropped; else it is read where it
             * belongs, and what follows into the buffer: after a big payload
             * (SR_TCP_BULK) only the next header, so that the next payload
             * is not read into the buffer and copied again. */
            c->rx_lo = c->rx_hi = 0;
            struct iovec iov[2] = { { c->rx_dst, c->rx_left },
                                    { c->rxbuf, c->rx_bulk ? SR_TCP_HDR_LEN : SR_TCP_RXBUF } };
            ssize_t r = c->rx_discard ? recv(c->fd, c->rxbuf, SR_TCP_RXBUF, 0)
                                      : readv(c->fd, iov, 2);
            int rr = sr_tcp_read_done(ctx, c, r, &budget);
            if (rr == SR_TCP_READ_RETRY)
                continue;
            if (rr == SR_TCP_READ_LATER)
                break;
            if (rr == SR_TCP_READ_ENDED)
                return;
            if (c->rx_discard) {
                c->rx_hi = (size_t)r;
            } else if ((size_t)r <= c->rx_left) {
                c->rx_dst += r;
                c->rx_left -= (size_t)r;
            } else {
                c->rx_hi = (size_t)r - c->rx_left;
                c->rx_dst += c->rx_left;
                c->rx_left = 0;
            }
            continue;
        }
        if (c->is_out == 0 && c->state == SR_TCP_UP && c->tx_bytes >= SR_TCP_REPLY_HIWAT) {
            /* The initiator does not read its replies: stop reading its requests. */
            c->throttled = 1;
            break;
        }
        size_t need = c->state == SR_TCP_HS_HELLO ? SR_TCP_HELLO_LEN
                    : c->state == SR_TCP_HS_AUTH  ? SR_TCP_AUTH_LEN
                                                  : SR_TCP_HDR_LEN;
        if (c->rx_hi - c->rx_lo >= need) {
            const uint8_t *msg = c->rxbuf + c->rx_lo;
            c->rx_lo += need;
            int rc = c->state == SR_TCP_UP ? sr_tcp_on_header(ctx, c, msg)
                                           : sr_tcp_on_handshake(ctx, c, msg);
            if (rc != 0)
                return;
            if (c->state == SR_TCP_HS_KEY) {
                sr_tcp_arm(ctx, c);  /* throttled: not read until the job key */
                return;
            }
            if (c->state == SR_TCP_UP && c->rx_left > 0)
                c->rx_state = SR_TCP_RX_PAYLOAD;
            c->rx_bulk = c->rx_left >= SR_TCP_BULK;
            continue;
        }
        if (budget == 0)
            break;
        if (c->rx_lo > 0) {
            memmove(c->rxbuf, c->rxbuf + c->rx_lo, c->rx_hi - c->rx_lo);
            c->rx_hi -= c->rx_lo;
            c->rx_lo = 0;
        }
        size_t want = c->rx_bulk ? need - (c->rx_hi - c->rx_lo) : SR_TCP_RXBUF - c->rx_hi;
        ssize_t r = recv(c->fd, c->rxbuf + c->rx_hi, want, 0);
        int rr = sr_tcp_read_done(ctx, c, r, &budget);
        if (rr == SR_TCP_READ_RETRY)
            continue;
        if (rr == SR_TCP_READ_LATER)
            break;
        if (rr == SR_TCP_READ_ENDED)
            return;
        c->rx_hi += (size_t)r;
    }
    if (c->state == SR_TCP_DEAD)
        return;
    if (!c->tx_head)
        sr_tcp_arm(ctx, c);
    else if (sr_tcp_flush(ctx, c) == 1 && budget > 0)
        goto again;
}

void sr_tcp_conn_event(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, uint32_t events)
{
    if (c->state == SR_TCP_HS_KEY) {
        /* Held for the job key: only an error or hang-up is reported. */
        if (events & (EPOLLERR | EPOLLHUP))
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_PEER_GONE);
        return;
    }
    if (events & EPOLLOUT) {
        if (sr_tcp_flush(ctx, c) == 1)
            events |= EPOLLIN;
    }
    if (c->state != SR_TCP_DEAD && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
        sr_tcp_rx(ctx, c);
}
