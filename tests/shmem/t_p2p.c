/*
 * OpenSHMEM point-to-point synchronisation, every type and form: PE i
 * produces for PE i+1 (in a ring; with one PE it produces for itself),
 * setting the elements of its consumer's array in a known order and waiting
 * for an acknowledgement after each step, so the consumer knows exactly
 * which elements hold when: wait_until_any must return the one just set,
 * wait_until_some the ones just set, status masks must exclude, and an
 * empty set returns at once (SIZE_MAX / 0 / 1).
 *
 * Signed types are set to negative values and waited for with CMP_LT 0,
 * unsigned ones to values near their maximum with CMP_GT 0: a comparison of
 * the wrong signedness never holds and the test hangs (symrun's timeout
 * fails it).
 *
 * `t_p2p bad CASE`: a bad argument ends the job with one line naming it.
 */
#include "../integration/tcommon.h"

#include <shmem.h>
#include <unistd.h>

#define NE 8
static const int perm[NE] = { 0, 3, 6, 1, 4, 7, 2, 5 };  /* k * 3 % NE */

static int me, npes, cons, prod;
static uint64_t *ack;
static uint64_t acks;

/* Wait until the consumer has taken step `k` (its acks count the steps). */
static void t_await_ack(void)
{
    acks++;
    shmem_uint64_wait_until(ack, SHMEM_CMP_GE, acks);
}

static void t_ack(void)
{
    T_CHECK(symrail_atomic_add(ack, 1, prod));
}

/* A put of one element may land in pieces (Soft-RoCE copies a payload with
 * memcpy), so a condition such as "not 0" can hold before its last byte is
 * there.  The value must still come, within a second. */
static int t_settled(const void *p, const void *v, size_t n)
{
    for (int i = 0; i < 10000 && memcmp(p, v, n) != 0; i++)
        usleep(100);
    return memcmp(p, v, n) == 0;
}

#define T_SGN(T) _Generic((T)0, short: 1, int: 1, long: 1, long long: 1, default: 0)
/* The value element j is set to: negative, or near the maximum. */
#define T_VAL(T, j) (T_SGN(T) ? (T)(-(long long)(j) - 1) : (T)(~(T)0 - (T)(j)))

#define T_TYPE(N, T, _)                                                                       \
    static void t_##N(void)                                                                   \
    {                                                                                         \
        T *iv = symrail_calloc(NE, sizeof(T));                                                \
        T vals[NE], wrong[NE], zero[NE];                                                        \
        int status[NE] = { 0 };                                                               \
        size_t idx[NE];                                                                       \
        const int cmp = T_SGN(T) ? SHMEM_CMP_LT : SHMEM_CMP_GT;                               \
        T_ASSERT(iv != NULL, "calloc");                                                       \
        for (int j = 0; j < NE; j++) {                                                        \
            vals[j] = T_VAL(T, j);                                                            \
            wrong[j] = (T)(vals[j] + 1);                                                      \
            zero[j] = 0;                                                                      \
        }                                                                                     \
        /* Empty sets, NULL arrays. */                                                        \
        shmem_##N##_wait_until_all(NULL, 0, NULL, cmp, 0);                                    \
        T_ASSERT(shmem_##N##_wait_until_any(NULL, 0, NULL, cmp, 0) == SIZE_MAX, #N " any 0"); \
        T_ASSERT(shmem_##N##_wait_until_some(NULL, 0, NULL, NULL, cmp, 0) == 0, #N " some 0"); \
        T_ASSERT(shmem_##N##_test_all(NULL, 0, NULL, cmp, 0) == 1, #N " test_all 0");         \
        T_ASSERT(shmem_##N##_test_any(NULL, 0, NULL, cmp, 0) == SIZE_MAX, #N " test_any 0");  \
        T_ASSERT(shmem_##N##_test_some(NULL, 0, NULL, NULL, cmp, 0) == 0, #N " test_some 0"); \
        shmem_##N##_wait_until_all_vector(NULL, 0, NULL, cmp, NULL);                          \
        T_ASSERT(shmem_##N##_test_any_vector(NULL, 0, NULL, cmp, NULL) == SIZE_MAX, #N);      \
        /* Nothing is set yet (the producer waits for the barrier). */                        \
        T_ASSERT(shmem_##N##_test(&iv[0], cmp, 0) == 0, #N " test before");                   \
        T_ASSERT(shmem_##N##_test(&iv[0], SHMEM_CMP_EQ, 0) == 1, #N " test EQ 0");            \
        T_ASSERT(shmem_##N##_test_all(iv, NE, NULL, cmp, 0) == 0, #N " test_all before");     \
        T_ASSERT(shmem_##N##_test_any(iv, NE, NULL, cmp, 0) == SIZE_MAX, #N " any before");   \
        T_ASSERT(shmem_##N##_test_some(iv, NE, idx, NULL, cmp, 0) == 0, #N " some before");   \
        T_ASSERT(shmem_##N##_test_some_vector(iv, NE, idx, NULL, SHMEM_CMP_EQ, vals) == 0,    \
                 #N " some_vector before");                                                   \
        T_CHECK(symrail_barrier_all());                                                       \
        /* any: one element a step, in perm order; odd steps by vector. */                    \
        for (int k = 0; k < NE; k++) {                                                        \
            int j = perm[k];                                                                  \
            T_CHECK(symrail_put(&iv[j], &vals[j], sizeof(T), cons));                          \
            size_t got = k & 1 ? shmem_##N##_wait_until_any_vector(iv, NE, status,            \
                                                                   SHMEM_CMP_EQ, vals)        \
                               : shmem_##N##_wait_until_any(iv, NE, status, cmp, 0);          \
            T_ASSERT(got == (size_t)perm[k], #N " wait_until_any step %d: %zu, want %d", k,   \
                     got, perm[k]);                                                           \
            T_ASSERT(t_settled(&iv[got], &vals[got], sizeof(T)), #N " value of %zu", got);    \
            T_ASSERT(shmem_##N##_test_any(iv, NE, status, cmp, 0) == got, #N " test_any");    \
            T_ASSERT(shmem_##N##_test_any_vector(iv, NE, status, cmp, zero) == got,           \
                     #N " test_any_vector");                                                  \
            status[got] = 1;                                                                  \
            t_ack();                                                                          \
            t_await_ack();                                                                    \
        }                                                                                     \
        /* Every element excluded: the set is empty. */                                       \
        T_ASSERT(shmem_##N##_wait_until_any(iv, NE, status, cmp, 0) == SIZE_MAX, #N);         \
        T_ASSERT(shmem_##N##_wait_until_some(iv, NE, idx, status, cmp, 0) == 0, #N);          \
        T_ASSERT(shmem_##N##_test_any(iv, NE, status, cmp, 0) == SIZE_MAX, #N);               \
        T_ASSERT(shmem_##N##_test_some_vector(iv, NE, idx, status, SHMEM_CMP_EQ, vals) == 0, \
                 #N);                                                                         \
        T_ASSERT(shmem_##N##_test_all(iv, NE, status, SHMEM_CMP_EQ, 0) == 1, #N " all excl"); \
        memset(status, 0, sizeof(status));                                                   \
        T_ASSERT(shmem_##N##_test_all(iv, NE, NULL, cmp, 0) == 1, #N " test_all after");      \
        T_ASSERT(shmem_##N##_test_all_vector(iv, NE, status, SHMEM_CMP_EQ, vals) == 1, #N);   \
        T_ASSERT(shmem_##N##_test_all_vector(iv, NE, status, SHMEM_CMP_EQ, wrong) == 0, #N); \
        T_ASSERT(shmem_##N##_test_any(iv, NE, NULL, cmp, 0) == 0, #N " test_any lowest");     \
        T_ASSERT(shmem_##N##_test_some(iv, NE, idx, NULL, cmp, 0) == NE, #N " test_some all"); \
        for (int j = 0; j < NE; j++)                                                          \
            T_ASSERT(idx[j] == (size_t)j, #N " test_some index %d: %zu", j, idx[j]);          \
        wrong[2] = vals[2];                                                                   \
        T_ASSERT(shmem_##N##_test_some_vector(iv, NE, idx, NULL, SHMEM_CMP_EQ, wrong) == 1 && \
                 idx[0] == 2, #N " test_some_vector one");                                    \
        wrong[2] = (T)(vals[2] + 1);                                                          \
        /* some: two elements a step; odd steps by vector. */                                 \
        T_CHECK(symrail_barrier_all());                                                       \
        memset(iv, 0, NE * sizeof(T));                                                        \
        T_CHECK(symrail_barrier_all());                                                       \
        for (int b = 0; b < NE / 2; b++) {                                                    \
            int j0 = perm[2 * b], j1 = perm[2 * b + 1], seen = 0;                             \
            T_CHECK(symrail_put(&iv[j0], &vals[j0], sizeof(T), cons));                        \
            T_CHECK(symrail_put(&iv[j1], &vals[j1], sizeof(T), cons));                        \
            while (seen < 2) {                                                                \
                size_t m = b & 1 ? shmem_##N##_wait_until_some_vector(iv, NE, idx, status,    \
                                                                      SHMEM_CMP_EQ, vals)     \
                                 : shmem_##N##_wait_until_some(iv, NE, idx, status, cmp, 0);  \
                T_ASSERT(m >= 1 && m + seen <= 2, #N " wait_until_some: %zu", m);             \
                for (size_t i = 0; i < m; i++) {                                              \
                    T_ASSERT(idx[i] == (size_t)j0 || idx[i] == (size_t)j1,                    \
                             #N " some step %d gave %zu", b, idx[i]);                         \
                    T_ASSERT(i == 0 || idx[i] > idx[i - 1], #N " some indices ascend");       \
                    status[idx[i]] = 1;                                                       \
                }                                                                             \
                seen += (int)m;                                                               \
            }                                                                                 \
            t_ack();                                                                          \
            t_await_ack();                                                                    \
        }                                                                                     \
        /* all: the last element is excluded and never set until the end. */                 \
        T_CHECK(symrail_barrier_all());                                                       \
        memset(iv, 0, NE * sizeof(T));                                                        \
        memset(status, 0, sizeof(status));                                                    \
        status[NE - 1] = 1;                                                                   \
        T_CHECK(symrail_barrier_all());                                                       \
        for (int k = 0; k < NE; k++)                                                          \
            if (perm[k] != NE - 1)                                                            \
                T_CHECK(symrail_put(&iv[perm[k]], &vals[perm[k]], sizeof(T), cons));          \
        shmem_##N##_wait_until_all(iv, NE, status, cmp, 0);                                   \
        for (int j = 0; j < NE - 1; j++)                                                      \
            T_ASSERT(t_settled(&iv[j], &vals[j], sizeof(T)),                                  \
                     #N " wait_until_all: element %d not set", j);                            \
        T_ASSERT(iv[NE - 1] == 0, #N " excluded element");                                    \
        T_ASSERT(shmem_##N##_test_all(iv, NE, NULL, cmp, 0) == 0, #N " test_all partial");    \
        T_ASSERT(shmem_##N##_test_all(iv, NE, status, cmp, 0) == 1, #N " test_all masked");   \
        t_ack();                                                                              \
        t_await_ack(); /* the consumer checked before the last one comes */                   \
        T_CHECK(symrail_put(&iv[NE - 1], &vals[NE - 1], sizeof(T), cons));                    \
        shmem_##N##_wait_until(&iv[NE - 1], cmp, 0);                                          \
        shmem_##N##_wait_until_all_vector(iv, NE, NULL, SHMEM_CMP_EQ, vals);                  \
        T_ASSERT(shmem_##N##_test(&iv[NE - 1], SHMEM_CMP_EQ, vals[NE - 1]) == 1, #N);         \
        T_ASSERT(shmem_##N##_test(&iv[NE - 1], SHMEM_CMP_NE, vals[NE - 1]) == 0, #N);         \
        T_CHECK(symrail_barrier_all());                                                       \
        symrail_free(iv);                                                                     \
    }

SHMEM_X_P2P_TYPES(T_TYPE, ~)

#define T_CALL(N, T, _) t_##N();

/* The type-generic names (outside the typed bodies: the preprocessor does
 * not expand a table within its own expansion). */
static void t_generic(void)
{
    int *iv = symrail_calloc(4, sizeof(int));
    int four[4] = { 1, 2, 3, 4 }, status[4] = { 0 };
    size_t idx[4];
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_put(iv, four, sizeof(four), cons));
    shmem_wait_until(&iv[3], SHMEM_CMP_EQ, 4);
    shmem_wait_until_all(iv, 4, status, SHMEM_CMP_GT, 0);
    T_ASSERT(shmem_wait_until_any(iv, 4, NULL, SHMEM_CMP_EQ, 3) == 2, "generic any");
    T_ASSERT(shmem_wait_until_some(iv, 4, idx, NULL, SHMEM_CMP_GE, 3) == 2 && idx[0] == 2 &&
             idx[1] == 3, "generic some");
    T_ASSERT(shmem_test(&iv[1], SHMEM_CMP_EQ, 2) == 1, "generic test");
    T_ASSERT(shmem_test_all_vector(iv, 4, NULL, SHMEM_CMP_EQ, four) == 1, "generic vector");
    T_CHECK(symrail_barrier_all());
    symrail_free(iv);
}

static void t_deprecated(void)
{
    long *lv = symrail_calloc(2, sizeof(long));
    int *iv = symrail_calloc(1, sizeof(int));
    long one = 1;
    int two = 2;
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_put(&lv[0], &one, sizeof(long), cons));
    T_CHECK(symrail_put(iv, &two, sizeof(int), cons));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    shmem_long_wait(&lv[0], 0);
    shmem_int_wait(iv, 0);
    shmem_wait(&lv[0], 0);
#pragma GCC diagnostic pop
    T_ASSERT(lv[0] == 1 && *iv == 2, "deprecated waits returned before the value changed");
    T_CHECK(symrail_barrier_all());
    symrail_free(iv);
    symrail_free(lv);
}

static void t_bad(const char *what)
{
    long *sym = symrail_calloc(4, sizeof(long));
    long priv = 0;
    size_t idx[4];
    T_CHECK(symrail_barrier_all());
    if (strcmp(what, "notsym") == 0)
        shmem_long_wait_until(&priv, SHMEM_CMP_EQ, 0);
    else if (strcmp(what, "cmp") == 0)
        shmem_long_test(sym, 42, 0);
    else if (strcmp(what, "align") == 0)
        shmem_long_test_all((long *)(void *)((char *)sym + 4), 2, NULL, SHMEM_CMP_EQ, 0);
    else if (strcmp(what, "indices") == 0)
        shmem_long_test_some(sym, 4, NULL, NULL, SHMEM_CMP_EQ, 0);
    else if (strcmp(what, "vector") == 0)
        shmem_long_wait_until_any_vector(sym, 4, NULL, SHMEM_CMP_EQ, NULL);
    else if (strcmp(what, "gone") == 0) {
        /* PE 1 leaves without a word: PE 0's wait can never end. */
        if (me == 1)
            _exit(0);
        if (me == 0)
            shmem_long_wait_until_all(sym, 4, NULL, SHMEM_CMP_EQ, 1);
        _exit(0);
    }
    (void)idx;
    printf("FAIL: bad input %s was accepted\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    shmem_init();
    me = symrail_my_pe();
    npes = symrail_n_pes();
    cons = (me + 1) % npes;
    prod = (me + npes - 1) % npes;
    if (argc > 2 && strcmp(argv[1], "bad") == 0)
        t_bad(argv[2]);
    ack = symrail_calloc(1, sizeof(uint64_t));
    T_ASSERT(ack != NULL, "calloc");
    T_CHECK(symrail_barrier_all());
    SHMEM_X_P2P_TYPES(T_CALL, ~)
    t_generic();
    t_deprecated();
    if (me == 0)
        printf("ok: p2p waits and tests, 14 types, every form, %d PEs\n", npes);
    symrail_free(ack);
    shmem_finalize();
    return 0;
}
