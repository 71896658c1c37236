/*
 * The symmetric heap through OpenSHMEM's calls.  Every call is collective;
 * PEs whose calls differ cannot go on (their heaps would no longer match),
 * so that ends the job, as do a pointer that is not an allocation's start.
 */
#include "config.h"
#include "shmem/sh.h"
#include "core/heap_alloc.h"

#include <string.h>

static void *sr_sh_alloc(const char *fn, size_t size, size_t align, int zero)
{
    void *ptr;
    SR_SH_UP(fn);
    symrail_status_t st = sr_heap_malloc(size, align, zero, fn, &ptr);
    if (st == SYMRAIL_ERR_MISMATCH)
        sr_sh_fail(fn, st);
    return st == SYMRAIL_OK ? ptr : NULL;
}

/* The size of the live allocation at ptr, ending the job if there is none. */
static size_t sr_sh_block(const char *fn, void *ptr)
{
    uint64_t off;
    if (!sr_api_sym_ok(fn, "ptr", ptr, 0, &off))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    size_t size = (size_t)sr_heap_alloc_size(&sr_rt.heap, off);
    if (size == 0)
        sr_sh_fatal(fn, "ptr %p is not the start of a live symmetric allocation", ptr);
    return size;
}

void *shmem_malloc(size_t size)
{
    return sr_sh_alloc("shmem_malloc", size, 0, 0);
}

void *shmem_malloc_with_hints(size_t size, long hints)
{
    long known = SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE;
    if (hints & ~known)
        sr_sh_fatal("shmem_malloc_with_hints", "hints 0x%lx has bits that are no "
                    "SHMEM_MALLOC_* hint", hints);
    /* Every allocation is already fit for remote atomics and signals. */
    return sr_sh_alloc("shmem_malloc_with_hints", size, 0, 0);
}

void *shmem_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        sr_sh_fatal("shmem_calloc", "count %zu x size %zu overflows", count, size);
    return sr_sh_alloc("shmem_calloc", count * size, 0, 1);
}

void *shmem_align(size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        sr_sh_fatal("shmem_align", "alignment %zu is not a power of two", alignment);
    return sr_sh_alloc("shmem_align", size, alignment, 0);
}

void shmem_free(void *ptr)
{
    static const char fn[] = "shmem_free";
    SR_SH_UP(fn);
    if (ptr == NULL)
        return;
    sr_sh_block(fn, ptr);
    symrail_status_t st = sr_heap_release(ptr);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
}

void *shmem_realloc(void *ptr, size_t size)
{
    static const char fn[] = "shmem_realloc";
    SR_SH_UP(fn);
    if (ptr == NULL)
        return sr_sh_alloc(fn, size, 0, 0);
    size_t old = sr_sh_block(fn, ptr);
    if (size == 0) {
        shmem_free(ptr);
        return NULL;
    }
    /* A new block, the data, then the old block away: both calls are
     * collective, so every PE moves its block the same way. */
    void *nptr = sr_sh_alloc(fn, size, 0, 0);
    if (nptr == NULL)
        return NULL;  /* the old block stays, as realloc leaves it */
    memcpy(nptr, ptr, old < size ? old : size);
    symrail_status_t st = sr_heap_release(ptr);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
    return nptr;
}

void *shmalloc(size_t size)
{
    return sr_sh_alloc("shmalloc", size, 0, 0);
}

void *shmemalign(size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        sr_sh_fatal("shmemalign", "alignment %zu is not a power of two", alignment);
    return sr_sh_alloc("shmemalign", size, alignment, 0);
}

void *shrealloc(void *ptr, size_t size)
{
    return shmem_realloc(ptr, size);
}

void shfree(void *ptr)
{
    shmem_free(ptr);
}
