/*
 * Segments of the verbs transport through its ops table (tl.h, "Regions"):
 * one PE with an endpoint to itself over every rail.
 *
 *   t_verbs_seg [thread_multiple]
 *     registers a malloc'd buffer as a segment after the wireup, packs its
 *     key and unpacks it on the endpoint under high import numbers, writes
 *     and reads it in slices sprayed over every lane (inline, bounced and
 *     zero-copy from another segment), every byte verified; checks that a
 *     buffer inside a local segment goes zero-copy (also inside a segment
 *     that overlaps another) and one outside goes through the bounce
 *     buffers; deregisters, registers the same memory again under the same
 *     id with the next generation, and checks that every slice through the
 *     old key fails with SYMRAIL_ERR_STALE and leaves the memory untouched,
 *     that the broken lanes are repaired, and that traffic through the new
 *     key and on the heap works afterwards.
 *   t_verbs_seg bench [MiB...]
 *     the cost of registering a pool: ibv_reg_mr + ibv_dereg_mr alone on
 *     the first device, against mem_reg + mem_dereg of the transport (on
 *     every device it uses), per GiB.
 *
 * Exit 77 where no RDMA device is present.
 */
#include "config.h"
#include "tl_self.h"

#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const sr_tl_ops_t *ops = &sr_tl_verbs_ops;

#define HEAP_LEN  (1u << 20)
#define SEG_LEN   (3u << 20)
#define SLICE     (64u * 1024)   /* below the bounce buffers' size */
#define RK_OLD    300u           /* the importer's numbers: a second chunk, and the last one */
#define RK_NEW    65535u
#define SEG_ID    (SR_TL_REGION_SEG0 + 5)
#define LOC_ID    (SR_TL_REGION_SEG0 + 9)

static sr_tl_ctx_t *ctx;
static sr_tl_ep_t *ep;
static int nlanes, failed;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL: " __VA_ARGS__); \
    fputc('\n', stderr); failed = 1; } } while (0)

typedef struct {
    sr_tl_comp_t     comp;
    int              done;
    symrail_status_t status;
} wcomp_t;

static void comp_cb(sr_tl_comp_t *comp, symrail_status_t status)
{
    wcomp_t *w = (wcomp_t *)comp;
    w->status = status;
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static void notify_cb(void *arg, int src, uint32_t tag, const void *p, size_t len)
{
    (void)arg, (void)src, (void)tag, (void)p, (void)len;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Posts one slice (waiting for room), returns what the post returned. */
static symrail_status_t post(int is_put, int lane, void *local, uint32_t region, uint64_t roff,
                             size_t len, wcomp_t *w)
{
    memset(w, 0, sizeof(*w));
    w->comp.cb = comp_cb;
    symrail_status_t st;
    for (;;) {
        st = is_put ? ops->put(ep, lane, local, region, roff, len, &w->comp)
                    : ops->get(ep, lane, local, region, roff, len, &w->comp);
        if (st != SYMRAIL_ERR_AGAIN)
            break;
        ops->progress(ctx);
    }
    if (st != SR_TL_INPROGRESS) {
        w->status = st;
        w->done = 1;
    }
    return st;
}

static symrail_status_t wait_comp(wcomp_t *w)
{
    double t0 = now_s();
    while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) && now_s() - t0 < 60)
        ops->progress(ctx);
    return w->done ? w->status : SYMRAIL_ERR_TIMEOUT;
}

static symrail_status_t flush_all(void)
{
    wcomp_t w;
    memset(&w, 0, sizeof(w));
    w.comp.cb = comp_cb;
    symrail_status_t st = ops->flush(ep, (1u << nlanes) - 1, &w.comp);
    if (st != SR_TL_INPROGRESS)
        return st;
    return wait_comp(&w);
}

/* The lanes that are up, waiting up to 60 s for all of them. */
static int lanes_up(void)
{
    uint32_t wt[SR_TL_MAX_LANES];
    double t0 = now_s();
    int up = 0;
    do {
        ops->progress(ctx);
        int n = ops->ep_lanes(ep, wt, SR_TL_MAX_LANES);
        up = 0;
        for (int l = 0; l < n; l++)
            up += wt[l] != 0;
    } while (up < nlanes && now_s() - t0 < 60);
    return up;
}

/* Moves len bytes between local and (region, roff) in slices of up to
 * SLICE bytes (the first few tiny, to go inline), lane after lane; every
 * slice's status must be `want`.  Returns the number that were. */
static int transfer(int is_put, unsigned char *local, uint32_t region, size_t len,
                    symrail_status_t want)
{
    enum { MAXS = 128 };
    static wcomp_t w[MAXS];
    size_t off = 0;
    int n = 0, good = 0;
    while (off < len && n < MAXS) {
        size_t s = n < 3 ? (size_t)(7 + 20 * n) : SLICE;
        if (s > len - off)
            s = len - off;
        post(is_put, n % nlanes, local + off, region, off, s, &w[n]);
        off += s;
        n++;
    }
    CHECK(off == len, "transfer of %zu bytes does not fit %d slices", len, MAXS);
    for (int i = 0; i < n; i++) {
        symrail_status_t st = wait_comp(&w[i]);
        good += st == want;
        CHECK(st == want, "%s slice %d through region %u: status %d, expected %d",
              is_put ? "put" : "get", i, region, (int)st, (int)want);
    }
    return good;
}

static void fill(unsigned char *p, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)(seed + i * 131 + (i >> 9));
}

static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i])
            return i;
    return len;
}

static symrail_status_t pack_unpack(uint32_t id, uint32_t rk)
{
    unsigned char blob[SR_TL_MKEY_MAX];
    size_t blen = sizeof(blob);
    symrail_status_t st = ops->mkey_pack(ctx, id, blob, &blen);
    if (st != SYMRAIL_OK)
        return st;
    return ops->rkey_unpack(ep, rk, blob, blen);
}

static int run_segments(void)
{
    unsigned char *heap = aligned_alloc(4096, HEAP_LEN);
    /* Not page aligned, as a pool from malloc is not. */
    unsigned char *raw = malloc(SEG_LEN + 64), *seg = raw + 24;
    unsigned char *priv = malloc(SEG_LEN), *back = malloc(SEG_LEN), *loc = malloc(SEG_LEN);
    unsigned char *expect = malloc(SEG_LEN);
    memset(heap, 0, HEAP_LEN);
    memset(seg, 0, SEG_LEN);
    void *addr = tl_self_connect(ctx, heap, HEAP_LEN, &ep);
    if (addr == NULL)
        return 1;
    uint32_t wt[SR_TL_MAX_LANES];
    nlanes = ops->ep_lanes(ep, wt, SR_TL_MAX_LANES);

    /* After the wireup: a segment, and its key on the endpoint. */
    sr_tl_mem_t sm = { .addr = seg, .len = SEG_LEN, .generation = 1 };
    CHECK(ops->mem_reg(ctx, SEG_ID, &sm) == SYMRAIL_OK, "mem_reg of a malloc'd segment");
    CHECK(pack_unpack(SEG_ID, RK_OLD) == SYMRAIL_OK, "mkey_pack / rkey_unpack");
    unsigned char blob[SR_TL_MKEY_MAX];
    size_t blen = 4;
    CHECK(ops->mkey_pack(ctx, SEG_ID, blob, &blen) == SYMRAIL_ERR_TRUNCATED,
          "mkey_pack into 4 bytes is refused");
    CHECK(ops->rkey_unpack(ep, 1, blob, 4) == SYMRAIL_ERR_INVALID, "rkey_unpack of region 1");

    /* Write and read it from private memory, every byte verified. */
    fill(priv, SEG_LEN, 1);
    int n = transfer(1, priv, RK_OLD, SEG_LEN, SYMRAIL_OK);
    size_t d = first_diff(seg, priv, SEG_LEN);
    CHECK(d == SEG_LEN, "segment differs at byte %zu after %d puts", d, n);
    memset(back, 0, SEG_LEN);
    transfer(0, back, RK_OLD, SEG_LEN, SYMRAIL_OK);
    d = first_diff(back, priv, SEG_LEN);
    CHECK(d == SEG_LEN, "read back differs at byte %zu", d);

    /* A local segment: its buffers go zero-copy (in flight at return),
     * others through the bounce buffers (complete at return). */
    sr_tl_mem_t lm = { .addr = loc, .len = SEG_LEN, .generation = 1 };
    CHECK(ops->mem_reg(ctx, LOC_ID, &lm) == SYMRAIL_OK, "mem_reg of a local segment");
    sr_tl_mem_t inner = { .addr = loc + 4096, .len = 8192, .generation = 1 };
    CHECK(ops->mem_reg(ctx, LOC_ID + 1, &inner) == SYMRAIL_OK, "mem_reg inside another");
    wcomp_t w;
    fill(loc, SEG_LEN, 2);
    symrail_status_t st = post(1, 0, loc + 100000, SR_TL_REGION_HEAP, 0, 4096, &w);
    CHECK(st == SR_TL_INPROGRESS, "put from a local segment to the heap: %d, not zero-copy", st);
    CHECK(wait_comp(&w) == SYMRAIL_OK && memcmp(heap, loc + 100000, 4096) == 0,
          "zero-copy put to the heap");
    st = post(1, 0, priv, SR_TL_REGION_HEAP, 0, 4096, &w);
    CHECK(st == SYMRAIL_OK, "put from private memory to the heap: %d, not bounced", st);
    CHECK(ops->mem_dereg(ctx, LOC_ID) == SYMRAIL_OK, "mem_dereg of the outer segment");
    st = post(1, 0, loc + 5000, SR_TL_REGION_HEAP, 0, 4096, &w);
    CHECK(st == SR_TL_INPROGRESS && wait_comp(&w) == SYMRAIL_OK,
          "put from the inner segment is zero-copy: %d", st);
    st = post(1, 0, loc + 100000, SR_TL_REGION_HEAP, 0, 4096, &w);
    CHECK(st == SYMRAIL_OK, "put from deregistered memory is bounced: %d", st);
    CHECK(flush_all() == SYMRAIL_OK, "flush");
    CHECK(ops->mem_dereg(ctx, LOC_ID + 1) == SYMRAIL_OK, "mem_dereg of the inner segment");
    CHECK(ops->mem_dereg(ctx, LOC_ID + 1) == SYMRAIL_ERR_INVALID, "mem_dereg twice is refused");
    CHECK(ops->mem_reg(ctx, LOC_ID, &lm) == SYMRAIL_OK, "mem_reg of the local segment again");
    /* Zero-copy both ways between the two segments. */
    fill(loc, SEG_LEN, 3);
    transfer(1, loc, RK_OLD, SEG_LEN, SYMRAIL_OK);
    d = first_diff(seg, loc, SEG_LEN);
    CHECK(d == SEG_LEN, "segment differs at byte %zu after zero-copy puts", d);
    memset(loc, 0, SEG_LEN);
    transfer(0, loc, RK_OLD, SEG_LEN, SYMRAIL_OK);
    d = first_diff(loc, seg, SEG_LEN);
    CHECK(d == SEG_LEN, "zero-copy read differs at byte %zu", d);
    printf("ok: segment of %u bytes written and read in slices over %d lanes, zero-copy from "
           "local segments\n", SEG_LEN, nlanes);

    /* Withdrawn: the same memory again under the same id, next generation. */
    CHECK(ops->mem_dereg(ctx, SEG_ID) == SYMRAIL_OK, "mem_dereg");
    sm.generation = 2;
    CHECK(ops->mem_reg(ctx, SEG_ID, &sm) == SYMRAIL_OK, "mem_reg at the same place again");
    memcpy(expect, seg, SEG_LEN);
    fill(priv, SEG_LEN, 4);
    int stale = transfer(1, priv, RK_OLD, SEG_LEN, SYMRAIL_ERR_STALE);
    stale += transfer(0, back, RK_OLD, 1u << 20, SYMRAIL_ERR_STALE);
    uint64_t old = 0;
    memset(&w, 0, sizeof(w));
    w.comp.cb = comp_cb;
    st = ops->atomic(ep, 0, SR_TL_AMO_ADD, RK_OLD, 64, 1, 0, &old, &w.comp);
    CHECK(st == SYMRAIL_ERR_STALE, "atomic through the old key: %d", st);
    d = first_diff(seg, expect, SEG_LEN);
    CHECK(d == SEG_LEN, "memory registered again changed at byte %zu through the old key", d);
    int up = lanes_up();
    CHECK(up == nlanes, "%d of %d lanes up after the stale accesses", up, nlanes);
    printf("ok: %d slices through the old key failed with SYMRAIL_ERR_STALE, the memory "
           "registered again is untouched, %d lanes up again\n", stale, up);

    /* Other traffic works: the new key, and the heap. */
    CHECK(pack_unpack(SEG_ID, RK_NEW) == SYMRAIL_OK, "unpack of the new key");
    fill(priv, SEG_LEN, 5);
    transfer(1, priv, RK_NEW, SEG_LEN, SYMRAIL_OK);
    d = first_diff(seg, priv, SEG_LEN);
    CHECK(d == SEG_LEN, "segment differs at byte %zu through the new key", d);
    memset(&w, 0, sizeof(w));
    w.comp.cb = comp_cb;
    uint64_t before;
    memcpy(&before, seg + 64, 8);
    st = ops->atomic(ep, nlanes - 1, SR_TL_AMO_ADD, RK_NEW, 64, 5, 0, &old, &w.comp);
    CHECK(st == SR_TL_INPROGRESS && wait_comp(&w) == SYMRAIL_OK && old == before,
          "fetch-add through the new key");
    uint64_t after;
    memcpy(&after, seg + 64, 8);
    CHECK(after == before + 5, "fetch-add applied");
    transfer(1, priv, SR_TL_REGION_HEAP, HEAP_LEN, SYMRAIL_OK);
    CHECK(flush_all() == SYMRAIL_OK, "flush after the repairs");
    d = first_diff(heap, priv, HEAP_LEN);
    CHECK(d == HEAP_LEN, "heap differs at byte %zu after the repairs", d);
    ops->rkey_release(ep, RK_OLD);
    ops->rkey_release(ep, RK_NEW);
    st = post(1, 0, priv, RK_NEW, 0, 100, &w);
    CHECK(st == SYMRAIL_ERR_INVALID, "put through a released key: %d", st);
    symrail_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    ops->stats(ctx, &stats);
    CHECK(stats.repairs >= 1, "no lane was repaired");
    CHECK(ops->mem_dereg(ctx, SEG_ID) == SYMRAIL_OK && ops->mem_dereg(ctx, LOC_ID) == SYMRAIL_OK,
          "mem_dereg at the end");
    ops->disconnect(ep);
    ops->fini(ctx);
    free(addr);
    free(heap);
    free(raw);
    free(priv);
    free(back);
    free(loc);
    free(expect);
    if (failed)
        return 1;
    printf("ok: verbs segments: traffic through the new key and on the heap after %llu lane "
           "repairs\n", (unsigned long long)stats.repairs);
    return 0;
}

/* Registration cost: ibv_reg_mr alone against the transport's mem_reg. */
static int run_bench(int argc, char **argv)
{
    int ndev = 0;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    const char *want = getenv("SYMRAIL_IB_DEVICES");
    struct ibv_device *dev = NULL;
    for (int i = 0; list && i < ndev && !dev; i++)
        if (!want || strncmp(ibv_get_device_name(list[i]), want,
                             strcspn(want, ",:")) == 0)
            dev = list[i];
    struct ibv_context *ic = dev ? ibv_open_device(dev) : NULL;
    struct ibv_pd *pd = ic ? ibv_alloc_pd(ic) : NULL;
    if (pd == NULL) {
        printf("SKIP: no RDMA device to measure\n");
        return 77;
    }
    int rounds = 5;
    printf("registration of a pool, per GiB (median of %d, memory touched before):\n", rounds);
    printf("%10s %16s %16s %16s %16s\n", "pool MiB", "ibv_reg_mr s/GiB", "dereg_mr s/GiB",
           "mem_reg s/GiB", "mem_dereg s/GiB");
    for (int a = 2; a < argc; a++) {
        size_t len = (size_t)atol(argv[a]) << 20;
        char *buf = aligned_alloc(4096, len);
        if (buf == NULL)
            return 1;
        memset(buf, 1, len);
        double t[4][8], gib = (double)len / (1u << 30);
        for (int r = 0; r < rounds; r++) {
            double t0 = now_s();
            struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
                                           IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                           IBV_ACCESS_REMOTE_ATOMIC);
            double t1 = now_s();
            if (mr == NULL || ibv_dereg_mr(mr) != 0) {
                perror("ibv_reg_mr");
                return 1;
            }
            double t2 = now_s();
            sr_tl_mem_t m = { .addr = buf, .len = len, .generation = (uint32_t)r + 1 };
            if (ops->mem_reg(ctx, SR_TL_REGION_SEG0, &m) != SYMRAIL_OK)
                return 1;
            double t3 = now_s();
            if (ops->mem_dereg(ctx, SR_TL_REGION_SEG0) != SYMRAIL_OK)
                return 1;
            double t4 = now_s();
            t[0][r] = (t1 - t0) / gib;
            t[1][r] = (t2 - t1) / gib;
            t[2][r] = (t3 - t2) / gib;
            t[3][r] = (t4 - t3) / gib;
        }
        double med[4];
        for (int k = 0; k < 4; k++) {
            for (int i = 1; i < rounds; i++)
                for (int j = i; j > 0 && t[k][j] < t[k][j - 1]; j--) {
                    double x = t[k][j];
                    t[k][j] = t[k][j - 1];
                    t[k][j - 1] = x;
                }
            med[k] = t[k][rounds / 2];
        }
        printf("%10zu %16.4f %16.4f %16.4f %16.4f\n", len >> 20, med[0], med[1], med[2], med[3]);
        free(buf);
    }
    ibv_dealloc_pd(pd);
    ibv_close_device(ic);
    ibv_free_device_list(list);
    ops->fini(ctx);
    printf("ok: registration measured\n");
    return 0;
}

int main(int argc, char **argv)
{
    int bench = argc > 1 && strcmp(argv[1], "bench") == 0;
    int mt = argc > 1 && !bench ? atoi(argv[1]) : 0;
    sr_env_t env;
    int rc = tl_self_init("t_verbs_seg", mt, notify_cb, &env, &ctx);
    if (rc != 0)
        return rc;
    rc = bench ? run_bench(argc, argv) : run_segments();
    sr_env_release(&env);
    return rc;
}
