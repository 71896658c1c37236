/* Launcher test: rank 2 exits with status 3; the others sleep. */

/* pmix_common.h uses POSIX string and environment functions inline. */
#define _GNU_SOURCE

#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc;

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank_exit3: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("rank %u pid %ld\n", me.rank, (long)getpid());
    fflush(stdout);
    if (me.rank == 2)
        exit(3);
    sleep(60);
    return 0;
}
