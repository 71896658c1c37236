/*
 * OpenSHMEM signals: put-with-signal of every RMA type (blocking, _nbi, with
 * and without a context) with SET, putSIZE/putmem with ADD, a transfer of
 * many slices, signal_add from every PE onto one word, signal_set of a word
 * per PE, signal_fetch, signal_wait_until's return value, and pe_quiet.
 * PE i sends to PE i+1 (itself with one PE); whoever sees a signal must see
 * all the data sent with it.
 *
 * `t_sig bad CASE`: a bad argument ends the job with one line naming it.
 */
#include "../integration/tcommon.h"

#include <shmem.h>

#define NE  64
#define BIG (4u << 20)

static int me, npes, cons, prod;
static uint64_t *sig;     /* [0]: typed puts, [1]: sized, [2]: add from all, [3..]: set per PE */
static unsigned char *buf;  /* NE * 16 bytes */
static uint64_t round_no;

/* The data that `pe` sent in round r is whole. */
static void t_whole(const unsigned char *p, size_t len, int pe, unsigned r, const char *what)
{
    size_t bad = t_verify(p, len, pe, r);
    if (bad != SIZE_MAX)
        t_fail(__FILE__, __LINE__, "%s: byte %zu of %zu is wrong", what, bad, len);
}

/* One typed put-with-signal per form; the consumer waits for the round
 * number, then finds the data whole. */
#define T_SIG_TYPE(N, T, _)                                                                   \
    static void t_sig_##N(symrail_ctx_t ctx)                                                  \
    {                                                                                         \
        for (int form = 0; form < 4; form++) {                                                \
            unsigned char src[NE * sizeof(T)];                                                \
            uint64_t r = ++round_no;                                                          \
            t_fill(src, sizeof(src), me, (unsigned)r);                                        \
            T *d = (T *)(void *)buf, *s = (T *)(void *)src;                                   \
            switch (form) {                                                                   \
            case 0: shmem_##N##_put_signal(d, s, NE, &sig[0], r, SHMEM_SIGNAL_SET, cons);     \
                break;                                                                        \
            case 1: shmem_##N##_put_signal_nbi(d, s, NE, &sig[0], r, SHMEM_SIGNAL_SET, cons); \
                break;                                                                        \
            case 2: shmem_ctx_##N##_put_signal(ctx, d, s, NE, &sig[0], r, SHMEM_SIGNAL_SET,   \
                                               cons);                                         \
                break;                                                                        \
            default: shmem_ctx_##N##_put_signal_nbi(ctx, d, s, NE, &sig[0], r,                \
                                                    SHMEM_SIGNAL_SET, cons);                  \
                T_CHECK(symrail_ctx_quiet(ctx));                                                         \
            }                                                                                 \
            if (form == 1)                                                                    \
                T_CHECK(symrail_quiet());                                                                \
            uint64_t v = shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, r);                   \
            T_ASSERT(v == r, #N " signal_wait_until returned %llu", (unsigned long long)v);   \
            t_whole(buf, sizeof(src), prod, (unsigned)r, #N "_put_signal");                 \
            T_CHECK(symrail_barrier_all());                                                   \
        }                                                                                     \
    }

SHMEM_X_RMA_TYPES(T_SIG_TYPE, ~)
#define T_SIG_CALL(N, T, _) t_sig_##N(ctx);

/* Sized and untyped forms with ADD: the signal counts the messages. */
static void t_sig_sized(symrail_ctx_t ctx)
{
    uint64_t base = shmem_signal_fetch(&sig[1]);
    unsigned char src[NE * 16];
    uint64_t msgs = 0;
    T_CHECK(symrail_barrier_all());  /* every base read before any signal comes */
#define T_SIZED(S, _)                                                                         \
    t_fill(src, NE * (S) / 8, me, 1000 + (S));                                                \
    shmem_put##S##_signal(buf, src, NE, &sig[1], 1, SHMEM_SIGNAL_ADD, cons);                  \
    shmem_ctx_put##S##_signal_nbi(ctx, buf + NE * 16, src, 1, &sig[1], 1, SHMEM_SIGNAL_ADD,   \
                                  cons);                                                      \
    T_CHECK(symrail_ctx_quiet(ctx));                                                                     \
    msgs += 2;                                                                                \
    shmem_signal_wait_until(&sig[1], SHMEM_CMP_GE, base + msgs);                              \
    t_whole(buf, NE * (S) / 8, prod, 1000 + (S), "put" #S "_signal");                        \
    T_CHECK(symrail_barrier_all());
    SHMEM_X_SIZES(T_SIZED, ~)
    t_fill(src, 100, me, 7);
    shmem_putmem_signal(buf, src, 100, &sig[1], 5, SHMEM_SIGNAL_ADD, cons);
    shmem_ctx_putmem_signal(ctx, buf + 200, src, 0, &sig[1], 5, SHMEM_SIGNAL_ADD, cons);
    shmem_putmem_signal_nbi(buf + 300, src, 1, &sig[1], 5, SHMEM_SIGNAL_ADD, cons);
    T_CHECK(symrail_quiet());
    shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, base + msgs + 15);
    t_whole(buf, 100, prod, 7, "putmem_signal");
    T_CHECK(symrail_barrier_all());
    T_ASSERT(shmem_signal_fetch(&sig[1]) == base + msgs + 15, "signal_fetch after ADDs");
}

/* Many slices behind one signal. */
static void t_sig_big(void)
{
    unsigned char *dst = symrail_malloc(BIG), *src = malloc(BIG);
    T_ASSERT(dst && src, "malloc");
    for (unsigned r = 1; r <= 3; r++) {
        t_fill(src, BIG, me, 50 + r);
        T_CHECK(symrail_barrier_all());
        uint64_t r64 = 500 + r;
        if (r == 2)
            shmem_putmem_signal_nbi(dst, src, BIG, &sig[0], r64, SHMEM_SIGNAL_SET, cons);
        else
            shmem_putmem_signal(dst, src, BIG, &sig[0], r64, SHMEM_SIGNAL_SET, cons);
        shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, r64);
        t_whole(dst, BIG, prod, 50 + r, "putmem_signal of 4 MiB");
        T_CHECK(symrail_quiet());
        T_CHECK(symrail_barrier_all());
    }
    free(src);
    symrail_free(dst);
}

/* signal_add from every PE onto PE 0, signal_set of a word per PE everywhere. */
static void t_sig_many(symrail_ctx_t ctx)
{
    const int rounds = 50;
    for (int r = 0; r < rounds; r++) {
        if (r & 1)
            shmem_ctx_signal_add(ctx, &sig[2], (uint64_t)me + 1, 0);
        else
            shmem_signal_add(&sig[2], (uint64_t)me + 1, 0);
    }
    T_CHECK(symrail_ctx_quiet(ctx));
    if (me == 0) {
        uint64_t want = (uint64_t)rounds * (uint64_t)npes * (uint64_t)(npes + 1) / 2;
        uint64_t v = shmem_signal_wait_until(&sig[2], SHMEM_CMP_GE, want);
        T_ASSERT(v == want, "signal_add from %d PEs: %llu, want %llu", npes,
                 (unsigned long long)v, (unsigned long long)want);
    }
    for (int pe = 0; pe < npes; pe++) {
        if (pe & 1)
            shmem_ctx_signal_set(ctx, &sig[3 + me], 100 + (uint64_t)me, pe);
        else
            shmem_signal_set(&sig[3 + me], 100 + (uint64_t)me, pe);
    }
    T_CHECK(symrail_ctx_quiet(ctx));
    for (int pe = 0; pe < npes; pe++) {
        uint64_t v = shmem_signal_wait_until(&sig[3 + pe], SHMEM_CMP_NE, 0);
        T_ASSERT(v == 100 + (uint64_t)pe, "signal_set by PE %d: %llu", pe, (unsigned long long)v);
        T_ASSERT(shmem_signal_fetch(&sig[3 + pe]) == v, "signal_fetch");
    }
    T_CHECK(symrail_barrier_all());
}

/* pe_quiet: what went to the listed PEs is complete when it returns. */
static void t_pe_quiet(symrail_ctx_t ctx)
{
    unsigned char *dst = symrail_malloc(BIG), *src = malloc(BIG);
    uint64_t *flag = symrail_calloc(1, sizeof(uint64_t));
    T_ASSERT(dst && src && flag, "malloc");
    t_fill(src, BIG, me, 99);
    T_CHECK(symrail_barrier_all());
    shmem_pe_quiet(NULL, 0);
    T_CHECK(symrail_ctx_put_nbi(ctx, dst, src, BIG, cons));
    shmem_ctx_pe_quiet(ctx, &cons, 1);
    T_CHECK(symrail_atomic_set(flag, 1, cons));
    shmem_uint64_wait_until(flag, SHMEM_CMP_EQ, 1);
    t_whole(dst, BIG, prod, 99, "put_nbi then pe_quiet");
    T_CHECK(symrail_barrier_all());
    int all[64];
    for (int i = 0; i < npes && i < 64; i++)
        all[i] = i;
    t_fill(src, BIG, me, 98);
    T_CHECK(symrail_put_nbi(dst, src, BIG, cons));
    shmem_pe_quiet(all, (size_t)(npes < 64 ? npes : 64));
    T_CHECK(symrail_atomic_set(flag, 2, cons));
    shmem_uint64_wait_until(flag, SHMEM_CMP_EQ, 2);
    t_whole(dst, BIG, prod, 98, "put_nbi then pe_quiet of every PE");
    T_CHECK(symrail_barrier_all());
    free(src);
    symrail_free(flag);
    symrail_free(dst);
}

static void t_bad(const char *what)
{
    uint64_t priv = 0;
    int bad_pe = npes;
    if (strcmp(what, "pe") == 0)
        shmem_signal_add(&sig[2], 1, npes);
    else if (strcmp(what, "notsym") == 0)
        shmem_putmem_signal(buf, buf, 8, &priv, 1, SHMEM_SIGNAL_SET, cons);
    else if (strcmp(what, "sigop") == 0)
        shmem_putmem_signal(buf, buf, 8, &sig[0], 1, 7, cons);
    else if (strcmp(what, "cmp") == 0)
        shmem_signal_wait_until(&sig[0], -1, 0);
    else if (strcmp(what, "pequiet") == 0)
        shmem_pe_quiet(&bad_pe, 1);
    else if (strcmp(what, "dest") == 0)
        shmem_long_put_signal((long *)(void *)&priv, (long *)(void *)buf, 1, &sig[0], 1,
                              SHMEM_SIGNAL_SET, cons);
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
    sig = symrail_calloc(3 + (size_t)npes, sizeof(uint64_t));
    buf = symrail_calloc(NE * 16 + 512, 1);
    T_ASSERT(sig && buf, "calloc");
    T_CHECK(symrail_barrier_all());
    if (argc > 2 && strcmp(argv[1], "bad") == 0)
        t_bad(argv[2]);
    symrail_ctx_t ctx;
    T_CHECK(symrail_ctx_create(0, &ctx));
    SHMEM_X_RMA_TYPES(T_SIG_CALL, ~)
    t_sig_sized(ctx);
    t_sig_big();
    t_sig_many(ctx);
    t_pe_quiet(ctx);
    T_CHECK(symrail_ctx_destroy(ctx));
    if (me == 0)
        printf("ok: signals: put_signal of every type and size, add, set, fetch, wait_until, "
               "pe_quiet, %d PEs\n", npes);
    symrail_free(buf);
    symrail_free(sig);
    shmem_finalize();
    return 0;
}
