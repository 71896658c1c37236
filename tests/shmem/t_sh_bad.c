/*
 * Bad input to the OpenSHMEM calls: the last PE makes the call named by
 * argv[1], the others wait in a barrier; the job must end with a message
 * naming the call and the argument (run_shmem.sh checks both).
 */
#define SHMEMX_NO_DEPRECATION_WARNINGS
#include <shmem.h>
#include <symrail.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    long stackv = 0, src[4] = {0};
    if (strcmp(c, "before_init") == 0) {
        shmem_long_p(&stackv, 1, 0);
        return 0;
    }
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *sym = shmem_malloc(16 * sizeof(long));
    /* Two blocks side by side, and one freed on every PE: an access that
     * starts in p and runs on lands in q, which is no error of the heap's
     * bounds but is one of p's. */
    char *p = shmem_malloc(1024), *q = shmem_malloc(1024);
    long *freed = shmem_malloc(64);
    uint64_t *sig = shmem_malloc(sizeof(uint64_t));
    shmem_free(freed);
    shmem_ctx_t ctx;
    symrail_barrier_all();
    if (strncmp(c, "mm_", 3) == 0) {
        /* Every PE calls a team collective, the last one a different call
         * (or the same with another size or root) than the others. */
        int odd = me == n - 1;
        long *d = (long *)(void *)p, *s = (long *)(void *)q;
        if (strcmp(c, "mm_kind") == 0) {
            if (odd)
                shmem_broadcastmem(SHMEM_TEAM_WORLD, d, s, 8, 0);
            else
                shmem_long_sum_reduce(SHMEM_TEAM_WORLD, d, s, 1);
        } else if (strcmp(c, "mm_size") == 0) {
            shmem_broadcastmem(SHMEM_TEAM_WORLD, d, s, odd ? 64 : 8, 0);
        } else if (strcmp(c, "mm_root") == 0) {
            shmem_long_broadcast(SHMEM_TEAM_WORLD, d, s, 4, odd ? 1 : 0);
        } else if (strcmp(c, "mm_fcollect") == 0) {
            shmem_long_fcollect(SHMEM_TEAM_WORLD, d, s, odd ? 8 : 2);
        } else if (strcmp(c, "mm_sync") == 0) {
            if (odd)
                shmem_team_sync(SHMEM_TEAM_WORLD);
            else
                shmem_long_max_reduce(SHMEM_TEAM_WORLD, d, s, 1);
        }
        shmem_barrier_all();
        printf("FAIL: PE %d: %s returned\n", me, c);
        return 1;
    }
    if (me == n - 1) {
        if (strcmp(c, "pe") == 0)
            shmem_long_put(sym, src, 1, n);
        else if (strcmp(c, "negpe") == 0)
            shmem_int_g((int *)sym, -1);
        else if (strcmp(c, "dest") == 0)
            shmem_long_put(&stackv, src, 1, 0);
        else if (strcmp(c, "source") == 0)
            shmem_getmem(src, &stackv, 8, 0);
        else if (strcmp(c, "past_end") == 0)
            shmem_putmem(sym, src, (size_t)1 << 40, 0);
        else if (strcmp(c, "stride") == 0)
            shmem_long_iput(sym, src, -1, 1, 2, 0);
        else if (strcmp(c, "bstride") == 0)
            shmem_ctx_double_ibget(SHMEM_CTX_DEFAULT, (double *)src, (double *)sym, 1, -2, 1, 2, 0);
        else if (strcmp(c, "ctx_invalid") == 0)
            shmem_ctx_long_p(SHMEM_CTX_INVALID, sym, 1, 0);
        else if (strcmp(c, "ctx_destroyed") == 0) {
            shmem_ctx_create(0, &ctx);
            shmem_ctx_destroy(ctx);
            shmem_ctx_putmem(ctx, sym, src, 8, 0);
        } else if (strcmp(c, "nostore") == 0) {
            shmem_ctx_create(SHMEM_CTX_NOSTORE, &ctx);
            shmem_ctx_long_put(ctx, sym, src, 1, 0);
        } else if (strcmp(c, "destroy_default") == 0)
            shmem_ctx_destroy(SHMEM_CTX_DEFAULT);
        else if (strcmp(c, "options") == 0)
            shmem_ctx_create(1L << 20, &ctx);
        else if (strcmp(c, "free") == 0)
            shmem_free(sym + 1);
        else if (strcmp(c, "align") == 0)
            shmem_align(3, 64);
        else if (strcmp(c, "hints") == 0)
            shmem_malloc_with_hints(64, 1L << 20);
        else if (strcmp(c, "ptr_pe") == 0)
            shmem_ptr(sym, n + 5);
        else if (strcmp(c, "nelems") == 0)
            shmem_long_get(src, sym, SIZE_MAX / 2, 0);
        else if (strcmp(c, "over_put") == 0)
            shmem_putmem(p + 1000, src, 100, 0);
        else if (strcmp(c, "over_get") == 0)
            shmem_getmem(q, p + 1000, 100, 0);
        else if (strcmp(c, "over_nbi") == 0)
            shmem_ctx_putmem_nbi(SHMEM_CTX_DEFAULT, p + 1020, src, 8, 0);
        else if (strcmp(c, "over_iput") == 0)
            shmem_long_iput((long *)p, src, 64, 1, 3, 0);
        else if (strcmp(c, "over_iget") == 0)
            shmem_long_iget(src, (long *)(p + 1016), 1, 1, 2, 0);
        else if (strcmp(c, "over_signal") == 0)
            shmem_putmem_signal(p + 1000, src, 32, sig, 1, SHMEM_SIGNAL_SET, 0);
        else if (strcmp(c, "over_amo") == 0)
            shmem_long_atomic_inc(freed, 0);
        else if (strcmp(c, "over_sig_addr") == 0)
            shmem_signal_wait_until((uint64_t *)(void *)freed, SHMEM_CMP_EQ, 1);
        else if (strcmp(c, "over_native") == 0) {
            /* The native call returns the error; the program ends the job. */
            if (symrail_put(p + 1000, src, 100, 0) == SYMRAIL_ERR_INVALID)
                shmem_global_exit(3);
        } else
            printf("unknown case '%s'\n", c);
        printf("FAIL: %s returned\n", c);
        return 1;
    }
    (void)q;
    symrail_barrier_all();  /* never reached: the job ends first */
    printf("FAIL: PE %d passed the barrier\n", me);
    return 1;
}
