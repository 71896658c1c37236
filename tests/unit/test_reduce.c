/* The reduction kernels against a scalar reference, for every pair OpenSHMEM
 * defines, distinct and in-place, counts around the kernels' block size, and
 * nothing written past n. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <complex.h>
#include <cmocka.h>

#include "core/reduce.h"

enum { T_INT, T_FLT, T_CPX };

#define TEST_DTYPES(X) \
    X(SR_DT_CHAR, char, T_INT) X(SR_DT_SCHAR, signed char, T_INT) \
    X(SR_DT_SHORT, short, T_INT) X(SR_DT_INT, int, T_INT) X(SR_DT_LONG, long, T_INT) \
    X(SR_DT_LONGLONG, long long, T_INT) X(SR_DT_PTRDIFF, ptrdiff_t, T_INT) \
    X(SR_DT_UCHAR, unsigned char, T_INT) X(SR_DT_USHORT, unsigned short, T_INT) \
    X(SR_DT_UINT, unsigned int, T_INT) X(SR_DT_ULONG, unsigned long, T_INT) \
    X(SR_DT_ULONGLONG, unsigned long long, T_INT) \
    X(SR_DT_INT8, int8_t, T_INT) X(SR_DT_INT16, int16_t, T_INT) \
    X(SR_DT_INT32, int32_t, T_INT) X(SR_DT_INT64, int64_t, T_INT) \
    X(SR_DT_UINT8, uint8_t, T_INT) X(SR_DT_UINT16, uint16_t, T_INT) \
    X(SR_DT_UINT32, uint32_t, T_INT) X(SR_DT_UINT64, uint64_t, T_INT) \
    X(SR_DT_SIZE, size_t, T_INT) \
    X(SR_DT_FLOAT, float, T_FLT) X(SR_DT_DOUBLE, double, T_FLT) \
    X(SR_DT_LONGDOUBLE, long double, T_FLT) \
    X(SR_DT_COMPLEXF, float _Complex, T_CPX) X(SR_DT_COMPLEXD, double _Complex, T_CPX)

/* Small integral values keep every sum and product exact. */
static double small(void)
{
    return (double)(rand() % 41 - 20) / 4.0;
}

/* Fills two arrays of n (+ guard) random elements, runs the kernel distinct
 * and in-place, and compares element by element. */
#define CHECK_TYPE(en, T, cls) \
    static void check_##en(sr_rop_t op, size_t n) \
    { \
        size_t cap = n + 4; \
        T *a = malloc(cap * sizeof(T)), *b = malloc(cap * sizeof(T)); \
        T *want = malloc(cap * sizeof(T)), *self = malloc(cap * sizeof(T)); \
        assert_non_null(a); assert_non_null(b); assert_non_null(want); assert_non_null(self); \
        for (size_t i = 0; i < cap; i++) { \
            if (cls == T_INT) { \
                uint64_t r = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 12) ^ (uint64_t)rand(); \
                uint64_t s = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 12) ^ (uint64_t)rand(); \
                memcpy(&a[i], &r, sizeof(T) < 8 ? sizeof(T) : 8); \
                memcpy(&b[i], &s, sizeof(T) < 8 ? sizeof(T) : 8); \
            } else { \
                a[i] = (T)small(); \
                b[i] = (T)small(); \
                if (cls == T_CPX) { \
                    a[i] += (T)(small() * I); \
                    b[i] += (T)(small() * I); \
                } \
            } \
        } \
        for (size_t i = 0; i < cap; i++) { \
            want[i] = i < n ? REF_CALL_##cls(T, en, op, a[i], b[i]) : a[i]; \
            self[i] = i < n ? REF_CALL_##cls(T, en, op, a[i], a[i]) : a[i]; \
        } \
        T *io = malloc(cap * sizeof(T)); \
        assert_non_null(io); \
        memcpy(io, a, cap * sizeof(T)); \
        sr_reduce_apply(en, op, io, b, n); \
        for (size_t i = 0; i < cap; i++) \
            if (!EQ_##cls(io[i], want[i])) \
                fail_msg("%s %s n=%zu: element %zu differs", sr_dtype_name(en), \
                         sr_rop_name(op), n, i); \
        memcpy(io, a, cap * sizeof(T)); \
        sr_reduce_apply(en, op, io, io, n); \
        for (size_t i = 0; i < cap; i++) \
            if (!EQ_##cls(io[i], self[i])) \
                fail_msg("%s %s in place n=%zu: element %zu differs", sr_dtype_name(en), \
                         sr_rop_name(op), n, i); \
        free(io); free(a); free(b); free(want); free(self); \
    }

/* The reference computes integers in uintmax_t on the operands' bits and
 * numbers in long double _Complex, which hold every value of the narrower
 * types exactly; independent of the kernels' per-type code. */
static uintmax_t ref_int(sr_rop_t op, uintmax_t a, uintmax_t b, int is_signed, size_t size)
{
    /* a and b are the operands' bits; signed comparisons sign-extend them. */
    int bits = (int)(size * 8);
    uintmax_t mask = bits >= 64 ? ~(uintmax_t)0 : (((uintmax_t)1 << bits) - 1);
    intmax_t sa = (intmax_t)a, sb = (intmax_t)b;
    if (is_signed && bits < 64) {
        uintmax_t sign = (uintmax_t)1 << (bits - 1);
        sa = (intmax_t)((a ^ sign) - sign);
        sb = (intmax_t)((b ^ sign) - sign);
    }
    uintmax_t r;
    switch (op) {
    case SR_ROP_AND: r = a & b; break;
    case SR_ROP_OR: r = a | b; break;
    case SR_ROP_XOR: r = a ^ b; break;
    case SR_ROP_MIN: r = is_signed ? (sa < sb ? a : b) : (a < b ? a : b); break;
    case SR_ROP_MAX: r = is_signed ? (sa > sb ? a : b) : (a > b ? a : b); break;
    case SR_ROP_SUM: r = a + b; break;
    case SR_ROP_PROD: r = a * b; break;
    default: fail(); return 0;
    }
    return r & mask;
}

static long double _Complex ref_num(sr_rop_t op, long double _Complex a, long double _Complex b)
{
    switch (op) {
    case SR_ROP_MIN: return creall(b) < creall(a) ? b : a;
    case SR_ROP_MAX: return creall(b) > creall(a) ? b : a;
    case SR_ROP_SUM: return a + b;
    case SR_ROP_PROD: return a * b;
    default: fail(); return 0;
    }
}

static uintmax_t bits_of(const void *p, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, p, size);  /* little-endian: the low bytes */
    return v;
}

#define REF_CALL_T_INT(T, en, op, x, y) \
    ({ T x_ = (x), y_ = (y), r_; \
       uintmax_t rb_ = ref_int(op, bits_of(&x_, sizeof(T)), bits_of(&y_, sizeof(T)), \
                               (T)-1 < (T)1, sizeof(T)); \
       memcpy(&r_, &rb_, sizeof(T)); r_; })
#define REF_CALL_T_FLT(T, en, op, x, y) ((T)ref_num(op, (x), (y)))
#define REF_CALL_T_CPX(T, en, op, x, y) ((T)ref_num(op, (x), (y)))

/* Numbers by value: long double has padding bytes that copies need not keep. */
#define EQ_T_INT(x, y) (memcmp(&(x), &(y), sizeof(x)) == 0)
#define EQ_T_FLT(x, y) ((x) == (y))
#define EQ_T_CPX(x, y) ((x) == (y))

TEST_DTYPES(CHECK_TYPE)

typedef void (*check_fn_t)(sr_rop_t op, size_t n);
#define CHECK_ENTRY(en, T, cls) [en] = check_##en,
static const check_fn_t checks[SR_DT_COUNT] = { TEST_DTYPES(CHECK_ENTRY) };
#define CLASS_ENTRY(en, T, cls) [en] = cls,
static const int classes[SR_DT_COUNT] = { TEST_DTYPES(CLASS_ENTRY) };
#define SIZE_ENTRY(en, T, cls) [en] = sizeof(T),
static const size_t sizes[SR_DT_COUNT] = { TEST_DTYPES(SIZE_ENTRY) };

static int want_valid(int cls, sr_rop_t op)
{
    int bitwise = op == SR_ROP_AND || op == SR_ROP_OR || op == SR_ROP_XOR;
    int order = op == SR_ROP_MIN || op == SR_ROP_MAX;
    if (cls == T_INT)
        return 1;
    if (cls == T_FLT)
        return !bitwise;
    return !bitwise && !order;
}

static void test_valid_matrix(void **state)
{
    (void)state;
    for (int dt = 0; dt < SR_DT_COUNT; dt++) {
        assert_int_equal(sr_dtype_size(dt), sizes[dt]);
        for (int op = 0; op < SR_ROP_COUNT; op++)
            assert_int_equal(!!sr_reduce_valid(dt, op), want_valid(classes[dt], op));
        assert_false(sr_reduce_valid(dt, SR_ROP_COUNT));
        assert_false(sr_reduce_valid(dt, (sr_rop_t)-1));
    }
    for (int op = 0; op < SR_ROP_COUNT; op++)
        assert_false(sr_reduce_valid(SR_DT_COUNT, op));
    assert_int_equal(sr_dtype_size(SR_DT_COUNT), 0);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(sr_dtype_name(SR_DT_LONG), "long");
    assert_string_equal(sr_dtype_name(SR_DT_LONGLONG), "longlong");
    assert_string_equal(sr_dtype_name(SR_DT_UINT64), "uint64");
    assert_string_equal(sr_dtype_name(SR_DT_PTRDIFF), "ptrdiff");
    assert_string_equal(sr_dtype_name(SR_DT_SIZE), "size");
    assert_string_equal(sr_dtype_name(SR_DT_LONGDOUBLE), "longdouble");
    assert_string_equal(sr_dtype_name(SR_DT_COMPLEXF), "complexf");
    assert_string_equal(sr_dtype_name(SR_DT_COMPLEXD), "complexd");
    assert_string_equal(sr_dtype_name(SR_DT_SCHAR), "schar");
    assert_string_equal(sr_rop_name(SR_ROP_AND), "and");
    assert_string_equal(sr_rop_name(SR_ROP_XOR), "xor");
    assert_string_equal(sr_rop_name(SR_ROP_PROD), "prod");
    for (int dt = 0; dt < SR_DT_COUNT; dt++)
        assert_true(strlen(sr_dtype_name(dt)) > 0 && strcmp(sr_dtype_name(dt), "?") != 0);
    for (int op = 0; op < SR_ROP_COUNT; op++)
        assert_true(strlen(sr_rop_name(op)) > 0 && strcmp(sr_rop_name(op), "?") != 0);
    assert_string_equal(sr_dtype_name(SR_DT_COUNT), "?");
    assert_string_equal(sr_rop_name(SR_ROP_COUNT), "?");
}

/* Around the kernels' block of 32: none, one, just under, at and just over a
 * block, several blocks with a tail, and a long run. */
static void test_every_pair(void **state)
{
    (void)state;
    static const size_t counts[] = { 0, 1, 2, 7, 31, 32, 33, 64, 100, 1000, 4099 };
    srand(12345);
    for (int dt = 0; dt < SR_DT_COUNT; dt++)
        for (int op = 0; op < SR_ROP_COUNT; op++) {
            if (!sr_reduce_valid(dt, op))
                continue;
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
                checks[dt](op, counts[c]);
        }
}

/* An invalid pair or n == 0 leaves the destination alone. */
static void test_noop(void **state)
{
    (void)state;
    double d[4] = { 1, 2, 3, 4 }, e[4] = { 5, 6, 7, 8 };
    sr_reduce_apply(SR_DT_DOUBLE, SR_ROP_XOR, d, e, 4);
    sr_reduce_apply(SR_DT_DOUBLE, SR_ROP_SUM, d, e, 0);
    sr_reduce_apply(SR_DT_COUNT, SR_ROP_SUM, d, e, 4);
    assert_true(d[0] == 1 && d[1] == 2 && d[2] == 3 && d[3] == 4);
    sr_reduce_apply(SR_DT_DOUBLE, SR_ROP_SUM, NULL, NULL, 0);  /* n = 0 touches nothing */
}

/* Arrays one element off a vector boundary, and off each other. */
static void test_unaligned(void **state)
{
    (void)state;
    long buf_a[72], buf_b[72];
    long *a = buf_a + 1, *b = buf_b + (((uintptr_t)buf_b & 8) ? 0 : 1);
    for (int i = 0; i < 70; i++) {
        a[i] = i * 3 - 50;
        b[i] = 1000 - i * 7;
    }
    sr_reduce_apply(SR_DT_LONG, SR_ROP_MAX, a, b, 70);
    for (int i = 0; i < 70; i++)
        assert_int_equal(a[i], (i * 3 - 50) > (1000 - i * 7) ? i * 3 - 50 : 1000 - i * 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_matrix),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_every_pair),
        cmocka_unit_test(test_noop),
        cmocka_unit_test(test_unaligned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
