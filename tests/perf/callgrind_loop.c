/*
 * Loops of 10 000 calls of one operation each, in functions of their own so
 * that valgrind --tool=callgrind --toggle-collect=cg_<op>_loop counts the
 * instructions of exactly those calls (tests/perf/callgrind_shm.sh).
 * Built against symrail, or with -DCG_OSHMEM by oshcc against OpenSHMEM.
 * PE 0 calls, PE 1 is the target and polls a flag in user space until PE 0
 * is done.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CG_CALLS 10000

#ifdef CG_OSHMEM
#include <shmem.h>
#define cg_init()     shmem_init()
#define cg_fini()     shmem_finalize()
#define cg_me()       shmem_my_pe()
#define cg_npes()     shmem_n_pes()
#define cg_malloc(n)  shmem_malloc(n)
#define cg_barrier()  shmem_barrier_all()
#define CG_PUT(d, s, n, pe)  (shmem_putmem(d, s, n, pe), 0)
#define CG_GET(d, s, n, pe)  (shmem_getmem(d, s, n, pe), 0)
#define CG_FADD(t, v, pe, r) (*(r) = (uint64_t)shmem_long_atomic_fetch_add((long *)(t), (long)(v), pe), 0)
#define CG_QUIET()           (shmem_quiet(), 0)
#else
#include <symrail.h>
#define cg_init()     symrail_init()
#define cg_fini()     symrail_finalize()
#define cg_me()       symrail_my_pe()
#define cg_npes()     symrail_n_pes()
#define cg_malloc(n)  symrail_malloc(n)
#define cg_barrier()  symrail_barrier_all()
#define CG_PUT(d, s, n, pe)  symrail_put(d, s, n, pe)
#define CG_GET(d, s, n, pe)  symrail_get(d, s, n, pe)
#define CG_FADD(t, v, pe, r) symrail_atomic_fetch_add(t, v, pe, r)
#define CG_QUIET()           symrail_quiet()
#endif

static int errors;

__attribute__((noinline)) void cg_put_loop(uint64_t *dst, const uint64_t *src)
{
    for (int i = 0; i < CG_CALLS; i++)
        errors += CG_PUT(dst, src, 8, 1) != 0;
}

/* The same put to a small object that shares its page with another (the
 * heap's bounds table leaves those to a lookup, cached per thread). */
__attribute__((noinline)) void cg_put2_loop(uint64_t *dst, const uint64_t *src)
{
    for (int i = 0; i < CG_CALLS; i++)
        errors += CG_PUT(dst, src, 8, 1) != 0;
}

__attribute__((noinline)) void cg_get_loop(uint64_t *dst, const uint64_t *src)
{
    for (int i = 0; i < CG_CALLS; i++)
        errors += CG_GET(dst, src, 8, 1) != 0;
}

__attribute__((noinline)) void cg_fadd_loop(uint64_t *target, uint64_t *sum)
{
    for (int i = 0; i < CG_CALLS; i++) {
        uint64_t old;
        errors += CG_FADD(target, 1, 1, &old) != 0;
        *sum += old;
    }
}

#ifndef CG_OSHMEM
/* The same put on a private context of its own. */
__attribute__((noinline)) void cg_ctxput_loop(symrail_ctx_t ctx, uint64_t *dst,
                                             const uint64_t *src)
{
    for (int i = 0; i < CG_CALLS; i++)
        errors += symrail_ctx_put(ctx, dst, src, 8, 1) != 0;
}
#endif

__attribute__((noinline)) void cg_quiet_loop(void)
{
    for (int i = 0; i < CG_CALLS; i++)
        errors += CG_QUIET() != 0;
}

int main(void)
{
#ifndef CG_OSHMEM
    /* CG_MT=1: the library at SYMRAIL_THREAD_MULTIPLE (the default context
     * then takes its lock, a private one none). */
    if (getenv("CG_MT") && symrail_init_thread(SYMRAIL_THREAD_MULTIPLE, NULL) != SYMRAIL_OK)
        return 2;
#endif
    cg_init();
    /* sym fills its page; sym2 starts in a page that another small block
     * (pad) starts, the case the heap's bounds table takes a second level for. */
    uint64_t *sym = cg_malloc(4096);
    void *pad = cg_malloc(sizeof(uint64_t));
    uint64_t *sym2 = cg_malloc(sizeof(uint64_t));
    uint64_t local = 42, sum = 0;
    if (sym == NULL || pad == NULL || sym2 == NULL || cg_npes() != 2) {
        fprintf(stderr, "callgrind_loop: needs 2 PEs and a symmetric heap\n");
        return 2;
    }
    sym[0] = sym[1] = sym[2] = sym[4] = 0;
    uint64_t one = 1;
    cg_barrier();
    if (cg_me() == 1) {
        /* The target polls a flag in user space rather than sleeping in the
         * library: a sleeping target makes each put ring it now and then,
         * and the counts would depend on when it sleeps. */
        while (__atomic_load_n(&sym[4], __ATOMIC_ACQUIRE) == 0)
            ;
    } else {
        cg_put_loop(&sym[0], &local);
        cg_put2_loop(sym2, &local);
        cg_get_loop(&local, &sym[1]);
        cg_fadd_loop(&sym[2], &sum);
        cg_quiet_loop();
#ifndef CG_OSHMEM
        symrail_ctx_t ctx;
        if (symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &ctx) != SYMRAIL_OK)
            return 2;
        cg_ctxput_loop(ctx, &sym[0], &local);
        symrail_ctx_destroy(ctx);
#endif
        CG_PUT(&sym[4], &one, 8, 1);
    }
    cg_barrier();
    if (cg_me() == 1 && sym[2] != CG_CALLS) {
        fprintf(stderr, "callgrind_loop: fetch_add count %llu, expected %d\n",
                (unsigned long long)sym[2], CG_CALLS);
        errors++;
    }
    cg_fini();
    return errors != 0;
}
