/*
 * RMA and signals of shmem.h: shmem.h includes it where it
 * belongs; programs include <shmem.h>, never this part alone.
 */
#ifndef SHMEM_RMA_H
#define SHMEM_RMA_H

#ifndef SHMEM_H
#error "include <shmem.h>, not <shmem_rma.h>"
#endif

/* ---- RMA -------------------------------------------------------------------------- */
/* Every RMA, signal and atomic call must stay inside the one live heap
 * allocation it starts in (checked on every call from a table of block
 * ends, a load or three: see the README); a call that does not ends the
 * job naming itself, the argument, the allocation and the overrun. */
#define SHMEMX_D_RMA_(N, T, OP)                                                         \
    void shmem_##N##_##OP(T *dest, const T *source, size_t nelems, int pe);            \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                              int pe);
#define SHMEMX_D_IRMA_(N, T, OP)                                                        \
    void shmem_##N##_##OP(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t nelems, int pe);                                      \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems, int pe);
#define SHMEMX_D_IBRMA_(N, T, OP)                                                       \
    void shmem_##N##_##OP(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t bsize, size_t nblocks, int pe);                       \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);
#define SHMEMX_D_P_(N, T, _)                                                            \
    void shmem_##N##_p(T *dest, T value, int pe);                                      \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    T shmem_##N##_g(const T *source, int pe);                                          \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);
SHMEM_X_RMA_TYPES(SHMEMX_D_RMA_, put)
SHMEM_X_RMA_TYPES(SHMEMX_D_RMA_, get)
SHMEM_X_RMA_TYPES(SHMEMX_D_RMA_, put_nbi)
SHMEM_X_RMA_TYPES(SHMEMX_D_RMA_, get_nbi)
SHMEM_X_RMA_TYPES(SHMEMX_D_IRMA_, iput)
SHMEM_X_RMA_TYPES(SHMEMX_D_IRMA_, iget)
SHMEM_X_RMA_TYPES(SHMEMX_D_IBRMA_, ibput)
SHMEM_X_RMA_TYPES(SHMEMX_D_IBRMA_, ibget)
SHMEM_X_RMA_TYPES(SHMEMX_D_P_, ~)

/* Sized and untyped forms: nelems counts elements of SIZE bits (bytes for mem). */
#define SHMEMX_D_SIZED_(S, _)                                                           \
    void shmem_put##S(void *dest, const void *source, size_t nelems, int pe);          \
    void shmem_ctx_put##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                          int pe);                                                     \
    void shmem_get##S(void *dest, const void *source, size_t nelems, int pe);          \
    void shmem_ctx_get##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                          int pe);                                                     \
    void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe);    \
    void shmem_ctx_put##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source,       \
                                size_t nelems, int pe);                                \
    void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe);    \
    void shmem_ctx_get##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source,       \
                                size_t nelems, int pe);                                \
    void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,   \
                       size_t nelems, int pe);                                         \
    void shmem_ctx_iput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                           ptrdiff_t sst, size_t nelems, int pe);                      \
    void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,   \
                       size_t nelems, int pe);                                         \
    void shmem_ctx_iget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                           ptrdiff_t sst, size_t nelems, int pe);                      \
    void shmem_ibput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                        size_t bsize, size_t nblocks, int pe);                         \
    void shmem_ctx_ibput##S(shmem_ctx_t ctx, void *dest, const void *source,           \
                            ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, \
                            int pe);                                                   \
    void shmem_ibget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                        size_t bsize, size_t nblocks, int pe);                         \
    void shmem_ctx_ibget##S(shmem_ctx_t ctx, void *dest, const void *source,           \
                            ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, \
                            int pe);
SHMEM_X_SIZES(SHMEMX_D_SIZED_, ~)
void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);

/* ---- signals ------------------------------------------------------------------------ */
#define SHMEMX_D_PUTSIG_(N, T, OP)                                                      \
    void shmem_##N##_##OP(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                          uint64_t signal, int sig_op, int pe);                        \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                              uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHMEM_X_RMA_TYPES(SHMEMX_D_PUTSIG_, put_signal)
SHMEM_X_RMA_TYPES(SHMEMX_D_PUTSIG_, put_signal_nbi)
#define SHMEMX_D_PUTSIG_SIZED_(S, _)                                                    \
    void shmem_put##S##_signal(void *dest, const void *source, size_t nelems,          \
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    void shmem_ctx_put##S##_signal(shmem_ctx_t ctx, void *dest, const void *source,    \
                                 size_t nelems, uint64_t *sig_addr, uint64_t signal,   \
                                 int sig_op, int pe);                                  \
    void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems,    \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op,    \
                                   int pe);                                            \
    void shmem_ctx_put##S##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                       size_t nelems, uint64_t *sig_addr,              \
                                       uint64_t signal, int sig_op, int pe);
SHMEM_X_SIZES(SHMEMX_D_PUTSIG_SIZED_, ~)
void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                         uint64_t signal, int sig_op, int pe);
void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe);
void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                                 size_t nelems, uint64_t *sig_addr, uint64_t signal,
                                 int sig_op, int pe);
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

#endif /* SHMEM_RMA_H */
