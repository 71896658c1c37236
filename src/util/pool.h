/*
 * A pool of fixed-size objects for hot paths (slices, work-request
 * contexts): get and put are a pointer swap; the pool grows by chunks and
 * gives its memory back only at fini.  A free object's first bytes hold the
 * free-list link, so callers initialise what they get.
 */
#ifndef SR_UTIL_POOL_H
#define SR_UTIL_POOL_H

#include <stddef.h>

#include "util/sys.h"

typedef struct {
    size_t  size;       /* object size, at least a pointer */
    size_t  per_chunk;
    void   *free;
    void  **chunks;
    size_t  nchunks;
} sr_pool_t;

void  sr_pool_init(sr_pool_t *pool, size_t size, size_t per_chunk);
void  sr_pool_fini(sr_pool_t *pool);
/* Adds a chunk and returns one of its objects; NULL when out of memory. */
void *sr_pool_grow(sr_pool_t *pool);

static inline void *sr_pool_get(sr_pool_t *pool)
{
    void *obj = pool->free;
    if (sr_unlikely(obj == NULL))
        return sr_pool_grow(pool);
    pool->free = *(void **)obj;
    return obj;
}

static inline void sr_pool_put(sr_pool_t *pool, void *obj)
{
    *(void **)obj = pool->free;
    pool->free = obj;
}

#endif
