#include "config.h"
#include "sys.h"
#include "log.h"
#include "status.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static symrail_status_t sr_shm_map(const char *name, int fd, size_t size, size_t align,
                                   void **addr_p)
{
    int flags = MAP_SHARED | MAP_NORESERVE;
    char *hint = NULL, *resv = NULL;
    size_t resv_len = 0;

    if (align > (size_t)sysconf(_SC_PAGESIZE)) {
        /* mmap only promises page alignment: reserve room to slide into. */
        resv_len = size + align;
        resv = mmap(NULL, resv_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (resv == MAP_FAILED) {
            int err = errno;
            sr_error("reserving %zu bytes of address space for %s failed: %s", resv_len, name,
                     strerror(err));
            return sr_status_from_errno(err);
        }
        hint = (char *)(((uintptr_t)resv + align - 1) & ~(uintptr_t)(align - 1));
        flags |= MAP_FIXED;
    }
    void *addr = mmap(hint, size, PROT_READ | PROT_WRITE, flags, fd, 0);
    if (addr == MAP_FAILED) {
        int err = errno;
        sr_error("mmap of shared memory %s (%zu bytes) failed: %s", name, size, strerror(err));
        if (resv)
            munmap(resv, resv_len);
        return sr_status_from_errno(err);
    }
    if (resv) {
        /* Give back the reservation on both sides of the mapping. */
        if (hint > resv)
            munmap(resv, (size_t)(hint - resv));
        size_t tail = (size_t)(resv + resv_len - (hint + size));
        if (tail)
            munmap(hint + size, tail);
    }
    *addr_p = addr;
    return SYMRAIL_OK;
}

symrail_status_t sr_shm_create(const char *name, size_t size, size_t align, void **addr_p)
{
    symrail_status_t st;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        int err = errno;
        sr_error("shm_open(%s) failed: %s", name, strerror(err));
        return sr_status_from_errno(err);
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        int err = errno;
        sr_error("sizing shared memory %s to %zu bytes failed: %s", name, size, strerror(err));
        st = sr_status_from_errno(err);
        goto err_unlink;
    }
    st = sr_shm_map(name, fd, size, align, addr_p);
    if (st != SYMRAIL_OK)
        goto err_unlink;
    close(fd);
    return SYMRAIL_OK;

err_unlink:
    shm_unlink(name);
    close(fd);
    return st;
}

static symrail_status_t sr_shm_attach_any(const char *name, size_t size, int exact,
                                          void **addr_p)
{
    struct stat sb;
    symrail_status_t st;
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        int err = errno;
        sr_error("attaching shared memory %s failed: %s", name, strerror(err));
        return err == ENOENT ? SYMRAIL_ERR_PEER_GONE : sr_status_from_errno(err);
    }
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < size ||
        (exact && (size_t)sb.st_size != size)) {
        sr_error("shared memory %s has %lld bytes, expected %s%zu", name,
                 (long long)sb.st_size, exact ? "" : "at least ", size);
        close(fd);
        return SYMRAIL_ERR_TRANSPORT;
    }
    st = sr_shm_map(name, fd, size, 0, addr_p);
    close(fd);
    return st;
}

symrail_status_t sr_shm_attach(const char *name, size_t size, void **addr_p)
{
    return sr_shm_attach_any(name, size, 1, addr_p);
}

symrail_status_t sr_shm_attach_part(const char *name, size_t size, void **addr_p)
{
    return sr_shm_attach_any(name, size, 0, addr_p);
}

void sr_shm_unlink(const char *name)
{
    if (shm_unlink(name) != 0 && errno != ENOENT)
        sr_warn("shm_unlink(%s) failed: %m", name);
}

void sr_shm_unmap(void *addr, size_t size)
{
    if (addr != NULL)
        munmap(addr, size);
}

/* The inode of this process's PID namespace: a pid means something only
 * within its namespace, and processes of other namespaces (containers,
 * `unshare -p`) may share /dev/shm with us. */
static unsigned long sr_pidns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

void sr_shm_name(char *buf, size_t len, const char *job, int rank, const char *what)
{
    snprintf(buf, len, "/symrail-%s-%d-%s.n%lx.p%ld", job, rank, what, sr_pidns(),
             (long)getpid());
    for (char *p = buf + 1; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
}

long sr_shm_name_pid(const char *name, unsigned long pidns)
{
    const char *dot = strrchr(name, '.'), *ns;
    char *end;
    long pid;

    if (strncmp(name, "symrail-", 8) != 0 || dot == NULL || dot[1] != 'p')
        return 0;
    pid = strtol(dot + 2, &end, 10);
    if (*end != '\0' || end == dot + 2 || pid <= 1)
        return 0;
    /* The namespace tag right before: a name without one, or from another
     * namespace, has a pid we cannot check. */
    for (ns = dot - 1; ns > name && *ns != '.'; ns--)
        ;
    if (ns <= name || ns[1] != 'n' || strtoul(ns + 2, &end, 16) != pidns || end != dot)
        return 0;
    return pid;
}

/*
 * A PE killed during init (after it created its objects, before every peer
 * attached and the names were dropped) leaves up to a heap's worth of
 * /dev/shm behind, and under a launcher other than symrun nobody else
 * knows the names. Every init therefore removes what dead PEs of this user
 * and PID namespace left; a live creator's objects, and those of processes
 * in other PID namespaces, are never touched.
 */
void sr_shm_clean_stale(void)
{
    DIR *d = opendir("/dev/shm");
    uid_t me = geteuid();
    unsigned long ns = sr_pidns();

    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        struct stat st;
        long pid = sr_shm_name_pid(e->d_name, ns);

        if (pid == 0 || pid > INT_MAX || sr_pid_alive((int)pid) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != me)
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            sr_info("removed /dev/shm/%s, left by process %ld, which is gone", e->d_name, pid);
    }
    closedir(d);
}

int sr_pid_alive(int pid)
{
    return kill(pid, 0) == 0 || errno == EPERM;
}

int sr_pid_gone(int pid)
{
    return pid > 0 && !sr_pid_alive(pid);
}
