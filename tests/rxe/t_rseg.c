/*
 * A peer's segment over verbs, through the public API (2 PEs: PE 1 owns,
 * PE 0 writes and reads):
 *  - PE 1 registers a malloc'd pool (not page aligned) after init and
 *    sends its descriptor; PE 0 writes all of it in one task (many slices,
 *    sprayed over every lane and rail) and reads it back, every byte
 *    verified on both sides;
 *  - PE 1 deregisters, fills the memory, registers it again at the same
 *    place; a write and a read through the old descriptor fail with
 *    SYMRAIL_ERR_STALE, and the memory registered again is untouched;
 *  - afterwards the lanes the stale accesses broke are repaired and other
 *    traffic works: through the new descriptor, on the heap, barriers.
 * T_RSEG_LEN: pool size (default 1 MiB); T_EXPECT_RAILS and T_EXPECT_REPAIRS
 * as in tcommon.h, for PE 0.  Exit 77 unless run on 2 PEs.
 */
#include <stdint.h>
#include <string.h>

#include "../integration/tcommon.h"

typedef struct {
    size_t        len;
    unsigned char desc[SYMRAIL_SEG_DESC_MAX];
} board_t;

static symrail_status_t one_task(symrail_xfer_op_t op, unsigned char *local, symrail_rseg_t r,
                                 size_t len)
{
    symrail_batch_t b;
    T_CHECK(symrail_batch_create(1, &b));
    T_CHECK(symrail_batch_add(b, op, local, r, 0, len, NULL));
    T_CHECK(symrail_batch_submit(b));
    symrail_status_t st = symrail_batch_wait(b, 60000);
    T_CHECK(symrail_batch_free(b));
    return st;
}

/* PE 1 sends its segment's descriptor; PE 0 imports it. */
static void send_desc(board_t *board, symrail_seg_t seg, symrail_rseg_t *r_p)
{
    if (symrail_my_pe() == 1) {
        board_t mine;
        mine.len = sizeof(mine.desc);
        T_CHECK(symrail_seg_export(seg, mine.desc, &mine.len));
        T_CHECK(symrail_put(board, &mine, sizeof(mine), 0));
    }
    T_CHECK(symrail_barrier_all());
    if (symrail_my_pe() == 0)
        T_CHECK(symrail_seg_import(board->desc, board->len, r_p));
}

int main(void)
{
    T_CHECK(symrail_init_status());
    if (symrail_n_pes() != 2) {
        printf("SKIP: t_rseg runs on 2 PEs\n");
        symrail_finalize();
        return 77;
    }
    int me = symrail_my_pe();
    size_t len = t_env("T_RSEG_LEN", 1u << 20);
    board_t *board = symrail_malloc(sizeof(*board));
    unsigned char *heap = symrail_malloc(len);
    unsigned char *raw = malloc(len + 64), *pool = raw + 40;
    unsigned char *src = malloc(len), *back = malloc(len);
    T_ASSERT(board && heap && raw && src && back, "memory");
    symrail_seg_t seg = NULL;
    symrail_rseg_t r_old = NULL, r_new = NULL;
    if (me == 1) {
        memset(pool, 0xee, len);
        T_CHECK(symrail_seg_register(pool, len, 0, &seg));
    }
    send_desc(board, seg, &r_old);

    /* Write and read the whole pool, every byte verified. */
    if (me == 0) {
        t_fill(src, len, 0, 1);
        T_CHECK(one_task(SYMRAIL_WRITE, src, r_old, len));
        memset(back, 0, len);
        T_CHECK(one_task(SYMRAIL_READ, back, r_old, len));
        size_t d = t_verify(back, len, 0, 1);
        T_ASSERT(d == SIZE_MAX, "read back differs at byte %zu", d);
    }
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        size_t d = t_verify(pool, len, 0, 1);
        T_ASSERT(d == SIZE_MAX, "the pool differs at byte %zu after the write", d);
        /* Withdrawn, and the same memory registered again. */
        T_CHECK(symrail_seg_deregister(seg));
        memset(pool, 0x5a, len);
        T_CHECK(symrail_seg_register(pool, len, 0, &seg));
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        t_fill(src, len, 0, 2);
        symrail_status_t st = one_task(SYMRAIL_WRITE, src, r_old, len);
        T_ASSERT(st == SYMRAIL_ERR_STALE, "write through the old descriptor: %s",
                 symrail_strerror(st));
        st = one_task(SYMRAIL_READ, back, r_old, len);
        T_ASSERT(st == SYMRAIL_ERR_STALE, "read through the old descriptor: %s",
                 symrail_strerror(st));
        printf("ok: rseg: write and read through the old descriptor: %s\n", symrail_strerror(st));
    }
    T_CHECK(symrail_barrier_all());
    if (me == 1)
        for (size_t i = 0; i < len; i++)
            T_ASSERT(pool[i] == 0x5a, "byte %zu of the memory registered again was written", i);

    /* Other traffic: the new descriptor, the heap. */
    send_desc(board, seg, &r_new);
    if (me == 0) {
        t_fill(src, len, 0, 3);
        T_CHECK(one_task(SYMRAIL_WRITE, src, r_new, len));
        T_CHECK(symrail_put(heap, src, len, 1));
        memset(back, 0, len);
        T_CHECK(symrail_get(back, heap, len, 1));
        size_t d = t_verify(back, len, 0, 3);
        T_ASSERT(d == SIZE_MAX, "heap read back differs at byte %zu", d);
        T_CHECK(symrail_rseg_release(r_old));
        T_CHECK(symrail_rseg_release(r_new));
    }
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        size_t d = t_verify(pool, len, 0, 3);
        T_ASSERT(d == SIZE_MAX, "the pool differs at byte %zu through the new descriptor", d);
        d = t_verify(heap, len, 0, 3);
        T_ASSERT(d == SIZE_MAX, "the heap differs at byte %zu", d);
        T_CHECK(symrail_seg_deregister(seg));
    }
    /* T_EXPECT_RAILS, T_EXPECT_REPAIRS: of the writer; the owner only sent
     * its descriptors. */
    if (me == 0)
        t_check_rails();
    t_pass("rseg: a peer's malloc'd segment written and read, stale after deregistering, "
           "other traffic afterwards");
    symrail_free(heap);
    symrail_free(board);
    free(raw);
    free(src);
    free(back);
    symrail_finalize();
    return 0;
}
