#include "config.h"
#include "util/pool.h"

#include <stdlib.h>
#include <string.h>

void sr_pool_init(sr_pool_t *pool, size_t size, size_t per_chunk)
{
    memset(pool, 0, sizeof(*pool));
    /* Rounded so that every object in a chunk stays pointer-aligned. */
    pool->size = SR_ALIGN_UP(size < sizeof(void *) ? sizeof(void *) : size, sizeof(void *));
    pool->per_chunk = per_chunk ? per_chunk : 1;
}

void *sr_pool_grow(sr_pool_t *pool)
{
    void **chunks = realloc(pool->chunks, (pool->nchunks + 1) * sizeof(*chunks));
    if (chunks == NULL)
        return NULL;
    pool->chunks = chunks;
    char *chunk = calloc(pool->per_chunk, pool->size);
    if (chunk == NULL)
        return NULL;
    pool->chunks[pool->nchunks++] = chunk;
    for (size_t i = pool->per_chunk; i-- > 1;)
        sr_pool_put(pool, chunk + i * pool->size);
    return chunk;
}

void sr_pool_fini(sr_pool_t *pool)
{
    for (size_t i = 0; i < pool->nchunks; i++)
        free(pool->chunks[i]);
    free(pool->chunks);
    memset(pool, 0, sizeof(*pool));
}
