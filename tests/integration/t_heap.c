/* Symmetric heap: same addresses on every PE through alloc/free churn,
 * alignment, calloc, exhaustion; barrier correctness. */
#include "tcommon.h"

#include <dirent.h>

#define CHURN 400
#define LIVE  32

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    uintptr_t *addrs = symrail_calloc((size_t)n, sizeof(uintptr_t));
    T_ASSERT(addrs != NULL, "allocation failed");

    /* Churn: the same random sequence on every PE; every allocation must be
     * at the same heap offset everywhere (checked on PE 0: the offset from
     * `addrs`, the first allocation) and usable remotely. */
    void *live[LIVE] = { 0 };
    uint64_t seed = 0x1234567;
    for (int i = 0; i < CHURN; i++) {
        int k = (int)(rng_next(&seed) % LIVE);
        if (live[k]) {
            symrail_free(live[k]);
            live[k] = NULL;
            continue;
        }
        size_t sz = 1 + rng_next(&seed) % (1u << (rng_next(&seed) % 20));
        size_t align = (size_t)1 << (rng_next(&seed) % 13);
        live[k] = (i % 3) ? symrail_malloc(sz) : symrail_align(align, sz);
        T_ASSERT(live[k] != NULL, "allocation %d of %zu bytes failed", i, sz);
        if (i % 3 == 0)
            T_ASSERT(((uintptr_t)live[k] & (align - 1)) == 0, "symrail_align(%zu) gave %p", align,
                     live[k]);
        T_ASSERT(((uintptr_t)live[k] & 15) == 0, "allocation %p not 16-byte aligned", live[k]);
        uintptr_t a = (uintptr_t)live[k] - (uintptr_t)addrs;
        T_CHECK(symrail_put(&addrs[me], &a, sizeof(a), 0));
        /* Write my rank into the last byte of my right neighbour's block. */
        unsigned char tag = (unsigned char)me;
        T_CHECK(symrail_put((char *)live[k] + sz - 1, &tag, 1, (me + 1) % n));
        T_CHECK(symrail_barrier_all());
        if (me == 0)
            for (int pe = 1; pe < n; pe++)
                T_ASSERT(addrs[pe] == addrs[0], "allocation %d: PE %d got offset %#lx, PE 0 got %#lx",
                         i, pe, (unsigned long)addrs[pe], (unsigned long)addrs[0]);
        T_ASSERT(((unsigned char *)live[k])[sz - 1] == (unsigned char)((me + n - 1) % n),
                 "write into a fresh block lost");
        T_CHECK(symrail_barrier_all());
    }
    for (int k = 0; k < LIVE; k++)
        symrail_free(live[k]);
    t_pass("alloc/free churn stays symmetric");

    /* Large alignments hold for the address, not only the heap offset. */
    for (size_t align = (size_t)1 << 16; align <= ((size_t)1 << 24); align <<= 4) {
        void *p = symrail_align(align, 100);
        T_ASSERT(p != NULL && ((uintptr_t)p & (align - 1)) == 0, "symrail_align(%zu) gave %p",
                 align, p);
        symrail_free(p);
    }

    /* calloc zeroes memory that was dirty before. */
    unsigned char *d = symrail_malloc(8192);
    memset(d, 0xFF, 8192);
    symrail_free(d);
    unsigned char *z = symrail_calloc(1024, 8);
    T_ASSERT(z != NULL, "calloc failed");
    for (int i = 0; i < 8192; i++)
        T_ASSERT(z[i] == 0, "calloc byte %d is %d", i, z[i]);
    symrail_free(z);
    T_ASSERT(symrail_malloc(0) == NULL, "symrail_malloc(0) is not NULL");
    t_pass("calloc zeroes, malloc(0) is NULL");

    /* Exhaustion: NULL on every PE, and the heap still works after. */
    T_ASSERT(symrail_malloc((size_t)1 << 50) == NULL, "a 1 PiB allocation succeeded");
    T_ASSERT(symrail_calloc(SIZE_MAX / 2, 4) == NULL, "an overflowing calloc succeeded");
    T_ASSERT(symrail_align(3, 64) == NULL, "alignment 3 was accepted");
    uint64_t *w = symrail_malloc(64);
    T_ASSERT(w != NULL, "heap unusable after a failed allocation");
    symrail_free(w);
    t_pass("exhaustion returns NULL and the heap still works");

    /* Barrier: each round every PE adds to every PE; after the barrier the
     * counts must be complete. */
    uint64_t *cnt = symrail_calloc(1, sizeof(uint64_t));
    for (int r = 1; r <= 200; r++) {
        for (int pe = 0; pe < n; pe++)
            T_CHECK(symrail_atomic_add(cnt, 1, pe));
        T_CHECK(symrail_barrier_all());
        T_ASSERT(*cnt == (uint64_t)n * r, "round %d: count %llu after barrier", r,
                 (unsigned long long)*cnt);
        T_CHECK(symrail_sync_all());
    }
    symrail_free(cnt);
    t_pass("barrier_all / sync_all");

    /* Once every PE is up, no shared-memory object of this job has a name
     * left: a job killed now leaves nothing behind in /dev/shm. */
    const char *ns = getenv("PMIX_NAMESPACE");
    if (ns) {
        char prefix[300];
        int plen = snprintf(prefix, sizeof(prefix), "symrail-%s-", ns);
        DIR *d = opendir("/dev/shm");
        T_ASSERT(d != NULL, "cannot list /dev/shm");
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            T_ASSERT(strncmp(e->d_name, prefix, (size_t)plen) != 0, "/dev/shm/%s still exists",
                     e->d_name);
        closedir(d);
        t_pass("no shared-memory names left while running");
    }

    symrail_free(addrs);
    symrail_finalize();
    return 0;
}
