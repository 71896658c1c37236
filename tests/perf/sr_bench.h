/*
 * What the parts of sr_bench share: the control block and commands between
 * PE 0 and PE 1, the state of a run, and the kernels and timing that both
 * the shared-memory and the network tables use.  sr_bench.c says what the
 * benchmark measures.
 */
#ifndef SR_BENCH_H
#define SR_BENCH_H

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
    int            put_nbi_only;  /* network mode: put_nbi bandwidth alone */
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
    unsigned char *psrc, *pdst;   /* network mode: private (malloc'd) put source, get destination */
    uint64_t       seq;           /* commands sent so far */
    uint64_t       pp_base;       /* ping-pong values only grow across runs */
    uint64_t       cur_base;
    uint64_t       fadd_expect;   /* what the next fetch_add must return */
    uint64_t       data_errors;
} bench_t;

typedef symrail_status_t (*kern_fn)(bench_t *b, size_t n, uint64_t iters);

static inline uint64_t now_ns(void)
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
static inline unsigned char pattern(size_t i, unsigned salt)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + salt;
    return (unsigned char)(x >> 29);
}

/* sr_bench_common.c: failing, the command protocol, PE 1's side, timing. */
void bench_fail(int line, const char *call, symrail_status_t st);
void send_cmd(bench_t *b, uint64_t cmd, uint64_t arg);
void serve(bench_t *b);
double run_timed(bench_t *b, kern_fn fn, size_t n, uint64_t iters);
int cmp_double(const void *a, const void *b);
void measure(bench_t *b, size_t n, const kern_fn *k, int nk, double *ns_out);
double measure_coop(bench_t *b, uint64_t cmd, kern_fn fn);
const char *fmt_size(size_t n, char *buf, size_t len);
void print_mbs(double mbs);
int verify(bench_t *b);

/* sr_bench_kern.c: what is timed; each kernel runs `iters` operations. */
symrail_status_t k_put(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_put_priv(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_get_priv(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_put_quiet(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_put_nbi(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_get(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_get_nbi(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_memcpy_put(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_memcpy_get(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_fetch_add(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_signal_pp(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_notify_pp(bench_t *b, size_t n, uint64_t iters);
symrail_status_t k_barrier(bench_t *b, size_t n, uint64_t iters);

/* sr_bench_shm.c and sr_bench_net.c: the two modes, run by PE 0. */
int drive(bench_t *b);
int drive_net(bench_t *b);

#endif
