/*
 * Teams, synchronisation and collectives of shmem.h: shmem.h includes it where it
 * belongs; programs include <shmem.h>, never this part alone.
 */
#ifndef SHMEM_COLL_H
#define SHMEM_COLL_H

#ifndef SHMEM_H
#error "include <shmem.h>, not <shmem_coll.h>"
#endif

/* ---- teams -------------------------------------------------------------------------------- */
int  shmem_team_my_pe(shmem_team_t team);
int  shmem_team_n_pes(shmem_team_t team);
int  shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int  shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int  shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                              const shmem_team_config_t *config, long config_mask,
                              shmem_team_t *new_team);
int  shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                         const shmem_team_config_t *xaxis_config, long xaxis_mask,
                         shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                         long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);

/* ---- synchronisation and collectives ------------------------------------------------------- */
/* Team collectives must be called alike on every member (the same call,
 * size and root): members compare their calls, and a difference ends the
 * job naming both PEs and both calls (see the README for when). */
void shmem_barrier_all(void);
void shmem_sync_all(void);
int  shmem_team_sync(shmem_team_t team);
SHMEMX_DEPRECATED void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
SHMEMX_DEPRECATED void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);

#define SHMEMX_D_COLL_(N, T, _)                                                         \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, \
                              int PE_root);                                            \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems);
SHMEM_X_RMA_TYPES(SHMEMX_D_COLL_, ~)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

/* The active-set forms. */
#define SHMEMX_D_ASET_(S, _)                                                            \
    SHMEMX_DEPRECATED void shmem_broadcast##S(void *dest, const void *source,          \
                                              size_t nelems, int PE_root, int PE_start, \
                                              int logPE_stride, int PE_size, long *pSync); \
    SHMEMX_DEPRECATED void shmem_collect##S(void *dest, const void *source, size_t nelems, \
                                            int PE_start, int logPE_stride, int PE_size, \
                                            long *pSync);                              \
    SHMEMX_DEPRECATED void shmem_fcollect##S(void *dest, const void *source,           \
                                             size_t nelems, int PE_start,              \
                                             int logPE_stride, int PE_size, long *pSync); \
    SHMEMX_DEPRECATED void shmem_alltoall##S(void *dest, const void *source,           \
                                             size_t nelems, int PE_start,              \
                                             int logPE_stride, int PE_size, long *pSync); \
    SHMEMX_DEPRECATED void shmem_alltoalls##S(void *dest, const void *source,          \
                                              ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                                              int PE_start, int logPE_stride, int PE_size, \
                                              long *pSync);
#define SHMEM_X_ASET_SIZES(X, ...) X(32, __VA_ARGS__) X(64, __VA_ARGS__)
SHMEM_X_ASET_SIZES(SHMEMX_D_ASET_, ~)

/* Team reductions, every operator and type; 1.6's prefix reductions exist
 * for SUM alone (shmem_TYPE_sum_inscan/exscan), on every type SUM has. */
#define SHMEMX_D_RED_T_(N, T, OP)                                                       \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source,         \
                                  size_t nreduce);
#define SHMEMX_D_RED_(OP, TAB, _) TAB(SHMEMX_D_RED_T_, OP)
SHMEM_X_RED_OPS(SHMEMX_D_RED_, ~)
#define SHMEMX_D_SCAN_T_(N, T, _)                                                       \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems);
SHMEM_X_RED_SUMPROD_TYPES(SHMEMX_D_SCAN_T_, ~)
#define SHMEMX_D_TOALL_T_(N, T, OP)                                                     \
    SHMEMX_DEPRECATED void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, \
                                                     int PE_start, int logPE_stride,   \
                                                     int PE_size, T *pWrk, long *pSync);
#define SHMEMX_D_TOALL_(OP, TAB, _) TAB(SHMEMX_D_TOALL_T_, OP)
SHMEM_X_TOALL_OPS(SHMEMX_D_TOALL_, ~)

#endif /* SHMEM_COLL_H */
