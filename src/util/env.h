/* Parsing of the SYMRAIL_* configuration table (env_table.h). */
#ifndef SR_UTIL_ENV_H
#define SR_UTIL_ENV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <symrail.h>

typedef enum { SR_ENV_T_SIZE, SR_ENV_T_UINT, SR_ENV_T_TIME, SR_ENV_T_BOOL, SR_ENV_T_STRING } sr_env_type_t;

/* SIZE and UINT are uint64_t, TIME is in milliseconds, BOOL is int. */
typedef struct {
#define SR_ENV_FIELD_SIZE   uint64_t
#define SR_ENV_FIELD_UINT   uint64_t
#define SR_ENV_FIELD_TIME   uint64_t
#define SR_ENV_FIELD_BOOL   int
#define SR_ENV_FIELD_STRING char *
#define SR_ENV(_f, _n, _t, _d, _r, _h) SR_ENV_FIELD_##_t _f;
#include "env_table.h"
#undef SR_ENV
} sr_env_t;

typedef struct {
    const char   *name;
    sr_env_type_t type;
    const char   *defval;
    const char   *range;   /* syntax in env_table.h */
    const char   *help;
} sr_env_desc_t;

extern const sr_env_desc_t sr_env_descs[];
extern const size_t sr_env_ndescs;

symrail_status_t sr_env_parse_size(const char *s, uint64_t *val_p);
symrail_status_t sr_env_parse_uint(const char *s, uint64_t *val_p);
symrail_status_t sr_env_parse_time_ms(const char *s, uint64_t *val_p);
symrail_status_t sr_env_parse_bool(const char *s, int *val_p);

/* Parses `s` as the value of `d` into `field` and checks it against the
 * range; on failure logs one line naming the variable and what is allowed. */
symrail_status_t sr_env_parse_checked(const sr_env_desc_t *d, const char *s, void *field);

/* Reads every variable through `getenv_fn` (getenv in the library, a table in
 * tests).  On a bad value, logs one line naming the variable and fails. */
symrail_status_t sr_env_load(char *(*getenv_fn)(const char *), sr_env_t *env_p);
void sr_env_release(sr_env_t *env);
/* Warns once for every SYMRAIL_* entry of `envp` that the table does not know;
 * returns how many there were. */
int sr_env_warn_unknown(char **envp);
void sr_env_print(FILE *out, char *(*getenv_fn)(const char *));
/* getenv, plus OpenSHMEM's names for some variables: SHMEM_SYMMETRIC_SIZE
 * (SYMRAIL_HEAP_SIZE), SHMEM_DEBUG (SYMRAIL_LOG=debug), SHMEM_VERSION and
 * SHMEM_INFO (SYMRAIL_PRINT_VERSION, _INFO).  The SYMRAIL_ name wins when
 * both are set. */
char *sr_env_getenv(const char *name);

#endif
