/* An OpenSHMEM program, built with symcc like any other: each PE puts its
 * number into the next PE's symmetric variable and prints what it got. */
#include <stdio.h>
#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int *from = shmem_malloc(sizeof(int));
    *from = -1;
    shmem_barrier_all();
    shmem_int_p(from, me, (me + 1) % n);
    shmem_barrier_all();
    printf("hello from PE %d of %d: PE %d says hi\n", me, n, *from);
    shmem_free(from);
    shmem_finalize();
    return 0;
}
