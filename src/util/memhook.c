/*
 * The calls that can take pages away from under a registration (rcache.h),
 * interposed: libsymrail defines free, realloc, reallocarray, munmap,
 * mremap, mmap (and mmap64) and madvise, and the dynamic linker binds the
 * application's calls (and every library's loaded after this one) here.
 * Each one tests one counter (relaxed) and, when some cache holds an entry
 * and the memory lies in the span of the cached ranges, invalidates the
 * range before the memory goes.  Underneath are raw system calls, and the
 * free and realloc that come after ours (glibc's, or an allocator's linked
 * after libsymrail), looked up once by a constructor; before that, and if
 * there is none, glibc's __libc_free and __libc_realloc: no lookup at
 * first use, where dlsym may allocate and free and would recurse.  glibc's
 * free unmaps a large block with its own internal munmap, not through
 * here: free itself invalidates the whole block (malloc_usable_size) first.
 *
 * Not seen: memory changed by a raw system call (syscall(SYS_munmap)),
 * glibc-internal calls (a trimmed arena, which takes no page a live block
 * uses; the stacks of exited threads that glibc caches and unmaps), shmdt,
 * and calls bound before libsymrail (a library that interposes these
 * itself, a sanitizer's runtime): sr_memhook_active says when the hooks
 * are not the ones called.  Under AddressSanitizer and ThreadSanitizer,
 * whose allocators are not glibc's, the hooks are not built.
 */
#include "config.h"
#include "util/rcache.h"
#include "util/sanitizer.h"
#include "util/sys.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) && !defined(__SANITIZE_THREAD__)
#define __SANITIZE_THREAD__ 1
#endif
#endif

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && defined(__GLIBC__)
#define SR_MEMHOOK 1
#endif

/* Set while sr_memhook_active probes: each hook that runs sets its bit. */
static int sr_mh_probe;
static unsigned sr_mh_seen;

#ifdef SR_MEMHOOK
#define SR_MH_EXPORT __attribute__((visibility("default")))

extern void __libc_free(void *ptr);
extern void *__libc_realloc(void *ptr, size_t size);

static void (*sr_mh_free)(void *) = __libc_free;
static void *(*sr_mh_realloc)(void *, size_t) = __libc_realloc;

__attribute__((constructor)) static void sr_mh_init(void)
{
    void *f = dlsym(RTLD_NEXT, "free"), *r = dlsym(RTLD_NEXT, "realloc");
    if (f != NULL && r != NULL) {
        sr_mh_realloc = (void *(*)(void *, size_t))r;
        sr_mh_free = (void (*)(void *))f;
    }
}

/* Whether [addr, addr + len) may hold a cached entry: one load while the
 * caches are empty, and a span test that keeps the lock away from memory
 * no entry touches. */
static inline int sr_mh_hit(const void *addr, size_t len)
{
    if (sr_likely(__atomic_load_n(&sr_rcache_armed, __ATOMIC_RELAXED) == 0))
        return 0;
    uintptr_t a = (uintptr_t)addr;
    return __atomic_load_n(&sr_mh_probe, __ATOMIC_RELAXED) ||
           (a < __atomic_load_n(&sr_rcache_hi, __ATOMIC_RELAXED) &&
            a + len > __atomic_load_n(&sr_rcache_lo, __ATOMIC_RELAXED));
}

static inline int sr_mh_armed(void)
{
    return sr_unlikely(__atomic_load_n(&sr_rcache_armed, __ATOMIC_RELAXED) != 0);
}

static __attribute__((noinline)) void sr_mh_slow(unsigned bit, const void *addr, size_t len)
{
    if (__atomic_load_n(&sr_mh_probe, __ATOMIC_RELAXED))
        __atomic_fetch_or(&sr_mh_seen, bit, __ATOMIC_RELAXED);
    sr_rcache_invalidate(addr, len);
}

SR_MH_EXPORT void free(void *ptr)
{
    if (sr_mh_armed() && ptr != NULL) {
        size_t len = malloc_usable_size(ptr);
        if (sr_mh_hit(ptr, len))
            sr_mh_slow(1, ptr, len);
    }
    sr_mh_free(ptr);
}

/* The block may move or shrink: what was registered of it goes either way. */
SR_MH_EXPORT void *realloc(void *ptr, size_t size)
{
    if (sr_mh_armed() && ptr != NULL) {
        size_t len = malloc_usable_size(ptr);
        if (sr_mh_hit(ptr, len))
            sr_mh_slow(2, ptr, len);
    }
    return sr_mh_realloc(ptr, size);
}

/* Whatever the C library's reallocarray calls, the block may move. */
SR_MH_EXPORT void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(nmemb, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(ptr, bytes);
}

SR_MH_EXPORT int munmap(void *addr, size_t len)
{
    if (sr_mh_hit(addr, len))
        sr_mh_slow(4, addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

SR_MH_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    if (sr_mh_armed()) {
        sr_mh_slow(8, old, old_len);
        if (flags & MREMAP_FIXED)
            sr_mh_slow(8, new_addr, new_len);
    }
    return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

/* A fixed mapping replaces whatever was mapped there. */
SR_MH_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if ((flags & MAP_FIXED) && sr_mh_hit(addr, len))
        sr_mh_slow(16, addr, len);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* What programs built with _FILE_OFFSET_BITS=64 call (the same on 64-bit). */
SR_MH_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

SR_MH_EXPORT int madvise(void *addr, size_t len, int advice)
{
    if (sr_mh_hit(addr, len)) {
        switch (advice) {
        case MADV_DONTNEED:
#ifdef MADV_FREE
        case MADV_FREE:
#endif
        case MADV_REMOVE:
            sr_mh_slow(32, addr, len);
            break;
        default:
            break;
        }
    }
    return (int)syscall(SYS_madvise, addr, len, advice);
}
#endif

int sr_memhook_active(void)
{
#ifdef SR_MEMHOOK
    static int active = -1;
    int a = __atomic_load_n(&active, __ATOMIC_ACQUIRE);
    if (a >= 0)
        return a;
    /* One entry's worth of armed sends the next calls down the slow path,
     * which notes that it ran; volatile keeps the compiler from pairing
     * malloc with free away. */
    __atomic_fetch_add(&sr_rcache_armed, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&sr_mh_probe, 1, __ATOMIC_RELAXED);
    void *volatile p = malloc(64);
    void *volatile q = realloc(p, 128);
    free(q);
    long pg = sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED)
        munmap(m, (size_t)pg);
    __atomic_store_n(&sr_mh_probe, 0, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&sr_rcache_armed, 1, __ATOMIC_RELAXED);
    a = (__atomic_load_n(&sr_mh_seen, __ATOMIC_RELAXED) & 7) == 7;
    __atomic_store_n(&active, a, __ATOMIC_RELEASE);
    return a;
#else
    return 0;
#endif
}
