/*
 * OpenSHMEM synchronisation and the collectives that move data (reductions
 * are in reduce.c): thin maps onto the core's, which check their arguments;
 * a failure ends the job naming the call.
 */
#include "config.h"
#include "shmem/sh.h"
#include "shmem/sh_team.h"

static void sr_sh_check(const char *fn, symrail_status_t st)
{
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_sh_fail(fn, st);
}

static void sr_sh_quiet(const char *fn)
{
    sr_ctx_t *ctx = sr_rt.dctx;
    sr_sh_check(fn, sr_ctx_quiet(ctx));
}

void shmem_barrier_all(void)
{
    static const char fn[] = "shmem_barrier_all";
    SR_SH_UP(fn);
    sr_sh_quiet(fn);
    sr_sh_check(fn, sr_barrier());
}

void shmem_sync_all(void)
{
    static const char fn[] = "shmem_sync_all";
    SR_SH_UP(fn);
    sr_sh_check(fn, sr_barrier());
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    static const char fn[] = "shmem_barrier";
    SR_SH_UP(fn);
    sr_sh_quiet(fn);
    sr_sh_check(fn, sr_coll_barrier_aset(fn, PE_start, logPE_stride, PE_size, pSync));
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    static const char fn[] = "shmem_sync";
    SR_SH_UP(fn);
    sr_sh_check(fn, sr_coll_barrier_aset(fn, PE_start, logPE_stride, PE_size, pSync));
}

/* ---- team collectives, typed and mem forms ------------------------------------ */

static int sr_sh_bcast(const char *fn, shmem_team_t team, void *dest, const void *src,
                       size_t nbytes, int root)
{
    sr_sh_check(fn, sr_coll_bcast(fn, sr_sh_team(fn, team), dest, src, nbytes, root));
    return 0;
}

static int sr_sh_collect(const char *fn, shmem_team_t team, void *dest, const void *src,
                         size_t nbytes)
{
    sr_sh_check(fn, sr_coll_collect(fn, sr_sh_team(fn, team), dest, src, nbytes));
    return 0;
}

static int sr_sh_fcollect(const char *fn, shmem_team_t team, void *dest, const void *src,
                          size_t nbytes)
{
    sr_sh_check(fn, sr_coll_fcollect(fn, sr_sh_team(fn, team), dest, src, nbytes));
    return 0;
}

static int sr_sh_alltoall(const char *fn, shmem_team_t team, void *dest, const void *src,
                          size_t nbytes)
{
    sr_sh_check(fn, sr_coll_alltoall(fn, sr_sh_team(fn, team), dest, src, nbytes));
    return 0;
}

static int sr_sh_alltoalls(const char *fn, shmem_team_t team, void *dest, const void *src,
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize)
{
    sr_sh_check(fn, sr_coll_alltoalls(fn, sr_sh_team(fn, team), dest, src, dst, sst, nelems,
                                      esize));
    return 0;
}

#define SR_SH_COLL_(N, T, _)                                                                  \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,     \
                              int PE_root)                                                    \
    {                                                                                         \
        return sr_sh_bcast("shmem_" #N "_broadcast", team, dest, source, nelems * sizeof(T), \
                           PE_root);                                                          \
    }                                                                                         \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)     \
    {                                                                                         \
        return sr_sh_collect("shmem_" #N "_collect", team, dest, source, nelems * sizeof(T)); \
    }                                                                                         \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)    \
    {                                                                                         \
        return sr_sh_fcollect("shmem_" #N "_fcollect", team, dest, source,                   \
                              nelems * sizeof(T));                                            \
    }                                                                                         \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)    \
    {                                                                                         \
        return sr_sh_alltoall("shmem_" #N "_alltoall", team, dest, source,                   \
                              nelems * sizeof(T));                                            \
    }                                                                                         \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,   \
                              ptrdiff_t sst, size_t nelems)                                   \
    {                                                                                         \
        return sr_sh_alltoalls("shmem_" #N "_alltoalls", team, dest, source, dst, sst,       \
                               nelems, sizeof(T));                                            \
    }
SHMEM_X_RMA_TYPES(SR_SH_COLL_, ~)

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root)
{
    return sr_sh_bcast("shmem_broadcastmem", team, dest, source, nelems, PE_root);
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return sr_sh_collect("shmem_collectmem", team, dest, source, nelems);
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return sr_sh_fcollect("shmem_fcollectmem", team, dest, source, nelems);
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return sr_sh_alltoall("shmem_alltoallmem", team, dest, source, nelems);
}

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems)
{
    return sr_sh_alltoalls("shmem_alltoallsmem", team, dest, source, dst, sst, nelems, 1);
}

/* ---- the active-set forms ------------------------------------------------------- */

#define SR_SH_ASET_(S, _)                                                                     \
    void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root,      \
                            int PE_start, int logPE_stride, int PE_size, long *pSync)        \
    {                                                                                         \
        static const char fn[] = "shmem_broadcast" #S;                                       \
        SR_SH_UP(fn);                                                                      \
        sr_sh_check(fn, sr_coll_bcast_aset(fn, dest, source, nelems * (S / 8), PE_root,      \
                                           PE_start, logPE_stride, PE_size, pSync));         \
    }                                                                                         \
    void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start,       \
                          int logPE_stride, int PE_size, long *pSync)                        \
    {                                                                                         \
        static const char fn[] = "shmem_collect" #S;                                         \
        SR_SH_UP(fn);                                                                      \
        sr_sh_check(fn, sr_coll_collect_aset(fn, dest, source, nelems * (S / 8), PE_start,   \
                                             logPE_stride, PE_size, pSync));                 \
    }                                                                                         \
    void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start,      \
                           int logPE_stride, int PE_size, long *pSync)                       \
    {                                                                                         \
        static const char fn[] = "shmem_fcollect" #S;                                        \
        SR_SH_UP(fn);                                                                      \
        sr_sh_check(fn, sr_coll_fcollect_aset(fn, dest, source, nelems * (S / 8), PE_start,  \
                                              logPE_stride, PE_size, pSync));                \
    }                                                                                         \
    void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start,      \
                           int logPE_stride, int PE_size, long *pSync)                       \
    {                                                                                         \
        static const char fn[] = "shmem_alltoall" #S;                                        \
        SR_SH_UP(fn);                                                                      \
        sr_sh_check(fn, sr_coll_alltoall_aset(fn, dest, source, nelems * (S / 8), PE_start,  \
                                              logPE_stride, PE_size, pSync));                \
    }                                                                                         \
    void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,    \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size,      \
                            long *pSync)                                                      \
    {                                                                                         \
        static const char fn[] = "shmem_alltoalls" #S;                                       \
        SR_SH_UP(fn);                                                                      \
        sr_sh_check(fn, sr_coll_alltoalls_aset(fn, dest, source, dst, sst, nelems, S / 8,    \
                                               PE_start, logPE_stride, PE_size, pSync));     \
    }
SHMEM_X_ASET_SIZES(SR_SH_ASET_, ~)
