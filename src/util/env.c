#include "config.h"
#include "env.h"
#include "log.h"
#include "strlist.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const sr_env_desc_t sr_env_descs[] = {
#define SR_ENV(_f, _n, _t, _d, _r, _h) { #_n, SR_ENV_T_##_t, _d, _r, _h },
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

/* Numeric ranges: "MIN..MAX", either end optional, in the type's units. */
static symrail_status_t sr_env_num_range(const sr_env_desc_t *d, uint64_t *lo_p, uint64_t *hi_p)
{
    const char *dots = strstr(d->range, "..");
    char buf[64];
    uint64_t lo = 0, hi = UINT64_MAX;
    int isbool = d->type == SR_ENV_T_BOOL;

    if (dots == NULL || (size_t)(dots - d->range) >= sizeof(buf) || strlen(dots + 2) >= sizeof(buf))
        return SYMRAIL_ERR_INVALID;
    memcpy(buf, d->range, (size_t)(dots - d->range));
    buf[dots - d->range] = '\0';
    if (buf[0] && (isbool ? sr_env_parse_uint(buf, &lo) : sr_env_parse_one(d, buf, &lo)) != SYMRAIL_OK)
        return SYMRAIL_ERR_INVALID;
    if (dots[2] && (isbool ? sr_env_parse_uint(dots + 2, &hi)
                           : sr_env_parse_one(d, dots + 2, &hi)) != SYMRAIL_OK)
        return SYMRAIL_ERR_INVALID;
    *lo_p = lo;
    *hi_p = hi;
    return lo <= hi ? SYMRAIL_OK : SYMRAIL_ERR_INVALID;
}

/* Does the item [s, s+len) match one of the '|'-separated entries of the
 * alternatives [alt, alt+alen)?  An entry "N..M" matches the integers N to M. */
static int sr_env_alt_match(const char *alt, size_t alen, const char *s, size_t len)
{
    const char *end = alt + alen;
    for (const char *a = alt; a < end;) {
        const char *bar = memchr(a, '|', (size_t)(end - a));
        size_t n = bar ? (size_t)(bar - a) : (size_t)(end - a);
        const char *dots = memmem(a, n, "..", 2);
        if (dots != NULL) {
            char num[24], lo[24], hi[24];
            uint64_t v, l, h;
            size_t nl = (size_t)(dots - a), nh = n - nl - 2;
            if (len < sizeof(num) && nl < sizeof(lo) && nh < sizeof(hi)) {
                memcpy(num, s, len), num[len] = '\0';
                memcpy(lo, a, nl), lo[nl] = '\0';
                memcpy(hi, dots + 2, nh), hi[nh] = '\0';
                if (sr_env_parse_uint(num, &v) == SYMRAIL_OK &&
                    sr_env_parse_uint(lo, &l) == SYMRAIL_OK &&
                    sr_env_parse_uint(hi, &h) == SYMRAIL_OK && v >= l && v <= h)
                    return 1;
            }
        } else if (n == len && strncasecmp(a, s, len) == 0) {
            return 1;
        }
        a += n + 1;
    }
    return 0;
}

/* The one place where a value is held against its variable's range. */
static symrail_status_t sr_env_check_range(const sr_env_desc_t *d, const char *s,
                                           const void *field)
{
    if (d->type != SR_ENV_T_STRING) {
        uint64_t lo, hi, v;
        if (sr_env_num_range(d, &lo, &hi) != SYMRAIL_OK) {
            sr_error("%s: the range '%s' in the variable table is malformed", d->name, d->range);
            return SYMRAIL_ERR_INVALID;
        }
        v = d->type == SR_ENV_T_BOOL ? (uint64_t)*(const int *)field : *(const uint64_t *)field;
        if (v >= lo && v <= hi)
            return SYMRAIL_OK;
        sr_error("%s='%s' is out of range: allowed %s", d->name, s, d->range);
        return SYMRAIL_ERR_INVALID;
    }
    if (strcmp(d->range, "*") == 0)
        return SYMRAIL_OK;
    size_t alen = strlen(d->range);
    int list = alen > 4 && strcmp(d->range + alen - 4, ",...") == 0;
    if (list)
        alen -= 4;
    if (!list) {
        if (sr_env_alt_match(d->range, alen, s, strlen(s)))
            return SYMRAIL_OK;
        sr_error("%s='%s' is out of range: allowed %.*s", d->name, s, (int)alen, d->range);
        return SYMRAIL_ERR_INVALID;
    }
    /* The rules of every comma list (strlist.h), and at least one item. */
    const char *pos = s, *item;
    size_t n, items = 0;
    for (; sr_list_next(&pos, &item, &n); items++)
        if (!sr_env_alt_match(d->range, alen, item, n)) {
            sr_error("%s='%s' is out of range: '%.*s' is not one of %.*s (a comma list of these)",
                     d->name, s, (int)n, item, (int)alen, d->range);
            return SYMRAIL_ERR_INVALID;
        }
    if (items == 0) {
        sr_error("%s='%s' names none of %.*s (a comma list of these)", d->name, s, (int)alen,
                 d->range);
        return SYMRAIL_ERR_INVALID;
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_env_parse_checked(const sr_env_desc_t *d, const char *s, void *field)
{
    symrail_status_t st = sr_env_parse_one(d, s, field);
    if (st == SYMRAIL_ERR_INVALID)
        sr_error("%s='%s' is not valid: expected %s", d->name, s, sr_env_type_hint(d->type));
    if (st != SYMRAIL_OK)
        return st;
    st = sr_env_check_range(d, s, field);
    if (st != SYMRAIL_OK && d->type == SR_ENV_T_STRING) {
        free(*(char **)field);
        *(char **)field = NULL;
    } else if (d->type == SR_ENV_T_STRING && strcmp(d->range, "*") != 0) {
        /* The range matched regardless of case; the code that reads the
         * value compares with the table's spelling, which is lower case. */
        for (char *c = *(char **)field; c && *c; c++)
            *c = (char)tolower((unsigned char)*c);
    }
    return st;
}

symrail_status_t sr_env_load(char *(*getenv_fn)(const char *), sr_env_t *env_p)
{
    symrail_status_t st;
    void *fields[] = {
#define SR_ENV(_f, _n, _t, _d, _r, _h) &env_p->_f,
#include "env_table.h"
#undef SR_ENV
    };

    memset(env_p, 0, sizeof(*env_p));
    for (size_t i = 0; i < sr_env_ndescs; i++) {
        const sr_env_desc_t *d = &sr_env_descs[i];
        const char *val = getenv_fn(d->name);
        st = sr_env_parse_checked(d, val ? val : d->defval, fields[i]);
        if (st != SYMRAIL_OK)
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
#define SR_ENV(_f, _n, _t, _d, _r, _h) SR_ENV_FREE_##_t(_f)
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
        int hidden = cur && d->type == SR_ENV_T_STRING && strstr(d->name, "SECRET");
        fprintf(out, "  %-22s default %-14s range %s%s%s\n      %s\n", d->name,
                d->defval[0] ? d->defval : "(empty)",
                strcmp(d->range, "*") == 0 ? "any" : d->range, cur ? "  set to " : "",
                cur ? (hidden ? "(hidden)" : cur) : "", d->help);
    }
}

/* OpenSHMEM's variable for a SYMRAIL_ one, and the value it stands for
 * (NULL: its own value). */
static const struct {
    const char *name, *shmem, *value;
} sr_env_aliases[] = {
    {"SYMRAIL_HEAP_SIZE", "SHMEM_SYMMETRIC_SIZE", NULL},
    {"SYMRAIL_LOG", "SHMEM_DEBUG", "debug"},
    {"SYMRAIL_PRINT_VERSION", "SHMEM_VERSION", "1"},
    {"SYMRAIL_PRINT_INFO", "SHMEM_INFO", "1"},
};

char *sr_env_getenv(const char *name)
{
    char *v = getenv(name);
    if (v != NULL)
        return v;
    for (size_t i = 0; i < sizeof(sr_env_aliases) / sizeof(sr_env_aliases[0]); i++) {
        if (strcmp(name, sr_env_aliases[i].name) != 0)
            continue;
        v = getenv(sr_env_aliases[i].shmem);
        /* SHMEM_DEBUG=0 (or empty) asks for nothing. */
        if (v == NULL || (sr_env_aliases[i].value && (v[0] == '\0' || strcmp(v, "0") == 0)))
            return NULL;
        return sr_env_aliases[i].value ? (char *)sr_env_aliases[i].value : v;
    }
    return NULL;
}
