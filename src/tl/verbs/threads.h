/*
 * RDMA verbs transport: the locks and lock-free handoffs that "Threads" at
 * the top of ib.h describes (skipped behind one branch on ctx->mt), and
 * the collector of completion callbacks, called once every lock is
 * released.  Included by ib.h after the structs it reads.
 */
#ifndef SR_TL_VERBS_THREADS_H
#define SR_TL_VERBS_THREADS_H

/* Plain loads and stores on x86: they only keep the compiler honest. */
#define SR_IB_LOAD(x)     __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define SR_IB_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
/* A counter written by one lock holder and read by stats at any time. */
#define SR_IB_COUNT(x, n) __atomic_store_n(&(x), (x) + (n), __ATOMIC_RELAXED)

static inline void sr_ib_lock(const sr_tl_ctx_t *ctx, pthread_mutex_t *m)
{
    if (sr_unlikely(ctx->mt))
        pthread_mutex_lock(m);
}

static inline void sr_ib_unlock(const sr_tl_ctx_t *ctx, pthread_mutex_t *m)
{
    if (sr_unlikely(ctx->mt))
        pthread_mutex_unlock(m);
}

static inline int sr_ib_trylock(const sr_tl_ctx_t *ctx, pthread_mutex_t *m)
{
    return !ctx->mt || pthread_mutex_trylock(m) == 0;
}

/* A WR goes to the device in one thread and its completion comes out in
 * another: the device orders the two, which ThreadSanitizer cannot see
 * (the provider and the kernel are not instrumented), so it is told. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) && !defined(__SANITIZE_THREAD__)
#define __SANITIZE_THREAD__ 1
#endif
#endif
#ifdef __SANITIZE_THREAD__
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define SR_IB_HANDOFF(p)  __tsan_release(p)
#define SR_IB_TAKEOVER(p) __tsan_acquire(p)
#else
#define SR_IB_HANDOFF(p)  ((void)(p))
#define SR_IB_TAKEOVER(p) ((void)(p))
#endif

/* Takes and clears a flag that says there is work; 1 when it was set. */
static inline int sr_ib_flag_take(const sr_tl_ctx_t *ctx, int *flag)
{
    if (!SR_IB_LOAD(*flag))
        return 0;
    if (sr_unlikely(ctx->mt))
        return __atomic_exchange_n(flag, 0, __ATOMIC_ACQ_REL);
    *flag = 0;
    return 1;
}

static inline int sr_ib_bit_take(const sr_tl_ctx_t *ctx, uint64_t *map)
{
    if (sr_likely(!ctx->mt)) {
        if (*map == 0)
            return -1;
        int i = __builtin_ctzll(*map);
        *map &= ~(1ull << i);
        return i;
    }
    uint64_t old = __atomic_load_n(map, __ATOMIC_RELAXED);
    while (old != 0)
        if (__atomic_compare_exchange_n(map, &old, old & (old - 1), 1, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return __builtin_ctzll(old);
    return -1;
}

static inline void sr_ib_bit_give(const sr_tl_ctx_t *ctx, uint64_t *map, int i)
{
    if (sr_likely(!ctx->mt))
        *map |= 1ull << i;
    else
        __atomic_fetch_or(map, 1ull << i, __ATOMIC_RELEASE);
}

static inline uint32_t sr_ib_cq_used(const sr_tl_ctx_t *ctx, sr_ib_dev_t *dev)
{
    return ctx->mt ? __atomic_load_n(&dev->cq_outstanding, __ATOMIC_RELAXED)
                   : dev->cq_outstanding;
}

static inline void sr_ib_cq_give(const sr_tl_ctx_t *ctx, sr_ib_dev_t *dev)
{
    if (sr_likely(!ctx->mt))
        dev->cq_outstanding--;
    else
        __atomic_fetch_sub(&dev->cq_outstanding, 1, __ATOMIC_RELAXED);
}

/* Callbacks found while locks are held, called once they are released. */
typedef struct {
    sr_tl_comp_t     *comp;
    symrail_status_t  status;
} sr_ib_cb_t;

typedef struct {
    size_t      n, cap;
    sr_ib_cb_t *v;
    sr_ib_cb_t  inl[SR_IB_POLL_BATCH];
} sr_ib_done_t;

static inline void sr_ib_done_init(sr_ib_done_t *d)
{
    d->n = 0;
    d->cap = SR_IB_POLL_BATCH;
    d->v = d->inl;
}

void sr_ib_done_add(sr_ib_done_t *d, sr_tl_comp_t *comp, symrail_status_t status);
/* Calls what was collected (no lock held) and empties d. */
int sr_ib_done_run(sr_ib_done_t *d);

#endif
