/* Launcher test: rank 1 dies by SIGSEGV once all ranks are up; the others
 * would sleep far longer than the test allows. */

/* pmix_common.h uses POSIX string and environment functions inline. */
#define _GNU_SOURCE

#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

/* Under AddressSanitizer the rank must still die by the signal, as the
 * launcher is to report it, not by the sanitizer's report and exit 1. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "handle_segv=0";
}

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc;

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank_crash: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("rank %u pid %ld\n", me.rank, (long)getpid());
    fflush(stdout);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "rank_crash: PMIx_Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (me.rank == 1) {
        /* A core file would only slow the test down. */
        struct rlimit rl = {0, 0};

        setrlimit(RLIMIT_CORE, &rl);
        raise(SIGSEGV);
    }
    sleep(60);
    return 0;
}
