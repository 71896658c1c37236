/*
 * Choosing a lane for each slice: smooth weighted round robin.  Over any
 * window every lane gets slices in proportion to its weight, interleaved
 * rather than in bursts, and the choice is cheap and deterministic.
 *
 * The weights are the runtime's (lane events of the transports keep them
 * current, from any thread); the turn is each context's own, so contexts
 * never write to shared state when they pick.
 */
#ifndef SR_CORE_LANES_H
#define SR_CORE_LANES_H

#include <stdint.h>

#include "tl/tl.h"

typedef struct {
    int      n;
    uint32_t weight[SR_TL_MAX_LANES];  /* 0: lane is down */
} sr_lanes_t;

typedef struct {
    int64_t cur[SR_TL_MAX_LANES];
} sr_lane_rr_t;

/* New weights.  The turns stay where they were: restarting them on every
 * refresh would offer the next slice to the same lane again and again (the
 * one that just said it had no room). */
static inline void sr_lanes_set(sr_lanes_t *l, const uint32_t *weights, int n)
{
    for (int i = 0; i < n; i++)
        __atomic_store_n(&l->weight[i], weights[i], __ATOMIC_RELAXED);
    __atomic_store_n(&l->n, n, __ATOMIC_RELAXED);
}

/* One lane went down (weight 0) or came back. */
static inline void sr_lanes_set_one(sr_lanes_t *l, int lane, uint32_t weight)
{
    if (lane < 0 || lane >= SR_TL_MAX_LANES)
        return;
    int n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);
    __atomic_store_n(&l->weight[lane], weight, __ATOMIC_RELAXED);
    if (lane >= n) {
        for (int i = n; i < lane; i++)
            __atomic_store_n(&l->weight[i], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&l->n, lane + 1, __ATOMIC_RELAXED);
    }
}

/* The next lane, avoiding `avoid` (-1: none) while another lane is up;
 * -1 when every lane is down.  A lane that is down forgets its credit, so
 * it does not come back with a burst. */
static inline int sr_lanes_pick(const sr_lanes_t *l, sr_lane_rr_t *rr, int avoid)
{
    int best = -1;
    int64_t total = 0;
    int n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);
    if (n == 1)
        return __atomic_load_n(&l->weight[0], __ATOMIC_RELAXED) ? 0 : -1;
    for (int i = 0; i < n; i++) {
        uint32_t w = __atomic_load_n(&l->weight[i], __ATOMIC_RELAXED);
        if (w == 0) {
            rr->cur[i] = 0;
            continue;
        }
        if (i == avoid)
            continue;
        rr->cur[i] += w;
        total += w;
        if (best < 0 || rr->cur[i] > rr->cur[best])
            best = i;
    }
    if (best < 0)
        return avoid >= 0 && avoid < n && __atomic_load_n(&l->weight[avoid], __ATOMIC_RELAXED)
                   ? avoid : -1;
    rr->cur[best] -= total;
    return best;
}

#endif
