/*
 * Segments and batches on any number of PEs (each PE writes to the next
 * one, and reads from it):
 *  - a malloc'd pool and a symrail_seg_alloc'd one are registered, the same
 *    range twice gives the same segment, descriptors travel through the
 *    heap and are imported;
 *  - a paged batch writes non-contiguous blocks (runs of adjacent ones
 *    coalesced) into the next PE's pool, with a notification at the end:
 *    when the owner receives it, every byte is there, and nothing outside
 *    the blocks was touched; per-task status and bytes;
 *  - a READ batch over the layers form brings them back, byte for byte;
 *  - memory registered while a batch from it is in flight deregisters once
 *    the batch is done;
 *  - bad input is refused with nothing added: outside the segment, zero
 *    length, past the capacity, an import in use, no batch;
 *  - after the owner deregisters, a batch through the old descriptor fails
 *    with SYMRAIL_ERR_STALE, its notification says so, and memory registered
 *    anew at the same place is untouched; importing the old descriptor is
 *    refused too;
 *  - names: publish, lookup on one PE and on any PE, a timeout for a name
 *    never published, unpublish (through the launcher, or with
 *    SYMRAIL_TEST_NAMES_LOCAL=1 by asking the peers).
 * `T_SEG_SELF=1` makes every PE target itself (a one-PE job does anyway);
 * `T_SEG_NO_STALE=1` leaves the stale descriptors out.
 */
#include <stdint.h>
#include <string.h>

#include "tcommon.h"

#define BLOCK     4096u
#define NBLOCKS   64u
#define POOL      (BLOCK * NBLOCKS)
#define LAYERS    3u
#define TAG_DONE  7u

typedef struct {
    size_t        len[2];
    unsigned char desc[2][SYMRAIL_SEG_DESC_MAX];
} board_t;

static int me, npes, next, prev;

/* The blocks written: some alone, some in runs, in a shuffled order. */
static const uint32_t src_idx[] = { 0, 1, 2, 3, 9, 5, 6, 7, 20, 40, 41, 42, 63, 30 };
static const uint32_t dst_idx[] = { 10, 11, 12, 13, 25, 50, 51, 52, 33, 0, 1, 2, 63, 60 };
#define NB (sizeof(src_idx) / sizeof(src_idx[0]))

static size_t count_runs(void)
{
    size_t runs = 0;
    for (size_t i = 0; i < NB; i++)
        if (i == 0 || src_idx[i] != src_idx[i - 1] + 1 || dst_idx[i] != dst_idx[i - 1] + 1)
            runs++;
    return runs;
}

static void exchange(board_t *board, symrail_seg_t a, symrail_seg_t b, symrail_rseg_t *r_p)
{
    /* Zeroed: the whole board travels, past each descriptor's end too. */
    board_t mine;
    memset(&mine, 0, sizeof(mine));
    symrail_seg_t segs[2] = { a, b };
    for (int k = 0; k < 2; k++) {
        mine.len[k] = sizeof(mine.desc[k]);
        T_CHECK(symrail_seg_export(segs[k], mine.desc[k], &mine.len[k]));
        T_ASSERT(mine.len[k] <= SYMRAIL_SEG_DESC_MAX, "descriptor of %zu bytes", mine.len[k]);
    }
    /* My descriptors go to the PE that writes to me. */
    T_CHECK(symrail_put(board, &mine, sizeof(mine), prev));
    T_CHECK(symrail_barrier_all());
    for (int k = 0; k < 2; k++)
        T_CHECK(symrail_seg_import(board->desc[k], board->len[k], &r_p[k]));
    int pe;
    size_t len;
    T_CHECK(symrail_rseg_info(r_p[0], &pe, &len));
    T_ASSERT(pe == next && len == POOL, "rseg_info: PE %d, %zu bytes", pe, len);
}

static void check_pool(const unsigned char *pool, int writer, unsigned round)
{
    /* Written blocks carry the writer's pattern at the source index;
     * every other byte keeps the 0xee the owner put there. */
    static unsigned char want[POOL];
    memset(want, 0xee, sizeof(want));
    unsigned char src[POOL];
    t_fill(src, POOL, writer, round);
    for (size_t i = 0; i < NB; i++)
        memcpy(want + (size_t)dst_idx[i] * BLOCK, src + (size_t)src_idx[i] * BLOCK, BLOCK);
    for (size_t i = 0; i < POOL; i++)
        T_ASSERT(pool[i] == want[i], "byte %zu of the pool is %#x, want %#x (writer PE %d)", i,
                 pool[i], want[i], writer);
}

static void write_blocks(symrail_rseg_t dst, unsigned char *src, unsigned round)
{
    symrail_batch_t b;
    size_t first = 99, ntasks = 0;
    T_CHECK(symrail_batch_create(64, &b));
    T_CHECK(symrail_batch_add_blocks(b, SYMRAIL_WRITE, src, src_idx, dst, 0, dst_idx, NB, BLOCK,
                                     &first, &ntasks));
    T_ASSERT(first == 0 && ntasks == count_runs(), "add_blocks: tasks %zu..+%zu, want 0..+%zu",
             first, ntasks, count_runs());
    uint32_t payload[1024];
    for (unsigned i = 0; i < 1024; i++)
        payload[i] = (uint32_t)me * 1000003u + i;
    T_CHECK(symrail_batch_submit_notify(b, next, TAG_DONE + round, payload, 200));
    T_CHECK(symrail_batch_wait(b, -1));
    for (size_t t = 0; t < ntasks; t++) {
        symrail_task_state_t state;
        size_t bytes;
        T_CHECK(symrail_batch_status(b, t, &state, &bytes));
        T_ASSERT(state == SYMRAIL_TASK_DONE && bytes > 0 && bytes % BLOCK == 0,
                 "task %zu: state %d, %zu bytes", t, (int)state, bytes);
    }
    symrail_task_state_t state;
    size_t bytes;
    T_CHECK(symrail_batch_status(b, SYMRAIL_BATCH_ALL, &state, &bytes));
    T_ASSERT(state == SYMRAIL_TASK_DONE && bytes == NB * BLOCK, "batch: state %d, %zu bytes",
             (int)state, bytes);
    T_CHECK(symrail_batch_free(b));
}

static void wait_done(unsigned round)
{
    symrail_notify_t m;
    T_CHECK(symrail_notify_wait(-1, &m));
    T_ASSERT(m.tag == TAG_DONE + round && m.src_pe == prev && m.len == 200,
             "notification tag %u from PE %d, %zu bytes", m.tag, m.src_pe, m.len);
    T_ASSERT(m.status == SYMRAIL_OK, "notification status %d", (int)m.status);
    uint32_t p0;
    memcpy(&p0, m.payload + 4 * 7, 4);
    T_ASSERT(p0 == (uint32_t)prev * 1000003u + 7, "payload word 7 is %u", p0);
}

static void bad_input(symrail_rseg_t dst, unsigned char *src)
{
    symrail_batch_t b;
    T_CHECK(symrail_batch_create(2, &b));
    T_EXPECT(symrail_batch_add(b, SYMRAIL_WRITE, src, dst, POOL - 10, 11, NULL),
             SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_batch_add(b, SYMRAIL_WRITE, src, dst, UINT64_MAX - 2, 8, NULL),
             SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_batch_add(b, SYMRAIL_WRITE, src, dst, 0, 0, NULL), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_batch_add(b, (symrail_xfer_op_t)5, src, dst, 0, 8, NULL),
             SYMRAIL_ERR_INVALID);
    size_t task = 99;
    T_CHECK(symrail_batch_add(b, SYMRAIL_WRITE, src, dst, 0, 8, &task));
    T_ASSERT(task == 0, "first task is %zu", task);
    /* Three runs do not fit in the one place left: none is added. */
    static const uint32_t li[] = { 0, 5, 9 }, ri[] = { 0, 5, 9 };
    T_EXPECT(symrail_batch_add_blocks(b, SYMRAIL_WRITE, src, li, dst, 0, ri, 3, BLOCK, NULL,
                                      NULL), SYMRAIL_ERR_INVALID);
    /* A block past the end of the segment: none is added either. */
    static const uint32_t far[] = { NBLOCKS };
    T_EXPECT(symrail_batch_add_blocks(b, SYMRAIL_WRITE, src, li, dst, 0, far, 1, BLOCK, NULL,
                                      NULL), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_batch_add(b, SYMRAIL_WRITE, src, dst, 8, 8, &task));
    T_ASSERT(task == 1, "second task is %zu (a refused call added something)", task);
    /* Room enough, the last block past the end: the blocks before it are
     * not added either. */
    symrail_batch_t b2;
    static const uint32_t last_far[] = { 0, 5, NBLOCKS };
    T_CHECK(symrail_batch_create(8, &b2));
    T_EXPECT(symrail_batch_add_blocks(b2, SYMRAIL_WRITE, src, li, dst, 0, last_far, 3, BLOCK,
                                      NULL, NULL), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_batch_add(b2, SYMRAIL_WRITE, src, dst, 0, 8, &task));
    T_ASSERT(task == 0, "first task is %zu after a refused add_blocks", task);
    T_CHECK(symrail_batch_free(b2));
    T_EXPECT(symrail_batch_add(b, SYMRAIL_WRITE, src, dst, 16, 8, NULL), SYMRAIL_ERR_INVALID);
    /* An import in use by a batch is not released. */
    T_EXPECT(symrail_rseg_release(dst), SYMRAIL_ERR_STATE);
    T_EXPECT(symrail_batch_status(b, 2, NULL, NULL), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_batch_free(b));
    T_EXPECT(symrail_batch_submit(NULL), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_batch_create(0, &b), SYMRAIL_ERR_INVALID);
}

static void stale(board_t *board, unsigned char *pool, symrail_seg_t seg, symrail_rseg_t dst,
                  unsigned char *src)
{
    /* Keep the old descriptor of my own pool for the import check below. */
    board_t old = *board;
    size_t mylen = sizeof(old.desc[0]);
    T_CHECK(symrail_seg_export(seg, old.desc[0], &mylen));
    T_CHECK(symrail_seg_deregister(seg));
    /* The same memory again, under a new generation. */
    memset(pool, 0x5a, POOL);
    symrail_seg_t again;
    T_CHECK(symrail_seg_register(pool, POOL, 0, &again));
    T_CHECK(symrail_barrier_all());

    symrail_batch_t b;
    T_CHECK(symrail_batch_create(4, &b));
    T_CHECK(symrail_batch_add(b, SYMRAIL_WRITE, src, dst, 0, BLOCK, NULL));
    T_CHECK(symrail_batch_submit_notify(b, next, 99, "stale", 5));
    symrail_status_t st = symrail_batch_wait(b, -1);
    T_ASSERT(st == SYMRAIL_ERR_STALE, "a write through a stale descriptor gave %d (%s)", (int)st,
             symrail_strerror(st));
    symrail_task_state_t state;
    T_EXPECT(symrail_batch_status(b, 0, &state, NULL), SYMRAIL_ERR_STALE);
    T_ASSERT(state == SYMRAIL_TASK_FAILED, "stale task state %d", (int)state);
    T_CHECK(symrail_batch_free(b));

    symrail_notify_t m;
    T_CHECK(symrail_notify_wait(-1, &m));
    T_ASSERT(m.tag == 99 && m.status == SYMRAIL_ERR_STALE && m.len == 5,
             "failure notification: tag %u status %d len %zu", m.tag, (int)m.status, m.len);
    T_CHECK(symrail_barrier_all());
    for (size_t i = 0; i < POOL; i++)
        T_ASSERT(pool[i] == 0x5a, "byte %zu of memory registered again was written", i);
    symrail_rseg_t r;
    T_EXPECT(symrail_seg_import(old.desc[0], mylen, &r), SYMRAIL_ERR_STALE);
    T_CHECK(symrail_seg_deregister(again));
}

/* A local buffer registered as a segment while a batch from it is in
 * flight is no segment of the batch's: once the batch ends it deregisters
 * at once. */
static void late_local(symrail_rseg_t dst)
{
    size_t len = POOL * LAYERS;
    unsigned char *buf = malloc(len);
    T_ASSERT(buf != NULL, "malloc");
    memset(buf, 0x33, len);
    for (int i = 0; i < 8; i++) {
        symrail_batch_t b;
        symrail_seg_t late;
        T_CHECK(symrail_batch_create(1, &b));
        T_CHECK(symrail_batch_add(b, SYMRAIL_WRITE, buf, dst, 0, len, NULL));
        T_CHECK(symrail_batch_submit(b));
        T_CHECK(symrail_seg_register(buf, len, 0, &late));
        T_CHECK(symrail_batch_wait(b, -1));
        T_CHECK(symrail_batch_free(b));
        T_CHECK(symrail_seg_deregister(late));
    }
    free(buf);
}

/* Names: each PE publishes its pool, the PE before it finds it by name on
 * this PE and on any PE; a name nobody publishes times out; an unpublished
 * one is gone. */
static void names(symrail_seg_t seg)
{
    char name[64], theirs[64];
    snprintf(name, sizeof(name), "pool.%d", me);
    snprintf(theirs, sizeof(theirs), "pool.%d", next);
    T_CHECK(symrail_seg_publish(seg, name));
    T_EXPECT(symrail_seg_publish(seg, name), SYMRAIL_ERR_STATE);
    if (me == 0)
        T_CHECK(symrail_seg_publish(seg, "pool.first"));
    symrail_rseg_t r, any;
    T_CHECK(symrail_seg_lookup(next, theirs, 20000, &r));
    int pe;
    size_t len;
    T_CHECK(symrail_rseg_info(r, &pe, &len));
    T_ASSERT(pe == next && len == POOL, "lookup of %s: PE %d, %zu bytes", theirs, pe, len);
    T_CHECK(symrail_seg_lookup(SYMRAIL_ANY_PE, "pool.first", 20000, &any));
    T_CHECK(symrail_rseg_info(any, &pe, NULL));
    T_ASSERT(pe == 0, "lookup of pool.first on any PE found PE %d's", pe);
    T_EXPECT(symrail_seg_lookup(next, "never.published", 200, &r), SYMRAIL_ERR_TIMEOUT);
    T_EXPECT(symrail_seg_lookup(next, "", 200, &r), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_rseg_release(any));
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_seg_unpublish(name));
    T_EXPECT(symrail_seg_unpublish(name), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_barrier_all());
    T_EXPECT(symrail_seg_lookup(next, theirs, 200, &r), SYMRAIL_ERR_TIMEOUT);
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_CHECK(symrail_seg_unpublish("pool.first"));
}

int main(void)
{
    T_CHECK(symrail_init_status());
    me = symrail_my_pe();
    npes = symrail_n_pes();
    int self = t_env("T_SEG_SELF", 0) != 0;
    next = self ? me : (me + 1) % npes;
    prev = self ? me : (me + npes - 1) % npes;
    board_t *board = symrail_malloc(sizeof(board_t));
    T_ASSERT(board != NULL, "symrail_malloc");

    unsigned char *pool = malloc(POOL), *src = malloc(POOL * LAYERS), *back = malloc(POOL);
    T_ASSERT(pool && src && back, "malloc");
    memset(pool, 0xee, POOL);
    symrail_seg_t seg, seg2, dup;
    T_CHECK(symrail_seg_register(pool, POOL, 0, &seg));
    T_CHECK(symrail_seg_register(pool, POOL, 0, &dup));
    T_ASSERT(dup == seg, "the same range registered twice gave two segments");
    T_CHECK(symrail_seg_deregister(dup));  /* one registration remains */
    unsigned char *apool;
    T_CHECK(symrail_seg_alloc(POOL * LAYERS, 0, (void **)&apool, &seg2));
    memset(apool, 0xee, POOL * LAYERS);

    symrail_rseg_t r[2];
    exchange(board, seg, seg2, r);
    names(seg);

    /* Round 0: paged write into the malloc'd pool. */
    t_fill(src, POOL, me, 0);
    write_blocks(r[0], src, 0);
    wait_done(0);
    check_pool(pool, prev, 0);

    /* Round 1: layers into the allocated pool, then read back. */
    symrail_batch_t b;
    t_fill(src, POOL * LAYERS, me, 1);
    T_CHECK(symrail_batch_create(NB * LAYERS, &b));
    size_t ntasks;
    T_CHECK(symrail_batch_add_layers(b, SYMRAIL_WRITE, src, POOL, r[1], 0, POOL, LAYERS, src_idx,
                                     dst_idx, NB, BLOCK, NULL, &ntasks));
    T_ASSERT(ntasks == count_runs() * LAYERS, "add_layers gave %zu tasks", ntasks);
    T_CHECK(symrail_batch_submit_notify(b, next, TAG_DONE + 1, NULL, 0));
    T_CHECK(symrail_batch_wait(b, 10000));
    T_CHECK(symrail_batch_reset(b));
    symrail_notify_t m;
    T_CHECK(symrail_notify_wait(-1, &m));
    T_ASSERT(m.tag == TAG_DONE + 1 && m.len == 0 && m.status == SYMRAIL_OK,
             "layers notification");
    T_CHECK(symrail_barrier_all());
    memset(back, 0, POOL);
    T_CHECK(symrail_batch_add(b, SYMRAIL_READ, back, r[1], POOL * (LAYERS - 1), POOL, NULL));
    T_CHECK(symrail_batch_submit(b));
    T_CHECK(symrail_batch_wait(b, -1));
    T_CHECK(symrail_batch_free(b));
    for (size_t i = 0; i < NB; i++)
        T_ASSERT(memcmp(back + (size_t)dst_idx[i] * BLOCK,
                        src + (size_t)(LAYERS - 1) * POOL + (size_t)src_idx[i] * BLOCK,
                        BLOCK) == 0, "block %u read back differs", dst_idx[i]);

    T_CHECK(symrail_barrier_all());
    late_local(r[1]);
    bad_input(r[0], src);
    T_CHECK(symrail_barrier_all());
    /* Every PE at once: over verbs each stale access breaks a queue pair at
     * both ends, under the barriers' atomics. */
    if (!t_env("T_SEG_NO_STALE", 0))
        stale(board, pool, seg, r[0], src);
    else
        T_CHECK(symrail_seg_deregister(seg));

    T_CHECK(symrail_rseg_release(r[0]));
    T_CHECK(symrail_rseg_release(r[1]));
    T_CHECK(symrail_seg_deregister(seg2));
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        printf("ok: seg: segments, paged batches, notifications%s (%d PEs)\n",
               t_env("T_SEG_NO_STALE", 0) ? "" : " and stale descriptors", npes);
    symrail_free(board);
    free(pool);
    free(src);
    free(back);
    symrail_finalize();
    return 0;
}
