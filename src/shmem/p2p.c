/*
 * OpenSHMEM point-to-point synchronisation: wait_until and test, on one
 * variable or a set (all, any, some; one comparison value or a vector of
 * them), for every point-to-point type.  One engine serves them all: the
 * typed names only say how wide the elements are and whether they are
 * signed.  Waits go through the core's wait loop (progress, sleep on the
 * transport, a clear error when a peer is gone).
 */
#include "config.h"
#include "shmem/p2p.h"

#include <string.h>

typedef enum { SR_SH_ALL, SR_SH_ANY, SR_SH_SOME } sr_sh_set_t;

typedef struct {
    const char   *ivars;
    size_t        n;
    const int    *status;   /* non-zero: excluded; NULL: none is */
    const char   *values;   /* one comparison value per element, or NULL */
    uint64_t      value;    /* the comparison value as a key (sr_sh_key) */
    size_t       *indices;
    unsigned      width;
    uint8_t       sgn;
    symrail_cmp_t cmp;
    sr_sh_set_t   set;
    size_t        next;     /* ALL: elements before this one were seen to satisfy */
    size_t        result;
} sr_sh_wait_t;

/* A value as an unsigned key that orders as the value does: sign-extended
 * and, for signed types, with the sign bit flipped. */
static inline uint64_t sr_sh_key(uint64_t raw, unsigned width, int sgn)
{
    if (!sgn)
        return raw;
    int64_t v = width == 2 ? (int16_t)raw : width == 4 ? (int32_t)raw : (int64_t)raw;
    return (uint64_t)v ^ (UINT64_C(1) << 63);
}

/* Peers write ivars behind our back (puts, atomics): every look is a load
 * of its own, acquiring what was written before the value. */
static inline uint64_t sr_sh_load(const char *p, unsigned width)
{
    switch (width) {
    case 2: return __atomic_load_n((const uint16_t *)(const void *)p, __ATOMIC_ACQUIRE);
    case 4: return __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_ACQUIRE);
    default: return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_ACQUIRE);
    }
}

static inline int sr_sh_excluded(const sr_sh_wait_t *w, size_t i)
{
    return w->status != NULL && w->status[i] != 0;
}

static inline int sr_sh_holds(const sr_sh_wait_t *w, size_t i)
{
    uint64_t v = sr_sh_key(sr_sh_load(w->ivars + i * w->width, w->width), w->width, w->sgn);
    uint64_t c = w->value;
    if (w->values) {
        uint64_t raw = 0;
        memcpy(&raw, w->values + i * w->width, w->width);  /* little-endian: the low bytes */
        c = sr_sh_key(raw, w->width, w->sgn);
    }
    return sr_cmp(v, w->cmp, c);
}

static int sr_sh_ready(void *arg)
{
    sr_sh_wait_t *w = arg;
    size_t count = 0;
    switch (w->set) {
    case SR_SH_ALL:
        for (; w->next < w->n; w->next++)
            if (!sr_sh_excluded(w, w->next) && !sr_sh_holds(w, w->next))
                return 0;
        return 1;
    case SR_SH_ANY:
        for (size_t i = 0; i < w->n; i++)
            if (!sr_sh_excluded(w, i) && sr_sh_holds(w, i)) {
                w->result = i;
                return 1;
            }
        return 0;
    case SR_SH_SOME:
        for (size_t i = 0; i < w->n; i++)
            if (!sr_sh_excluded(w, i) && sr_sh_holds(w, i))
                w->indices[count++] = i;
        w->result = count;
        return count > 0;
    }
    return 1;
}

/*
 * wait_until (wait != 0) or test of a set.  Returns what the call returns:
 * ALL 1 when the set holds (an empty set does); ANY the index of an element
 * that holds, SIZE_MAX when none does or the set is empty; SOME how many
 * hold, their indices in `indices`, 0 when none does or the set is empty.
 */
static size_t sr_sh_sync(const char *fn, int wait, sr_sh_set_t set, const void *ivars,
                         size_t n, const int *status, size_t *indices, int cmp, uint64_t raw,
                         const void *values, int vector, unsigned width, int sgn)
{
    SR_SH_UP(fn);
    sr_sh_wait_t w = { ivars, n, status, values, sr_sh_key(raw, width, sgn), indices, width,
                       (uint8_t)sgn, sr_sh_cmp(fn, cmp), set, 0, 0 };
    size_t none = set == SR_SH_ALL ? 1 : set == SR_SH_ANY ? SIZE_MAX : 0;
    if (n == 0)
        return none;  /* the arrays may be NULL */
    if (n > SIZE_MAX / width)
        sr_sh_fatal(fn, "nelems %zu is too large", n);
    sr_sh_sym_check(fn, n > 1 ? "ivars" : "ivar", ivars, n * width, width);
    if (vector && values == NULL)
        sr_sh_fatal(fn, "cmp_values is NULL with nelems %zu", n);
    if (set == SR_SH_SOME && indices == NULL)
        sr_sh_fatal(fn, "indices is NULL with nelems %zu", n);
    if (status != NULL && set != SR_SH_ALL) {
        size_t i = 0;
        while (i < n && status[i] != 0)
            i++;
        if (i == n)
            return none;  /* every element excluded */
    }
    if (!wait) {
        sr_progress(NULL);  /* writes that only our progress applies (TCP) */
        if (!sr_sh_ready(&w))
            return set == SR_SH_ALL ? 0 : none;
        return set == SR_SH_ALL ? 1 : w.result;
    }
    sr_wait_on_t on = { fn, SR_WAIT_PE_ANY, ivars, 0 };
    symrail_status_t st = sr_wait_on(NULL, sr_sh_ready, &w, SR_WAIT_REMOTE, 0, &on);
    if (st != SYMRAIL_OK)
        sr_api_fatal(fn, st);
    return set == SR_SH_ALL ? 1 : w.result;
}

#define SR_SH_SGN(T)    _Generic((T)0, short: 1, int: 1, long: 1, long long: 1, default: 0)
/* The comparison value's bits, sign-extended: what sr_sh_key expects. */
#define SR_SH_RAW(T, v) (SR_SH_SGN(T) ? (uint64_t)(int64_t)(v) : (uint64_t)(v))
#define SR_SH_RUN(T, name, wait, set, ivars, n, status, indices, v, values, vector)           \
    sr_sh_sync("shmem_" name, wait, set, ivars, n, status, indices, cmp, SR_SH_RAW(T, v),  \
               values, vector, sizeof(T), SR_SH_SGN(T))

#define SR_SH_P2P_DEF(N, T, _)                                                                  \
    _Static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "p2p widths");          \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                  \
    {                                                                                           \
        SR_SH_RUN(T, #N "_wait_until", 1, SR_SH_ALL, ivar, 1, NULL, NULL, cmp_value, NULL, 0); \
    }                                                                                           \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,        \
                                    T cmp_value)                                                \
    {                                                                                           \
        SR_SH_RUN(T, #N "_wait_until_all", 1, SR_SH_ALL, ivars, nelems, status, NULL,          \
                  cmp_value, NULL, 0);                                                          \
    }                                                                                           \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,      \
                                      T cmp_value)                                              \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_wait_until_any", 1, SR_SH_ANY, ivars, nelems, status, NULL,   \
                         cmp_value, NULL, 0);                                                   \
    }                                                                                           \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                \
                                       const int *status, int cmp, T cmp_value)                 \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_wait_until_some", 1, SR_SH_SOME, ivars, nelems, status,       \
                         indices, cmp_value, NULL, 0);                                          \
    }                                                                                           \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status,          \
                                           int cmp, T *cmp_values)                              \
    {                                                                                           \
        SR_SH_RUN(T, #N "_wait_until_all_vector", 1, SR_SH_ALL, ivars, nelems, status, NULL,   \
                  0, cmp_values, 1);                                                            \
    }                                                                                           \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,        \
                                             int cmp, T *cmp_values)                            \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_wait_until_any_vector", 1, SR_SH_ANY, ivars, nelems, status,  \
                         NULL, 0, cmp_values, 1);                                               \
    }                                                                                           \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,         \
                                              const int *status, int cmp, T *cmp_values)        \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_wait_until_some_vector", 1, SR_SH_SOME, ivars, nelems,        \
                         status, indices, 0, cmp_values, 1);                                    \
    }                                                                                           \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                                         \
    {                                                                                           \
        return (int)SR_SH_RUN(T, #N "_test", 0, SR_SH_ALL, ivar, 1, NULL, NULL, cmp_value,     \
                              NULL, 0);                                                         \
    }                                                                                           \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)  \
    {                                                                                           \
        return (int)SR_SH_RUN(T, #N "_test_all", 0, SR_SH_ALL, ivars, nelems, status, NULL,    \
                              cmp_value, NULL, 0);                                              \
    }                                                                                           \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,            \
                                T cmp_value)                                                    \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_test_any", 0, SR_SH_ANY, ivars, nelems, status, NULL,         \
                         cmp_value, NULL, 0);                                                   \
    }                                                                                           \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,   \
                                 int cmp, T cmp_value)                                          \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_test_some", 0, SR_SH_SOME, ivars, nelems, status, indices,    \
                         cmp_value, NULL, 0);                                                   \
    }                                                                                           \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,        \
                                    T *cmp_values)                                              \
    {                                                                                           \
        return (int)SR_SH_RUN(T, #N "_test_all_vector", 0, SR_SH_ALL, ivars, nelems, status,   \
                              NULL, 0, cmp_values, 1);                                          \
    }                                                                                           \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                       T *cmp_values)                                           \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_test_any_vector", 0, SR_SH_ANY, ivars, nelems, status, NULL,  \
                         0, cmp_values, 1);                                                     \
    }                                                                                           \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,               \
                                        const int *status, int cmp, T *cmp_values)              \
    {                                                                                           \
        return SR_SH_RUN(T, #N "_test_some_vector", 0, SR_SH_SOME, ivars, nelems, status,      \
                         indices, 0, cmp_values, 1);                                            \
    }

SHMEM_X_P2P_TYPES(SR_SH_P2P_DEF, ~)

/* ---- deprecated: wait until the value differs ------------------------------------ */

#define SR_SH_WAIT_DEF(N, T, _)                                                                 \
    void shmem_##N##_wait(T *ivar, T cmp_value)                                                 \
    {                                                                                           \
        int cmp = SHMEM_CMP_NE;                                                                 \
        SR_SH_RUN(T, #N "_wait", 1, SR_SH_ALL, ivar, 1, NULL, NULL, cmp_value, NULL, 0);       \
    }

SHMEM_X_OLD_WAIT_TYPES(SR_SH_WAIT_DEF, ~)

/* Parenthesised: shmem.h may make these names type-generic macros. */
void (shmem_wait)(long *ivar, long cmp_value)
{
    int cmp = SHMEM_CMP_NE;
    SR_SH_RUN(long, "wait", 1, SR_SH_ALL, ivar, 1, NULL, NULL, cmp_value, NULL, 0);
}

void (shmem_wait_until)(long *ivar, int cmp, long cmp_value)
{
    SR_SH_RUN(long, "wait_until", 1, SR_SH_ALL, ivar, 1, NULL, NULL, cmp_value, NULL, 0);
}
