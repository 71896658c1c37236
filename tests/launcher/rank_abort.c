/* Launcher test: rank 0 aborts the job through PMIx once all ranks are
 * up; the others sleep. */

/* pmix_common.h uses POSIX string and environment functions inline. */
#define _GNU_SOURCE

#include <pmix.h>

#include <stdio.h>
#include <unistd.h>

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc;

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank_abort: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("rank %u pid %ld\n", me.rank, (long)getpid());
    fflush(stdout);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "rank_abort: PMIx_Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (me.rank == 0)
        PMIx_Abort(5, "test abort", NULL, 0);
    /* PMIx_Abort may return once the launcher has the request; stopping
     * this rank is then the launcher's job. */
    sleep(60);
    return 0;
}
