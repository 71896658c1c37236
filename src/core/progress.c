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

static inline void sr_spin_pause(int yield)
{
    /* With more PEs than CPUs, the peer we wait for may need our CPU. */
    if (yield)
        sched_yield();
    else
        sr_cpu_relax();
}

/*
 * Whether a local peer polled last on the CPU we run on: then it may be
 * queued behind us there, and polling without yielding would keep it from
 * running until the scheduler's slice ends (milliseconds: the load
 * balancer does not separate two busy PEs at once).  Publishes our own CPU
 * and looks at one peer a call, in turn (not the one waited for, which the
 * wait does not know), so that a look costs one line whatever the number
 * of PEs: with 3 PEs or more it is a hint.
 */
static int sr_wait_cpu_shared(void)
{
    static __thread unsigned next;  /* unsigned: a long job wraps it */
    int cpu = sched_getcpu() + 1;
    if (cpu <= 0)
        return 0;
    uint64_t *mine = &sr_intern()->wait_cpu;
    if (__atomic_load_n(mine, __ATOMIC_RELAXED) != (uint64_t)cpu)
        __atomic_store_n(mine, (uint64_t)cpu, __ATOMIC_RELAXED);
    for (int k = 0; k < sr_rt.n_pes; k++) {
        int pe = (int)(next++ % (unsigned)sr_rt.n_pes);
        if (pe == sr_rt.my_pe || sr_rt.peers[pe].base == NULL)
            continue;
        const sr_heap_intern_t *in = (const void *)sr_rt.peers[pe].base;
        return __atomic_load_n(&in->wait_cpu, __ATOMIC_RELAXED) == (uint64_t)cpu;
    }
    return 0;
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

/*
 * Polls cond until it holds (1) or the spin budget is spent (0): `polls`
 * times, then until `ns` more have passed, but never past a wait slice
 * after `ns` (checked every 8 polls).  A sleep costs tens of
 * microseconds to wake from (futex, IPI, a virtual CPU that halted), far
 * more than a collective's step, and on a machine with other load the CPU
 * it gives away may come back only after a scheduler slice (milliseconds)
 * while the peer that would answer runs.  So over shared memory a waiter
 * polls across such a slice before it sleeps, as OpenSHMEM and MPI
 * implementations do (they never sleep).  Polling only costs the peer it
 * waits for when both run on one CPU: with more PEs than CPUs, or when a
 * peer's last poll was on our CPU, each poll yields.  The clock is looked
 * at once every 8 polls, the CPUs once every 64.
 */
static int sr_wait_spin(sr_ctx_t *ctx, sr_cond_fn_t cond, void *arg, uint64_t polls,
                        uint64_t ns)
{
    uint64_t end = 0, cap = 0;
    int yield;
    if (polls == 0 && ns == 0)
        return 0;
    /* Two PEs that take turns on one CPU: a wait that polled 64 times
     * before it yielded would add those polls to every turn. */
    yield = sr_rt.oversubscribed || (sr_rt.spin_ns != 0 && sr_wait_cpu_shared());
    for (uint64_t i = 0;; i++) {
        sr_progress(ctx);
        if (cond(arg))
            return 1;
        sr_spin_pause(yield);
        /* A poll that gives the CPU away (a yield here, or in a transport's
         * progress) may get it back only a time slice later: 2000 of them
         * took seconds on a loaded machine, and the wait around looked at
         * no peer meanwhile.  So the polls end a wait slice past
         * SYMRAIL_SPIN_US too, counted from the first that failed. */
        if (i == 0)
            cap = sr_time_ns() + ns + SR_WAIT_SLICE_NS;
        if (((i + 1) & 7) != 0)
            continue;
        uint64_t now = sr_time_ns();
        if (now >= cap)
            return 0;
        if (i + 1 >= polls) {
            if (ns == 0)
                return 0;
            if (end == 0)
                end = now + ns;
            else if (now >= end)
                return 0;
        }
        if (((i + 1) & 63) == 0)
            yield = sr_rt.oversubscribed || (sr_rt.spin_ns != 0 && sr_wait_cpu_shared());
    }
}

void sr_wait_setup(void)
{
    /* Where every peer's writes land by themselves (shared memory), a
     * waiter that polls competes with no thread of its own: it polls
     * SYMRAIL_SPIN_US before it sleeps.  Not with more PEs than CPUs: there
     * the PE that everybody waits for shares its CPU with waiters, and
     * each one that sleeps leaves it more of the CPU than one that yields.
     * Over TCP the progress thread needs the CPU; verbs never sleeps. */
    sr_rt.spin_ns = 0;
    if (sr_rt.sleeper >= 0 && sr_rt.tls[sr_rt.sleeper].attr.immediate &&
        !sr_rt.oversubscribed)
        sr_rt.spin_ns = sr_rt.env.spin_us * 1000u;
}

/*
 * Which peer, if any, a look at the peers says ends the wait.  Under abort
 * any peer that is gone or unresponsive does (the job ends anyway).  Under
 * report the job goes on without it: a wait on one peer ends for that peer
 * only, and a wait that cannot name its peer for a peer whose state changed
 * to FAILED since the wait began (it may have been the one that was to
 * answer), but not for one that had failed before, nor for one only
 * suspect: other peers keep working.  A wait of a collective among all PEs
 * (on->all) also ends for a PE that failed before it began.
 */
static int sr_wait_peer_ends(const sr_wait_on_t *on, int bad, uint64_t *gen0_p,
                             symrail_status_t *st_p)
{
    if (!sr_rt.report)
        return bad;
    if (on->pe >= 0) {
        if (on->pe >= sr_rt.n_max)
            return -1;
        if (on->pe != bad)
            (void)sr_peer_alive(on->pe, sr_time_ns());
        *st_p = sr_peer_state_status(on->pe);
        if (*st_p != SYMRAIL_OK)
            return on->pe;
        if (!on->all)
            return -1;
    }
    uint64_t gen = __atomic_load_n(&sr_rt.peer_events, __ATOMIC_ACQUIRE);
    if (gen == *gen0_p)
        return -1;
    /* The job's PEs: a connected peer that leaves is no failure of the job. */
    for (int pe = 0; pe < sr_rt.n_pes; pe++) {
        if (__atomic_load_n(&sr_rt.peers[pe].state_gen, __ATOMIC_ACQUIRE) > *gen0_p &&
            __atomic_load_n(&sr_rt.peers[pe].state, __ATOMIC_ACQUIRE) == SYMRAIL_PEER_FAILED) {
            *st_p = SYMRAIL_ERR_PEER_GONE;
            return pe;
        }
    }
    *gen0_p = gen;  /* only peers that came back: none to look at again */
    return -1;
}

symrail_status_t sr_wait_on(sr_ctx_t *ctx, sr_cond_fn_t cond, void *arg, unsigned flags,
                            uint64_t timeout_ms, const sr_wait_on_t *on)
{
    uint64_t spins = sr_rt.env.spin_count;
    uint64_t start = 0, next_check = 0, backoff = 1000;

    if (sr_wait_spin(ctx, cond, arg, spins, sr_rt.spin_ns))
        return SYMRAIL_OK;

    start = sr_time_ns();
    next_check = start + SR_WAIT_SLICE_NS;
    /* A collective among all PEs began when none had failed (it checked):
     * every change counts, also one made before this snapshot. */
    uint64_t gen0 = on->all ? 0 : __atomic_load_n(&sr_rt.peer_events, __ATOMIC_ACQUIRE);
    for (;;) {
        sr_progress(ctx);
        if (cond(arg))
            return SYMRAIL_OK;
        if ((flags & SR_WAIT_REMOTE) && sr_rt.sleeper >= 0) {
            sr_tl_slot_t *s = &sr_rt.tls[sr_rt.sleeper];
            if (sr_rt.spin_ns != 0)  /* asleep: on no CPU (sr_wait_cpu_shared) */
                __atomic_store_n(&sr_intern()->wait_cpu, 0, __ATOMIC_RELAXED);
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
            if (sr_wait_spin(ctx, cond, arg, spins, 0))
                return SYMRAIL_OK;
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
            bad = sr_wait_peer_ends(on, bad, &gen0, &pst);
            if (bad >= 0) {
                /* A peer writes everything it owes us before it exits. */
                sr_progress(ctx);
                if (cond(arg))
                    return SYMRAIL_OK;
                sr_peer_fail_log(on, bad, pst);
                return pst;
            }
        }
        if (timeout_ms && now - start >= timeout_ms * 1000000ull) {
            if (flags & SR_WAIT_USER_TIMEOUT)
                return SYMRAIL_ERR_TIMEOUT;
            char what[192];
            sr_error("%s: no progress for %llu ms (SYMRAIL_OP_TIMEOUT)",
                     sr_wait_on_name(on, what, sizeof(what)), (unsigned long long)timeout_ms);
            return SYMRAIL_ERR_TIMEOUT;
        }
    }
}
