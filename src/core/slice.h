/*
 * Cutting one transfer into slices.  Every slice is `slice` bytes except the
 * last; a tail shorter than a quarter slice joins the previous slice rather
 * than travelling as a tiny work request of its own.
 */
#ifndef SR_CORE_SLICE_H
#define SR_CORE_SLICE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t len;
    size_t slice;
    size_t count;
} sr_slicer_t;

static inline void sr_slicer_init(sr_slicer_t *s, size_t len, size_t slice)
{
    s->len = len;
    s->slice = slice ? slice : 1;
    if (len <= s->slice) {
        s->count = 1;
        return;
    }
    size_t tail = len % s->slice;
    s->count = len / s->slice + (tail != 0 && tail >= s->slice / 4);
}

static inline void sr_slicer_get(const sr_slicer_t *s, size_t i, size_t *off_p, size_t *len_p)
{
    size_t off = i * s->slice;
    *off_p = off;
    *len_p = i + 1 == s->count ? s->len - off : s->slice;
}

#endif
