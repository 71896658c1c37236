/*
 * RDMA verbs transport. Transport entry points: init and fini, attributes, progress, liveness, counters,
 * and the ops table.
 */
#include "config.h"
#include "tl/verbs/ib.h"
#include "util/fault.h"

/* ---- init / fini -------------------------------------------------------------------- */

static symrail_status_t sr_ib_parse_fault(sr_tl_ctx_t *ctx)
{
    sr_fault_t f;
    ctx->fault_lane = -1;
    ctx->fault_init = (int)ctx->params.env->ib_fault_init;
    symrail_status_t st = sr_fault_parse(ctx->params.env->ib_fault_qp, "SYMRAIL_IB_FAULT_QP_ERROR",
                                         "verbs", "repair messages cannot be sent", &f);
    if (st != SYMRAIL_OK || f.lane < 0)
        return st;
    ctx->fault_lane = f.lane;
    ctx->fault_after = f.after;
    ctx->fault_ctl = (uint32_t)f.extra;
    return SYMRAIL_OK;
}

/* Testing only: step `step` of init fails as if out of memory, so that every
 * partial state is seen by fini. */
int sr_ib_init_fault(sr_tl_ctx_t *ctx, int step)
{
    if (sr_likely(ctx->fault_init != step))
        return 0;
    sr_warn("verbs: test fault hook: init step %d fails (SYMRAIL_IB_FAULT_INIT)", step);
    return 1;
}

static void sr_ib_fini(sr_tl_ctx_t *ctx);

static symrail_status_t sr_ib_init(const sr_tl_params_t *params, sr_tl_ctx_t **ctx_p)
{
    symrail_status_t st;
    sr_tl_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return SYMRAIL_ERR_NOMEM;
    ctx->params = *params;
    ctx->mt = params->thread_multiple != 0;
    ctx->qpp = (uint32_t)params->env->qps_per_peer;
    ctx->max_wr = (uint32_t)params->env->ib_max_wr;
    ctx->depth = (uint32_t)params->env->ib_recv_depth;
    ctx->slots = (uint32_t)params->env->notify_slots;
    /* At least four heartbeats per timeout, so a live idle peer is never
     * taken for an unresponsive one. */
    ctx->hb_ns = params->env->heartbeat * 1000000ull;
    if (params->env->op_timeout && params->env->op_timeout * 1000000ull / 4 < ctx->hb_ns)
        ctx->hb_ns = params->env->op_timeout * 1000000ull / 4;
    ctx->limbo_ns = params->env->op_timeout * 1000000ull / 2;
    /* Past the QP's own retries (SR_IB_QP_TIMEOUT x SR_IB_QP_RETRY, about
     * 2 s), and before the operation timeout: a quarter of it, 4..30 s. */
    ctx->stall_ns = params->env->op_timeout ? params->env->op_timeout * 1000000ull / 4
                                            : SR_IB_STALL_MAX_NS;
    if (ctx->stall_ns < SR_IB_STALL_MIN_NS)
        ctx->stall_ns = SR_IB_STALL_MIN_NS;
    if (ctx->stall_ns > SR_IB_STALL_MAX_NS)
        ctx->stall_ns = SR_IB_STALL_MAX_NS;
    ctx->max_inline = -1;
    ctx->wake_pipe[0] = ctx->wake_pipe[1] = -1;
    pthread_mutex_init(&ctx->nlock, NULL);
    pthread_mutex_init(&ctx->rlock, NULL);
    pthread_mutex_init(&ctx->flock, NULL);
    pthread_mutex_init(&ctx->plock, NULL);
    sr_pool_init(&ctx->ops, sizeof(sr_ib_op_t), 512);
    if (ctx->qpp < 1 || ctx->qpp > 8 || (ctx->max_wr != 0 && ctx->max_wr < 4) || ctx->depth < 4 ||
        ctx->depth > 65536 || ctx->slots < 1) {
        sr_error("verbs: SYMRAIL_IB_QPS_PER_PEER (1..8), SYMRAIL_IB_MAX_WR (0 or >= 4), "
                 "SYMRAIL_IB_NOTIFY_DEPTH (4..65536) or SYMRAIL_NOTIFY_SLOTS (>= 1) out of range");
        st = SYMRAIL_ERR_INVALID;
        goto err;
    }
    /* Application messages never take the last SR_IB_CTL_RESERVE buffers, so
     * a lane repair can always be negotiated, even against a receiver that
     * does not consume. */
    if (ctx->slots > ctx->depth - SR_IB_CTL_RESERVE) {
        sr_info("verbs: SYMRAIL_NOTIFY_SLOTS=%u is more than SYMRAIL_IB_NOTIFY_DEPTH=%u allows: "
                "using %u", ctx->slots, ctx->depth, ctx->depth - SR_IB_CTL_RESERVE);
        ctx->slots = ctx->depth - SR_IB_CTL_RESERVE;
    }
    st = sr_ib_parse_fault(ctx);
    if (st != SYMRAIL_OK)
        goto err;
    st = sr_ib_find_rails(ctx);
    if (st != SYMRAIL_OK)
        goto err;
    if (ctx->nrails * ctx->qpp > SR_TL_MAX_LANES) {
        ctx->qpp = SR_TL_MAX_LANES / (uint32_t)ctx->nrails;
        sr_warn("verbs: %d rails: using %u QPs per peer and rail", ctx->nrails, ctx->qpp);
    }
    sr_ib_weigh_rails(ctx);
    st = sr_ib_scratch_init(ctx);
    if (st == SYMRAIL_OK)
        st = sr_ib_segs_init(ctx);
    if (st == SYMRAIL_OK)
        st = sr_ib_rc_init(ctx);
    if (st != SYMRAIL_OK)
        goto err;

    int n = params->n_pes;
    ctx->use = calloc((size_t)n, 1);
    size_t nlanes = (size_t)n * (size_t)ctx->nrails * ctx->qpp;
    ctx->lanes = calloc(nlanes, sizeof(*ctx->lanes));
    for (size_t l = 0; ctx->lanes && l < nlanes; l++)
        pthread_mutex_init(&ctx->lanes[l].lock, NULL);
    ctx->nqps = sr_ib_init_fault(ctx, 1) ? NULL : calloc((size_t)n, sizeof(*ctx->nqps));
    ctx->neps = n + params->peers_max;
    ctx->eps = calloc((size_t)ctx->neps, sizeof(*ctx->eps));
    if (!ctx->use || !ctx->lanes || !ctx->nqps || !ctx->eps) {
        st = SYMRAIL_ERR_NOMEM;
        goto err;
    }
    st = sr_ib_notify_init(ctx);
    if (st != SYMRAIL_OK)
        goto err;
    /* Without global atomicity the NIC's atomics and the CPU's on the same
     * word do not exclude each other: if this transport may carry a remote
     * peer, local peers and this PE get QPs too, so that the core can send
     * every atomic on a PE's words through the NIC. */
    ctx->glob_atomics = 1;
    for (int d = 0; d < ctx->ndevs; d++) {
        struct ibv_device_attr dda;
        if (ibv_query_device(ctx->devs[d].ctx, &dda) != 0 || dda.atomic_cap != IBV_ATOMIC_GLOB)
            ctx->glob_atomics = 0;
    }
    int any_remote = 0;
    for (int pe = 0; pe < n; pe++)
        any_remote |= !params->is_local[pe];
    int amo_local = params->amo_local && !ctx->glob_atomics && any_remote;
    if (amo_local)
        sr_debug("verbs: %s has no global atomicity: QPs to local peers too, for atomics",
                 ctx->rails[0].dev->name);
    size_t nused = 0;
    for (int pe = 0; pe < n; pe++) {
        ctx->use[pe] = !params->is_local[pe] || params->serve_local || amo_local;
        nused += ctx->use[pe];
    }
    sr_ib_size_queues(ctx, nused);
    for (int pe = 0; pe < n; pe++) {
        if (!ctx->use[pe])
            continue;
        for (int r = 0; r < ctx->nrails; r++) {
            for (uint32_t q = 0; q < ctx->qpp; q++) {
                sr_ib_lane_t *l = &ctx->lanes[((size_t)pe * ctx->nrails + r) * ctx->qpp + q];
                l->rail = &ctx->rails[r];
                sr_ib_lane_depth(l, ctx->max_wr);
                l->qp = sr_ib_init_fault(ctx, 3) ? NULL
                        : sr_ib_qp_create(ctx, l->rail, l->rail->dev->cq, ctx->max_wr, 0);
                if (l->qp == NULL) {
                    st = SYMRAIL_ERR_TRANSPORT;
                    goto err;
                }
            }
        }
        /* Sends not completed are bounded per peer, plus credit writes. */
        ctx->nqps[pe] = sr_ib_qp_create(ctx, &ctx->rails[0], ctx->ncq,
                                        SR_IB_NQP_SENDS + SR_IB_CREDIT_WRITES, ctx->srq);
        if (ctx->nqps[pe] == NULL || sr_ib_init_fault(ctx, 4)) {
            st = SYMRAIL_ERR_TRANSPORT;
            goto err;
        }
    }
    *ctx_p = ctx;
    return SYMRAIL_OK;

err:
    sr_ib_fini(ctx);
    return st;
}

static void sr_ib_fini(sr_tl_ctx_t *ctx)
{
    if (ctx->thread_up) {
        SR_IB_STORE(ctx->stop, 1);
        if (ctx->wake_pipe[1] >= 0) {
            char c = 0;
            (void)!write(ctx->wake_pipe[1], &c, 1);
        }
        pthread_join(ctx->thread, NULL);
    }
    if (ctx->wake_pipe[0] >= 0) {
        close(ctx->wake_pipe[0]);
        close(ctx->wake_pipe[1]);
    }
    int n = ctx->params.n_pes;
    /* Init may have failed between any two allocations: each array on its own. */
    for (int pe = 0; pe < n; pe++) {
        for (int l = 0; ctx->lanes && l < ctx->nrails * (int)ctx->qpp; l++) {
            sr_ib_lane_t *lane = &ctx->lanes[(size_t)pe * ctx->nrails * ctx->qpp + l];
            if (lane->qp)
                ibv_destroy_qp(lane->qp);
            pthread_mutex_destroy(&lane->lock);
        }
        if (ctx->nqps && ctx->nqps[pe])
            ibv_destroy_qp(ctx->nqps[pe]);
        if (ctx->eps) {
            sr_ib_rsegs_free(ctx->eps[pe]);
            free(ctx->eps[pe]);
        }
    }
    for (int pe = n; ctx->eps && pe < ctx->neps; pe++)
        if (ctx->eps[pe])
            sr_ib_peer_free(ctx->eps[pe]);
    /* After every QP that uses it, before its device's PD. */
    if (ctx->srq)
        ibv_destroy_srq(ctx->srq);
    free(ctx->unposted);
    if (ctx->ncq) {
        /* Events handed out must be acknowledged before the CQ goes. */
        ibv_destroy_cq(ctx->ncq);
    }
    if (ctx->nch)
        ibv_destroy_comp_channel(ctx->nch);
    sr_ib_rc_fini(ctx);
    sr_ib_segs_fini(ctx);
    for (int d = 0; d < ctx->ndevs; d++)
        sr_ib_dev_close(&ctx->devs[d]);
    while (ctx->flushes) {
        sr_ib_flush_t *f = ctx->flushes;
        ctx->flushes = f->next;
        free(f);
    }
    sr_pool_fini(&ctx->ops);
    sr_msgq_clear(&ctx->mq);
    free(ctx->scratch);
    free(ctx->use);
    free(ctx->lanes);
    free(ctx->nqps);
    free(ctx->eps);
    pthread_mutex_destroy(&ctx->nlock);
    pthread_mutex_destroy(&ctx->rlock);
    pthread_mutex_destroy(&ctx->flock);
    pthread_mutex_destroy(&ctx->plock);
    free(ctx);
}

static void sr_ib_attr(const sr_tl_ctx_t *ctx, sr_tl_attr_t *attr_p)
{
    attr_p->max_slice = 1u << 30;
    attr_p->can_sleep = 0;
    attr_p->ordered_lanes = 1;  /* RC: a QP executes its requests in order */
    attr_p->nic_atomics = !ctx->glob_atomics;
    attr_p->local_completion = 1;  /* inline and bounce-buffered puts */
    attr_p->peer_handshake = 1;    /* connected peers (peer.c) */
}

/* Any number of threads may be in here (ib.h, "Threads"): each part that
 * another thread is doing already is skipped, never waited for. */
static int sr_ib_progress(sr_tl_ctx_t *ctx)
{
    sr_ib_done_t done;
    sr_ib_done_init(&done);
    int total = sr_ib_poll(ctx, &done);
    total += sr_ib_rma_progress(ctx, &done);
    sr_ib_done_run(&done);
    if (pthread_mutex_trylock(&ctx->nlock) == 0) {
        total += sr_ib_npoll(ctx);
        sr_ib_return_credits(ctx);
        /* One thread at a time hands messages over, so that the core sees
         * them in the order they came. */
        sr_msgq_t q = { NULL, NULL, 0 };
        int mine = !ctx->dispatching && ctx->mq.head != NULL;
        if (mine) {
            q = ctx->mq;
            ctx->mq = (sr_msgq_t){ NULL, NULL, 0 };
            ctx->dispatching = 1;
        }
        pthread_mutex_unlock(&ctx->nlock);
        sr_msg_t *m;
        while ((m = sr_msgq_pop(&q)) != NULL) {
            if (m->flags & SR_IB_MSG_INTERNAL)
                sr_ib_ctl_recv(ctx, m->src, m->payload, m->len);
            else
                ctx->params.notify_cb(ctx->params.cb_arg, m->src, m->tag, m->payload, m->len);
            free(m);
            total++;
        }
        if (mine) {
            pthread_mutex_lock(&ctx->nlock);
            ctx->dispatching = 0;
            pthread_mutex_unlock(&ctx->nlock);
        }
    }
    /* Without the progress thread, its tick is ours. */
    if (sr_unlikely(!ctx->thread_up && SR_IB_LOAD(ctx->revive_next)))
        sr_ib_revive_tick(ctx, sr_time_ns());
    if (sr_unlikely(SR_IB_LOAD(ctx->repairs_pending)))
        sr_ib_repair(ctx);
    if (sr_unlikely(SR_IB_LOAD(ctx->lane_events)))
        sr_ib_lane_report(ctx);
    return total;
}

/*
 * A lane that waits for a completion that never comes.  The QP's own
 * retries end in an error completion when the peer stops answering; a
 * device can also stop sending without one (rxe, whose sending netdev went
 * down, has been seen to keep a QP's requests neither sent nor failed:
 * the put or get behind them waited for SYMRAIL_OP_TIMEOUT while the
 * other rail worked).  A signalled WR outstanding with nothing completed
 * on the lane for stall_ns breaks the lane as an error completion would:
 * it is repaired, or given up, and its work goes again or elsewhere.
 * Unsignalled WRs alone wait for nothing (a put completed at post), and a
 * lane under repair has its own bounds.  Lane lock held.
 */
static void sr_ib_lane_watch(sr_tl_ep_t *ep, sr_ib_lane_t *lane, uint64_t now)
{
    uint64_t done = SR_IB_LOAD(lane->sq_done);
    if (ep->ctx->stall_ns == 0 || lane->down || SR_IB_LOAD(lane->sig_seq) <= done || done != lane->watch_done ||
        lane->watch_since == 0) {
        lane->watch_done = done;
        lane->watch_since = now;
        return;
    }
    if (now - lane->watch_since < ep->ctx->stall_ns)
        return;
    char why[96];
    snprintf(why, sizeof(why), "no completion for %llu ms",
             (unsigned long long)((now - lane->watch_since) / 1000000ull));
    lane->watch_since = 0;
    if (lane->wc_err == 0)
        lane->wc_err = IBV_WC_RETRY_EXC_ERR;  /* as the QP's own retries would end */
    sr_ib_lane_fail(ep, lane, why);
}

static symrail_status_t sr_ib_ep_check(sr_tl_ep_t *ep)
{
    if (ep->local && ep->pe != ep->ctx->params.my_pe && ep->pid > 0 && sr_pid_gone(ep->pid))
        return SYMRAIL_ERR_PEER_GONE;
    /* Lanes under repair still count: the peer may well be alive. */
    symrail_status_t st = SYMRAIL_ERR_PEER_GONE;
    uint64_t now = sr_time_ns();
    for (int l = 0; l < ep->nlanes; l++) {
        sr_ib_lock(ep->ctx, &ep->lanes[l].lock);
        sr_ib_lane_watch(ep, &ep->lanes[l], now);
        sr_ib_revive_check(ep, &ep->lanes[l], now);
        if (ep->lanes[l].state != SR_IB_LANE_DEAD)
            st = SYMRAIL_OK;
        sr_ib_unlock(ep->ctx, &ep->lanes[l].lock);
    }
    /* A connected peer is there until its other endpoint says otherwise
     * (disconnect), whatever its lanes are doing. */
    if (ep->conn)
        return SR_IB_LOAD(ep->gone) ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_OK;
    return st;
}

static void sr_ib_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p)
{
#define SR_IB_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
    uint64_t bytes[SR_IB_MAX_RAILS] = { 0 }, slices[SR_IB_MAX_RAILS] = { 0 };
    size_t nlanes = (size_t)ctx->params.n_pes * ctx->nrails * ctx->qpp;
    for (size_t l = 0; ctx->lanes && l < nlanes; l++) {
        sr_ib_lane_t *lane = &ctx->lanes[l];
        if (lane->rail == NULL)
            continue;
        stats_p->slices_posted += SR_IB_READ(lane->n_posted);
        stats_p->completions += SR_IB_READ(lane->n_completed);
        stats_p->qp_full += SR_IB_READ(lane->n_qp_full);
        stats_p->cq_full += SR_IB_READ(lane->n_cq_full);
        bytes[lane->rail - ctx->rails] += SR_IB_READ(lane->bytes);
        slices[lane->rail - ctx->rails] += SR_IB_READ(lane->slices);
    }
    for (int pe = ctx->params.n_pes; ctx->eps && pe < ctx->neps; pe++) {
        sr_tl_ep_t *ep = __atomic_load_n(&ctx->eps[pe], __ATOMIC_ACQUIRE);
        for (int l = 0; ep && l < ep->nlanes; l++) {
            sr_ib_lane_t *lane = &ep->lanes[l];
            stats_p->slices_posted += SR_IB_READ(lane->n_posted);
            stats_p->completions += SR_IB_READ(lane->n_completed);
            bytes[lane->rail - ctx->rails] += SR_IB_READ(lane->bytes);
            slices[lane->rail - ctx->rails] += SR_IB_READ(lane->slices);
        }
    }
    stats_p->repairs += SR_IB_READ(ctx->n_repaired);
    stats_p->retries += SR_IB_READ(ctx->n_replayed);  /* locally completed puts posted again */
    sr_ib_rc_stats(ctx, stats_p);
    for (int r = 0; r < ctx->nrails && stats_p->nrails < SYMRAIL_STATS_MAX_RAILS; r++) {
        sr_ib_rail_t *rail = &ctx->rails[r];
        __typeof__(stats_p->rails[0]) *out = &stats_p->rails[stats_p->nrails++];
        snprintf(out->name, sizeof(out->name), "%.20s:%d", rail->dev->name, rail->port);
        out->bytes = bytes[r];
        out->slices = slices[r];
    }
#undef SR_IB_READ
}

static uint32_t sr_ib_wait_prepare(sr_tl_ctx_t *ctx)
{
    (void)ctx;
    return 0;
}

static void sr_ib_wait(sr_tl_ctx_t *ctx, uint32_t token, uint64_t timeout_ns)
{
    (void)ctx, (void)token, (void)timeout_ns;
}

static void sr_ib_wait_done(sr_tl_ctx_t *ctx)
{
    (void)ctx;
}

const sr_tl_ops_t sr_tl_verbs_ops = {
    .name         = "verbs",
    .init         = sr_ib_init,
    .fini         = sr_ib_fini,
    .attr         = sr_ib_attr,
    .mem_reg      = sr_ib_mem_reg,
    .mem_dereg    = sr_ib_mem_dereg,
    .mkey_pack    = sr_ib_mkey_pack,
    .rkey_unpack  = sr_ib_rkey_unpack,
    .rkey_release = sr_ib_rkey_release,
    .addr_pack    = sr_ib_addr_pack,
    .reachable    = sr_ib_reachable,
    .connect      = sr_ib_connect,
    .wireup_done  = sr_ib_wireup_done,
    .disconnect   = sr_ib_disconnect,
    .ep_addr_pack = sr_ib_ep_addr_pack,
    .ep_ctl = sr_ib_ep_ctl,
    .job_key = sr_tl_no_job_key,
    .ptr          = sr_tl_no_ptr,
    .prefetch     = sr_tl_no_prefetch,
    .local_hint   = sr_ib_local_hint,
    .ep_lanes     = sr_ib_ep_lanes,
    .put          = sr_ib_put,
    .get          = sr_ib_get,
    .atomic       = sr_ib_atomic,
    .notify       = sr_ib_notify,
    .flush        = sr_ib_flush,
    .ep_post_end  = sr_ib_ep_post_end,
    .notify_release = sr_ib_notify_release,
    .ep_heard     = sr_ib_ep_heard,
    .progress     = sr_ib_progress,
    .ep_check     = sr_ib_ep_check,
    .stats        = sr_ib_stats,
    .wait_prepare = sr_ib_wait_prepare,
    .wait         = sr_ib_wait,
    .wait_done    = sr_ib_wait_done,
};
