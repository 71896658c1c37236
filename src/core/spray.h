/*
 * Adaptive spraying: each slice goes to the lane expected to finish it
 * first, (bytes in flight on the lane + the slice) / the lane's measured
 * bandwidth, times a locality penalty from its static weight.  Static
 * weights split traffic in fixed shares, so a rail that is slower than its
 * weight says (shaped, busy, a slower NIC behind an equal link) holds every
 * other rail back to its pace; a choice by predicted completion keeps every
 * lane busy in proportion to what it really delivers.
 *
 * Bandwidth is an EWMA of what each lane completes while it is busy: from
 * the moment an idle lane is given a slice, bytes completed over the time
 * they took, sampled at most every SR_SPRAY_SAMPLE_NS (completions come in
 * bursts: one poll can return many) or when the lane runs dry.  A lane that
 * gets nothing is not measured, so one pick in `probe_every` goes to the
 * lane whose estimate is oldest, and an idle lane whose estimate is older
 * than SR_SPRAY_STALE_NS gets the next slice.
 *
 * Pure functions of their arguments (time included), so that a simulation
 * can drive them; the state is one context's own, like the turns of
 * lanes.h.
 */
#ifndef SR_CORE_SPRAY_H
#define SR_CORE_SPRAY_H

#include <stddef.h>
#include <stdint.h>

#include "core/lanes.h"

#define SR_SPRAY_SAMPLE_NS 50000ull    /* shortest span of one bandwidth sample */
#define SR_SPRAY_STALE_NS  4000000ull  /* an idle lane's estimate this old is probed */
#define SR_SPRAY_EWMA_DIV  8.0         /* weight of a new sample: 1/8 */
/* The static weight is speed scaled by hwloc distance; the measured
 * bandwidth already has the speed, so the penalty is bounded by the
 * farthest distance ratio rails are kept at (SYMRAIL_IB_RAIL_RATIO's
 * default) rather than counting the speed twice. */
#define SR_SPRAY_PENALTY_MAX 2.0

typedef struct {
    uint64_t inflight;  /* bytes posted, not completed */
    uint64_t acc;       /* bytes completed since mark */
    uint64_t mark;      /* start of the sample being taken */
    uint64_t fresh;     /* when bw was last sampled; 0: never */
    double   bw;        /* bytes per ns; 0: not measured */
} sr_spray_lane_t;

typedef struct sr_spray {
    uint32_t        picks;
    uint32_t        probes;       /* picks that went to a lane for its estimate */
    uint32_t        probe_every;  /* 0: only stale idle lanes are probed */
    sr_spray_lane_t lane[SR_TL_MAX_LANES];
} sr_spray_t;

static inline void sr_spray_init(sr_spray_t *sp, uint32_t probe_every)
{
    for (int i = 0; i < SR_TL_MAX_LANES; i++)
        sp->lane[i] = (sr_spray_lane_t){ 0 };
    sp->picks = sp->probes = 0;
    sp->probe_every = probe_every;
}

/* The lane for a slice of len bytes, avoiding `avoid` (-1: none) while
 * another lane is up; lanes in `paused` (a bit per lane, rail health) only
 * when no other is up; -1 when every lane is down. */
static inline int sr_spray_pick(sr_spray_t *sp, const sr_lanes_t *l, uint32_t paused, int avoid,
                                size_t len, uint64_t now)
{
    int n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);
    uint32_t w[SR_TL_MAX_LANES], wmax = 0, up = 0, usable = 0;
    double bwmax = 0;
    for (int i = 0; i < n; i++) {
        w[i] = __atomic_load_n(&l->weight[i], __ATOMIC_RELAXED);
        sr_spray_lane_t *ln = &sp->lane[i];
        if (w[i] == 0) {
            /* It comes back unmeasured: what it did before is no guide. */
            ln->bw = 0;
            ln->fresh = 0;
            continue;
        }
        usable |= 1u << i;
        if (paused & (1u << i))
            continue;
        up |= 1u << i;
    }
    if (up == 0)
        up = usable;  /* paused lanes are better than none */
    if (avoid >= 0 && avoid < n && (up & ~(1u << avoid)))
        up &= ~(1u << avoid);
    if (up == 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (!(up & (1u << i)))
            continue;
        if (w[i] > wmax)
            wmax = w[i];
        if (sp->lane[i].bw > bwmax)
            bwmax = sp->lane[i].bw;
    }
    /* Probing: the oldest estimate, every probe_every-th pick; an idle lane
     * with a stale one at once. */
    int probe = sp->probe_every && ++sp->picks >= sp->probe_every;
    if (probe)
        sp->picks = 0;
    int oldest = -1, best = -1;
    double tbest = 0;
    for (int i = 0; i < n; i++) {
        if (!(up & (1u << i)))
            continue;
        const sr_spray_lane_t *ln = &sp->lane[i];
        if (ln->inflight == 0 && (ln->fresh == 0 || now - ln->fresh > SR_SPRAY_STALE_NS) &&
            ln->bw != 0) {
            sp->probes++;
            return i;
        }
        if (oldest < 0 || ln->fresh < sp->lane[oldest].fresh)
            oldest = i;
        /* Unmeasured: as fast as the best measured one for its weight,
         * so that it gets traffic, and with it a measurement. */
        double bw = ln->bw != 0 ? ln->bw : bwmax != 0 ? bwmax * w[i] / wmax : (double)w[i];
        double pen = (double)wmax / w[i];
        if (pen > SR_SPRAY_PENALTY_MAX)
            pen = SR_SPRAY_PENALTY_MAX;
        double t = (double)(ln->inflight + len) / bw * pen;
        if (best < 0 || t < tbest) {
            best = i;
            tbest = t;
        }
    }
    if (probe && oldest != best) {
        sp->probes++;
        return oldest;
    }
    return best;
}

/* A slice of len bytes went in flight on lane. */
static inline void sr_spray_posted(sr_spray_t *sp, int lane, size_t len, uint64_t now)
{
    sr_spray_lane_t *ln = &sp->lane[lane];
    if (ln->inflight == 0) {
        ln->mark = now;
        ln->acc = 0;
    }
    ln->inflight += len;
}

/* ... and completed (ok) or failed (no sample). */
static inline void sr_spray_done(sr_spray_t *sp, int lane, size_t len, int ok, uint64_t now)
{
    sr_spray_lane_t *ln = &sp->lane[lane];
    ln->inflight = ln->inflight > len ? ln->inflight - len : 0;
    if (!ok)
        return;
    ln->acc += len;
    uint64_t dt = now - ln->mark;
    if (dt < SR_SPRAY_SAMPLE_NS && ln->inflight != 0)
        return;
    double s = (double)ln->acc / (double)(dt ? dt : 1);
    ln->bw = ln->bw != 0 ? ln->bw + (s - ln->bw) / SR_SPRAY_EWMA_DIV : s;
    ln->acc = 0;
    ln->mark = now;
    ln->fresh = now ? now : 1;
}

#endif
