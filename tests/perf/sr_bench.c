/*
 * sr_bench: point-to-point benchmark in the style of the OSU micro-benchmarks.
 *
 *   symrun -n 2 ./sr_bench [--quick] [--shm | --net [options]]   (--help lists them)
 *
 * PE 0 drives and prints; PE 1 is the target.  Every bandwidth figure is
 * printed next to a plain memcpy between the very same two buffers (the local
 * buffer and the symrail_ptr() view of PE 1's symmetric buffer), measured in
 * the same run and interleaved with the symrail measurement, so the ratio
 * shows the library's overhead rather than the machine's memory system.
 *
 * While PE 0 measures one-sided operations, PE 1 busy-polls a command word
 * in user space, like an MPI target spinning in its progress engine.  One
 * extra row measures puts while PE 1 sleeps inside symrail_barrier_all, which
 * is what an application that waits in the library sees.
 *
 * Network mode (--net, and the default when symrail_ptr() of PE 1 is NULL,
 * as over verbs): there is no memcpy to compare with, so it measures what a
 * network benchmark such as perftest does, with every buffer in the
 * symmetric heap (registered memory: zero-copy, no bounce buffers):
 * put_nbi and get_nbi bandwidth in windows ended by symrail_quiet, blocking
 * put and get bandwidth, for 64 KiB .. 4 MiB, and 8-byte latencies,
 * including a put_signal ping-pong whose half round trip is comparable to
 * ib_write_lat; latencies are timed one operation at a time and reported as
 * median and mean.  PE 1 waits inside the library there (--target-spin: in
 * user space), as perftest's passive side does, so that it does not take a
 * CPU from a software RDMA device.  tests/perf/rxe_bench.sh runs it next to
 * perftest on Soft-RoCE.
 *
 * Exits non-zero if any symrail call fails or data arrives corrupted.
 * Public API only.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <symrail.h>
#include <time.h>

#define TARGET_PE     1
#define MAX_SIZE      ((size_t)16 << 20)
#define MIN_SIZE      ((size_t)8)
#define NBI_WINDOW    64      /* put_nbi/get_nbi issued per quiet, as OSU's window */
#define MAX_ROUNDS    7
#define NOTIFY_TAG    0x5b
/* Network mode: sizes, and how many bytes one nbi window keeps in flight. */
#define NET_MIN_SIZE  ((size_t)64 << 10)
#define NET_MAX_SIZE  ((size_t)4 << 20)
#define NET_WINDOW_BYTES ((size_t)16 << 20)
#define NET_MAX_SIZES 32
/* PE 1 stops spinning and blocks in the library if no command comes for this
 * long, so that a PE 0 that died does not leave it burning a core forever. */
#define IDLE_SPIN_NS  (2ull * 1000 * 1000 * 1000)

#define CHECK(call)                                                               \
    do {                                                                          \
        symrail_status_t st_ = (call);                                            \
        if (st_ != SYMRAIL_OK)                                                    \
            bench_fail(__LINE__, #call, st_);                                     \
    } while (0)

enum {
    CMD_NOP = 1,
    CMD_PREPARE,     /* clear the put target, fill the get source */
    CMD_VERIFY,      /* check the put target, report bad bytes */
    CMD_SIGNAL_PP,   /* answer `arg` put_signal pings */
    CMD_NOTIFY_PP,   /* echo `arg` notifications */
    CMD_BARRIER,     /* join `arg` barriers */
    CMD_SLEEP,       /* block in one barrier_all until PE 0 joins it */
    CMD_STOP,
};

/* Symmetric control block; every word PE 0 and PE 1 signal each other with.
 * Words written by different PEs sit on different cache lines. */
typedef struct {
    _Alignas(64) uint64_t cmd[3];   /* command, argument, sequence base */
    uint64_t seq;                   /* on PE 1: number of the latest command */
    _Alignas(64) uint64_t ack;      /* on PE 0: latest command PE 1 took */
    uint64_t result;                /* on PE 0: answer of CMD_VERIFY */
    _Alignas(64) uint64_t ping;     /* on PE 1 */
    uint64_t pingbuf;
    _Alignas(64) uint64_t pong;     /* on PE 0 */
    uint64_t pongbuf;
    _Alignas(64) uint64_t counter;  /* on PE 1: target of fetch_add */
    _Alignas(64) uint64_t mode;     /* on PE 1: 1 + network mode, set by PE 0 at start */
} ctl_t;

typedef struct {
    int            quick;
    int            rounds;
    double         target_ns;     /* time spent measuring one kernel at one size */
    int            net;           /* network mode: -1 auto, 0 off, 1 on */
    int            target_spin;   /* network mode: PE 1 busy-polls in user space */
    int            bw_only;       /* network mode: no latency table */
    int            window;        /* nbi operations per quiet */
    int            window_opt;    /* --window, or 0: by NET_WINDOW_BYTES */
    double         time_ms;       /* --time-ms, or 0 */
    size_t         max_size;      /* largest transfer, buffer size */
    size_t         sizes[NET_MAX_SIZES];
    int            nsizes;        /* --sizes, or 0 */
    ctl_t         *ctl;
    unsigned char *dst;           /* symmetric: put target on PE 1 */
    unsigned char *gsrc;          /* symmetric: get source on PE 1 */
    unsigned char *dst_map;       /* symrail_ptr(dst, PE 1), or NULL */
    unsigned char *gsrc_map;      /* symrail_ptr(gsrc, PE 1), or NULL */
    unsigned char *src;           /* put source: private, symmetric in network mode */
    unsigned char *gdst;          /* get destination: likewise */
    uint64_t       seq;           /* commands sent so far */
    uint64_t       pp_base;       /* ping-pong values only grow across runs */
    uint64_t       cur_base;
    uint64_t       fadd_expect;   /* what the next fetch_add must return */
    uint64_t       data_errors;
} bench_t;

static void bench_fail(int line, const char *call, symrail_status_t st)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "sr_bench: PE %d: %s failed at line %d: %s", symrail_my_pe(),
             call, line, symrail_strerror(st));
    fprintf(stderr, "%s\n", msg);
    fflush(stdout);
    /* The partner may be blocked waiting for us: end the whole job. */
    symrail_abort(1, msg);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Bytes that no earlier copy can have left in a buffer by chance. */
static unsigned char pattern(size_t i, unsigned salt)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + salt;
    return (unsigned char)(x >> 29);
}

/* ---- PE 1: the target ----------------------------------------------------- */

static void wait_cmd(bench_t *b, uint64_t seq)
{
    if (b->net && !b->target_spin) {
        CHECK(symrail_signal_wait_until(&b->ctl->seq, SYMRAIL_CMP_GE, seq, NULL));
        return;
    }
    uint64_t t0 = now_ns();
    for (unsigned spins = 1; symrail_signal_fetch(&b->ctl->seq) < seq; spins++) {
        cpu_relax();
        if (spins % 1024 == 0) {
            /* Cheap when the machine has a core per PE, fair when it has not. */
            sched_yield();
            if (now_ns() - t0 > IDLE_SPIN_NS) {
                CHECK(symrail_signal_wait_until(&b->ctl->seq, SYMRAIL_CMP_GE, seq, NULL));
                break;
            }
        }
    }
}

static void ack(bench_t *b, uint64_t seq)
{
    CHECK(symrail_atomic_set(&b->ctl->ack, seq, 0));
}

static void serve(bench_t *b)
{
    ctl_t *c = b->ctl;
    for (uint64_t seq = 1;; seq++) {
        wait_cmd(b, seq);
        uint64_t cmd = c->cmd[0], arg = c->cmd[1], base = c->cmd[2];
        switch (cmd) {
        case CMD_NOP:
            ack(b, seq);
            break;
        case CMD_PREPARE:
            memset(b->dst, 0, arg);
            for (size_t i = 0; i < arg; i++)
                b->gsrc[i] = pattern(i, 2);
            ack(b, seq);
            break;
        case CMD_VERIFY: {
            uint64_t bad = 0;
            for (size_t i = 0; i < arg; i++)
                bad += b->dst[i] != pattern(i, 1);
            /* The signal carries the ack, so the result is there when PE 0 sees it. */
            CHECK(symrail_put_signal(&c->result, &bad, sizeof(bad), &c->ack, seq,
                                     SYMRAIL_SIGNAL_SET, 0));
            break;
        }
        case CMD_SIGNAL_PP:
            ack(b, seq);
            for (uint64_t i = 1; i <= arg; i++) {
                uint64_t v = base + i;
                CHECK(symrail_signal_wait_until(&c->ping, SYMRAIL_CMP_GE, v, NULL));
                if (c->pingbuf != v)
                    b->data_errors++;
                CHECK(symrail_put_signal(&c->pongbuf, &v, sizeof(v), &c->pong, v,
                                         SYMRAIL_SIGNAL_SET, 0));
            }
            break;
        case CMD_NOTIFY_PP:
            ack(b, seq);
            for (uint64_t i = 0; i < arg; i++) {
                symrail_notify_t m;
                CHECK(symrail_notify_wait(-1, &m));
                CHECK(symrail_notify_send(0, m.tag, m.payload, m.len));
            }
            break;
        case CMD_BARRIER:
            ack(b, seq);
            for (uint64_t i = 0; i < arg; i++)
                CHECK(symrail_barrier_all());
            break;
        case CMD_SLEEP:
            ack(b, seq);
            CHECK(symrail_barrier_all());
            break;
        case CMD_STOP:
            ack(b, seq);
            return;
        default:
            fprintf(stderr, "sr_bench: PE 1: unknown command %llu\n", (unsigned long long)cmd);
            symrail_abort(1, "sr_bench: protocol error");
        }
    }
}

/* ---- PE 0: the driver ------------------------------------------------------- */

/* Returns once PE 1 has taken the command (for CMD_VERIFY: has answered it). */
static void send_cmd(bench_t *b, uint64_t cmd, uint64_t arg)
{
    b->cur_base = b->pp_base;
    if (cmd == CMD_SIGNAL_PP)
        b->pp_base += arg;
    uint64_t msg[3] = { cmd, arg, b->cur_base };
    b->seq++;
    CHECK(symrail_put_signal(b->ctl->cmd, msg, sizeof(msg), &b->ctl->seq, b->seq,
                             SYMRAIL_SIGNAL_SET, TARGET_PE));
    CHECK(symrail_signal_wait_until(&b->ctl->ack, SYMRAIL_CMP_GE, b->seq, NULL));
}

typedef symrail_status_t (*kern_fn)(bench_t *b, size_t n, uint64_t iters);

static symrail_status_t k_put(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_put(b->dst, b->src, n, TARGET_PE);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

/* A put and its remote completion. */
static symrail_status_t k_put_quiet(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_put(b->dst, b->src, n, TARGET_PE);
        if (st == SYMRAIL_OK)
            st = symrail_quiet();
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

static symrail_status_t k_put_nbi(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_put_nbi(b->dst, b->src, n, TARGET_PE);
        if (st == SYMRAIL_OK && (i + 1) % (uint64_t)b->window == 0)
            st = symrail_quiet();
        if (st != SYMRAIL_OK)
            return st;
    }
    return symrail_quiet();
}

static symrail_status_t k_get(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_get(b->gdst, b->gsrc, n, TARGET_PE);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

static symrail_status_t k_get_nbi(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_get_nbi(b->gdst, b->gsrc, n, TARGET_PE);
        if (st == SYMRAIL_OK && (i + 1) % (uint64_t)b->window == 0)
            st = symrail_quiet();
        if (st != SYMRAIL_OK)
            return st;
    }
    return symrail_quiet();
}

/* The compiler barrier keeps repeated identical copies from being merged. */
static symrail_status_t k_memcpy_put(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        memcpy(b->dst_map, b->src, n);
        __asm__ __volatile__("" ::: "memory");
    }
    return SYMRAIL_OK;
}

static symrail_status_t k_memcpy_get(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        memcpy(b->gdst, b->gsrc_map, n);
        __asm__ __volatile__("" ::: "memory");
    }
    return SYMRAIL_OK;
}

static symrail_status_t k_fetch_add(bench_t *b, size_t n, uint64_t iters)
{
    (void)n;
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t old;
        symrail_status_t st = symrail_atomic_fetch_add(&b->ctl->counter, 1, TARGET_PE, &old);
        if (st != SYMRAIL_OK)
            return st;
        b->data_errors += old != b->fadd_expect++;
    }
    return SYMRAIL_OK;
}

static symrail_status_t k_signal_pp(bench_t *b, size_t n, uint64_t iters)
{
    (void)n;
    for (uint64_t i = 1; i <= iters; i++) {
        uint64_t v = b->cur_base + i;
        symrail_status_t st = symrail_put_signal(&b->ctl->pingbuf, &v, sizeof(v), &b->ctl->ping,
                                                 v, SYMRAIL_SIGNAL_SET, TARGET_PE);
        if (st == SYMRAIL_OK)
            st = symrail_signal_wait_until(&b->ctl->pong, SYMRAIL_CMP_GE, v, NULL);
        if (st != SYMRAIL_OK)
            return st;
        b->data_errors += b->ctl->pongbuf != v;
    }
    return SYMRAIL_OK;
}

static symrail_status_t k_notify_pp(bench_t *b, size_t n, uint64_t iters)
{
    (void)n;
    for (uint64_t i = 0; i < iters; i++) {
        symrail_notify_t m;
        symrail_status_t st = symrail_notify_send(TARGET_PE, NOTIFY_TAG, &i, sizeof(i));
        if (st == SYMRAIL_OK)
            st = symrail_notify_wait(-1, &m);
        if (st != SYMRAIL_OK)
            return st;
        uint64_t echoed;
        memcpy(&echoed, m.payload, sizeof(echoed));
        b->data_errors += m.src_pe != TARGET_PE || m.tag != NOTIFY_TAG ||
                          m.len != sizeof(i) || echoed != i;
    }
    return SYMRAIL_OK;
}

static symrail_status_t k_barrier(bench_t *b, size_t n, uint64_t iters)
{
    (void)b;
    (void)n;
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_barrier_all();
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

static double run_timed(bench_t *b, kern_fn fn, size_t n, uint64_t iters)
{
    uint64_t t0 = now_ns();
    CHECK(fn(b, n, iters));
    uint64_t t = now_ns() - t0;
    return t ? (double)t : 1.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Nanoseconds per operation of each of `nk` kernels at size n.  Each kernel
 * is warmed up while its iteration count is calibrated to one round's share
 * of the time budget; then the kernels run in turns, round after round, so
 * that drift of clock speed or cache state hits all of them alike.  The
 * median round is reported.
 */
static void measure(bench_t *b, size_t n, const kern_fn *k, int nk, double *ns_out)
{
    double round_ns = b->target_ns / b->rounds;
    uint64_t iters[4];
    double samples[4][MAX_ROUNDS];

    for (int j = 0; j < nk; j++) {
        uint64_t it = 1;
        double el;
        for (;;) {
            el = run_timed(b, k[j], n, it);
            if (el >= round_ns / 4 || it >= (1ull << 30))
                break;
            it *= 2;
        }
        double want = round_ns * (double)it / el;
        iters[j] = want < 1 ? 1 : (uint64_t)want;
    }
    for (int r = 0; r < b->rounds; r++)
        for (int j = 0; j < nk; j++)
            samples[j][r] = run_timed(b, k[j], n, iters[j]) / (double)iters[j];
    for (int j = 0; j < nk; j++) {
        qsort(samples[j], (size_t)b->rounds, sizeof(double), cmp_double);
        ns_out[j] = samples[j][b->rounds / 2];
    }
}

/* A cooperative kernel: PE 1 runs its side of `cmd` for the same count. */
static double measure_coop(bench_t *b, uint64_t cmd, kern_fn fn)
{
    uint64_t warm = b->quick ? 50 : 500;
    send_cmd(b, cmd, warm);
    double per = run_timed(b, fn, 0, warm) / (double)warm;
    double want = b->target_ns * 2 / per;
    uint64_t iters = want < 10 ? 10 : want > 1e8 ? 100000000 : (uint64_t)want;
    send_cmd(b, cmd, iters);
    return run_timed(b, fn, 0, iters) / (double)iters;
}

static const char *fmt_size(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zuM", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zuK", n >> 10);
    else
        snprintf(buf, len, "%zu", n);
    return buf;
}

static void print_mbs(double mbs)
{
    if (mbs >= 100)
        printf(" %12.0f", mbs);
    else
        printf(" %12.2f", mbs);
}

/* One bandwidth table: blocking, nbi window, memcpy, and the two ratios. */
static void bw_table(bench_t *b, const char *op, kern_fn blocking, kern_fn nbi, kern_fn copy,
                     int have_map)
{
    char sz[16], h1[24], h2[24], h3[24], h4[24];
    size_t step = b->quick ? 4 : 2;

    printf("\n# %s bandwidth, PE 0 %s PE 1; MB/s = 10^6 bytes/s; memcpy = same buffers via "
           "symrail_ptr\n", op, strcmp(op, "put") == 0 ? "->" : "<-");
    snprintf(h1, sizeof(h1), "%s MB/s", op);
    snprintf(h2, sizeof(h2), "%s_nbi MB/s", op);
    snprintf(h3, sizeof(h3), "%s/memcpy", op);
    snprintf(h4, sizeof(h4), "nbi/memcpy");
    printf("# %7s %12s %12s %12s %12s %12s\n", "bytes", h1, h2, "memcpy MB/s", h3, h4);
    for (size_t n = MIN_SIZE;; n *= step) {
        if (n > MAX_SIZE)
            n = MAX_SIZE;
        kern_fn k[3] = { blocking, nbi, copy };
        double ns[3];
        send_cmd(b, CMD_NOP, 0);    /* keeps PE 1 spinning rather than asleep */
        measure(b, n, k, have_map ? 3 : 2, ns);
        printf("  %7s", fmt_size(n, sz, sizeof(sz)));
        print_mbs(n * 1e3 / ns[0]);
        print_mbs(n * 1e3 / ns[1]);
        if (have_map) {
            print_mbs(n * 1e3 / ns[2]);
            printf(" %12.2f %12.2f\n", ns[2] / ns[0], ns[2] / ns[1]);
        } else {
            printf(" %12s %12s %12s\n", "n/a", "n/a", "n/a");
        }
        fflush(stdout);
        if (n == MAX_SIZE)
            break;
    }
}

static void lat_row(const char *what, double ns)
{
    printf("  %-46s %12.1f %12.2f\n", what, ns, 1e3 / ns);
    fflush(stdout);
}

/* Data check of the largest put and get, before anything is timed. */
static int verify(bench_t *b)
{
    uint64_t bad_get = 0;
    for (size_t i = 0; i < b->max_size; i++)
        b->src[i] = pattern(i, 1);
    send_cmd(b, CMD_PREPARE, b->max_size);
    CHECK(symrail_put(b->dst, b->src, b->max_size, TARGET_PE));
    send_cmd(b, CMD_VERIFY, b->max_size);
    memset(b->gdst, 0, b->max_size);
    CHECK(symrail_get(b->gdst, b->gsrc, b->max_size, TARGET_PE));
    for (size_t i = 0; i < b->max_size; i++)
        bad_get += b->gdst[i] != pattern(i, 2);
    if (b->ctl->result != 0 || bad_get != 0) {
        fprintf(stderr, "sr_bench: data check of %zu bytes FAILED: put %llu bad bytes, "
                "get %llu bad bytes\n", b->max_size, (unsigned long long)b->ctl->result,
                (unsigned long long)bad_get);
        return 1;
    }
    printf("# data check: %zu-byte put and get verified byte for byte\n", b->max_size);
    return 0;
}

static int drive(bench_t *b)
{
    int have_map = b->dst_map != NULL && b->gsrc_map != NULL;
    double ns[4];

    printf("# sr_bench, symrail %s: %d PEs, PE 0 drives, PE 1 is the target\n",
           symrail_version_string(), symrail_n_pes());
    printf("# %s run: %s sizes, ~%.0f ms per kernel and size, median of %d rounds\n",
           b->quick ? "quick" : "full", b->quick ? "power-of-4" : "power-of-2",
           b->target_ns / 1e6, b->rounds);
    printf("# put_nbi/get_nbi: windows of %d operations, each ended by symrail_quiet\n",
           NBI_WINDOW);
    if (!have_map)
        printf("# PE 1's heap is not mapped here (symrail_ptr is NULL): no memcpy reference\n");
    if (verify(b) != 0)
        return 1;

    bw_table(b, "put", k_put, k_put_nbi, k_memcpy_put, have_map);
    bw_table(b, "get", k_get, k_get_nbi, k_memcpy_get, have_map);

    printf("\n# latency and message rate, 8-byte payloads, PE 0 -> PE 1\n");
    printf("# %-46s %12s %12s\n", "operation", "ns/op", "Mops/s");
    {
        kern_fn k[4] = { k_put, k_get, k_put_nbi, k_memcpy_put };
        send_cmd(b, CMD_NOP, 0);
        measure(b, 8, k, have_map ? 4 : 3, ns);
        lat_row("put (blocking)", ns[0]);
        lat_row("get (blocking)", ns[1]);
        lat_row("put_nbi issue rate (window + quiet)", ns[2]);
        if (have_map)
            lat_row("memcpy to symrail_ptr (reference)", ns[3]);
    }
    {
        /* Give PE 1 time to pass its polling phase and fall asleep. */
        kern_fn k[1] = { k_put };
        send_cmd(b, CMD_SLEEP, 0);
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        measure(b, 8, k, 1, ns);
        CHECK(symrail_barrier_all());
        lat_row("put (blocking), PE 1 asleep in barrier_all", ns[0]);
    }
    {
        kern_fn k[1] = { k_fetch_add };
        send_cmd(b, CMD_NOP, 0);
        measure(b, 0, k, 1, ns);
        lat_row("atomic_fetch_add (blocking)", ns[0]);
    }
    lat_row("put_signal SET + signal_wait_until, round trip",
            measure_coop(b, CMD_SIGNAL_PP, k_signal_pp));
    lat_row("notify_send + notify_wait, round trip", measure_coop(b, CMD_NOTIFY_PP, k_notify_pp));
    lat_row("barrier_all (2 PEs)", measure_coop(b, CMD_BARRIER, k_barrier));
    return 0;
}

/* ---- network mode ------------------------------------------------------------ */

/* nbi operations per quiet at size n: NET_WINDOW_BYTES in flight, 1..NBI_WINDOW. */
static int net_window(const bench_t *b, size_t n)
{
    if (b->window_opt > 0)
        return b->window_opt;
    size_t w = NET_WINDOW_BYTES / n;
    return w < 1 ? 1 : w > NBI_WINDOW ? NBI_WINDOW : (int)w;
}

/*
 * Latency with every operation timed on its own: the median shrugs off the
 * scheduling hiccups of an emulated or shared machine, which a mean over a
 * loop does not (perftest reports both, as t_typical and t_avg).  Calls `fn`
 * exactly `count` times, or with count 0 until b->target_ns is spent (at
 * least 20 times).
 */
static void lat_samples(bench_t *b, kern_fn fn, uint64_t count, double *mean_p, double *median_p)
{
    uint64_t n = 0, cap = 1024, t_start = now_ns();
    double *v = malloc(cap * sizeof(*v)), sum = 0;
    if (v == NULL)
        symrail_abort(1, "sr_bench: out of memory");
    while (count ? n < count : n < 20 || (double)(now_ns() - t_start) < b->target_ns) {
        if (n == cap) {
            double *nv = realloc(v, 2 * cap * sizeof(*v));
            if (nv == NULL)
                symrail_abort(1, "sr_bench: out of memory");
            v = nv;
            cap *= 2;
        }
        uint64_t t0 = now_ns();
        CHECK(fn(b, 8, 1));
        v[n] = (double)(now_ns() - t0);
        sum += v[n++];
    }
    qsort(v, n, sizeof(*v), cmp_double);
    *mean_p = sum / (double)n;
    *median_p = v[n / 2];
    free(v);
}

/* k_signal_pp does iteration `cur_base + 1` each call: here, one at a time. */
static symrail_status_t k_signal_pp_one(bench_t *b, size_t n, uint64_t iters)
{
    symrail_status_t st = k_signal_pp(b, n, iters);
    b->cur_base++;
    return st;
}

static void net_lat_row(const char *what, double median_ns, double mean_ns)
{
    printf("  %-50s %12.2f %12.2f\n", what, median_ns / 1e3, mean_ns / 1e3);
    fflush(stdout);
}

/*
 * Bandwidth of put_nbi, put, get_nbi and get at each size, and 8-byte
 * latencies.  All four bandwidth kernels of one size run in turns, round
 * after round (see measure), so a slow spell of the machine hits them alike.
 */
static int drive_net(bench_t *b)
{
    char sz[24];
    double ns[4];
    symrail_stats_t st0, st1;

    printf("# sr_bench --net, symrail %s: %d PEs, PE 0 drives, PE 1 is the target and %s\n",
           symrail_version_string(), symrail_n_pes(),
           b->target_spin ? "busy-polls in user space" : "waits in symrail_signal_wait_until");
    printf("# network mode: put source and get destination in the symmetric heap too "
           "(registered: zero-copy)\n");
    printf("# ~%.0f ms per kernel and size, median of %d rounds; MB/s = 10^6 bytes/s\n",
           b->target_ns / 1e6, b->rounds);
    if (b->window_opt > 0)
        printf("# put_nbi/get_nbi: windows of %d operations, each ended by symrail_quiet\n",
               b->window_opt);
    else
        printf("# put_nbi/get_nbi: windows of %zu MiB (%d..%d operations), each ended by "
               "symrail_quiet\n", NET_WINDOW_BYTES >> 20, 1, NBI_WINDOW);
    if (verify(b) != 0)
        return 1;
    CHECK(symrail_stats(&st0));

    printf("\n# bandwidth, PE 0 -> PE 1 (put) and PE 0 <- PE 1 (get), MB/s\n");
    printf("# %7s %6s %12s %12s %12s %12s\n", "bytes", "window", "put_nbi", "put", "get_nbi",
           "get");
    for (int i = 0; i < b->nsizes; i++) {
        size_t n = b->sizes[i];
        kern_fn k[4] = { k_put_nbi, k_put, k_get_nbi, k_get };
        b->window = net_window(b, n);
        send_cmd(b, CMD_NOP, 0);
        measure(b, n, k, 4, ns);
        printf("  %7s %6d", fmt_size(n, sz, sizeof(sz)), b->window);
        for (int j = 0; j < 4; j++)
            print_mbs(n * 1e3 / ns[j]);
        printf("\n");
        fflush(stdout);
    }
    CHECK(symrail_stats(&st1));
    printf("# PE 0 during the bandwidth runs: %llu work requests (%.1f KiB each), %llu stalls "
           "(qp full %llu, cq full %llu)\n",
           (unsigned long long)(st1.slices_posted - st0.slices_posted),
           st1.slices_posted > st0.slices_posted
               ? (double)(st1.put_bytes - st0.put_bytes + st1.get_bytes - st0.get_bytes) /
                     (double)(st1.slices_posted - st0.slices_posted) / 1024
               : 0.0,
           (unsigned long long)(st1.stalls - st0.stalls),
           (unsigned long long)(st1.qp_full - st0.qp_full),
           (unsigned long long)(st1.cq_full - st0.cq_full));
    if (b->bw_only)
        return 0;

    printf("\n# latency, 8-byte payloads, PE 0 -> PE 1; each operation timed on its own\n");
    printf("# %-50s %12s %12s\n", "operation", "median usec", "mean usec");
    {
        static const char *what[4] = { "put (blocking: until the source may be reused)",
                                       "put + quiet (until remote completion)", "get (blocking)",
                                       "atomic_fetch_add (blocking)" };
        kern_fn k[4] = { k_put, k_put_quiet, k_get, k_fetch_add };
        send_cmd(b, CMD_NOP, 0);
        for (int j = 0; j < 4; j++) {
            double mean, median;
            lat_samples(b, k[j], 0, &mean, &median);
            net_lat_row(what[j], median, mean);
        }
    }
    {
        /* PE 1 answers a fixed count: size it from a short warm-up. */
        double mean, median;
        uint64_t warm = 20;
        send_cmd(b, CMD_SIGNAL_PP, warm);
        double per = run_timed(b, k_signal_pp, 0, warm) / (double)warm;
        double want = b->target_ns / per;
        uint64_t iters = want < 20 ? 20 : want > 1e6 ? 1000000 : (uint64_t)want;
        send_cmd(b, CMD_SIGNAL_PP, iters);
        lat_samples(b, k_signal_pp_one, iters, &mean, &median);
        net_lat_row("put_signal SET ping-pong, round trip", median, mean);
        net_lat_row("put_signal SET ping-pong, one way (round trip/2)", median / 2, mean / 2);
    }
    return 0;
}

static int parse_size(const char *s, size_t *n_p)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end != '\0' || v == 0 || v > MAX_SIZE)
        return -1;
    *n_p = (size_t)v;
    return 0;
}

static int parse_sizes(bench_t *b, const char *list)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    b->nsizes = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (b->nsizes == NET_MAX_SIZES || parse_size(t, &b->sizes[b->nsizes]) != 0)
            return -1;
        b->nsizes++;
    }
    return b->nsizes > 0 ? 0 : -1;
}

static void usage(FILE *f, const char *argv0)
{
    fprintf(f, "usage: symrun -n 2 %s [--quick] [--shm | --net [--sizes LIST] [--window N]\n"
               "       [--time-ms MS] [--target-spin] [--bw-only]]\n"
               "  --quick        fewer sizes and shorter runs, for a smoke test\n"
               "  --net          network mode (the default when symrail_ptr of PE 1 is NULL):\n"
               "                 symmetric buffers on both sides, 64K..4M, perftest-like table\n"
               "  --shm          the memcpy-referenced mode even if PE 1 is not mapped\n"
               "  --sizes LIST   network mode sizes, e.g. 64K,256K,1M,4M (default: powers of\n"
               "                 2 from 64K to 4M; with --quick, powers of 4)\n"
               "  --window N     nbi operations per quiet (default: 16 MiB worth, 1..64)\n"
               "  --time-ms MS   time per kernel and size (network mode default 1500, quick 600)\n"
               "  --target-spin  PE 1 busy-polls in user space rather than waiting in symrail\n"
               "  --bw-only      network mode without the latency table\n",
            argv0);
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof(b));
    b.net = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            b.quick = 1;
        } else if (strcmp(argv[i], "--net") == 0) {
            b.net = 1;
        } else if (strcmp(argv[i], "--shm") == 0) {
            b.net = 0;
        } else if (strcmp(argv[i], "--target-spin") == 0) {
            b.target_spin = 1;
        } else if (strcmp(argv[i], "--bw-only") == 0) {
            b.bw_only = 1;
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            if (parse_sizes(&b, argv[++i]) != 0) {
                fprintf(stderr, "sr_bench: --sizes wants sizes up to 16M like 64K,1M\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc) {
            b.window_opt = atoi(argv[++i]);
            if (b.window_opt < 1) {
                fprintf(stderr, "sr_bench: --window wants a positive count\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--time-ms") == 0 && i + 1 < argc) {
            b.time_ms = atof(argv[++i]);
            if (!(b.time_ms > 0)) {
                fprintf(stderr, "sr_bench: --time-ms wants a positive number\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout, argv[0]);
            return 0;
        } else {
            usage(stderr, argv[0]);
            return 2;
        }
    }
    b.rounds = b.quick ? 3 : 5;
    b.target_ns = b.quick ? 3e6 : 50e6;
    b.window = NBI_WINDOW;
    b.max_size = MAX_SIZE;

    CHECK(symrail_init_status());
    int me = symrail_my_pe();
    if (symrail_n_pes() != 2) {
        if (me == 0)
            fprintf(stderr, "sr_bench: needs exactly 2 PEs, got %d\n", symrail_n_pes());
        symrail_finalize();
        return 1;
    }

    b.ctl = symrail_align(64, sizeof(ctl_t));
    b.dst = symrail_align(4096, MAX_SIZE);
    b.gsrc = symrail_align(4096, MAX_SIZE);
    if (b.ctl == NULL || b.dst == NULL || b.gsrc == NULL)
        symrail_abort(1, "sr_bench: symmetric allocation failed (is SYMRAIL_HEAP_SIZE >= 64M?)");
    memset(b.ctl, 0, sizeof(ctl_t));
    memset(b.dst, 0, MAX_SIZE);
    memset(b.gsrc, 0, MAX_SIZE);
    if (me == 0) {
        b.dst_map = symrail_ptr(b.dst, TARGET_PE);
        b.gsrc_map = symrail_ptr(b.gsrc, TARGET_PE);
    }
    /* Nobody signals a control word before its owner has cleared it. */
    CHECK(symrail_barrier_all());

    /* PE 0 picks the mode; PE 1 learns it, so both allocate alike. */
    if (me == 0) {
        if (b.net < 0)
            b.net = b.dst_map == NULL || b.gsrc_map == NULL;
        CHECK(symrail_atomic_set(&b.ctl->mode, 1 + (uint64_t)b.net, TARGET_PE));
    }
    CHECK(symrail_barrier_all());
    if (me != 0)
        b.net = (int)symrail_signal_fetch(&b.ctl->mode) - 1;

    if (b.net) {
        if (b.nsizes == 0)
            for (size_t n = NET_MIN_SIZE; n <= NET_MAX_SIZE && b.nsizes < NET_MAX_SIZES;
                 n *= b.quick ? 4 : 2)
                b.sizes[b.nsizes++] = n;
        b.max_size = 8;
        for (int i = 0; i < b.nsizes; i++)
            if (b.sizes[i] > b.max_size)
                b.max_size = b.sizes[i];
        b.rounds = 3;
        b.target_ns = b.time_ms > 0 ? b.time_ms * 1e6 : b.quick ? 600e6 : 1500e6;
        /* Symmetric, so registered: transfers go without bounce copies. */
        b.src = symrail_align(4096, b.max_size);
        b.gdst = symrail_align(4096, b.max_size);
        if (b.src == NULL || b.gdst == NULL)
            symrail_abort(1, "sr_bench: symmetric allocation failed (is SYMRAIL_HEAP_SIZE >= 64M?)");
        memset(b.gdst, 0, b.max_size);
        CHECK(symrail_barrier_all());
    } else if (me == 0) {
        b.src = aligned_alloc(4096, MAX_SIZE);
        b.gdst = aligned_alloc(4096, MAX_SIZE);
        if (b.src == NULL || b.gdst == NULL)
            symrail_abort(1, "sr_bench: out of memory");
        memset(b.gdst, 0, MAX_SIZE);
    }

    int rc = 0;
    if (me == 0) {
        rc = b.net ? drive_net(&b) : drive(&b);
        send_cmd(&b, CMD_STOP, 0);
        if (b.data_errors) {
            fprintf(stderr, "sr_bench: %llu operations returned wrong data\n",
                    (unsigned long long)b.data_errors);
            rc = 1;
        }
    } else {
        serve(&b);
        if (b.data_errors) {
            fprintf(stderr, "sr_bench: PE 1: %llu pings carried wrong data\n",
                    (unsigned long long)b.data_errors);
            rc = 1;
        }
    }
    CHECK(symrail_barrier_all());
    if (b.net) {
        symrail_free(b.gdst);
        symrail_free(b.src);
    } else {
        free(b.src);
        free(b.gdst);
    }
    symrail_free(b.gsrc);
    symrail_free(b.dst);
    symrail_free(b.ctl);
    symrail_finalize();
    return rc;
}
