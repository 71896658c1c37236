/* The defects the valgrind pass must catch, in a symrail program run under
 * symrun as the real cases are: "leak" loses a block for good, "read" reads
 * one byte past a heap block, both on PE 1 only.  Without an argument it
 * is clean.  The pass
 * runs it to show that such a defect in one PE fails the whole job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <symrail.h>

/* volatile: the compiler may not drop the block or the stray read. */
static char *volatile lost;

int main(int argc, char **argv)
{
    const char *bug = "";
    int c = 0;

    symrail_init();
    /* One PE has the bug: it must fail the job all the same. */
    if (argc > 1 && symrail_my_pe() == 1)
        bug = argv[1];
    lost = malloc(64);
    if (!lost)
        return 2;
    memset(lost, 1, 64);
    if (strcmp(bug, "read") == 0)
        c = lost[64];
    if (strcmp(bug, "leak") == 0)
        lost = NULL;
    else
        free(lost);
    symrail_barrier_all();
    printf("probe %s done on PE %d (%d)\n", argc > 1 ? argv[1] : "clean", symrail_my_pe(), c);
    symrail_finalize();
    return 0;
}
