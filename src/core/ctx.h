/* The library context: all mutable state of one PE. */
#ifndef SR_CORE_CTX_H
#define SR_CORE_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

#include "boot/boot.h"
#include "core/heap_alloc.h"
#include "core/lanes.h"
#include "tl/tl.h"
#include "util/env.h"
#include "util/pool.h"

#define SR_MAX_TLS        4
#define SR_HEAP_REGION    0
/* Start of the heap kept for the library's own symmetric words. */
#define SR_HEAP_RESERVED  4096
/* Upper bound of the heap base's alignment: symrail_align() can honour any
 * power of two up to it (or up to the heap size, when that is smaller). */
#define SR_HEAP_MAX_BASE_ALIGN (1ull << 30)
#define SR_BARRIER_ROUNDS 64

typedef enum { SR_STATE_NONE = 0, SR_STATE_UP, SR_STATE_DOWN } sr_state_t;

/* A request counts the slices of one operation still in flight. */
typedef struct {
    sr_tl_comp_t     comp;
    uint32_t         remaining;
    symrail_status_t status;
} sr_req_t;

typedef struct {
    const sr_tl_ops_t *ops;
    sr_tl_ctx_t       *tl;
    sr_tl_attr_t       attr;
} sr_tl_slot_t;

/* One slice of a transfer: posted to one lane, retried on another on failure. */
typedef struct sr_slice {
    sr_tl_comp_t     comp;      /* first: the transport hands it back */
    struct sr_slice *next;      /* free list or retry queue */
    sr_req_t        *req;
    char            *local;
    uint64_t         roff;
    size_t           len;
    int32_t          pe;
    int16_t          lane;
    uint8_t          is_put;
    uint8_t          tries;
} sr_slice_t;

typedef struct {
    const sr_tl_ops_t *ops;
    sr_tl_ep_t        *ep;
    size_t             slice;    /* bytes per slice for this peer */
    char              *base;     /* load/store view of the peer's heap, or NULL */
    int                ordered;  /* a lane applies requests in order (tl attr) */
    sr_lanes_t         lanes;
} sr_peer_t;

/* The words at the start of every heap.  barrier[r][epoch & 1] receives
 * round r of a barrier: its epoch and what collective call it belongs to. */
typedef struct {
    uint64_t barrier[SR_BARRIER_ROUNDS][2];
} sr_heap_intern_t;

typedef struct {
    uint64_t puts, gets, put_bytes, get_bytes, atomics, signals, notifies_sent,
             notifies_recv, quiets, barriers, waits_slept, backpressure_stalls, retries;
} sr_stats_t;

typedef struct {
    symrail_notify_t *msgs;
    size_t            cap, head, count;
} sr_notify_queue_t;

typedef struct {
    sr_state_t         state;
    int                my_pe;
    int                n_pes;
    sr_env_t           env;
    sr_boot_t         *boot;
    sr_tl_slot_t       tls[SR_MAX_TLS];
    int                ntls;
    int                sleeper;   /* index of the transport we can sleep on, -1 if none */
    sr_peer_t         *peers;
    int               *pids;      /* for messages */

    char              *heap_base;
    size_t             heap_size;
    size_t             heap_align;  /* the base address is a multiple of this */
    char               heap_name[256];
    int                heap_named;
    sr_heap_alloc_t    heap;
    uint64_t           barrier_epoch;

    sr_req_t           nbi;       /* every non-blocking operation not yet quieted */
    sr_pool_t          slices;    /* sr_slice_t */
    sr_slice_t        *retry_head, *retry_tail;
    sr_notify_queue_t  notifyq;
    sr_stats_t         stats;
} sr_ctx_t;

extern sr_ctx_t sr_ctx;

static inline sr_heap_intern_t *sr_intern(void)
{
    return (sr_heap_intern_t *)(void *)sr_ctx.heap_base;
}

static inline uint64_t sr_heap_offset(const void *addr)
{
    return (uint64_t)((const char *)addr - sr_ctx.heap_base);
}

/* init.c */
symrail_status_t sr_core_init(void);
symrail_status_t sr_core_finalize(void);
void sr_core_abort(int code, const char *msg) __attribute__((noreturn));
void sr_stats_collect(symrail_stats_t *stats_p);

/* progress.c: one wait loop for every blocking call. */
typedef int (*sr_cond_fn_t)(void *arg);
enum {
    SR_WAIT_REMOTE = 1,        /* the condition changes when a peer writes to us: may sleep */
    SR_WAIT_USER_TIMEOUT = 2,  /* the caller asked for the timeout: not an error to log */
};
int  sr_progress(void);
/* Waits until cond(arg) is true.  timeout_ms 0 means no limit; dead peers end
 * the wait with SYMRAIL_ERR_PEER_GONE.  `what` names the wait in messages. */
symrail_status_t sr_wait(sr_cond_fn_t cond, void *arg, unsigned flags, uint64_t timeout_ms,
                         const char *what);
void sr_req_init(sr_req_t *req);
symrail_status_t sr_req_wait(sr_req_t *req, const char *what);

/* rma.c */
symrail_status_t sr_rma(int is_put, void *local, uint64_t roff, size_t len, int pe, int blocking);
symrail_status_t sr_amo(sr_tl_amo_t op, uint64_t roff, uint64_t operand, uint64_t compare,
                        int pe, uint64_t *result_p);
symrail_status_t sr_quiet(void);
symrail_status_t sr_put_signal(const void *src, uint64_t roff, size_t len, uint64_t sig_off,
                               sr_tl_amo_t op, uint64_t value, int pe);
void sr_rma_progress_retries(void);
void sr_peer_lanes_refresh(int pe);
void sr_slices_fini(void);

/* sync.c */
/* The collective call a barrier belongs to, compared between partners:
 * SYMRAIL_ERR_MISMATCH (logged, naming both PEs and calls) when they differ. */
typedef enum { SR_COLL_BARRIER = 0, SR_COLL_ALLOC = 1, SR_COLL_FREE = 2 } sr_coll_t;
symrail_status_t sr_barrier_coll(sr_coll_t kind, uint64_t size, uint64_t align);
static inline symrail_status_t sr_barrier(void)
{
    return sr_barrier_coll(SR_COLL_BARRIER, 0, 0);
}
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

/* notify.c */
void sr_notify_deliver(void *arg, int src_pe, uint32_t tag, const void *payload, size_t len);
symrail_status_t sr_notify_send(int pe, uint32_t tag, const void *payload, size_t len);
symrail_status_t sr_notify_recv(int timeout_ms, int blocking, symrail_notify_t *msg_p);
void sr_notify_fini(void);

/* heap.c */
symrail_status_t sr_heap_init(void);
void sr_heap_fini(void);
symrail_status_t sr_heap_malloc(size_t size, size_t align, int zero, const char *what,
                                void **ptr_p);
symrail_status_t sr_heap_release(void *ptr);

#endif
