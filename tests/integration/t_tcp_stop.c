/* A peer stopped with SIGSTOP (run with 2 PEs over TCP, SYMRAIL_OP_TIMEOUT
 * of a few seconds): PE 0 stops PE 1 and has a child resume it.  Stopped for
 * less than the timeout, a blocking get just takes longer; stopped past it,
 * the get fails naming the peer unresponsive (not gone); once resumed, the
 * pair works again, and both finalize cleanly. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tcommon.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* 1 once `pid` is stopped (state T in /proc). */
static int is_stopped(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'T';
}

/* Stops `pid`; a child resumes it `ms` after it is stopped. */
static pid_t stop_for(pid_t pid, unsigned ms)
{
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 1000 && !is_stopped(pid); i++)
            usleep(1000);
        usleep(ms * 1000);
        kill(pid, SIGCONT);
        _exit(0);
    }
    T_ASSERT(child > 0, "fork failed");
    T_ASSERT(kill(pid, SIGSTOP) == 0, "SIGSTOP failed");
    for (int i = 0; i < 1000 && !is_stopped(pid); i++)
        usleep(1000);
    T_ASSERT(is_stopped(pid), "PE 1 did not stop");
    return child;
}

int main(int argc, char **argv)
{
    unsigned short_ms = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
    unsigned long_ms = argc > 2 ? (unsigned)atoi(argv[2]) : 7000;
    symrail_init();
    int me = symrail_my_pe();
    T_ASSERT(symrail_n_pes() == 2, "run with 2 PEs");
    uint64_t *pid1 = symrail_calloc(1, sizeof(uint64_t));
    uint64_t *word = symrail_calloc(1, sizeof(uint64_t));
    *word = 0x5700 + (uint64_t)me;
    if (me == 1) {
        uint64_t p = (uint64_t)getpid();
        T_CHECK(symrail_put(pid1, &p, sizeof(p), 0));
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        uint64_t v = 0;
        double t0 = now_s();
        pid_t child = stop_for((pid_t)*pid1, short_ms);
        T_CHECK(symrail_get(&v, word, sizeof(v), 1));
        double dt = now_s() - t0;
        waitpid(child, NULL, 0);
        T_ASSERT(v == 0x5701, "get after a short stop read %#llx", (unsigned long long)v);
        T_ASSERT(dt >= short_ms / 1000.0 * 0.8, "the short stop did not delay the get (%.2f s)",
                 dt);
        printf("ok: a peer stopped for %u ms within the timeout only delays a get (%.2f s)\n",
               short_ms, dt);

        t0 = now_s();
        child = stop_for((pid_t)*pid1, long_ms);
        symrail_status_t st = symrail_get(&v, word, sizeof(v), 1);
        dt = now_s() - t0;
        T_ASSERT(st == SYMRAIL_ERR_PEER_UNRESPONSIVE,
                 "get from a peer stopped past the timeout returned %d (%s) after %.2f s",
                 (int)st, symrail_strerror(st), dt);
        T_ASSERT(dt < long_ms / 1000.0, "the failed get waited for the stop to end");
        printf("ok: a peer stopped past the timeout: get fails after %.2f s with: %s\n", dt,
               symrail_strerror(st));
        fflush(stdout);
        waitpid(child, NULL, 0);

        /* Resumed: it answers again within a heartbeat or so. */
        double t1 = now_s();
        v = 0;
        do {
            st = symrail_get(&v, word, sizeof(v), 1);
            if (st != SYMRAIL_OK)
                usleep(100 * 1000);
        } while (st == SYMRAIL_ERR_PEER_UNRESPONSIVE && now_s() - t1 < 10);
        T_ASSERT(st == SYMRAIL_OK && v == 0x5701, "after SIGCONT a get returned %d (%s)",
                 (int)st, symrail_strerror(st));
        uint64_t x = 0x77;
        T_CHECK(symrail_put(word, &x, sizeof(x), 1));
        T_CHECK(symrail_quiet());
        printf("ok: after SIGCONT the peer works again (%.2f s after it resumed)\n",
               now_s() - t1);
    }
    T_CHECK(symrail_barrier_all());
    if (me == 1)
        T_ASSERT(*word == 0x77, "PE 0's put after the stop did not arrive");
    symrail_free(word);
    symrail_free(pid1);
    symrail_finalize();
    return 0;
}
