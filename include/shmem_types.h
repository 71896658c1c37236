/*
 * Constants, handles and the type tables of shmem.h: shmem.h includes it where it
 * belongs; programs include <shmem.h>, never this part alone.
 */
#ifndef SHMEM_TYPES_H
#define SHMEM_TYPES_H

#ifndef SHMEM_H
#error "include <shmem.h>, not <shmem_types.h>"
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

#endif /* SHMEM_TYPES_H */
