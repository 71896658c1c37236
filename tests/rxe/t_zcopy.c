/*
 * Private (malloc'd, mmap'd) buffers over verbs, in place through the
 * registration cache (2 PEs, PE 0 works on PE 1's heap):
 *  - a put and a get of T_ZCOPY_LEN bytes (default 16 MiB) from and into a
 *    malloc'd buffer, every byte verified;
 *  - the buffer freed, malloc'd again (glibc maps it again, often at the
 *    same address), filled with new data and put: PE 1 must see the new
 *    data, where a registration that outlived the old pages would send
 *    those;
 *  - the same with an mmap'd buffer unmapped and mapped again at the same
 *    address (MAP_FIXED).
 * With T_EXPECT_ZCOPY=1 PE 0's counters must show registrations, cache hits
 * and invalidations; with T_EXPECT_ZCOPY=0 none (SYMRAIL_IB_ZCOPY_THRESH=0).
 * Exit 77 unless run on 2 PEs.
 */
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "../integration/tcommon.h"

static size_t len;
static unsigned char *heap;

/* PE 0 puts `src` (pattern `round`) to PE 1's heap, PE 1 checks it. */
static void put_check(const unsigned char *src, unsigned round, const char *what)
{
    if (symrail_my_pe() == 0) {
        T_CHECK(symrail_put(heap, src, len, 1));
        T_CHECK(symrail_quiet());
    }
    T_CHECK(symrail_barrier_all());
    if (symrail_my_pe() == 1) {
        size_t bad = t_verify(heap, len, 0, round);
        T_ASSERT(bad == SIZE_MAX, "%s: byte %zu of %zu differs (%#x, want %#x)%s", what, bad, len,
                 heap[bad], t_byte(0, round, bad),
                 t_verify(heap, len, 0, round - 1) == SIZE_MAX ? ": the OLD data arrived" : "");
    }
    T_CHECK(symrail_barrier_all());
}

int main(void)
{
    T_CHECK(symrail_init_status());
    if (symrail_n_pes() != 2) {
        printf("SKIP: t_zcopy runs on 2 PEs\n");
        symrail_finalize();
        return 77;
    }
    int me = symrail_my_pe();
    len = t_env("T_ZCOPY_LEN", 16u << 20);
    /* A fixed threshold: glibc maps every block this large of its own and
     * unmaps it at free (the dynamic one would keep the second in its heap). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    heap = symrail_malloc(len);
    T_ASSERT(heap != NULL, "symrail_malloc(%zu)", len);

    unsigned char *p = malloc(len);
    T_ASSERT(p != NULL, "malloc");
    if (me == 0)
        t_fill(p, len, 0, 1);
    put_check(p, 1, "put from a malloc'd buffer");

    if (me == 1)
        t_fill(heap, len, 1, 2);
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        memset(p, 0, len);
        T_CHECK(symrail_get(p, heap, len, 1));
        size_t bad = t_verify(p, len, 1, 2);
        T_ASSERT(bad == SIZE_MAX, "get into a malloc'd buffer: byte %zu differs", bad);
        t_fill(p, len, 0, 2);
    }
    /* The pages the first registration pinned hold round 2 now. */
    put_check(p, 2, "put from a malloc'd buffer, again");

    volatile uintptr_t old = (uintptr_t)p;  /* compared, never used */
    free(p);
    p = malloc(len);
    T_ASSERT(p != NULL, "malloc");
    if (me == 0) {
        printf("PE 0: malloc after free: %s address\n", (uintptr_t)p == old ? "the same" : "another");
        t_fill(p, len, 0, 3);
    }
    put_check(p, 3, "put from a buffer malloc'd again after free");
    free(p);

    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T_ASSERT(m != MAP_FAILED, "mmap: %m");
    if (me == 0)
        t_fill(m, len, 0, 4);
    put_check(m, 4, "put from an mmap'd buffer");
    T_ASSERT(munmap(m, len) == 0, "munmap: %m");
    void *again = mmap(m, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
    T_ASSERT(again == m, "mmap MAP_FIXED: %m");
    if (me == 0)
        t_fill(m, len, 0, 5);
    put_check(m, 5, "put from a buffer mapped again at the same address");
    munmap(m, len);

    if (me == 0) {
        symrail_stats_t st;
        T_CHECK(symrail_stats(&st));
        printf("PE 0: rcache hits %llu misses %llu registrations %llu invalidations %llu "
               "evictions %llu bytes %llu\n", (unsigned long long)st.rcache_hits,
               (unsigned long long)st.rcache_misses, (unsigned long long)st.rcache_regs,
               (unsigned long long)st.rcache_invalidations,
               (unsigned long long)st.rcache_evictions, (unsigned long long)st.rcache_bytes);
        const char *want = getenv("T_EXPECT_ZCOPY");
        if (want && *want == '1') {
            /* put, get, put again, after free, mmap, after MAP_FIXED */
            T_ASSERT(st.rcache_regs >= 4, "%llu registrations", (unsigned long long)st.rcache_regs);
            T_ASSERT(st.rcache_hits > 0, "no cache hit");
            T_ASSERT(st.rcache_invalidations >= 3, "%llu invalidations",
                     (unsigned long long)st.rcache_invalidations);
        } else if (want && *want == '0') {
            T_ASSERT(st.rcache_regs == 0, "%llu registrations with zero-copy off",
                     (unsigned long long)st.rcache_regs);
        }
    }
    symrail_free(heap);
    t_pass("zero-copy private buffers: put, get, free and malloc again, munmap and MAP_FIXED, verified byte for byte");
    symrail_finalize();
    return 0;
}
