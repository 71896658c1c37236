/*
 * Allocator of the symmetric heap's offsets.  Its metadata lives in private
 * memory and its decisions depend only on the sequence of calls, so PEs that
 * make the same collective calls get the same offsets.
 */
#ifndef SR_CORE_HEAP_ALLOC_H
#define SR_CORE_HEAP_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

#define SR_HEAP_MIN_ALIGN 16

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

#endif
