/*
 * Rail health: a lane that keeps failing (a QP that goes to error again
 * after every repair, a connection that keeps breaking) costs every slice
 * sent to it a timeout or a retry.  After `errors` failures it is paused
 * (the chooser sends it nothing while another lane is up), and after a
 * quiet period it is probed: traffic goes to it again, and its first
 * success resumes it while a failure pauses it again for twice as long, up
 * to max_ns.  A lane that stays clean for max_ns after its last failure
 * or probe starts over.
 *
 * The failures of one event (every slice in flight on a QP that went to
 * error, and the lane report that follows) arrive together: those within
 * SR_HEALTH_SAME_NS of the first count as one.
 *
 * Pure functions of their arguments (time included); the caller keeps one
 * per lane, serialises the calls, and logs and counts the changes they
 * return.
 */
#ifndef SR_CORE_HEALTH_H
#define SR_CORE_HEALTH_H

#include <stdint.h>

#define SR_HEALTH_SAME_NS 1000000ull  /* failures closer than this are one */

typedef enum { SR_LANE_UP = 0, SR_LANE_PAUSED, SR_LANE_PROBING } sr_lane_health_state_t;

/* What a call changed. */
typedef enum {
    SR_HEALTH_SAME = 0,
    SR_HEALTH_PAUSED,   /* the lane gets no traffic until `until` */
    SR_HEALTH_PROBING,  /* the pause is over: traffic again, on probation */
    SR_HEALTH_RESUMED,  /* a success while probing */
} sr_health_change_t;

typedef struct {
    uint32_t errors;    /* failures that pause a lane; 0: never */
    uint64_t base_ns;   /* first pause */
    uint64_t max_ns;    /* longest pause, and the clean time that forgets */
} sr_health_cfg_t;

typedef struct sr_lane_health {
    uint8_t  state;     /* sr_lane_health_state_t */
    uint32_t errors;    /* counted since the lane was last clean */
    uint64_t last;      /* when the last counted failure was seen; 0: none */
    uint64_t until;     /* end of the pause */
    uint64_t pause_ns;  /* the current pause's length */
    uint64_t next_ns;   /* the next pause's length; 0: base */
} sr_lane_health_t;

static inline sr_health_change_t sr_health_pause(sr_lane_health_t *h, const sr_health_cfg_t *c,
                                                 uint64_t now)
{
    uint64_t p = h->next_ns ? h->next_ns : c->base_ns;
    h->state = SR_LANE_PAUSED;
    h->pause_ns = p;
    h->until = now + p;
    h->next_ns = p >= c->max_ns / 2 ? c->max_ns : 2 * p;
    return SR_HEALTH_PAUSED;
}

static inline sr_health_change_t sr_health_error(sr_lane_health_t *h, const sr_health_cfg_t *c,
                                                 uint64_t now)
{
    if (c->errors == 0 || h->state == SR_LANE_PAUSED)
        return SR_HEALTH_SAME;
    if (h->state == SR_LANE_PROBING) {  /* on probation: one failure is enough */
        h->last = now ? now : 1;
        return sr_health_pause(h, c, now);
    }
    if (h->last && now - h->last < SR_HEALTH_SAME_NS)
        return SR_HEALTH_SAME;
    if (h->state == SR_LANE_UP && h->last && now - h->last > c->max_ns) {
        h->errors = 0;
        h->next_ns = 0;
    }
    h->last = now ? now : 1;
    if (++h->errors < c->errors)
        return SR_HEALTH_SAME;
    return sr_health_pause(h, c, now);
}

static inline sr_health_change_t sr_health_ok(sr_lane_health_t *h)
{
    if (h->state != SR_LANE_PROBING)
        return SR_HEALTH_SAME;
    h->state = SR_LANE_UP;
    h->errors = 0;
    return SR_HEALTH_RESUMED;
}

static inline sr_health_change_t sr_health_tick(sr_lane_health_t *h, uint64_t now)
{
    if (h->state != SR_LANE_PAUSED || now < h->until)
        return SR_HEALTH_SAME;
    h->state = SR_LANE_PROBING;
    h->last = now ? now : 1;  /* a pause is not clean time */
    return SR_HEALTH_PROBING;
}

#endif
