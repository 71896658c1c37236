/*
 * Registration cache (rcache.h).  Each cache keeps its findable entries in
 * an array sorted by lo, with max_hi[i] the largest hi of entries 0..i, so
 * that a lookup is a binary search and a short walk back (entries may
 * overlap: one in use cannot be merged away), and in an LRU list for
 * eviction.  The array is rebuilt on every insert and removal: misses and
 * invalidations are rare next to hits, and already cost a system call.
 *
 * The hooks run inside free() and munmap(), also those the cache itself
 * and the callbacks make (ibv_reg_mr allocates, the array grows): a thread
 * inside the cache (sr_rc_busy) skips invalidation, which is only ever
 * conservative for memory that the cache's own callers hold.
 */
#include "config.h"
#include "util/rcache.h"
#include "util/log.h"
#include "util/sys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sr_rc_ent {
    sr_rcache_ent_t   pub;
    sr_rcache_t      *rc;
    uint32_t          refs;
    int               indexed;     /* findable (not invalidated, not evicted) */
    struct sr_rc_ent *prev, *next; /* LRU, most recent first (indexed ones) */
    struct sr_rc_ent *dead;        /* to deregister once the lock is dropped */
} sr_rc_ent_t;

struct sr_rcache {
    sr_rcache_params_t params;
    sr_rc_ent_t      **v;          /* indexed entries by lo */
    uintptr_t         *max_hi;
    size_t             n, cap;
    sr_rc_ent_t       *lru_head, *lru_tail;
    sr_rcache_stats_t  st;
    sr_rcache_t       *next;       /* every cache of the process */
};

unsigned long sr_rcache_armed;
uintptr_t sr_rcache_lo = UINTPTR_MAX, sr_rcache_hi;
static pthread_mutex_t sr_rc_lock = PTHREAD_MUTEX_INITIALIZER;
static sr_rcache_t *sr_rc_all;
static __thread int sr_rc_busy;
/* In a child of fork: its registrations are the parent's (the device's
 * file is shared), so it forgets them and registers nothing. */
static int sr_rc_forked;

static void sr_rc_enter(void)
{
    sr_rc_busy++;
    pthread_mutex_lock(&sr_rc_lock);
}

static void sr_rc_leave(void)
{
    pthread_mutex_unlock(&sr_rc_lock);
    sr_rc_busy--;
}

static uintptr_t sr_rc_page(void)
{
    static uintptr_t pg;
    if (pg == 0)
        pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    return pg;
}

static void sr_rc_reindex(sr_rcache_t *rc)
{
    uintptr_t m = 0;
    for (size_t i = 0; i < rc->n; i++) {
        if (rc->v[i]->pub.hi > m)
            m = rc->v[i]->pub.hi;
        rc->max_hi[i] = m;
    }
}

static void sr_rc_lru_unlink(sr_rcache_t *rc, sr_rc_ent_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        rc->lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        rc->lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void sr_rc_lru_front(sr_rcache_t *rc, sr_rc_ent_t *e)
{
    e->prev = NULL;
    e->next = rc->lru_head;
    if (rc->lru_head)
        rc->lru_head->prev = e;
    else
        rc->lru_tail = e;
    rc->lru_head = e;
}

/* Drops e from the index (lock held); an idle one joins *dead. */
static void sr_rc_unindex(sr_rcache_t *rc, sr_rc_ent_t *e, sr_rc_ent_t **dead)
{
    e->indexed = 0;
    sr_rc_lru_unlink(rc, e);
    /* The span only widens while some entry is cached (lock held). */
    if (__atomic_sub_fetch(&sr_rcache_armed, 1, __ATOMIC_RELAXED) == 0) {
        __atomic_store_n(&sr_rcache_lo, UINTPTR_MAX, __ATOMIC_RELAXED);
        __atomic_store_n(&sr_rcache_hi, 0, __ATOMIC_RELAXED);
    }
    rc->st.entries--;
    if (e->refs == 0) {
        e->dead = *dead;
        *dead = e;
        rc->st.bytes -= e->pub.hi - e->pub.lo;
    }
}

/* Removes the entries no longer indexed from the array (lock held). */
static void sr_rc_compact(sr_rcache_t *rc)
{
    size_t j = 0;
    for (size_t i = 0; i < rc->n; i++)
        if (rc->v[i]->indexed)
            rc->v[j++] = rc->v[i];
    rc->n = j;
    sr_rc_reindex(rc);
}

/* Deregisters and frees a list of entries (lock not held). */
static void sr_rc_bury(sr_rc_ent_t *dead)
{
    sr_rc_busy++;
    while (dead) {
        sr_rc_ent_t *next = dead->dead;
        dead->rc->params.dereg(dead->rc->params.arg, dead->pub.handle);
        free(dead);
        dead = next;
    }
    sr_rc_busy--;
}

/* An indexed entry that holds [lo, hi), or NULL (lock held). */
static sr_rc_ent_t *sr_rc_find(sr_rcache_t *rc, uintptr_t lo, uintptr_t hi)
{
    size_t a = 0, b = rc->n;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (rc->v[mid]->pub.lo <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (size_t i = a; i-- > 0 && rc->max_hi[i] >= hi;)
        if (rc->v[i]->pub.hi >= hi)
            return rc->v[i];
    return NULL;
}

/* A child forked while another thread held the lock would hang in its
 * first free.  Held as sr_rc_enter holds it, so that a free in a prepare
 * handler that runs after this one does not wait for it. */
static void sr_rc_fork_prepare(void)
{
    sr_rc_enter();
}

static void sr_rc_fork_parent(void)
{
    sr_rc_leave();
}

/* The child's registrations are the parent's: a free in the child must
 * not deregister them (the device's file is shared), so every entry is
 * forgotten, not deregistered, and nothing more is cached. */
static void sr_rc_fork_child(void)
{
    for (sr_rcache_t *rc = sr_rc_all; rc; rc = rc->next) {
        rc->n = 0;
        rc->lru_head = rc->lru_tail = NULL;
        rc->st.entries = 0;
    }
    sr_rc_forked = 1;
    __atomic_store_n(&sr_rcache_armed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sr_rcache_lo, UINTPTR_MAX, __ATOMIC_RELAXED);
    __atomic_store_n(&sr_rcache_hi, 0, __ATOMIC_RELAXED);
    sr_rc_leave();
}

static void sr_rc_once(void)
{
    pthread_atfork(sr_rc_fork_prepare, sr_rc_fork_parent, sr_rc_fork_child);
}

symrail_status_t sr_rcache_create(const sr_rcache_params_t *params, sr_rcache_t **rc_p)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sr_rc_once);
    sr_rcache_t *rc = calloc(1, sizeof(*rc));
    if (rc == NULL)
        return SYMRAIL_ERR_NOMEM;
    rc->params = *params;
    sr_rc_enter();
    rc->next = sr_rc_all;
    sr_rc_all = rc;
    sr_rc_leave();
    *rc_p = rc;
    return SYMRAIL_OK;
}

void sr_rcache_destroy(sr_rcache_t *rc)
{
    if (rc == NULL)
        return;
    sr_rc_ent_t *dead = NULL;
    sr_rc_enter();
    for (sr_rcache_t **pp = &sr_rc_all; *pp; pp = &(*pp)->next) {
        if (*pp == rc) {
            *pp = rc->next;
            break;
        }
    }
    for (size_t i = 0; i < rc->n; i++) {
        if (rc->v[i]->refs != 0)
            sr_debug("rcache: an entry of %zu bytes at %#lx is still in use at teardown",
                     (size_t)(rc->v[i]->pub.hi - rc->v[i]->pub.lo),
                     (unsigned long)rc->v[i]->pub.lo);
        rc->v[i]->refs = 0;
        sr_rc_unindex(rc, rc->v[i], &dead);
    }
    rc->n = 0;
    sr_rc_leave();
    sr_rc_bury(dead);
    sr_rc_busy++;
    free(rc->v);
    free(rc->max_hi);
    free(rc);
    sr_rc_busy--;
}

/* Room for one more entry in the array (lock held). */
static int sr_rc_grow(sr_rcache_t *rc)
{
    if (rc->n < rc->cap)
        return 0;
    size_t cap = rc->cap ? 2 * rc->cap : 16;
    sr_rc_ent_t **v = realloc(rc->v, cap * sizeof(*v));
    if (v == NULL)
        return -1;
    rc->v = v;
    uintptr_t *m = realloc(rc->max_hi, cap * sizeof(*m));
    if (m == NULL)
        return -1;
    rc->max_hi = m;
    rc->cap = cap;
    return 0;
}

symrail_status_t sr_rcache_get(sr_rcache_t *rc, const void *addr, size_t len,
                               sr_rcache_ent_t **ent_p)
{
    uintptr_t pg = sr_rc_page();
    uintptr_t a = (uintptr_t)addr;
    if (len == 0 || a + len < a)
        return SYMRAIL_ERR_INVALID;
    if (__atomic_load_n(&sr_rc_forked, __ATOMIC_RELAXED))
        return SYMRAIL_ERR_UNSUPPORTED;  /* copied instead */
    uintptr_t lo = a & ~(pg - 1), hi = SR_ALIGN_UP(a + len, pg);
    size_t size = hi - lo;
    sr_rc_ent_t *dead = NULL;
    symrail_status_t st = SYMRAIL_OK;

    sr_rc_enter();
    sr_rc_ent_t *e = sr_rc_find(rc, lo, hi);
    if (e != NULL) {
        e->refs++;
        if (e != rc->lru_head) {
            sr_rc_lru_unlink(rc, e);
            sr_rc_lru_front(rc, e);
        }
        rc->st.hits++;
        sr_rc_leave();
        *ent_p = &e->pub;
        return SYMRAIL_OK;
    }
    rc->st.misses++;
    if (size > rc->params.max_bytes) {
        st = SYMRAIL_ERR_NOMEM;
    } else {
        /* The least recently used idle entries make room. */
        int evicted = 0;
        for (sr_rc_ent_t *x = rc->lru_tail, *prev; x && rc->st.bytes + size > rc->params.max_bytes;
             x = prev) {
            prev = x->prev;
            if (x->refs == 0) {
                sr_rc_unindex(rc, x, &dead);
                rc->st.evictions++;
                evicted = 1;
            }
        }
        if (evicted)
            sr_rc_compact(rc);
        if (rc->st.bytes + size > rc->params.max_bytes)
            st = SYMRAIL_ERR_NOMEM;
        else
            rc->st.bytes += size;  /* reserved while we register */
    }
    sr_rc_leave();
    sr_rc_bury(dead);
    if (st != SYMRAIL_OK)
        return st;

    sr_rc_busy++;
    void *handle = NULL;
    int err = rc->params.reg(rc->params.arg, (void *)lo, size, &handle);
    e = err == 0 ? calloc(1, sizeof(*e)) : NULL;
    if (err == 0 && e == NULL)
        rc->params.dereg(rc->params.arg, handle);
    sr_rc_busy--;

    sr_rc_enter();
    if (e == NULL || sr_rc_grow(rc) != 0) {
        rc->st.bytes -= size;
        rc->st.reg_failures++;
        sr_rc_leave();
        if (e != NULL) {
            sr_rc_busy++;
            rc->params.dereg(rc->params.arg, handle);
            free(e);
            sr_rc_busy--;
        }
        return err != 0 ? SYMRAIL_ERR_TRANSPORT : SYMRAIL_ERR_NOMEM;
    }
    e->pub = (sr_rcache_ent_t){ .lo = lo, .hi = hi, .handle = handle };
    e->rc = rc;
    e->refs = 1;
    e->indexed = 1;
    size_t i = rc->n;
    while (i > 0 && rc->v[i - 1]->pub.lo > lo) {
        rc->v[i] = rc->v[i - 1];
        i--;
    }
    rc->v[i] = e;
    rc->n++;
    sr_rc_reindex(rc);
    sr_rc_lru_front(rc, e);
    rc->st.regs++;
    rc->st.entries++;
    if (lo < __atomic_load_n(&sr_rcache_lo, __ATOMIC_RELAXED))
        __atomic_store_n(&sr_rcache_lo, lo, __ATOMIC_RELAXED);
    if (hi > __atomic_load_n(&sr_rcache_hi, __ATOMIC_RELAXED))
        __atomic_store_n(&sr_rcache_hi, hi, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sr_rcache_armed, 1, __ATOMIC_RELAXED);
    sr_rc_leave();
    *ent_p = &e->pub;
    return SYMRAIL_OK;
}

void sr_rcache_put(sr_rcache_t *rc, sr_rcache_ent_t *pub)
{
    sr_rc_ent_t *e = (sr_rc_ent_t *)(void *)pub, *dead = NULL;
    sr_rc_enter();
    if (--e->refs == 0 && !e->indexed) {
        rc->st.bytes -= e->pub.hi - e->pub.lo;
        dead = e;
    }
    sr_rc_leave();
    sr_rc_bury(dead);
}

void sr_rcache_invalidate(const void *addr, size_t len)
{
    if (sr_rc_busy || len == 0)
        return;
    uintptr_t pg = sr_rc_page();
    uintptr_t lo = (uintptr_t)addr & ~(pg - 1);
    uintptr_t hi = (uintptr_t)addr + len < (uintptr_t)addr ? UINTPTR_MAX
                                                           : (uintptr_t)addr + len;
    sr_rc_ent_t *dead = NULL;
    sr_rc_enter();
    for (sr_rcache_t *rc = sr_rc_all; rc; rc = rc->next) {
        int hit = 0;
        /* Entries that start below hi, back while one may reach past lo. */
        size_t a = 0, b = rc->n;
        while (a < b) {
            size_t mid = (a + b) / 2;
            if (rc->v[mid]->pub.lo < hi)
                a = mid + 1;
            else
                b = mid;
        }
        for (size_t i = a; i-- > 0 && rc->max_hi[i] > lo;) {
            sr_rc_ent_t *e = rc->v[i];
            if (e->pub.hi > lo) {
                sr_rc_unindex(rc, e, &dead);
                rc->st.invalidations++;
                hit = 1;
            }
        }
        if (hit)
            sr_rc_compact(rc);
    }
    sr_rc_leave();
    sr_rc_bury(dead);
}

void sr_rcache_stats(sr_rcache_t *rc, sr_rcache_stats_t *stats_p)
{
    sr_rc_enter();
    *stats_p = rc->st;
    sr_rc_leave();
}
