/*
 * Testing-only hooks: the transports' faults (SYMRAIL_IB_FAULT_QP_ERROR,
 * SYMRAIL_TCP_FAULT_CONN): "LANE:N" breaks lane LANE after N slices; a hook
 * that takes a third field ("LANE:N:M") gives M its own meaning.  The
 * core's SYMRAIL_TEST_HOLD_LANE ("LANE:MS") is spelled the same way.
 */
#ifndef SR_UTIL_FAULT_H
#define SR_UTIL_FAULT_H

#include <stdint.h>
#include <symrail.h>

typedef struct {
    int      lane;   /* -1: no fault armed */
    uint64_t after;  /* the second field: slices before the lane breaks, or (the hold
                      * hook) milliseconds */
    uint64_t extra;  /* the optional third field; 0 when absent */
} sr_fault_t;

/* Parses `spec` (empty or NULL: nothing armed); `var` and `who` name the
 * variable and the transport in messages.  `extra` is NULL when the hook
 * takes two fields only, else what M counts, for the log ("repair messages
 * cannot be sent").  Arming is warned about, so a hook left set by accident
 * shows in the log. */
symrail_status_t sr_fault_parse(const char *spec, const char *var, const char *who,
                                const char *extra, sr_fault_t *fault_p);
/* The syntax alone, for every hook spelled LANE:X[:M] (`second` names X
 * in the message, `third`: whether :M may follow); warns of nothing. */
symrail_status_t sr_hook_parse(const char *spec, const char *var, const char *second,
                               int third, sr_fault_t *fault_p);

#endif
