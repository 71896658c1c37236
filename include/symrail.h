/*
 * symrail: a PGAS communication library.
 *
 * Processes of an SPMD job ("PEs") share a symmetric heap: symrail_malloc()
 * is collective and returns the same offset on every PE, so the address of an
 * object on the calling PE names the same object on any other PE.  Data moves
 * with one-sided put/get, ordered with fence/quiet, and is announced with
 * signals (put_signal) or small notification messages.
 *
 * Every call that can fail returns a symrail_status_t (0 is success).  Calls
 * that cannot return a status (symrail_init, symrail_finalize, symrail_putmem,
 * symrail_getmem) abort the whole job with a message instead.
 *
 * Threads: symrail_init() gives SYMRAIL_THREAD_SINGLE; symrail_init_thread()
 * asks for a level.  Under SYMRAIL_THREAD_MULTIPLE any thread may call any
 * function at any time, and threads that each use a private context of
 * their own (symrail_ctx_create) take no lock of the library's core: over
 * shared memory none at all, over TCP and RDMA the lock of the lane (QP or
 * connection) they post to, and over RDMA quiet registers its flush under a
 * short lock of the transport (README, "Threads and contexts").
 */
#ifndef SYMRAIL_H
#define SYMRAIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden symbols; these are its interface. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#include "symrail_version.h"  /* SYMRAIL_VERSION_MAJOR, _MINOR, _PATCH, _STRING */

typedef enum {
    SYMRAIL_INPROGRESS       = 1,   /* internal: the operation completes later */
    SYMRAIL_OK               = 0,
    SYMRAIL_ERR_INVALID      = -1,  /* bad argument, or called before init */
    SYMRAIL_ERR_NOMEM        = -2,
    SYMRAIL_ERR_UNSUPPORTED  = -3,
    SYMRAIL_ERR_TIMEOUT      = -4,
    SYMRAIL_ERR_AGAIN        = -5,  /* nothing available now: try again */
    SYMRAIL_ERR_BOOT         = -6,  /* launcher / PMIx failure */
    SYMRAIL_ERR_TRANSPORT    = -7,
    SYMRAIL_ERR_PEER_GONE    = -8,
    SYMRAIL_ERR_NO_TRANSPORT = -9,  /* no enabled transport reaches a peer */
    SYMRAIL_ERR_SYSTEM       = -10, /* an operating system call failed */
    SYMRAIL_ERR_TRUNCATED    = -11,
    SYMRAIL_ERR_STATE        = -12, /* call not allowed in this state */
    SYMRAIL_ERR_PEER_UNRESPONSIVE = -13, /* peer alive as far as we know, but silent */
    SYMRAIL_ERR_MISMATCH     = -14, /* PEs made different collective calls */
    SYMRAIL_ERR_STALE        = -15, /* a segment descriptor whose registration is gone */
    SYMRAIL_ERR_CANCELED     = -16, /* a batch task that was canceled */
    SYMRAIL_ERR_RESULT_LOST  = -17, /* an atomic applied (once at most), its old value lost */
} symrail_status_t;

/* Largest payload of one notification message. */
#define SYMRAIL_NOTIFY_MAX_PAYLOAD 4096

typedef enum {
    SYMRAIL_SIGNAL_SET = 0,
    SYMRAIL_SIGNAL_ADD = 1,
} symrail_signal_op_t;

typedef enum {
    SYMRAIL_CMP_EQ = 0,
    SYMRAIL_CMP_NE = 1,
    SYMRAIL_CMP_GT = 2,
    SYMRAIL_CMP_GE = 3,
    SYMRAIL_CMP_LT = 4,
    SYMRAIL_CMP_LE = 5,
} symrail_cmp_t;

typedef struct {
    int      src_pe;
    uint32_t tag;
    /* SYMRAIL_OK, or for the notification of a batch that failed or was
     * canceled (symrail_batch_submit_notify) the status of its first failed
     * task: the data that batch was to bring will not come. */
    symrail_status_t status;
    size_t   len;
    unsigned char payload[SYMRAIL_NOTIFY_MAX_PAYLOAD];
} symrail_notify_t;

/* ---- runtime ---------------------------------------------------------- */
symrail_status_t symrail_init_status(void);
symrail_status_t symrail_finalize_status(void);
void symrail_init(void);     /* aborts with a message on failure */
void symrail_finalize(void);
int  symrail_initialized(void);
int  symrail_my_pe(void);    /* -1 before init */
int  symrail_n_pes(void);    /* -1 before init */
const char *symrail_strerror(symrail_status_t status);
const char *symrail_version_string(void);
void symrail_version(int *major_p, int *minor_p, int *patch_p);
/* Ends the whole job (every PE) with exit status `code`, printing `msg`. */
void symrail_abort(int code, const char *msg);

/* ---- threads and contexts ------------------------------------------------ */
/* OpenSHMEM's levels: SINGLE (one thread), FUNNELED (only the thread that
 * initialized calls), SERIALIZED (one thread at a time), MULTIPLE (any
 * thread at any time). */
#define SYMRAIL_THREAD_SINGLE     0
#define SYMRAIL_THREAD_FUNNELED   1
#define SYMRAIL_THREAD_SERIALIZED 2
#define SYMRAIL_THREAD_MULTIPLE   3
/* Initializes with thread level `requested`; *provided_p (may be NULL)
 * receives the level granted: the one requested, or the level of an
 * earlier initialization that is still in force. */
symrail_status_t symrail_init_thread(int requested, int *provided_p);
symrail_status_t symrail_query_thread(int *provided_p);

/* A context: a stream of operations with its own completion.  quiet and
 * fence of one context order and complete its operations only.  Every
 * context reaches every PE; creating one costs memory only. */
typedef struct symrail_ctx *symrail_ctx_t;
/* The context of the calls that take none. */
extern struct symrail_ctx symrail_ctx_default;
#define SYMRAIL_CTX_DEFAULT (&symrail_ctx_default)
/* Options (OpenSHMEM's values).  SERIALIZED: the application never calls
 * on the context from two threads at once; PRIVATE: only the thread that
 * created it calls on it.  Either makes its data path take no lock.
 * NOSTORE: no puts, atomics or signals will be issued on it. */
#define SYMRAIL_CTX_SERIALIZED 1L
#define SYMRAIL_CTX_PRIVATE    2L
#define SYMRAIL_CTX_NOSTORE    4L
/* On failure *ctx_p is NULL.  The calls on a context take a live one or
 * SYMRAIL_CTX_DEFAULT: NULL is refused only by symrail_ctx_destroy. */
symrail_status_t symrail_ctx_create(long options, symrail_ctx_t *ctx_p);
/* Completes the context's operations (as ctx_quiet), then frees it. */
symrail_status_t symrail_ctx_destroy(symrail_ctx_t ctx);

/* ---- symmetric heap (collective: every PE calls with the same arguments) */
void *symrail_malloc(size_t size);
void *symrail_calloc(size_t count, size_t size);
void *symrail_align(size_t alignment, size_t size);
void  symrail_free(void *ptr);
/* Direct load/store pointer to `addr` on `pe` when it is mapped here, else NULL. */
void *symrail_ptr(const void *addr, int pe);

/* ---- RMA -------------------------------------------------------------- */
/* Blocking: on return `src` may be reused (put) or `dst` holds the data (get).
 * A put may still be on its way to `pe`: quiet or barrier_all completes it. */
symrail_status_t symrail_put(void *dst, const void *src, size_t nbytes, int pe);
symrail_status_t symrail_get(void *dst, const void *src, size_t nbytes, int pe);
/* Non-blocking: complete at the next symrail_quiet (or barrier_all). */
symrail_status_t symrail_put_nbi(void *dst, const void *src, size_t nbytes, int pe);
symrail_status_t symrail_get_nbi(void *dst, const void *src, size_t nbytes, int pe);
/* Like symrail_put/get but abort the job on any error (OpenSHMEM style). */
void symrail_putmem(void *dst, const void *src, size_t nbytes, int pe);
void symrail_getmem(void *dst, const void *src, size_t nbytes, int pe);

/* Every put, get and atomic issued so far is complete and visible. */
symrail_status_t symrail_quiet(void);
/* Puts to one PE issued before are delivered before those issued after. */
symrail_status_t symrail_fence(void);

/* The same on a context (SYMRAIL_CTX_DEFAULT: the default one). */
symrail_status_t symrail_ctx_put(symrail_ctx_t ctx, void *dst, const void *src, size_t nbytes,
                                 int pe);
symrail_status_t symrail_ctx_get(symrail_ctx_t ctx, void *dst, const void *src, size_t nbytes,
                                 int pe);
symrail_status_t symrail_ctx_put_nbi(symrail_ctx_t ctx, void *dst, const void *src,
                                     size_t nbytes, int pe);
symrail_status_t symrail_ctx_get_nbi(symrail_ctx_t ctx, void *dst, const void *src,
                                     size_t nbytes, int pe);
symrail_status_t symrail_ctx_quiet(symrail_ctx_t ctx);
symrail_status_t symrail_ctx_fence(symrail_ctx_t ctx);

/* ---- synchronisation ---------------------------------------------------- */
/* quiet + barrier over all PEs. */
symrail_status_t symrail_barrier_all(void);
/* barrier over all PEs without completing outstanding operations. */
symrail_status_t symrail_sync_all(void);

/* ---- signals ----------------------------------------------------------- */
/* Put `nbytes` then update the 64-bit `sig_addr` on `pe` with `value` (SET or
 * ADD).  A PE that observes the signal observes the whole payload. */
symrail_status_t symrail_put_signal(void *dst, const void *src, size_t nbytes,
                                    uint64_t *sig_addr, uint64_t value,
                                    symrail_signal_op_t op, int pe);
symrail_status_t symrail_ctx_put_signal(symrail_ctx_t ctx, void *dst, const void *src,
                                        size_t nbytes, uint64_t *sig_addr, uint64_t value,
                                        symrail_signal_op_t op, int pe);
/* Wait until (*sig_addr cmp value) holds on the calling PE; *value_p (may be
 * NULL) receives the value that satisfied it. */
symrail_status_t symrail_signal_wait_until(uint64_t *sig_addr, symrail_cmp_t cmp,
                                           uint64_t value, uint64_t *value_p);
uint64_t symrail_signal_fetch(const uint64_t *sig_addr);

/* ---- notification messages ---------------------------------------------- */
/* Messages from one sender arrive whole and in the order sent, with their
 * tag, payload (up to SYMRAIL_NOTIFY_MAX_PAYLOAD bytes) and status
 * (SYMRAIL_OK from these calls).  Each sender has SYMRAIL_NOTIFY_SLOTS
 * messages in flight to one receiver; a slot comes back when the receiver
 * consumes the message (poll or wait).  notify_send waits for a slot (up to
 * SYMRAIL_OP_TIMEOUT) and consumes nothing meanwhile, so PEs that all send
 * to each other should use notify_trysend and drain between tries (a
 * message that had begun to go when the timeout came returns SYMRAIL_OK, its
 * rest following as with trysend).  Tags from SYMRAIL_NOTIFY_TAG_RESERVED up
 * are refused (SYMRAIL_ERR_INVALID). */
symrail_status_t symrail_notify_send(int pe, uint32_t tag, const void *payload, size_t len);
/* Like notify_send, but never waits: SYMRAIL_ERR_AGAIN when the receiver has
 * no room for us, and then nothing of the message was sent.  A message over
 * 248 bytes goes as several transport messages: if only part of it fits,
 * trysend returns SYMRAIL_OK and the rest goes out from this PE's progress
 * (any call that polls or waits), before any later message to that PE. */
symrail_status_t symrail_notify_trysend(int pe, uint32_t tag, const void *payload, size_t len);
/* SYMRAIL_OK with the oldest message, or SYMRAIL_ERR_AGAIN if none is waiting. */
symrail_status_t symrail_notify_poll(symrail_notify_t *msg_p);
/* Wait up to timeout_ms (-1: forever) for a message; SYMRAIL_ERR_TIMEOUT if
 * none, SYMRAIL_ERR_PEER_GONE once a PE we could wait for is gone. */
symrail_status_t symrail_notify_wait(int timeout_ms, symrail_notify_t *msg_p);
/* The same for the oldest message with tag `tag` only; messages of other
 * tags stay queued, in order, for the calls above. */
symrail_status_t symrail_notify_poll_tag(uint32_t tag, symrail_notify_t *msg_p);
symrail_status_t symrail_notify_wait_tag(uint32_t tag, int timeout_ms, symrail_notify_t *msg_p);
/* Tags from SYMRAIL_NOTIFY_TAG_RESERVED up are the library's own: the calls
 * above neither send nor return them. */
#define SYMRAIL_NOTIFY_TAG_RESERVED 0xffff0000u

/* ---- atomics on 64-bit symmetric words ---------------------------------- */
symrail_status_t symrail_atomic_fetch(const uint64_t *target, int pe, uint64_t *value_p);
symrail_status_t symrail_atomic_set(uint64_t *target, uint64_t value, int pe);
symrail_status_t symrail_atomic_add(uint64_t *target, uint64_t value, int pe);
symrail_status_t symrail_atomic_fetch_add(uint64_t *target, uint64_t value, int pe,
                                          uint64_t *old_p);
symrail_status_t symrail_atomic_swap(uint64_t *target, uint64_t value, int pe,
                                     uint64_t *old_p);
symrail_status_t symrail_atomic_compare_swap(uint64_t *target, uint64_t cond,
                                             uint64_t value, int pe, uint64_t *old_p);

/* The same on a context. */
symrail_status_t symrail_ctx_atomic_fetch(symrail_ctx_t ctx, const uint64_t *target, int pe,
                                          uint64_t *value_p);
symrail_status_t symrail_ctx_atomic_set(symrail_ctx_t ctx, uint64_t *target, uint64_t value,
                                        int pe);
symrail_status_t symrail_ctx_atomic_add(symrail_ctx_t ctx, uint64_t *target, uint64_t value,
                                        int pe);
symrail_status_t symrail_ctx_atomic_fetch_add(symrail_ctx_t ctx, uint64_t *target,
                                              uint64_t value, int pe, uint64_t *old_p);
symrail_status_t symrail_ctx_atomic_swap(symrail_ctx_t ctx, uint64_t *target, uint64_t value,
                                         int pe, uint64_t *old_p);
symrail_status_t symrail_ctx_atomic_compare_swap(symrail_ctx_t ctx, uint64_t *target,
                                                 uint64_t cond, uint64_t value, int pe,
                                                 uint64_t *old_p);

/* Atomics of every kind on words of 4 or 8 bytes (OpenSHMEM's are built on
 * these).  `op` on the `width`-byte word `target` (4 or 8, aligned to its
 * width) of `pe`: value and cond are taken in their low `width` bytes, and
 * the old value (`width` bytes) is stored at old_p, which may be NULL when
 * it is not wanted.  A 4-byte atomic leaves the other 4 bytes of its 8-byte
 * word as they are.  The _nbi form returns once the operation is issued; it
 * is complete, and *old_p written, when the next quiet of ctx returns
 * (old_p must stay valid until then). */
typedef enum {
    SYMRAIL_AMO_FETCH,  /* old = *target */
    SYMRAIL_AMO_SET,    /* *target = value */
    SYMRAIL_AMO_ADD,    /* old = *target; *target += value */
    SYMRAIL_AMO_SWAP,   /* old = *target; *target = value */
    SYMRAIL_AMO_CSWAP,  /* old = *target; if (old == cond) *target = value */
    SYMRAIL_AMO_AND,    /* old = *target; *target &= value */
    SYMRAIL_AMO_OR,     /* old = *target; *target |= value */
    SYMRAIL_AMO_XOR,    /* old = *target; *target ^= value */
} symrail_amo_op_t;
symrail_status_t symrail_ctx_atomic_op(symrail_ctx_t ctx, symrail_amo_op_t op, void *target,
                                       size_t width, uint64_t value, uint64_t cond, int pe,
                                       void *old_p);
symrail_status_t symrail_ctx_atomic_op_nbi(symrail_ctx_t ctx, symrail_amo_op_t op,
                                           void *target, size_t width, uint64_t value,
                                           uint64_t cond, int pe, void *old_p);

/* ---- segments: memory registered for transfers from and to peers ------- */
/* A segment is any range of this PE's memory (malloc'd, mmap'd, a tensor's
 * storage) that peers may read and write once they hold its descriptor.
 * Registration is collective in nothing: any PE registers at any time.
 * Registering a range that is already registered returns the same segment
 * (counted: each register needs its deregister).  Each registration of a
 * range has a generation: a descriptor of one that is gone (deregistered,
 * or its process restarted) is refused with SYMRAIL_ERR_STALE on every
 * transport, and never reaches memory that is reused since.
 *
 * Local peers reach a segment through shared memory: one allocated with
 * symrail_seg_alloc is a shared object they map (load/store speed); any
 * other range is reached with cross-memory attach (process_vm_readv/writev,
 * one copy by the kernel).  The log says which at registration
 * (SYMRAIL_LOG=info). */
typedef struct symrail_seg  *symrail_seg_t;   /* one of this PE's segments */
typedef struct symrail_rseg *symrail_rseg_t;  /* a peer's segment, imported */
#define SYMRAIL_SEG_DESC_MAX 512  /* bytes a descriptor may take */

symrail_status_t symrail_seg_register(void *addr, size_t len, unsigned flags,
                                      symrail_seg_t *seg_p);
/* Allocates `len` bytes that local peers can map, registered as a segment;
 * symrail_seg_deregister frees them. */
symrail_status_t symrail_seg_alloc(size_t len, unsigned flags, void **addr_p,
                                   symrail_seg_t *seg_p);
/* SYMRAIL_ERR_STATE while a batch of this PE whose local buffers lie in or
 * around the segment is in flight (nothing changes; wait for the batch
 * first).  After any other answer, SYMRAIL_ERR_TIMEOUT included, the handle
 * is gone: do not pass it again. */
symrail_status_t symrail_seg_deregister(symrail_seg_t seg);
symrail_status_t symrail_seg_info(symrail_seg_t seg, void **addr_p, size_t *len_p);
/* A self-contained descriptor of the segment, at most SYMRAIL_SEG_DESC_MAX
 * bytes: *len_p is buf's size on entry and the descriptor's on return.  It
 * may travel over any channel to any PE of the job. */
symrail_status_t symrail_seg_export(symrail_seg_t seg, void *buf, size_t *len_p);
symrail_status_t symrail_seg_import(const void *buf, size_t len, symrail_rseg_t *rseg_p);
/* Its owner and length. */
symrail_status_t symrail_rseg_info(symrail_rseg_t rseg, int *pe_p, size_t *len_p);
symrail_status_t symrail_rseg_release(symrail_rseg_t rseg);
/* Publish a segment under a name, and find one: on PE `pe`, or on any PE
 * (SYMRAIL_ANY_PE), waiting up to timeout_ms (-1: SYMRAIL_OP_TIMEOUT) for
 * it to be published. */
#define SYMRAIL_ANY_PE (-1)
symrail_status_t symrail_seg_publish(symrail_seg_t seg, const char *name);
symrail_status_t symrail_seg_unpublish(const char *name);
symrail_status_t symrail_seg_lookup(int pe, const char *name, int timeout_ms,
                                    symrail_rseg_t *rseg_p);

/* ---- batches of transfers ----------------------------------------------- */
/* A batch is a list of tasks, each one transfer between this PE's memory
 * and a peer's segment; submit posts them all (sliced and sprayed over the
 * lanes like any put or get) and returns; status, wait and the batch's
 * notification say how each ended.  A batch is used by one thread at a
 * time.  Local buffers need no registration (registered ones are faster
 * over RDMA). */
typedef struct symrail_batch *symrail_batch_t;
typedef enum { SYMRAIL_WRITE = 0, SYMRAIL_READ = 1 } symrail_xfer_op_t;
typedef enum {
    SYMRAIL_TASK_PENDING = 0,  /* added, or submitted and not yet complete */
    SYMRAIL_TASK_DONE    = 1,
    SYMRAIL_TASK_FAILED  = 2,
} symrail_task_state_t;
#define SYMRAIL_BATCH_ALL ((size_t)-1)  /* the task argument: the whole batch */

symrail_status_t symrail_batch_create(size_t capacity, symrail_batch_t *batch_p);
/* One task; *task_p (may be NULL) receives its index.  Bad tasks (outside
 * the segment, a released import, zero length, past the capacity) are
 * refused here with nothing added; one through a descriptor whose
 * registration is gone fails at transfer with SYMRAIL_ERR_STALE. */
symrail_status_t symrail_batch_add(symrail_batch_t batch, symrail_xfer_op_t op, void *local,
                                   symrail_rseg_t rseg, uint64_t roff, size_t len,
                                   size_t *task_p);
/* Paged form: block local_idx[i] of `block_bytes` at local_base and block
 * remote_idx[i] at offset remote_base of rseg, for i < nblocks; runs of
 * blocks adjacent on both sides become one task.  *first_p and *ntasks_p
 * (may be NULL) receive the tasks added.  Either the whole call is added
 * or nothing. */
symrail_status_t symrail_batch_add_blocks(symrail_batch_t batch, symrail_xfer_op_t op,
                                          void *local_base, const uint32_t *local_idx,
                                          symrail_rseg_t rseg, uint64_t remote_base,
                                          const uint32_t *remote_idx, size_t nblocks,
                                          size_t block_bytes, size_t *first_p,
                                          size_t *ntasks_p);
/* The same for every one of `nlayers` layers: layer l's blocks start at
 * local_base + l * local_stride and at remote_base + l * remote_stride. */
symrail_status_t symrail_batch_add_layers(symrail_batch_t batch, symrail_xfer_op_t op,
                                          void *local_base, size_t local_stride,
                                          symrail_rseg_t rseg, uint64_t remote_base,
                                          size_t remote_stride, size_t nlayers,
                                          const uint32_t *local_idx, const uint32_t *remote_idx,
                                          size_t nblocks, size_t block_bytes, size_t *first_p,
                                          size_t *ntasks_p);
symrail_status_t symrail_batch_submit(symrail_batch_t batch);
/* Submit, and once every task is complete at its target (on every rail and
 * lane), send `pe` a notification with `tag` and `payload` (len up to
 * SYMRAIL_NOTIFY_MAX_PAYLOAD), exactly once.  If a task fails or the batch
 * is canceled, the notification still goes, with status set to the first
 * failure: its receiver never waits for data that will not come.  The
 * notification leaves from this PE's progress (any call that waits or
 * polls, batch_status and batch_wait included); if the receiver has no
 * free slot for SYMRAIL_OP_TIMEOUT, the batch ends with SYMRAIL_ERR_TIMEOUT
 * instead. */
symrail_status_t symrail_batch_submit_notify(symrail_batch_t batch, int pe, uint32_t tag,
                                             const void *payload, size_t len);
/* The state of task `task` (or of the whole batch: SYMRAIL_BATCH_ALL, done
 * when every task is) and the bytes it moved; returns SYMRAIL_OK, or the
 * failed task's status (the first failure for the whole batch). */
symrail_status_t symrail_batch_status(symrail_batch_t batch, size_t task,
                                      symrail_task_state_t *state_p, size_t *bytes_p);
/* Waits until every task is complete or timeout_ms (-1: forever) passes:
 * SYMRAIL_OK, the first failure, or SYMRAIL_ERR_TIMEOUT (still pending). */
symrail_status_t symrail_batch_wait(symrail_batch_t batch, int timeout_ms);
/* Tasks not yet posted fail with SYMRAIL_ERR_CANCELED; those in flight run
 * to their end.  Returns once nothing of the batch is in flight. */
symrail_status_t symrail_batch_cancel(symrail_batch_t batch);
/* Empties a batch that is not in flight, for reuse. */
symrail_status_t symrail_batch_reset(symrail_batch_t batch);
/* SYMRAIL_ERR_STATE while the batch is in flight. */
symrail_status_t symrail_batch_free(symrail_batch_t batch);

/* ---- counters --------------------------------------------------------- */
#define SYMRAIL_STATS_MAX_RAILS 8

typedef struct {
    uint64_t puts, gets, put_bytes, get_bytes;
    uint64_t atomics, signals, notify_sent, notify_recv;
    uint64_t quiets, barriers, sleeps;
    uint64_t slices_posted;     /* network work requests posted */
    uint64_t completions;       /* ... and completed */
    uint64_t retries;           /* slices posted again after their lane failed */
    uint64_t repairs;           /* failed lanes (queue pairs) rebuilt and reconnected */
    uint64_t stalls;            /* times a transport had no room and the caller progressed */
    uint64_t qp_full;           /* ... because a queue pair had SYMRAIL_IB_MAX_WR outstanding */
    uint64_t cq_full;           /* ... because a completion queue was full */
    uint64_t peers_suspect;     /* times a peer became suspect (symrail_peer_state) */
    uint64_t peers_failed;      /* peers that failed */
    uint32_t nrails;
    struct {
        char     name[32];      /* device:port */
        uint64_t bytes;         /* bytes of put/get data carried */
        uint64_t slices;
    } rails[SYMRAIL_STATS_MAX_RAILS];
    uint64_t lanes_paused;      /* times a failing lane was paused (SYMRAIL_SPRAY=adaptive) */
    uint64_t lane_probes;       /* ... its pause ended and it was probed */
    uint64_t lanes_resumed;     /* ... a probe succeeded and it took traffic again */
    /* Private (unregistered) buffers used in place over RDMA
     * (SYMRAIL_IB_ZCOPY_THRESH): registration cache lookups that found an
     * entry and that had to register, registrations made, entries dropped
     * because their memory was freed or unmapped, idle ones evicted for
     * SYMRAIL_IB_RCACHE_MAX, and the bytes registered now. */
    uint64_t rcache_hits, rcache_misses, rcache_regs;
    uint64_t rcache_invalidations, rcache_evictions, rcache_bytes;
} symrail_stats_t;

/* This PE's counters since init. */
symrail_status_t symrail_stats(symrail_stats_t *stats_p);

/* ---- peer state and failure policy ----------------------------------------- */
/* What this PE knows of another, kept by the library's liveness checks
 * (GPI-2's state vector).  SUSPECT: alive as far as we know, but stopped or
 * silent for SYMRAIL_OP_TIMEOUT; it becomes OK again when the peer answers.
 * FAILED: its process is gone or its connection was lost, for good.  Each
 * change is logged once (warn; back to OK at info) with its cause.
 *
 * SYMRAIL_ON_PEER_FAILURE says what a failure does.  abort (the default,
 * OpenSHMEM's semantics): the launcher ends the job naming the PE, and a
 * wait of any PE that notices first fails.  report (serving engines): the
 * job goes on; calls to a FAILED peer return SYMRAIL_ERR_PEER_GONE at once,
 * a wait on a peer ends when that peer becomes SUSPECT or FAILED (within
 * SYMRAIL_OP_TIMEOUT), collectives whose team includes a FAILED PE fail
 * with SYMRAIL_ERR_PEER_GONE, and a wait that names no peer (signal and
 * notification waits) fails only when a peer fails while it waits; the
 * other peers keep working.  finalize then waits for no FAILED PE. */
typedef enum {
    SYMRAIL_PEER_OK      = 0,
    SYMRAIL_PEER_SUSPECT = 1,
    SYMRAIL_PEER_FAILED  = 2,
} symrail_peer_state_t;
/* The state of `pe` (a PE of the job or a connected peer), looked at now. */
symrail_status_t symrail_peer_state(int pe, symrail_peer_state_t *state_p);
/* The state of every PE of the job: states_p has symrail_n_pes() entries.
 * *nbad_p (may be NULL) receives how many are not OK. */
symrail_status_t symrail_peer_states(symrail_peer_state_t *states_p, int *nbad_p);

/* ---- independent jobs ------------------------------------------------------ */
/* Processes that were not launched together (two jobs, or singletons)
 * connect at run time.  One exports its endpoint, a small blob that travels
 * over any channel (a file, a socket, an RPC); the other connects to it and
 * gets a PE number for it (from symrail_n_pes() up).  The exporter learns
 * of each process that connected with symrail_endpoint_accept, which gives
 * its own number for the connector; from then on both send to each other.
 * A connected peer's number is taken by notifications (symrail_notify_*),
 * segments (its descriptors import as segments of that PE) and batches
 * (symrail_batch_submit_notify), never by symmetric-heap calls, atomics,
 * collectives or OpenSHMEM.  Connected jobs talk over TCP; on one host,
 * segments and batches go over shared memory where it reaches the other
 * process, and otherwise over RDMA where both run verbs and their rails
 * reach each other (logged at info).  What goes to a
 * peer that left (disconnect, finalize, exit, death) fails with
 * SYMRAIL_ERR_PEER_GONE; the job's own PEs and other peers are unaffected.
 * A process connects to or accepts at most SYMRAIL_CONNECT_MAX peers over
 * its life (numbers are not used again). */
#define SYMRAIL_ENDPOINT_MAX 512   /* bytes of an endpoint blob, at most */
/* *len_p: buf's size in, the blob's out (SYMRAIL_ERR_TRUNCATED: too small). */
symrail_status_t symrail_endpoint_export(void *buf, size_t *len_p);
/* Connects to the process that exported `buf`; its number in *peer_p.
 * Connecting again to a process that is still connected gives its number.
 * Where both run verbs, it returns once the exporter has accepted
 * (SYMRAIL_ERR_TIMEOUT after SYMRAIL_OP_TIMEOUT), so that both ends take
 * RDMA, or neither. */
symrail_status_t symrail_endpoint_connect(const void *buf, size_t len, int *peer_p);
/* The next process that connected to this one, as *peer_p, waiting up to
 * timeout_ms (-1: forever; 0: SYMRAIL_ERR_AGAIN at once when none has).
 * Until then, messages from it arrive (their src_pe is its number), but
 * nothing can be sent to it. */
symrail_status_t symrail_endpoint_accept(int timeout_ms, int *peer_p);
/* Closes the connection to a connected peer: what follows to it fails with
 * SYMRAIL_ERR_PEER_GONE, at both ends; its descriptors are refused
 * (SYMRAIL_ERR_STALE).  Connect again for a new number. */
symrail_status_t symrail_endpoint_disconnect(int peer);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* SYMRAIL_H */
