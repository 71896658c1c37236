/*
 * Choosing a lane for each slice: smooth weighted round robin.  Over any
 * window every lane gets slices in proportion to its weight, interleaved
 * rather than in bursts, and the choice is cheap and deterministic.
 */
#ifndef SR_CORE_LANES_H
#define SR_CORE_LANES_H

#include <stdint.h>

#include "tl/tl.h"

typedef struct {
    int      n;
    uint32_t weight[SR_TL_MAX_LANES];  /* 0: lane is down */
    int64_t  cur[SR_TL_MAX_LANES];
} sr_lanes_t;

static inline void sr_lanes_set(sr_lanes_t *l, const uint32_t *weights, int n)
{
    l->n = n;
    for (int i = 0; i < n; i++) {
        l->weight[i] = weights[i];
        l->cur[i] = 0;
    }
}

/* New weights, keeping the round robin where it was: restarting it on every
 * refresh would offer the next slice to the same lane again and again (the
 * one that just said it had no room).  A lane that goes down forgets its
 * credit, so it does not come back with a burst. */
static inline void sr_lanes_update(sr_lanes_t *l, const uint32_t *weights, int n)
{
    for (int i = 0; i < n; i++) {
        if (i >= l->n || weights[i] == 0)
            l->cur[i] = 0;
        l->weight[i] = weights[i];
    }
    l->n = n;
}

/* One lane went down (weight 0) or came back. */
static inline void sr_lanes_set_one(sr_lanes_t *l, int lane, uint32_t weight)
{
    if (lane < 0 || lane >= SR_TL_MAX_LANES)
        return;
    if (lane >= l->n) {
        for (int i = l->n; i < lane; i++)
            l->weight[i] = 0, l->cur[i] = 0;
        l->n = lane + 1;
    }
    if (weight == 0)
        l->cur[lane] = 0;
    l->weight[lane] = weight;
}

/* The next lane, avoiding `avoid` (-1: none) while another lane is up;
 * -1 when every lane is down. */
static inline int sr_lanes_pick(sr_lanes_t *l, int avoid)
{
    int best = -1;
    int64_t total = 0;
    if (l->n == 1)
        return l->weight[0] ? 0 : -1;
    for (int i = 0; i < l->n; i++) {
        if (l->weight[i] == 0 || i == avoid)
            continue;
        l->cur[i] += l->weight[i];
        total += l->weight[i];
        if (best < 0 || l->cur[i] > l->cur[best])
            best = i;
    }
    if (best < 0)
        return avoid >= 0 && avoid < l->n && l->weight[avoid] ? avoid : -1;
    l->cur[best] -= total;
    return best;
}

#endif
