#include "config.h"
#include "core/rt.h"
#include "core/team.h"
#include "util/log.h"
#include "util/sys.h"

#include <string.h>
#include <unistd.h>

symrail_status_t sr_heap_init(void)
{
    const sr_boot_info_t *bi = sr_boot_info(sr_rt.boot);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t size = sr_rt.env.heap_size;
    symrail_status_t st;

    /* The variable table's range (8K..64T) leaves room past SR_HEAP_RESERVED. */
    /* The teams' slots come out of the heap's start, so that the heap every
     * transport registers is SYMRAIL_HEAP_SIZE as before; after them one
     * word per PE for the survivors' finalize (sync.c). */
    size_t reserved = SR_ALIGN_UP(sr_fin_base() + (size_t)sr_rt.n_pes * 8, page);
    size = SR_ALIGN_UP(size, page);
    if (reserved + 64 * 1024 > size) {
        sr_error("SYMRAIL_HEAP_SIZE=%llu leaves too little room for the teams' %zu reserved "
                 "bytes (SYMRAIL_TEAMS_MAX x SYMRAIL_TEAM_SCRATCH); raise the heap or lower "
                 "those", (unsigned long long)size, reserved);
        return SYMRAIL_ERR_INVALID;
    }
    sr_shm_clean_stale();
    sr_shm_name(sr_rt.heap_name, sizeof(sr_rt.heap_name), bi->job, bi->rank, "heap");
    size_t align = SR_HEAP_MAX_BASE_ALIGN;
    while (align > size)
        align >>= 1;
    st = sr_shm_create(sr_rt.heap_name, size, align, (void **)&sr_rt.heap_base);
    if (st != SYMRAIL_OK)
        return st;
    sr_rt.heap_named = 1;
    sr_rt.heap_size = size;
    sr_rt.heap_align = align;
    sr_rt.heap_reserved = reserved;
    st = sr_heap_alloc_init(&sr_rt.heap, reserved, size - reserved);
    if (st != SYMRAIL_OK)
        goto err_unmap;
    return SYMRAIL_OK;

err_unmap:
    sr_shm_unmap(sr_rt.heap_base, size);
    sr_shm_unlink(sr_rt.heap_name);
    sr_rt.heap_named = 0;
    sr_rt.heap_base = NULL;
    return st;
}

void sr_heap_fini(void)
{
    if (sr_rt.heap_named)
        sr_shm_unlink(sr_rt.heap_name);
    sr_rt.heap_named = 0;
    sr_heap_alloc_fini(&sr_rt.heap);
    sr_shm_unmap(sr_rt.heap_base, sr_rt.heap_size);
    sr_rt.heap_base = NULL;
}

static symrail_status_t sr_heap_malloc_locked(size_t size, size_t align, int zero,
                                              const char *what, void **ptr_p)
{
    uint64_t off = 0;
    symrail_status_t st = SYMRAIL_OK;
    void *ptr = NULL;

    *ptr_p = NULL;
    if (align > sr_rt.heap_align) {
        sr_error("%s: alignment %zu is larger than the heap base's alignment %zu", what, align,
                 sr_rt.heap_align);
        return SYMRAIL_ERR_INVALID;  /* the same answer on every PE: no barrier needed */
    }
    if (size != 0) {
        st = sr_heap_alloc(&sr_rt.heap, size, align, &off);
        if (st == SYMRAIL_OK) {
            ptr = sr_rt.heap_base + off;
            /* Before the barrier: peers may write to it as soon as they leave. */
            if (zero)
                memset(ptr, 0, size);
        } else if (st == SYMRAIL_ERR_NOMEM) {
            sr_error("%s(%zu): the symmetric heap is exhausted (%llu of %zu bytes in use, "
                     "largest free block %llu bytes); raise SYMRAIL_HEAP_SIZE", what, size,
                     (unsigned long long)sr_rt.heap.used_bytes, sr_rt.heap_size,
                     (unsigned long long)sr_heap_largest_free(&sr_rt.heap));
        } else {
            sr_error("%s: invalid size %zu or alignment %zu (alignment must be a power of two)",
                     what, size, align);
        }
    }
    /* Like shmem_malloc: every PE leaves only when all have allocated.  The
     * barrier carries the arguments, so PEs whose heaps would diverge stop. */
    symrail_status_t bst = sr_ctx_quiet(sr_rt.dctx);
    if (bst == SYMRAIL_OK)
        bst = sr_barrier_coll(SR_COLL_ALLOC, size, align);
    if (bst != SYMRAIL_OK) {
        if (ptr)
            sr_heap_free(&sr_rt.heap, off);
        return bst;
    }
    if (st == SYMRAIL_OK)
        *ptr_p = ptr;
    return st;
}

static symrail_status_t sr_heap_release_locked(void *ptr)
{
    uint64_t off = sr_heap_offset(ptr);
    /* Like shmem_free: nobody may still be accessing the object.  The
     * barrier carries the block's size, so a free missing on one PE stops
     * the job instead of shifting every later allocation. */
    symrail_status_t st = sr_ctx_quiet(sr_rt.dctx);
    if (st == SYMRAIL_OK)
        st = sr_barrier_coll(SR_COLL_FREE, sr_heap_alloc_size(&sr_rt.heap, off), 0);
    if (st != SYMRAIL_OK)
        return st;
    st = sr_heap_free(&sr_rt.heap, off);
    if (st != SYMRAIL_OK)
        sr_error("symrail_free(%p): not the start of a live symmetric allocation", ptr);
    return st;
}

/* Heap calls are collective, one thread per PE at a time; should threads
 * call them at once anyway, the heap's bookkeeping stays whole (the barrier
 * then reports the calls that do not match between PEs). */
symrail_status_t sr_heap_malloc(size_t size, size_t align, int zero, const char *what,
                                void **ptr_p)
{
    if (sr_rt.mt)
        pthread_mutex_lock(&sr_rt.heap_lock);
    symrail_status_t st = sr_heap_malloc_locked(size, align, zero, what, ptr_p);
    if (sr_rt.mt)
        pthread_mutex_unlock(&sr_rt.heap_lock);
    return st;
}

symrail_status_t sr_heap_release(void *ptr)
{
    if (sr_rt.mt)
        pthread_mutex_lock(&sr_rt.heap_lock);
    symrail_status_t st = sr_heap_release_locked(ptr);
    if (sr_rt.mt)
        pthread_mutex_unlock(&sr_rt.heap_lock);
    return st;
}
