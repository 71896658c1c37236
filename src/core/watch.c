/*
 * Under SYMRAIL_ON_PEER_FAILURE=report, a thread that looks at the local
 * peers' processes now and then.  Over shared memory an operation to a PE
 * that died writes or reads memory that is still mapped and succeeds: only
 * a look at the process tells, and without this thread one happens only in
 * a wait or after a transport's error.  The operations keep their single
 * load of the peer's state; the thread is what sets it to FAILED in time.
 */
#include "config.h"
#include "core/rt.h"
#include "util/log.h"
#include "util/sys.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static struct {
    pthread_t       thread;
    pthread_mutex_t lock;
    pthread_cond_t  cond;
    int             up, stop;
    uint64_t        period_ns;
} sr_watch = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *sr_watch_run(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&sr_watch.lock);
    while (!sr_watch.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t at = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
                      sr_watch.period_ns;
        ts.tv_sec = (time_t)(at / 1000000000ull);
        ts.tv_nsec = (long)(at % 1000000000ull);
        while (!sr_watch.stop &&
               pthread_cond_timedwait(&sr_watch.cond, &sr_watch.lock, &ts) != ETIMEDOUT)
            ;
        if (sr_watch.stop)
            break;
        pthread_mutex_unlock(&sr_watch.lock);
        sr_peers_watch_local();
        pthread_mutex_lock(&sr_watch.lock);
    }
    pthread_mutex_unlock(&sr_watch.lock);
    return NULL;
}

symrail_status_t sr_watch_start(void)
{
    int local = 0;
    for (int pe = 0; pe < sr_rt.n_pes; pe++)
        local += pe != sr_rt.my_pe && sr_rt.peers[pe].is_local;
    if (!sr_rt.report || local == 0)
        return SYMRAIL_OK;
    /* A death is seen within a quarter of the timeout, so that a call
     * fails within it. */
    uint64_t period = sr_rt.env.heartbeat * 1000000ull;
    if (sr_rt.env.op_timeout && period > sr_rt.env.op_timeout * 250000ull)
        period = sr_rt.env.op_timeout * 250000ull;
    sr_watch.period_ns = period ? period : 1000000ull;
    sr_watch.stop = 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&sr_watch.cond, &ca);
    pthread_condattr_destroy(&ca);
    /* The application's signals go to its own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&sr_watch.thread, NULL, sr_watch_run, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        sr_error("cannot start the thread that watches local peers: %s", strerror(err));
        pthread_cond_destroy(&sr_watch.cond);
        return SYMRAIL_ERR_SYSTEM;
    }
    sr_watch.up = 1;
    return SYMRAIL_OK;
}

void sr_watch_stop(void)
{
    if (!sr_watch.up)
        return;
    pthread_mutex_lock(&sr_watch.lock);
    sr_watch.stop = 1;
    pthread_cond_signal(&sr_watch.cond);
    pthread_mutex_unlock(&sr_watch.lock);
    pthread_join(sr_watch.thread, NULL);
    pthread_cond_destroy(&sr_watch.cond);
    sr_watch.up = 0;
}
