/* put/get correctness: 1 B .. 16 MiB, odd offsets, all-to-all and ring
 * patterns, blocking and nbi+quiet, every byte verified. */
#include "tcommon.h"

static const size_t sizes[] = { 1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 4095, 4096, 4097,
                                65535, 65536, 65537, 262147, 1048576, 4194307, 16777216 };
static const size_t offsets[] = { 0, 1, 3, 7 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXSZ  (16u << 20)
static size_t maxsz;  /* T_MAX_SIZE lowers it on slow test beds */

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *sym = symrail_malloc(MAXSZ + 64);
    unsigned char *a2a = symrail_malloc((size_t)n * (65537 + 8));
    unsigned char *priv = malloc(MAXSZ + 64), *back = malloc(MAXSZ + 64);
    T_ASSERT(sym && a2a && priv && back, "allocation failed");
    unsigned round = 0;
    maxsz = t_env("T_MAX_SIZE", MAXSZ);

    /* T_REPEAT: the ring that many times, for a job that must last while a
     * test bed changes under it (a link taken down, then up). */
    unsigned long repeat = t_env("T_REPEAT", 1);

    /* Ring: blocking put to the right, then get from the left. */
    for (unsigned long rep = 0; rep < repeat; rep++) {
        for (size_t s = 0; s < NSIZES; s++) {
            for (size_t o = 0; o < 4; o++, round++) {
                size_t sz = sizes[s], off = offsets[o];
                if (sz > maxsz)
                    continue;
                if (sz > (1u << 20) && o > 1)
                    continue;  /* big sizes: two offsets are enough */
                memset(sym, 0xEE, sz + off + 16);
                t_fill(priv + (off ^ 1), sz, me, round);
                T_CHECK(symrail_barrier_all());
                T_CHECK(symrail_put(sym + off, priv + (off ^ 1), sz, right));
                T_CHECK(symrail_barrier_all());
                size_t bad = t_verify(sym + off, sz, left, round);
                T_ASSERT(bad == SIZE_MAX, "put %zu B at +%zu from PE %d: byte %zu wrong", sz, off,
                         left, bad);
                for (size_t g = 0; g < off; g++)
                    T_ASSERT(sym[g] == 0xEE, "put %zu B at +%zu wrote before its start", sz, off);
                for (size_t g = 0; g < 16; g++)
                    T_ASSERT(sym[off + sz + g] == 0xEE, "put %zu B at +%zu wrote past its end", sz,
                             off);
                /* Get it back from the left neighbour: what it received from its left. */
                memset(back, 0, sz + 8);
                T_CHECK(symrail_get(back + 3, sym + off, sz, left));
                int leftleft = (left + n - 1) % n;
                bad = t_verify(back + 3, sz, leftleft, round);
                T_ASSERT(bad == SIZE_MAX, "get %zu B at +%zu from PE %d: byte %zu wrong", sz, off,
                         left, bad);
                T_CHECK(symrail_barrier_all());
            }
        }
    }
    t_pass("ring put/get 1 B .. 16 MiB (or T_MAX_SIZE) with odd offsets");

    /* All-to-all into one buffer per PE: every PE owns its own slot, and the
     * slots of different writers sit side by side at odd offsets. */
    for (size_t s = 0; s < NSIZES && sizes[s] <= 65537; s++, round++) {
        size_t sz = sizes[s], stride = sz + 3;
        memset(a2a, 0, (size_t)n * stride);
        t_fill(priv, sz, me, round);
        T_CHECK(symrail_barrier_all());
        for (int k = 0; k < n; k++) {
            int pe = (me + k) % n;
            T_CHECK(symrail_put(a2a + (size_t)me * stride + 1, priv, sz, pe));
        }
        T_CHECK(symrail_barrier_all());
        for (int w = 0; w < n; w++) {
            size_t bad = t_verify(a2a + (size_t)w * stride + 1, sz, w, round);
            T_ASSERT(bad == SIZE_MAX, "all-to-all %zu B from PE %d: byte %zu wrong", sz, w, bad);
        }
        T_CHECK(symrail_barrier_all());
    }
    t_pass("all-to-all put into adjacent slots");

    /* nbi: many puts in flight to every PE, completed by one quiet. */
    for (size_t s = 0; s < NSIZES && sizes[s] <= 65537; s++, round++) {
        size_t sz = sizes[s], stride = sz + 5;
        memset(a2a, 0, (size_t)n * stride);
        t_fill(priv, sz, me, round);
        T_CHECK(symrail_barrier_all());
        for (int k = 0; k < n; k++) {
            int pe = (me + k) % n;
            /* Several pieces per destination, out of order. */
            size_t half = sz / 2;
            T_CHECK(symrail_put_nbi(a2a + (size_t)me * stride + half, priv + half, sz - half, pe));
            if (half)
                T_CHECK(symrail_put_nbi(a2a + (size_t)me * stride, priv, half, pe));
        }
        T_CHECK(symrail_quiet());
        T_CHECK(symrail_barrier_all());
        for (int w = 0; w < n; w++) {
            size_t bad = t_verify(a2a + (size_t)w * stride, sz, w, round);
            T_ASSERT(bad == SIZE_MAX, "nbi %zu B from PE %d: byte %zu wrong", sz, w, bad);
        }
        /* nbi get of everybody's slot from PE `right`. */
        for (int w = 0; w < n; w++)
            T_CHECK(symrail_get_nbi(back + (size_t)w * stride, a2a + (size_t)w * stride, sz,
                                    right));
        T_CHECK(symrail_quiet());
        for (int w = 0; w < n; w++) {
            size_t bad = t_verify(back + (size_t)w * stride, sz, w, round);
            T_ASSERT(bad == SIZE_MAX, "nbi get %zu B of PE %d's slot: byte %zu wrong", sz, w, bad);
        }
        T_CHECK(symrail_barrier_all());
    }
    t_pass("put_nbi/get_nbi + quiet");

    /* Direct pointers: local peers are mapped, and stores through them land. */
    uint64_t *word = symrail_malloc(sizeof(uint64_t) * (size_t)n);
    T_ASSERT(word != NULL, "allocation failed");
    uint64_t *remote = symrail_ptr(&word[me], right);
    /* A PE's own memory is reachable whatever carries the peers. */
    T_ASSERT(symrail_ptr(&word[me], me) == &word[me], "symrail_ptr to myself is not my address");
    if (t_env("T_NO_PTR", 0)) {
        /* Over the network there is no load/store path. */
        T_ASSERT(remote == NULL, "symrail_ptr to a peer reached over the network is not NULL");
    } else {
        T_ASSERT(remote != NULL, "symrail_ptr to local PE %d is NULL", right);
        *remote = 0xABC000u + (uint64_t)me;
        T_CHECK(symrail_barrier_all());
        T_ASSERT(word[left] == 0xABC000u + (uint64_t)left, "store through symrail_ptr lost");
        t_pass("symrail_ptr");
    }

    t_check_rails();
    symrail_free(word);
    symrail_free(a2a);
    symrail_free(sym);
    free(priv);
    free(back);
    symrail_finalize();
    return 0;
}
