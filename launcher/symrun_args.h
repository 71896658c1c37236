/*
 * Command-line parsing for symrun, kept free of I/O and process exits so
 * that every accepted and rejected form can be unit-tested.
 */
#ifndef SYMRUN_ARGS_H
#define SYMRUN_ARGS_H

#include <stdbool.h>
#include <stddef.h>

/* Local rank and node rank travel as 16-bit PMIx values; 4096 also keeps
 * the number of pipes and sockets of one launcher well inside common
 * descriptor limits. */
#define SR_SYMRUN_MAX_RANKS 4096

/* Longer than any sensible job, and small enough that a deadline in
 * nanoseconds cannot overflow an int64_t. */
#define SR_SYMRUN_MAX_TIMEOUT_S 1.0e9

#define SR_SYMRUN_MAX_GRACE_MS 3600000L

typedef enum {
    SR_SYMRUN_ACTION_RUN,
    SR_SYMRUN_ACTION_HELP,
    SR_SYMRUN_ACTION_VERSION
} sr_symrun_action_t;

/* Where the ranks run (symrun_bind.h): CORE, a core each when they fit. */
typedef enum {
    SR_SYMRUN_BIND_CORE,
    SR_SYMRUN_BIND_NONE
} sr_symrun_bind_t;

typedef struct {
    sr_symrun_action_t action;
    int nranks;
    bool prefix_output;
    bool timeout_set;
    double timeout_s;
    bool bind_set; /* --bind-to given; else SYMRUN_BIND_TO or the default */
    sr_symrun_bind_t bind;
    /* Each entry points into argv: "VAR=value" (set it) or "VAR" (pass on
     * the launcher's own value). */
    int nexports;
    char **exports;
    /* Tail of argv, NULL-terminated: the program and its arguments. */
    int prog_argc;
    char **prog_argv;
} sr_symrun_args_t;

/*
 * Parses argv. Returns 0 on success; on failure returns -1 and writes a
 * one-line message naming the offending argument into err. On success the
 * caller owns args_p->exports and releases it with sr_symrun_args_fini.
 */
int sr_symrun_args_parse(int argc, char **argv, sr_symrun_args_t *args_p,
                         char *err, size_t errlen);

void sr_symrun_args_fini(sr_symrun_args_t *args);

/* Seconds, possibly fractional, > 0. Shared with the SYMRUN_TIMEOUT
 * environment variable. Returns 0 or -1. */
int sr_symrun_args_parse_timeout(const char *s, double *timeout_p);

/* Milliseconds, integer, >= 0 (SYMRUN_GRACE_MS). Returns 0 or -1. */
int sr_symrun_args_parse_grace(const char *s, long *grace_ms_p);

/* "core" or "none" (--bind-to, SYMRUN_BIND_TO). Returns 0 or -1. */
int sr_symrun_args_parse_bind(const char *s, sr_symrun_bind_t *bind_p);

/* True if s is a valid environment variable name. */
bool sr_symrun_args_valid_name(const char *s, size_t len);

#endif
