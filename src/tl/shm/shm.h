/* The shared-memory transport's types, shared by its files (shm.c: wire-up,
 * heap RMA, notifications; seg.c and rkey.c: segments). */
#ifndef SR_TL_SHM_H
#define SR_TL_SHM_H

#include "tl/tl.h"
#include "util/atomic.h"
#include "util/doorbell.h"
#include "util/sys.h"

#include <pthread.h>

#define SR_SHM_MAGIC       0x73726d3173686dull  /* "srm1shm" */
/* Regions in the address blob: the heap and the data segment.  Segments
 * travel as keys (seg.c). */
#define SR_SHM_MAX_REGIONS SR_TL_REGION_SEG0
#define SR_SHM_NAME_LEN    200

typedef struct {
    sr_doorbell_t bell;
    _Alignas(SR_CACHE_LINE) uint64_t magic;
    int32_t  pid;
    uint32_t n_pes;
    uint32_t nslots;
} sr_shm_hdr_t;

typedef struct {
    uint32_t tag;
    uint32_t len;
    unsigned char payload[SR_TL_NOTIFY_MAX];
} sr_shm_slot_t;

typedef struct {
    _Alignas(SR_CACHE_LINE) uint64_t tail;  /* written by the sender only */
    _Alignas(SR_CACHE_LINE) uint64_t head;  /* written by the receiver only */
    _Alignas(SR_CACHE_LINE) sr_shm_slot_t slots[];
} sr_shm_ring_t;

struct sr_shm_segs;  /* this PE's segments (seg.c) */
struct sr_shm_imp;   /* a peer's segments unpacked on an endpoint (seg.c) */

struct sr_tl_ep {
    struct sr_tl_ctx *ctx;
    int               pe;
    int               pid;
    int               self;
    sr_shm_hdr_t     *hdr;        /* the peer's control segment */
    sr_shm_ring_t    *ring;       /* our ring in the peer's control segment */
    uint64_t          tail;       /* our copy of ring->tail */
    pthread_mutex_t   tx_lock;    /* senders on several threads (thread_multiple) */
    char             *base[SR_SHM_MAX_REGIONS];
    size_t            len[SR_SHM_MAX_REGIONS];
    struct sr_shm_imp *imp;       /* NULL until the first rkey_unpack */
    /* A connected peer (a process of another job, peer.c): segments only;
     * hdr is our own, so that kicks after a copy need no test. */
    int               peer;
    int               gone;       /* disconnected (atomic) */
    struct sr_tl_ep  *next_peer;  /* ctx->peers */
};

struct sr_tl_ctx {
    sr_tl_params_t params;
    sr_shm_hdr_t  *hdr;           /* ours */
    size_t         ctl_len;
    size_t         ring_len;
    char           ctl_name[SR_SHM_NAME_LEN];
    int            ctl_named;     /* the name still exists */
    sr_tl_mem_t    regions[SR_SHM_MAX_REGIONS];
    uint32_t       nregions;
    int           *senders;       /* local PEs whose rings we drain */
    int            nsenders;
    uint64_t      *delivered;     /* [n_pes] next slot to hand to the core */
    int            mt;            /* params.thread_multiple */
    pthread_mutex_t rx_lock;      /* one thread at a time hands messages to the core */
    struct sr_shm_segs *segs;     /* NULL until the first segment */
    pthread_mutex_t seg_lock;     /* guards segs and peers; creates every endpoint's imp */
    struct sr_tl_ep *peers;       /* connected peers' endpoints, freed at fini */
};

static inline void sr_shm_kick(sr_shm_hdr_t *hdr)
{
    sr_doorbell_kick(&hdr->bell);
}

/* After a copy into the peer whose control segment is hdr.  A copy posted
 * with SR_TL_COMP_MORE leaves the doorbell to ep_post_end, which the same
 * thread calls after the run (tl.h): a batch of many small copies rings once
 * instead of once a copy, which would wake a sleeping peer over and over,
 * each waking costing it a membarrier that interrupts every CPU
 * (doorbell.c). */
static inline void sr_shm_kick_copy(sr_shm_hdr_t *hdr, const sr_tl_comp_t *comp)
{
    if (comp == NULL || !(comp->flags & SR_TL_COMP_MORE))
        sr_shm_kick(hdr);
}

static inline void sr_shm_kick_rmw(sr_shm_hdr_t *hdr)
{
    sr_doorbell_kick_rmw(&hdr->bell);
}

/* The end of an atomic applied by sr_cpu_amo on a peer's mapping: the
 * result, and the doorbell of a peer that may sleep on the word. */
static inline symrail_status_t sr_shm_amo_done(sr_tl_ep_t *ep, int did, uint64_t old,
                                               uint64_t *result_p)
{
    if (sr_unlikely(did == SR_CPU_AMO_INVALID))
        return SYMRAIL_ERR_UNSUPPORTED;
    if (result_p)
        *result_p = old;
    if (did == SR_CPU_AMO_STORE)
        sr_shm_kick(ep->hdr);
    else if (did == SR_CPU_AMO_RMW)
        sr_shm_kick_rmw(ep->hdr);
    return SYMRAIL_OK;
}

/* seg.c (this PE's segments) and rkey.c (a peer's): the ops of tl.h's "Regions" for segments (region >= SEG0). */
symrail_status_t sr_shm_seg_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem);
symrail_status_t sr_shm_mem_dereg(sr_tl_ctx_t *ctx, uint32_t region);
symrail_status_t sr_shm_mkey_pack(sr_tl_ctx_t *ctx, uint32_t region, void *buf, size_t *len_p);
symrail_status_t sr_shm_rkey_unpack(sr_tl_ep_t *ep, uint32_t rkey, const void *buf, size_t len);
void sr_shm_rkey_release(sr_tl_ep_t *ep, uint32_t rkey);
/* The first line of a put (write 1) or get through an unpacked key, on
 * its way into the cache (a hint: no check of the generation, as a
 * prefetch neither faults nor changes memory). */
void sr_shm_seg_prefetch(sr_tl_ep_t *ep, uint32_t rkey, uint64_t roff, int write);
/* The end of this thread's run of copies through keys (ep_post_end). */
void sr_shm_seg_run_end(void);
/* put (to_peer 1) or get through an unpacked key. */
symrail_status_t sr_shm_seg_copy(sr_tl_ep_t *ep, void *buf, uint32_t rkey, uint64_t roff,
                                 size_t len, int to_peer, const sr_tl_comp_t *comp);
symrail_status_t sr_shm_seg_atomic(sr_tl_ep_t *ep, sr_tl_amo_t op, uint32_t rkey, uint64_t roff,
                                   uint64_t operand, uint64_t compare, uint64_t *result_p);
/* peer.c: connected peers on this host (tl.h's sr_tl_host_addr_t). */
symrail_status_t sr_shm_peer_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                     sr_tl_ep_t **ep_p);
void sr_shm_peer_disconnect(sr_tl_ep_t *ep);
symrail_status_t sr_shm_peer_check(sr_tl_ep_t *ep);
void sr_shm_peers_fini(sr_tl_ctx_t *ctx);

/* A connected peer that left: nothing reaches its memory any more. */
static inline symrail_status_t sr_shm_peer_live(sr_tl_ep_t *ep)
{
    if (sr_likely(!ep->peer) || !__atomic_load_n(&ep->gone, __ATOMIC_ACQUIRE))
        return SYMRAIL_OK;
    return SYMRAIL_ERR_PEER_GONE;
}

/* Every key of the endpoint goes; and this PE's segments at fini. */
void sr_shm_seg_ep_fini(sr_tl_ep_t *ep);
void sr_shm_seg_fini(sr_tl_ctx_t *ctx);

#endif
