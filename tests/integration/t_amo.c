/*
 * Atomics of both widths and every kind (symrail_ctx_atomic_op and _nbi),
 * on any number of PEs:
 *  - every PE adds to, and ORs its bit into, one 4-byte and one 8-byte word
 *    of PE 0, concurrently: the sums and masks come out exact, and the
 *    4-byte neighbours of the 32-bit words (and the words around them)
 *    keep the pattern PE 0 put there;
 *  - a compare-swap ticket lock on a 4-byte word guards a plain counter;
 *  - fetching nbi atomics: results valid after quiet, in 4-byte slots
 *    whose neighbours stay untouched;
 *  - AND, XOR, SWAP, SET and FETCH of both widths against a model, with
 *    float and double bit patterns through SWAP.
 */
#include <stdint.h>
#include <string.h>

#include "tcommon.h"

#define ROUNDS 200
#define GUARD  UINT32_C(0xa5a55a5a)

typedef struct {
    uint32_t lo_guard;  /* word 0: guard | counter32 */
    uint32_t sum32;
    uint64_t sum64;
    uint32_t or32;      /* word 2: or32 | guard */
    uint32_t hi_guard;
    uint64_t or64;
    uint32_t lock;      /* word 4: lock | guard */
    uint32_t lock_guard;
    uint64_t counted;   /* under the lock, plain gets and puts */
    uint32_t kinds[4];  /* model checks, from PE 1 (or 0) */
    uint64_t kinds64[2];
} shared_t;

static uint64_t op1(symrail_amo_op_t op, void *t, size_t w, uint64_t v, uint64_t c, int pe)
{
    uint64_t old = 0;
    T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, op, t, w, v, c, pe, &old));
    return old;
}

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    shared_t *s = symrail_calloc(1, sizeof(*s));
    T_ASSERT(s != NULL, "calloc");
    if (me == 0) {
        s->lo_guard = s->hi_guard = s->lock_guard = GUARD;
    }
    T_CHECK(symrail_barrier_all());

    /* Concurrent adds and ORs of every PE on PE 0's words. */
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t o32;
        uint64_t o64;
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_ADD, &s->sum32, 4,
                                      (uint64_t)(me + 1), 0, 0, &o32));
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_ADD, &s->sum64, 8,
                                      UINT64_C(1) << 40 | (uint64_t)(me + 1), 0, 0, &o64));
        if (r % 32 == me % 32) {
            T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_OR, &s->or32, 4,
                                          UINT64_C(1) << (me % 32), 0, 0, NULL));
            T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_OR, &s->or64, 8,
                                          UINT64_C(1) << (32 + me % 32), 0, 0, &o64));
        }
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        uint32_t want32 = (uint32_t)(ROUNDS * n * (n + 1) / 2);
        uint64_t want64 = (uint64_t)ROUNDS * n * (UINT64_C(1) << 40) + want32;
        uint64_t mask = 0;
        for (int p = 0; p < n; p++)
            mask |= UINT64_C(1) << (p % 32);
        T_ASSERT(s->sum32 == want32, "sum32 %u, want %u", s->sum32, want32);
        T_ASSERT(s->sum64 == want64, "sum64 %llu, want %llu", (unsigned long long)s->sum64,
                 (unsigned long long)want64);
        T_ASSERT(s->or32 == (uint32_t)mask, "or32 %#x, want %#llx", s->or32,
                 (unsigned long long)mask);
        T_ASSERT(s->or64 == mask << 32, "or64 %#llx", (unsigned long long)s->or64);
        T_ASSERT(s->lo_guard == GUARD && s->hi_guard == GUARD,
                 "a 4-byte atomic changed its neighbour: %#x %#x", s->lo_guard, s->hi_guard);
    }
    T_CHECK(symrail_barrier_all());

    /* A compare-swap lock on a 4-byte word, taken by every PE in turn. */
    for (int r = 0; r < ROUNDS / 4; r++) {
        uint32_t old;
        do {
            T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_CSWAP, &s->lock, 4,
                                          (uint64_t)(me + 1), 0, 0, &old));
        } while (old != 0);
        uint64_t c;
        T_CHECK(symrail_get(&c, &s->counted, sizeof(c), 0));
        c++;
        T_CHECK(symrail_put(&s->counted, &c, sizeof(c), 0));
        T_CHECK(symrail_quiet());
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_CSWAP, &s->lock, 4, 0,
                                      (uint64_t)(me + 1), 0, &old));
        T_ASSERT(old == (uint32_t)(me + 1), "the lock held %u, not %d", old, me + 1);
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_ASSERT(s->counted == (uint64_t)n * (ROUNDS / 4) && s->lock_guard == GUARD,
                 "counted %llu, want %d (lock guard %#x)", (unsigned long long)s->counted,
                 n * (ROUNDS / 4), s->lock_guard);
    T_CHECK(symrail_barrier_all());

    /* Fetching nbi atomics: 4-byte results into slots between guards. */
    {
        enum { NB = 16 };
        uint32_t res[2 * NB + 1];
        uint64_t res64[NB];
        for (int i = 0; i < 2 * NB + 1; i++)
            res[i] = GUARD;
        for (int i = 0; i < NB; i++) {
            T_CHECK(symrail_ctx_atomic_op_nbi(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_FETCH, &s->sum32,
                                              4, 0, 0, (me + 1) % n, &res[2 * i + 1]));
            T_CHECK(symrail_ctx_atomic_op_nbi(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_FETCH, &s->or64,
                                              8, 0, 0, 0, &res64[i]));
        }
        T_CHECK(symrail_quiet());
        uint32_t want = (me + 1) % n == 0 ? (uint32_t)(ROUNDS * n * (n + 1) / 2) : 0;
        for (int i = 0; i < NB; i++) {
            T_ASSERT(res[2 * i] == GUARD, "nbi fetch wrote past its 4 bytes (slot %d)", i);
            T_ASSERT(res[2 * i + 1] == want, "nbi fetch %d: %u, want %u", i, res[2 * i + 1], want);
            T_ASSERT(res64[i] == s->or64 || me != 0, "nbi fetch64 %d", i);
        }
        T_ASSERT(res[2 * NB] == GUARD, "nbi fetch wrote past its 4 bytes");
    }
    T_CHECK(symrail_barrier_all());

    /* Every kind against a model, on PE (me + 1) % n's words of its own
     * rank's slot. */
    if (me == n - 1 || n == 1) {
        int pe = (me + 1) % n;
        uint32_t *k = &s->kinds[1];
        uint64_t *k64 = &s->kinds64[1];
        T_ASSERT(op1(SYMRAIL_AMO_SWAP, k, 4, 0xf0f0f0f0u, 0, pe) == 0, "swap32");
        T_ASSERT(op1(SYMRAIL_AMO_AND, k, 4, 0xff00ff00u, 0, pe) == 0xf0f0f0f0u, "and32");
        T_ASSERT(op1(SYMRAIL_AMO_XOR, k, 4, 0x0000ffffu, 0, pe) == 0xf000f000u, "xor32");
        T_ASSERT(op1(SYMRAIL_AMO_FETCH, k, 4, 0, 0, pe) == 0xf0000fffu, "fetch32");
        T_ASSERT(op1(SYMRAIL_AMO_CSWAP, k, 4, 7, 1, pe) == 0xf0000fffu, "failed cswap32");
        T_ASSERT(op1(SYMRAIL_AMO_CSWAP, k, 4, 7, 0xf0000fffu, pe) == 0xf0000fffu, "cswap32");
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_SET, k, 4, 0xffffffffu,
                                      0, pe, NULL));
        T_ASSERT(op1(SYMRAIL_AMO_ADD, k, 4, 2, 0, pe) == 0xffffffffu, "add32 (wraps)");
        T_ASSERT(op1(SYMRAIL_AMO_FETCH, k, 4, 0, 0, pe) == 1, "add32 wrapped to 1");
        float f = 1.5f, g = -2.25f, fo;
        uint32_t fb, gb;
        memcpy(&fb, &f, 4);
        memcpy(&gb, &g, 4);
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_SET, &s->kinds[0], 4, fb,
                                      0, pe, NULL));
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_SWAP, &s->kinds[0], 4, gb,
                                      0, pe, &fo));
        T_ASSERT(fo == 1.5f, "float swap returned %g", (double)fo);
        double d = 3.0e300, e = -1.0 / 3, dout;
        uint64_t db, eb;
        memcpy(&db, &d, 8);
        memcpy(&eb, &e, 8);
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_SET, &s->kinds64[0], 8, db,
                                      0, pe, NULL));
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_SWAP, &s->kinds64[0], 8,
                                      eb, 0, pe, &dout));
        T_ASSERT(dout == 3.0e300, "double swap returned %g", dout);
        T_CHECK(symrail_ctx_atomic_op(SYMRAIL_CTX_DEFAULT, SYMRAIL_AMO_FETCH, &s->kinds64[0], 8,
                                      0, 0, pe, &dout));
        T_ASSERT(dout == e, "double after swap %g", dout);
        T_ASSERT(op1(SYMRAIL_AMO_SWAP, k64, 8, UINT64_C(0xf0f0f0f0f0f0f0f0), 0, pe) == 0, "s64");
        T_ASSERT(op1(SYMRAIL_AMO_AND, k64, 8, UINT64_C(0xff00ff00ff00ff00), 0, pe) ==
                     UINT64_C(0xf0f0f0f0f0f0f0f0), "and64");
        T_ASSERT(op1(SYMRAIL_AMO_XOR, k64, 8, 0xffff, 0, pe) == UINT64_C(0xf000f000f000f000),
                 "xor64");
        T_ASSERT(op1(SYMRAIL_AMO_FETCH, k64, 8, 0, 0, pe) == UINT64_C(0xf000f000f0000fff),
                 "fetch64");
        /* The words around the ones changed stay as they were. */
        uint32_t around[2];
        T_CHECK(symrail_get(around, &s->kinds[2], sizeof(around), pe));
        T_ASSERT(around[0] == 0 && around[1] == 0, "kinds[2..3] changed");
        uint32_t t0;
        T_CHECK(symrail_get(&t0, &s->kinds[0], 4, pe));
        T_ASSERT(t0 == gb, "the float word holds %#x, want %#x", t0, gb);
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        printf("ok: atomics of both widths and every kind on %d PEs\n", n);
    symrail_free(s);
    symrail_finalize();
    return 0;
}
