/* Shared by the two files of t_sh_more. */
#ifndef T_SH_MORE_H
#define T_SH_MORE_H

#include <shmem.h>
#include <stdio.h>

extern int me, npes;

/* Any failed check ends the whole job, naming the PE and the place. */
#define CHECK(c, ...)                                                                  \
    do {                                                                               \
        if (!(c)) {                                                                    \
            fprintf(stderr, "PE %d: FAIL %s:%d: ", me, __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, "\n");                                                     \
            fflush(stderr);                                                            \
            shmem_global_exit(1);                                                      \
        }                                                                              \
    } while (0)

void test_amo(shmem_ctx_t ctx);
void test_ctx_rma(shmem_ctx_t ctx);

#endif
