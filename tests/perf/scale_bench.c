/*
 * What one PE costs as the job grows: the time symrail_init takes, the
 * memory and descriptors it leaves behind.  Every PE prints one line
 *
 *   scale pe P n N init_us T rss_kb R hwm_kb H pin_kb K lck_kb L fds F
 *         rss0_kb R0 fds0 F0
 *
 * with the values after init and (rss0, fds0) those before it, so that the
 * library's share is the difference; tests/perf/scale_bench.sh runs it for
 * growing N and turns the lines into a table.  VmPin is memory the kernel
 * pinned for a device (verbs registrations count there, 0 elsewhere), VmLck
 * what mlock holds.  With SYMRAIL_STATS=1 the library adds its own counters
 * at finalize (the PMIx traffic of init among them).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <symrail.h>
#include <time.h>

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A "VmXxx:   N kB" line of /proc/self/status; -1 where the kernel has none. */
static long status_kb(const char *field)
{
    char line[256];
    size_t flen = strlen(field);
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            kb = strtol(line + flen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* Open descriptors, not counting the one that reads the directory. */
static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

int main(void)
{
    long rss0 = status_kb("VmRSS");
    int fds0 = open_fds();
    long long t0 = now_us();
    symrail_init();
    long long dt = now_us() - t0;
    long rss = status_kb("VmRSS"), hwm = status_kb("VmHWM");
    long pin = status_kb("VmPin"), lck = status_kb("VmLck");
    int fds = open_fds();
    printf("scale pe %d n %d init_us %lld rss_kb %ld hwm_kb %ld pin_kb %ld lck_kb %ld fds %d "
           "rss0_kb %ld fds0 %d\n", symrail_my_pe(), symrail_n_pes(), dt, rss, hwm, pin, lck,
           fds, rss0, fds0);
    fflush(stdout);
    /* The numbers must be real: a run that read nothing is not a result. */
    int bad = rss <= 0 || fds < 3 || dt <= 0;
    if (bad)
        fprintf(stderr, "scale_bench: PE %d read no usable numbers\n", symrail_my_pe());
    if (symrail_barrier_all() != SYMRAIL_OK)
        bad = 1;
    symrail_finalize();
    return bad;
}
