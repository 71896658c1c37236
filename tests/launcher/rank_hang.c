/*
 * Launcher test: every rank sleeps far longer than any test runs, so only
 * the launcher can end the job. Environment knobs make it harder to stop:
 *   RANK_HANG_IGNORE_TERM=1  ignore SIGTERM (needs the SIGKILL escalation)
 *   RANK_HANG_FORK=1         start a child that sleeps too (must die with
 *                            its rank's process group)
 *   RANK_HANG_EXIT_RANK=k    rank k finalizes and exits 0 at once
 */

/* pmix_common.h uses POSIX string and environment functions inline. */
#define _GNU_SOURCE

#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc;
    const char *exit_rank = getenv("RANK_HANG_EXIT_RANK");

    if (getenv("RANK_HANG_IGNORE_TERM") != NULL)
        signal(SIGTERM, SIG_IGN);
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank_hang: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (exit_rank != NULL && (unsigned)atoi(exit_rank) == me.rank) {
        printf("rank %u pid %ld exiting\n", me.rank, (long)getpid());
        fflush(stdout);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (getenv("RANK_HANG_FORK") != NULL) {
        pid_t child = fork();

        if (child == 0) {
            for (;;)
                sleep(600);
        }
        if (child > 0)
            printf("rank %u child pid %ld\n", me.rank, (long)child);
    }
    printf("rank %u pid %ld\n", me.rank, (long)getpid());
    fflush(stdout);
    for (;;)
        sleep(600);
    return 0;
}
