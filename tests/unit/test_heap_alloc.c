/*
 * Unit tests of the symmetric heap's offset allocator.  Every PE runs its own
 * copy of this allocator, so besides the usual allocator properties the tests
 * insist on determinism: identical call sequences must give identical offsets.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/heap_alloc.h"

/* A start that is page aligned but not aligned to anything larger, like the
 * real heap (its first page is reserved), so large alignments need padding. */
#define REGION_START 4096u
#define REGION_SIZE  (8u << 20)

typedef struct {
    sr_heap_alloc_t h;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    if (f == NULL || sr_heap_alloc_init(&f->h, REGION_START, REGION_SIZE) != SYMRAIL_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    sr_heap_alloc_fini(&f->h);
    free(f);
    return 0;
}

/* The allocator's whole observable state, to prove a failed call changed nothing. */
typedef struct {
    sr_heap_seg_t *segs;
    size_t         nsegs;
    uint64_t       used_bytes;
} snapshot_t;

static snapshot_t snap_take(const sr_heap_alloc_t *h)
{
    snapshot_t s = { malloc(h->nsegs * sizeof(*h->segs)), h->nsegs, h->used_bytes };
    assert_non_null(s.segs);
    memcpy(s.segs, h->segs, h->nsegs * sizeof(*h->segs));
    return s;
}

static void snap_check_and_free(snapshot_t *s, const sr_heap_alloc_t *h)
{
    assert_int_equal(s->nsegs, h->nsegs);
    assert_int_equal(s->used_bytes, h->used_bytes);
    for (size_t i = 0; i < s->nsegs; i++) {
        assert_int_equal(s->segs[i].off, h->segs[i].off);
        assert_int_equal(s->segs[i].len, h->segs[i].len);
        assert_int_equal(s->segs[i].used, h->segs[i].used);
    }
    free(s->segs);
    s->segs = NULL;
}

/* The segment list must tile the region exactly and never hold two adjacent
 * free segments (coalescing keeps it minimal). */
static void check_invariants(const sr_heap_alloc_t *h)
{
    uint64_t boff, blen;
    uint64_t expect = h->start, used = 0;
    assert_true(h->nsegs >= 1);
    for (size_t i = 0; i < h->nsegs; i++) {
        assert_int_equal(h->segs[i].off, expect);
        assert_true(h->segs[i].len > 0);
        if (i > 0)
            assert_false(!h->segs[i].used && !h->segs[i - 1].used);
        if (h->segs[i].used)
            used += h->segs[i].len;
        expect += h->segs[i].len;
    }
    assert_int_equal(expect, h->start + h->size);
    assert_int_equal(used, h->used_bytes);
    /* The table of block ends (both levels) passes 16 bytes at the first,
     * middle and last 16 bytes of a segment exactly when it is live, with
     * the block's end (or 0 where the second levels ran out); sr_heap_block
     * finds the segment. */
    for (size_t i = 0; i < h->nsegs; i++) {
        sr_heap_seg_t s = h->segs[i];
        uint64_t at3[3] = { s.off, s.off + (s.len / 2 & ~(uint64_t)15), s.off + s.len - 16 };
        for (int k = 0; k < 3; k++) {
            uint64_t at = at3[k], g = at >> SR_HEAP_GRAN_SHIFT, t = h->lim[g];
            if (at + 16 > t && h->l2[g] != NULL)
                t = h->l2[g][(at >> 4) & (SR_HEAP_L2_SLOTS - 1)];
            /* The inline test passes exactly for live blocks, at their end. */
            int pass = at + 16 <= t;
            if (s.used && !pass)  /* only where the second levels ran out */
                assert_true(h->l2[g] == NULL && h->nl2 == h->maxl2);
            else
                assert_int_equal(pass, s.used);
            if (pass)
                assert_int_equal(t, s.off + s.len);
            assert_int_equal(sr_heap_block((sr_heap_alloc_t *)h, at, &boff, &blen), s.used);
            assert_int_equal(boff, s.off);
            assert_int_equal(blen, s.len);
        }
    }
}

static void test_basic(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    uint64_t a, b, c;

    assert_int_equal(sr_heap_largest_free(h), REGION_SIZE);
    assert_int_equal(sr_heap_alloc(h, 100, 0, &a), SYMRAIL_OK);
    assert_int_equal(a, REGION_START);
    /* Sizes are rounded up so the next block keeps the minimum alignment. */
    assert_int_equal(sr_heap_alloc_size(h, a), 112);
    assert_int_equal(sr_heap_alloc(h, 1, 0, &b), SYMRAIL_OK);
    assert_int_equal(b, a + 112);
    assert_int_equal(sr_heap_alloc(h, 16, 0, &c), SYMRAIL_OK);
    assert_int_equal(c, b + 16);
    assert_int_equal(h->used_bytes, 112 + 16 + 16);
    check_invariants(h);

    assert_int_equal(sr_heap_free(h, b), SYMRAIL_OK);
    assert_int_equal(sr_heap_alloc_size(h, b), 0);
    /* First fit reuses the hole. */
    uint64_t d;
    assert_int_equal(sr_heap_alloc(h, 8, 0, &d), SYMRAIL_OK);
    assert_int_equal(d, b);
    assert_int_equal(sr_heap_free(h, a), SYMRAIL_OK);
    assert_int_equal(sr_heap_free(h, c), SYMRAIL_OK);
    assert_int_equal(sr_heap_free(h, d), SYMRAIL_OK);
    assert_int_equal(h->used_bytes, 0);
    assert_int_equal(h->nsegs, 1);
    check_invariants(h);
}

static void test_min_alignment(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    static const uint64_t sizes[] = { 1, 3, 7, 15, 16, 17, 31, 33, 100, 1000, 4095 };
    static const uint64_t aligns[] = { 0, 1, 2, 4, 8, 16 };

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (size_t j = 0; j < sizeof(aligns) / sizeof(aligns[0]); j++) {
            uint64_t off;
            assert_int_equal(sr_heap_alloc(h, sizes[i], aligns[j], &off), SYMRAIL_OK);
            assert_int_equal(off % SR_HEAP_MIN_ALIGN, 0);
            assert_true(sr_heap_alloc_size(h, off) >= sizes[i]);
        }
    }
    check_invariants(h);
}

static void test_large_alignment(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    static const uint64_t aligns[] = { 32, 64, 4096, 1u << 20 };
    uint64_t small, off;

    /* Misalign the next free byte so every alignment below needs padding. */
    assert_int_equal(sr_heap_alloc(h, 48, 0, &small), SYMRAIL_OK);
    for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
        assert_int_equal(sr_heap_alloc(h, 24, aligns[i], &off), SYMRAIL_OK);
        assert_int_equal(off % aligns[i], 0);
        assert_true(off >= REGION_START + 48);
        check_invariants(h);
    }
    /* The padding left in front of an aligned block stays usable. */
    assert_int_equal(sr_heap_alloc(h, 16, 0, &off), SYMRAIL_OK);
    assert_int_equal(off, small + 48);
    check_invariants(h);
}

static void test_invalid_args(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    uint64_t off = 12345;
    snapshot_t s = snap_take(h);

    assert_int_equal(sr_heap_alloc(h, 64, 3, &off), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_alloc(h, 64, 48, &off), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_alloc(h, 64, UINT64_MAX, &off), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_alloc(h, 0, 0, &off), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_alloc(h, 0, 64, &off), SYMRAIL_ERR_INVALID);
    assert_int_equal(off, 12345);
    snap_check_and_free(&s, h);
}

static void test_exhaustion(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    uint64_t a, b, off = 777;

    assert_int_equal(sr_heap_alloc(h, REGION_SIZE - 4096, 0, &a), SYMRAIL_OK);
    assert_int_equal(sr_heap_alloc(h, 1024, 0, &b), SYMRAIL_OK);

    snapshot_t s = snap_take(h);
    assert_int_equal(sr_heap_alloc(h, 4096, 0, &off), SYMRAIL_ERR_NOMEM);
    /* 3072 bytes are free, but the only 4096-aligned start in them is the end. */
    assert_int_equal(sr_heap_alloc(h, 2048, 4096, &off), SYMRAIL_ERR_NOMEM);
    assert_int_equal(sr_heap_alloc(h, 16, (uint64_t)REGION_SIZE * 2, &off), SYMRAIL_ERR_NOMEM);
    assert_int_equal(off, 777);
    snap_check_and_free(&s, h);

    /* Exactly the remainder still fits, after which even 1 byte does not. */
    assert_int_equal(sr_heap_alloc(h, 3072, 0, &off), SYMRAIL_OK);
    assert_int_equal(sr_heap_largest_free(h), 0);
    s = snap_take(h);
    assert_int_equal(sr_heap_alloc(h, 1, 0, &off), SYMRAIL_ERR_NOMEM);
    snap_check_and_free(&s, h);
    check_invariants(h);
}

/* A request larger than the whole region is one that no free range fits; the
 * caller's remedy is a larger heap, so it is reported as NOMEM, not INVALID. */
static void test_larger_than_region(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    uint64_t off = 99;
    snapshot_t s = snap_take(h);

    assert_int_equal(sr_heap_alloc(h, (uint64_t)REGION_SIZE + 1, 0, &off), SYMRAIL_ERR_NOMEM);
    assert_int_equal(sr_heap_alloc(h, (uint64_t)REGION_SIZE * 4, 64, &off), SYMRAIL_ERR_NOMEM);
    /* Must not wrap around when rounded up to the minimum alignment. */
    assert_int_equal(sr_heap_alloc(h, UINT64_MAX, 0, &off), SYMRAIL_ERR_NOMEM);
    assert_int_equal(sr_heap_alloc(h, UINT64_MAX - 7, 0, &off), SYMRAIL_ERR_NOMEM);
    assert_int_equal(off, 99);
    snap_check_and_free(&s, h);
    /* Exactly the region size is fine. */
    assert_int_equal(sr_heap_alloc(h, REGION_SIZE, 0, &off), SYMRAIL_OK);
    assert_int_equal(off, REGION_START);
}

static void test_bad_free(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    uint64_t a, b;

    assert_int_equal(sr_heap_alloc(h, 256, 0, &a), SYMRAIL_OK);
    assert_int_equal(sr_heap_alloc(h, 256, 0, &b), SYMRAIL_OK);

    snapshot_t s = snap_take(h);
    assert_int_equal(sr_heap_free(h, a + 16), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_free(h, a + 1), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_free(h, b + 256), SYMRAIL_ERR_INVALID);   /* free space */
    assert_int_equal(sr_heap_free(h, 0), SYMRAIL_ERR_INVALID);         /* below region */
    assert_int_equal(sr_heap_free(h, REGION_START + REGION_SIZE), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_free(h, UINT64_MAX), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_heap_alloc_size(h, a + 16), 0);
    snap_check_and_free(&s, h);

    assert_int_equal(sr_heap_free(h, a), SYMRAIL_OK);
    s = snap_take(h);
    assert_int_equal(sr_heap_free(h, a), SYMRAIL_ERR_INVALID);          /* double free */
    snap_check_and_free(&s, h);

    /* After b is freed too its start lies inside one big free segment. */
    assert_int_equal(sr_heap_free(h, b), SYMRAIL_OK);
    assert_int_equal(sr_heap_free(h, b), SYMRAIL_ERR_INVALID);
    assert_int_equal(h->nsegs, 1);
}

static void test_fragmentation_and_coalescing(void **state)
{
    enum { NBLK = 256, BLK = 4096 };
    sr_heap_alloc_t h;
    uint64_t offs[NBLK], big;

    (void)state;
    /* A region that the blocks fill exactly, so only coalescing can make room. */
    assert_int_equal(sr_heap_alloc_init(&h, REGION_START, (uint64_t)NBLK * BLK), SYMRAIL_OK);
    for (int i = 0; i < NBLK; i++) {
        assert_int_equal(sr_heap_alloc(&h, BLK, 0, &offs[i]), SYMRAIL_OK);
        assert_int_equal(offs[i], REGION_START + (uint64_t)i * BLK);
    }
    assert_int_equal(sr_heap_largest_free(&h), 0);
    for (int i = 0; i < NBLK; i += 2)
        assert_int_equal(sr_heap_free(&h, offs[i]), SYMRAIL_OK);
    check_invariants(&h);
    assert_int_equal(h.used_bytes, (uint64_t)NBLK / 2 * BLK);
    assert_int_equal(sr_heap_largest_free(&h), BLK);

    /* Half the region is free, but in holes one block wide. */
    snapshot_t s = snap_take(&h);
    assert_int_equal(sr_heap_alloc(&h, BLK + 16, 0, &big), SYMRAIL_ERR_NOMEM);
    assert_int_equal(sr_heap_alloc(&h, 2 * BLK, 0, &big), SYMRAIL_ERR_NOMEM);
    snap_check_and_free(&s, &h);

    /* Freeing block 101 joins holes 100 and 102 into three blocks. */
    assert_int_equal(sr_heap_free(&h, offs[101]), SYMRAIL_OK);
    check_invariants(&h);
    assert_int_equal(sr_heap_largest_free(&h), 3 * BLK);
    assert_int_equal(sr_heap_alloc(&h, 3 * BLK, 0, &big), SYMRAIL_OK);
    assert_int_equal(big, offs[100]);
    assert_int_equal(sr_heap_free(&h, big), SYMRAIL_OK);

    /* A block freed between a free left and a used right neighbour, and the
     * other way round, still merges with the free one. */
    assert_int_equal(sr_heap_free(&h, offs[1]), SYMRAIL_OK);     /* 0,1,2 free */
    assert_int_equal(sr_heap_free(&h, offs[NBLK - 1]), SYMRAIL_OK);
    check_invariants(&h);

    for (int i = 3; i < NBLK - 1; i += 2)
        if (i != 101)
            assert_int_equal(sr_heap_free(&h, offs[i]), SYMRAIL_OK);
    assert_int_equal(h.used_bytes, 0);
    assert_int_equal(h.nsegs, 1);
    assert_int_equal(sr_heap_largest_free(&h), (uint64_t)NBLK * BLK);
    assert_int_equal(sr_heap_alloc(&h, (uint64_t)NBLK * BLK, 0, &big), SYMRAIL_OK);
    assert_int_equal(big, REGION_START);
    sr_heap_alloc_fini(&h);
}

static void test_free_all_restores_region(void **state)
{
    sr_heap_alloc_t *h = &((fixture_t *)*state)->h;
    enum { N = 200 };
    uint64_t offs[N];

    for (int i = 0; i < N; i++)
        assert_int_equal(sr_heap_alloc(h, 16 + (uint64_t)i * 40, i % 3 ? 0 : 256, &offs[i]),
                         SYMRAIL_OK);
    /* Free in an order that exercises both merge directions. */
    for (int i = 0; i < N; i += 3)
        assert_int_equal(sr_heap_free(h, offs[i]), SYMRAIL_OK);
    for (int i = N - 1; i >= 0; i--)
        if (i % 3 != 0)
            assert_int_equal(sr_heap_free(h, offs[i]), SYMRAIL_OK);
    assert_int_equal(h->nsegs, 1);
    assert_int_equal(h->used_bytes, 0);
    assert_int_equal(sr_heap_largest_free(h), REGION_SIZE);
    check_invariants(h);
}

/* xorshift64*: tiny, seeded, and identical on every platform. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

typedef struct {
    uint64_t off;
    uint64_t len;  /* as requested, which must fit inside the block */
} live_t;

static void check_no_overlap(const live_t *live, size_t n, uint64_t off, uint64_t len)
{
    for (size_t i = 0; i < n; i++) {
        int disjoint = off + len <= live[i].off || live[i].off + live[i].len <= off;
        if (!disjoint)
            fail_msg("block [%llu,+%llu) overlaps live block [%llu,+%llu)",
                     (unsigned long long)off, (unsigned long long)len,
                     (unsigned long long)live[i].off, (unsigned long long)live[i].len);
    }
}

static void test_determinism_random(void **state)
{
    enum { OPS = 10000, MAXLIVE = 512 };
    static const uint64_t aligns[] = { 0, 0, 0, 0, 16, 64, 256, 4096 };
    sr_heap_alloc_t h1, h2;
    live_t *live = calloc(MAXLIVE, sizeof(*live));
    uint64_t seed = 0x5eed1234abcdull;
    size_t nlive = 0;
    int nomem = 0, allocs = 0;

    (void)state;
    assert_non_null(live);
    /* Small enough that the random walk reaches exhaustion now and then. */
    assert_int_equal(sr_heap_alloc_init(&h1, REGION_START, 4u << 20), SYMRAIL_OK);
    assert_int_equal(sr_heap_alloc_init(&h2, REGION_START, 4u << 20), SYMRAIL_OK);

    for (int op = 0; op < OPS; op++) {
        uint64_t r = rng_next(&seed);
        int do_alloc = nlive == 0 || (nlive < MAXLIVE && (r & 0xff) < 150);
        if (do_alloc) {
            uint64_t size = 1 + (rng_next(&seed) % ((r >> 8) & 1 ? 256 : 65536));
            uint64_t align = aligns[(r >> 16) % (sizeof(aligns) / sizeof(aligns[0]))];
            uint64_t o1 = 1, o2 = 2;
            symrail_status_t s1 = sr_heap_alloc(&h1, size, align, &o1);
            symrail_status_t s2 = sr_heap_alloc(&h2, size, align, &o2);
            assert_int_equal(s1, s2);
            if (s1 == SYMRAIL_ERR_NOMEM) {
                nomem++;
                continue;
            }
            assert_int_equal(s1, SYMRAIL_OK);
            assert_int_equal(o1, o2);
            assert_true(o1 >= REGION_START && o1 + size <= REGION_START + (4u << 20));
            assert_int_equal(o1 % (align ? align : SR_HEAP_MIN_ALIGN), 0);
            assert_true(sr_heap_alloc_size(&h1, o1) >= size);
            check_no_overlap(live, nlive, o1, size);
            live[nlive++] = (live_t){ o1, size };
            allocs++;
        } else {
            size_t k = (size_t)(rng_next(&seed) % nlive);
            assert_int_equal(sr_heap_free(&h1, live[k].off), SYMRAIL_OK);
            assert_int_equal(sr_heap_free(&h2, live[k].off), SYMRAIL_OK);
            live[k] = live[--nlive];
        }
        if (op % 500 == 0) {
            check_invariants(&h1);
            /* Field by field: the segments' padding bytes are indeterminate. */
            assert_int_equal(h1.nsegs, h2.nsegs);
            for (size_t i = 0; i < h1.nsegs; i++) {
                assert_int_equal(h1.segs[i].off, h2.segs[i].off);
                assert_int_equal(h1.segs[i].len, h2.segs[i].len);
                assert_int_equal(h1.segs[i].used, h2.segs[i].used);
            }
        }
    }
    /* The walk must have exercised both paths to mean anything. */
    assert_true(allocs > 1000);
    assert_true(nomem > 0);

    while (nlive > 0) {
        nlive--;
        assert_int_equal(sr_heap_free(&h1, live[nlive].off), SYMRAIL_OK);
        assert_int_equal(sr_heap_free(&h2, live[nlive].off), SYMRAIL_OK);
    }
    assert_int_equal(sr_heap_largest_free(&h1), 4u << 20);
    assert_int_equal(h1.nsegs, 1);
    assert_int_equal(h2.nsegs, 1);
    sr_heap_alloc_fini(&h1);
    sr_heap_alloc_fini(&h2);
    free(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_min_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exhaustion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_larger_than_region, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_free, setup, teardown),
        cmocka_unit_test(test_fragmentation_and_coalescing),
        cmocka_unit_test_setup_teardown(test_free_all_restores_region, setup, teardown),
        cmocka_unit_test(test_determinism_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
