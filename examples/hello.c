/* The smallest symrail program: every PE says who it is. */
#include <stdio.h>
#include <symrail.h>

int main(void)
{
    symrail_init();
    printf("hello from PE %d of %d\n", symrail_my_pe(), symrail_n_pes());
    symrail_finalize();
    return 0;
}
