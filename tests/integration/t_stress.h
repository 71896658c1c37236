/* The stress test's shared state (t_stress.c: setup, receiving and the
 * final checks; t_stress_ops.c: the random operations of a worker thread).
 *
 * Ownership keeps writes from racing: worker thread t of PE p is the only
 * writer of its region (p, t) of the symmetric heap, of its signal word, of
 * its atomic words and of its region of every PE's segment, on every PE.
 * The writer keeps a mirror of what each of its regions must hold on each
 * PE, so any read it makes is checked byte for byte, and at the end it
 * hands each owner a checksum of its mirror to check the owner's memory
 * against.  Every payload byte is derived from (seed, writer PE, thread,
 * sequence number), so a notification's receiver recomputes its payload. */
#ifndef T_STRESS_H
#define T_STRESS_H

#include "tcommon.h"

#include <pthread.h>

#define ST_REGION    (384u * 1024)  /* heap bytes of one writer thread on each PE */
#define ST_SEGREGION (256u * 1024)  /* segment bytes of one writer thread on each PE */
#define ST_MAXLEN    (300u * 1024)  /* longest single transfer: several 64 KiB slices */
#define ST_AWORDS    8              /* 64-bit atomic words of one writer on each PE */
#define ST_MAXT      8
#define ST_NCTX      3              /* two created contexts and the default one */
#define ST_ARENA     (1u << 20)     /* sources of put_nbi, held until their quiet */
#define ST_MAXNBI    64
#define ST_BATCH_CAP 64
#define ST_TAG_MSG   7
#define ST_TAG_BATCH 8
#define ST_HDR       16             /* a notification's header: st_hdr_t */
#define ST_BOARD     5              /* words each writer thread leaves each owner */

enum {
    C_PUT, C_PUT_NBI, C_PUT_SIGNAL, C_GET, C_GET_NBI, C_AMO, C_AMO_NBI, C_NOTIFY,
    C_BATCH_W, C_BATCH_R, C_TASKS, C_FENCE, C_QUIET, C_BYTES, C_NCOUNT
};
extern const char *const st_count_name[C_NCOUNT];

typedef struct {
    uint32_t thread, seq;
    uint64_t seed;
} st_hdr_t;

typedef struct {
    unsigned char old[8], want[8];
    size_t width;
    int ctx, q, word;              /* ctx: its context + 1, 0 for a free record */
} st_nbi_t;

typedef struct {
    int t;
    uint64_t rng;
    uint64_t seq;                  /* payloads generated so far */
    symrail_ctx_t ctx[ST_NCTX];
    int dirty[ST_NCTX];            /* stores since its last quiet */
    int unfenced[ST_NCTX];         /* stores since its last fence or quiet */
    int arena_ctx[ST_NCTX];        /* put_nbi sources in the arena */
    unsigned char *arena;
    size_t arena_used;
    unsigned char *src, *buf;      /* ST_MAXLEN each */
    unsigned char *mirror;         /* [npes][ST_REGION] */
    unsigned char *segmirror;      /* [npes][ST_SEGREGION] */
    unsigned char *amo_model;      /* [npes][ST_AWORDS][8] */
    int *amo_pend;                 /* [npes][ST_AWORDS]: ctx + 1 of an nbi atomic on it */
    uint64_t *sig_expect;          /* [npes] */
    uint64_t *sent_msg, *sent_batch; /* [npes] */
    st_nbi_t nbi[ST_MAXNBI];
    int nnbi;
    symrail_rseg_t *rseg;          /* [npes] */
    symrail_batch_t batch;
    uint64_t count[C_NCOUNT];
} st_worker_t;

extern int st_me, st_npes, st_nthreads;
extern uint64_t st_seed, st_max_ops;
extern double st_seconds;
extern unsigned char *st_heap;     /* [npes][nthreads][ST_REGION], symmetric */
extern uint64_t *st_sig;           /* [npes][nthreads], symmetric */
extern uint64_t *st_amo;           /* [npes][nthreads][ST_AWORDS], symmetric */
extern unsigned char *st_seg;      /* [npes][nthreads][ST_SEGREGION], this PE's segment */

#define ST_FAIL(...) t_fail(__FILE__, __LINE__, __VA_ARGS__)
#define ST_REPLAY    "(replay: --seed %llu)"

static inline uint64_t st_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline uint64_t st_rnd(st_worker_t *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

/* The bytes of payload `seq` of writer (pe, t). */
static inline void st_fill(unsigned char *p, size_t n, int pe, int t, uint64_t seq)
{
    uint64_t base = st_mix(st_seed ^ st_mix(((uint64_t)pe << 48) ^ ((uint64_t)t << 40) ^ seq));
    for (size_t i = 0; i < n; i += 8) {
        uint64_t x = st_mix(base + i);
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(p + i, &x, k);
    }
}

static inline uint64_t st_csum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static inline size_t st_slot(int pe, int t)
{
    return (size_t)pe * (size_t)st_nthreads + (size_t)t;
}

/* First differing byte of got against want, or SIZE_MAX. */
static inline size_t st_diff(const unsigned char *got, const unsigned char *want, size_t n)
{
    if (memcmp(got, want, n) == 0)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            return i;
    return SIZE_MAX;
}

/* t_stress_ops.c */
void st_worker_init(st_worker_t *w, int t);
void st_worker_run(st_worker_t *w);
void st_worker_fini(st_worker_t *w);
void st_quiet_all(st_worker_t *w);
void st_check_region(st_worker_t *w, int ci, int q, size_t off, size_t len,
                     const unsigned char *got, const char *what);
/* t_stress.c */
void st_rx_drain(int block);

#endif
