#include "config.h"
#include "util/fault.h"
#include "util/log.h"

#include <stdio.h>

symrail_status_t sr_hook_parse(const char *spec, const char *var, const char *second,
                               int third, sr_fault_t *fault_p)
{
    int lane, end = 0, end3 = 0;
    unsigned long long after, m = 0;
    fault_p->lane = -1;
    fault_p->after = 0;
    fault_p->extra = 0;
    if (spec == NULL || *spec == '\0')
        return SYMRAIL_OK;
    int ok = sscanf(spec, "%d:%llu%n", &lane, &after, &end) == 2 && lane >= 0;
    if (ok && third && spec[end] == ':')
        ok = sscanf(spec + end, ":%llu%n", &m, &end3) == 1 && end3 > 1;
    if (!ok || spec[end + end3] != '\0') {
        sr_error("%s='%s' is not LANE:%s%s", var, spec, second, third ? "[:M]" : "");
        return SYMRAIL_ERR_INVALID;
    }
    fault_p->lane = lane;
    fault_p->after = after;
    fault_p->extra = m;
    return SYMRAIL_OK;
}

symrail_status_t sr_fault_parse(const char *spec, const char *var, const char *who,
                                const char *extra, sr_fault_t *fault_p)
{
    symrail_status_t st = sr_hook_parse(spec, var, "N", extra != NULL, fault_p);
    if (st != SYMRAIL_OK || fault_p->lane < 0)
        return st;
    if (extra)
        sr_warn("%s: test fault hook armed (%s): lane %d breaks after %llu slices, then %llu %s",
                who, var, fault_p->lane, (unsigned long long)fault_p->after,
                (unsigned long long)fault_p->extra, extra);
    else
        sr_warn("%s: test fault hook armed (%s): lane %d breaks after %llu slices", who, var,
                fault_p->lane, (unsigned long long)fault_p->after);
    return SYMRAIL_OK;
}
