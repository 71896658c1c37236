/*
 * Testing-only fault hooks of the transports (SYMRAIL_IB_FAULT_QP_ERROR,
 * SYMRAIL_TCP_FAULT_CONN): "LANE:N" breaks lane LANE after N slices.
 */
#ifndef SR_UTIL_FAULT_H
#define SR_UTIL_FAULT_H

#include <stdint.h>
#include <symrail.h>

typedef struct {
    int      lane;   /* -1: no fault armed */
    uint64_t after;  /* slices the lane carries before it breaks */
} sr_fault_t;

/* Parses `spec` (empty or NULL: nothing armed); `var` and `who` name the
 * variable and the transport in messages.  Arming is warned about, so a
 * hook left set by accident shows in the log. */
symrail_status_t sr_fault_parse(const char *spec, const char *var, const char *who,
                                sr_fault_t *fault_p);

#endif
