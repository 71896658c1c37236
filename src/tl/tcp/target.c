/*
 * TCP transport: the target side: serving peers' requests, CPU atomics, the
 * progress thread.
 */
#include "config.h"
#include "tl/tcp/tcp.h"

/* Frees the target side's dead connections; io_lock held.  Only the thread
 * may: it is the only one holding events across a release of the lock, and
 * it has handled them all by now.  (Clients that connect again and again
 * must not grow the process.) */
void sr_tcp_reap(sr_tl_ctx_t *ctx)
{
    for (sr_tcp_conn_t **pc = &ctx->conns; *pc;) {
        sr_tcp_conn_t *c = *pc;
        if (c->state != SR_TCP_DEAD) {
            pc = &c->next;
            continue;
        }
        *pc = c->next;
        sr_tcp_conn_free(c);
    }
}

/* Every idle connection a peer opened carries a PING now and then, so that
 * the peer hears from us while it has nothing pending (its requests and our
 * replies do the same job on a busy one); io_lock held. */
static void sr_tcp_heartbeat(sr_tl_ctx_t *ctx, uint64_t now)
{
    ctx->next_hb_ns = now + ctx->hb_ns;
    for (sr_tcp_conn_t *c = ctx->conns; c; c = c->next) {
        if (c->state != SR_TCP_UP || c->tx_head)
            continue;
        sr_tcp_frame_t f = { .op = SR_TCP_OP_PING };
        if (sr_tcp_reply(ctx, c, &f, NULL) == 0)
            sr_tcp_flush(ctx, c);
    }
}

void *sr_tcp_thread(void *arg)
{
    sr_tl_ctx_t *ctx = arg;
    struct epoll_event ev[SR_TCP_EVENTS];
    while (!__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE)) {
        int n = epoll_wait(ctx->ep_in, ev, SR_TCP_EVENTS, SR_TCP_TICK_MS);
        if (n < 0 && errno != EINTR) {
            sr_error("tcp: epoll_wait failed: %m; the progress thread stops");
            break;
        }
        while (__atomic_load_n(&ctx->io_wanted, __ATOMIC_RELAXED))
            sched_yield();
        pthread_mutex_lock(&ctx->io_lock);
        if (n > 0)
            sr_tcp_handle_in(ctx, ev, n);
        uint64_t now = sr_time_ns();
        if (now >= ctx->next_check_ns)
            sr_tcp_check_handshakes(ctx, now);
        if (ctx->hb_ns && now >= ctx->next_hb_ns)
            sr_tcp_heartbeat(ctx, now);
        sr_tcp_reap(ctx);
        int wake = ctx->wake_waiter;
        ctx->wake_waiter = 0;
        pthread_mutex_unlock(&ctx->io_lock);
        if (wake)
            sr_tcp_kick(ctx);
    }
    return NULL;
}

void sr_tcp_msg_push(sr_tl_ctx_t *ctx, int src, uint32_t tag, const void *payload,
                     uint32_t len)
{
    pthread_mutex_lock(&ctx->mq_lock);
    symrail_status_t st = sr_msgq_push(&ctx->mq, src, tag, payload, len);
    __atomic_store_n(&ctx->mq_ready, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ctx->mq_lock);
    if (st != SYMRAIL_OK)
        sr_error("tcp: out of memory: a notification from PE %d is lost", src);
}

/* Target side events; io_lock held.  Returns how many it acted on. */
int sr_tcp_handle_in(sr_tl_ctx_t *ctx, struct epoll_event *ev, int n)
{
    int act = 0;
    /* Events left are reported again by the next epoll_wait (level-triggered). */
    for (int i = 0; i < n && !__atomic_load_n(&ctx->io_wanted, __ATOMIC_RELAXED); i++) {
        int kind = *(int *)ev[i].data.ptr;
        if (kind == SR_TCP_K_LSN) {
            sr_tcp_accept(ctx, ev[i].data.ptr);
            continue;
        }
        if (kind != SR_TCP_K_CONN)
            continue;
        sr_tcp_conn_t *c = ev[i].data.ptr;
        if (c->state == SR_TCP_DEAD)
            continue;  /* an event fetched before the connection ended */
        act++;
        sr_tcp_conn_event(ctx, c, ev[i].events);
    }
    return act;
}

/* A request whose payload (if any) has fully arrived. */
int sr_tcp_request_done(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    sr_tcp_frame_t *f = &c->cur;
    if (f->op == SR_TCP_OP_PUT) {
        sr_tcp_frame_t ack = { .op = SR_TCP_OP_ACK, .id = f->id,
                               .sub = c->rx_stale ? SR_TCP_ST_STALE : SR_TCP_ST_OK };
        /* A small put may be a flag somebody sleeps on; waking the
         * application for every slice of a bulk transfer would have it spin
         * against this thread for the CPU.  (A wait on bulk data rechecks
         * within its sleep slice.) */
        if (f->plen <= SR_TCP_FLAG_MAX)
            ctx->wake_waiter = 1;
        return sr_tcp_reply(ctx, c, &ack, NULL);
    }
    if (f->op == SR_TCP_OP_NOTIFY) {
        sr_tcp_msg_push(ctx, c->pe, (uint32_t)f->a, c->nbuf, f->plen);
        ctx->credit_conn[c->pe] = c;
        ctx->wake_waiter = 1;
    }
    return 0;
}

/* A put or get of a segment that is not registered (any more, or in this
 * generation): nothing is touched, the answer says STALE. */
static int sr_tcp_on_stale(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    sr_tcp_frame_t *f = &c->cur;
    if (f->op == SR_TCP_OP_GET) {
        sr_tcp_frame_t r = { .op = SR_TCP_OP_GET_REPLY, .sub = SR_TCP_ST_STALE, .id = f->id };
        return sr_tcp_reply(ctx, c, &r, NULL);
    }
    c->rx_discard = 1;
    c->rx_stale = 1;
    c->rx_left = f->plen;
    return c->rx_left ? 0 : sr_tcp_request_done(ctx, c);
}

/* Serves one request header of a peer; 0 when the connection lives on. */
int sr_tcp_on_request(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    sr_tcp_frame_t *f = &c->cur;
    const char *why;
    char *at = NULL;
    if (f->region >= SR_TCP_REGION_SEG0) {  /* PUT or GET: the decoder says so */
        char *base;
        uint64_t len;
        if (!sr_tcp_seg_find(ctx, f->region, (uint32_t)f->b, &base, &len))
            return sr_tcp_on_stale(ctx, c);
        why = sr_tcp_frame_check_span(f, len);
        at = why ? NULL : base + f->off;
    } else {
        why = sr_tcp_frame_check_bounds(f, ctx->rlen, ctx->nregions);
        /* A process of another job has no part in this job's heap and data. */
        if (why == NULL && c->pe >= ctx->params.n_pes && f->op != SR_TCP_OP_NOTIFY)
            why = "a connected peer reaches registered segments only";
        if (why == NULL && f->op != SR_TCP_OP_NOTIFY)
            at = ctx->base[f->region] + f->off;
    }
    if (why) {
        sr_tcp_protocol_error(ctx, c, why);
        return -1;
    }
    switch (f->op) {
    case SR_TCP_OP_PUT:
        c->rx_dst = at;
        c->rx_left = f->plen;
        return c->rx_left ? 0 : sr_tcp_request_done(ctx, c);
    case SR_TCP_OP_NOTIFY:
        c->rx_dst = (char *)c->nbuf;
        c->rx_left = f->plen;
        return c->rx_left ? 0 : sr_tcp_request_done(ctx, c);
    case SR_TCP_OP_GET: {
        sr_tcp_frame_t r = { .op = SR_TCP_OP_GET_REPLY, .id = f->id, .plen = (uint32_t)f->a };
        return sr_tcp_reply(ctx, c, &r, at);
    }
    case SR_TCP_OP_AMO: {
        sr_tcp_frame_t r = { .op = SR_TCP_OP_AMO_REPLY, .id = f->id };
        sr_cpu_amo(at, f->sub, f->a, f->b, &r.a);  /* sub and alignment checked */
        ctx->wake_waiter |= SR_TL_AMO_KIND(f->sub) != SR_TL_AMO_FETCH;
        return sr_tcp_reply(ctx, c, &r, NULL);
    }
    }
    return 0;
}
