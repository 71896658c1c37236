/*
 * Point-to-point synchronisation and locks of shmem.h: shmem.h includes it where it
 * belongs; programs include <shmem.h>, never this part alone.
 */
#ifndef SHMEM_P2P_H
#define SHMEM_P2P_H

#ifndef SHMEM_H
#error "include <shmem.h>, not <shmem_p2p.h>"
#endif

/* ---- point-to-point synchronisation ----------------------------------------------------- */
#define SHMEMX_D_P2P_(N, T, _)                                                          \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                        \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, \
                                    T cmp_value);                                      \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status,      \
                                      int cmp, T cmp_value);                           \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,       \
                                       const int *status, int cmp, T cmp_value);       \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, \
                                           int cmp, T *cmp_values);                    \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, \
                                             int cmp, T *cmp_values);                  \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                              const int *status, int cmp, T *cmp_values); \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                               \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp,      \
                             T cmp_value);                                             \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,   \
                                T cmp_value);                                          \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,             \
                                 const int *status, int cmp, T cmp_value);             \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                    T *cmp_values);                                    \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status,     \
                                       int cmp, T *cmp_values);                        \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,      \
                                        const int *status, int cmp, T *cmp_values);
SHMEM_X_P2P_TYPES(SHMEMX_D_P2P_, ~)
#define SHMEMX_D_OLD_WAIT_(N, T, _)                                                     \
    SHMEMX_DEPRECATED void shmem_##N##_wait(T *ivar, T cmp_value);
SHMEM_X_OLD_WAIT_TYPES(SHMEMX_D_OLD_WAIT_, ~)

/* ---- locks -------------------------------------------------------------------------------- */
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int  shmem_test_lock(long *lock);

#endif /* SHMEM_P2P_H */
