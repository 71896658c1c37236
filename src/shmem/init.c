/*
 * OpenSHMEM setup, exit and queries, and what the shmem calls share (the
 * job end with a message, team PE numbers).  OpenSHMEM 1.6 counts
 * initializations: the library goes down at the finalize matching the last
 * init, and may come up again afterwards.
 */
#include "config.h"
#include "shmem/sh.h"
#include "shmem/sh_team.h"
#include "shmemx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sr_sh_inits;

void sr_sh_fail(const char *fn, symrail_status_t st)
{
    sr_api_fatal(fn, st);
}

void sr_sh_fatal(const char *fn, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sr_error("%s: %s", fn, msg);
    sr_api_fatal(fn, SYMRAIL_ERR_INVALID);
}

void sr_sh_not_up(const char *fn)
{
    sr_error("%s: called %s", fn,
             sr_rt.state == SR_STATE_DOWN ? "after shmem_finalize" : "before shmem_init");
    sr_api_fatal(fn, SYMRAIL_ERR_STATE);
}

int sr_sh_team_pe(const char *fn, const sr_ctx_t *ctx, int pe)
{
    int wpe = sr_team_world_pe(ctx->team, pe);
    if (wpe < 0 && !sr_team_valid(ctx->team))
        sr_sh_fatal(fn, "the context's team was destroyed (shmem_team_destroy) before the "
                        "context");
    if (wpe < 0)
        sr_sh_fatal(fn, "pe %d is not in the context's team (PEs 0..%d)", pe,
                    ctx->team->size - 1);
    return wpe;
}

/* ---- setup ------------------------------------------------------------------------ */

static int sr_sh_init(const char *fn, int level)
{
    if (sr_rt.state != SR_STATE_UP) {
        symrail_status_t st = sr_core_init(level);
        if (st != SYMRAIL_OK) {
            sr_error("%s: the library could not start: %s", fn, symrail_strerror(st));
            return -1;
        }
        sr_sh_inits = 0;
    }
    /* Team contexts may be made before any team call: the predefined teams
     * must read as the core's from now on. */
    sr_sh_teams_bind();
    sr_sh_inits++;
    return 0;
}

void shmem_init(void)
{
    if (sr_sh_init("shmem_init", SYMRAIL_THREAD_SINGLE) != 0)
        exit(1);  /* no job to end: the runtime is not up */
}

int shmem_init_thread(int requested, int *provided)
{
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE) {
        sr_error("shmem_init_thread: requested %d is not a SHMEM_THREAD_* level", requested);
        return -1;
    }
    int rc = sr_sh_init("shmem_init_thread", requested);
    if (rc == 0 && provided)
        *provided = sr_rt.thread_level;
    return rc;
}

void start_pes(int npes)
{
    (void)npes;
    if (sr_rt.state != SR_STATE_UP)
        shmem_init();
}

void shmem_query_thread(int *provided)
{
    SR_SH_UP("shmem_query_thread");
    if (provided == NULL)
        sr_sh_fatal("shmem_query_thread", "provided is NULL");
    *provided = sr_rt.thread_level;
}

int shmem_query_initialized(int *initialized)
{
    if (initialized == NULL) {
        sr_error("shmem_query_initialized: initialized is NULL");
        return -1;
    }
    *initialized = sr_rt.state == SR_STATE_UP;
    return 0;
}

void shmem_finalize(void)
{
    if (sr_rt.state != SR_STATE_UP) {
        sr_warn("shmem_finalize: the library is not initialized; nothing to do");
        return;
    }
    if (sr_sh_inits > 1) {
        sr_sh_inits--;
        return;
    }
    sr_sh_inits = 0;
    symrail_status_t st = sr_core_finalize();
    if (st == SYMRAIL_ERR_MISMATCH)
        sr_api_fatal("shmem_finalize", st);
    if (st != SYMRAIL_OK)
        sr_warn("shmem_finalize: %s", symrail_strerror(st));
}

void shmem_global_exit(int status)
{
    char msg[64];
    snprintf(msg, sizeof(msg), "shmem_global_exit(%d)", status);
    fflush(stdout);
    if (sr_rt.state == SR_STATE_UP)
        sr_core_abort(status, msg);
    exit(status);
}

/* ---- queries --------------------------------------------------------------------------- */

int shmem_my_pe(void)
{
    return sr_rt.state == SR_STATE_UP ? sr_rt.my_pe : -1;
}

int shmem_n_pes(void)
{
    return sr_rt.state == SR_STATE_UP ? sr_rt.n_pes : -1;
}

int _my_pe(void)
{
    return shmem_my_pe();
}

int _num_pes(void)
{
    return shmem_n_pes();
}

int shmem_pe_accessible(int pe)
{
    SR_SH_UP("shmem_pe_accessible");
    if (pe < 0 || pe >= sr_rt.n_pes)
        return 0;
    return 1;  /* every PE of the job is wired up at init */
}

int shmem_addr_accessible(const void *addr, int pe)
{
    uint64_t off;
    SR_SH_UP("shmem_addr_accessible");
    if (!shmem_pe_accessible(pe))
        return 0;
    return sr_api_is_sym(addr, &off);  /* the heap or the symmetric globals */
}

void *shmem_ptr(const void *dest, int pe)
{
    static const char fn[] = "shmem_ptr";
    uint64_t off;
    SR_SH_UP(fn);
    if (!sr_api_pe_ok(fn, pe))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    /* 1.6: NULL when dest is not accessible by load/store, which is no
     * error to report (programs probe with it). */
    if (!sr_api_is_sym(dest, &off))
        return NULL;
    if (pe == sr_rt.my_pe)
        return (void *)dest;
    return sr_sym_peer_addr(pe, off);
}

void shmem_info_get_version(int *major, int *minor)
{
    if (major == NULL || minor == NULL)
        sr_sh_fatal("shmem_info_get_version", "%s is NULL", major ? "minor" : "major");
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    if (name == NULL)
        sr_sh_fatal("shmem_info_get_name", "name is NULL");
    snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

double shmemx_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- hints and the cache calls of old: accepted, nothing to do --------------------------- */

void shmem_session_start(shmem_ctx_t ctx, long options, const shmem_session_config_t *config,
                         long config_mask)
{
    (void)sr_sh_ctx("shmem_session_start", ctx);
    (void)options, (void)config, (void)config_mask;
}

void shmem_session_stop(shmem_ctx_t ctx)
{
    (void)sr_sh_ctx("shmem_session_stop", ctx);
}

void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                             const shmem_session_config_t *config, long config_mask)
{
    (void)sr_sh_ctx("shmem_ctx_session_start", ctx);
    (void)options, (void)config, (void)config_mask;
}

void shmem_ctx_session_stop(shmem_ctx_t ctx)
{
    (void)sr_sh_ctx("shmem_ctx_session_stop", ctx);
}

/* Caches are coherent here. */
void shmem_clear_cache_inv(void) {}
void shmem_set_cache_inv(void) {}
void shmem_clear_cache_line_inv(void *dest) { (void)dest; }
void shmem_set_cache_line_inv(void *dest) { (void)dest; }
void shmem_udcflush(void) {}
void shmem_udcflush_line(void *dest) { (void)dest; }
