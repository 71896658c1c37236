/*
 * Shared-memory transport: peers on this node map each other's regions, so
 * put and get are plain copies and atomics are CPU atomics on the mapping.
 *
 * Each PE also owns a control segment: a doorbell that a sleeping PE waits on
 * with a futex, and one single-producer/single-consumer ring of notification
 * slots per sender.  Writers only pay for the doorbell when somebody sleeps.
 */
#include "config.h"
#include "shm.h"
#include "seg.h"
#include "util/atomic.h"
#include "util/copy.h"
#include "util/doorbell.h"
#include "util/log.h"
#include "util/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What a peer needs to attach to us; sent as the address blob. */
typedef struct {
    uint64_t magic;
    int32_t  pid;
    uint32_t nregions;
    uint64_t ctl_len;
    char     ctl_name[SR_SHM_NAME_LEN];
    struct {
        uint64_t len;
        char     name[SR_SHM_NAME_LEN];
    } regions[SR_SHM_MAX_REGIONS];
} sr_shm_addr_t;

/* This thread's wait may miss a wake-up: nap only.  Per thread, as every
 * thread that waits arms the doorbell itself. */
static __thread int sr_shm_nap;

static inline sr_shm_ring_t *sr_shm_ring(sr_shm_hdr_t *hdr, size_t ring_len, int pe)
{
    return (sr_shm_ring_t *)((char *)hdr + SR_ALIGN_UP(sizeof(*hdr), SR_CACHE_LINE) +
                             (size_t)pe * ring_len);
}

static size_t sr_shm_ctl_len(size_t ring_len, int n_pes)
{
    return SR_ALIGN_UP(sizeof(sr_shm_hdr_t), SR_CACHE_LINE) + ring_len * (size_t)n_pes;
}

static symrail_status_t sr_shm_init(const sr_tl_params_t *params, sr_tl_ctx_t **ctx_p)
{
    symrail_status_t st = SYMRAIL_ERR_NOMEM;
    sr_tl_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return SYMRAIL_ERR_NOMEM;
    ctx->params = *params;
    ctx->mt = params->thread_multiple;
    pthread_mutex_init(&ctx->rx_lock, NULL);
    pthread_mutex_init(&ctx->seg_lock, NULL);
    sr_doorbell_setup();
    /* A process of another job on this host that connects to us probes us by
     * cross-memory attach before it takes shared memory (peer.c); with
     * Yama's ptrace_scope 1 that needs our consent, given before any export. */
    if (params->peers_max > 0)
        sr_shm_allow_attach();
    uint64_t nslots = params->env->notify_slots;
    if (nslots == 0 || nslots > (1u << 20)) {
        sr_error("SYMRAIL_NOTIFY_SLOTS=%llu is out of range (1 .. 1048576)",
                 (unsigned long long)nslots);
        st = SYMRAIL_ERR_INVALID;
        goto err_free;
    }
    ctx->ring_len = SR_ALIGN_UP(sizeof(sr_shm_ring_t) + nslots * sizeof(sr_shm_slot_t),
                                SR_CACHE_LINE);
    ctx->ctl_len = sr_shm_ctl_len(ctx->ring_len, params->n_pes);
    ctx->senders = calloc((size_t)params->n_pes, sizeof(int));
    if (ctx->senders == NULL)
        goto err_free;
    ctx->delivered = calloc((size_t)params->n_pes, sizeof(uint64_t));
    if (ctx->delivered == NULL)
        goto err_senders;
    for (int pe = 0; pe < params->n_pes; pe++)
        if (params->is_local[pe])
            ctx->senders[ctx->nsenders++] = pe;

    sr_shm_name(ctx->ctl_name, sizeof(ctx->ctl_name), params->job, params->my_pe, "ctl");
    st = sr_shm_create(ctx->ctl_name, ctx->ctl_len, 0, (void **)&ctx->hdr);
    if (st != SYMRAIL_OK)
        goto err_senders;
    ctx->ctl_named = 1;
    ctx->hdr->pid = (int32_t)getpid();
    ctx->hdr->n_pes = (uint32_t)params->n_pes;
    ctx->hdr->nslots = (uint32_t)nslots;
    __atomic_store_n(&ctx->hdr->magic, SR_SHM_MAGIC, __ATOMIC_RELEASE);
    *ctx_p = ctx;
    return SYMRAIL_OK;

err_senders:
    free(ctx->delivered);
    free(ctx->senders);
err_free:
    free(ctx);
    return st;
}

static void sr_shm_wireup_done(sr_tl_ctx_t *ctx)
{
    /* Every local peer has mapped us: drop the name so that nothing is left
     * behind in /dev/shm, whatever happens to this process later. */
    if (ctx->ctl_named) {
        sr_shm_unlink(ctx->ctl_name);
        ctx->ctl_named = 0;
    }
}

static void sr_shm_fini(sr_tl_ctx_t *ctx)
{
    sr_shm_wireup_done(ctx);
    sr_shm_peers_fini(ctx);
    sr_shm_seg_fini(ctx);
    sr_shm_unmap(ctx->hdr, ctx->ctl_len);
    free(ctx->delivered);
    free(ctx->senders);
    free(ctx);
}

static void sr_shm_attr(const sr_tl_ctx_t *ctx, sr_tl_attr_t *attr_p)
{
    (void)ctx;
    attr_p->max_slice = SIZE_MAX;
    attr_p->can_sleep = 1;
    attr_p->ordered_lanes = 1;  /* copies complete before the call returns */
    attr_p->immediate = 1;
    attr_p->host_peers = 1;
}

static symrail_status_t sr_shm_mem_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem)
{
    if (region >= SR_TL_REGION_SEG0)
        return sr_shm_seg_reg(ctx, region, mem);
    if (mem->shm_name == NULL || strlen(mem->shm_name) >= SR_SHM_NAME_LEN) {
        sr_error("shm: region %u cannot be shared (no shared-memory object)", region);
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    ctx->regions[region] = *mem;
    if (region >= ctx->nregions)
        ctx->nregions = region + 1;
    return SYMRAIL_OK;
}

static symrail_status_t sr_shm_addr_pack(sr_tl_ctx_t *ctx, void *buf, size_t *len_p)
{
    sr_shm_addr_t addr;
    if (buf == NULL) {
        *len_p = sizeof(addr);
        return SYMRAIL_OK;
    }
    if (*len_p < sizeof(addr))
        return SYMRAIL_ERR_TRUNCATED;
    memset(&addr, 0, sizeof(addr));
    addr.magic = SR_SHM_MAGIC;
    addr.pid = (int32_t)getpid();
    addr.nregions = ctx->nregions;
    addr.ctl_len = ctx->ctl_len;
    strcpy(addr.ctl_name, ctx->ctl_name);
    for (uint32_t r = 0; r < ctx->nregions; r++) {
        addr.regions[r].len = ctx->regions[r].len;
        if (ctx->regions[r].shm_name)
            strcpy(addr.regions[r].name, ctx->regions[r].shm_name);
    }
    memcpy(buf, &addr, sizeof(addr));
    *len_p = sizeof(addr);
    return SYMRAIL_OK;
}

static int sr_shm_reachable(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len)
{
    const sr_shm_addr_t *a = addr;
    return ctx->params.is_local[pe] && len == sizeof(*a) && a->magic == SR_SHM_MAGIC;
}

static void sr_shm_disconnect(sr_tl_ep_t *ep)
{
    if (ep == NULL)
        return;
    if (ep->peer) {
        sr_shm_peer_disconnect(ep);
        return;
    }
    sr_shm_seg_ep_fini(ep);
    if (!ep->self) {
        for (int r = 0; r < SR_SHM_MAX_REGIONS; r++)
            sr_shm_unmap(ep->base[r], ep->len[r]);
        sr_shm_unmap(ep->hdr, ep->ctx->ctl_len);
    }
    free(ep);
}

static symrail_status_t sr_shm_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                       sr_tl_ep_t **ep_p)
{
    const sr_shm_addr_t *a = addr;
    symrail_status_t st;
    sr_tl_ep_t *ep;

    if (pe >= ctx->params.n_pes)
        return sr_shm_peer_connect(ctx, pe, addr, len, ep_p);
    if (!sr_shm_reachable(ctx, pe, addr, len) || a->nregions > SR_SHM_MAX_REGIONS)
        return SYMRAIL_ERR_INVALID;
    if (a->ctl_len != ctx->ctl_len) {
        sr_error("shm: PE %d uses another notification ring size (is SYMRAIL_NOTIFY_SLOTS "
                 "the same on every PE?)", pe);
        return SYMRAIL_ERR_INVALID;
    }
    ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return SYMRAIL_ERR_NOMEM;
    ep->ctx = ctx;
    ep->pe = pe;
    ep->pid = a->pid;
    ep->self = pe == ctx->params.my_pe;
    pthread_mutex_init(&ep->tx_lock, NULL);
    if (ep->self) {
        ep->hdr = ctx->hdr;
        for (uint32_t r = 0; r < a->nregions; r++) {
            ep->base[r] = ctx->regions[r].addr;
            ep->len[r] = ctx->regions[r].len;
        }
    } else {
        st = sr_shm_attach(a->ctl_name, a->ctl_len, (void **)&ep->hdr);
        if (st != SYMRAIL_OK)
            goto err_ep;
        for (uint32_t r = 0; r < a->nregions; r++) {
            if (a->regions[r].len == 0)
                continue;
            st = sr_shm_attach(a->regions[r].name, a->regions[r].len, (void **)&ep->base[r]);
            if (st != SYMRAIL_OK)
                goto err_ep;
            ep->len[r] = a->regions[r].len;
        }
    }
    ep->ring = sr_shm_ring(ep->hdr, ctx->ring_len, ctx->params.my_pe);
    ep->tail = __atomic_load_n(&ep->ring->tail, __ATOMIC_ACQUIRE);
    *ep_p = ep;
    return SYMRAIL_OK;

err_ep:
    sr_shm_disconnect(ep);
    return st;
}

/* Not for segments: a load/store address would escape the generation check
 * (seg.c) that every access to a segment passes. */
static void *sr_shm_ptr(sr_tl_ep_t *ep, uint32_t region, uint64_t offset)
{
    return region < SR_SHM_MAX_REGIONS && ep->base[region] ? ep->base[region] + offset : NULL;
}

static void sr_shm_prefetch(sr_tl_ep_t *ep, uint32_t region, uint64_t roff, int write)
{
    if (region >= SR_TL_REGION_SEG0) {
        sr_shm_seg_prefetch(ep, region, roff, write);
        return;
    }
    if (region < SR_SHM_MAX_REGIONS && ep->base[region] && roff < ep->len[region])
        sr_prefetch(ep->base[region] + roff, write);
}

static symrail_status_t sr_shm_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                                   uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    (void)lane;
    if (sr_unlikely(region >= SR_TL_REGION_SEG0))
        return sr_shm_seg_copy(ep, (void *)src, region, roff, len, 1, comp);
    sr_copy(ep->base[region] + roff, src, len);
    /* Rung each time: runs of many copies (batches) go to segments, and
     * keeping comp for the test across the copy would cost the heap put a
     * stack frame. */
    sr_shm_kick(ep->hdr);
    return SYMRAIL_OK;
}

static symrail_status_t sr_shm_get(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region,
                                   uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    (void)lane;
    if (sr_unlikely(region >= SR_TL_REGION_SEG0))
        return sr_shm_seg_copy(ep, dst, region, roff, len, 0, comp);
    sr_copy(dst, ep->base[region] + roff, len);
    return SYMRAIL_OK;
}

static symrail_status_t sr_shm_atomic(sr_tl_ep_t *ep, int lane, sr_tl_amo_t op, uint32_t region,
                                      uint64_t roff, uint64_t operand, uint64_t compare,
                                      uint64_t *result_p, sr_tl_comp_t *comp)
{
    uint64_t old;
    (void)lane, (void)comp;
    if (sr_unlikely(region >= SR_TL_REGION_SEG0))
        return sr_shm_seg_atomic(ep, op, region, roff, operand, compare, result_p);
    int did = sr_cpu_amo(ep->base[region] + roff, op, operand, compare, &old);
    return sr_shm_amo_done(ep, did, old, result_p);
}

static symrail_status_t sr_shm_notify_one(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                          size_t len)
{
    sr_shm_ring_t *ring = ep->ring;
    uint32_t nslots = ep->hdr->nslots;
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);

    if (len > SR_TL_NOTIFY_MAX)
        return SYMRAIL_ERR_INVALID;
    if (ep->tail - head >= nslots)
        return SYMRAIL_ERR_AGAIN;
    sr_shm_slot_t *slot = &ring->slots[ep->tail % nslots];
    slot->tag = tag;
    slot->len = (uint32_t)len;
    if (len)
        sr_copy(slot->payload, payload, len);
    __atomic_store_n(&ring->tail, ++ep->tail, __ATOMIC_RELEASE);
    sr_shm_kick(ep->hdr);
    return SYMRAIL_OK;
}

/* The ring has one producer: threads that send to the same peer take turns. */
static symrail_status_t sr_shm_notify(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                      size_t len)
{
    if (sr_unlikely(ep->peer))
        return SYMRAIL_ERR_UNSUPPORTED;  /* no ring of ours at a connected peer */
    if (!ep->ctx->mt)
        return sr_shm_notify_one(ep, tag, payload, len);
    pthread_mutex_lock(&ep->tx_lock);
    symrail_status_t st = sr_shm_notify_one(ep, tag, payload, len);
    pthread_mutex_unlock(&ep->tx_lock);
    return st;
}

/* Hands every message not yet delivered to the core.  Its slot stays taken
 * (ring->head does not move) until the core releases it: the sender's
 * credits are the slots the application has not consumed yet. */
static int sr_shm_progress(sr_tl_ctx_t *ctx)
{
    uint32_t nslots = ctx->hdr->nslots;
    int count = 0;
    /* One thread at a time, and a second does not wait (nobody waits on
     * this lock: holding it across notify_cb keeps the messages of a
     * sender in order). */
    if (ctx->mt && pthread_mutex_trylock(&ctx->rx_lock) != 0)
        return 0;
    for (int i = 0; i < ctx->nsenders; i++) {
        int src = ctx->senders[i];
        sr_shm_ring_t *ring = sr_shm_ring(ctx->hdr, ctx->ring_len, src);
        uint64_t next = ctx->delivered[src];
        uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
        for (; next != tail; next++, count++) {
            const sr_shm_slot_t *slot = &ring->slots[next % nslots];
            uint32_t len = slot->len > SR_TL_NOTIFY_MAX ? SR_TL_NOTIFY_MAX : slot->len;
            __atomic_store_n(&ctx->delivered[src], next + 1, __ATOMIC_RELAXED);
            ctx->params.notify_cb(ctx->params.cb_arg, src, slot->tag, slot->payload, len);
        }
    }
    if (ctx->mt) {
        pthread_mutex_unlock(&ctx->rx_lock);
        /* A thread of ours that found this lock taken may have gone to
         * sleep before the messages were handed over: wake it. */
        if (count)
            sr_shm_kick(ctx->hdr);
    }
    return count;
}

/* The application consumed the oldest message from ep's peer (messages of
 * one sender are consumed in the order they came): its slot goes back.
 * Release: the sender may overwrite the slot once it sees the new head, and
 * the core has copied the payload out before it calls this. */
static void sr_shm_notify_release(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_shm_ring_t *ring = sr_shm_ring(ctx->hdr, ctx->ring_len, ep->pe);
    /* Consumers on several threads: the head moves by atomic increments
     * (each releases one message the core has already copied out). */
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);
    if (sr_unlikely(head >= __atomic_load_n(&ctx->delivered[ep->pe], __ATOMIC_RELAXED))) {
        sr_error("shm: notify_release from PE %d without a delivered message", ep->pe);
        return;
    }
    __atomic_fetch_add(&ring->head, 1, __ATOMIC_RELEASE);
    /* A sender waiting for room may be asleep on its own doorbell. */
    if (!ep->self)
        sr_shm_kick(ep->hdr);
}

/* The end of a run of copies posted with SR_TL_COMP_MORE: the key they
 * entered (rkey.c), and the doorbell they left (sr_shm_kick_copy). */
static void sr_shm_ep_post_end(sr_tl_ep_t *ep)
{
    sr_shm_seg_run_end();
    sr_shm_kick(ep->hdr);
}

static symrail_status_t sr_shm_ep_check(sr_tl_ep_t *ep)
{
    if (sr_unlikely(ep->peer))
        return sr_shm_peer_check(ep);
    return !ep->self && sr_pid_gone(ep->pid) ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_OK;
}

static uint32_t sr_shm_wait_prepare(sr_tl_ctx_t *ctx)
{
    return sr_doorbell_arm(&ctx->hdr->bell, &sr_shm_nap);
}

static void sr_shm_wait(sr_tl_ctx_t *ctx, uint32_t token, uint64_t timeout_ns)
{
    sr_doorbell_sleep(&ctx->hdr->bell, token, timeout_ns, sr_shm_nap);
}

static void sr_shm_wait_done(sr_tl_ctx_t *ctx)
{
    sr_doorbell_disarm(&ctx->hdr->bell);
}

const sr_tl_ops_t sr_tl_shm_ops = {
    .name         = "shm",
    .init         = sr_shm_init,
    .fini         = sr_shm_fini,
    .attr         = sr_shm_attr,
    .mem_reg      = sr_shm_mem_reg,
    .mem_dereg    = sr_shm_mem_dereg,
    .mkey_pack    = sr_shm_mkey_pack,
    .rkey_unpack  = sr_shm_rkey_unpack,
    .rkey_release = sr_shm_rkey_release,
    .addr_pack    = sr_shm_addr_pack,
    .reachable    = sr_shm_reachable,
    .connect      = sr_shm_connect,
    .wireup_done  = sr_shm_wireup_done,
    .disconnect   = sr_shm_disconnect,
    .ep_addr_pack = sr_tl_no_ep_addr,
    .ep_ctl = sr_tl_no_ep_ctl,
    .job_key = sr_tl_no_job_key,
    .ptr          = sr_shm_ptr,
    .prefetch     = sr_shm_prefetch,
    .local_hint   = sr_tl_no_local_hint,
    .ep_lanes     = sr_tl_one_lane,
    .put          = sr_shm_put,
    .get          = sr_shm_get,
    .atomic       = sr_shm_atomic,
    .notify       = sr_shm_notify,
    .flush        = sr_tl_flush_nothing,
    .ep_post_end  = sr_shm_ep_post_end,
    .notify_release = sr_shm_notify_release,
    .ep_heard     = sr_tl_heard_unknown,
    .progress     = sr_shm_progress,
    .ep_check     = sr_shm_ep_check,
    .stats        = sr_tl_no_stats,
    .wait_prepare = sr_shm_wait_prepare,
    .wait         = sr_shm_wait,
    .wait_done    = sr_shm_wait_done,
};
