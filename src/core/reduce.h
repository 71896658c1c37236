/*
 * Element types and operators of reductions: the kernels that combine two
 * arrays, one per (type, operator) pair the OpenSHMEM specification lists.
 */
#ifndef SR_CORE_REDUCE_H
#define SR_CORE_REDUCE_H

#include <stddef.h>

typedef enum {
    SR_DT_CHAR, SR_DT_SCHAR, SR_DT_SHORT, SR_DT_INT, SR_DT_LONG, SR_DT_LONGLONG, SR_DT_PTRDIFF,
    SR_DT_UCHAR, SR_DT_USHORT, SR_DT_UINT, SR_DT_ULONG, SR_DT_ULONGLONG,
    SR_DT_INT8, SR_DT_INT16, SR_DT_INT32, SR_DT_INT64,
    SR_DT_UINT8, SR_DT_UINT16, SR_DT_UINT32, SR_DT_UINT64, SR_DT_SIZE,
    SR_DT_FLOAT, SR_DT_DOUBLE, SR_DT_LONGDOUBLE, SR_DT_COMPLEXF, SR_DT_COMPLEXD,
    SR_DT_COUNT
} sr_dtype_t;

typedef enum {
    SR_ROP_AND, SR_ROP_OR, SR_ROP_XOR, SR_ROP_MIN, SR_ROP_MAX, SR_ROP_SUM, SR_ROP_PROD,
    SR_ROP_COUNT
} sr_rop_t;

size_t sr_dtype_size(sr_dtype_t dt);
const char *sr_dtype_name(sr_dtype_t dt);  /* "long", "uint64" ... as OpenSHMEM names them */
const char *sr_rop_name(sr_rop_t op);      /* "and", "sum" ... */
/* Whether OpenSHMEM defines op for dt (no bitwise ops on floating types, no
 * min/max on complex ones). */
int sr_reduce_valid(sr_dtype_t dt, sr_rop_t op);
/* inout[i] = inout[i] op in[i] for i < n; the arrays may not overlap
 * unless they are the same. */
void sr_reduce_apply(sr_dtype_t dt, sr_rop_t op, void *inout, const void *in, size_t n);

#endif
