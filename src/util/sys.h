/* Small operating-system helpers shared by every module. */
#ifndef SR_UTIL_SYS_H
#define SR_UTIL_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <symrail.h>

#define SR_CACHE_LINE 64
#define sr_likely(x)   __builtin_expect(!!(x), 1)
#define sr_unlikely(x) __builtin_expect(!!(x), 0)
#define SR_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

static inline uint64_t sr_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void sr_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Creates (exclusive) and maps a POSIX shared-memory object of `size` bytes
 * at an address aligned to `align` (a power of two, at least a page).  The
 * pages are backed lazily, on first touch. */
symrail_status_t sr_shm_create(const char *name, size_t size, size_t align, void **addr_p);
/* Maps an existing object read-write; its size must be `size`. */
symrail_status_t sr_shm_attach(const char *name, size_t size, void **addr_p);
/* Maps the first `size` bytes of an existing object of at least that size. */
symrail_status_t sr_shm_attach_part(const char *name, size_t size, void **addr_p);
void sr_shm_unlink(const char *name);
void sr_shm_unmap(void *addr, size_t size);
/* A name for a shared-memory object of this job:
 * /symrail-<job>-<rank>-<what>.n<PID namespace>.p<pid of the creator>, with
 * characters that cannot appear in such a name replaced. */
void sr_shm_name(char *buf, size_t len, const char *job, int rank, const char *what);
/* The creator's pid from the entry `name` of /dev/shm (no leading slash)
 * made by sr_shm_name in PID namespace `pidns`, or 0 (not such a name, or
 * made in another namespace). */
long sr_shm_name_pid(const char *name, unsigned long pidns);
/* Unlinks this user's symrail objects in /dev/shm whose creator, in this
 * PID namespace, is gone. */
void sr_shm_clean_stale(void);

/* Is process `pid` still there? */
int sr_pid_alive(int pid);
/* Is the peer process `pid` (from its address blob) known to be gone?  The one
 * check of a local peer's process every transport's ep_check makes; 0 for a
 * pid that was never told (0 or less), which would name a process group. */
int sr_pid_gone(int pid);

#endif
