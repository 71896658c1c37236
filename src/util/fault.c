#include "config.h"
#include "util/fault.h"
#include "util/log.h"

#include <stdio.h>

symrail_status_t sr_fault_parse(const char *spec, const char *var, const char *who,
                                sr_fault_t *fault_p)
{
    int lane, end = 0;
    unsigned long long after;
    fault_p->lane = -1;
    fault_p->after = 0;
    if (spec == NULL || *spec == '\0')
        return SYMRAIL_OK;
    if (sscanf(spec, "%d:%llu%n", &lane, &after, &end) != 2 || lane < 0 || spec[end] != '\0') {
        sr_error("%s='%s' is not LANE:N", var, spec);
        return SYMRAIL_ERR_INVALID;
    }
    fault_p->lane = lane;
    fault_p->after = after;
    sr_warn("%s: test fault hook armed (%s): lane %d breaks after %llu slices", who, var, lane,
            after);
    return SYMRAIL_OK;
}
