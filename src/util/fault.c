#include "config.h"
#include "util/fault.h"
#include "util/log.h"

#include <stdio.h>

symrail_status_t sr_fault_parse(const char *spec, const char *var, const char *who,
                                const char *extra, sr_fault_t *fault_p)
{
    int lane, end = 0, end3 = 0;
    unsigned long long after, m = 0;
    fault_p->lane = -1;
    fault_p->after = 0;
    fault_p->extra = 0;
    if (spec == NULL || *spec == '\0')
        return SYMRAIL_OK;
    int ok = sscanf(spec, "%d:%llu%n", &lane, &after, &end) == 2 && lane >= 0;
    if (ok && extra && spec[end] == ':')
        ok = sscanf(spec + end, ":%llu%n", &m, &end3) == 1 && end3 > 1;
    if (!ok || spec[end + end3] != '\0') {
        sr_error("%s='%s' is not LANE:N%s", var, spec, extra ? "[:M]" : "");
        return SYMRAIL_ERR_INVALID;
    }
    fault_p->lane = lane;
    fault_p->after = after;
    fault_p->extra = m;
    if (extra)
        sr_warn("%s: test fault hook armed (%s): lane %d breaks after %llu slices, then %llu %s",
                who, var, lane, after, m, extra);
    else
        sr_warn("%s: test fault hook armed (%s): lane %d breaks after %llu slices", who, var,
                lane, after);
    return SYMRAIL_OK;
}
