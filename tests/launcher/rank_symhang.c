/*
 * Launcher test: a symrail PE that initializes and then waits for good,
 * so that only something outside it (a signal, its launcher's end) can
 * end it.
 */
#include <stdio.h>
#include <unistd.h>

#include <symrail.h>

int main(void)
{
    symrail_init();
    printf("rank %d pid %ld\n", symrail_my_pe(), (long)getpid());
    fflush(stdout);
    for (;;)
        sleep(600);
    return 0;
}
