/*
 * Setup, query, memory, contexts and sessions of shmem.h: shmem.h includes it where it
 * belongs; programs include <shmem.h>, never this part alone.
 */
#ifndef SHMEM_SETUP_H
#define SHMEM_SETUP_H

#ifndef SHMEM_H
#error "include <shmem.h>, not <shmem_setup.h>"
#endif

/* ---- setup, exit, query ------------------------------------------------------- */
void shmem_init(void);
int  shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
/* *initialized: 1 between an initialization and its finalize, else 0. */
int  shmem_query_initialized(int *initialized);
void shmem_finalize(void);
SHMEMX_NORETURN void shmem_global_exit(int status);
int  shmem_my_pe(void);
int  shmem_n_pes(void);
int  shmem_pe_accessible(int pe);
int  shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);

SHMEMX_DEPRECATED void start_pes(int npes);
SHMEMX_DEPRECATED int _my_pe(void);
SHMEMX_DEPRECATED int _num_pes(void);
/* Cache management of the Cray SHMEM era: no-ops. */
SHMEMX_DEPRECATED void shmem_clear_cache_inv(void);
SHMEMX_DEPRECATED void shmem_set_cache_inv(void);
SHMEMX_DEPRECATED void shmem_clear_cache_line_inv(void *dest);
SHMEMX_DEPRECATED void shmem_set_cache_line_inv(void *dest);
SHMEMX_DEPRECATED void shmem_udcflush(void);
SHMEMX_DEPRECATED void shmem_udcflush_line(void *dest);

/* ---- memory --------------------------------------------------------------------- */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void  shmem_free(void *ptr);
void *shmem_malloc_with_hints(size_t size, long hints);
SHMEMX_DEPRECATED void *shmalloc(size_t size);
SHMEMX_DEPRECATED void *shmemalign(size_t alignment, size_t size);
SHMEMX_DEPRECATED void *shrealloc(void *ptr, size_t size);
SHMEMX_DEPRECATED void  shfree(void *ptr);

/* ---- contexts and sessions ------------------------------------------------------ */
int  shmem_ctx_create(long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int  shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
int  shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
/* Hints; symrail applies none of them (operations behave the same). */
void shmem_session_start(shmem_ctx_t ctx, long options, const shmem_session_config_t *config,
                         long config_mask);
void shmem_session_stop(shmem_ctx_t ctx);
void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                             const shmem_session_config_t *config, long config_mask);
void shmem_ctx_session_stop(shmem_ctx_t ctx);

#endif /* SHMEM_SETUP_H */
