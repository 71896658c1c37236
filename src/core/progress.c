/*
 * One wait loop for every blocking call: spin a little, then sleep on the
 * transport that can wake us (or back off), looking at the peers' liveness
 * now and then, so that every wait ends in a result or in an error naming
 * the peer it was waiting for.
 */
#include "config.h"
#include "core/rt.h"
#include "core/batch.h"
#include "util/log.h"
#include "util/sys.h"

#include <sched.h>
#include <stddef.h>
#include <time.h>

/* How long one sleep lasts before the waiter looks at its peers again. */
#define SR_WAIT_SLICE_NS   (20u * 1000u * 1000u)
#define SR_BACKOFF_MAX_NS  (1000u * 1000u)
/* How long a wait that nobody can wake polls before it backs off. */
#define SR_YIELD_NS        (2u * 1000u * 1000u)

int sr_progress(sr_ctx_t *ctx)
{
    int n = 0;
    if (sr_unlikely(sr_rt.mt)) {
        /* Completions of other contexts that this thread finds go to
         * their inboxes; ours we handle, and what others found for us. */
        sr_ctx_cur = ctx;
        for (int i = 0; i < sr_rt.ntls; i++)
            n += sr_rt.tls[i].ops->progress(sr_rt.tls[i].tl);
        sr_ctx_cur = NULL;
        if (sr_unlikely(__atomic_load_n(&sr_notify_work, __ATOMIC_RELAXED)))
            sr_notify_progress();
        if (ctx == NULL)
            return n;
        if (__atomic_load_n(&ctx->inbox, __ATOMIC_RELAXED) != NULL)
            sr_ctx_drain(ctx);
    } else {
        for (int i = 0; i < sr_rt.ntls; i++)
            n += sr_rt.tls[i].ops->progress(sr_rt.tls[i].tl);
        if (sr_unlikely(__atomic_load_n(&sr_notify_work, __ATOMIC_RELAXED)))
            sr_notify_progress();
        if (ctx == NULL)
            ctx = sr_rt.dctx;  /* the retries of the others wait for their next call */
    }
    if (sr_unlikely(ctx != NULL && ctx->retry_head != NULL))
        sr_rma_progress_retries(ctx);
    if (sr_unlikely(ctx != NULL && ctx->held_head != NULL))
        sr_rma_progress_held(ctx);
    if (sr_unlikely(__atomic_load_n(&sr_batch_active, __ATOMIC_RELAXED) != NULL))
        sr_batch_progress();
    return n;
}

static inline void sr_spin_pause(void)
{
    /* With more PEs than CPUs, the peer we wait for may need our CPU. */
    if (sr_rt.oversubscribed)
        sched_yield();
    else
        sr_cpu_relax();
}

/* One look at the peers; in a multi-threaded job one thread looks at a time. */
static int sr_wait_peers_check(uint64_t now, symrail_status_t *st_p)
{
    if (!sr_rt.mt)
        return sr_peers_check(now, st_p);
    if (pthread_mutex_trylock(&sr_rt.live_lock) != 0)
        return -1;
    int bad = sr_peers_check(now, st_p);
    pthread_mutex_unlock(&sr_rt.live_lock);
    return bad;
}

symrail_status_t sr_wait(sr_ctx_t *ctx, sr_cond_fn_t cond, void *arg, unsigned flags,
                         uint64_t timeout_ms, const char *what)
{
    uint64_t spins = sr_rt.env.spin_count;
    uint64_t start = 0, next_check = 0, backoff = 1000;

    for (uint64_t i = 0; i < spins; i++) {
        sr_progress(ctx);
        if (cond(arg))
            return SYMRAIL_OK;
        sr_spin_pause();
    }

    start = sr_time_ns();
    next_check = start + SR_WAIT_SLICE_NS;
    for (;;) {
        sr_progress(ctx);
        if (cond(arg))
            return SYMRAIL_OK;
        if ((flags & SR_WAIT_REMOTE) && sr_rt.sleeper >= 0) {
            sr_tl_slot_t *s = &sr_rt.tls[sr_rt.sleeper];
            uint32_t token = s->ops->wait_prepare(s->tl);
            int done = cond(arg);
            if (!done) {
                __atomic_fetch_add(&sr_rt.waits_slept, 1, __ATOMIC_RELAXED);
                s->ops->wait(s->tl, token, SR_WAIT_SLICE_NS);
            }
            s->ops->wait_done(s->tl);
            if (done)
                return SYMRAIL_OK;
            /* Woken: a writer is at work, and more may follow.  Poll a
             * while before arming again, since every arming interrupts the
             * other CPUs (membarrier) and makes each writer ring again. */
            for (uint64_t i = 0; i < spins; i++) {
                sr_progress(ctx);
                if (cond(arg))
                    return SYMRAIL_OK;
                sr_spin_pause();
            }
        } else if (sr_time_ns() - start < SR_YIELD_NS) {
            /* Nobody can wake us, and even the shortest sleep lasts tens of
             * microseconds (timer slack): a round trip would pay that.  Keep
             * polling, giving the CPU to whoever wants it, for a while. */
            sched_yield();
        } else {
            /* Progress depends on a peer that cannot wake us: back off. */
            struct timespec ts = { 0, (long)backoff };
            nanosleep(&ts, NULL);
            if (backoff < SR_BACKOFF_MAX_NS)
                backoff *= 2;
        }

        uint64_t now = sr_time_ns();
        if (now >= next_check) {
            symrail_status_t pst = SYMRAIL_OK;
            next_check = now + SR_WAIT_SLICE_NS;
            int bad = sr_wait_peers_check(now, &pst);
            if (bad >= 0) {
                /* A peer writes everything it owes us before it exits. */
                sr_progress(ctx);
                if (cond(arg))
                    return SYMRAIL_OK;
                sr_peer_fail_log(what, bad, pst);
                return pst;
            }
        }
        if (timeout_ms && now - start >= timeout_ms * 1000000ull) {
            if (flags & SR_WAIT_USER_TIMEOUT)
                return SYMRAIL_ERR_TIMEOUT;
            sr_error("%s: no progress for %llu ms (SYMRAIL_OP_TIMEOUT)", what,
                     (unsigned long long)timeout_ms);
            return SYMRAIL_ERR_TIMEOUT;
        }
    }
}
