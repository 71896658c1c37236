/*
 * Global and static variables as a second symmetric region: the writable
 * PT_LOAD segment of the executable (.data, .bss), less the part that
 * PT_GNU_RELRO makes read-only after relocation.
 *
 * At init the segment's pages move onto a shared-memory object: they are
 * copied into the object, and the object is then moved over the same
 * addresses (mremap), so the program sees the same variables and the region
 * is like the heap: local peers map the object, RDMA registers it, TCP
 * serves it, and symrail_ptr gives load/store access to a peer's globals.
 * Offsets count from each PE's own segment start (PIE and ASLR place it
 * anywhere); peers agree at wireup that their segments have the same size
 * and place in the file, i.e. that they run the same executable.
 *
 * Threads that write globals while the pages move would lose their writes:
 * the segment is read-only meanwhile, and a write fault in it waits in a
 * signal handler until the object is in place, then the write is made again
 * on the new mapping.  A child of fork() would share the parent's globals:
 * an atfork handler gives it a private copy.
 */
#include "config.h"
#include "core/rt.h"
#include "util/log.h"
#include "util/sanitizer.h"
#include "util/status.h"
#include "util/sys.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct {
    uintptr_t lo, hi;   /* page-aligned, relocated */
    uint64_t  vaddr;    /* lo as the file says (before relocation) */
} sr_data_seg_t;

/* Read by the fault handler and the fork handler: kept out of sr_rt, whose
 * fields change while other threads run. */
static char *sr_data_lo;
static size_t sr_data_len;
static int sr_data_freezing;
static int sr_data_shared;  /* the segment is the object's mapping */
static struct sigaction sr_data_old_segv;

static int sr_data_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    sr_data_seg_t *seg = arg;
    uintptr_t lo = 0, hi = 0, relro_hi = 0, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    (void)size;
    /* The first object is the executable. */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && hi == 0) {
            lo = info->dlpi_addr + ph->p_vaddr;
            hi = lo + ph->p_memsz;
        } else if (ph->p_type == PT_GNU_RELRO) {
            relro_hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    if (relro_hi > lo && relro_hi <= hi)
        lo = relro_hi;
    lo = SR_ALIGN_UP(lo, page);
    hi = SR_ALIGN_UP(hi, page);
    if (hi > lo) {
        seg->lo = lo;
        seg->hi = hi;
        seg->vaddr = lo - info->dlpi_addr;
    }
    return 1;
}

int sr_data_contains(const void *addr)
{
    sr_data_seg_t seg = { 0, 0, 0 };
    dl_iterate_phdr(sr_data_phdr_cb, &seg);
    return (uintptr_t)addr >= seg.lo && (uintptr_t)addr < seg.hi;
}

/* [off, off+len) of the user heap, len > 0: SR_OFF_BAD, logged, unless it
 * lies in one live allocation (the table answers, or where it cannot tell
 * the segment list). */
static uint64_t sr_sym_heap_check(const char *fn, const char *arg, const void *addr,
                                  uint64_t off, size_t len)
{
    uint64_t boff, blen;
    if (sr_heap_span_ok(&sr_rt.heap, off, len))
        return off;  /* the collectives' checks come here first */
    int used = sr_heap_block(&sr_rt.heap, off, &boff, &blen);
    const char *base = sr_rt.heap_base;
    if (!used) {
        sr_error("%s: %s %p is not in a live symmetric allocation (a free range of the heap: "
                 "freed, or never allocated)", fn, arg, addr);
        return SR_OFF_BAD;
    }
    if (len <= boff + blen - off)
        return off;  /* a granule the table has no second level for */
    sr_error("%s: %s %p + %zu bytes runs %llu bytes past the end of its symmetric allocation "
             "[%p, %p) of %llu bytes", fn, arg, addr, len,
             (unsigned long long)(off + len - boff - blen), (const void *)(base + boff),
             (const void *)(base + boff + blen), (unsigned long long)blen);
    return SR_OFF_BAD;
}

uint64_t sr_sym_off(const char *fn, const char *arg, const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr, lo = (uintptr_t)sr_rt.heap_base + sr_rt.heap_reserved;
    uintptr_t hi = (uintptr_t)sr_rt.heap_base + sr_rt.heap_size;
    uintptr_t dlo = (uintptr_t)sr_rt.data_base, dhi = dlo + sr_rt.data_len;
    if (a >= lo && a < hi && len <= hi - a) {
        /* A pointer alone (free, ptr, addr_accessible) may be anywhere in it. */
        if (len == 0)
            return a - (uintptr_t)sr_rt.heap_base;
        return sr_sym_heap_check(fn, arg, addr, a - (uintptr_t)sr_rt.heap_base, len);
    }
    if (a >= dlo && a < dhi && sr_rt.data_on) {
        if (len <= dhi - a)
            return SR_DATA_BIT | (a - dlo);
        sr_error("%s: %s %p + %zu bytes runs past the end of the symmetric data segment (%p)",
                 fn, arg, addr, len, (void *)dhi);
    } else if ((a >= dlo && a < dhi) || sr_data_contains(addr)) {
        sr_error("%s: %s %p is a global or static variable, and those are not symmetric in "
                 "this job (see the warning at init); use the symmetric heap", fn, arg, addr);
    } else if (a >= lo && a < hi) {
        sr_error("%s: %s %p + %zu bytes runs past the end of the symmetric heap (%p)", fn, arg,
                 addr, len, (void *)hi);
    } else if (sr_rt.data_on) {
        sr_error("%s: %s %p is neither in the symmetric heap [%p, %p) nor a global or static "
                 "variable of the executable [%p, %p)", fn, arg, addr, (void *)lo, (void *)hi,
                 (void *)dlo, (void *)dhi);
    } else {
        sr_error("%s: %s %p is not in the symmetric heap [%p, %p)", fn, arg, addr, (void *)lo,
                 (void *)hi);
    }
    return SR_OFF_BAD;
}

/* AddressSanitizer puts a poisoned redzone after every global of an
 * instrumented program, in the segment itself: the copy of the whole
 * segment must read them.  So the copy is not instrumented, and does not
 * go through memcpy, which the sanitizer intercepts and checks.  The
 * sanitizer's shadow stays right: it is kept by address, and the pages
 * come back at the same addresses. */
#ifdef __SANITIZE_ADDRESS__
SR_NO_ASAN static void sr_data_copy_page(char *dst, const char *src, size_t page)
{
    /* volatile: the loop stays a loop, not a call of the intercepted memcpy. */
    const volatile uint64_t *s = (const volatile uint64_t *)(const volatile void *)src;
    uint64_t *d = (uint64_t *)(void *)dst;
    for (size_t i = 0; i < page / sizeof(*d); i++)
        d[i] = s[i];
}
#else
static void sr_data_copy_page(char *dst, const char *src, size_t page)
{
    memcpy(dst, src, page);
}
#endif

/* Pages never written are zero in the object already: copying them would
 * only back them with memory (a large BSS costs nothing until touched). */
SR_NO_ASAN static void sr_data_copy(char *dst, const char *src, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < len; off += page) {
        const uint64_t *w = (const uint64_t *)(const void *)(src + off);
        size_t i = 0, n = page / sizeof(*w);
        while (i < n && w[i] == 0)
            i++;
        if (i < n)
            sr_data_copy_page(dst + off, src + off, page);
    }
}

/* A write into the segment while it moves: wait until it is in place, then
 * the write is made again, on the new mapping. */
static void sr_data_segv(int sig, siginfo_t *si, void *uctx)
{
    const char *a = si->si_addr;
    (void)sig, (void)uctx;
    /* The flag first: its acquire orders the reads of the segment's bounds
     * after init wrote them (a fault of another thread is no ordering). */
    if (__atomic_load_n(&sr_data_freezing, __ATOMIC_ACQUIRE) && a >= sr_data_lo &&
        a < sr_data_lo + sr_data_len) {
        while (__atomic_load_n(&sr_data_freezing, __ATOMIC_ACQUIRE))
            sched_yield();
        return;
    }
    /* Not ours, or a write fault of the frozen window delivered only after
     * it closed (a thread preempted between its fault and the signal): the
     * write is made again on the new mapping, and any fault from here on
     * comes back under the program's own disposition. */
    sigaction(SIGSEGV, &sr_data_old_segv, NULL);
}

/* Copies the segment into a new object `name` and maps the object over it. */
static symrail_status_t sr_data_move(const char *name)
{
    void *tmp;
    symrail_status_t st = sr_shm_create(name, sr_data_len, 0, &tmp);
    if (st != SYMRAIL_OK)
        return st;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = sr_data_segv;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct sigaction cur;
    sigaction(SIGSEGV, NULL, &cur);
    /* Still ours from an earlier init: what it would give back stays. */
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == sr_data_segv)
        memcpy(&cur, &sr_data_old_segv, sizeof(cur));
    if (sigaction(SIGSEGV, &sa, NULL) != 0) {
        st = sr_status_from_errno(errno);
        sr_error("installing the handler that guards the data segment's move failed: %m");
        goto err_unmap;
    }
    sr_data_old_segv = cur;
    /* When this library is linked into the executable, its lazily bound
     * calls write their GOT entries in the segment itself: bind every call of
     * the frozen window (and of the handler) before the segment is frozen. */
    {
        char a[8] = { 0 }, b[8];
        volatile size_t n = sizeof(b);  /* a call to memcpy, not inlined moves */
        memcpy(b, a, n);
        (void)mremap(NULL, 0, 0, 0);
        (void)sysconf(_SC_PAGESIZE);
        sched_yield();
    }
    __atomic_store_n(&sr_data_freezing, 1, __ATOMIC_RELEASE);
    if (mprotect(sr_data_lo, sr_data_len, PROT_READ) != 0) {
        st = sr_status_from_errno(errno);
        __atomic_store_n(&sr_data_freezing, 0, __ATOMIC_RELEASE);
        sr_error("write-protecting the data segment (%zu bytes) failed: %m", sr_data_len);
        goto err_handler;
    }
    /* Nothing writes to the segment from here to the mremap: not even this
     * library, were it linked into the executable. */
    sr_data_copy(tmp, sr_data_lo, sr_data_len);
    void *at = mremap(tmp, sr_data_len, sr_data_len, MREMAP_MAYMOVE | MREMAP_FIXED, sr_data_lo);
    int err = errno;
    if (at == MAP_FAILED)
        mprotect(sr_data_lo, sr_data_len, PROT_READ | PROT_WRITE);
    __atomic_store_n(&sr_data_freezing, 0, __ATOMIC_RELEASE);
    /* The handler stays: a thread whose write faulted in the window may get
     * its signal only now, and under the program's disposition it would die
     * (the handler gives that back at the first fault it does not keep). */
    if (at == MAP_FAILED) {
        sigaction(SIGSEGV, &sr_data_old_segv, NULL);
        st = sr_status_from_errno(err);
        sr_error("mapping shared memory over the data segment failed: %s", strerror(err));
        goto err_unmap;
    }
    sr_data_shared = 1;
    return SYMRAIL_OK;

err_handler:
    sigaction(SIGSEGV, &sr_data_old_segv, NULL);
err_unmap:
    sr_shm_unmap(tmp, sr_data_len);
    sr_shm_unlink(name);
    return st;
}

/* The child of a fork gets globals of its own, as without the library. */
static void sr_data_atfork_child(void)
{
    if (!sr_data_shared)
        return;
    void *tmp = mmap(NULL, sr_data_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (tmp != MAP_FAILED) {
        sr_data_copy(tmp, sr_data_lo, sr_data_len);
        if (mremap(tmp, sr_data_len, sr_data_len, MREMAP_MAYMOVE | MREMAP_FIXED, sr_data_lo) !=
            MAP_FAILED) {
            sr_data_shared = 0;
            return;
        }
        munmap(tmp, sr_data_len);
    }
    sr_warn("fork: giving the child a private copy of the global variables failed (%m); it "
            "shares them with its parent");
}

static void sr_data_register_atfork(void)
{
    pthread_atfork(NULL, NULL, sr_data_atfork_child);
}

symrail_status_t sr_data_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    const sr_boot_info_t *bi = sr_boot_info(sr_rt.boot);
    sr_data_seg_t seg = { 0, 0, 0 };

    sr_rt.data_on = 0;
    if (!sr_rt.env.symmetric_data) {
        sr_info("SYMRAIL_SYMMETRIC_DATA=0: global and static variables are not symmetric");
        return SYMRAIL_OK;
    }
    if (sr_data_shared) {
        /* A second init in the same process: the segment moved already. */
        sr_rt.data_base = sr_data_lo;
        sr_rt.data_len = sr_data_len;
    } else {
        dl_iterate_phdr(sr_data_phdr_cb, &seg);
        if (seg.hi == 0) {
            sr_info("the executable has no writable data segment: no symmetric globals");
            return SYMRAIL_OK;
        }
        sr_data_lo = (char *)seg.lo;
        sr_data_len = seg.hi - seg.lo;
        sr_rt.data_base = sr_data_lo;
        sr_rt.data_len = sr_data_len;
        sr_rt.data_vaddr = seg.vaddr;
    }
    sr_shm_name(sr_rt.data_name, sizeof(sr_rt.data_name), bi->job, bi->rank, "data");
    symrail_status_t st = sr_data_move(sr_rt.data_name);
    if (st != SYMRAIL_OK) {
        sr_warn("global and static variables are not symmetric (moving the data segment onto "
                "shared memory failed); only the symmetric heap is");
        sr_rt.data_len = 0;
        return SYMRAIL_OK;
    }
    sr_rt.data_named = 1;
    pthread_once(&once, sr_data_register_atfork);
    sr_debug("data segment %p, %zu bytes (file offset 0x%llx), on shared memory",
             (void *)sr_rt.data_base, sr_rt.data_len, (unsigned long long)sr_rt.data_vaddr);
    return SYMRAIL_OK;
}

/* The segment stays on the object's mapping: the program keeps its globals
 * after finalize. */
void sr_data_fini(void)
{
    if (sr_rt.data_named)
        sr_shm_unlink(sr_rt.data_name);
    sr_rt.data_named = 0;
    sr_rt.data_on = 0;
}
