/*
 * Global and static variables are symmetric: put, get, atomics, put_signal
 * and signal waits on initialized data, on zero BSS and on a function's
 * static, with arrays longer than a slice; symrail_ptr on globals; a fork
 * after init gives the child globals of its own; a thread that writes a
 * global while init moves the segment loses no write.
 *   t_data [all|threads|fork|bad|off|mismatch]
 * T_NO_PTR=1: peers have no load/store view (TCP); neither have those on
 * another node that SYMRAIL_TEST_NODE_SIZE pretends.
 */
#include "tcommon.h"

#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#define NINIT  (96 * 1024 / 8)   /* 96 KB of .data: more than a slice */
#define NBSS   (1 << 20)        /* 1 MB of .bss */
#define ROUNDS 3

long g_init[NINIT] = { 11, 22, 33, [NINIT - 1] = 99 };
static unsigned char g_bss[NBSS];
uint64_t g_sig;
static uint64_t g_words[8];
/* Atomic (relaxed): the thread and main share them, and what is tested is
 * the library's remap under the thread's stores, not their order. */
static uint64_t g_spin;
static int g_stop;
static long g_forkmark = 7;

static uint64_t *counter(void)
{
    static uint64_t c;
    return &c;
}

static void check_init_values(void)
{
    T_ASSERT(g_init[0] == 11 && g_init[1] == 22 && g_init[2] == 33 && g_init[NINIT - 1] == 99 &&
                 g_init[3] == 0,
             "initialized globals changed across init: %ld %ld %ld %ld", g_init[0], g_init[1],
             g_init[2], g_init[NINIT - 1]);
}

static void test_rma(int me, int n)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    static unsigned char buf[NBSS];
    for (unsigned r = 0; r < ROUNDS; r++) {
        /* BSS: a blocking put, then a get of what the left neighbour put. */
        for (size_t i = 0; i < NBSS; i++)
            buf[i] = t_byte(me, r, i);
        T_CHECK(symrail_put(g_bss, buf, NBSS, right));
        T_CHECK(symrail_barrier_all());
        for (size_t i = 0; i < NBSS; i++)
            T_ASSERT(g_bss[i] == t_byte(left, r, i), "round %u: g_bss[%zu] = %u, want %u", r,
                     i, g_bss[i], t_byte(left, r, i));
        /* .data: non-blocking puts, then quiet. */
        for (size_t i = 0; i < NINIT; i++)
            ((long *)buf)[i] = (long)(i * 7 + (size_t)me * 1000 + r);
        T_CHECK(symrail_put_nbi(g_init, buf, sizeof(g_init), right));
        T_CHECK(symrail_quiet());
        T_CHECK(symrail_barrier_all());
        for (size_t i = 0; i < NINIT; i++)
            T_ASSERT(g_init[i] == (long)(i * 7 + (size_t)left * 1000 + r),
                     "round %u: g_init[%zu] = %ld", r, i, g_init[i]);
        /* A get of the right neighbour's (what we put there). */
        memset(buf, 0, NBSS);
        T_CHECK(symrail_get(buf, g_bss, NBSS, right));
        for (size_t i = 0; i < NBSS; i += 4093)
            T_ASSERT(buf[i] == t_byte(me, r, i), "round %u: get of g_bss[%zu] = %u", r, i,
                     buf[i]);
        long tail;
        T_CHECK(symrail_get(&tail, &g_init[NINIT - 1], sizeof(tail), right));
        T_ASSERT(tail == (long)((NINIT - 1) * 7 + (size_t)me * 1000 + r), "get of the tail %ld",
                 tail);
        T_CHECK(symrail_barrier_all());
    }
}

static void test_amo(int me, int n)
{
    const int k = 100;
    for (int i = 0; i < k; i++)
        T_CHECK(symrail_atomic_add(counter(), 1, 0));
    uint64_t old;
    T_CHECK(symrail_atomic_fetch_add(&g_words[1], 5, (me + 1) % n, &old));
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_ASSERT(*counter() == (uint64_t)n * k, "static counter %llu, want %llu",
                 (unsigned long long)*counter(), (unsigned long long)n * k);
    T_ASSERT(g_words[1] == 5, "g_words[1] = %llu after one fetch_add of 5",
             (unsigned long long)g_words[1]);
    /* One winner of a compare-and-swap on PE 0's word. */
    T_CHECK(symrail_atomic_compare_swap(&g_words[2], 0, (uint64_t)me + 1, 0, &old));
    T_CHECK(symrail_barrier_all());
    uint64_t v;
    T_CHECK(symrail_atomic_fetch(&g_words[2], 0, &v));
    T_ASSERT(v >= 1 && v <= (uint64_t)n, "compare_swap left %llu", (unsigned long long)v);
    T_CHECK(symrail_atomic_swap(&g_words[3], (uint64_t)me + 100, (me + 1) % n, &old));
    T_CHECK(symrail_barrier_all());
    T_ASSERT(g_words[3] == (uint64_t)((me + n - 1) % n) + 100, "swap left %llu",
             (unsigned long long)g_words[3]);
    T_CHECK(symrail_barrier_all());
}

static void test_signal(int me, int n)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    static unsigned char buf[256 * 1024];
    for (unsigned r = 1; r <= ROUNDS; r++) {
        for (size_t i = 0; i < sizeof(buf); i++)
            buf[i] = t_byte(me, 100 + r, i);
        T_CHECK(symrail_put_signal(g_bss, buf, sizeof(buf), &g_sig, r, SYMRAIL_SIGNAL_SET,
                                   right));
        uint64_t got;
        T_CHECK(symrail_signal_wait_until(&g_sig, SYMRAIL_CMP_GE, r, &got));
        for (size_t i = 0; i < sizeof(buf); i++)
            T_ASSERT(g_bss[i] == t_byte(left, 100 + r, i), "signal round %u: byte %zu", r, i);
        T_CHECK(symrail_barrier_all());
    }
    /* An ADD signal on a static word, one from every PE. */
    T_CHECK(symrail_put_signal(&g_words[5], &me, 0, &g_words[4], 1, SYMRAIL_SIGNAL_ADD, 0));
    if (me == 0) {
        uint64_t got;
        T_CHECK(symrail_signal_wait_until(&g_words[4], SYMRAIL_CMP_EQ, (uint64_t)n, &got));
    }
    T_CHECK(symrail_barrier_all());
}

static void test_ptr(int me, int n)
{
    int no_ptr = getenv("T_NO_PTR") != NULL;
    const char *ns = getenv("SYMRAIL_TEST_NODE_SIZE");  /* pretended nodes */
    int node = ns ? atoi(ns) : 0;
    g_words[6] = 1000 + (uint64_t)me;
    T_CHECK(symrail_barrier_all());
    for (int pe = 0; pe < n; pe++) {
        uint64_t *p = symrail_ptr(&g_words[6], pe);
        if (pe == me) {
            T_ASSERT(p == &g_words[6], "symrail_ptr of a global on this PE is %p, not %p",
                     (void *)p, (void *)&g_words[6]);
        } else if (no_ptr || (node > 0 && pe / node != me / node)) {
            T_ASSERT(p == NULL, "symrail_ptr to PE %d gave %p without shared memory", pe,
                     (void *)p);
        } else {
            T_ASSERT(p != NULL, "symrail_ptr of a global on PE %d is NULL", pe);
            T_ASSERT(*p == 1000 + (uint64_t)pe, "PE %d's global read through symrail_ptr: %llu",
                     pe, (unsigned long long)*p);
            long *q = symrail_ptr(&g_init[NINIT - 1], pe);
            T_ASSERT(q != NULL, "symrail_ptr of the last .data word on PE %d is NULL", pe);
        }
    }
    T_CHECK(symrail_barrier_all());
}

/* The child's writes stay in the child; the parent's globals stay symmetric. */
static void test_fork(int me, int n)
{
    T_CHECK(symrail_barrier_all());
    pid_t pid = fork();
    T_ASSERT(pid >= 0, "fork failed");
    if (pid == 0) {
        g_forkmark = 0xdead;
        g_bss[0] = 0xab;
        g_init[0] = -5;
        _exit(g_forkmark == 0xdead ? 0 : 3);
    }
    int status;
    T_ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "the child failed");
    T_ASSERT(g_forkmark == 7 && g_init[0] != -5 && g_bss[0] != 0xab,
             "the child's writes reached the parent: %ld %ld %u", g_forkmark, g_init[0],
             g_bss[0]);
    /* Still symmetric after the fork. */
    uint64_t v = 70 + (uint64_t)me;
    T_CHECK(symrail_put(&g_words[7], &v, sizeof(v), (me + 1) % n));
    T_CHECK(symrail_barrier_all());
    T_ASSERT(g_words[7] == 70 + (uint64_t)((me + n - 1) % n), "put after fork: %llu",
             (unsigned long long)g_words[7]);
    T_CHECK(symrail_barrier_all());
}

static void *spinner(void *arg)
{
    uint64_t *done = arg, i = 0;
    while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
        __atomic_store_n(&g_spin, __atomic_load_n(&g_spin, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        i++;
    }
    *done = i;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    pthread_t th;
    uint64_t spun = 0;
    if (strcmp(mode, "threads") == 0) {
        T_ASSERT(pthread_create(&th, NULL, spinner, &spun) == 0, "pthread_create");
        /* It writes before init begins, however late a loaded machine
         * schedules it. */
        while (__atomic_load_n(&g_spin, __ATOMIC_RELAXED) == 0)
            sched_yield();
    }
    /* PE 1's segment is off: the others must refuse globals too. */
    const char *rank = getenv("PMIX_RANK");
    if (strcmp(mode, "mismatch") == 0) {
        if (rank && atoi(rank) == 1)
            setenv("SYMRAIL_SYMMETRIC_DATA", "0", 1);
        mode = "off";
    }
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();

    if (strcmp(mode, "threads") == 0) {
        /* ... and after init returned. */
        for (uint64_t seen = __atomic_load_n(&g_spin, __ATOMIC_RELAXED);
             __atomic_load_n(&g_spin, __ATOMIC_RELAXED) == seen;)
            sched_yield();
        __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
        pthread_join(th, NULL);
        T_ASSERT(spun > 0 && g_spin == spun, "a thread's writes during init were lost: %llu of "
                 "%llu", (unsigned long long)g_spin, (unsigned long long)spun);
        uint64_t v = 1;
        T_CHECK(symrail_put(&g_words[0], &v, sizeof(v), (me + 1) % n));
        T_CHECK(symrail_barrier_all());
        T_ASSERT(g_words[0] == 1, "put to a global after the threaded init");
        if (me == 0)
            printf("ok: data: a thread wrote a global %llu times during init, none lost\n",
                   (unsigned long long)spun);
    } else if (strcmp(mode, "bad") == 0) {
        char c = 0;
        T_EXPECT(symrail_put(&g_init[NINIT - 1], &c, 1u << 30, 0), SYMRAIL_ERR_INVALID);
        T_EXPECT(symrail_put(&c, &c, 1, 0), SYMRAIL_ERR_INVALID);
        symrail_free(g_init);  /* refused, logged */
        T_CHECK(symrail_barrier_all());
        if (me == 0)
            printf("ok: data: bad addresses refused\n");
    } else if (strcmp(mode, "off") == 0) {
        long v = 1;
        T_EXPECT(symrail_put(&g_init[0], &v, sizeof(v), 0), SYMRAIL_ERR_INVALID);
        check_init_values();
        T_CHECK(symrail_barrier_all());
        if (me == 0)
            printf("ok: data: globals refused where they are not symmetric\n");
    } else {
        check_init_values();
        int fork_only = strcmp(mode, "fork") == 0;
        if (!fork_only) {
            test_rma(me, n);
            test_amo(me, n);
            test_signal(me, n);
            test_ptr(me, n);
        }
        test_fork(me, n);
        if (me == 0)
            printf("ok: data: globals and statics symmetric on %d PEs\n", n);
    }
    symrail_finalize();
    return 0;
}
