/*
 * OpenSHMEM signals (put-with-signal for every RMA type and size, signal
 * fetch, add, set and wait) and pe_quiet, over the core's put-with-signal,
 * its 64-bit atomics and its per-PE completion.
 */
#include "config.h"
#include "shmem/p2p.h"

static inline sr_tl_amo_t sr_sh_sig_op(const char *fn, int sig_op)
{
    if (sig_op == SHMEM_SIGNAL_SET)
        return SR_TL_AMO_SET;
    if (sig_op == SHMEM_SIGNAL_ADD)
        return SR_TL_AMO_ADD;
    sr_sh_fatal(fn, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
}

/*
 * The non-blocking forms take the blocking path: the core's put-with-signal
 * returns once the source may be reused and the signal is on its way behind
 * the data, which is all the non-blocking form promises and more; quiet
 * completes both either way.
 */
static void sr_sh_put_signal(const char *fn, shmem_ctx_t uctx, void *dest, const void *source,
                             size_t nelems, size_t esize, uint64_t *sig_addr, uint64_t signal,
                             int sig_op, int pe)
{
    SR_SH_UP(fn);
    sr_ctx_t *ctx = sr_sh_ctx_live(fn, uctx, 1);
    int wpe = sr_sh_pe(fn, ctx, pe);
    sr_tl_amo_t op = sr_sh_sig_op(fn, sig_op);
    uint64_t sig_off = sr_sh_sig_check(fn, sig_addr), off = 0;
    if (sr_unlikely(nelems > SIZE_MAX / esize))
        sr_sh_fatal(fn, "nelems %zu is too large", nelems);
    size_t nbytes = nelems * esize;
    if (nbytes) {
        off = sr_sh_sym_check(fn, "dest", dest, nbytes, 1);
        if (sr_unlikely(!sr_api_buf_ok(fn, "source", source, nbytes)))
            sr_api_fatal(fn, SYMRAIL_ERR_INVALID);
    }
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_put_signal(ctx, source, off, nbytes, sig_off, op, signal, wpe);
    sr_ctx_leave(ctx);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal(fn, st);
}

#define SR_SH_CTXD ((shmem_ctx_t)SYMRAIL_CTX_DEFAULT)

#define SR_SH_PUT_SIGNAL_DEF(N, T, _)                                                           \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,    \
                                uint64_t signal, int sig_op, int pe)                            \
    {                                                                                           \
        sr_sh_put_signal("shmem_" #N "_put_signal", SR_SH_CTXD, dest, source, nelems,          \
                         sizeof(T), sig_addr, signal, sig_op, pe);                              \
    }                                                                                           \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,   \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)    \
    {                                                                                           \
        sr_sh_put_signal("shmem_ctx_" #N "_put_signal", ctx, dest, source, nelems, sizeof(T),  \
                         sig_addr, signal, sig_op, pe);                                         \
    }                                                                                           \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,                    \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)    \
    {                                                                                           \
        sr_sh_put_signal("shmem_" #N "_put_signal_nbi", SR_SH_CTXD, dest, source, nelems,      \
                         sizeof(T), sig_addr, signal, sig_op, pe);                              \
    }                                                                                           \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source,              \
                                        size_t nelems, uint64_t *sig_addr, uint64_t signal,     \
                                        int sig_op, int pe)                                     \
    {                                                                                           \
        sr_sh_put_signal("shmem_ctx_" #N "_put_signal_nbi", ctx, dest, source, nelems,         \
                         sizeof(T), sig_addr, signal, sig_op, pe);                              \
    }

SHMEM_X_RMA_TYPES(SR_SH_PUT_SIGNAL_DEF, ~)

/* putSIZE_signal and putmem_signal: X(name, bytes per element). */
#define SR_SH_PUT_SIGNAL_MEM_DEF(N, ESIZE)                                                      \
    void shmem_put##N##_signal(void *dest, const void *source, size_t nelems,                   \
                               uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)         \
    {                                                                                           \
        sr_sh_put_signal("shmem_put" #N "_signal", SR_SH_CTXD, dest, source, nelems, ESIZE,    \
                         sig_addr, signal, sig_op, pe);                                         \
    }                                                                                           \
    void shmem_ctx_put##N##_signal(shmem_ctx_t ctx, void *dest, const void *source,             \
                                   size_t nelems, uint64_t *sig_addr, uint64_t signal,          \
                                   int sig_op, int pe)                                          \
    {                                                                                           \
        sr_sh_put_signal("shmem_ctx_put" #N "_signal", ctx, dest, source, nelems, ESIZE,       \
                         sig_addr, signal, sig_op, pe);                                         \
    }                                                                                           \
    void shmem_put##N##_signal_nbi(void *dest, const void *source, size_t nelems,               \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)     \
    {                                                                                           \
        sr_sh_put_signal("shmem_put" #N "_signal_nbi", SR_SH_CTXD, dest, source, nelems,       \
                         ESIZE, sig_addr, signal, sig_op, pe);                                  \
    }                                                                                           \
    void shmem_ctx_put##N##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,         \
                                       size_t nelems, uint64_t *sig_addr, uint64_t signal,      \
                                       int sig_op, int pe)                                      \
    {                                                                                           \
        sr_sh_put_signal("shmem_ctx_put" #N "_signal_nbi", ctx, dest, source, nelems, ESIZE,   \
                         sig_addr, signal, sig_op, pe);                                         \
    }

#define SR_SH_SIZE_DEF(BITS, _) SR_SH_PUT_SIGNAL_MEM_DEF(BITS, (BITS) / 8)
SHMEM_X_SIZES(SR_SH_SIZE_DEF, ~)
SR_SH_PUT_SIGNAL_MEM_DEF(mem, 1)

/* ---- fetch, wait, add, set -------------------------------------------------------- */

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    static const char fn[] = "shmem_signal_fetch";
    SR_SH_UP(fn);
    sr_sh_sig_check(fn, sig_addr);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    static const char fn[] = "shmem_signal_wait_until";
    SR_SH_UP(fn);
    symrail_cmp_t c = sr_sh_cmp(fn, cmp);
    sr_sh_sig_check(fn, sig_addr);
    uint64_t seen = 0;
    symrail_status_t st = sr_signal_wait(sig_addr, c, cmp_value, &seen);
    if (st != SYMRAIL_OK)
        sr_api_fatal(fn, st);
    return seen;
}

/* 1.6's signal_add and signal_set: an atomic on the signal word, as the
 * signal of a put-with-signal would be. */
static void sr_sh_signal_amo(const char *fn, shmem_ctx_t uctx, sr_tl_amo_t op,
                             uint64_t *sig_addr, uint64_t signal, int pe)
{
    SR_SH_UP(fn);
    sr_ctx_t *ctx = sr_sh_ctx_live(fn, uctx, 1);
    int wpe = sr_sh_pe(fn, ctx, pe);
    uint64_t off = sr_sh_sig_check(fn, sig_addr), old = 0;
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_amo(ctx, op, off, signal, 0, wpe, &old);
    if (st == SYMRAIL_OK)
        ctx->stats.signals++;
    sr_ctx_leave(ctx);
    if (st != SYMRAIL_OK)
        sr_api_fatal(fn, st);
}

void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    sr_sh_signal_amo("shmem_signal_add", SR_SH_CTXD, SR_TL_AMO_ADD, sig_addr, signal, pe);
}

void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    sr_sh_signal_amo("shmem_ctx_signal_add", ctx, SR_TL_AMO_ADD, sig_addr, signal, pe);
}

void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    sr_sh_signal_amo("shmem_signal_set", SR_SH_CTXD, SR_TL_AMO_SET, sig_addr, signal, pe);
}

void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    sr_sh_signal_amo("shmem_ctx_signal_set", ctx, SR_TL_AMO_SET, sig_addr, signal, pe);
}

/* ---- pe_quiet ------------------------------------------------------------------------ */

/*
 * What ctx issued to the listed PEs is complete there; traffic to other PEs
 * is not waited for.  The core tracks each peer's slices in flight and
 * flushes per peer; should ctx hold non-blocking work that no peer's count
 * covers (more pending than all peers have in flight), a full quiet
 * completes it rather than miss it.
 */
static void sr_sh_pe_quiet(const char *fn, shmem_ctx_t uctx, const int *target_pes,
                           size_t npes)
{
    SR_SH_UP(fn);
    sr_ctx_t *ctx = sr_sh_ctx_live(fn, uctx, 0);
    if (npes == 0)
        return;
    if (target_pes == NULL)
        sr_sh_fatal(fn, "target_pes is NULL with npes %zu", npes);
    for (size_t i = 0; i < npes; i++)
        sr_sh_pe(fn, ctx, target_pes[i]);
    sr_ctx_enter(ctx);
    symrail_status_t st = SYMRAIL_OK;
    for (size_t i = 0; i < npes && st == SYMRAIL_OK; i++)
        st = sr_peer_settle(ctx, sr_team_world_pe(ctx->team, target_pes[i]), fn);
    if (st == SYMRAIL_OK && ctx->nbi.remaining) {
        uint64_t tracked = 0;
        for (int pe = 0; pe < sr_rt.n_pes; pe++)
            tracked += ctx->peers[pe].inflight;
        if (ctx->nbi.remaining > tracked)
            st = sr_quiet(ctx);
    }
    sr_ctx_leave(ctx);
    if (st != SYMRAIL_OK)
        sr_api_fatal(fn, st);
}

void shmem_pe_quiet(const int *target_pes, size_t npes)
{
    sr_sh_pe_quiet("shmem_pe_quiet", SR_SH_CTXD, target_pes, npes);
}

void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    sr_sh_pe_quiet("shmem_ctx_pe_quiet", ctx, target_pes, npes);
}
