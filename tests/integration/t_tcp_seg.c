/*
 * Segments over TCP (run with SYMRAIL_TRANSPORTS=tcp and 2 or more PEs;
 * every PE writes to the next one and reads from it):
 *  - a malloc'd pool is registered and imported by the PE before it; one
 *    write of the whole pool, sliced and sprayed over every lane, and one at
 *    an odd offset and length, then a read of it all back: every byte
 *    verified at the owner and at the reader;
 *  - the owner deregisters and registers the same memory again: writes and
 *    reads through the old descriptor, large and small, fail with
 *    SYMRAIL_ERR_STALE, bring nothing, touch nothing, and are not retried
 *    on another lane; heap puts and the new descriptor still work on the
 *    same connections;
 *  - a deregistration racing with the peer's writes: the writer keeps
 *    batches in flight while the owner deregisters, and the owner's memory
 *    as it was when deregister returned is what stays.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tcommon.h"

#define POOL  (8u << 20)
#define CHUNK (1u << 20)

typedef struct {
    size_t        len;
    unsigned char desc[SYMRAIL_SEG_DESC_MAX];
} board_t;

static int me, npes, next, prev;
static board_t *board;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* My segment's descriptor goes to the PE that writes to me; I import the
 * next PE's. */
static symrail_rseg_t import_next(symrail_seg_t seg)
{
    board_t mine;
    symrail_rseg_t r;
    mine.len = sizeof(mine.desc);
    T_CHECK(symrail_seg_export(seg, mine.desc, &mine.len));
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_put(board, &mine, sizeof(mine), prev));
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_seg_import(board->desc, board->len, &r));
    return r;
}

/* One batch of `n` tasks of len bytes each, local buffer and remote offset
 * advancing; submitted and waited for. */
static symrail_status_t xfer(symrail_xfer_op_t op, unsigned char *local, symrail_rseg_t rseg,
                             uint64_t roff, size_t len, size_t n)
{
    symrail_batch_t b;
    T_CHECK(symrail_batch_create(n, &b));
    for (size_t i = 0; i < n; i++)
        T_CHECK(symrail_batch_add(b, op, local + i * len, rseg, roff + i * len, len, NULL));
    T_CHECK(symrail_batch_submit(b));
    symrail_status_t st = symrail_batch_wait(b, -1);
    T_CHECK(symrail_batch_free(b));
    return st;
}

static void bulk(unsigned char *pool, symrail_rseg_t r, unsigned char *src, unsigned char *back)
{
    symrail_stats_t s;
    t_fill(src, POOL, me, 1);
    T_CHECK(xfer(SYMRAIL_WRITE, src, r, 0, POOL, 1));
    T_CHECK(symrail_barrier_all());
    size_t bad = t_verify(pool, POOL, prev, 1);
    T_ASSERT(bad == SIZE_MAX, "byte %zu of the pool PE %d wrote is %#x", bad, prev,
             bad == SIZE_MAX ? 0 : pool[bad]);
    /* The writer's next round must not land while this one is checked. */
    T_CHECK(symrail_barrier_all());
    /* An odd offset and length, in slices that end anywhere. */
    t_fill(src, POOL, me, 2);
    T_CHECK(xfer(SYMRAIL_WRITE, src, r, 12345, CHUNK + 7, 3));
    T_CHECK(symrail_barrier_all());
    unsigned char *want = malloc(POOL);
    T_ASSERT(want != NULL, "no memory");
    t_fill(want, POOL, prev, 1);
    t_fill(want + 12345, 3 * (CHUNK + 7), prev, 2);
    T_ASSERT(memcmp(pool, want, POOL) == 0, "the pool differs after the odd write");
    memset(back, 0, POOL);
    T_CHECK(xfer(SYMRAIL_READ, back, r, 0, POOL / 8, 8));
    t_fill(want, POOL, me, 1);
    t_fill(want + 12345, 3 * (CHUNK + 7), me, 2);
    T_ASSERT(memcmp(back, want, POOL) == 0, "what was read back differs");
    free(want);
    T_CHECK(symrail_stats(&s));
    unsigned lanes = 0;
    for (uint32_t i = 0; i < s.nrails; i++)
        lanes += strncmp(s.rails[i].name, "tcp:", 4) == 0 && s.rails[i].bytes > 0;
    unsigned long want_lanes = t_env("SYMRAIL_TCP_LANES", 2);
    T_ASSERT(lanes == want_lanes, "%u TCP lanes carried data, expected %lu", lanes, want_lanes);
}

/* Deregistered, and the same memory registered again: the old descriptor
 * is stale; returns the new segment. */
static symrail_seg_t stale(unsigned char *pool, symrail_seg_t seg, symrail_rseg_t old,
                           unsigned char *src, unsigned char *back)
{
    symrail_stats_t s0, s1;
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_seg_deregister(seg));
    memset(pool, 0x5a, POOL);
    symrail_seg_t again;
    T_CHECK(symrail_seg_register(pool, POOL, 0, &again));
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_stats(&s0));
    t_fill(src, POOL, me, 3);
    for (int k = 0; k < 3; k++) {
        T_EXPECT(xfer(SYMRAIL_WRITE, src, old, 0, POOL, 1), SYMRAIL_ERR_STALE);
        T_EXPECT(xfer(SYMRAIL_WRITE, src, old, 64, 8, 4), SYMRAIL_ERR_STALE);
        memset(back, 0x11, CHUNK);
        T_EXPECT(xfer(SYMRAIL_READ, back, old, 0, CHUNK / 4, 4), SYMRAIL_ERR_STALE);
        for (size_t i = 0; i < CHUNK; i++)
            T_ASSERT(back[i] == 0x11, "byte %zu of a stale read was written", i);
    }
    T_CHECK(symrail_barrier_all());
    for (size_t i = 0; i < POOL; i++)
        T_ASSERT(pool[i] == 0x5a, "byte %zu of memory registered again was written", i);

    /* The same connections carry other traffic as before: every lane is
     * still up and takes its share. */
    unsigned char *heap = symrail_malloc(CHUNK);
    T_ASSERT(heap != NULL, "symrail_malloc failed");
    T_CHECK(symrail_stats(&s0));
    T_CHECK(symrail_put(heap, src, CHUNK, next));
    T_CHECK(symrail_barrier_all());
    T_ASSERT(t_verify(heap, CHUNK, prev, 3) == SIZE_MAX, "a heap put after stale accesses");
    T_CHECK(symrail_stats(&s1));
    for (uint32_t i = 0; i < s1.nrails; i++)
        T_ASSERT(s1.rails[i].bytes > s0.rails[i].bytes, "lane %s carries nothing after stale "
                 "accesses", s1.rails[i].name);
    T_CHECK(symrail_barrier_all());
    symrail_free(heap);
    T_CHECK(symrail_rseg_release(old));
    return again;
}

/* The writer keeps batches in flight; the owner deregisters meanwhile. */
static void race(unsigned char *pool, symrail_seg_t seg, unsigned char *src, unsigned char *snap)
{
    symrail_rseg_t r = import_next(seg);
    unsigned ok = 0, stale_after = 0, k = 0;
    int gone = 0;
    /* Two patterns in turn: a write that lands late changes the bytes. */
    unsigned char *alt = malloc(POOL), *pat[2] = { src, alt };
    T_ASSERT(alt != NULL, "no memory");
    t_fill(src, POOL, me, 4);
    t_fill(alt, POOL, me, 5);
    T_CHECK(symrail_barrier_all());
    uint64_t t0 = now_ms(), dereg_at = 20 + 7 * (uint64_t)me;
    while (stale_after < 3) {
        T_ASSERT(now_ms() - t0 < 60000, "the peer's segment never went stale");
        if (!gone && now_ms() - t0 >= dereg_at) {
            T_CHECK(symrail_seg_deregister(seg));
            memcpy(snap, pool, POOL);
            gone = 1;
        }
        symrail_status_t st = xfer(SYMRAIL_WRITE, pat[k++ % 2], r, 0, CHUNK, POOL / CHUNK);
        T_ASSERT(st == SYMRAIL_OK || st == SYMRAIL_ERR_STALE, "a racing write gave %d (%s)",
                 (int)st, symrail_strerror(st));
        if (st == SYMRAIL_OK) {
            T_ASSERT(stale_after == 0, "a write succeeded after one was stale");
            ok++;
        } else {
            stale_after++;
        }
    }
    if (!gone) {
        T_CHECK(symrail_seg_deregister(seg));
        memcpy(snap, pool, POOL);
    }
    T_CHECK(symrail_barrier_all());
    T_ASSERT(memcmp(pool, snap, POOL) == 0, "the pool changed after deregister returned");
    printf("PE %d: %u batches of %u MiB landed before the segment of PE %d went\n", me, ok,
           POOL >> 20, next);
    T_CHECK(symrail_rseg_release(r));
    free(alt);
}

int main(void)
{
    T_CHECK(symrail_init_status());
    me = symrail_my_pe();
    npes = symrail_n_pes();
    if (npes < 2) {
        printf("SKIP: t_tcp_seg needs 2 or more PEs\n");
        symrail_finalize();
        return 77;
    }
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
    board = symrail_calloc(1, sizeof(*board));
    unsigned char *pool = aligned_alloc(4096, POOL), *src = malloc(POOL), *back = malloc(POOL);
    T_ASSERT(board && pool && src && back, "allocation failed");
    memset(pool, 0xee, POOL);
    symrail_seg_t seg;
    T_CHECK(symrail_seg_register(pool, POOL, 0, &seg));
    symrail_rseg_t r = import_next(seg);

    bulk(pool, r, src, back);
    seg = stale(pool, seg, r, src, back);
    race(pool, seg, src, back);

    free(pool);
    free(src);
    free(back);
    symrail_free(board);
    t_pass("tcp segments: sliced transfers, stale descriptors, a racing deregistration");
    symrail_finalize();
    return 0;
}
