/*
 * Collective calls that differ between PEs must end the job with a message
 * naming both PEs and both calls, instead of silently diverging the heaps.
 * argv[1] picks the mistake, made by PE 1:
 *   size      symrail_malloc(1048576) where the others call symrail_malloc(1024)
 *   free      a symrail_free missing before the next symrail_malloc
 *   barrier   symrail_barrier_all where the others allocate
 *   heapsize  SYMRAIL_HEAP_SIZE=64M where the others have the default (init refuses)
 *   same      no mistake: the calls match and the job ends normally
 */
#include "tcommon.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "same";
    /* PE 1 is the odd one; it must know before init, for SYMRAIL_HEAP_SIZE. */
    const char *rank = getenv("PMIX_RANK");
    int odd = rank && atoi(rank) == 1;

    if (strcmp(mode, "heapsize") == 0 && odd)
        setenv("SYMRAIL_HEAP_SIZE", "64M", 1);
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    T_ASSERT(odd == (me == 1), "PMIX_RANK disagrees with symrail_my_pe");

    void *a = symrail_malloc(4096);
    T_ASSERT(a != NULL, "first allocation failed");
    if (strcmp(mode, "size") == 0) {
        void *b = symrail_malloc(odd ? 1048576 : 1024);
        T_ASSERT(0, "mismatched symrail_malloc returned %p", b);
    } else if (strcmp(mode, "free") == 0) {
        if (!odd)
            symrail_free(a);
        void *b = symrail_malloc(2048);
        T_ASSERT(0, "symrail_malloc after a missing free returned %p", b);
    } else if (strcmp(mode, "barrier") == 0) {
        if (odd) {
            symrail_status_t st = symrail_barrier_all();
            T_ASSERT(0, "barrier_all against an allocation returned %d", (int)st);
        }
        void *b = symrail_malloc(2048);
        T_ASSERT(0, "symrail_malloc against a barrier returned %p", b);
    }
    symrail_free(a);
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        printf("ok: matching collective calls (%d PEs)\n", n);
    symrail_finalize();
    return 0;
}
