/*
 * Allocator of the symmetric heap's offsets.  Its metadata lives in private
 * memory and its decisions depend only on the sequence of calls, so PEs that
 * make the same collective calls get the same offsets.
 */
#ifndef SR_CORE_HEAP_ALLOC_H
#define SR_CORE_HEAP_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <symrail.h>

#define SR_HEAP_MIN_ALIGN 16

/* The table of block ends, by granule of 4 KiB: lim[g] is the end of the
 * live allocation that holds the granule's first byte, 0 where that byte is
 * free.  A granule in which another live block starts has a second level
 * too, l2[g]: one such end per 16 bytes (SR_HEAP_MIN_ALIGN), so small
 * objects side by side are answered exactly.  An access [off, off + len)
 * with off + len <= one of those ends lies in one allocation: the data
 * paths test that inline (one load; two more for a later block of a shared
 * granule).  8 bytes per 4 KiB of heap, 2 KiB per shared granule (at most
 * one per 128 KiB of heap on average; past that a shared granule's later
 * blocks are looked up in the segment list, sr_heap_block, where every
 * access the table refuses goes). */
#define SR_HEAP_GRAN_SHIFT 12
#define SR_HEAP_L2_SLOTS   (1u << (SR_HEAP_GRAN_SHIFT - 4))

typedef struct {
    uint64_t off;
    uint64_t len;
    int      used;
} sr_heap_seg_t;

typedef struct {
    sr_heap_seg_t *segs;     /* sorted by offset, covering [start, start+size) */
    size_t         nsegs;
    size_t         cap;
    uint64_t       start;
    uint64_t       size;
    uint64_t       used_bytes;
    uint64_t      *lim;      /* block ends by granule, from offset 0 (see above) */
    uint64_t     **l2;       /* [nlim]: the granule's second level or NULL; once
                              * made it stays until fini (readers on other
                              * threads may hold it) and is kept up to date */
    size_t         nlim;
    size_t         nl2, maxl2;
    uint64_t       l2_top;   /* granules below it may have a second level */
    /* Lookups may come from threads while another allocates or frees. */
    pthread_mutex_t lock;
} sr_heap_alloc_t;

symrail_status_t sr_heap_alloc_init(sr_heap_alloc_t *h, uint64_t start, uint64_t size);
void sr_heap_alloc_fini(sr_heap_alloc_t *h);
/* align: a power of two (0 means SR_HEAP_MIN_ALIGN).  SYMRAIL_ERR_NOMEM when
 * no free range fits, SYMRAIL_ERR_INVALID for a bad alignment or size. */
symrail_status_t sr_heap_alloc(sr_heap_alloc_t *h, uint64_t size, uint64_t align,
                               uint64_t *off_p);
/* SYMRAIL_ERR_INVALID unless `off` starts a live allocation. */
symrail_status_t sr_heap_free(sr_heap_alloc_t *h, uint64_t off);
/* Size of the live allocation starting at `off`, 0 if none. */
uint64_t sr_heap_alloc_size(const sr_heap_alloc_t *h, uint64_t off);
uint64_t sr_heap_largest_free(const sr_heap_alloc_t *h);
/* Whether the table says [off, off + len) lies in one live allocation
 * (off + len must not wrap; 0 may still be a yes of sr_heap_block). */
static inline __attribute__((always_inline)) int sr_heap_span_ok(const sr_heap_alloc_t *h,
                                                                 uint64_t off, uint64_t len)
{
    uint64_t g = off >> SR_HEAP_GRAN_SHIFT;
    if (__builtin_expect(off + len <= h->lim[g], 1))
        return 1;
    const uint64_t *l2 = h->l2[g];
    return l2 != NULL && off + len <= l2[(off >> 4) & (SR_HEAP_L2_SLOTS - 1)];
}

/* The segment that holds `off` (in [start, start+size)): 1 and the live
 * allocation [*off_p, *off_p + *len_p), or 0 and the free range. */
int sr_heap_block(sr_heap_alloc_t *h, uint64_t off, uint64_t *off_p, uint64_t *len_p);

#endif
