/*
 * OpenSHMEM reductions: the team-based shmem_TYPE_OP_reduce (1.5), the
 * prefix sums shmem_TYPE_sum_inscan/exscan (1.6) and the active-set
 * shmem_TYPE_OP_to_all (1.4, deprecated), every one generated from the type
 * tables of the specification and mapped onto the core's collectives, which
 * check the arguments and do the work.
 */
#include "config.h"

#include <string.h>
#include <complex.h>

#include "shmem/sh.h"
#include "shmem/sh_team.h"

/*
 * Team-based reductions, Table "Reduction Types, Names, and Supporting
 * Operations for Team-Based Reductions": X(TYPE, TYPENAME, dtype, ops),
 * where ops names the operator list below.  Bitwise operators only on the
 * unsigned and fixed-width types, no order on complex numbers.
 */
#define SR_SH_REDUCE_TYPES(X) \
    X(char,               char,       SR_DT_CHAR,       ORD) \
    X(signed char,        schar,      SR_DT_SCHAR,      ORD) \
    X(short,              short,      SR_DT_SHORT,      ORD) \
    X(int,                int,        SR_DT_INT,        ORD) \
    X(long,               long,       SR_DT_LONG,       ORD) \
    X(long long,          longlong,   SR_DT_LONGLONG,   ORD) \
    X(ptrdiff_t,          ptrdiff,    SR_DT_PTRDIFF,    ORD) \
    X(unsigned char,      uchar,      SR_DT_UCHAR,      BIT) \
    X(unsigned short,     ushort,     SR_DT_USHORT,     BIT) \
    X(unsigned int,       uint,       SR_DT_UINT,       BIT) \
    X(unsigned long,      ulong,      SR_DT_ULONG,      BIT) \
    X(unsigned long long, ulonglong,  SR_DT_ULONGLONG,  BIT) \
    X(int8_t,             int8,       SR_DT_INT8,       BIT) \
    X(int16_t,            int16,      SR_DT_INT16,      BIT) \
    X(int32_t,            int32,      SR_DT_INT32,      BIT) \
    X(int64_t,            int64,      SR_DT_INT64,      BIT) \
    X(uint8_t,            uint8,      SR_DT_UINT8,      BIT) \
    X(uint16_t,           uint16,     SR_DT_UINT16,     BIT) \
    X(uint32_t,           uint32,     SR_DT_UINT32,     BIT) \
    X(uint64_t,           uint64,     SR_DT_UINT64,     BIT) \
    X(size_t,             size,       SR_DT_SIZE,       BIT) \
    X(float,              float,      SR_DT_FLOAT,      ORD) \
    X(double,             double,     SR_DT_DOUBLE,     ORD) \
    X(long double,        longdouble, SR_DT_LONGDOUBLE, ORD) \
    X(double _Complex,    complexd,   SR_DT_COMPLEXD,   ARITH) \
    X(float _Complex,     complexf,   SR_DT_COMPLEXF,   ARITH)

/* Active-set reductions, Table "... for Active-Set-Based Reductions": the
 * signed types of 1.4 have the bitwise operators too. */
#define SR_SH_TO_ALL_TYPES(X) \
    X(short,              short,      SR_DT_SHORT,      BIT) \
    X(int,                int,        SR_DT_INT,        BIT) \
    X(long,               long,       SR_DT_LONG,       BIT) \
    X(long long,          longlong,   SR_DT_LONGLONG,   BIT) \
    X(float,              float,      SR_DT_FLOAT,      ORD) \
    X(double,             double,     SR_DT_DOUBLE,     ORD) \
    X(long double,        longdouble, SR_DT_LONGDOUBLE, ORD) \
    X(double _Complex,    complexd,   SR_DT_COMPLEXD,   ARITH) \
    X(float _Complex,     complexf,   SR_DT_COMPLEXF,   ARITH)

/* Y(op, operator, ...): the operators of each list. */
#define SR_SH_OPS_ARITH(Y, ...) Y(sum, SR_ROP_SUM, __VA_ARGS__) Y(prod, SR_ROP_PROD, __VA_ARGS__)
#define SR_SH_OPS_ORD(Y, ...) Y(max, SR_ROP_MAX, __VA_ARGS__) Y(min, SR_ROP_MIN, __VA_ARGS__) \
    SR_SH_OPS_ARITH(Y, __VA_ARGS__)
#define SR_SH_OPS_BIT(Y, ...) Y(and, SR_ROP_AND, __VA_ARGS__) Y(or, SR_ROP_OR, __VA_ARGS__) \
    Y(xor, SR_ROP_XOR, __VA_ARGS__) SR_SH_OPS_ORD(Y, __VA_ARGS__)

/* The calls cannot hand a status back beyond "nonzero", so a failure ends
 * the job with the core's message naming the call (the project's rule for
 * OpenSHMEM calls); the int is 0 whenever the call returns. */
static int sr_sh_reduce(const char *fn, shmem_team_t team, sr_dtype_t dt, sr_rop_t op,
                        void *dest, const void *source, size_t nreduce)
{
    sr_team_t *t = sr_sh_team(fn, team);  /* ends the job for a handle that is no team */
    symrail_status_t st = sr_coll_reduce(fn, t, dt, op, dest, source, nreduce);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_sh_fail(fn, st);
    return 0;
}

static int sr_sh_scan(const char *fn, shmem_team_t team, sr_dtype_t dt, void *dest,
                      const void *source, size_t nelems, int exclusive)
{
    sr_team_t *t = sr_sh_team(fn, team);
    symrail_status_t st = sr_coll_scan(fn, t, dt, SR_ROP_SUM, dest, source, nelems, exclusive);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_sh_fail(fn, st);
    /* 1.6: member 0's exclusive prefix is 0 (all-zero bits is 0 in every
     * type of the table); the core leaves that dest alone.  Nobody reads
     * this PE's source any more once the scan has returned, so an in-place
     * dest may be cleared now. */
    if (exclusive && nelems > 0 && t->my_pe == 0)
        memset(dest, 0, nelems * sr_dtype_size(dt));
    return 0;
}

static void sr_sh_to_all(const char *fn, sr_dtype_t dt, sr_rop_t op, void *dest,
                         const void *source, int nreduce, int pe_start, int logstride,
                         int pe_size, void *pwrk, long *psync)
{
    SR_SH_UP(fn);
    if (sr_unlikely(nreduce < 0))
        sr_sh_fatal(fn, "nreduce %d is negative", nreduce);
    symrail_status_t st = sr_coll_reduce_aset(fn, pe_start, logstride, pe_size, dt, op, dest,
                                              source, (size_t)nreduce, pwrk, psync);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_sh_fail(fn, st);
}

/* Also the names a header might lack stay exported. */
#pragma GCC visibility push(default)

#define SR_SH_REDUCE_FN(opn, rop, T, TN, dt) \
    int shmem_##TN##_##opn##_reduce(shmem_team_t team, T *dest, const T *source, \
                                    size_t nreduce) \
    { \
        return sr_sh_reduce("shmem_" #TN "_" #opn "_reduce", team, dt, rop, dest, source, \
                            nreduce); \
    }
#define SR_SH_REDUCE_OF(T, TN, dt, ops) SR_SH_OPS_##ops(SR_SH_REDUCE_FN, T, TN, dt)
SR_SH_REDUCE_TYPES(SR_SH_REDUCE_OF)

/* Scans are defined for SUM alone, on every type that has SUM. */
#define SR_SH_SCAN_OF(T, TN, dt, ops) \
    int shmem_##TN##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems) \
    { \
        return sr_sh_scan("shmem_" #TN "_sum_inscan", team, dt, dest, source, nelems, 0); \
    } \
    int shmem_##TN##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems) \
    { \
        return sr_sh_scan("shmem_" #TN "_sum_exscan", team, dt, dest, source, nelems, 1); \
    }
SR_SH_REDUCE_TYPES(SR_SH_SCAN_OF)

#define SR_SH_TO_ALL_FN(opn, rop, T, TN, dt) \
    void shmem_##TN##_##opn##_to_all(T *dest, const T *source, int nreduce, int PE_start, \
                                     int logPE_stride, int PE_size, T *pWrk, long *pSync) \
    { \
        sr_sh_to_all("shmem_" #TN "_" #opn "_to_all", dt, rop, dest, source, nreduce, \
                     PE_start, logPE_stride, PE_size, pWrk, pSync); \
    }
#define SR_SH_TO_ALL_OF(T, TN, dt, ops) SR_SH_OPS_##ops(SR_SH_TO_ALL_FN, T, TN, dt)
SR_SH_TO_ALL_TYPES(SR_SH_TO_ALL_OF)

#pragma GCC visibility pop
