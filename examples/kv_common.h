/*
 * Helpers of the KV-cache transfer demo (kv_transfer.c): its options, the
 * pattern that makes every byte of a block checkable, clocks, percentiles
 * and the plot.  Nothing here calls symrail.
 */
#ifndef KV_COMMON_H
#define KV_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KV_MAX_LIST 8

typedef struct {
    int      prefill;                    /* PEs 0..prefill-1 fill; -1: half the job */
    unsigned layers;
    unsigned blocks;                     /* per layer of a decode pool; 0: about 128 MiB */
    size_t   block_bytes[KV_MAX_LIST];
    unsigned nblock_bytes;
    unsigned bpr[KV_MAX_LIST];           /* blocks per request (in every layer) */
    unsigned nbpr;
    unsigned requests;                   /* per prefill PE and configuration */
    unsigned inflight;                   /* requests one prefill PE has on the way */
    int      verify;                     /* fill and check every byte */
    int      malloc_pool;                /* malloc + symrail_seg_register, not seg_alloc */
    int      corrupt;                    /* spoil one word of the first request (tests) */
    const char *plot;                    /* PNG to draw, or NULL */
    const char *listen, *connect;        /* two jobs: the directory of the endpoints */
} kv_opts_t;

static inline uint64_t kv_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "16K" -> 16384; 0 on a malformed size. */
static inline size_t kv_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    default: break;
    }
    return *end == '\0' ? (size_t)v : 0;
}

/* A comma list of sizes ("4K,16K,64K"); the count, or 0 if one is bad. */
static inline unsigned kv_size_list(const char *s, size_t *out, unsigned max)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    unsigned n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == max || (out[n] = kv_size(tok)) == 0)
            return 0;
        n++;
    }
    return n;
}

static inline void kv_usage(FILE *f)
{
    fprintf(f,
        "usage: symrun -n N kv_transfer [options]\n"
        "  --prefill P             PEs 0..P-1 are prefill, the others decode (default N/2;\n"
        "                          a one-PE job is both)\n"
        "  --layers L              layers of the KV cache (default 32)\n"
        "  --blocks B              blocks per layer of a decode pool (default: ~128 MiB)\n"
        "  --block-bytes LIST      block sizes to run, e.g. 4K,16K,64K (default 16K)\n"
        "  --blocks-per-request L  request sizes, blocks in every layer (default 16,64)\n"
        "  --requests R            requests per prefill PE and configuration (default 16)\n"
        "  --inflight W            requests a prefill PE has on the way (default 2)\n"
        "  --verify                fill and check every byte (else each block's ends)\n"
        "  --malloc                pools from malloc + symrail_seg_register\n"
        "                          (default symrail_seg_alloc: local peers map them)\n"
        "  --corrupt               spoil one word of the first request (the check must see it)\n"
        "  --plot FILE.png         draw throughput and latency (gnuplot); --no-plot\n"
        "  --listen DIR            two jobs: this one decodes, its endpoints go to DIR;\n"
        "                          --prefill P is then the other job's size (default: ours)\n"
        "  --connect DIR           two jobs: this one prefills, connecting to DIR's endpoints\n"
        "                          (give both jobs the same options)\n");
}

/* 0, or 1 after printing why (to stderr, PE 0 only: `loud`). */
static inline int kv_parse(int argc, char **argv, kv_opts_t *o, int loud)
{
    *o = (kv_opts_t){ .prefill = -1, .layers = 32, .requests = 16, .inflight = 2,
                      .block_bytes = { 16384 }, .nblock_bytes = 1,
                      .bpr = { 16, 64 }, .nbpr = 2, .plot = "kv_transfer.png" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t list[KV_MAX_LIST];
        int used = 1;
        if (!strcmp(a, "--verify"))
            o->verify = 1, used = 0;
        else if (!strcmp(a, "--malloc"))
            o->malloc_pool = 1, used = 0;
        else if (!strcmp(a, "--corrupt"))
            o->corrupt = 1, used = 0;
        else if (!strcmp(a, "--no-plot"))
            o->plot = NULL, used = 0;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return kv_usage(stdout), 1;
        else if (v == NULL)
            goto bad;
        else if (!strcmp(a, "--prefill"))
            o->prefill = atoi(v);
        else if (!strcmp(a, "--layers"))
            o->layers = (unsigned)atoi(v);
        else if (!strcmp(a, "--blocks"))
            o->blocks = (unsigned)atoi(v);
        else if (!strcmp(a, "--requests"))
            o->requests = (unsigned)atoi(v);
        else if (!strcmp(a, "--inflight"))
            o->inflight = (unsigned)atoi(v);
        else if (!strcmp(a, "--plot"))
            o->plot = v;
        else if (!strcmp(a, "--listen"))
            o->listen = v;
        else if (!strcmp(a, "--connect"))
            o->connect = v;
        else if (!strcmp(a, "--block-bytes")) {
            if ((o->nblock_bytes = kv_size_list(v, o->block_bytes, KV_MAX_LIST)) == 0)
                goto bad;
        } else if (!strcmp(a, "--blocks-per-request")) {
            if ((o->nbpr = kv_size_list(v, list, KV_MAX_LIST)) == 0)
                goto bad;
            for (unsigned k = 0; k < o->nbpr; k++)
                o->bpr[k] = (unsigned)list[k];
        } else
            goto bad;
        i += used;
    }
    for (unsigned k = 0; k < o->nblock_bytes; k++)
        if (o->block_bytes[k] % 8 || o->block_bytes[k] >= (1u << 30))
            goto bad;
    if (o->layers == 0 || o->requests == 0 || o->inflight == 0 || o->inflight > 64)
        goto bad;
    return 0;
bad:
    if (loud) {
        fprintf(stderr, "kv_transfer: bad or missing option value\n");
        kv_usage(stderr);
    }
    return 1;
}

/* Word w of block `blk` (its place in the request) of layer `layer` of
 * request `req`: a block that lands in the wrong place, or a stale one,
 * does not match. */
static inline uint64_t kv_word(uint32_t req, uint32_t layer, uint32_t blk, uint64_t w)
{
    uint64_t x = ((uint64_t)req << 40) ^ ((uint64_t)layer << 20) ^ blk;
    x = x * UINT64_C(0x9e3779b97f4a7c15) + (w + 1) * UINT64_C(0xd1b54a32d192ed03);
    return x ^ (x >> 31);
}

/* Every word (`all`), or the first and last one of the block. */
static inline void kv_fill(uint64_t *p, size_t bytes, uint32_t req, uint32_t layer,
                           uint32_t blk, int all)
{
    size_t n = bytes / 8;
    if (!all) {
        p[0] = kv_word(req, layer, blk, 0);
        p[n - 1] = kv_word(req, layer, blk, n - 1);
        return;
    }
    for (size_t w = 0; w < n; w++)
        p[w] = kv_word(req, layer, blk, w);
}

/* The words that differ from the pattern. */
static inline size_t kv_check(const uint64_t *p, size_t bytes, uint32_t req, uint32_t layer,
                              uint32_t blk, int all)
{
    size_t n = bytes / 8, bad = 0;
    if (!all)
        return (p[0] != kv_word(req, layer, blk, 0)) +
               (p[n - 1] != kv_word(req, layer, blk, n - 1));
    for (size_t w = 0; w < n; w++)
        bad += p[w] != kv_word(req, layer, blk, w);
    return bad;
}

static int kv_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n), sorting v. */
static inline double kv_quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), kv_cmp_double);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

/* Throughput and latency against request size, one line per block size,
 * from the table kv_transfer writes (one gnuplot data block per block size,
 * columns: block_KiB req_MiB GB/s p50_ms p99_ms; `titles` names the blocks). */
static inline void kv_plot(const char *dat, const char *png, const char *titles, unsigned n)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("kv_transfer: no gnuplot here: table in %s, no plot\n", dat);
        return;
    }
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "gnuplot -e \"set terminal png size 1000,420; set output '%s';"
             " t='%s'; set multiplot layout 1,2; set logscale x 2; set key top left;"
             " set xlabel 'request (MiB)'; set ylabel 'GB/s'; set title 'throughput';"
             " plot for [i=0:%u] '%s' index i using 2:3 with linespoints title word(t,i+1);"
             " set ylabel 'ms'; set logscale y; set title 'latency p50 (bars to p99)';"
             " plot for [i=0:%u] '%s' index i using 2:4:4:5 with yerrorlines title word(t,i+1);"
             " unset multiplot\" 2>&1",
             png, titles, n - 1, dat, n - 1, dat);
    if (system(cmd) == 0)
        printf("kv_transfer: plot in %s\n", png);
    else
        printf("kv_transfer: gnuplot failed: table in %s\n", dat);
}

#endif
