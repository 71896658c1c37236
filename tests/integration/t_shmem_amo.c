/*
 * The OpenSHMEM atomics through shmem.h, on any number of PEs: typed
 * fetch_inc, fetch_or, add of signed values, the deprecated finc/cswap/
 * fetch, nbi fetches valid after quiet, float and double swap.  With an
 * argument, one bad call that must end the job naming itself:
 *   pe    a PE out of range        misaligned  a long at 4 bytes off
 *   local a target off the symmetric heap
 */
#include <shmem.h>
#include <string.h>

#include "tcommon.h"

#define ROUNDS 100

int main(int argc, char **argv)
{
    shmem_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    int *ci = symrail_calloc(4, sizeof(int));
    long *cl = symrail_calloc(2, sizeof(long));
    double *cd = symrail_calloc(1, sizeof(double));
    float *cf = symrail_calloc(2, sizeof(float));
    T_ASSERT(ci && cl && cd && cf, "calloc");
    T_CHECK(symrail_barrier_all());
    if (argc > 1) {
        int local = 0;
        if (strcmp(argv[1], "pe") == 0)
            shmem_int_atomic_add(&ci[1], 1, n + 5);
        else if (strcmp(argv[1], "misaligned") == 0)
            shmem_long_atomic_fetch_add((long *)(void *)((char *)cl + 4), 1, 0);
        else if (strcmp(argv[1], "local") == 0)
            shmem_ctx_int_atomic_fetch_inc(SHMEM_CTX_DEFAULT, &local, 0);
        T_ASSERT(0, "the bad call %s returned", argv[1]);
    }
    for (int i = 0; i < ROUNDS; i++) {
        shmem_int_atomic_fetch_inc(&ci[1], 0);
        shmem_uint_atomic_fetch_or((unsigned *)&ci[2], 1u << (me % 32), 0);
        shmem_long_atomic_add(&cl[0], -2, 0);
        shmem_int_finc(&ci[3], 0);
    }
    int f = -1;
    long g = -1;
    shmem_int_atomic_fetch_nbi(&f, &ci[0], 0);
    shmem_ctx_long_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, &g, &cl[1], 5, 0);
    T_CHECK(symrail_quiet());
    T_ASSERT(f == 0, "nbi fetch %d after quiet", f);
    T_ASSERT(g >= 0 && g <= 5L * (n - 1) && g % 5 == 0, "nbi fetch_add %ld", g);
    float fo = shmem_float_atomic_swap(&cf[0], 2.5f, 0);
    T_ASSERT(fo == 0.0f || fo == 2.5f, "float swap %g", (double)fo);
    double d = shmem_double_atomic_swap(cd, 1.25, 0);
    T_ASSERT(d == 0.0 || d == 1.25, "double swap %g", d);
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        T_ASSERT(ci[1] == ROUNDS * n && ci[3] == ROUNDS * n && ci[0] == 0, "counts %d %d %d",
                 ci[1], ci[3], ci[0]);
        unsigned mask = 0;
        for (int p = 0; p < n; p++)
            mask |= 1u << (p % 32);
        T_ASSERT((unsigned)ci[2] == mask, "or %#x", (unsigned)ci[2]);
        T_ASSERT(cl[0] == -2L * ROUNDS * n && cl[1] == 5L * n, "long %ld %ld", cl[0], cl[1]);
        T_ASSERT(shmem_long_atomic_fetch(&cl[1], 0) == 5L * n, "fetch");
        T_ASSERT(shmem_int_cswap(&ci[0], 0, 9, 0) == 0 && shmem_int_fetch(&ci[0], 0) == 9,
                 "cswap");
        T_ASSERT(shmem_int_atomic_compare_swap(&ci[0], 1, 3, 0) == 9 && ci[0] == 9,
                 "failed compare_swap");
        T_ASSERT(shmem_double_atomic_fetch(cd, 0) == 1.25 && shmem_float_atomic_fetch(cf, 0) == 2.5f,
                 "floating fetch");
        printf("ok: shmem atomics on %d PEs\n", n);
    }
    shmem_finalize();
    return 0;
}
