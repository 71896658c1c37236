/* Logging: one line per event, prefixed host:pid:pe, filtered by SYMRAIL_LOG. */
#ifndef SR_UTIL_LOG_H
#define SR_UTIL_LOG_H

#include <stdarg.h>

typedef enum {
    SR_LOG_ERROR = 0,
    SR_LOG_WARN  = 1,
    SR_LOG_INFO  = 2,
    SR_LOG_DEBUG = 3,
    SR_LOG_TRACE = 4,
} sr_log_level_t;

/* Settings are written at init (and by tests) and only read afterwards. */
typedef struct {
    sr_log_level_t level;
    int  pe;
    int  pid;
    char host[64];
} sr_log_cfg_t;

extern sr_log_cfg_t sr_log_cfg;

/* Returns -1 for an unknown name. */
int  sr_log_level_parse(const char *name);
void sr_log_setup(sr_log_level_t level);
void sr_log_set_pe(int pe);
void sr_log_emit(sr_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define sr_log(_lvl, ...)                                             \
    do {                                                              \
        if ((_lvl) <= sr_log_cfg.level)                               \
            sr_log_emit((_lvl), __FILE__, __LINE__, __VA_ARGS__);     \
    } while (0)

#define sr_error(...) sr_log(SR_LOG_ERROR, __VA_ARGS__)
#define sr_warn(...)  sr_log(SR_LOG_WARN, __VA_ARGS__)
#define sr_info(...)  sr_log(SR_LOG_INFO, __VA_ARGS__)
#define sr_debug(...) sr_log(SR_LOG_DEBUG, __VA_ARGS__)
#define sr_trace(...) sr_log(SR_LOG_TRACE, __VA_ARGS__)

#endif
