/*
 * A registration cache: page-aligned address ranges of private memory and
 * the handle a transport registered them under, so that a large transfer
 * from or to memory that is not in a registered region can use it in place
 * (zero-copy) and a buffer used again costs one lookup.
 *
 * An entry never outlives the memory it maps: the library interposes the
 * calls that can take pages away (memhook.c: free, realloc, munmap, mremap,
 * mmap with MAP_FIXED, madvise that discards), and each of them invalidates
 * every entry that overlaps the range first.  An invalidated entry is found
 * no more; one that an operation still uses is deregistered when its last
 * reference goes (sr_rcache_put).  Idle entries are evicted least recently
 * used first so that what is registered stays within max_bytes.
 *
 * Registration and deregistration are callbacks (the transport's verbs
 * calls; plain functions in the unit test), never called with the cache's
 * lock held.  Every cache of the process shares one lock: the hooks must
 * see all of them, and a lookup holds it for a binary search.
 */
#ifndef SR_UTIL_RCACHE_H
#define SR_UTIL_RCACHE_H

#include <stddef.h>
#include <stdint.h>

#include <symrail.h>

typedef struct sr_rcache sr_rcache_t;

typedef struct sr_rcache_ent {
    uintptr_t lo, hi;         /* [lo, hi), page-aligned */
    void     *handle;         /* what reg returned */
} sr_rcache_ent_t;

typedef struct {
    size_t max_bytes;         /* registered bytes at most (idle entries are evicted) */
    /* 0 and *handle_p, or an errno value. */
    int  (*reg)(void *arg, void *addr, size_t len, void **handle_p);
    void (*dereg)(void *arg, void *handle);
    void  *arg;
} sr_rcache_params_t;

typedef struct {
    uint64_t hits, misses;    /* lookups that found an entry / had to register */
    uint64_t regs;            /* registrations made */
    uint64_t invalidations;   /* entries dropped because their memory went */
    uint64_t evictions;       /* idle entries dropped for room */
    uint64_t reg_failures;
    size_t   bytes;           /* registered now */
    size_t   entries;         /* findable now */
} sr_rcache_stats_t;

symrail_status_t sr_rcache_create(const sr_rcache_params_t *params, sr_rcache_t **rc_p);
/* Deregisters every entry; none may be in use. */
void sr_rcache_destroy(sr_rcache_t *rc);

/* An entry that holds [addr, addr + len), found or registered now, with a
 * reference taken: SYMRAIL_OK; SYMRAIL_ERR_NOMEM when the range does not fit
 * in max_bytes beside the entries in use; SYMRAIL_ERR_TRANSPORT when the
 * registration failed (the caller falls back to copying). */
symrail_status_t sr_rcache_get(sr_rcache_t *rc, const void *addr, size_t len,
                               sr_rcache_ent_t **ent_p);
/* Gives a reference back; an invalidated entry goes with its last one. */
void sr_rcache_put(sr_rcache_t *rc, sr_rcache_ent_t *ent);

/* The memory [addr, addr + len) is going away: every cache drops what
 * overlaps it.  What the hooks call (after their one-load test). */
void sr_rcache_invalidate(const void *addr, size_t len);

void sr_rcache_stats(sr_rcache_t *rc, sr_rcache_stats_t *stats_p);

/* 1 when the hooks of memhook.c are the ones the process calls (another
 * library, a sanitizer for instance, may interpose free or munmap before
 * this one; then nothing may be cached). */
int sr_memhook_active(void);

/* Entries in every cache: what the hooks test first (relaxed); then the
 * span [sr_rcache_lo, sr_rcache_hi) that holds every entry, so that a free
 * or munmap of memory no entry touches (most of them, once a few buffers
 * are cached) does not take the cache's lock. */
extern unsigned long sr_rcache_armed;
extern uintptr_t sr_rcache_lo, sr_rcache_hi;

#endif
