/*
 * One copy routine for every transfer between a private buffer and shared or
 * staging memory.
 *
 * glibc's memcpy is fast for most relative alignments, but its speed depends
 * on (dst - src) modulo the page size and on which path it picks per size
 * (see sr_copy_large in copy.c).  sr_copy picks its own strategy above a
 * small threshold so that every relative alignment of a user's malloc'd
 * buffer and a page-aligned symmetric block runs at the same speed.  Small
 * copies stay a plain memcpy, which the compiler inlines for constant sizes:
 * they are the hot path of 8-byte puts.
 *
 * The buffers must not overlap.
 */
#ifndef SR_UTIL_COPY_H
#define SR_UTIL_COPY_H

#include <stddef.h>
#include <string.h>

/* At or below this size memcpy's own code for short copies is as good as
 * anything and costs nothing to choose. */
#define SR_COPY_SMALL 1024

void sr_copy_large(void *dst, const void *src, size_t len);

static inline void sr_copy(void *dst, const void *src, size_t len)
{
    if (__builtin_expect(len <= SR_COPY_SMALL, 1))
        memcpy(dst, src, len);
    else
        sr_copy_large(dst, src, len);
}

/* Which strategy sr_copy_large uses for len bytes (for tests and tools). */
const char *sr_copy_strategy(size_t len);

#endif
