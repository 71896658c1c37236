/* The runtime: the state of one PE that all its contexts share. */
#ifndef SR_CORE_RT_H
#define SR_CORE_RT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

#include "boot/boot.h"
#include "core/health.h"
#include "core/heap_alloc.h"
#include "core/lanes.h"
#include "core/notify.h"
#include "tl/tl.h"
#include "util/env.h"
#include "util/msgq.h"
#include "util/pool.h"
#include "util/sys.h"

#define SR_MAX_TLS        4
#define SR_HEAP_REGION    SR_TL_REGION_HEAP
#define SR_DATA_REGION    SR_TL_REGION_DATA
/* One remote offset space: heap offsets as they are, offsets in the data
 * segment (global and static variables) with SR_DATA_BIT set (together the
 * symmetric offsets), and offsets in an imported segment with its import
 * index above them, so callers pass one 64-bit offset and the region is
 * split off only where a transport is called.  Heaps (64 TiB at most) and
 * segments stay below 2^48 bytes. */
#define SR_REGION_SHIFT   48
#define SR_REGION_MAX     0xffffu
#define SR_DATA_BIT       (UINT64_C(1) << SR_REGION_SHIFT)
#define SR_OFF_REGION(off) ((uint32_t)((off) >> SR_REGION_SHIFT))
#define SR_OFF_IN(off)     ((off) & (SR_DATA_BIT - 1))
#define SR_OFF_MAKE(region, off) (((uint64_t)(region) << SR_REGION_SHIFT) | (off))
/* Start of the heap kept for the library's own symmetric words. */
#define SR_HEAP_RESERVED  4096
/* Upper bound of the heap base's alignment: symrail_align() can honour any
 * power of two up to it (or up to the heap size, when that is smaller). */
#define SR_HEAP_MAX_BASE_ALIGN (1ull << 30)
#define SR_BARRIER_ROUNDS 64
/* Queue nodes of the OpenSHMEM locks: how many locks a PE may hold or wait
 * for at once. */
#define SR_LOCK_SLOTS     64

typedef enum { SR_STATE_NONE = 0, SR_STATE_UP, SR_STATE_DOWN } sr_state_t;

typedef struct symrail_ctx sr_ctx_t;

/* What a context hands to a transport to be called back: the context it
 * belongs to, and the link by which completions that other threads found
 * (SYMRAIL_THREAD_MULTIPLE) wait in that context's inbox for its owner.  A
 * request may take several completions (put_signal's data and signal): the
 * count says how many wait, and the node is on the inbox once. */
typedef struct sr_op {
    sr_tl_comp_t     comp;      /* first: the transport hands it back */
    sr_ctx_t        *ctx;
    struct sr_op    *done_next;
    symrail_status_t done_status;  /* the first failure among those waiting */
    uint32_t         deferred;     /* completions waiting in the inbox */
} sr_op_t;

/* A request counts the slices of one operation still in flight.  Blocking
 * calls take theirs from a pool, never from their own stack frame: a call
 * that gives up waiting (timeout) leaves the request behind as an orphan,
 * and the last completion that still arrives for it frees it. */
typedef struct {
    sr_op_t          op;        /* first: atomics and flushes complete through it */
    uint32_t         remaining;
    uint8_t          orphan;
    symrail_status_t status;
    uint64_t         result;    /* an atomic's fetched value lands here */
} sr_req_t;

typedef struct {
    const sr_tl_ops_t *ops;
    sr_tl_ctx_t       *tl;
    sr_tl_attr_t       attr;
} sr_tl_slot_t;

/* One slice of a transfer: posted to one lane, retried on another on failure. */
typedef struct sr_slice {
    sr_op_t          op;        /* first: the transport hands it back */
    struct sr_slice *next;      /* retry queue */
    sr_req_t        *req;
    char            *local;
    uint64_t         roff;
    size_t           len;
    int32_t          pe;
    int16_t          lane;
    uint8_t          is_put;
    uint8_t          tries;
    uint8_t          inflight;  /* counted in its peer's inflight; | SR_SLICE_SPRAYED */
    uint8_t          held;      /* its completion was held back (SYMRAIL_TEST_HOLD_LANE) */
    uint64_t         held_until;
} sr_slice_t;

#define SR_LANE_NONE (-1)  /* nothing posted to the peer since the last fence */
#define SR_LANE_MANY (-2)  /* posted on more than one lane since the last fence */

/* What the runtime knows of one peer; what each context tracks of it is in
 * sr_cpeer_t. */
typedef struct {
    const sr_tl_ops_t *ops;
    sr_tl_ep_t        *ep;
    size_t             slice;    /* bytes per slice for this peer */
    char              *base;     /* load/store view of the peer's heap, or NULL */
    char              *data_base; /* and of its data segment, or NULL */
    int                ordered;  /* a lane applies requests in order (tl attr) */
    sr_lanes_t         lanes;    /* weights, kept current by lane events */
    uint32_t           lane_gen[SR_TL_MAX_LANES];  /* last lane report seen */
    uint8_t            local_comp;  /* the transport completes puts locally */
    uint8_t            immediate;   /* every put and get is done when the call returns */
    uint8_t            is_local;    /* same node: liveness by process id */
    uint8_t            state;       /* symrail_peer_state_t, atomic (liveness.c) */
    uint64_t           state_gen;   /* sr_rt.peer_events at its last change */
    uint64_t           stopped_since; /* when the local peer was first seen stopped */
    /* Atomics on the peer's words go through this second endpoint (a NIC
     * loopback or a QP to a local peer) when the peer's words also take NIC
     * atomics from remote peers; NULL: through ops/ep. */
    const sr_tl_ops_t *amo_ops;
    sr_tl_ep_t        *amo_ep;
    sr_tl_ep_t        *amo_cand;     /* connected at wireup; becomes amo_ep if needed */
    const sr_tl_ops_t *amo_cand_ops;
    uint8_t            amo_direct;   /* atomics answer at once through ops (immediate) */
    /* A connected peer on this host reached over shared memory: its
     * notifications (and JOIN) travel over this endpoint (TCP), which also
     * says when it left; NULL: over ops/ep. */
    const sr_tl_ops_t *msg_ops;
    sr_tl_ep_t        *msg_ep;
    sr_lanes_t         amo_lanes;
    uint32_t           amo_lane_gen[SR_TL_MAX_LANES];
} sr_peer_t;

/* What one context tracks of one peer, kept at post time for fence and quiet. */
typedef struct {
    uint32_t     inflight;    /* slices posted and not yet completed */
    uint32_t     unflushed;   /* lanes that completed a put locally since the last flush */
    int16_t      fence_lane;  /* SR_LANE_NONE, SR_LANE_MANY or the one lane */
    int16_t      pin;         /* lane that what follows must take (after a fence), or -1 */
    uint8_t      touched;     /* on ctx->touched */
    sr_lane_rr_t rr;          /* this context's turn over the lanes */
    sr_lane_rr_t amo_rr;
    struct sr_spray *spray;   /* adaptive estimates; NULL until a pick over lanes */
} sr_cpeer_t;

typedef struct {
    uint64_t puts, gets, put_bytes, get_bytes, atomics, signals, notifies_sent,
             notifies_recv, quiets, barriers, waits_slept, backpressure_stalls, retries;
} sr_stats_t;

#define SR_CTX_LIVE    (UINT64_C(0x73724358) << 32)  /* "srCX": a live context */
#define SR_CTX_LOCKED  UINT64_C(1)
#define SR_CTX_NOSTORE UINT64_C(2)

/*
 * A context: its own completion.  Every operation is issued on one and
 * tracked by it only (requests, slices, retries, the peers it touched, lane
 * turns, counters), so quiet on one context never waits for another's
 * traffic, and threads with contexts of their own share no state of the
 * core on the data path.  The default context serves the calls without a
 * context argument.
 */
struct symrail_ctx {
    /* SR_CTX_LIVE while the context exists, with SR_CTX_LOCKED (shared by
     * threads under THREAD_MULTIPLE: the lock is taken) and SR_CTX_NOSTORE:
     * one compare tells the fast path that the context is alive and needs
     * nothing else. */
    uint64_t           state;
    unsigned           id;
    long               options;
    int                home;      /* lane of its one-slice operations (modulo lanes) */
    sr_cpeer_t        *peers;     /* [n_pes] */
    int               *touched;   /* PEs posted to since the last quiet */
    int                ntouched;
    sr_req_t           nbi;       /* every non-blocking operation not yet quieted */
    sr_pool_t          reqs;      /* sr_req_t of blocking calls */
    sr_pool_t          slices;    /* sr_slice_t */
    sr_slice_t        *retry_head, *retry_tail;
    sr_op_t           *inbox;     /* completions other threads found for us */
    sr_slice_t        *held_head, *held_tail;  /* SYMRAIL_TEST_HOLD_LANE */
    uint32_t           orphans;   /* requests given up by their callers, still in flight */
    sr_stats_t         stats;
    pthread_mutex_t    lock;
    struct symrail_ctx *next;     /* all contexts of the runtime */
    /* The team a context was made for (OpenSHMEM team contexts): its PE
     * numbers are the team's.  NULL: the world. */
    struct sr_team    *team;
    /* The batch whose tasks the context carries (core/batch.c), or NULL. */
    struct symrail_batch *batch;
};

/* The words at the start of every heap.  barrier[r][epoch & 1] receives
 * round r of a barrier: its epoch and what collective call it belongs to. */
typedef struct {
    uint64_t barrier[SR_BARRIER_ROUNDS][2];
    /* Non-zero: peers reach this PE over a transport with nic_atomics, so
     * every atomic on its words goes through the NIC, local ones included.
     * Written before the wireup fence, read by local peers after it. */
    uint64_t amo_nic;
    /* One queue node per lock this PE holds or waits for: the successor
     * and the hand-over flag, written by peers' atomics (src/shmem/lock.c). */
    uint64_t lock_node[SR_LOCK_SLOTS];
    /* The CPU this PE last polled on in a wait, plus 1 (0: asleep, or has
     * not waited yet); local peers read it to tell whether the PE they
     * wait for may be queued behind them on their CPU (progress.c).  Its
     * own line: the owner writes it whenever it moves. */
    _Alignas(SR_CACHE_LINE) uint64_t wait_cpu;
} sr_heap_intern_t;

typedef struct {
    sr_state_t         state;
    int                my_pe;
    int                n_pes;
    int                n_max;     /* n_pes + SYMRAIL_CONNECT_MAX: room in the per-PE arrays */
    sr_env_t           env;
    sr_boot_t         *boot;
    sr_tl_slot_t       tls[SR_MAX_TLS];
    int                ntls;
    int                sleeper;   /* index of the transport we can sleep on, -1 if none */
    uint64_t           spin_ns;   /* a wait polls this long before it sleeps (progress.c) */
    sr_peer_t         *peers;
    int               *pids;      /* for messages */

    char              *heap_base;
    size_t             heap_size;
    size_t             heap_align;  /* the base address is a multiple of this */
    char               heap_name[256];
    int                heap_named;
    sr_heap_alloc_t    heap;
    /* The executable's data segment (data.c): mapped at data_base, data_len
     * bytes (0: none); symmetric when data_on (every PE has the same). */
    char              *data_base;
    size_t             data_len;
    uint64_t           data_vaddr;  /* its place in the executable file */
    char               data_name[256];
    int                data_named;
    int                data_on;
    size_t             heap_reserved;  /* the library's part: intern words and team slots */
    uint64_t           barrier_epoch;

    int                live_next; /* next peer the liveness check looks at */
    uint64_t           live_last;    /* when the liveness check last ran */
    uint64_t           live_resumed; /* when this process ran again after a gap */
    int                oversubscribed; /* more local PEs than CPUs: waits yield */
    int                report;        /* SYMRAIL_ON_PEER_FAILURE=report */
    /* Atomic: changes of peer state so far, peers not OK now, and the
     * counts of changes to SUSPECT and to FAILED. */
    uint64_t           peer_events;
    int                peers_down;
    uint64_t           peers_suspect, peers_failed;
    int                spray;         /* SYMRAIL_SPRAY=adaptive */
    sr_health_cfg_t    health;        /* SYMRAIL_RAIL_PAUSE_* */
    uint64_t           lanes_paused, lane_probes, lanes_resumed;  /* atomic */
    /* Per peer, NULL until a lane fails (spray_core.h): not in sr_peer_t,
     * whose size keeps the shm path's indexing cheap. */
    struct sr_peer_health *peer_health;
    int                hold_lane;     /* SYMRAIL_TEST_HOLD_LANE, -1: none */
    uint64_t           hold_ns;
    uint64_t           notifies_recv, notifies_sent, waits_slept, notify_stalls;  /* atomic */

    /* Threads and contexts. */
    int                thread_level;  /* SYMRAIL_THREAD_* granted at init */
    int                mt;            /* THREAD_MULTIPLE: threads call at once */
    sr_ctx_t          *dctx;          /* the default context */
    sr_ctx_t          *cctx;          /* the collectives' own (barriers) */
    sr_ctx_t          *ctxs;          /* every context, under ctx_lock */
    sr_ctx_t          *zombies;       /* destroyed with operations still in flight */
    sr_ctx_t          *ctx_free, *ctx_free_tail;  /* memory of destroyed contexts, for the next */
    unsigned           ctx_ids;
    sr_stats_t         retired;       /* counters of destroyed contexts */
    pthread_mutex_t    ctx_lock;      /* the context list */
    pthread_mutex_t    lane_lock;     /* lane reports from several threads */
    pthread_mutex_t    live_lock;     /* one liveness check at a time */
    pthread_mutex_t    notify_lock;   /* messages received, not yet consumed (notify_rx.c) */
    pthread_mutex_t    heap_lock;     /* heap calls from several threads */
} sr_rt_t;

extern sr_rt_t sr_rt;

static inline sr_heap_intern_t *sr_intern(void)
{
    return (sr_heap_intern_t *)(void *)sr_rt.heap_base;
}

static inline uint64_t sr_heap_offset(const void *addr)
{
    return (uint64_t)((const char *)addr - sr_rt.heap_base);
}

/* data.c: the executable's data segment onto shared memory (before any
 * thread of the library starts); never fails init, the region is off. */
symrail_status_t sr_data_init(void);
void sr_data_fini(void);
/* Is addr in the executable's data segment (for messages)? */
int sr_data_contains(const void *addr);
/* The symmetric offset of [addr, addr+len): in the user part of the heap,
 * or in the symmetric data segment (with SR_DATA_BIT); SR_OFF_BAD, logged
 * naming fn and arg, for anything else.  Out of line: the callers test the
 * heap inline first. */
#define SR_OFF_BAD UINT64_MAX
uint64_t sr_sym_off(const char *fn, const char *arg, const void *addr, size_t len)
    __attribute__((noinline));

/* This PE's address of a symmetric offset (heap or data segment). */
static inline char *sr_sym_addr(uint64_t off)
{
    if (off & SR_DATA_BIT)
        return sr_rt.data_base + SR_OFF_IN(off);
    return sr_rt.heap_base + off;
}

/* Where pe's word at a symmetric offset can be loaded and stored from this
 * process, or NULL (no load/store view of that peer's region). */
static inline char *sr_sym_peer_addr(int pe, uint64_t off)
{
    char *base = (off & SR_DATA_BIT) ? sr_rt.peers[pe].data_base : sr_rt.peers[pe].base;
    return base ? base + SR_OFF_IN(off) : NULL;
}

/* init.c */
symrail_status_t sr_core_init(int thread_level);
/* The address exchange at init and the connection to every peer (wireup.c). */
symrail_status_t sr_wireup(void);
symrail_status_t sr_core_finalize(void);
void sr_core_abort(int code, const char *msg) __attribute__((noreturn));
void sr_stats_collect(symrail_stats_t *stats_p);

/* ctx.c */
extern __thread sr_ctx_t *sr_ctx_cur;  /* the context this thread progresses */
symrail_status_t sr_ctx_new(long options, sr_ctx_t **ctx_p);
/* The default context, in place (symrail_ctx_default). */
symrail_status_t sr_ctx_new_default(void);
/* Completes the context's operations, then frees it. */
symrail_status_t sr_ctx_free(sr_ctx_t *ctx);
void sr_ctxs_fini(void);
void sr_ctx_stats_sum(sr_stats_t *sum_p);
static inline void sr_ctx_enter(sr_ctx_t *ctx)
{
    if (sr_unlikely(ctx->state & SR_CTX_LOCKED))
        pthread_mutex_lock(&ctx->lock);
}
static inline void sr_ctx_leave(sr_ctx_t *ctx)
{
    if (sr_unlikely(ctx->state & SR_CTX_LOCKED))
        pthread_mutex_unlock(&ctx->lock);
}
/* A completion for `op`: 1 when it went to its context's inbox because
 * another thread found it (the owner handles it in its progress). */
static inline int sr_op_defer(sr_op_t *op, symrail_status_t status)
{
    if (sr_likely(!sr_rt.mt) || op->ctx == sr_ctx_cur)
        return 0;
    sr_ctx_t *ctx = op->ctx;
    if (status != SYMRAIL_OK) {
        symrail_status_t ok = SYMRAIL_OK;
        __atomic_compare_exchange_n(&op->done_status, &ok, status, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
    }
    if (__atomic_fetch_add(&op->deferred, 1, __ATOMIC_ACQ_REL) != 0)
        return 1;  /* on the inbox already: the owner takes this one too */
    sr_op_t *head = __atomic_load_n(&ctx->inbox, __ATOMIC_RELAXED);
    do {
        op->done_next = head;
    } while (!__atomic_compare_exchange_n(&ctx->inbox, &head, op, 1, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    return 1;
}
void sr_ctx_drain(sr_ctx_t *ctx);
/* quiet of ctx, from a caller that does not hold it (collectives). */
symrail_status_t sr_ctx_quiet(sr_ctx_t *ctx);

/* How blocking calls wait: progress, requests, peer liveness. */
#include "core/wait.h"

/* rma.c */
/* Through a transport that may keep work in flight: slices, lanes, requests. */
symrail_status_t sr_rma_net(sr_ctx_t *ctx, int is_put, void *local, uint64_t roff, size_t len,
                            int pe, int blocking);
/* Non-blocking, every slice counted in `req`, which the caller owns and
 * waits on (batches).  more: the caller posts more to pe and then calls
 * the endpoint's ep_post_end, so the transport may send them together. */
symrail_status_t sr_rma_req(sr_ctx_t *ctx, int is_put, void *local, uint64_t roff, size_t len,
                            int pe, sr_req_t *req, int more);
/* An immediate put or get outside the heap. */
symrail_status_t sr_rma_region(sr_peer_t *peer, int is_put, void *local, uint64_t roff,
                               size_t len) __attribute__((noinline));
/* Inline, so that a put to a load/store peer is the copy and little else. */
static inline symrail_status_t sr_rma(sr_ctx_t *ctx, int is_put, void *local, uint64_t roff,
                                      size_t len, int pe, int blocking)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    if (is_put) {
        ctx->stats.puts++;
        ctx->stats.put_bytes += len;
    } else {
        ctx->stats.gets++;
        ctx->stats.get_bytes += len;
    }
    if (sr_peer_failed(pe))
        return SYMRAIL_ERR_PEER_GONE;  /* its change of state was logged */
    if (peer->immediate) {
        /* One test keeps the heap's path as it was. */
        if (sr_unlikely(roff & SR_DATA_BIT))
            return sr_rma_region(peer, is_put, local, roff, len);
        return is_put ? peer->ops->put(peer->ep, 0, local, SR_HEAP_REGION, roff, len, NULL)
                      : peer->ops->get(peer->ep, 0, local, SR_HEAP_REGION, roff, len, NULL);
    }
    return sr_rma_net(ctx, is_put, local, roff, len, pe, blocking);
}
/* An atomic of kind and width `op` (tl.h) on the word at roff of pe's heap;
 * *result_p (may be NULL where nothing is fetched) receives the old value,
 * zero-extended. */
symrail_status_t sr_amo(sr_ctx_t *ctx, sr_tl_amo_t op, uint64_t roff, uint64_t operand,
                        uint64_t compare, int pe, uint64_t *result_p);
/* The same, not waiting: complete at the next quiet of ctx, when the fetched
 * word (SR_TL_AMO_WIDTH(op) bytes; fetch NULL: none wanted) is in *fetch. */
symrail_status_t sr_amo_nbi(sr_ctx_t *ctx, sr_tl_amo_t op, uint64_t roff, uint64_t operand,
                            uint64_t compare, int pe, void *fetch);
/* SET of a word that only this PE ever writes (barrier flags): no other
 * provider touches it, so it may take the peer's fastest route. */
symrail_status_t sr_amo_set_own(sr_ctx_t *ctx, uint64_t roff, uint64_t value, int pe);
/* At wireup: this PE's words take NIC atomics if a transport with
 * nic_atomics carries some peer; publish that in the heap's own words
 * (before the wireup fence), refusing peers whose atomics could not follow. */
symrail_status_t sr_amo_route_publish(void);
/* After the fence: atomics to each PE whose words take NIC atomics go
 * through our NIC endpoint to it, local PEs and this PE included. */
void sr_amo_route_apply(const uint8_t *is_local);
symrail_status_t sr_quiet_slow(sr_ctx_t *ctx);
static inline symrail_status_t sr_quiet(sr_ctx_t *ctx)
{
    ctx->stats.quiets++;
    if (sr_likely(ctx->nbi.remaining == 0 && ctx->ntouched == 0 &&
                  ctx->nbi.status == SYMRAIL_OK))
        return SYMRAIL_OK;
    return sr_quiet_slow(ctx);
}
symrail_status_t sr_fence(sr_ctx_t *ctx);
/* Remote completion of everything ctx posted to pe so far. */
symrail_status_t sr_peer_flush(sr_ctx_t *ctx, int pe, const char *what);
/* Everything ctx posted to pe so far is complete there, blocking or not
 * (fence, OpenSHMEM's pe_quiet): what is in flight, then a flush. */
symrail_status_t sr_peer_settle(sr_ctx_t *ctx, int pe, const char *what);
static inline void sr_peer_note(sr_ctx_t *ctx, sr_cpeer_t *cp, int pe, int lane)
{
    if (sr_unlikely(!cp->touched)) {
        cp->touched = 1;
        ctx->touched[ctx->ntouched++] = pe;
    }
    if (cp->fence_lane != lane)
        cp->fence_lane = cp->fence_lane == SR_LANE_NONE ? (int16_t)lane : SR_LANE_MANY;
}
/* spray.c (the rest in spray_core.h) */
int sr_spray_lane(sr_ctx_t *ctx, sr_cpeer_t *cp, int avoid, size_t len) __attribute__((noinline));
/* The lane for the next operation of ctx to pe (avoiding `avoid`, -1:
 * none).  After a fence that did not wait (what was pending went down one
 * ordered lane), what follows takes that lane too, or it could overtake,
 * until nothing is pending.  Else a one-slice operation (spray 0) of a
 * context with a home lane takes it while it is up, and the rest turn over
 * the lanes: by predicted completion where SYMRAIL_SPRAY=adaptive and the
 * pick is for a slice of the peer's data lanes (len > 0), by static weight
 * else.  A lane that fails loses the order of what was on it (its slices
 * are retried elsewhere). */
static inline int sr_ctx_lane(sr_ctx_t *ctx, sr_cpeer_t *cp, const sr_lanes_t *lanes, int avoid,
                              int spray, size_t len)
{
    int n = __atomic_load_n(&lanes->n, __ATOMIC_RELAXED);
    if (sr_unlikely(cp->pin >= 0)) {
        int pin = cp->pin;
        if (cp->inflight == 0 && cp->unflushed == 0)
            cp->pin = -1;
        else if (pin < n && pin != avoid && __atomic_load_n(&lanes->weight[pin], __ATOMIC_RELAXED))
            return pin;
    }
    if (!spray && ctx->home >= 0 && n > 0) {
        int home = ctx->home % n;
        if (home != avoid && __atomic_load_n(&lanes->weight[home], __ATOMIC_RELAXED))
            return home;
    }
    if (sr_unlikely(n > 1) && len && sr_rt.spray)
        return sr_spray_lane(ctx, cp, avoid, len);
    return sr_lanes_pick(lanes, &cp->rr, avoid);
}
symrail_status_t sr_put_signal(sr_ctx_t *ctx, const void *src, uint64_t roff, size_t len,
                               uint64_t sig_off, sr_tl_amo_t op, uint64_t value, int pe);
void sr_rma_progress_retries(sr_ctx_t *ctx);
void sr_rma_progress_held(sr_ctx_t *ctx);
symrail_status_t sr_rma_hold_parse(const char *spec);
void sr_peer_lanes_refresh(int pe);
void sr_lane_event(void *arg, int pe, int lane, uint32_t weight, uint32_t generation);

/* sync.c */
/* The collective call a barrier belongs to, compared between partners:
 * SYMRAIL_ERR_MISMATCH (logged, naming both PEs and calls) when they differ. */
typedef enum { SR_COLL_BARRIER = 0, SR_COLL_ALLOC = 1, SR_COLL_FREE = 2 } sr_coll_t;
symrail_status_t sr_barrier_coll(sr_coll_t kind, uint64_t size, uint64_t align);
static inline symrail_status_t sr_barrier(void)
{
    return sr_barrier_coll(SR_COLL_BARRIER, 0, 0);
}
/* Under report, finalize's barrier among the PEs not FAILED, each word
 * (one per PE, at sr_fin_base) set by its PE on every other. */
size_t sr_fin_base(void);
symrail_status_t sr_barrier_survivors(void);
symrail_status_t sr_signal_wait(uint64_t *sig, symrail_cmp_t cmp, uint64_t value,
                                uint64_t *value_p);
static inline int sr_cmp(uint64_t a, symrail_cmp_t cmp, uint64_t b)
{
    switch (cmp) {
    case SYMRAIL_CMP_EQ: return a == b;
    case SYMRAIL_CMP_NE: return a != b;
    case SYMRAIL_CMP_GT: return a > b;
    case SYMRAIL_CMP_GE: return a >= b;
    case SYMRAIL_CMP_LT: return a < b;
    case SYMRAIL_CMP_LE: return a <= b;
    }
    return 0;
}

/* heap.c */
symrail_status_t sr_heap_init(void);
void sr_heap_fini(void);
symrail_status_t sr_heap_malloc(size_t size, size_t align, int zero, const char *what,
                                void **ptr_p);
symrail_status_t sr_heap_release(void *ptr);

#endif
