#include "config.h"
#include "env.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const sr_env_desc_t sr_env_descs[] = {
#define SR_ENV(_f, _n, _t, _d, _h) { #_n, SR_ENV_T_##_t, _d, _h },
#include "env_table.h"
#undef SR_ENV
};
const size_t sr_env_ndescs = sizeof(sr_env_descs) / sizeof(sr_env_descs[0]);

static symrail_status_t sr_env_parse_scaled(const char *s, const char *const *suffixes,
                                            const uint64_t *scales, uint64_t *val_p)
{
    char *end;
    if (s == NULL || !isdigit((unsigned char)*s))
        return SYMRAIL_ERR_INVALID;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return SYMRAIL_ERR_INVALID;
    uint64_t scale = 0;
    for (int i = 0; suffixes[i] != NULL; i++) {
        if (strcasecmp(end, suffixes[i]) == 0) {
            scale = scales[i];
            break;
        }
    }
    if (scale == 0 || (v != 0 && (uint64_t)v > UINT64_MAX / scale))
        return SYMRAIL_ERR_INVALID;
    *val_p = (uint64_t)v * scale;
    return SYMRAIL_OK;
}

symrail_status_t sr_env_parse_size(const char *s, uint64_t *val_p)
{
    static const char *const sfx[] = { "", "b", "k", "kb", "kib", "m", "mb", "mib",
                                       "g", "gb", "gib", "t", "tb", "tib", NULL };
    static const uint64_t sc[] = { 1, 1, 1ull << 10, 1ull << 10, 1ull << 10, 1ull << 20,
                                   1ull << 20, 1ull << 20, 1ull << 30, 1ull << 30, 1ull << 30,
                                   1ull << 40, 1ull << 40, 1ull << 40 };
    return sr_env_parse_scaled(s, sfx, sc, val_p);
}

symrail_status_t sr_env_parse_uint(const char *s, uint64_t *val_p)
{
    static const char *const sfx[] = { "", NULL };
    static const uint64_t sc[] = { 1 };
    return sr_env_parse_scaled(s, sfx, sc, val_p);
}

symrail_status_t sr_env_parse_time_ms(const char *s, uint64_t *val_p)
{
    /* A bare number is seconds, as users of timeouts expect. */
    static const char *const sfx[] = { "", "ms", "s", "m", "min", "h", NULL };
    static const uint64_t sc[] = { 1000, 1, 1000, 60000, 60000, 3600000 };
    return sr_env_parse_scaled(s, sfx, sc, val_p);
}

symrail_status_t sr_env_parse_bool(const char *s, int *val_p)
{
    static const char *const yes[] = { "1", "y", "yes", "true", "on", NULL };
    static const char *const no[] = { "0", "n", "no", "false", "off", "", NULL };
    for (int i = 0; yes[i]; i++)
        if (strcasecmp(s, yes[i]) == 0)
            return (*val_p = 1), SYMRAIL_OK;
    for (int i = 0; no[i]; i++)
        if (strcasecmp(s, no[i]) == 0)
            return (*val_p = 0), SYMRAIL_OK;
    return SYMRAIL_ERR_INVALID;
}

static symrail_status_t sr_env_parse_one(const sr_env_desc_t *d, const char *s, void *field)
{
    switch (d->type) {
    case SR_ENV_T_SIZE: return sr_env_parse_size(s, field);
    case SR_ENV_T_UINT: return sr_env_parse_uint(s, field);
    case SR_ENV_T_TIME: return sr_env_parse_time_ms(s, field);
    case SR_ENV_T_BOOL: return sr_env_parse_bool(s, field);
    case SR_ENV_T_STRING:
        *(char **)field = strdup(s);
        return *(char **)field ? SYMRAIL_OK : SYMRAIL_ERR_NOMEM;
    }
    return SYMRAIL_ERR_INVALID;
}

static const char *sr_env_type_hint(sr_env_type_t t)
{
    switch (t) {
    case SR_ENV_T_SIZE: return "a size such as 64K, 512M or 1G";
    case SR_ENV_T_UINT: return "a non-negative integer";
    case SR_ENV_T_TIME: return "a duration such as 500ms, 30s or 2m";
    case SR_ENV_T_BOOL: return "0/1, yes/no, true/false or on/off";
    default:            return "a string";
    }
}

symrail_status_t sr_env_load(char *(*getenv_fn)(const char *), sr_env_t *env_p)
{
    symrail_status_t st;
    void *fields[] = {
#define SR_ENV(_f, _n, _t, _d, _h) &env_p->_f,
#include "env_table.h"
#undef SR_ENV
    };

    memset(env_p, 0, sizeof(*env_p));
    for (size_t i = 0; i < sr_env_ndescs; i++) {
        const sr_env_desc_t *d = &sr_env_descs[i];
        const char *val = getenv_fn(d->name);
        if (val == NULL) {
            st = sr_env_parse_one(d, d->defval, fields[i]);
        } else {
            st = sr_env_parse_one(d, val, fields[i]);
            if (st == SYMRAIL_ERR_INVALID)
                sr_error("%s='%s' is not valid: expected %s", d->name, val,
                         sr_env_type_hint(d->type));
        }
        if (st != SYMRAIL_OK)
            goto err_release;
    }
    if (sr_log_level_parse(env_p->log) < 0) {
        sr_error("SYMRAIL_LOG='%s' is not valid: expected error, warn, info, debug or trace",
                 env_p->log);
        st = SYMRAIL_ERR_INVALID;
        goto err_release;
    }
    return SYMRAIL_OK;

err_release:
    sr_env_release(env_p);
    return st;
}

void sr_env_release(sr_env_t *env)
{
#define SR_ENV_FREE_SIZE(_f)
#define SR_ENV_FREE_UINT(_f)
#define SR_ENV_FREE_TIME(_f)
#define SR_ENV_FREE_BOOL(_f)
#define SR_ENV_FREE_STRING(_f) free(env->_f); env->_f = NULL;
#define SR_ENV(_f, _n, _t, _d, _h) SR_ENV_FREE_##_t(_f)
#include "env_table.h"
#undef SR_ENV
}

int sr_env_warn_unknown(char **envp)
{
    int unknown = 0;
    for (char **e = envp; e && *e; e++) {
        if (strncmp(*e, "SYMRAIL_", 8) != 0)
            continue;
        size_t len = strcspn(*e, "=");
        int known = 0;
        for (size_t i = 0; i < sr_env_ndescs && !known; i++)
            known = strlen(sr_env_descs[i].name) == len &&
                    strncmp(sr_env_descs[i].name, *e, len) == 0;
        if (!known) {
            sr_warn("unknown variable %.*s is ignored (symrail-info lists the known ones)",
                    (int)len, *e);
            unknown++;
        }
    }
    return unknown;
}

void sr_env_print(FILE *out, char *(*getenv_fn)(const char *))
{
    for (size_t i = 0; i < sr_env_ndescs; i++) {
        const sr_env_desc_t *d = &sr_env_descs[i];
        const char *cur = getenv_fn ? getenv_fn(d->name) : NULL;
        fprintf(out, "  %-22s default %-14s%s%s%s\n      %s\n", d->name,
                d->defval[0] ? d->defval : "(empty)", cur ? "set to " : "",
                cur ? (d->type == SR_ENV_T_STRING && strstr(d->name, "SECRET") ? "(hidden)" : cur) : "",
                cur ? "" : "", d->help);
    }
}
