#include "config.h"
#include "core/rt.h"
#include "core/spray_core.h"
#include "core/region.h"
#include "core/batch.h"
#include "core/team.h"
#include "core/endpoint.h"
#include "util/log.h"
#include "util/strlist.h"
#include "util/sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


sr_rt_t sr_rt = { .state = SR_STATE_NONE, .sleeper = -1, .my_pe = -1, .n_pes = -1,
                  .ctx_lock = PTHREAD_MUTEX_INITIALIZER,
                  .lane_lock = PTHREAD_MUTEX_INITIALIZER,
                  .live_lock = PTHREAD_MUTEX_INITIALIZER,
                  .notify_lock = PTHREAD_MUTEX_INITIALIZER,
                  .heap_lock = PTHREAD_MUTEX_INITIALIZER };

static const sr_tl_ops_t *sr_tl_find(const char *name, size_t len)
{
    for (size_t i = 0; i < sr_tl_nall; i++)
        if (sr_list_item_is(name, len, sr_tl_all[i]->name))
            return sr_tl_all[i];
    return NULL;
}

/* [n_max]: PEs on this node, as the launcher says or as SYMRAIL_TEST_NODE_SIZE
 * pretends, and connected peers on this host (endpoint.c). */
uint8_t *sr_is_local;

const sr_tl_ops_t *sr_tl_by_name(const char *name)
{
    return sr_tl_find(name, strlen(name));
}

symrail_status_t sr_tl_open(const sr_tl_ops_t *ops, int for_peers)
{
    const sr_boot_info_t *bi = sr_boot_info(sr_rt.boot);
    const char *list = sr_rt.env.transports;
    sr_tl_mem_t heap = { sr_rt.heap_base, sr_rt.heap_size, sr_rt.heap_name, 0 };
    sr_tl_mem_t data = { sr_rt.data_base, sr_rt.data_len, sr_rt.data_name, 0 };
    if (sr_rt.ntls >= SR_MAX_TLS)
        return SYMRAIL_ERR_UNSUPPORTED;
    sr_tl_slot_t *slot = &sr_rt.tls[sr_rt.ntls];
    int shm = sr_list_has(list, "shm");
    sr_tl_params_t params = {
        .my_pe = bi->rank, .n_pes = bi->size, .job = bi->job,
        .is_local = sr_is_local, .env = &sr_rt.env, .thread_multiple = sr_rt.mt,
        .serve_local = !shm, .amo_local = shm,
        .notify_cb = sr_notify_deliver, .lane_cb = sr_lane_event,
        .cb_arg = slot,  /* lane reports say which transport they come from */
        .peers_max = sr_rt.n_max - sr_rt.n_pes, .peer_secret = sr_endpoint_secret(),
        .for_peers = for_peers, .ctl_send = sr_ep_ctl_send,
        /* The exchange at init carries the key: a transport opened later,
         * for connected peers, authenticates them by keys of their own. */
        .job_key_late = !for_peers && !(sr_rt.env.job_secret && *sr_rt.env.job_secret),
    };
    symrail_status_t st = ops->init(&params, &slot->tl);
    if (st != SYMRAIL_OK)
        return st;
    slot->ops = ops;
    /* A transport sets the fields it has: none left from an earlier init. */
    memset(&slot->attr, 0, sizeof(slot->attr));
    ops->attr(slot->tl, &slot->attr);
    st = ops->mem_reg(slot->tl, SR_HEAP_REGION, &heap);
    if (st == SYMRAIL_OK && sr_rt.data_len)
        st = ops->mem_reg(slot->tl, SR_DATA_REGION, &data);
    /* Counted only now: progress in other threads reads the slots up to ntls. */
    __atomic_store_n(&sr_rt.ntls, sr_rt.ntls + 1, __ATOMIC_RELEASE);
    return st;
}

static symrail_status_t sr_tls_open(void)
{
    const char *list = sr_rt.env.transports;
    const char *pos = list, *p;
    size_t len;
    while (sr_list_next(&pos, &p, &len)) {
        /* The names were checked against the variable table's range at load. */
        const sr_tl_ops_t *ops = sr_tl_find(p, len);
        if (ops == NULL) {
            sr_info("transport '%.*s' is not compiled into this build", (int)len, p);
        } else if (sr_rt.ntls < SR_MAX_TLS) {
            symrail_status_t st = sr_tl_open(ops, 0);
            if (st == SYMRAIL_ERR_UNSUPPORTED)
                sr_info("transport %s cannot run here; skipped", ops->name);
            else if (st != SYMRAIL_OK)
                return st;
        }
    }
    if (sr_rt.ntls == 0) {
        sr_error("SYMRAIL_TRANSPORTS='%s' leaves no usable transport", list);
        return SYMRAIL_ERR_NO_TRANSPORT;
    }
    return SYMRAIL_OK;
}

static void sr_teardown(void)
{
    sr_rt.spin_ns = 0;  /* waits from here on touch no peer's heap (progress.c) */
    sr_watch_stop();
    sr_team_fini();
    sr_batches_fini();
    sr_seg_names_fini();
    sr_regions_fini();
    for (int pe = 0; sr_rt.peers && pe < sr_rt.n_pes; pe++) {
        if (sr_rt.peers[pe].ep)
            sr_rt.peers[pe].ops->disconnect(sr_rt.peers[pe].ep);
        if (sr_rt.peers[pe].amo_cand)
            sr_rt.peers[pe].amo_cand_ops->disconnect(sr_rt.peers[pe].amo_cand);
    }
    sr_endpoint_fini();
    sr_health_fini();
    free(sr_rt.peers);
    free(sr_rt.pids);
    free(sr_is_local);
    sr_is_local = NULL;
    sr_rt.peers = NULL;
    sr_rt.pids = NULL;
    for (int i = sr_rt.ntls - 1; i >= 0; i--)
        sr_rt.tls[i].ops->fini(sr_rt.tls[i].tl);
    sr_rt.ntls = 0;
    if (sr_rt.heap_base)
        sr_heap_fini();
    sr_data_fini();
    sr_notify_fini();
    /* Requests still in flight die with their contexts: their transports
     * are gone by now. */
    sr_ctxs_fini();
}

static void sr_boot_at_exit(void)
{
    sr_boot_fini(sr_rt.boot);
    sr_rt.boot = NULL;
}

symrail_status_t sr_core_init(int thread_level)
{
    extern char **environ;
    symrail_status_t st;

    sr_log_setup(SR_LOG_WARN);
    st = sr_env_load(sr_env_getenv, &sr_rt.env);
    if (st != SYMRAIL_OK)
        return st;
    sr_log_setup((sr_log_level_t)sr_log_level_parse(sr_rt.env.log));
    sr_env_warn_unknown(environ);
    st = sr_rma_hold_parse(sr_rt.env.test_hold_lane);
    if (st == SYMRAIL_OK)
        st = sr_spray_setup();
    if (st != SYMRAIL_OK)
        goto err_env;

    /* The launcher's connection outlives a finalize, so the library may
     * start again in the same process (OpenSHMEM 1.6); it closes at exit. */
    if (sr_rt.boot == NULL) {
        st = sr_boot_init(sr_rt.env.op_timeout, &sr_rt.boot);
        if (st != SYMRAIL_OK)
            goto err_env;
        static int at_exit;
        if (!at_exit++)
            atexit(sr_boot_at_exit);
    }
    const sr_boot_info_t *bi = sr_boot_info(sr_rt.boot);
    sr_rt.my_pe = bi->rank;
    sr_rt.n_pes = bi->size;
    sr_log_set_pe(bi->rank);
    sr_rt.thread_level = thread_level;
    sr_rt.mt = thread_level == SYMRAIL_THREAD_MULTIPLE;
    sr_rt.report = strcasecmp(sr_rt.env.on_peer_failure, "report") == 0;
    sr_rt.peer_events = sr_rt.peers_suspect = sr_rt.peers_failed = 0;
    sr_rt.peers_down = 0;
    sr_rt.live_last = sr_time_ns();  /* a first look long after this is a gap */

    /* Room for connected peers from the start: nothing moves while other
     * threads read these. */
    sr_rt.n_max = bi->size + (int)sr_rt.env.connect_max;
    sr_rt.peers = calloc((size_t)sr_rt.n_max, sizeof(*sr_rt.peers));
    sr_rt.pids = calloc((size_t)sr_rt.n_max, sizeof(*sr_rt.pids));
    sr_is_local = calloc((size_t)sr_rt.n_max, 1);
    if (sr_rt.peers == NULL || sr_rt.pids == NULL || sr_is_local == NULL ||
        sr_endpoint_init() != SYMRAIL_OK ||
        sr_ctx_new_default() != SYMRAIL_OK || sr_ctx_new(0, &sr_rt.cctx) != SYMRAIL_OK ||
        sr_notify_init(sr_rt.n_max) != SYMRAIL_OK) {
        st = SYMRAIL_ERR_NOMEM;
        goto err_teardown;
    }
    uint64_t split = sr_rt.env.test_node_size;
    if (split)
        sr_warn("SYMRAIL_TEST_NODE_SIZE=%llu: PEs count as on one node only in groups of %llu "
                "ranks (testing only)", (unsigned long long)split, (unsigned long long)split);
    for (int pe = 0; pe < bi->size; pe++) {
        sr_is_local[pe] = bi->is_local[pe] &&
                          (!split || (uint64_t)pe / split == (uint64_t)bi->rank / split);
        sr_rt.peers[pe].is_local = sr_is_local[pe];
    }
    st = sr_heap_init();
    if (st != SYMRAIL_OK)
        goto err_teardown;
    /* Before the transports, whose threads could write globals meanwhile. */
    st = sr_data_init();
    if (st != SYMRAIL_OK)
        goto err_teardown;
    st = sr_tls_open();
    if (st != SYMRAIL_OK)
        goto err_teardown;
    st = sr_wireup();
    if (st != SYMRAIL_OK)
        goto err_teardown;
    st = sr_team_init();
    if (st != SYMRAIL_OK)
        goto err_teardown;
    st = sr_watch_start();
    if (st != SYMRAIL_OK)
        goto err_teardown;
    sr_rt.barrier_epoch = 0;
    sr_rt.state = SR_STATE_UP;
    sr_info("initialized: PE %d of %d, heap %zu bytes", sr_rt.my_pe, sr_rt.n_pes,
            sr_rt.heap_size);
    if (sr_rt.my_pe == 0 && (sr_rt.env.print_version || sr_rt.env.print_info))
        printf("symrail %s (OpenSHMEM 1.6)\n", SYMRAIL_VERSION_STRING);
    if (sr_rt.my_pe == 0 && sr_rt.env.print_info) {
        printf("environment variables (OpenSHMEM's SHMEM_SYMMETRIC_SIZE, SHMEM_DEBUG, "
               "SHMEM_VERSION, SHMEM_INFO set those they stand for):\n");
        sr_env_print(stdout, sr_env_getenv);
    }
    if (sr_rt.my_pe == 0)
        fflush(stdout);
    return SYMRAIL_OK;

err_teardown:
    /* The launcher's connection stays, as after a finalize: a PMIx client
     * started again in one process loses its job data (PMIx_Get of its own
     * local rank fails), and the next init may succeed. */
    sr_teardown();
err_env:
    sr_env_release(&sr_rt.env);
    sr_rt.my_pe = sr_rt.n_pes = -1;
    return st;
}

void sr_stats_collect(symrail_stats_t *st)
{
    sr_stats_t sum;
    const sr_stats_t *s = &sum;
    sr_ctx_stats_sum(&sum);
    sum.notifies_sent = __atomic_load_n(&sr_rt.notifies_sent, __ATOMIC_RELAXED);
    sum.notifies_recv = __atomic_load_n(&sr_rt.notifies_recv, __ATOMIC_RELAXED);
    sum.waits_slept = __atomic_load_n(&sr_rt.waits_slept, __ATOMIC_RELAXED);
    sum.backpressure_stalls += __atomic_load_n(&sr_rt.notify_stalls, __ATOMIC_RELAXED);
    memset(st, 0, sizeof(*st));
    st->puts = s->puts;
    st->gets = s->gets;
    st->put_bytes = s->put_bytes;
    st->get_bytes = s->get_bytes;
    st->atomics = s->atomics;
    st->signals = s->signals;
    st->notify_sent = s->notifies_sent;
    st->notify_recv = s->notifies_recv;
    st->quiets = s->quiets;
    st->barriers = s->barriers;
    st->sleeps = s->waits_slept;
    st->stalls = s->backpressure_stalls;
    st->retries = s->retries;
    st->peers_suspect = __atomic_load_n(&sr_rt.peers_suspect, __ATOMIC_RELAXED);
    st->peers_failed = __atomic_load_n(&sr_rt.peers_failed, __ATOMIC_RELAXED);
    st->lanes_paused = __atomic_load_n(&sr_rt.lanes_paused, __ATOMIC_RELAXED);
    st->lane_probes = __atomic_load_n(&sr_rt.lane_probes, __ATOMIC_RELAXED);
    st->lanes_resumed = __atomic_load_n(&sr_rt.lanes_resumed, __ATOMIC_RELAXED);
    for (int i = 0; i < sr_rt.ntls; i++)
        sr_rt.tls[i].ops->stats(sr_rt.tls[i].tl, st);
}

static void sr_stats_print(void)
{
    symrail_stats_t s;
    char rails[512] = "";
    size_t pos = 0;
    sr_stats_collect(&s);
    sr_boot_stats_t b;
    sr_boot_stats(sr_rt.boot, &b);
    for (uint32_t r = 0; r < s.nrails && pos < sizeof(rails); r++)
        pos += (size_t)snprintf(rails + pos, sizeof(rails) - pos, " %s %llu B/%llu slices",
                                s.rails[r].name, (unsigned long long)s.rails[r].bytes,
                                (unsigned long long)s.rails[r].slices);
    char rc[160] = "";
    if (s.rcache_hits || s.rcache_misses)
        snprintf(rc, sizeof(rc), "; private buffers in place: rcache hits %llu misses %llu "
                 "registrations %llu invalidations %llu evictions %llu",
                 (unsigned long long)s.rcache_hits, (unsigned long long)s.rcache_misses,
                 (unsigned long long)s.rcache_regs, (unsigned long long)s.rcache_invalidations,
                 (unsigned long long)s.rcache_evictions);
    /* Asked for explicitly, so printed whatever SYMRAIL_LOG says. */
    fprintf(stderr,
            "symrail %s:%d:%d stats: puts %llu (%llu B) gets %llu (%llu B) atomics %llu "
            "signals %llu notify sent %llu recv %llu quiets %llu barriers %llu sleeps %llu "
            "slices %llu completions %llu stalls %llu (qp full %llu, cq full %llu) retries %llu "
            "repairs %llu lanes paused %llu probed %llu resumed %llu; pmix gets %llu (%llu B) puts %llu (%llu B) fences %llu names %llu"
            "%s%s%s\n", sr_log_cfg.host, sr_log_cfg.pid, sr_log_cfg.pe,
            (unsigned long long)s.puts, (unsigned long long)s.put_bytes,
            (unsigned long long)s.gets, (unsigned long long)s.get_bytes,
            (unsigned long long)s.atomics, (unsigned long long)s.signals,
            (unsigned long long)s.notify_sent, (unsigned long long)s.notify_recv,
            (unsigned long long)s.quiets, (unsigned long long)s.barriers,
            (unsigned long long)s.sleeps, (unsigned long long)s.slices_posted,
            (unsigned long long)s.completions, (unsigned long long)s.stalls,
            (unsigned long long)s.qp_full, (unsigned long long)s.cq_full,
            (unsigned long long)s.retries, (unsigned long long)s.repairs,
            (unsigned long long)s.lanes_paused, (unsigned long long)s.lane_probes,
            (unsigned long long)s.lanes_resumed, (unsigned long long)b.gets, (unsigned long long)b.get_bytes,
            (unsigned long long)b.puts, (unsigned long long)b.put_bytes,
            (unsigned long long)b.fences, (unsigned long long)b.names,
            s.nrails ? "; rails:" : "", rails, rc);
}

symrail_status_t sr_core_finalize(void)
{
    /* Every context's operations complete, those of contexts never
     * destroyed too (the application's threads are done by now). */
    symrail_status_t st = SYMRAIL_OK;
    for (sr_ctx_t *c = sr_rt.ctxs; c; c = c->next) {
        symrail_status_t qst = sr_ctx_quiet(c);
        if (st == SYMRAIL_OK)
            st = qst;
    }
    /* A job that goes on without its failed PEs ends without them too (the
     * others cannot wait for them) but still together: no PE unmaps its
     * heap while another may read it.  A PE that fails during the barrier
     * fails it for some PEs and maybe not for others, so those that passed
     * it meet the others in the survivors' barrier too. */
    int without = sr_rt.report && __atomic_load_n(&sr_rt.peers_failed, __ATOMIC_RELAXED) != 0;
    symrail_status_t bst = without ? SYMRAIL_ERR_PEER_GONE : sr_barrier();
    if (bst == SYMRAIL_ERR_MISMATCH)
        return bst;  /* a peer is in another collective call: the caller ends the job */
    if (sr_rt.report && (bst == SYMRAIL_OK || bst == SYMRAIL_ERR_PEER_GONE) &&
        __atomic_load_n(&sr_rt.peers_failed, __ATOMIC_RELAXED) != 0) {
        sr_info("finalize: without the %llu failed PE(s) (SYMRAIL_ON_PEER_FAILURE=report)",
                (unsigned long long)__atomic_load_n(&sr_rt.peers_failed, __ATOMIC_RELAXED));
        bst = sr_barrier_survivors();
        if (st == SYMRAIL_ERR_PEER_GONE)
            st = SYMRAIL_OK;
    }
    if (st == SYMRAIL_OK)
        st = bst;
    /* Past the barrier the others may exit at any moment: that is no
     * failure, and the watcher must not report it as one. */
    sr_watch_stop();
    if (sr_rt.env.stats)
        sr_stats_print();
    sr_teardown();
    sr_env_release(&sr_rt.env);
    sr_rt.state = SR_STATE_DOWN;
    sr_rt.my_pe = sr_rt.n_pes = -1;
    return st;
}

void sr_core_abort(int code, const char *msg)
{
    sr_error("aborting the job: %s", msg);
    fflush(stdout);
    fflush(stderr);
    sr_boot_abort(sr_rt.boot, code, msg);
}
