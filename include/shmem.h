/*
 * OpenSHMEM 1.6 on symrail.
 *
 * The typed families of the specification (RMA, atomics, point-to-point
 * synchronisation, collectives, reductions) are written once below as
 * X-macro tables, SHMEM_X_*_TYPES(X, ...), each calling X(NAME, TYPE, ...)
 * once a type; the prototypes, the C11 type-generic names and the C++
 * overloads are all generated from the same tables, so they cannot disagree.
 *
 * Handles:
 *   shmem_ctx_t   is the native context (struct symrail_ctx *): one handle
 *                 serves symrail.h and shmem.h; a team context is a native
 *                 context whose `team` field names the team.
 *   shmem_team_t  is the core's team (struct sr_team *).  SHMEM_TEAM_WORLD
 *                 and SHMEM_TEAM_SHARED are the addresses of two objects
 *                 the library defines (src/shmem/team.c):
 *                     struct sr_team shmemx_team_world_obj_;
 *                     struct sr_team shmemx_team_shared_obj_;
 *                 and SHMEM_CTX_DEFAULT is that of symrail_ctx_default.
 *
 * Type-generic names (shmem_put, shmem_atomic_add, shmem_sum_reduce, ...)
 * are macros using _Generic in C11 and overloaded inline functions in C++.
 * Their associations name only the standard C types (char ... long double),
 * never int64_t and the like, which are typedefs of those and would collide;
 * a pointer to a fixed-width type therefore selects the function of the
 * standard type it is.  A type the specification does not list for a name
 * fails to compile (in C as a call of shmemx_generic_type_error_ with too
 * many arguments).
 *
 * Deprecated names are declared with the deprecated attribute; define
 * SHMEMX_NO_DEPRECATION_WARNINGS before including this header to silence it.
 */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library constants ----------------------------------------------------- */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define SHMEM_MAX_NAME_LEN  256
#define SHMEM_VENDOR_STRING "symrail"

#define SHMEM_THREAD_SINGLE     0
#define SHMEM_THREAD_FUNNELED   1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE   3

/* The native values (symrail.h), so they pass through unchanged. */
#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_CTX_SERIALIZED 1L
#define SHMEM_CTX_PRIVATE    2L
#define SHMEM_CTX_NOSTORE    4L

/* Hints of shmem_malloc_with_hints (the allocation is the same either way). */
#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE  (1L << 1)

/* shmem_team_config_t members named in config_mask. */
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* Sessions (hints only: symrail accepts and ignores them). */
#define SHMEM_SESSION_BATCH     (1L << 0)
#define SHMEM_SESSION_TOTAL_OPS (1L << 0)  /* config_mask: total_ops is set */

/* The work arrays of the active-set collectives.  How many of these words a
 * collective uses belongs to the collectives (src/core, src/shmem/coll.c);
 * the sizes leave room for a dissemination barrier and recursive doubling
 * up to 2^64 PEs plus their round counters. */
#define SHMEM_SYNC_VALUE              0L
#define SHMEM_BARRIER_SYNC_SIZE       64
#define SHMEM_BCAST_SYNC_SIZE         64
#define SHMEM_COLLECT_SYNC_SIZE       64
#define SHMEM_ALLTOALL_SYNC_SIZE      64
#define SHMEM_ALLTOALLS_SYNC_SIZE     64
#define SHMEM_REDUCE_SYNC_SIZE        128
#define SHMEM_SYNC_SIZE               128  /* the largest of the above */
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 16

/* The names of OpenSHMEM 1.2 and earlier. */
#define _SHMEM_MAJOR_VERSION           SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION           SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN            SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING           SHMEM_VENDOR_STRING
#define _SHMEM_SYNC_VALUE              SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE       SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE         SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE       SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE        SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

/* ---- handles ----------------------------------------------------------------- */
struct symrail_ctx;
typedef struct symrail_ctx *shmem_ctx_t;
extern struct symrail_ctx symrail_ctx_default;  /* as in symrail.h */
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)&symrail_ctx_default)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)NULL)

struct sr_team;
typedef struct sr_team *shmem_team_t;
/* Defined by the library (src/shmem/team.c); use the macros, not these. */
extern struct sr_team shmemx_team_world_obj_;
extern struct sr_team shmemx_team_shared_obj_;
#define SHMEM_TEAM_WORLD   ((shmem_team_t)&shmemx_team_world_obj_)
#define SHMEM_TEAM_SHARED  ((shmem_team_t)&shmemx_team_shared_obj_)
#define SHMEM_TEAM_INVALID ((shmem_team_t)NULL)

/* num_contexts (with SHMEM_TEAM_NUM_CONTEXTS in the mask) is how many
 * contexts shmem_team_create_ctx makes for the team at a time; a split
 * team without it gets none (OpenSHMEM 1.6), the predefined teams any. */
typedef struct {
    int num_contexts;
} shmem_team_config_t;

typedef struct {
    long total_ops;
} shmem_session_config_t;

#ifdef __cplusplus
#define SHMEMX_COMPLEXF __complex__ float
#define SHMEMX_COMPLEXD __complex__ double
#else
#define SHMEMX_COMPLEXF float _Complex
#define SHMEMX_COMPLEXD double _Complex
#endif

#if defined(__GNUC__) && !defined(SHMEMX_NO_DEPRECATION_WARNINGS)
#define SHMEMX_DEPRECATED __attribute__((deprecated))
#else
#define SHMEMX_DEPRECATED
#endif
#if defined(__GNUC__)
#define SHMEMX_NORETURN __attribute__((noreturn))
#else
#define SHMEMX_NORETURN
#endif

/* ---- type tables -------------------------------------------------------------- */
/* The standard C types of the RMA table (those _Generic may name). */
#define SHMEM_X_RMA_STD_TYPES(X, ...)                                                   \
    X(float, float, __VA_ARGS__) X(double, double, __VA_ARGS__)                        \
    X(longdouble, long double, __VA_ARGS__) X(char, char, __VA_ARGS__)                 \
    X(schar, signed char, __VA_ARGS__) X(short, short, __VA_ARGS__)                    \
    X(int, int, __VA_ARGS__) X(long, long, __VA_ARGS__)                                \
    X(longlong, long long, __VA_ARGS__) X(uchar, unsigned char, __VA_ARGS__)           \
    X(ushort, unsigned short, __VA_ARGS__) X(uint, unsigned int, __VA_ARGS__)          \
    X(ulong, unsigned long, __VA_ARGS__) X(ulonglong, unsigned long long, __VA_ARGS__)
#define SHMEM_X_FIXED_TYPES(X, ...)                                                     \
    X(int8, int8_t, __VA_ARGS__) X(int16, int16_t, __VA_ARGS__)                        \
    X(int32, int32_t, __VA_ARGS__) X(int64, int64_t, __VA_ARGS__)                      \
    X(uint8, uint8_t, __VA_ARGS__) X(uint16, uint16_t, __VA_ARGS__)                    \
    X(uint32, uint32_t, __VA_ARGS__) X(uint64, uint64_t, __VA_ARGS__)
/* Table 'Standard RMA Types'. */
#define SHMEM_X_RMA_TYPES(X, ...)                                                       \
    SHMEM_X_RMA_STD_TYPES(X, __VA_ARGS__) SHMEM_X_FIXED_TYPES(X, __VA_ARGS__)          \
    X(size, size_t, __VA_ARGS__) X(ptrdiff, ptrdiff_t, __VA_ARGS__)
/* Sizes of putSIZE, getSIZE, iputSIZE ... (bits). */
#define SHMEM_X_SIZES(X, ...) X(8, __VA_ARGS__) X(16, __VA_ARGS__) X(32, __VA_ARGS__)       \
    X(64, __VA_ARGS__) X(128, __VA_ARGS__)

/* Standard AMO types: fetch_inc, inc, fetch_add, add, compare_swap. */
#define SHMEM_X_AMO_STD_GTYPES(X, ...)                                                  \
    X(int, int, __VA_ARGS__) X(long, long, __VA_ARGS__)                                \
    X(longlong, long long, __VA_ARGS__) X(uint, unsigned int, __VA_ARGS__)             \
    X(ulong, unsigned long, __VA_ARGS__) X(ulonglong, unsigned long long, __VA_ARGS__)
#define SHMEM_X_AMO_STD_TYPES(X, ...)                                                   \
    SHMEM_X_AMO_STD_GTYPES(X, __VA_ARGS__)                                             \
    X(int32, int32_t, __VA_ARGS__) X(int64, int64_t, __VA_ARGS__)                      \
    X(uint32, uint32_t, __VA_ARGS__) X(uint64, uint64_t, __VA_ARGS__)                  \
    X(size, size_t, __VA_ARGS__) X(ptrdiff, ptrdiff_t, __VA_ARGS__)
/* Extended AMO types: fetch, set, swap. */
#define SHMEM_X_AMO_EXT_GTYPES(X, ...)                                                  \
    X(float, float, __VA_ARGS__) X(double, double, __VA_ARGS__)                        \
    SHMEM_X_AMO_STD_GTYPES(X, __VA_ARGS__)
#define SHMEM_X_AMO_EXT_TYPES(X, ...)                                                   \
    X(float, float, __VA_ARGS__) X(double, double, __VA_ARGS__)                        \
    SHMEM_X_AMO_STD_TYPES(X, __VA_ARGS__)
/* Bitwise AMO types: fetch_and/or/xor, and/or/xor.  The generic names map
 * int and long onto int32/int64 where those are the same width. */
#define SHMEM_X_AMO_BIT_UGTYPES(X, ...)                                                 \
    X(uint, unsigned int, __VA_ARGS__) X(ulong, unsigned long, __VA_ARGS__)            \
    X(ulonglong, unsigned long long, __VA_ARGS__)
#define SHMEM_X_AMO_BIT_TYPES(X, ...)                                                   \
    SHMEM_X_AMO_BIT_UGTYPES(X, __VA_ARGS__)                                            \
    X(int32, int32_t, __VA_ARGS__) X(int64, int64_t, __VA_ARGS__)                      \
    X(uint32, uint32_t, __VA_ARGS__) X(uint64, uint64_t, __VA_ARGS__)
#if INT_MAX == 2147483647
#define SHMEM_X_AMO_BIT_INT_(X, ...) X(int32, int, __VA_ARGS__)
#else
#define SHMEM_X_AMO_BIT_INT_(X, ...)
#endif
#if LONG_MAX == 9223372036854775807L
#define SHMEM_X_AMO_BIT_LONG_(X, ...) X(int64, long, __VA_ARGS__)
#else
#define SHMEM_X_AMO_BIT_LONG_(X, ...)
#endif
#define SHMEM_X_AMO_BIT_GTYPES(X, ...)                                                  \
    SHMEM_X_AMO_BIT_UGTYPES(X, __VA_ARGS__) SHMEM_X_AMO_BIT_INT_(X, __VA_ARGS__)       \
    SHMEM_X_AMO_BIT_LONG_(X, __VA_ARGS__)

/* Point-to-point synchronisation types: wait_until*, test*. */
#define SHMEM_X_P2P_GTYPES(X, ...)                                                      \
    X(short, short, __VA_ARGS__) X(int, int, __VA_ARGS__) X(long, long, __VA_ARGS__)  \
    X(longlong, long long, __VA_ARGS__) X(ushort, unsigned short, __VA_ARGS__)         \
    X(uint, unsigned int, __VA_ARGS__) X(ulong, unsigned long, __VA_ARGS__)            \
    X(ulonglong, unsigned long long, __VA_ARGS__)
#define SHMEM_X_P2P_TYPES(X, ...)                                                       \
    SHMEM_X_P2P_GTYPES(X, __VA_ARGS__)                                                 \
    X(int32, int32_t, __VA_ARGS__) X(int64, int64_t, __VA_ARGS__)                      \
    X(uint32, uint32_t, __VA_ARGS__) X(uint64, uint64_t, __VA_ARGS__)                  \
    X(size, size_t, __VA_ARGS__) X(ptrdiff, ptrdiff_t, __VA_ARGS__)

/* Team reductions (table 'Reduction Types, Names and Supporting Operations'). */
#define SHMEM_X_RED_BIT_GTYPES(X, ...)                                                  \
    X(uchar, unsigned char, __VA_ARGS__) X(ushort, unsigned short, __VA_ARGS__)        \
    X(uint, unsigned int, __VA_ARGS__) X(ulong, unsigned long, __VA_ARGS__)            \
    X(ulonglong, unsigned long long, __VA_ARGS__)
#define SHMEM_X_RED_BIT_TYPES(X, ...)                                                   \
    SHMEM_X_RED_BIT_GTYPES(X, __VA_ARGS__) SHMEM_X_FIXED_TYPES(X, __VA_ARGS__)         \
    X(size, size_t, __VA_ARGS__)
#define SHMEM_X_RED_MINMAX_GTYPES(X, ...)                                               \
    X(char, char, __VA_ARGS__) X(schar, signed char, __VA_ARGS__)                      \
    X(short, short, __VA_ARGS__) X(int, int, __VA_ARGS__) X(long, long, __VA_ARGS__)  \
    X(longlong, long long, __VA_ARGS__) SHMEM_X_RED_BIT_GTYPES(X, __VA_ARGS__)         \
    X(float, float, __VA_ARGS__) X(double, double, __VA_ARGS__)                        \
    X(longdouble, long double, __VA_ARGS__)
#define SHMEM_X_RED_MINMAX_TYPES(X, ...)                                                \
    SHMEM_X_RED_MINMAX_GTYPES(X, __VA_ARGS__) X(ptrdiff, ptrdiff_t, __VA_ARGS__)       \
    SHMEM_X_FIXED_TYPES(X, __VA_ARGS__) X(size, size_t, __VA_ARGS__)
#define SHMEM_X_RED_SUMPROD_GTYPES(X, ...)                                              \
    SHMEM_X_RED_MINMAX_GTYPES(X, __VA_ARGS__) X(complexd, SHMEMX_COMPLEXD, __VA_ARGS__) \
    X(complexf, SHMEMX_COMPLEXF, __VA_ARGS__)
#define SHMEM_X_RED_SUMPROD_TYPES(X, ...)                                               \
    SHMEM_X_RED_MINMAX_TYPES(X, __VA_ARGS__) X(complexd, SHMEMX_COMPLEXD, __VA_ARGS__)  \
    X(complexf, SHMEMX_COMPLEXF, __VA_ARGS__)
/* Operators over each of the three tables: X(OP, TABLE, ...). */
#define SHMEM_X_RED_OPS(X, ...)                                                         \
    X(and, SHMEM_X_RED_BIT_TYPES, __VA_ARGS__) X(or, SHMEM_X_RED_BIT_TYPES, __VA_ARGS__) \
    X(xor, SHMEM_X_RED_BIT_TYPES, __VA_ARGS__)                                         \
    X(min, SHMEM_X_RED_MINMAX_TYPES, __VA_ARGS__)                                      \
    X(max, SHMEM_X_RED_MINMAX_TYPES, __VA_ARGS__)                                      \
    X(sum, SHMEM_X_RED_SUMPROD_TYPES, __VA_ARGS__)                                     \
    X(prod, SHMEM_X_RED_SUMPROD_TYPES, __VA_ARGS__)

/* The active-set reductions (shmem_TYPE_OP_to_all). */
#define SHMEM_X_TOALL_BIT_TYPES(X, ...)                                                 \
    X(short, short, __VA_ARGS__) X(int, int, __VA_ARGS__) X(long, long, __VA_ARGS__)  \
    X(longlong, long long, __VA_ARGS__)
#define SHMEM_X_TOALL_MINMAX_TYPES(X, ...)                                              \
    SHMEM_X_TOALL_BIT_TYPES(X, __VA_ARGS__) X(float, float, __VA_ARGS__)               \
    X(double, double, __VA_ARGS__) X(longdouble, long double, __VA_ARGS__)
#define SHMEM_X_TOALL_SUMPROD_TYPES(X, ...)                                             \
    SHMEM_X_TOALL_MINMAX_TYPES(X, __VA_ARGS__)                                         \
    X(complexf, SHMEMX_COMPLEXF, __VA_ARGS__) X(complexd, SHMEMX_COMPLEXD, __VA_ARGS__)
#define SHMEM_X_TOALL_OPS(X, ...)                                                       \
    X(and, SHMEM_X_TOALL_BIT_TYPES, __VA_ARGS__)                                       \
    X(or, SHMEM_X_TOALL_BIT_TYPES, __VA_ARGS__)                                        \
    X(xor, SHMEM_X_TOALL_BIT_TYPES, __VA_ARGS__)                                       \
    X(min, SHMEM_X_TOALL_MINMAX_TYPES, __VA_ARGS__)                                    \
    X(max, SHMEM_X_TOALL_MINMAX_TYPES, __VA_ARGS__)                                    \
    X(sum, SHMEM_X_TOALL_SUMPROD_TYPES, __VA_ARGS__)                                   \
    X(prod, SHMEM_X_TOALL_SUMPROD_TYPES, __VA_ARGS__)

/* The deprecated atomics of OpenSHMEM 1.3 and earlier. */
#define SHMEM_X_OLD_AMO_TYPES(X, ...)                                                   \
    X(int, int, __VA_ARGS__) X(long, long, __VA_ARGS__) X(longlong, long long, __VA_ARGS__)
#define SHMEM_X_OLD_AMO_EXT_TYPES(X, ...)                                               \
    SHMEM_X_OLD_AMO_TYPES(X, __VA_ARGS__) X(float, float, __VA_ARGS__)                 \
    X(double, double, __VA_ARGS__)
#define SHMEM_X_OLD_WAIT_TYPES(X, ...)                                                  \
    X(short, short, __VA_ARGS__) SHMEM_X_OLD_AMO_TYPES(X, __VA_ARGS__)

/* ---- setup, exit, query ------------------------------------------------------- */
void shmem_init(void);
int  shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
/* *initialized: 1 between an initialization and its finalize, else 0. */
int  shmem_query_initialized(int *initialized);
void shmem_finalize(void);
SHMEMX_NORETURN void shmem_global_exit(int status);
int  shmem_my_pe(void);
int  shmem_n_pes(void);
int  shmem_pe_accessible(int pe);
int  shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);

SHMEMX_DEPRECATED void start_pes(int npes);
SHMEMX_DEPRECATED int _my_pe(void);
SHMEMX_DEPRECATED int _num_pes(void);
/* Cache management of the Cray SHMEM era: no-ops. */
SHMEMX_DEPRECATED void shmem_clear_cache_inv(void);
SHMEMX_DEPRECATED void shmem_set_cache_inv(void);
SHMEMX_DEPRECATED void shmem_clear_cache_line_inv(void *dest);
SHMEMX_DEPRECATED void shmem_set_cache_line_inv(void *dest);
SHMEMX_DEPRECATED void shmem_udcflush(void);
SHMEMX_DEPRECATED void shmem_udcflush_line(void *dest);

/* ---- memory --------------------------------------------------------------------- */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void  shmem_free(void *ptr);
void *shmem_malloc_with_hints(size_t size, long hints);
SHMEMX_DEPRECATED void *shmalloc(size_t size);
SHMEMX_DEPRECATED void *shmemalign(size_t alignment, size_t size);
SHMEMX_DEPRECATED void *shrealloc(void *ptr, size_t size);
SHMEMX_DEPRECATED void  shfree(void *ptr);

/* ---- contexts and sessions ------------------------------------------------------ */
int  shmem_ctx_create(long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int  shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
int  shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
/* Hints; symrail applies none of them (operations behave the same). */
void shmem_session_start(shmem_ctx_t ctx, long options, const shmem_session_config_t *config,
                         long config_mask);
void shmem_session_stop(shmem_ctx_t ctx);
void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                             const shmem_session_config_t *config, long config_mask);
void shmem_ctx_session_stop(shmem_ctx_t ctx);

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

/* ---- atomics ---------------------------------------------------------------------------- */
/* Each shape declares the blocking call and its context form. */
#define SHMEMX_D_AMO_FETCH_(N, T, OP)                                                   \
    T shmem_##N##_##OP(const T *source, int pe);                                       \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, const T *source, int pe);
#define SHMEMX_D_AMO_SET_(N, T, OP)                                                     \
    void shmem_##N##_##OP(T *dest, T value, int pe);                                   \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);
#define SHMEMX_D_AMO_FOP_(N, T, OP)                                                     \
    T shmem_##N##_##OP(T *dest, T value, int pe);                                      \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);
#define SHMEMX_D_AMO_CSWAP_(N, T, OP)                                                   \
    T shmem_##N##_##OP(T *dest, T cond, T value, int pe);                              \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T cond, T value, int pe);
#define SHMEMX_D_AMO_FINC_(N, T, OP)                                                    \
    T shmem_##N##_##OP(T *dest, int pe);                                               \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, int pe);
#define SHMEMX_D_AMO_INC_(N, T, OP)                                                     \
    void shmem_##N##_##OP(T *dest, int pe);                                            \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, int pe);
/* The non-blocking fetching forms return the old value through `fetch`. */
#define SHMEMX_D_AMO_FETCH_NBI_(N, T, OP)                                               \
    void shmem_##N##_##OP(T *fetch, const T *source, int pe);                          \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, const T *source, int pe);
#define SHMEMX_D_AMO_FOP_NBI_(N, T, OP)                                                 \
    void shmem_##N##_##OP(T *fetch, T *dest, T value, int pe);                         \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
#define SHMEMX_D_AMO_CSWAP_NBI_(N, T, OP)                                               \
    void shmem_##N##_##OP(T *fetch, T *dest, T cond, T value, int pe);                 \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe);
#define SHMEMX_D_AMO_FINC_NBI_(N, T, OP)                                                \
    void shmem_##N##_##OP(T *fetch, T *dest, int pe);                                  \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, int pe);

/* X(SHAPE, TABLE, OP, GENERIC-TABLE): every atomic, once. */
#define SHMEM_X_AMO_OPS(X)                                                              \
    X(FETCH, SHMEM_X_AMO_EXT_TYPES, atomic_fetch, SHMEM_X_AMO_EXT_GTYPES)              \
    X(SET, SHMEM_X_AMO_EXT_TYPES, atomic_set, SHMEM_X_AMO_EXT_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_EXT_TYPES, atomic_swap, SHMEM_X_AMO_EXT_GTYPES)                 \
    X(CSWAP, SHMEM_X_AMO_STD_TYPES, atomic_compare_swap, SHMEM_X_AMO_STD_GTYPES)       \
    X(FINC, SHMEM_X_AMO_STD_TYPES, atomic_fetch_inc, SHMEM_X_AMO_STD_GTYPES)           \
    X(INC, SHMEM_X_AMO_STD_TYPES, atomic_inc, SHMEM_X_AMO_STD_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_STD_TYPES, atomic_fetch_add, SHMEM_X_AMO_STD_GTYPES)            \
    X(SET, SHMEM_X_AMO_STD_TYPES, atomic_add, SHMEM_X_AMO_STD_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_and, SHMEM_X_AMO_BIT_GTYPES)            \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_and, SHMEM_X_AMO_BIT_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_or, SHMEM_X_AMO_BIT_GTYPES)             \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_or, SHMEM_X_AMO_BIT_GTYPES)                   \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_xor, SHMEM_X_AMO_BIT_GTYPES)            \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_xor, SHMEM_X_AMO_BIT_GTYPES)                  \
    X(FETCH_NBI, SHMEM_X_AMO_EXT_TYPES, atomic_fetch_nbi, SHMEM_X_AMO_EXT_GTYPES)      \
    X(FOP_NBI, SHMEM_X_AMO_EXT_TYPES, atomic_swap_nbi, SHMEM_X_AMO_EXT_GTYPES)         \
    X(CSWAP_NBI, SHMEM_X_AMO_STD_TYPES, atomic_compare_swap_nbi, SHMEM_X_AMO_STD_GTYPES) \
    X(FINC_NBI, SHMEM_X_AMO_STD_TYPES, atomic_fetch_inc_nbi, SHMEM_X_AMO_STD_GTYPES)   \
    X(FOP_NBI, SHMEM_X_AMO_STD_TYPES, atomic_fetch_add_nbi, SHMEM_X_AMO_STD_GTYPES)    \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_and_nbi, SHMEM_X_AMO_BIT_GTYPES)    \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_or_nbi, SHMEM_X_AMO_BIT_GTYPES)     \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_xor_nbi, SHMEM_X_AMO_BIT_GTYPES)
#define SHMEMX_D_AMO_(SHAPE, TAB, OP, GTAB) TAB(SHMEMX_D_AMO_##SHAPE##_, OP)
SHMEM_X_AMO_OPS(SHMEMX_D_AMO_)

/* Deprecated atomics (no context forms). */
#define SHMEMX_D_OLD_AMO_(N, T, _)                                                      \
    SHMEMX_DEPRECATED T shmem_##N##_cswap(T *dest, T cond, T value, int pe);           \
    SHMEMX_DEPRECATED T shmem_##N##_finc(T *dest, int pe);                             \
    SHMEMX_DEPRECATED void shmem_##N##_inc(T *dest, int pe);                           \
    SHMEMX_DEPRECATED T shmem_##N##_fadd(T *dest, T value, int pe);                    \
    SHMEMX_DEPRECATED void shmem_##N##_add(T *dest, T value, int pe);
#define SHMEMX_D_OLD_AMO_EXT_(N, T, _)                                                  \
    SHMEMX_DEPRECATED T shmem_##N##_fetch(const T *source, int pe);                    \
    SHMEMX_DEPRECATED void shmem_##N##_set(T *dest, T value, int pe);                  \
    SHMEMX_DEPRECATED T shmem_##N##_swap(T *dest, T value, int pe);
SHMEM_X_OLD_AMO_TYPES(SHMEMX_D_OLD_AMO_, ~)
SHMEM_X_OLD_AMO_EXT_TYPES(SHMEMX_D_OLD_AMO_EXT_, ~)

/* ---- ordering -------------------------------------------------------------------------- */
void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);

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

/* Never defined: a type-generic call with a type the specification does not
 * list selects it and fails to compile. */
void shmemx_generic_type_error_(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- type-generic names ---------------------------------------------------------------- */
/* The first and second arguments of a call (the trailing 0 keeps `...` non-empty). */
#define SHMEMX_A1_(a, ...) a
#define SHMEMX_A2_(a, b, ...) b

#if defined(__cplusplus)

/* One overload a type and a context form, from the same tables. */
#define SHMEMX_CXX_RMA_(N, T, OP)                                                       \
    inline void shmem_##OP(T *d, const T *s, size_t n, int pe) { shmem_##N##_##OP(d, s, n, pe); } \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, size_t n, int pe)          \
    { shmem_ctx_##N##_##OP(c, d, s, n, pe); }
#define SHMEMX_CXX_IRMA_(N, T, OP)                                                      \
    inline void shmem_##OP(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) \
    { shmem_##N##_##OP(d, s, dst, sst, n, pe); }                                       \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t n, int pe)                                           \
    { shmem_ctx_##N##_##OP(c, d, s, dst, sst, n, pe); }
#define SHMEMX_CXX_IBRMA_(N, T, OP)                                                     \
    inline void shmem_##OP(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b,   \
                           size_t nb, int pe)                                          \
    { shmem_##N##_##OP(d, s, dst, sst, b, nb, pe); }                                   \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t b, size_t nb, int pe)                                \
    { shmem_ctx_##N##_##OP(c, d, s, dst, sst, b, nb, pe); }
#define SHMEMX_CXX_P_(N, T, _)                                                          \
    inline void shmem_p(T *d, T v, int pe) { shmem_##N##_p(d, v, pe); }                \
    inline void shmem_p(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_p(c, d, v, pe); } \
    inline T shmem_g(const T *s, int pe) { return shmem_##N##_g(s, pe); }              \
    inline T shmem_g(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_g(c, s, pe); }
#define SHMEMX_CXX_PUTSIG_(N, T, OP)                                                    \
    inline void shmem_##OP(T *d, const T *s, size_t n, uint64_t *sa, uint64_t sv, int so, \
                           int pe)                                                     \
    { shmem_##N##_##OP(d, s, n, sa, sv, so, pe); }                                     \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sa,    \
                           uint64_t sv, int so, int pe)                                \
    { shmem_ctx_##N##_##OP(c, d, s, n, sa, sv, so, pe); }
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, put)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, get)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, put_nbi)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, get_nbi)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IRMA_, iput)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IRMA_, iget)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IBRMA_, ibput)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IBRMA_, ibget)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_P_, ~)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_PUTSIG_, put_signal)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_PUTSIG_, put_signal_nbi)

#define SHMEMX_CXX_AMO_FETCH_(N, T, OP)                                                 \
    inline T shmem_##OP(const T *s, int pe) { return shmem_##N##_##OP(s, pe); }        \
    inline T shmem_##OP(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_##OP(c, s, pe); }
#define SHMEMX_CXX_AMO_SET_(N, T, OP)                                                   \
    inline void shmem_##OP(T *d, T v, int pe) { shmem_##N##_##OP(d, v, pe); }          \
    inline void shmem_##OP(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_##OP(c, d, v, pe); }
#define SHMEMX_CXX_AMO_FOP_(N, T, OP)                                                   \
    inline T shmem_##OP(T *d, T v, int pe) { return shmem_##N##_##OP(d, v, pe); }      \
    inline T shmem_##OP(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_##OP(c, d, v, pe); }
#define SHMEMX_CXX_AMO_CSWAP_(N, T, OP)                                                 \
    inline T shmem_##OP(T *d, T k, T v, int pe) { return shmem_##N##_##OP(d, k, v, pe); } \
    inline T shmem_##OP(shmem_ctx_t c, T *d, T k, T v, int pe)                         \
    { return shmem_ctx_##N##_##OP(c, d, k, v, pe); }
#define SHMEMX_CXX_AMO_FINC_(N, T, OP)                                                  \
    inline T shmem_##OP(T *d, int pe) { return shmem_##N##_##OP(d, pe); }              \
    inline T shmem_##OP(shmem_ctx_t c, T *d, int pe) { return shmem_ctx_##N##_##OP(c, d, pe); }
#define SHMEMX_CXX_AMO_INC_(N, T, OP)                                                   \
    inline void shmem_##OP(T *d, int pe) { shmem_##N##_##OP(d, pe); }                  \
    inline void shmem_##OP(shmem_ctx_t c, T *d, int pe) { shmem_ctx_##N##_##OP(c, d, pe); }
#define SHMEMX_CXX_AMO_FETCH_NBI_(N, T, OP)                                             \
    inline void shmem_##OP(T *f, const T *s, int pe) { shmem_##N##_##OP(f, s, pe); }   \
    inline void shmem_##OP(shmem_ctx_t c, T *f, const T *s, int pe)                    \
    { shmem_ctx_##N##_##OP(c, f, s, pe); }
#define SHMEMX_CXX_AMO_FOP_NBI_(N, T, OP)                                               \
    inline void shmem_##OP(T *f, T *d, T v, int pe) { shmem_##N##_##OP(f, d, v, pe); } \
    inline void shmem_##OP(shmem_ctx_t c, T *f, T *d, T v, int pe)                     \
    { shmem_ctx_##N##_##OP(c, f, d, v, pe); }
#define SHMEMX_CXX_AMO_CSWAP_NBI_(N, T, OP)                                             \
    inline void shmem_##OP(T *f, T *d, T k, T v, int pe) { shmem_##N##_##OP(f, d, k, v, pe); } \
    inline void shmem_##OP(shmem_ctx_t c, T *f, T *d, T k, T v, int pe)                \
    { shmem_ctx_##N##_##OP(c, f, d, k, v, pe); }
#define SHMEMX_CXX_AMO_FINC_NBI_(N, T, OP)                                              \
    inline void shmem_##OP(T *f, T *d, int pe) { shmem_##N##_##OP(f, d, pe); }         \
    inline void shmem_##OP(shmem_ctx_t c, T *f, T *d, int pe) { shmem_ctx_##N##_##OP(c, f, d, pe); }
#define SHMEMX_CXX_AMO_(SHAPE, TAB, OP, GTAB) GTAB(SHMEMX_CXX_AMO_##SHAPE##_, OP)
SHMEM_X_AMO_OPS(SHMEMX_CXX_AMO_)

#define SHMEMX_CXX_P2P_(N, T, _)                                                        \
    inline void shmem_wait_until(T *v, int c, T x) { shmem_##N##_wait_until(v, c, x); } \
    inline void shmem_wait_until_all(T *v, size_t n, const int *st, int c, T x)        \
    { shmem_##N##_wait_until_all(v, n, st, c, x); }                                    \
    inline size_t shmem_wait_until_any(T *v, size_t n, const int *st, int c, T x)      \
    { return shmem_##N##_wait_until_any(v, n, st, c, x); }                             \
    inline size_t shmem_wait_until_some(T *v, size_t n, size_t *ix, const int *st, int c, T x) \
    { return shmem_##N##_wait_until_some(v, n, ix, st, c, x); }                        \
    inline void shmem_wait_until_all_vector(T *v, size_t n, const int *st, int c, T *x) \
    { shmem_##N##_wait_until_all_vector(v, n, st, c, x); }                             \
    inline size_t shmem_wait_until_any_vector(T *v, size_t n, const int *st, int c, T *x) \
    { return shmem_##N##_wait_until_any_vector(v, n, st, c, x); }                      \
    inline size_t shmem_wait_until_some_vector(T *v, size_t n, size_t *ix, const int *st, \
                                               int c, T *x)                            \
    { return shmem_##N##_wait_until_some_vector(v, n, ix, st, c, x); }                 \
    inline int shmem_test(T *v, int c, T x) { return shmem_##N##_test(v, c, x); }      \
    inline int shmem_test_all(T *v, size_t n, const int *st, int c, T x)               \
    { return shmem_##N##_test_all(v, n, st, c, x); }                                   \
    inline size_t shmem_test_any(T *v, size_t n, const int *st, int c, T x)            \
    { return shmem_##N##_test_any(v, n, st, c, x); }                                   \
    inline size_t shmem_test_some(T *v, size_t n, size_t *ix, const int *st, int c, T x) \
    { return shmem_##N##_test_some(v, n, ix, st, c, x); }                              \
    inline int shmem_test_all_vector(T *v, size_t n, const int *st, int c, T *x)       \
    { return shmem_##N##_test_all_vector(v, n, st, c, x); }                            \
    inline size_t shmem_test_any_vector(T *v, size_t n, const int *st, int c, T *x)    \
    { return shmem_##N##_test_any_vector(v, n, st, c, x); }                            \
    inline size_t shmem_test_some_vector(T *v, size_t n, size_t *ix, const int *st, int c, \
                                         T *x)                                         \
    { return shmem_##N##_test_some_vector(v, n, ix, st, c, x); }
SHMEM_X_P2P_GTYPES(SHMEMX_CXX_P2P_, ~)

#define SHMEMX_CXX_COLL_(N, T, _)                                                       \
    inline int shmem_broadcast(shmem_team_t t, T *d, const T *s, size_t n, int root)   \
    { return shmem_##N##_broadcast(t, d, s, n, root); }                                \
    inline int shmem_collect(shmem_team_t t, T *d, const T *s, size_t n)               \
    { return shmem_##N##_collect(t, d, s, n); }                                        \
    inline int shmem_fcollect(shmem_team_t t, T *d, const T *s, size_t n)              \
    { return shmem_##N##_fcollect(t, d, s, n); }                                       \
    inline int shmem_alltoall(shmem_team_t t, T *d, const T *s, size_t n)              \
    { return shmem_##N##_alltoall(t, d, s, n); }                                       \
    inline int shmem_alltoalls(shmem_team_t t, T *d, const T *s, ptrdiff_t dst,        \
                               ptrdiff_t sst, size_t n)                                \
    { return shmem_##N##_alltoalls(t, d, s, dst, sst, n); }
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_COLL_, ~)

#define SHMEMX_CXX_RED_T_(N, T, OP)                                                     \
    inline int shmem_##OP##_reduce(shmem_team_t t, T *d, const T *s, size_t n)         \
    { return shmem_##N##_##OP##_reduce(t, d, s, n); }
#define SHMEMX_CXX_SCAN_T_(N, T, _)                                                     \
    inline int shmem_sum_inscan(shmem_team_t t, T *d, const T *s, size_t n)            \
    { return shmem_##N##_sum_inscan(t, d, s, n); }                                     \
    inline int shmem_sum_exscan(shmem_team_t t, T *d, const T *s, size_t n)            \
    { return shmem_##N##_sum_exscan(t, d, s, n); }
SHMEM_X_RED_BIT_GTYPES(SHMEMX_CXX_RED_T_, and)
SHMEM_X_RED_BIT_GTYPES(SHMEMX_CXX_RED_T_, or)
SHMEM_X_RED_BIT_GTYPES(SHMEMX_CXX_RED_T_, xor)
SHMEM_X_RED_MINMAX_GTYPES(SHMEMX_CXX_RED_T_, min)
SHMEM_X_RED_MINMAX_GTYPES(SHMEMX_CXX_RED_T_, max)
SHMEM_X_RED_SUMPROD_GTYPES(SHMEMX_CXX_RED_T_, sum)
SHMEM_X_RED_SUMPROD_GTYPES(SHMEMX_CXX_RED_T_, prod)
SHMEM_X_RED_SUMPROD_GTYPES(SHMEMX_CXX_SCAN_T_, ~)

/* Deprecated generic names of 1.3 and 1.4. */
#define SHMEMX_CXX_OLD_T_(N, T, _)                                                      \
    SHMEMX_DEPRECATED inline T shmem_cswap(T *d, T k, T v, int pe) { return shmem_##N##_atomic_compare_swap(d, k, v, pe); } \
    SHMEMX_DEPRECATED inline T shmem_finc(T *d, int pe) { return shmem_##N##_atomic_fetch_inc(d, pe); } \
    SHMEMX_DEPRECATED inline void shmem_inc(T *d, int pe) { shmem_##N##_atomic_inc(d, pe); } \
    SHMEMX_DEPRECATED inline T shmem_fadd(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_add(d, v, pe); } \
    SHMEMX_DEPRECATED inline void shmem_add(T *d, T v, int pe) { shmem_##N##_atomic_add(d, v, pe); }
#define SHMEMX_CXX_OLD_EXT_T_(N, T, _)                                                  \
    SHMEMX_DEPRECATED inline T shmem_fetch(const T *s, int pe) { return shmem_##N##_atomic_fetch(s, pe); } \
    SHMEMX_DEPRECATED inline void shmem_set(T *d, T v, int pe) { shmem_##N##_atomic_set(d, v, pe); }
#define SHMEMX_CXX_OLD_SWAP_T_(N, T, _)                                                 \
    SHMEMX_DEPRECATED inline T shmem_swap(T *d, T v, int pe) { return shmem_##N##_atomic_swap(d, v, pe); }
#define SHMEMX_CXX_OLD_WAIT_T_(N, T, _)                                                 \
    SHMEMX_DEPRECATED inline void shmem_wait(T *v, T x) { shmem_##N##_wait_until(v, SHMEM_CMP_NE, x); }
SHMEM_X_OLD_AMO_TYPES(SHMEMX_CXX_OLD_T_, ~)
SHMEM_X_OLD_AMO_EXT_TYPES(SHMEMX_CXX_OLD_EXT_T_, ~)
SHMEM_X_OLD_AMO_EXT_TYPES(SHMEMX_CXX_OLD_SWAP_T_, ~)
SHMEM_X_OLD_WAIT_TYPES(SHMEMX_CXX_OLD_WAIT_T_, ~)

#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* Each association names T * and const T *; anything else selects the
 * never-defined error function. */
#define SHMEMX_GA_(N, T, PRE, OP) T *: shmem_##PRE##N##_##OP, const T *: shmem_##PRE##N##_##OP,
#define SHMEMX_GSEL_(TAB, P, PRE, OP)                                                   \
    _Generic((P), TAB(SHMEMX_GA_, PRE, OP) default: shmemx_generic_type_error_)
/* A call whose first argument may be a context. */
#define SHMEMX_GCTX_(TAB, OP, ...)                                                      \
    _Generic(SHMEMX_A1_(__VA_ARGS__, 0),                                               \
             shmem_ctx_t: SHMEMX_GSEL_(TAB, SHMEMX_A2_(__VA_ARGS__, 0), ctx_, OP),     \
             default: SHMEMX_GSEL_(TAB, SHMEMX_A1_(__VA_ARGS__, 0), , OP))(__VA_ARGS__)
/* Calls typed by their first, or (after a team) second, argument. */
#define SHMEMX_G1_(TAB, OP, ...) SHMEMX_GSEL_(TAB, SHMEMX_A1_(__VA_ARGS__, 0), , OP)(__VA_ARGS__)
#define SHMEMX_G2_(TAB, OP, ...) SHMEMX_GSEL_(TAB, SHMEMX_A2_(__VA_ARGS__, 0), , OP)(__VA_ARGS__)

#define shmem_put(...)            SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put, __VA_ARGS__)
#define shmem_get(...)            SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, get, __VA_ARGS__)
#define shmem_put_nbi(...)        SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...)        SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, get_nbi, __VA_ARGS__)
#define shmem_iput(...)           SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, iput, __VA_ARGS__)
#define shmem_iget(...)           SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, iget, __VA_ARGS__)
#define shmem_ibput(...)          SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, ibput, __VA_ARGS__)
#define shmem_ibget(...)          SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, ibget, __VA_ARGS__)
#define shmem_p(...)              SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, p, __VA_ARGS__)
#define shmem_g(...)              SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, g, __VA_ARGS__)
#define shmem_put_signal(...)     SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put_signal_nbi, __VA_ARGS__)

#define shmem_atomic_fetch(...)        SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...)          SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...)         SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...)    SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...)          SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...)    SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...)          SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_and(...)    SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...)          SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...)     SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...)           SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...)    SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...)          SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...)    SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...)     SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
    SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...)  SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_xor_nbi, __VA_ARGS__)

#define shmem_wait_until(...)            SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until, __VA_ARGS__)
#define shmem_wait_until_all(...)        SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...)        SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...)       SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...) SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...) SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...) \
    SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_some_vector, __VA_ARGS__)
#define shmem_test(...)             SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test, __VA_ARGS__)
#define shmem_test_all(...)         SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_all, __VA_ARGS__)
#define shmem_test_any(...)         SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_any, __VA_ARGS__)
#define shmem_test_some(...)        SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_some, __VA_ARGS__)
#define shmem_test_all_vector(...)  SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...)  SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...) SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_some_vector, __VA_ARGS__)

#define shmem_broadcast(...) SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, broadcast, __VA_ARGS__)
#define shmem_collect(...)   SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, collect, __VA_ARGS__)
#define shmem_fcollect(...)  SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, fcollect, __VA_ARGS__)
#define shmem_alltoall(...)  SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, alltoalls, __VA_ARGS__)

#define shmem_and_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_BIT_GTYPES, and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...)   SHMEMX_G2_(SHMEM_X_RED_BIT_GTYPES, or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_BIT_GTYPES, xor_reduce, __VA_ARGS__)
#define shmem_min_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_MINMAX_GTYPES, min_reduce, __VA_ARGS__)
#define shmem_max_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_MINMAX_GTYPES, max_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...) SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, prod_reduce, __VA_ARGS__)
#define shmem_sum_inscan(...)  SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, sum_inscan, __VA_ARGS__)
#define shmem_sum_exscan(...)  SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, sum_exscan, __VA_ARGS__)

/* Deprecated generic names of 1.3 and 1.4, onto the current calls. */
#define shmem_cswap(...) SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_compare_swap, __VA_ARGS__)
#define shmem_finc(...)  SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_fetch_inc, __VA_ARGS__)
#define shmem_inc(...)   SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_inc, __VA_ARGS__)
#define shmem_fadd(...)  SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_fetch_add, __VA_ARGS__)
#define shmem_add(...)   SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_add, __VA_ARGS__)
#define shmem_fetch(...) SHMEMX_G1_(SHMEM_X_OLD_AMO_EXT_TYPES, atomic_fetch, __VA_ARGS__)
#define shmem_set(...)   SHMEMX_G1_(SHMEM_X_OLD_AMO_EXT_TYPES, atomic_set, __VA_ARGS__)
#define shmem_swap(...)  SHMEMX_G1_(SHMEM_X_OLD_AMO_EXT_TYPES, atomic_swap, __VA_ARGS__)
#define shmem_wait(ivar, cmp_value) shmem_wait_until((ivar), SHMEM_CMP_NE, (cmp_value))

#endif /* C11 */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* SHMEM_H */
