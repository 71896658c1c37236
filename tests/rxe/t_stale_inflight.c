/*
 * A stale access over verbs while the owner has work in flight on the same
 * queue pairs (2 PEs; run with one rail and one QP per peer, so that every
 * transfer in both directions shares the one QP pair the stale access
 * breaks at both ends):
 *  - PE 1 (the owner) registers T_STALE_SEGS segments, PE 0 imports them,
 *    PE 1 deregisters them and registers the same memory again;
 *  - PE 1 keeps non-blocking atomic adds and fetches (of a word nobody
 *    changes), puts from private memory (they complete at post) and
 *    non-blocking puts from the heap (zero-copy) in flight to PE 0, round
 *    after round, each round ended by a quiet that must succeed: a fetch
 *    that PE 0 executed before the QP failed, whose answer the failure
 *    lost, is read again (before, it failed the quiet), and every fetched
 *    value must be the word's;
 *  - meanwhile PE 0 writes through each old descriptor (SYMRAIL_ERR_STALE,
 *    each one breaking the QP pair) with atomic adds of its own to PE 1
 *    posted just ahead of the stale write and right behind it, on the QP
 *    it breaks;
 *  - at the end every add of both PEs was applied exactly once, every put
 *    slot holds the last round written to it, and the memory registered
 *    again was never written.
 * T_EXPECT_REPAIRS as in tcommon.h.  Exit 77 unless run on 2 PEs.
 */
#include <stdint.h>
#include <string.h>

#include "../integration/tcommon.h"

#define NSEG_MAX 8
#define SLOTS    8
#define PUT_LEN  4096
#define POOL_LEN 65536
#define AMO_ROUND 16  /* adds per round of the owner */
#define AMO_BEHIND 32 /* adds of PE 0 ahead of and behind each stale write */
#define FIXED UINT64_C(0x5eedf00dcafe1234)  /* the word PE 1 fetches */

typedef struct {
    uint64_t ctr;        /* at PE 0: PE 1's adds; at PE 1: PE 0's adds */
    uint64_t stop;       /* at PE 1: PE 0 is done */
    uint64_t total;      /* the adds the other PE made */
    uint64_t rounds;     /* at PE 0: PE 1's rounds */
    uint64_t fixed;      /* FIXED, fetched by PE 1 */
    size_t   dlen[NSEG_MAX];
    unsigned char desc[NSEG_MAX][SYMRAIL_SEG_DESC_MAX];
    unsigned char slot[SLOTS][PUT_LEN];   /* puts from private memory */
    unsigned char nslot[SLOTS][PUT_LEN];  /* non-blocking puts from the heap */
} arena_t;

static void owner_traffic(arena_t *a, unsigned char *hsrc)
{
    unsigned char msrc[PUT_LEN];
    uint64_t adds = 0, rounds = 0, fetches = 0, got[AMO_ROUND];
    while (symrail_signal_fetch(&a->stop) == 0 || rounds < 4) {
        for (int i = 0; i < AMO_ROUND; i++) {
            got[i] = 0;
            T_CHECK(symrail_ctx_atomic_op_nbi(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_ADD, &a->ctr, 8, 1,
                                              0, 0, NULL));
            T_CHECK(symrail_ctx_atomic_op_nbi(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_FETCH, &a->fixed,
                                              8, 0, 0, 0, &got[i]));
        }
        adds += AMO_ROUND;
        fetches += AMO_ROUND;
        t_fill(msrc, PUT_LEN, 1, (unsigned)rounds);
        T_CHECK(symrail_put(a->slot[rounds % SLOTS], msrc, PUT_LEN, 0));
        t_fill(hsrc, PUT_LEN, 1, (unsigned)rounds + 1000);
        T_CHECK(symrail_put_nbi(a->nslot[rounds % SLOTS], hsrc, PUT_LEN, 0));
        T_CHECK(symrail_quiet());
        for (int i = 0; i < AMO_ROUND; i++)
            T_ASSERT(got[i] == FIXED, "round %llu: fetch %d gave %#llx",
                     (unsigned long long)rounds, i, (unsigned long long)got[i]);
        rounds++;
    }
    T_CHECK(symrail_put(&a->total, &adds, 8, 0));
    T_CHECK(symrail_put(&a->rounds, &rounds, 8, 0));
    printf("PE 1: %llu rounds, %llu adds and %llu fetches in flight across the stale "
           "accesses\n", (unsigned long long)rounds, (unsigned long long)adds,
           (unsigned long long)fetches);
}

static void writer_stale(arena_t *a, symrail_rseg_t *r, int nseg)
{
    unsigned char *src = malloc(POOL_LEN);
    T_ASSERT(src != NULL, "memory");
    t_fill(src, POOL_LEN, 0, 7);
    uint64_t mine = 0;
    for (int k = 0; k < nseg; k++) {
        /* The owner is busy: its adds keep arriving. */
        uint64_t seen = symrail_signal_fetch(&a->ctr);
        T_CHECK(symrail_signal_wait_until(&a->ctr, SYMRAIL_CMP_GE, seen + 2 * AMO_ROUND, NULL));
        /* Adds queued ahead keep the stale write in the send queue, so that
         * the adds behind it are posted before its refusal comes back. */
        for (int i = 0; i < AMO_BEHIND; i++)
            T_CHECK(symrail_ctx_atomic_op_nbi(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_ADD, &a->ctr, 8, 1,
                                              0, 1, NULL));
        mine += AMO_BEHIND;
        symrail_batch_t b;
        T_CHECK(symrail_batch_create(1, &b));
        T_CHECK(symrail_batch_add(b, SYMRAIL_WRITE, src, r[k], 0, POOL_LEN, NULL));
        T_CHECK(symrail_batch_submit(b));
        /* Its write goes to the QP now (a batch's context may hold it for a
         * chain), ahead of the adds below. */
        symrail_task_state_t state;
        symrail_status_t st = symrail_batch_status(b, SYMRAIL_BATCH_ALL, &state, NULL);
        T_ASSERT(st == SYMRAIL_OK || st == SYMRAIL_ERR_STALE, "batch status %s",
                 symrail_strerror(st));
        for (int i = 0; i < AMO_BEHIND; i++)
            T_CHECK(symrail_ctx_atomic_op_nbi(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_ADD, &a->ctr, 8, 1,
                                              0, 1, NULL));
        mine += AMO_BEHIND;
        st = symrail_batch_wait(b, 60000);
        T_ASSERT(st == SYMRAIL_ERR_STALE, "write through old descriptor %d: %s", k,
                 symrail_strerror(st));
        T_CHECK(symrail_batch_free(b));
        T_CHECK(symrail_quiet());
    }
    uint64_t one = 1;
    T_CHECK(symrail_put(&a->total, &mine, 8, 1));
    T_CHECK(symrail_put(&a->stop, &one, 8, 1));
    free(src);
    printf("PE 0: %d writes through old descriptors refused, %llu adds of its own around them\n",
           nseg, (unsigned long long)mine);
}

int main(void)
{
    T_CHECK(symrail_init_status());
    if (symrail_n_pes() != 2) {
        printf("SKIP: t_stale_inflight runs on 2 PEs\n");
        symrail_finalize();
        return 77;
    }
    int me = symrail_my_pe();
    int nseg = (int)t_env("T_STALE_SEGS", 3);
    T_ASSERT(nseg >= 1 && nseg <= NSEG_MAX, "T_STALE_SEGS out of range");
    arena_t *a = symrail_malloc(sizeof(*a));
    unsigned char *hsrc = symrail_malloc(PUT_LEN);
    unsigned char *pools = malloc((size_t)nseg * POOL_LEN);
    T_ASSERT(a && hsrc && pools, "memory");
    memset(a, 0, sizeof(*a));
    a->fixed = FIXED;
    symrail_seg_t seg[NSEG_MAX];
    symrail_rseg_t r[NSEG_MAX];
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        for (int k = 0; k < nseg; k++) {
            memset(pools + (size_t)k * POOL_LEN, 0xee, POOL_LEN);
            T_CHECK(symrail_seg_register(pools + (size_t)k * POOL_LEN, POOL_LEN, 0, &seg[k]));
            size_t len = SYMRAIL_SEG_DESC_MAX;
            T_CHECK(symrail_seg_export(seg[k], a->desc[k], &len));
            T_CHECK(symrail_put(a->desc[k], a->desc[k], len, 0));
            T_CHECK(symrail_put(&a->dlen[k], &len, sizeof(len), 0));
        }
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        for (int k = 0; k < nseg; k++)
            T_CHECK(symrail_seg_import(a->desc[k], a->dlen[k], &r[k]));
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        for (int k = 0; k < nseg; k++) {
            T_CHECK(symrail_seg_deregister(seg[k]));
            memset(pools + (size_t)k * POOL_LEN, 0x5a, POOL_LEN);
            T_CHECK(symrail_seg_register(pools + (size_t)k * POOL_LEN, POOL_LEN, 0, &seg[k]));
        }
    }
    T_CHECK(symrail_barrier_all());

    if (me == 1)
        owner_traffic(a, hsrc);
    else
        writer_stale(a, r, nseg);
    T_CHECK(symrail_barrier_all());

    /* Every add once, every slot its last round, nothing in reused memory. */
    T_ASSERT(a->ctr == a->total, "PE %d: the counter is %llu after %llu adds of the other PE", me,
             (unsigned long long)a->ctr, (unsigned long long)a->total);
    if (me == 0) {
        unsigned char want[PUT_LEN];
        for (uint64_t s = 0; s < SLOTS && s < a->rounds; s++) {
            uint64_t last = s + (a->rounds - 1 - s) / SLOTS * SLOTS;
            t_fill(want, PUT_LEN, 1, (unsigned)last);
            T_ASSERT(memcmp(a->slot[s], want, PUT_LEN) == 0, "put slot %llu is not round %llu",
                     (unsigned long long)s, (unsigned long long)last);
            t_fill(want, PUT_LEN, 1, (unsigned)last + 1000);
            T_ASSERT(memcmp(a->nslot[s], want, PUT_LEN) == 0,
                     "non-blocking put slot %llu is not round %llu", (unsigned long long)s,
                     (unsigned long long)last);
        }
        for (int k = 0; k < nseg; k++)
            T_CHECK(symrail_rseg_release(r[k]));
    } else {
        for (size_t i = 0; i < (size_t)nseg * POOL_LEN; i++)
            T_ASSERT(pools[i] == 0x5a, "byte %zu of the memory registered again was written", i);
        for (int k = 0; k < nseg; k++)
            T_CHECK(symrail_seg_deregister(seg[k]));
    }
    symrail_stats_t stats;
    T_CHECK(symrail_stats(&stats));
    printf("PE %d: %llu retries (slices and atomics posted again)\n", me,
           (unsigned long long)stats.retries);
    t_check_rails();
    t_pass("stale accesses while the owner's atomics and puts are in flight on the same QPs: "
           "every add applied once, every put landed");
    symrail_free(hsrc);
    symrail_free(a);
    free(pools);
    symrail_finalize();
    return 0;
}
