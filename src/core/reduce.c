/*
 * Reduction kernels: inout[i] = inout[i] op in[i], one function per
 * (type, operator) pair that OpenSHMEM defines, all generated from the two
 * tables below.
 */
#include "config.h"

#include <stdint.h>
#include <stddef.h>
#include <complex.h>

#include "core/reduce.h"

/*
 * X(enum, C type, OpenSHMEM name, class, arithmetic type).  The arithmetic
 * type is the one sum and prod compute in: unsigned and at least as wide as
 * int for integers, so that overflow wraps instead of being undefined (and a
 * short times a short does not overflow int on the way).
 */
#define SR_DTYPES(X) \
    X(SR_DT_CHAR,       char,               "char",       INT, unsigned int) \
    X(SR_DT_SCHAR,      signed char,        "schar",      INT, unsigned int) \
    X(SR_DT_SHORT,      short,              "short",      INT, unsigned int) \
    X(SR_DT_INT,        int,                "int",        INT, unsigned int) \
    X(SR_DT_LONG,       long,               "long",       INT, unsigned long) \
    X(SR_DT_LONGLONG,   long long,          "longlong",   INT, unsigned long long) \
    X(SR_DT_PTRDIFF,    ptrdiff_t,          "ptrdiff",    INT, size_t) \
    X(SR_DT_UCHAR,      unsigned char,      "uchar",      INT, unsigned int) \
    X(SR_DT_USHORT,     unsigned short,     "ushort",     INT, unsigned int) \
    X(SR_DT_UINT,       unsigned int,       "uint",       INT, unsigned int) \
    X(SR_DT_ULONG,      unsigned long,      "ulong",      INT, unsigned long) \
    X(SR_DT_ULONGLONG,  unsigned long long, "ulonglong",  INT, unsigned long long) \
    X(SR_DT_INT8,       int8_t,             "int8",       INT, unsigned int) \
    X(SR_DT_INT16,      int16_t,            "int16",      INT, unsigned int) \
    X(SR_DT_INT32,      int32_t,            "int32",      INT, uint32_t) \
    X(SR_DT_INT64,      int64_t,            "int64",      INT, uint64_t) \
    X(SR_DT_UINT8,      uint8_t,            "uint8",      INT, unsigned int) \
    X(SR_DT_UINT16,     uint16_t,           "uint16",     INT, unsigned int) \
    X(SR_DT_UINT32,     uint32_t,           "uint32",     INT, uint32_t) \
    X(SR_DT_UINT64,     uint64_t,           "uint64",     INT, uint64_t) \
    X(SR_DT_SIZE,       size_t,             "size",       INT, size_t) \
    X(SR_DT_FLOAT,      float,              "float",      FLT, float) \
    X(SR_DT_DOUBLE,     double,             "double",     FLT, double) \
    X(SR_DT_LONGDOUBLE, long double,        "longdouble", FLT, long double) \
    X(SR_DT_COMPLEXF,   float _Complex,     "complexf",   CPX, float _Complex) \
    X(SR_DT_COMPLEXD,   double _Complex,    "complexd",   CPX, double _Complex)

/* X(enum, name, token): every operator. */
#define SR_ROPS(X) \
    X(SR_ROP_AND,  "and",  AND) \
    X(SR_ROP_OR,   "or",   OR) \
    X(SR_ROP_XOR,  "xor",  XOR) \
    X(SR_ROP_MIN,  "min",  MIN) \
    X(SR_ROP_MAX,  "max",  MAX) \
    X(SR_ROP_SUM,  "sum",  SUM) \
    X(SR_ROP_PROD, "prod", PROD)

/* The operators each class has: bitwise ones only on integers, no order on
 * complex numbers. */
#define SR_OPS_INT(Y, ...) Y(AND, __VA_ARGS__) Y(OR, __VA_ARGS__) Y(XOR, __VA_ARGS__) \
    Y(MIN, __VA_ARGS__) Y(MAX, __VA_ARGS__) Y(SUM, __VA_ARGS__) Y(PROD, __VA_ARGS__)
#define SR_OPS_FLT(Y, ...) Y(MIN, __VA_ARGS__) Y(MAX, __VA_ARGS__) \
    Y(SUM, __VA_ARGS__) Y(PROD, __VA_ARGS__)
#define SR_OPS_CPX(Y, ...) Y(SUM, __VA_ARGS__) Y(PROD, __VA_ARGS__)

/* min/max as x86's minps/maxps define them (the second operand when
 * unordered), so the compiler may use those instructions without -ffast-math. */
#define SR_EXPR_AND(T, W, a, b)  ((T)((a) & (b)))
#define SR_EXPR_OR(T, W, a, b)   ((T)((a) | (b)))
#define SR_EXPR_XOR(T, W, a, b)  ((T)((a) ^ (b)))
#define SR_EXPR_MIN(T, W, a, b)  ((b) < (a) ? (b) : (a))
#define SR_EXPR_MAX(T, W, a, b)  ((b) > (a) ? (b) : (a))
#define SR_EXPR_SUM(T, W, a, b)  ((T)((W)(a) + (W)(b)))
#define SR_EXPR_PROD(T, W, a, b) ((T)((W)(a) * (W)(b)))

/*
 * -O2 vectorises only loops whose vector code leaves no scalar remainder, so
 * the body works in fixed blocks of SR_BLOCK elements (vectorised) and the
 * tail goes one by one.  Two loops: restrict pointers for distinct arrays,
 * one pointer for in-place use (inout == in), which restrict would forbid.
 */
#define SR_BLOCK 32

#define SR_KERNEL(OP, DT, T, W) \
    static void sr_k2_##DT##_##OP(T *restrict io, const T *restrict in, size_t n) \
    { \
        size_t i = 0; \
        for (; i + SR_BLOCK <= n; i += SR_BLOCK) \
            for (size_t j = 0; j < SR_BLOCK; j++) \
                io[i + j] = SR_EXPR_##OP(T, W, io[i + j], in[i + j]); \
        for (; i < n; i++) \
            io[i] = SR_EXPR_##OP(T, W, io[i], in[i]); \
    } \
    static void sr_k_##DT##_##OP(void *inout_v, const void *in_v, size_t n) \
    { \
        if (inout_v != in_v) { \
            sr_k2_##DT##_##OP(inout_v, in_v, n); \
            return; \
        } \
        T *io = inout_v; \
        size_t i = 0; \
        for (; i + SR_BLOCK <= n; i += SR_BLOCK) \
            for (size_t j = 0; j < SR_BLOCK; j++) \
                io[i + j] = SR_EXPR_##OP(T, W, io[i + j], io[i + j]); \
        for (; i < n; i++) \
            io[i] = SR_EXPR_##OP(T, W, io[i], io[i]); \
    }

#define SR_KERNELS_OF(en, T, name, cls, W) SR_OPS_##cls(SR_KERNEL, en, T, W)
SR_DTYPES(SR_KERNELS_OF)

typedef void (*sr_kernel_t)(void *inout, const void *in, size_t n);

#define SR_KERNEL_ENTRY(OP, DT, T, W) [DT][SR_ROP_##OP] = sr_k_##DT##_##OP,
#define SR_KERNEL_ROW(en, T, name, cls, W) SR_OPS_##cls(SR_KERNEL_ENTRY, en, T, W)
/* NULL where OpenSHMEM defines no such reduction. */
static const sr_kernel_t sr_kernels[SR_DT_COUNT][SR_ROP_COUNT] = {
    SR_DTYPES(SR_KERNEL_ROW)
};

#define SR_SIZE_ENTRY(en, T, name, cls, W) [en] = sizeof(T),
static const size_t sr_dtype_sizes[SR_DT_COUNT] = { SR_DTYPES(SR_SIZE_ENTRY) };

#define SR_NAME_ENTRY(en, T, name, cls, W) [en] = name,
static const char *const sr_dtype_names[SR_DT_COUNT] = { SR_DTYPES(SR_NAME_ENTRY) };

#define SR_ROP_NAME_ENTRY(en, name, tok) [en] = name,
static const char *const sr_rop_names[SR_ROP_COUNT] = { SR_ROPS(SR_ROP_NAME_ENTRY) };

static int sr_dtype_ok(sr_dtype_t dt)
{
    return (unsigned)dt < SR_DT_COUNT;
}

static int sr_rop_ok(sr_rop_t op)
{
    return (unsigned)op < SR_ROP_COUNT;
}

size_t sr_dtype_size(sr_dtype_t dt)
{
    return sr_dtype_ok(dt) ? sr_dtype_sizes[dt] : 0;
}

const char *sr_dtype_name(sr_dtype_t dt)
{
    return sr_dtype_ok(dt) ? sr_dtype_names[dt] : "?";
}

const char *sr_rop_name(sr_rop_t op)
{
    return sr_rop_ok(op) ? sr_rop_names[op] : "?";
}

int sr_reduce_valid(sr_dtype_t dt, sr_rop_t op)
{
    return sr_dtype_ok(dt) && sr_rop_ok(op) && sr_kernels[dt][op] != NULL;
}

void sr_reduce_apply(sr_dtype_t dt, sr_rop_t op, void *inout, const void *in, size_t n)
{
    /* Callers check with sr_reduce_valid first; an invalid pair here is a
     * bug of the caller, and doing nothing beats jumping through NULL. */
    if (__builtin_expect(!sr_reduce_valid(dt, op), 0) || n == 0)
        return;
    sr_kernels[dt][op](inout, in, n);
}
