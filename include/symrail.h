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
} symrail_status_t;

/* Largest payload of one notification message. */
#define SYMRAIL_NOTIFY_MAX_PAYLOAD 256

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
/* Messages from one sender arrive in the order sent.  Each sender has
 * SYMRAIL_NOTIFY_SLOTS messages in flight to one receiver; a slot comes back
 * when the receiver consumes the message (poll or wait).  notify_send waits
 * for a slot (up to SYMRAIL_OP_TIMEOUT) and consumes nothing meanwhile, so
 * PEs that all send to each other should use notify_trysend and drain
 * between tries. */
symrail_status_t symrail_notify_send(int pe, uint32_t tag, const void *payload, size_t len);
/* Like notify_send, but SYMRAIL_ERR_AGAIN at once when the receiver has no
 * free slot for us. */
symrail_status_t symrail_notify_trysend(int pe, uint32_t tag, const void *payload, size_t len);
/* SYMRAIL_OK with a message, or SYMRAIL_ERR_AGAIN if none is waiting. */
symrail_status_t symrail_notify_poll(symrail_notify_t *msg_p);
/* Wait up to timeout_ms (-1: forever) for a message; SYMRAIL_ERR_TIMEOUT if none. */
symrail_status_t symrail_notify_wait(int timeout_ms, symrail_notify_t *msg_p);

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
    uint32_t nrails;
    struct {
        char     name[32];      /* device:port */
        uint64_t bytes;         /* bytes of put/get data carried */
        uint64_t slices;
    } rails[SYMRAIL_STATS_MAX_RAILS];
} symrail_stats_t;

/* This PE's counters since init. */
symrail_status_t symrail_stats(symrail_stats_t *stats_p);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* SYMRAIL_H */
