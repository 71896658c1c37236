/*
 * Weak stand-ins for the collectives' barrier calls, so that a library
 * built without src/shmem/coll.c still runs OpenSHMEM programs that
 * synchronise with them; coll.c's definitions take their place when it is
 * built in (and this file may then go).
 */
#include "config.h"
#include "shmem/sh.h"

__attribute__((weak)) void shmem_barrier_all(void)
{
    SR_SH_UP("shmem_barrier_all");
    symrail_status_t st = sr_ctx_quiet(sr_rt.dctx);
    if (st == SYMRAIL_OK)
        st = sr_barrier();
    if (st != SYMRAIL_OK)
        sr_sh_fail("shmem_barrier_all", st);
}

__attribute__((weak)) void shmem_sync_all(void)
{
    SR_SH_UP("shmem_sync_all");
    symrail_status_t st = sr_barrier();
    if (st != SYMRAIL_OK)
        sr_sh_fail("shmem_sync_all", st);
}
