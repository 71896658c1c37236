/* The registration cache (util/rcache.h) with registration callbacks that
 * only count: hits, misses, overlapping and adjacent ranges, LRU eviction
 * under the byte limit, and invalidation by free, realloc, munmap and
 * madvise, idle and while an entry is in use. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/rcache.h"

typedef struct {
    int regs, deregs, fail;
    void *last_addr;
    size_t last_len;
} fake_t;

static int fake_reg(void *arg, void *addr, size_t len, void **handle_p)
{
    fake_t *f = arg;
    if (f->fail)
        return 14;
    /* Called outside the cache's lock, by several threads in test_threads. */
    int n = __atomic_add_fetch(&f->regs, 1, __ATOMIC_RELAXED);
    f->last_addr = addr;
    f->last_len = len;
    *handle_p = (void *)(uintptr_t)n;
    return 0;
}

static void fake_dereg(void *arg, void *handle)
{
    fake_t *f = arg;
    assert_non_null(handle);
    __atomic_fetch_add(&f->deregs, 1, __ATOMIC_RELAXED);
}

static size_t pg;
static fake_t fk;
static sr_rcache_t *rc;

static int setup(void **state)
{
    (void)state;
    pg = (size_t)sysconf(_SC_PAGESIZE);
    memset(&fk, 0, sizeof(fk));
    sr_rcache_params_t p = { .max_bytes = 64 * pg, .reg = fake_reg, .dereg = fake_dereg,
                             .arg = &fk };
    return sr_rcache_create(&p, &rc) == SYMRAIL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sr_rcache_destroy(rc);
    assert_int_equal(fk.regs, fk.deregs);
    assert_int_equal(sr_rcache_armed, 0);
    return 0;
}

static sr_rcache_stats_t stats(void)
{
    sr_rcache_stats_t s;
    sr_rcache_stats(rc, &s);
    return s;
}

static void *pages(size_t n)
{
    void *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    return p;
}

static void test_hit_miss(void **state)
{
    (void)state;
    char *m = pages(16);
    sr_rcache_ent_t *a, *b;
    /* Unaligned: the entry covers whole pages. */
    assert_int_equal(sr_rcache_get(rc, m + 100, 2 * pg, &a), SYMRAIL_OK);
    assert_ptr_equal(fk.last_addr, m);
    assert_int_equal(fk.last_len, 3 * pg);
    assert_int_equal(a->lo, (uintptr_t)m);
    assert_int_equal(a->hi, (uintptr_t)m + 3 * pg);
    /* Inside it: the same entry, no registration. */
    assert_int_equal(sr_rcache_get(rc, m + pg, 2 * pg, &b), SYMRAIL_OK);
    assert_ptr_equal(a, b);
    assert_int_equal(fk.regs, 1);
    sr_rcache_ent_t s0 = *a;
    sr_rcache_put(rc, a);
    sr_rcache_put(rc, b);
    assert_int_equal(fk.deregs, 0);  /* idle entries stay */
    assert_int_equal(sr_rcache_get(rc, m, pg, &a), SYMRAIL_OK);
    assert_int_equal(a->handle, s0.handle);
    sr_rcache_put(rc, a);
    sr_rcache_stats_t s = stats();
    assert_int_equal(s.hits, 2);
    assert_int_equal(s.misses, 1);
    assert_int_equal(s.regs, 1);
    assert_int_equal(s.bytes, 3 * pg);
    assert_int_equal(s.entries, 1);
    assert_int_equal(sr_rcache_get(rc, m, 0, &a), SYMRAIL_ERR_INVALID);
    munmap(m, 16 * pg);
}

static void test_overlap_adjacent(void **state)
{
    (void)state;
    char *m = pages(16);
    sr_rcache_ent_t *a, *b, *c, *d;
    assert_int_equal(sr_rcache_get(rc, m + 2 * pg, 2 * pg, &a), SYMRAIL_OK);
    /* Adjacent on either side: not held by a, a registration each. */
    assert_int_equal(sr_rcache_get(rc, m + 4 * pg, pg, &b), SYMRAIL_OK);
    assert_ptr_not_equal(a, b);
    assert_int_equal(sr_rcache_get(rc, m + pg, pg, &c), SYMRAIL_OK);
    assert_ptr_not_equal(a, c);
    assert_int_equal(fk.regs, 3);
    /* Overlapping a and b but held by neither: a new entry beside them. */
    assert_int_equal(sr_rcache_get(rc, m + 3 * pg, 2 * pg, &d), SYMRAIL_OK);
    assert_int_equal(fk.regs, 4);
    assert_int_equal(d->lo, (uintptr_t)m + 3 * pg);
    assert_int_equal(d->hi, (uintptr_t)m + 5 * pg);
    /* Then the overlap finds the entry that holds it, whichever it is. */
    sr_rcache_ent_t *e;
    assert_int_equal(sr_rcache_get(rc, m + 3 * pg + 10, pg + 10, &e), SYMRAIL_OK);
    assert_ptr_equal(e, d);
    assert_int_equal(sr_rcache_get(rc, m + 2 * pg, 10, &e), SYMRAIL_OK);
    assert_ptr_equal(e, a);
    sr_rcache_put(rc, e);
    sr_rcache_put(rc, d);
    sr_rcache_put(rc, d);
    sr_rcache_put(rc, c);
    sr_rcache_put(rc, b);
    sr_rcache_put(rc, a);
    assert_int_equal(stats().entries, 4);
    /* The rest needs the hooks (inactive under a sanitizer, whose
     * allocator frees without them). */
    if (!sr_memhook_active())
        skip();
    /* One munmap takes the page shared by a and d: both go, b and c stay. */
    munmap(m + 3 * pg, pg);
    sr_rcache_stats_t s = stats();
    assert_int_equal(s.invalidations, 2);
    assert_int_equal(s.entries, 2);
    assert_int_equal(fk.deregs, 2);
    munmap(m, 16 * pg);
    assert_int_equal(stats().entries, 0);
}

static void test_evict(void **state)
{
    (void)state;
    /* 64 pages allowed: three of 24 do not fit, the least recent idle goes. */
    char *m = pages(96);
    sr_rcache_ent_t *a, *b, *c, *x;
    assert_int_equal(sr_rcache_get(rc, m, 24 * pg, &a), SYMRAIL_OK);
    assert_int_equal(sr_rcache_get(rc, m + 24 * pg, 24 * pg, &b), SYMRAIL_OK);
    sr_rcache_put(rc, a);
    sr_rcache_put(rc, b);
    /* a used again: b is now the least recently used. */
    assert_int_equal(sr_rcache_get(rc, m, pg, &x), SYMRAIL_OK);
    sr_rcache_put(rc, x);
    assert_int_equal(sr_rcache_get(rc, m + 48 * pg, 24 * pg, &c), SYMRAIL_OK);
    sr_rcache_stats_t s = stats();
    assert_int_equal(s.evictions, 1);
    assert_int_equal(s.bytes, 48 * pg);
    assert_int_equal(fk.deregs, 1);
    assert_int_equal(sr_rcache_get(rc, m, pg, &x), SYMRAIL_OK);  /* a stayed */
    assert_int_equal(fk.regs, 3);
    sr_rcache_put(rc, x);
    /* With a and c in use, 24 more pages cannot fit: refused, nothing
     * registered, nothing in use evicted. */
    assert_int_equal(sr_rcache_get(rc, m, pg, &a), SYMRAIL_OK);
    assert_int_equal(sr_rcache_get(rc, m + 24 * pg, 24 * pg, &b), SYMRAIL_ERR_NOMEM);
    assert_int_equal(fk.regs, 3);
    assert_int_equal(sr_rcache_get(rc, m, 65 * pg, &b), SYMRAIL_ERR_NOMEM);
    sr_rcache_put(rc, a);
    sr_rcache_put(rc, c);
    /* A failed registration is no entry. */
    fk.fail = 1;
    assert_int_equal(sr_rcache_get(rc, m + 80 * pg, pg, &b), SYMRAIL_ERR_TRANSPORT);
    fk.fail = 0;
    assert_int_equal(stats().bytes, 48 * pg);
    munmap(m, 96 * pg);
    if (sr_memhook_active())
        assert_int_equal(stats().bytes, 0);
}

static void test_free_idle(void **state)
{
    (void)state;
    if (!sr_memhook_active())
        skip();
    /* Large enough for glibc to mmap it, and small enough for its heap. */
    size_t sizes[] = { 16u << 20, 3 * pg + 40 };
    for (int k = 0; k < 2; k++) {
        char *p = malloc(sizes[k]);
        assert_non_null(p);
        sr_rcache_ent_t *e;
        assert_int_equal(sr_rcache_get(rc, p, sizes[k] < 64 * pg ? sizes[k] : 32 * pg, &e),
                         SYMRAIL_OK);
        sr_rcache_put(rc, e);
        int regs = fk.regs, deregs = fk.deregs;
        free(p);
        assert_int_equal(fk.deregs, deregs + 1);
        assert_int_equal(stats().entries, 0);
        /* Often the same address again: a registration of its own. */
        p = malloc(sizes[k]);
        assert_int_equal(sr_rcache_get(rc, p, pg, &e), SYMRAIL_OK);
        assert_int_equal(fk.regs, regs + 1);
        sr_rcache_put(rc, e);
        free(p);
    }
    assert_int_equal(stats().invalidations, 4);
    /* realloc may move the block: what was registered of it goes. */
    char *p = malloc(8 * pg);
    sr_rcache_ent_t *e;
    assert_int_equal(sr_rcache_get(rc, p, 8 * pg, &e), SYMRAIL_OK);
    sr_rcache_put(rc, e);
    p = realloc(p, 64 * pg);
    assert_int_equal(stats().entries, 0);
    free(p);
    assert_int_equal(fk.regs, fk.deregs);
}

static void test_munmap_idle(void **state)
{
    (void)state;
    if (!sr_memhook_active())
        skip();
    char *m = pages(8);
    sr_rcache_ent_t *e;
    assert_int_equal(sr_rcache_get(rc, m, 8 * pg, &e), SYMRAIL_OK);
    sr_rcache_put(rc, e);
    /* Mapped again at the same address (MAP_FIXED over it): gone. */
    void *again = mmap(m, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
    assert_ptr_equal(again, m);
    assert_int_equal(stats().entries, 0);
    assert_int_equal(fk.deregs, 1);
    assert_int_equal(sr_rcache_get(rc, m, 8 * pg, &e), SYMRAIL_OK);
    sr_rcache_put(rc, e);
    /* Pages discarded: gone; another advice: stays. */
    assert_int_equal(madvise(m + pg, pg, MADV_WILLNEED), 0);
    assert_int_equal(stats().entries, 1);
    assert_int_equal(madvise(m + pg, pg, MADV_DONTNEED), 0);
    assert_int_equal(stats().entries, 0);
    assert_int_equal(sr_rcache_get(rc, m, 8 * pg, &e), SYMRAIL_OK);
    sr_rcache_put(rc, e);
    /* mremap of a part of it. */
    void *r = mremap(m + 4 * pg, 4 * pg, 2 * pg, 0);
    assert_ptr_equal(r, m + 4 * pg);
    assert_int_equal(stats().entries, 0);
    /* A munmap next to it leaves it. */
    assert_int_equal(sr_rcache_get(rc, m, 4 * pg, &e), SYMRAIL_OK);
    sr_rcache_put(rc, e);
    assert_int_equal(munmap(m + 4 * pg, 2 * pg), 0);
    assert_int_equal(stats().entries, 1);
    assert_int_equal(munmap(m, 4 * pg), 0);
    assert_int_equal(stats().entries, 0);
    assert_int_equal(stats().invalidations, 4);
    assert_int_equal(fk.regs, fk.deregs);
}

static void test_in_use(void **state)
{
    (void)state;
    if (!sr_memhook_active())
        skip();
    size_t len = 16u << 20;
    char *p = malloc(len);
    sr_rcache_ent_t *e, *e2;
    assert_int_equal(sr_rcache_get(rc, p, 31 * pg, &e), SYMRAIL_OK);
    free(p);
    /* Not found any more, but deregistered only when its user is done. */
    assert_int_equal(stats().invalidations, 1);
    assert_int_equal(stats().entries, 0);
    assert_int_equal(fk.deregs, 0);
    p = malloc(len);
    assert_int_equal(sr_rcache_get(rc, p, 31 * pg, &e2), SYMRAIL_OK);
    assert_ptr_not_equal(e, e2);
    assert_int_equal(fk.regs, 2);
    assert_int_equal(stats().bytes, 64 * pg);
    sr_rcache_put(rc, e);
    assert_int_equal(fk.deregs, 1);
    assert_int_equal(stats().bytes, 32 * pg);
    /* munmap while in use: the same. */
    char *m = pages(4);
    assert_int_equal(sr_rcache_get(rc, m, 4 * pg, &e), SYMRAIL_OK);
    munmap(m, 4 * pg);
    assert_int_equal(fk.deregs, 1);
    sr_rcache_put(rc, e);
    assert_int_equal(fk.deregs, 2);
    sr_rcache_put(rc, e2);
    free(p);
    assert_int_equal(fk.deregs, 3);
    assert_int_equal(stats().bytes, 0);
}

/* Threads that use buffers and free them while others do the same: every
 * entry goes with its memory, none twice (teardown: regs == deregs). */
static void *churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        size_t n = (size_t)(1 + i % 7) * pg + 24;
        char *p = malloc(n);
        sr_rcache_ent_t *e;
        if (sr_rcache_get(rc, p, n, &e) == SYMRAIL_OK) {
            if (i % 3 == 0) {
                free(p);  /* in use: deregistered at the put */
                sr_rcache_put(rc, e);
                continue;
            }
            sr_rcache_put(rc, e);
        }
        free(p);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    if (!sr_memhook_active())
        skip();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    sr_rcache_stats_t s = stats();
    assert_int_equal(s.entries, 0);
    assert_int_equal(s.bytes, 0);
    assert_true(s.invalidations > 0);
}

/* With nothing cached the hooks forward at once. */
static void test_idle_hooks(void **state)
{
    (void)state;
    assert_int_equal(sr_rcache_armed, 0);
    for (int i = 0; i < 1000; i++)
        free(malloc((size_t)i * 97));
    assert_int_equal(stats().invalidations, 0);
}

/* The span the hooks test before the lock holds every entry, and empties
 * with the caches; memory outside it is not looked up. */
static void test_span(void **state)
{
    (void)state;
    if (!sr_memhook_active())
        skip();
    char *m = pages(8), *other = pages(2);
    sr_rcache_ent_t *a;
    assert_int_equal(sr_rcache_get(rc, m + pg, pg, &a), SYMRAIL_OK);
    assert_int_equal(sr_rcache_lo, (uintptr_t)m + pg);
    assert_int_equal(sr_rcache_hi, (uintptr_t)m + 2 * pg);
    sr_rcache_put(rc, a);
    munmap(other, 2 * pg);  /* outside: the entry stays */
    assert_int_equal(stats().entries, 1);
    munmap(m, 8 * pg);
    assert_int_equal(stats().entries, 0);
    assert_int_equal(sr_rcache_lo, UINTPTR_MAX);
    assert_int_equal(sr_rcache_hi, 0);
}

/* reallocarray may move or free the block: its registration goes (glibc
 * calls realloc through its PLT; libsymrail defines reallocarray as well,
 * for a C library that does not). */
static void test_reallocarray(void **state)
{
    (void)state;
    if (!sr_memhook_active())
        skip();
    size_t n = 64 * 1024;
    char *b = malloc(n);
    assert_non_null(b);
    sr_rcache_ent_t *a;
    assert_int_equal(sr_rcache_get(rc, b, n, &a), SYMRAIL_OK);
    sr_rcache_put(rc, a);
    char *c = reallocarray(b, 4, n);
    assert_non_null(c);
    assert_int_equal(stats().entries, 0);
    assert_int_equal(stats().invalidations, 1);
    free(c);
}

/* A child of fork shares the parent's registrations (the device's file):
 * its frees must not deregister them, and it caches nothing.  Before, the
 * child's free deregistered the parent's entry. */
static void test_fork_child(void **state)
{
    (void)state;
    char *m = pages(4);
    sr_rcache_ent_t *a;
    assert_int_equal(sr_rcache_get(rc, m, 2 * pg, &a), SYMRAIL_OK);
    sr_rcache_put(rc, a);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int deregs = fk.deregs;
        munmap(m, 4 * pg);
        sr_rcache_ent_t *b;
        char *n = pages(1);
        int ok = fk.deregs == deregs && sr_rcache_armed == 0 &&
                 sr_rcache_get(rc, n, pg, &b) == SYMRAIL_ERR_UNSUPPORTED;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The parent's entry is still there. */
    assert_int_equal(sr_rcache_get(rc, m, pg, &a), SYMRAIL_OK);
    assert_int_equal(fk.regs, 1);
    sr_rcache_put(rc, a);
    munmap(m, 4 * pg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlap_adjacent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_munmap_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_use, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_hooks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_span, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reallocarray, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fork_child, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
