#include "config.h"
#include "heap_alloc.h"

#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

symrail_status_t sr_heap_alloc_init(sr_heap_alloc_t *h, uint64_t start, uint64_t size)
{
    memset(h, 0, sizeof(*h));
    h->cap = 16;
    h->segs = malloc(h->cap * sizeof(*h->segs));
    if (h->segs == NULL)
        return SYMRAIL_ERR_NOMEM;
    h->start = start;
    h->size = size;
    h->segs[0] = (sr_heap_seg_t){ .off = start, .len = size, .used = 0 };
    h->nsegs = 1;
    return SYMRAIL_OK;
}

void sr_heap_alloc_fini(sr_heap_alloc_t *h)
{
    free(h->segs);
    memset(h, 0, sizeof(*h));
}

/* Makes room for `n` more segments after index `at` (shifting the rest). */
static symrail_status_t sr_heap_insert(sr_heap_alloc_t *h, size_t at, size_t n)
{
    if (h->nsegs + n > h->cap) {
        size_t cap = h->cap * 2 + n;
        sr_heap_seg_t *segs = realloc(h->segs, cap * sizeof(*segs));
        if (segs == NULL)
            return SYMRAIL_ERR_NOMEM;
        h->segs = segs;
        h->cap = cap;
    }
    memmove(&h->segs[at + n], &h->segs[at], (h->nsegs - at) * sizeof(*h->segs));
    h->nsegs += n;
    return SYMRAIL_OK;
}

static void sr_heap_remove(sr_heap_alloc_t *h, size_t at)
{
    memmove(&h->segs[at], &h->segs[at + 1], (h->nsegs - at - 1) * sizeof(*h->segs));
    h->nsegs--;
}

symrail_status_t sr_heap_alloc(sr_heap_alloc_t *h, uint64_t size, uint64_t align,
                               uint64_t *off_p)
{
    if (align == 0)
        align = SR_HEAP_MIN_ALIGN;
    if ((align & (align - 1)) != 0 || size == 0)
        return SYMRAIL_ERR_INVALID;
    if (align < SR_HEAP_MIN_ALIGN)
        align = SR_HEAP_MIN_ALIGN;
    /* A request larger than the whole heap is one that no free range fits: the
     * caller's remedy is a larger SYMRAIL_HEAP_SIZE, not a different argument.
     * Rejecting it here also keeps the rounding below from overflowing. */
    if (size > h->size || align > h->size)
        return SYMRAIL_ERR_NOMEM;
    /* Round sizes so that the next allocation stays aligned to the minimum. */
    size = (size + SR_HEAP_MIN_ALIGN - 1) & ~(uint64_t)(SR_HEAP_MIN_ALIGN - 1);

    /* First fit: cheap, and keeps small early allocations low in the heap. */
    for (size_t i = 0; i < h->nsegs; i++) {
        sr_heap_seg_t s = h->segs[i];
        if (s.used || s.len < size)
            continue;
        uint64_t aligned = (s.off + align - 1) & ~(align - 1);
        uint64_t pad = aligned - s.off;
        if (aligned < s.off || pad > s.len || s.len - pad < size)
            continue;
        uint64_t rest = s.len - pad - size;
        size_t n_new = (pad != 0) + (rest != 0);
        if (n_new && sr_heap_insert(h, i + 1, n_new) != SYMRAIL_OK)
            return SYMRAIL_ERR_NOMEM;
        size_t at = i;
        if (pad) {
            h->segs[at++] = (sr_heap_seg_t){ .off = s.off, .len = pad, .used = 0 };
        }
        h->segs[at++] = (sr_heap_seg_t){ .off = aligned, .len = size, .used = 1 };
        if (rest)
            h->segs[at] = (sr_heap_seg_t){ .off = aligned + size, .len = rest, .used = 0 };
        h->used_bytes += size;
        *off_p = aligned;
        return SYMRAIL_OK;
    }
    return SYMRAIL_ERR_NOMEM;
}

static ssize_t sr_heap_find(const sr_heap_alloc_t *h, uint64_t off)
{
    size_t lo = 0, hi = h->nsegs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->segs[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < h->nsegs && h->segs[lo].off == off && h->segs[lo].used)
        return (ssize_t)lo;
    return -1;
}

symrail_status_t sr_heap_free(sr_heap_alloc_t *h, uint64_t off)
{
    ssize_t idx = sr_heap_find(h, off);
    if (idx < 0)
        return SYMRAIL_ERR_INVALID;
    size_t i = (size_t)idx;
    h->used_bytes -= h->segs[i].len;
    h->segs[i].used = 0;
    /* Coalesce with free neighbours so that fragmentation does not grow. */
    if (i + 1 < h->nsegs && !h->segs[i + 1].used) {
        h->segs[i].len += h->segs[i + 1].len;
        sr_heap_remove(h, i + 1);
    }
    if (i > 0 && !h->segs[i - 1].used) {
        h->segs[i - 1].len += h->segs[i].len;
        sr_heap_remove(h, i);
    }
    return SYMRAIL_OK;
}

uint64_t sr_heap_alloc_size(const sr_heap_alloc_t *h, uint64_t off)
{
    ssize_t idx = sr_heap_find(h, off);
    return idx < 0 ? 0 : h->segs[idx].len;
}

uint64_t sr_heap_largest_free(const sr_heap_alloc_t *h)
{
    uint64_t best = 0;
    for (size_t i = 0; i < h->nsegs; i++)
        if (!h->segs[i].used && h->segs[i].len > best)
            best = h->segs[i].len;
    return best;
}
