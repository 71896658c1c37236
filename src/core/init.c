#include "config.h"
#include "core/rt.h"
#include "core/region.h"
#include "core/batch.h"
#include "core/team.h"
#include "core/endpoint.h"
#include "util/log.h"
#include "util/strlist.h"
#include "util/sys.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SR_BLOB_MAGIC   0x73796d7261696c33ull  /* "symrail3" */
#define SR_TL_NAME_LEN  16

sr_rt_t sr_rt = { .state = SR_STATE_NONE, .sleeper = -1, .my_pe = -1, .n_pes = -1,
                  .ctx_lock = PTHREAD_MUTEX_INITIALIZER,
                  .lane_lock = PTHREAD_MUTEX_INITIALIZER,
                  .live_lock = PTHREAD_MUTEX_INITIALIZER,
                  .notify_lock = PTHREAD_MUTEX_INITIALIZER,
                  .heap_lock = PTHREAD_MUTEX_INITIALIZER };

typedef struct {
    uint64_t magic;
    int32_t  pe;
    int32_t  pid;
    uint32_t ntls;
    uint64_t heap_size;  /* every PE must have the same */
    uint64_t data_len;   /* the data segment, 0: not symmetric here */
    uint64_t data_vaddr; /* its place in the executable */
} sr_blob_hdr_t;

/* Entries are whole words and addresses padded to them: each transport
 * reads its address, aligned, as the struct it packed. */
#define SR_BLOB_ALIGN 8
typedef struct {
    char     name[SR_TL_NAME_LEN];
    uint32_t len, pad;
} sr_blob_tl_t;

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

static symrail_status_t sr_blob_pack(void **blob_p, size_t *len_p)
{
    size_t cap = sizeof(sr_blob_hdr_t);
    for (int i = 0; i < sr_rt.ntls; i++) {
        size_t alen = 0;
        symrail_status_t st = sr_rt.tls[i].ops->addr_pack(sr_rt.tls[i].tl, NULL, &alen);
        if (st != SYMRAIL_OK)
            return st;
        cap += sizeof(sr_blob_tl_t) + SR_ALIGN_UP(alen, SR_BLOB_ALIGN);
    }
    char *blob = calloc(1, cap), *p;
    if (blob == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_blob_hdr_t hdr = { SR_BLOB_MAGIC, sr_rt.my_pe, (int32_t)getpid(), (uint32_t)sr_rt.ntls,
                          sr_rt.heap_size, sr_rt.data_len, sr_rt.data_vaddr };
    memcpy(blob, &hdr, sizeof(hdr));
    p = blob + sizeof(hdr);
    for (int i = 0; i < sr_rt.ntls; i++) {
        sr_blob_tl_t t = { { 0 }, 0, 0 };
        size_t alen = cap - (size_t)(p - blob) - sizeof(t);
        snprintf(t.name, sizeof(t.name), "%s", sr_rt.tls[i].ops->name);
        symrail_status_t st = sr_rt.tls[i].ops->addr_pack(sr_rt.tls[i].tl,
                                                            p + sizeof(t), &alen);
        if (st != SYMRAIL_OK) {
            free(blob);
            return st;
        }
        t.len = (uint32_t)alen;
        memcpy(p, &t, sizeof(t));
        p += sizeof(t) + SR_ALIGN_UP(alen, SR_BLOB_ALIGN);
    }
    *blob_p = blob;
    *len_p = (size_t)(p - blob);
    return SYMRAIL_OK;
}

/* The address `pe` published for transport `name`: 1 found, 0 not there,
 * -1 the blob is malformed. */
static int sr_blob_addr(const char *blob, size_t len, uint32_t ntls, const char *name,
                        const char **addr_p, size_t *alen_p)
{
    size_t pos = sizeof(sr_blob_hdr_t);
    for (uint32_t t = 0; t < ntls; t++) {
        sr_blob_tl_t bt;
        if (pos + sizeof(bt) > len)
            return -1;
        memcpy(&bt, blob + pos, sizeof(bt));
        pos += sizeof(bt);
        if (bt.len > len - pos)
            return -1;
        bt.name[SR_TL_NAME_LEN - 1] = '\0';
        if (strcmp(bt.name, name) == 0) {
            *addr_p = blob + pos;
            *alen_p = bt.len;
            return 1;
        }
        pos += SR_ALIGN_UP((size_t)bt.len, SR_BLOB_ALIGN);
    }
    return 0;
}

/* Where the main transport to a peer applies atomics with the CPU, a
 * transport whose atomics are the NIC's is connected too, if it reaches the
 * peer: it takes the peer's atomics should its words turn out to take NIC
 * atomics from elsewhere (sr_amo_route_apply). */
static symrail_status_t sr_peer_connect_amo(int pe, const char *blob, size_t len, uint32_t ntls)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    for (int i = 0; i < sr_rt.ntls; i++) {
        sr_tl_slot_t *slot = &sr_rt.tls[i];
        const char *addr;
        size_t alen;
        if (!slot->attr.nic_atomics || slot->ops == peer->ops ||
            sr_blob_addr(blob, len, ntls, slot->ops->name, &addr, &alen) != 1 ||
            !slot->ops->reachable(slot->tl, pe, addr, alen))
            continue;
        symrail_status_t st = slot->ops->connect(slot->tl, pe, addr, alen, &peer->amo_cand);
        if (st != SYMRAIL_OK) {
            sr_error("connecting to PE %d over %s for atomics failed: %s", pe, slot->ops->name,
                     symrail_strerror(st));
            return st;
        }
        peer->amo_cand_ops = slot->ops;
        sr_debug("PE %d also reached over %s, for atomics", pe, slot->ops->name);
        return SYMRAIL_OK;
    }
    return SYMRAIL_OK;
}

/* Connects to `pe` with the first of our transports (in preference order)
 * that the peer also runs and that reaches it. */
static symrail_status_t sr_peer_connect(int pe, const char *blob, size_t len)
{
    sr_blob_hdr_t hdr;
    if (len < sizeof(hdr))
        goto err_blob;
    memcpy(&hdr, blob, sizeof(hdr));
    if (hdr.magic != SR_BLOB_MAGIC || hdr.pe != pe)
        goto err_blob;
    sr_rt.pids[pe] = hdr.pid;
    for (int i = 0; i < sr_rt.ntls; i++) {
        sr_tl_slot_t *slot = &sr_rt.tls[i];
        const char *addr;
        size_t alen;
        int found = sr_blob_addr(blob, len, hdr.ntls, slot->ops->name, &addr, &alen);
        if (found < 0)
            goto err_blob;
        if (!found || !slot->ops->reachable(slot->tl, pe, addr, alen))
            continue;
        sr_tl_ep_t *ep;
        symrail_status_t st = slot->ops->connect(slot->tl, pe, addr, alen, &ep);
        if (st != SYMRAIL_OK) {
            sr_error("connecting to PE %d over %s failed: %s", pe, slot->ops->name,
                     symrail_strerror(st));
            return st;
        }
        sr_peer_setup(pe, slot, ep);
        return slot->attr.nic_atomics ? SYMRAIL_OK : sr_peer_connect_amo(pe, blob, len, hdr.ntls);
    }
    sr_error("no transport in SYMRAIL_TRANSPORTS='%s' reaches PE %d (pid %d)",
             sr_rt.env.transports, pe, hdr.pid);
    return SYMRAIL_ERR_NO_TRANSPORT;

err_blob:
    sr_error("the connection data of PE %d is malformed (mixed symrail versions?)", pe);
    return SYMRAIL_ERR_BOOT;
}

void sr_peer_setup(int pe, const sr_tl_slot_t *slot, sr_tl_ep_t *ep)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    peer->ops = slot->ops;
    peer->slice = slot->attr.max_slice < sr_rt.env.slice_size
                      ? slot->attr.max_slice : (size_t)sr_rt.env.slice_size;
    if (slot->attr.max_slice == SIZE_MAX)
        peer->slice = SIZE_MAX;  /* copies need no slicing */
    peer->base = slot->ops->ptr(ep, SR_HEAP_REGION, 0);
    peer->data_base = sr_rt.data_on ? slot->ops->ptr(ep, SR_DATA_REGION, 0) : NULL;
    peer->ordered = slot->attr.ordered_lanes;
    peer->local_comp = (uint8_t)slot->attr.local_completion;
    peer->immediate = (uint8_t)slot->attr.immediate;
    peer->amo_direct = peer->immediate;
    /* Last: a connected peer is usable once its endpoint is there. */
    __atomic_store_n(&peer->ep, ep, __ATOMIC_RELEASE);
    sr_peer_lanes_refresh(pe);
    sr_debug("PE %d reached over %s", pe, slot->ops->name);
}

/* Symmetric offsets are only symmetric if every heap has the same size: a
 * PE with a smaller one would fail allocations alone.  Every PE sees every
 * blob, so all of them refuse alike. */
static symrail_status_t sr_heap_sizes_agree(void *const *blobs, const size_t *lens)
{
    char list[256] = "";
    size_t pos = 0;
    int ndiff = 0;
    for (int pe = 0; pe < sr_rt.n_pes; pe++) {
        sr_blob_hdr_t hdr;
        if (lens[pe] < sizeof(hdr))
            continue;  /* sr_peer_connect reports it */
        memcpy(&hdr, blobs[pe], sizeof(hdr));
        if (hdr.magic != SR_BLOB_MAGIC || hdr.heap_size == sr_rt.heap_size)
            continue;
        if (ndiff++ < 8 && pos < sizeof(list))
            pos += (size_t)snprintf(list + pos, sizeof(list) - pos, "%sPE %d has %llu",
                                    ndiff > 1 ? ", " : "", pe,
                                    (unsigned long long)hdr.heap_size);
    }
    if (ndiff == 0)
        return SYMRAIL_OK;
    sr_error("SYMRAIL_HEAP_SIZE differs between PEs: PE %d has %zu bytes, %s%s; "
             "set the same value on every PE", sr_rt.my_pe, sr_rt.heap_size, list,
             ndiff > 8 ? ", ..." : "");
    return SYMRAIL_ERR_INVALID;
}

/* Offsets in the data segment are symmetric only if every PE runs the same
 * executable: the segments must have the same size and place in the file.
 * Every PE sees every blob, so all of them decide alike; a job whose PEs
 * differ still runs, with the heap only. */
static void sr_data_agree(void *const *blobs, const size_t *lens)
{
    int diff = -1;
    sr_blob_hdr_t hdr = { 0 };
    for (int pe = 0; pe < sr_rt.n_pes && diff < 0; pe++) {
        if (lens[pe] < sizeof(hdr))
            continue;  /* sr_peer_connect reports it */
        memcpy(&hdr, blobs[pe], sizeof(hdr));
        if (hdr.data_len != sr_rt.data_len || hdr.data_vaddr != sr_rt.data_vaddr)
            diff = pe;
    }
    sr_rt.data_on = sr_rt.data_len != 0 && diff < 0;
    if (diff < 0 || sr_rt.data_len == 0)
        return;
    /* Once, from the first PE that has the segment. */
    if (sr_rt.my_pe == (diff == 0 ? 1 : 0))
        sr_warn("global and static variables are not symmetric in this job: PE %d has a data "
                "segment of %zu bytes at 0x%llx in its executable, PE %d %llu bytes at 0x%llx "
                "(not the same executable, or SYMRAIL_SYMMETRIC_DATA=0 there); only the "
                "symmetric heap is", sr_rt.my_pe, sr_rt.data_len,
                (unsigned long long)sr_rt.data_vaddr, diff, (unsigned long long)hdr.data_len,
                (unsigned long long)hdr.data_vaddr);
}

static symrail_status_t sr_wireup(void)
{
    void *blob = NULL, **blobs = NULL;
    size_t len = 0, *lens = NULL;
    symrail_status_t st = sr_blob_pack(&blob, &len);
    if (st != SYMRAIL_OK)
        return st;
    st = sr_boot_exchange(sr_rt.boot, blob, len, &blobs, &lens);
    free(blob);
    if (st != SYMRAIL_OK)
        return st;
    st = sr_heap_sizes_agree(blobs, lens);
    sr_data_agree(blobs, lens);
    for (int pe = 0; pe < sr_rt.n_pes && st == SYMRAIL_OK; pe++)
        st = sr_peer_connect(pe, blobs[pe], lens[pe]);
    sr_boot_blobs_free(sr_rt.boot, blobs, lens);
    if (st == SYMRAIL_OK)
        st = sr_amo_route_publish();
    if (st != SYMRAIL_OK)
        return st;
    /* Every PE has mapped what it needs: the names of shared objects can go,
     * so that nothing outlives the job even if it is killed. */
    st = sr_boot_fence(sr_rt.boot);
    if (st != SYMRAIL_OK)
        return st;
    sr_amo_route_apply(sr_is_local);
    for (int i = 0; i < sr_rt.ntls; i++)
        sr_rt.tls[i].ops->wireup_done(sr_rt.tls[i].tl);
    sr_shm_unlink(sr_rt.heap_name);
    sr_rt.heap_named = 0;
    if (sr_rt.data_named)
        sr_shm_unlink(sr_rt.data_name);
    sr_rt.data_named = 0;

    /* Sleeping on one transport is only safe when it carries every peer. */
    sr_rt.sleeper = -1;
    for (int i = 0; i < sr_rt.ntls; i++) {
        int all = 1;
        for (int pe = 0; pe < sr_rt.n_pes; pe++)
            all &= sr_rt.peers[pe].ops == sr_rt.tls[i].ops;
        if (all && sr_rt.tls[i].attr.can_sleep)
            sr_rt.sleeper = i;
    }
    sr_wait_setup();
    return SYMRAIL_OK;
}

static void sr_teardown(void)
{
    sr_rt.spin_ns = 0;  /* waits from here on touch no peer's heap (progress.c) */
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

/* More PEs on this node than CPUs we may run on: spinning waits steal the
 * CPU from the peer they wait for, so they yield instead. */
static int sr_oversubscribed(const sr_boot_info_t *bi)
{
    cpu_set_t set;
    int cpus = 0;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        cpus = CPU_COUNT(&set);
    if (cpus <= 0)
        cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && bi->local_size > cpus;
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
    sr_rt.oversubscribed = sr_oversubscribed(bi);
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
    sr_teardown();
    sr_boot_fini(sr_rt.boot);
    sr_rt.boot = NULL;
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
    for (int i = 0; i < sr_rt.ntls; i++)
        sr_rt.tls[i].ops->stats(sr_rt.tls[i].tl, st);
}

static void sr_stats_print(void)
{
    symrail_stats_t s;
    char rails[512] = "";
    size_t pos = 0;
    sr_stats_collect(&s);
    for (uint32_t r = 0; r < s.nrails && pos < sizeof(rails); r++)
        pos += (size_t)snprintf(rails + pos, sizeof(rails) - pos, " %s %llu B/%llu slices",
                                s.rails[r].name, (unsigned long long)s.rails[r].bytes,
                                (unsigned long long)s.rails[r].slices);
    /* Asked for explicitly, so printed whatever SYMRAIL_LOG says. */
    fprintf(stderr,
            "symrail %s:%d:%d stats: puts %llu (%llu B) gets %llu (%llu B) atomics %llu "
            "signals %llu notify sent %llu recv %llu quiets %llu barriers %llu sleeps %llu "
            "slices %llu completions %llu stalls %llu (qp full %llu, cq full %llu) retries %llu "
            "repairs %llu"
            "%s%s\n", sr_log_cfg.host, sr_log_cfg.pid, sr_log_cfg.pe,
            (unsigned long long)s.puts, (unsigned long long)s.put_bytes,
            (unsigned long long)s.gets, (unsigned long long)s.get_bytes,
            (unsigned long long)s.atomics, (unsigned long long)s.signals,
            (unsigned long long)s.notify_sent, (unsigned long long)s.notify_recv,
            (unsigned long long)s.quiets, (unsigned long long)s.barriers,
            (unsigned long long)s.sleeps, (unsigned long long)s.slices_posted,
            (unsigned long long)s.completions, (unsigned long long)s.stalls,
            (unsigned long long)s.qp_full, (unsigned long long)s.cq_full,
            (unsigned long long)s.retries, (unsigned long long)s.repairs,
            s.nrails ? "; rails:" : "", rails);
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
    symrail_status_t bst = sr_barrier();
    if (bst == SYMRAIL_ERR_MISMATCH)
        return bst;  /* a peer is in another collective call: the caller ends the job */
    if (st == SYMRAIL_OK)
        st = bst;
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
