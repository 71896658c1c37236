/* Forwarding of the ranks' output, whole lines at a time. */
#define _GNU_SOURCE

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

void sr_symrun_stream_init(sr_symrun_stream_t *s, int dest_fd)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->dest_fd = dest_fd;
}

/* ---- output forwarding ------------------------------------------------- */

static void sr_symrun_writev_all(sr_symrun_job_t *job, int fd,
                                 struct iovec *iov, int iovcnt)
{
    if (job->dest_dead[fd])
        return;
    while (iovcnt > 0) {
        ssize_t n = writev(fd, iov, iovcnt);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                /* Our stdout may be shared with a process that set it
                 * non-blocking; wait rather than drop output. */
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};

                poll(&pfd, 1, -1);
                continue;
            }
            job->dest_dead[fd] = true;
            return;
        }
        while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
}

/* Writes one piece of a line (pending part a, new part b) in one call, so
 * lines of different ranks never interleave. */
static void sr_symrun_emit(sr_symrun_job_t *job, int r, sr_symrun_stream_t *s,
                           const char *a, size_t alen, const char *b,
                           size_t blen, bool add_newline)
{
    char prefix[24];
    struct iovec iov[4];
    int n = 0;

    if (job->args.prefix_output && !s->midline) {
        int plen = snprintf(prefix, sizeof(prefix), "[%d] ", r);

        iov[n].iov_base = prefix;
        iov[n++].iov_len = (size_t)plen;
    }
    if (alen > 0) {
        iov[n].iov_base = (void *)a;
        iov[n++].iov_len = alen;
    }
    if (blen > 0) {
        iov[n].iov_base = (void *)b;
        iov[n++].iov_len = blen;
    }
    if (add_newline) {
        iov[n].iov_base = "\n";
        iov[n++].iov_len = 1;
    }
    sr_symrun_writev_all(job, s->dest_fd, iov, n);
}

static int sr_symrun_stream_keep(sr_symrun_stream_t *s, const char *data,
                                 size_t len)
{
    if (s->len + len > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        char *buf;

        while (cap < s->len + len)
            cap *= 2;
        buf = realloc(s->buf, cap);
        if (buf == NULL)
            return -1;
        s->buf = buf;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    return 0;
}

static void sr_symrun_stream_input(sr_symrun_job_t *job, int r,
                                   sr_symrun_stream_t *s, const char *data,
                                   size_t len)
{
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t n;

        if (nl == NULL) {
            if (s->len + len >= SR_SYMRUN_LINE_MAX ||
                sr_symrun_stream_keep(s, data, len) != 0) {
                sr_symrun_emit(job, r, s, s->buf, s->len, data, len, false);
                s->len = 0;
                s->midline = true;
            }
            return;
        }
        n = (size_t)(nl - data) + 1;
        sr_symrun_emit(job, r, s, s->buf, s->len, data, n, false);
        s->len = 0;
        s->midline = false;
        data += n;
        len -= n;
    }
}

void sr_symrun_stream_close(sr_symrun_job_t *job, int r,
                                   sr_symrun_stream_t *s)
{
    if (s->fd < 0)
        return;
    /* A last line without its newline is still output. It is terminated
     * so that another rank's next line does not continue it, except for a
     * lone unprefixed rank, whose output then passes through unchanged. */
    bool terminate = job->args.prefix_output || job->args.nranks > 1;

    if (s->len > 0 || (s->midline && terminate))
        sr_symrun_emit(job, r, s, s->buf, s->len, NULL, 0, terminate);
    s->len = 0;
    s->midline = false;
    close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

void sr_symrun_stream_read(sr_symrun_job_t *job, int r,
                                  sr_symrun_stream_t *s)
{
    ssize_t n;

    do {
        n = read(s->fd, job->readbuf, SR_SYMRUN_READ_CHUNK);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        sr_symrun_stream_input(job, r, s, job->readbuf, (size_t)n);
        return;
    }
    if (n < 0 && errno == EAGAIN)
        return;
    sr_symrun_stream_close(job, r, s);
}

