/*
 * tcp_stream: the raw TCP reference for tcp_bench.sh, measured over the same
 * link as symrail's TCP transport.
 *
 *   tcp_stream server IP PORT          serves clients until killed
 *   tcp_stream client IP PORT SIZE MS  streams SIZE-byte messages for about MS ms
 *                                      and prints "SIZE MB/s"
 *
 * The client writes messages of SIZE bytes back to back on one connection
 * with TCP_NODELAY, the server reads them into one buffer of that size, and
 * the time runs until the server has read the last byte: what one socket
 * carries from a user buffer to a user buffer, with nothing else in the way.
 * MB/s = 10^6 bytes/s.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int xfer(int fd, void *buf, size_t len, int is_send)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = is_send ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int addr_of(const char *ip, const char *port, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)atoi(port));
    return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

/* One client: a 64-bit message size, then messages until the client shuts
 * its side down; the server answers with the byte count it read. */
static void serve(int fd)
{
    uint64_t size, total = 0;
    char *buf;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (xfer(fd, &size, sizeof(size), 0) != 0 || size == 0 || size > (1ull << 30) ||
        (buf = malloc(size)) == NULL) {
        close(fd);
        return;
    }
    for (;;) {
        ssize_t r = recv(fd, buf, size, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        total += (uint64_t)r;
    }
    xfer(fd, &total, sizeof(total), 1);
    free(buf);
    close(fd);
}

/* Streams SIZE-byte messages for `ms` ms on a new connection; MB/s. */
static double stream(const struct sockaddr_in *sa, uint64_t size, uint64_t ms, const char *buf)
{
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    uint64_t total = 0, echo = 0;
    if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
        perror("tcp_stream client");
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (xfer(fd, &size, sizeof(size), 1) != 0)
        return -1;
    uint64_t t0 = now_ns(), end = t0 + ms * 1000000ull;
    do {
        if (xfer(fd, (void *)buf, size, 1) != 0)
            return -1;
        total += size;
    } while (now_ns() < end);
    /* Done when the server has read it all. */
    shutdown(fd, SHUT_WR);
    if (xfer(fd, &echo, sizeof(echo), 0) != 0 || echo != total)
        return -1;
    double mbs = (double)total * 1e3 / (double)(now_ns() - t0);
    close(fd);
    return mbs;
}

int main(int argc, char **argv)
{
    struct sockaddr_in sa;
    int one = 1;
    if (argc == 4 && strcmp(argv[1], "server") == 0 && addr_of(argv[2], argv[3], &sa) == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 8) != 0) {
            perror("tcp_stream server");
            return 1;
        }
        signal(SIGCHLD, SIG_IGN);
        for (;;) {
            int fd = accept(l, NULL, NULL);
            if (fd < 0)
                continue;
            if (fork() == 0) {
                close(l);
                serve(fd);
                _exit(0);
            }
            close(fd);
        }
    }
    if (argc == 6 && strcmp(argv[1], "client") == 0 && addr_of(argv[2], argv[3], &sa) == 0) {
        uint64_t size = strtoull(argv[4], NULL, 0), ms = strtoull(argv[5], NULL, 0);
        char *buf = size ? malloc(size) : NULL;
        if (buf == NULL)
            return 1;
        memset(buf, 0x5A, size);
        /* A short warm-up connection, then the measured one. */
        if (stream(&sa, size, ms / 4 + 1, buf) < 0)
            return 1;
        double mbs = stream(&sa, size, ms, buf);
        if (mbs < 0)
            return 1;
        printf("%llu %.0f\n", (unsigned long long)size, mbs);
        free(buf);
        return 0;
    }
    fprintf(stderr, "usage: tcp_stream server IP PORT | client IP PORT SIZE MS\n");
    return 2;
}
