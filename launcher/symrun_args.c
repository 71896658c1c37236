#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun_args.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sr_symrun_args_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int sr_symrun_args_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err != NULL && errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

bool sr_symrun_args_valid_name(const char *s, size_t len)
{
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < len; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    }
    return true;
}

/* strtol alone accepts leading blanks, a sign and trailing junk; a rank
 * count such as " 4", "+4" or "4x" is far more likely a typo than intent. */
static int sr_symrun_args_parse_ranks(const char *s, int *n_p)
{
    char *end;
    long v;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > SR_SYMRUN_MAX_RANKS)
        return -1;
    *n_p = (int)v;
    return 0;
}

int sr_symrun_args_parse_timeout(const char *s, double *timeout_p)
{
    char *end;
    double v;

    /* Require a digit or a point first, so that "inf", "nan", hex floats
     * and signs are refused along with the blanks strtod would skip. */
    if (s == NULL || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
        return -1;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v <= 0.0 ||
        v > SR_SYMRUN_MAX_TIMEOUT_S)
        return -1;
    *timeout_p = v;
    return 0;
}

int sr_symrun_args_parse_grace(const char *s, long *grace_ms_p)
{
    char *end;
    long v;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > SR_SYMRUN_MAX_GRACE_MS)
        return -1;
    *grace_ms_p = v;
    return 0;
}

int sr_symrun_args_parse_bind(const char *s, sr_symrun_bind_t *bind_p)
{
    if (s == NULL)
        return -1;
    if (strcmp(s, "core") == 0)
        *bind_p = SR_SYMRUN_BIND_CORE;
    else if (strcmp(s, "none") == 0)
        *bind_p = SR_SYMRUN_BIND_NONE;
    else
        return -1;
    return 0;
}

static int sr_symrun_args_add_export(sr_symrun_args_t *args, char *spec,
                                     char *err, size_t errlen)
{
    const char *eq = strchr(spec, '=');
    size_t namelen = eq != NULL ? (size_t)(eq - spec) : strlen(spec);

    if (!sr_symrun_args_valid_name(spec, namelen))
        return sr_symrun_args_fail(err, errlen,
                                   "-x: invalid environment variable '%s' "
                                   "(expected VAR=value or VAR)", spec);
    args->exports[args->nexports++] = spec;
    return 0;
}

/*
 * Matches a long option given as "--name", "--name=value" or
 * "--name value". Returns 1 on a match (value_p set, NULL when a flag),
 * 0 when arg is not this option, -1 when its required value is missing.
 */
static int sr_symrun_args_long(const char *arg, const char *name,
                               bool has_value, int argc, char **argv, int *i_p,
                               char **value_p)
{
    size_t len = strlen(name);

    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '\0') {
        if (!has_value) {
            *value_p = NULL;
            return 1;
        }
        if (*i_p + 1 >= argc)
            return -1;
        *value_p = argv[++*i_p];
        return 1;
    }
    if (arg[len] == '=' && has_value) {
        *value_p = (char *)arg + len + 1;
        return 1;
    }
    return 0;
}

int sr_symrun_args_parse(int argc, char **argv, sr_symrun_args_t *args_p,
                         char *err, size_t errlen)
{
    sr_symrun_args_t args;
    bool have_n = false;
    int i;

    if (args_p == NULL || argv == NULL || argc < 0)
        return sr_symrun_args_fail(err, errlen, "internal error: no arguments");

    memset(&args, 0, sizeof(args));
    args.action = SR_SYMRUN_ACTION_RUN;
    /* Every -x takes at least one argv slot, so argc bounds the count. */
    args.exports = calloc((size_t)argc + 1, sizeof(*args.exports));
    if (args.exports == NULL)
        return sr_symrun_args_fail(err, errlen, "out of memory");

    for (i = 1; i < argc; i++) {
        char *arg = argv[i];
        char *val = NULL;
        int m;

        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0')
            break;

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            args.action = SR_SYMRUN_ACTION_HELP;
            goto done;
        }
        if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
            args.action = SR_SYMRUN_ACTION_VERSION;
            goto done;
        }
        if (strcmp(arg, "--prefix-output") == 0) {
            args.prefix_output = true;
            continue;
        }

        /* mpirun users type -np and --np; accept them as spellings of -n. */
        if (strcmp(arg, "-n") == 0 || strcmp(arg, "-np") == 0) {
            if (i + 1 >= argc) {
                sr_symrun_args_fail(err, errlen, "option '%s' needs a number "
                                    "of ranks", arg);
                goto err_args;
            }
            val = argv[++i];
        } else if ((m = sr_symrun_args_long(arg, "--np", true, argc, argv, &i,
                                            &val)) != 0) {
            if (m < 0) {
                sr_symrun_args_fail(err, errlen, "option '--np' needs a "
                                    "number of ranks");
                goto err_args;
            }
        } else if (strncmp(arg, "-n", 2) == 0 && arg[2] != '-' &&
                   strncmp(arg, "-np", 3) != 0) {
            val = arg + 2;
        }
        if (val != NULL) {
            if (sr_symrun_args_parse_ranks(val, &args.nranks) != 0) {
                sr_symrun_args_fail(err, errlen, "-n: invalid number of ranks "
                                    "'%s' (expected 1..%d)", val,
                                    SR_SYMRUN_MAX_RANKS);
                goto err_args;
            }
            have_n = true;
            continue;
        }

        m = sr_symrun_args_long(arg, "--timeout", true, argc, argv, &i, &val);
        if (m < 0) {
            sr_symrun_args_fail(err, errlen, "option '--timeout' needs a "
                                "number of seconds");
            goto err_args;
        }
        if (m > 0) {
            if (sr_symrun_args_parse_timeout(val, &args.timeout_s) != 0) {
                sr_symrun_args_fail(err, errlen, "--timeout: invalid number of "
                                    "seconds '%s' (expected a number > 0)",
                                    val);
                goto err_args;
            }
            args.timeout_set = true;
            continue;
        }

        m = sr_symrun_args_long(arg, "--bind-to", true, argc, argv, &i, &val);
        if (m < 0) {
            sr_symrun_args_fail(err, errlen, "option '--bind-to' needs core "
                                "or none");
            goto err_args;
        }
        if (m > 0) {
            if (sr_symrun_args_parse_bind(val, &args.bind) != 0) {
                sr_symrun_args_fail(err, errlen, "--bind-to: invalid value '%s' "
                                    "(expected core or none)", val);
                goto err_args;
            }
            args.bind_set = true;
            continue;
        }

        if (strcmp(arg, "-x") == 0) {
            if (i + 1 >= argc) {
                sr_symrun_args_fail(err, errlen, "option '-x' needs VAR=value "
                                    "or VAR");
                goto err_args;
            }
            val = argv[++i];
        } else if (strncmp(arg, "-x", 2) == 0) {
            val = arg + 2;
        } else if ((m = sr_symrun_args_long(arg, "--export", true, argc, argv,
                                            &i, &val)) != 0) {
            if (m < 0) {
                sr_symrun_args_fail(err, errlen, "option '--export' needs "
                                    "VAR=value or VAR");
                goto err_args;
            }
        }
        if (val != NULL) {
            if (sr_symrun_args_add_export(&args, val, err, errlen) != 0)
                goto err_args;
            continue;
        }

        sr_symrun_args_fail(err, errlen, "unknown option '%s'", arg);
        goto err_args;
    }

    if (i >= argc) {
        sr_symrun_args_fail(err, errlen, "missing program to run");
        goto err_args;
    }
    if (!have_n) {
        sr_symrun_args_fail(err, errlen, "missing -n N (number of ranks)");
        goto err_args;
    }
    args.prog_argc = argc - i;
    args.prog_argv = &argv[i];

done:
    *args_p = args;
    return 0;

err_args:
    free(args.exports);
    return -1;
}

void sr_symrun_args_fini(sr_symrun_args_t *args)
{
    if (args == NULL)
        return;
    free(args->exports);
    args->exports = NULL;
    args->nexports = 0;
}
