#include "config.h"
#include "heap_alloc.h"
#include "util/sanitizer.h"

#include <stdlib.h>
#include <sys/mman.h>
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
    /* Pages of the tables are backed only where allocations are (zero: free). */
    h->nlim = (size_t)((start + size) >> SR_HEAP_GRAN_SHIFT) + 1;
    void *lim = mmap(NULL, h->nlim * 2 * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (lim == MAP_FAILED) {
        free(h->segs);
        memset(h, 0, sizeof(*h));
        return SYMRAIL_ERR_NOMEM;
    }
    h->lim = lim;
    h->l2 = (uint64_t **)(void *)(h->lim + h->nlim);
    /* The second-level tables are pointed to only from here. */
    SR_LSAN_ROOT(h->l2, h->nlim * sizeof(uint64_t));
    h->maxl2 = (size_t)(size >> 17) + 16;
    pthread_mutex_init(&h->lock, NULL);
    return SYMRAIL_OK;
}

void sr_heap_alloc_fini(sr_heap_alloc_t *h)
{
    free(h->segs);
    if (h->lim) {
        for (uint64_t g = 0; g < h->l2_top; g++)
            free(h->l2[g]);
        SR_LSAN_UNROOT(h->l2, h->nlim * sizeof(uint64_t));
        munmap(h->lim, h->nlim * 2 * sizeof(uint64_t));
        pthread_mutex_destroy(&h->lock);
    }
    memset(h, 0, sizeof(*h));
}

/* Index of the segment that holds off (in the region). */
static size_t sr_heap_at(const sr_heap_alloc_t *h, uint64_t off)
{
    size_t lo = 0, hi = h->nsegs;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (h->segs[mid].off <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The end the table gives an access starting at off: its segment's end if
 * that is live, 0 if free or outside the region.  *i: a segment at or
 * before off's, moved forward to it. */
static uint64_t sr_heap_end_at(const sr_heap_alloc_t *h, size_t *i, uint64_t off)
{
    if (off < h->start || off >= h->start + h->size)
        return 0;
    while (h->segs[*i].off + h->segs[*i].len <= off)
        (*i)++;
    const sr_heap_seg_t *s = &h->segs[*i];
    return s->used ? s->off + s->len : 0;
}

/* Granule g from the segment list. */
static void sr_heap_gran(sr_heap_alloc_t *h, uint64_t g)
{
    uint64_t gs = g << SR_HEAP_GRAN_SHIFT, ge = gs + (UINT64_C(1) << SR_HEAP_GRAN_SHIFT);
    size_t i = sr_heap_at(h, gs < h->start ? h->start : gs), i0 = i;
    uint64_t first = sr_heap_end_at(h, &i, gs);
    /* The first level is exact unless a live block starts inside the
     * granule: an access in the block that holds its start ends at that
     * block's end, and one in free space fails. */
    int shared = 0;
    for (size_t j = i; j < h->nsegs && h->segs[j].off < ge; j++)
        if (h->segs[j].used && h->segs[j].off > gs)
            shared = 1;
    uint64_t *l2 = h->l2[g];
    if (l2 == NULL && shared && h->nl2 < h->maxl2 &&
        (l2 = malloc(SR_HEAP_L2_SLOTS * sizeof(uint64_t))) != NULL) {
        h->nl2++;
        if (g >= h->l2_top)
            h->l2_top = g + 1;
    } else if (!shared && l2 == NULL) {
        __atomic_store_n(&h->lim[g], first, __ATOMIC_RELEASE);
        return;
    }
    if (l2 != NULL) {
        /* Filled before it is published; one that exists is refilled, since
         * readers consult it wherever the first level refuses. */
        i = i0;
        for (uint64_t k = 0; k < SR_HEAP_L2_SLOTS; k++)
            __atomic_store_n(&l2[k], sr_heap_end_at(h, &i, gs + k * SR_HEAP_MIN_ALIGN),
                             __ATOMIC_RELAXED);
        __atomic_store_n(&h->l2[g], l2, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&h->lim[g], first, __ATOMIC_RELEASE);
}

/* The table after [off, off + len) became one segment: the granules inside
 * it read its end (or 0), the two at its edges are made again. */
static void sr_heap_mark(sr_heap_alloc_t *h, uint64_t off, uint64_t len, uint64_t end)
{
    uint64_t g0 = off >> SR_HEAP_GRAN_SHIFT, g1 = (off + len - 1) >> SR_HEAP_GRAN_SHIFT;
    for (uint64_t g = g0 + 1; g < g1; g++) {
        if (h->l2[g] != NULL)
            sr_heap_gran(h, g);
        else
            __atomic_store_n(&h->lim[g], end, __ATOMIC_RELAXED);
    }
    sr_heap_gran(h, g0);
    if (g1 != g0)
        sr_heap_gran(h, g1);
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

static symrail_status_t sr_heap_alloc_locked(sr_heap_alloc_t *h, uint64_t size, uint64_t align,
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
        sr_heap_mark(h, aligned, size, aligned + size);
        *off_p = aligned;
        return SYMRAIL_OK;
    }
    return SYMRAIL_ERR_NOMEM;
}

symrail_status_t sr_heap_alloc(sr_heap_alloc_t *h, uint64_t size, uint64_t align,
                               uint64_t *off_p)
{
    pthread_mutex_lock(&h->lock);
    symrail_status_t st = sr_heap_alloc_locked(h, size, align, off_p);
    pthread_mutex_unlock(&h->lock);
    return st;
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
    pthread_mutex_lock(&h->lock);
    ssize_t idx = sr_heap_find(h, off);
    if (idx < 0) {
        pthread_mutex_unlock(&h->lock);
        return SYMRAIL_ERR_INVALID;
    }
    size_t i = (size_t)idx;
    uint64_t len = h->segs[i].len;
    h->used_bytes -= len;
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
    sr_heap_mark(h, off, len, 0);
    pthread_mutex_unlock(&h->lock);
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

int sr_heap_block(sr_heap_alloc_t *h, uint64_t off, uint64_t *off_p, uint64_t *len_p)
{
    pthread_mutex_lock(&h->lock);
    sr_heap_seg_t s = h->segs[sr_heap_at(h, off)];
    pthread_mutex_unlock(&h->lock);
    *off_p = s.off;
    *len_p = s.len;
    return s.used;
}
