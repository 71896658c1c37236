/*
 * Time of one symrail_barrier_all across every PE of the job, mean over a
 * few hundred, printed by PE 0.  tests/perf/barrier_bench.sh runs it with
 * more PEs than cores, over shared memory and over TCP, alternately.
 */
#include <stdio.h>
#include <stdlib.h>
#include <symrail.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    symrail_init();
    for (int i = 0; i < 10; i++)
        if (symrail_barrier_all() != SYMRAIL_OK)
            return 1;
    double t0 = now_us();
    for (int i = 0; i < iters; i++)
        if (symrail_barrier_all() != SYMRAIL_OK)
            return 1;
    double dt = (now_us() - t0) / iters;
    if (symrail_my_pe() == 0)
        printf("%d PEs: %.1f us per barrier_all\n", symrail_n_pes(), dt);
    symrail_finalize();
    return 0;
}
