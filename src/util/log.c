#include "config.h"
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The one piece of mutable state outside the library context: logging must
 * work before the context exists (env parsing, PMIx failures at init). */
sr_log_cfg_t sr_log_cfg = { .level = SR_LOG_WARN, .pe = -1 };

static const char *const sr_log_names[] = { "error", "warn", "info", "debug", "trace" };

int sr_log_level_parse(const char *name)
{
    for (int i = 0; i < (int)(sizeof(sr_log_names) / sizeof(sr_log_names[0])); i++)
        if (strcasecmp(name, sr_log_names[i]) == 0)
            return i;
    return -1;
}

void sr_log_setup(sr_log_level_t level)
{
    sr_log_cfg.level = level;
    sr_log_cfg.pid = (int)getpid();
    if (gethostname(sr_log_cfg.host, sizeof(sr_log_cfg.host)) != 0)
        strcpy(sr_log_cfg.host, "?");
    sr_log_cfg.host[sizeof(sr_log_cfg.host) - 1] = '\0';
}

void sr_log_set_pe(int pe)
{
    sr_log_cfg.pe = pe;
}

void sr_log_emit(sr_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (sr_log_cfg.pid == 0)
        sr_log_setup(sr_log_cfg.level);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    /* One fprintf so concurrent PEs sharing a stream do not interleave lines. */
    if (level >= SR_LOG_DEBUG)
        fprintf(stderr, "symrail %s:%d:%d %s: %s (%s:%d)\n", sr_log_cfg.host, sr_log_cfg.pid,
                sr_log_cfg.pe, sr_log_names[level], msg, base, line);
    else
        fprintf(stderr, "symrail %s:%d:%d %s: %s\n", sr_log_cfg.host, sr_log_cfg.pid,
                sr_log_cfg.pe, sr_log_names[level], msg);
}
