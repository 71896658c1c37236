/*
 * TCP transport: init and fini, the ops table, progress, counters, sleeping waits.
 */
#include "config.h"
#include "tl/tcp/tcp.h"
#include "util/fault.h"

static void sr_tcp_fini(sr_tl_ctx_t *ctx);

typedef struct {
    int      pe, lane;
    uint32_t gen;
} sr_tcp_lane_ev_t;

/* Lanes that went down since the last call, up to `max` of them: the core
 * hears of each with a new generation, from the caller once it has let go
 * of progress_lock.  (A TCP lane does not come back: there is no redial.) */
static int sr_tcp_lane_events(sr_tl_ctx_t *ctx, sr_tcp_lane_ev_t *ev, int max)
{
    int n = 0;
    __atomic_store_n(&ctx->lane_events, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  /* the flag, then the masks */
    for (int pe = 0; pe < ctx->n_all; pe++) {
        sr_tl_ep_t *ep = __atomic_load_n(&ctx->eps[pe], __ATOMIC_ACQUIRE);
        if (ep == NULL || __atomic_load_n(&ep->lanes_down, __ATOMIC_RELAXED) == 0)
            continue;
        if (n == max) {  /* the rest next time */
            __atomic_store_n(&ctx->lane_events, 1, __ATOMIC_RELAXED);
            break;
        }
        uint32_t down = __atomic_exchange_n(&ep->lanes_down, 0, __ATOMIC_ACQUIRE);
        while (down) {
            int l = __builtin_ctz(down);
            down &= ~(1u << l);
            if (n == max) {
                __atomic_fetch_or(&ep->lanes_down, 1u << l, __ATOMIC_RELAXED);
                __atomic_store_n(&ctx->lane_events, 1, __ATOMIC_RELAXED);
                continue;
            }
            ev[n++] = (sr_tcp_lane_ev_t){ pe, l, ++ep->lane_gen[l] };
        }
    }
    return n;
}

/* Wakes an application sleeping in wait(): a peer changed our memory. */
void sr_tcp_kick(sr_tl_ctx_t *ctx)
{
    sr_doorbell_kick(&ctx->bell);
}

static symrail_status_t sr_tcp_parse_fault(sr_tl_ctx_t *ctx)
{
    sr_fault_t f;
    symrail_status_t st = sr_fault_parse(ctx->params.env->tcp_fault_conn,
                                         "SYMRAIL_TCP_FAULT_CONN", "tcp", NULL, &f);
    ctx->fault_lane = f.lane;
    ctx->fault_after = f.after;
    return st;
}

static symrail_status_t sr_tcp_init(const sr_tl_params_t *params, sr_tl_ctx_t **ctx_p)
{
    symrail_status_t st;
    int remote = 0;
    for (int pe = 0; pe < params->n_pes; pe++)
        remote |= !params->is_local[pe];
    if (!remote && !params->serve_local && !params->for_peers) {
        sr_info("tcp: every PE is on this host and shared memory carries them");
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    const sr_env_t *env = params->env;
    if (env->notify_slots < 1) {
        sr_error("SYMRAIL_NOTIFY_SLOTS=0: a sender could never send a notification");
        return SYMRAIL_ERR_INVALID;
    }
    if (env->tcp_lanes < 1 || env->tcp_lanes > SR_TCP_MAX_LANES || env->tcp_max_ops < 1 ||
        env->tcp_max_ops > (1u << 20) || env->tcp_max_inflight < 4096) {
        sr_error("tcp: SYMRAIL_TCP_LANES (1 .. %d), SYMRAIL_TCP_MAX_OPS (1 .. 1048576) or "
                 "SYMRAIL_TCP_MAX_INFLIGHT (>= 4K) out of range", SR_TCP_MAX_LANES);
        return SYMRAIL_ERR_INVALID;
    }
    /* The doorbell wants its cache lines to itself. */
    sr_tl_ctx_t *ctx = aligned_alloc(_Alignof(sr_tl_ctx_t), sizeof(*ctx));
    if (ctx)
        memset(ctx, 0, sizeof(*ctx));
    if (ctx == NULL)
        return SYMRAIL_ERR_NOMEM;
    ctx->params = *params;
    ctx->nlanes = (uint32_t)env->tcp_lanes;
    ctx->max_ops = (uint32_t)env->tcp_max_ops;
    ctx->max_inflight = env->tcp_max_inflight;
    /* SYMRAIL_OP_TIMEOUT=0 (no limit): silence never ends a connection. */
    uint64_t tmo = env->op_timeout;
    ctx->dead_ns = tmo ? tmo * 1000000ull / 8 * 7 : UINT64_MAX;
    ctx->dial_ms = tmo && tmo < 30000 ? tmo : 30000;
    /* Several heartbeats per timeout, so that one late beat is no silence. */
    ctx->hb_ns = env->heartbeat * 1000000ull;
    if (tmo && ctx->hb_ns > tmo * 1000000ull / 4)
        ctx->hb_ns = tmo * 1000000ull / 4;
    ctx->ep_in = ctx->ep_out = -1;
    ctx->wake.fd = -1;
    ctx->wake.kind = SR_TCP_K_WAKE;
    ctx->in_tag.kind = SR_TCP_K_IN;
    ctx->mt = params->thread_multiple != 0;
    pthread_mutex_init(&ctx->io_lock, NULL);
    pthread_mutex_init(&ctx->mq_lock, NULL);
    pthread_mutex_init(&ctx->progress_lock, NULL);
    pthread_mutex_init(&ctx->seg_lock, NULL);

    size_t n = (size_t)params->n_pes + (size_t)(params->peers_max > 0 ? params->peers_max : 0);
    ctx->n_all = (int)n;
    if (params->peers_max > 0) {
        ctx->cpeers = calloc((size_t)params->peers_max, sizeof(*ctx->cpeers));
        if (ctx->cpeers == NULL) {
            st = SYMRAIL_ERR_NOMEM;
            goto err_ctx;
        }
    }
    ctx->credit_conn = calloc(n, sizeof(*ctx->credit_conn));
    ctx->bye = calloc(n, 1);
    ctx->eps = calloc(n, sizeof(*ctx->eps));
    ctx->consumed = calloc(n, sizeof(uint64_t));
    ctx->reported = calloc(n, sizeof(uint64_t));
    ctx->heard = calloc(n, sizeof(uint64_t));
    if (!ctx->credit_conn || !ctx->bye || !ctx->eps || !ctx->consumed || !ctx->reported ||
        !ctx->heard) {
        st = SYMRAIL_ERR_NOMEM;
        goto err_ctx;
    }
    sr_doorbell_setup();
    st = sr_tcp_parse_fault(ctx);
    if (st != SYMRAIL_OK)
        goto err_ctx;
    st = sr_tcp_derive_key(ctx);
    if (st == SYMRAIL_OK)
        st = sr_crypto_random(&ctx->instance, sizeof(ctx->instance));
    if (st != SYMRAIL_OK)
        goto err_ctx;
    ctx->ep_in = epoll_create1(EPOLL_CLOEXEC);
    ctx->ep_out = epoll_create1(EPOLL_CLOEXEC);
    ctx->wake.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ctx->ep_in < 0 || ctx->ep_out < 0 || ctx->wake.fd < 0) {
        int err = errno;
        sr_error("tcp: epoll_create1/eventfd failed: %s", strerror(err));
        st = sr_status_from_errno(err);
        goto err_ctx;
    }
    /* progress() learns from one epoll_wait whether the target side has
     * work too. */
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &ctx->wake };
    struct epoll_event evin = { .events = EPOLLIN, .data.ptr = &ctx->in_tag };
    if (epoll_ctl(ctx->ep_in, EPOLL_CTL_ADD, ctx->wake.fd, &ev) != 0 ||
        epoll_ctl(ctx->ep_out, EPOLL_CTL_ADD, ctx->ep_in, &evin) != 0) {
        int err = errno;
        sr_error("tcp: epoll_ctl failed: %s", strerror(err));
        st = sr_status_from_errno(err);
        goto err_ctx;
    }
    st = sr_tcp_listen(ctx);
    if (st != SYMRAIL_OK)
        goto err_ctx;
    sr_tcp_write_addr_file(ctx);
    /* Up before any peer dials us: wireup handshakes are served here while
     * this PE's own thread dials its peers. */
    if (pthread_create(&ctx->thread, NULL, sr_tcp_thread, ctx) != 0) {
        sr_error("tcp: cannot start the progress thread");
        st = SYMRAIL_ERR_SYSTEM;
        goto err_ctx;
    }
    ctx->thread_up = 1;
    *ctx_p = ctx;
    return SYMRAIL_OK;

err_ctx:
    sr_tcp_fini(ctx);
    return st;
}

static void sr_tcp_fini(sr_tl_ctx_t *ctx)
{
    if (ctx->thread_up) {
        uint64_t one = 1;
        __atomic_store_n(&ctx->stop, 1, __ATOMIC_RELEASE);
        (void)!write(ctx->wake.fd, &one, sizeof(one));
        pthread_join(ctx->thread, NULL);
    }
    sr_tcp_goodbye(ctx);
    sr_tcp_conn_t **lists[2] = { &ctx->conns, &ctx->out_conns };
    for (int side = 0; side < 2; side++) {
        while (*lists[side]) {
            sr_tcp_conn_t *c = *lists[side];
            *lists[side] = c->next;
            sr_tcp_conn_close_fd(ctx, c);
            for (sr_tcp_tx_t *tx = c->tx_head, *next; tx; tx = next) {
                next = tx->next;
                sr_tcp_tx_release(ctx, c, tx);
            }
            sr_tcp_conn_free(c);
        }
    }
    for (int i = 0; i < ctx->naddrs; i++)
        close(ctx->lsn[i].fd);
    if (ctx->wake.fd >= 0)
        close(ctx->wake.fd);
    if (ctx->ep_in >= 0)
        close(ctx->ep_in);
    if (ctx->ep_out >= 0)
        close(ctx->ep_out);
    while (ctx->txb_free) {
        sr_tcp_txbuf_t *b = ctx->txb_free;
        ctx->txb_free = b->next_free;
        free(b);
    }
    sr_msgq_clear(&ctx->mq);
    for (int pe = 0; ctx->eps && pe < ctx->n_all; pe++) {
        if (ctx->eps[pe])
            sr_tcp_rkeys_free(ctx->eps[pe]);
        free(ctx->eps[pe]);
    }
    sr_tcp_seg_fini(ctx);
    free(ctx->eps);
    free(ctx->cpeers);
    free(ctx->credit_conn);
    free(ctx->bye);
    free(ctx->consumed);
    free(ctx->reported);
    free(ctx->heard);
    pthread_mutex_destroy(&ctx->io_lock);
    pthread_mutex_destroy(&ctx->mq_lock);
    pthread_mutex_destroy(&ctx->progress_lock);
    pthread_mutex_destroy(&ctx->seg_lock);
    free(ctx);
}

static void sr_tcp_attr(const sr_tl_ctx_t *ctx, sr_tl_attr_t *attr_p)
{
    attr_p->max_slice = SR_TCP_MAX_PAYLOAD;
    attr_p->can_sleep = 1;
    attr_p->job_key = ctx ? ctx->key_late : 0;  /* NULL: what any context says */
    /* The target reads a connection in order and applies each request
     * before it reads the next one. */
    attr_p->ordered_lanes = 1;
    attr_p->local_completion = 0;
}

/* Reads our lanes and (when the thread is not at it) the target side;
 * progress_lock held when mt.  Lane events for the caller go to ev. */
static int sr_tcp_progress_io(sr_tl_ctx_t *ctx, sr_tcp_lane_ev_t *ev, int *nev_p)
{
    struct epoll_event e[SR_TCP_EVENTS];
    int count = 0, in_ready = 0;
    int n = epoll_wait(ctx->ep_out, e, SR_TCP_EVENTS, 0);
    for (int i = 0; i < n; i++) {
        sr_tcp_conn_t *c = e[i].data.ptr;
        if (*(int *)e[i].data.ptr == SR_TCP_K_IN) {
            in_ready = 1;
            continue;
        }
        sr_tcp_lock(c);
        if (c->state != SR_TCP_DEAD) {  /* a post may have failed it since */
            sr_tcp_conn_event(ctx, c, e[i].events);
            count++;
        }
        sr_tcp_unlock(c);
    }
    /* The thread may be at it already: then it needs no help. */
    if (in_ready && pthread_mutex_trylock(&ctx->io_lock) == 0) {
        n = epoll_wait(ctx->ep_in, e, SR_TCP_EVENTS, 0);
        if (n > 0)
            count += sr_tcp_handle_in(ctx, e, n);
        pthread_mutex_unlock(&ctx->io_lock);
    }
    uint64_t now = sr_time_ns();
    if (now >= ctx->next_out_check_ns)
        sr_tcp_check_lanes(ctx, now);
    if (sr_unlikely(__atomic_load_n(&ctx->lane_events, __ATOMIC_ACQUIRE)))
        *nev_p = sr_tcp_lane_events(ctx, ev, SR_TCP_EVENTS);
    return count;
}

/* Notifications the thread queued, in the order they came; one caller at
 * a time (msg_busy is a flag no one waits for, so a callback holding it
 * blocks nobody). */
static int sr_tcp_deliver(sr_tl_ctx_t *ctx)
{
    int count = 0;
    /* A peek: a message pushed meanwhile is seen by the next call. */
    if (!__atomic_load_n(&ctx->mq_ready, __ATOMIC_RELAXED))
        return 0;
    if (ctx->mt && __atomic_exchange_n(&ctx->msg_busy, 1, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&ctx->mq_lock);
    sr_msgq_t q = ctx->mq;
    ctx->mq = (sr_msgq_t){ NULL, NULL, 0 };
    __atomic_store_n(&ctx->mq_ready, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ctx->mq_lock);
    sr_msg_t *m;
    /* Credits go back when the application consumes (notify_release). */
    while ((m = sr_msgq_pop(&q)) != NULL) {
        ctx->params.notify_cb(ctx->params.cb_arg, m->src, m->tag, m->payload, m->len);
        free(m);
        count++;
    }
    if (ctx->mt)
        __atomic_store_n(&ctx->msg_busy, 0, __ATOMIC_RELEASE);
    return count;
}

static int sr_tcp_progress(sr_tl_ctx_t *ctx)
{
    sr_tcp_lane_ev_t ev[SR_TCP_EVENTS];
    int count = 0, nev = 0;
    if (!ctx->mt) {
        count = sr_tcp_progress_io(ctx, ev, &nev);
    } else if (pthread_mutex_trylock(&ctx->progress_lock) == 0) {
        count = sr_tcp_progress_io(ctx, ev, &nev);
        pthread_mutex_unlock(&ctx->progress_lock);
    }
    /* Callbacks with no lock held: they may call back into the transport. */
    for (int i = 0; i < nev; i++)
        if (ctx->params.lane_cb)
            ctx->params.lane_cb(ctx->params.cb_arg, ev[i].pe, ev[i].lane, 0, ev[i].gen);
    count += nev;

    /* Whoever calls completes what is done, busy progress or not. */
    uint64_t ncomp = 0;
    for (sr_tcp_op_t *op = sr_tcp_done_take(ctx), *next; op; op = next) {
        next = op->next;
        sr_tl_comp_t *comp = op->comp;
        symrail_status_t status = op->status;
        sr_tcp_op_put(op);
        if (comp) {  /* NULL: abandoned, its caller was told already */
            ncomp++;
            comp->cb(comp, status);
        }
        count++;
    }
    if (ncomp) {
        if (ctx->mt)
            __atomic_fetch_add(&ctx->n_completed, ncomp, __ATOMIC_RELAXED);
        else
            ctx->n_completed += ncomp;
    }
    count += sr_tcp_deliver(ctx);
    /* Nothing to do: whoever would give us something to do (our own thread,
     * maybe holding io_lock; peers; softirqs; another caller of progress)
     * may be waiting for this CPU.  Spinning on would keep it from them for
     * a whole time slice, which cost ms per round trip with more threads
     * than cores. */
    if (count == 0)
        sched_yield();
    return count;
}

static void sr_tcp_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p)
{
    uint64_t bytes[SR_TCP_MAX_LANES] = { 0 }, slices[SR_TCP_MAX_LANES] = { 0 };
    stats_p->completions += __atomic_load_n(&ctx->n_completed, __ATOMIC_RELAXED);
    /* Each lane counts its own, so that posts to two lanes share no line. */
    for (sr_tcp_conn_t *c = __atomic_load_n(&ctx->out_conns, __ATOMIC_ACQUIRE); c;
         c = c->next) {
        stats_p->slices_posted += __atomic_load_n(&c->n_posted, __ATOMIC_RELAXED);
        stats_p->qp_full += __atomic_load_n(&c->n_full, __ATOMIC_RELAXED);
        if (c->lane >= 0 && c->lane < SR_TCP_MAX_LANES) {
            bytes[c->lane] += __atomic_load_n(&c->n_bytes, __ATOMIC_RELAXED);
            slices[c->lane] += __atomic_load_n(&c->n_slices, __ATOMIC_RELAXED);
        }
    }
    for (uint32_t l = 0; l < ctx->nlanes && stats_p->nrails < SYMRAIL_STATS_MAX_RAILS; l++) {
        __typeof__(stats_p->rails[0]) *out = &stats_p->rails[stats_p->nrails++];
        snprintf(out->name, sizeof(out->name), "tcp:lane%u", l);
        out->bytes = bytes[l];
        out->slices = slices[l];
    }
}

static uint32_t sr_tcp_wait_prepare(sr_tl_ctx_t *ctx)
{
    /* Threads may wait at once: nap is the same for all (it says whether
     * this process registered for membarrier). */
    int nap;
    uint32_t token = sr_doorbell_arm(&ctx->bell, &nap);
    __atomic_store_n(&ctx->nap, nap, __ATOMIC_RELAXED);
    return token;
}

static void sr_tcp_wait(sr_tl_ctx_t *ctx, uint32_t token, uint64_t timeout_ns)
{
    int nap = __atomic_load_n(&ctx->nap, __ATOMIC_RELAXED);
    sr_doorbell_sleep(&ctx->bell, token, timeout_ns, nap);
}

static void sr_tcp_wait_done(sr_tl_ctx_t *ctx)
{
    sr_doorbell_disarm(&ctx->bell);
}

const sr_tl_ops_t sr_tl_tcp_ops = {
    .name         = "tcp",
    .init         = sr_tcp_init,
    .fini         = sr_tcp_fini,
    .attr         = sr_tcp_attr,
    .mem_reg      = sr_tcp_mem_reg,
    .mem_dereg    = sr_tcp_mem_dereg,
    .mkey_pack    = sr_tcp_mkey_pack,
    .rkey_unpack  = sr_tcp_rkey_unpack,
    .rkey_release = sr_tcp_rkey_release,
    .addr_pack    = sr_tcp_addr_pack,
    .reachable    = sr_tcp_reachable,
    .connect      = sr_tcp_connect,
    .wireup_done  = sr_tcp_wireup_done,
    .disconnect   = sr_tcp_disconnect,
    .ep_addr_pack = sr_tl_no_ep_addr,
    .ep_ctl = sr_tl_no_ep_ctl,
    .job_key = sr_tcp_job_key_set,
    .ptr          = sr_tl_no_ptr,
    .prefetch     = sr_tl_no_prefetch,
    .local_hint   = sr_tl_no_local_hint,
    .ep_lanes     = sr_tcp_ep_lanes,
    .put          = sr_tcp_put,
    .get          = sr_tcp_get,
    .atomic       = sr_tcp_atomic,
    .notify       = sr_tcp_notify,
    .flush        = sr_tl_flush_nothing,
    .ep_post_end  = sr_tcp_ep_post_end,
    .notify_release = sr_tcp_notify_release,
    .ep_heard     = sr_tcp_ep_heard,
    .progress     = sr_tcp_progress,
    .ep_check     = sr_tcp_ep_check,
    .stats        = sr_tcp_stats,
    .wait_prepare = sr_tcp_wait_prepare,
    .wait         = sr_tcp_wait,
    .wait_done    = sr_tcp_wait_done,
};
