/*
 * Adaptive spraying and rail health over a peer's data lanes: the glue
 * between the pure chooser (spray.h) and health machine (health.h) and the
 * slices of rma.c.
 *
 * Estimates are each context's own (its slices, its completions, which its
 * own progress delivers), so picking and measuring write no shared state.
 * Health is the peer's: a lane that fails, fails for every context.  Its
 * bits are read without a lock at each pick; changes are rare and made
 * under lane_lock.
 *
 * Peers with one lane (every shared-memory peer, TCP with one lane) never
 * get here: sr_ctx_lane takes them before, and no slice of theirs is
 * counted.
 */
#include "config.h"
#include "core/rt.h"
#include "core/spray.h"
#include "core/spray_core.h"
#include "core/health.h"
#include "util/log.h"
#include "util/sys.h"

#include <stdlib.h>
#include <strings.h>

symrail_status_t sr_spray_setup(void)
{
    sr_rt.spray = strcasecmp(sr_rt.env.spray, "adaptive") == 0;
    sr_rt.health.errors = (uint32_t)sr_rt.env.rail_pause_errors;
    sr_rt.health.base_ns = sr_rt.env.rail_pause * 1000000ull;
    sr_rt.health.max_ns = sr_rt.env.rail_pause_max * 1000000ull;
    if (sr_rt.health.max_ns < sr_rt.health.base_ns) {
        sr_error("SYMRAIL_RAIL_PAUSE_MAX (%llu ms) is below SYMRAIL_RAIL_PAUSE (%llu ms)",
                 (unsigned long long)sr_rt.env.rail_pause_max,
                 (unsigned long long)sr_rt.env.rail_pause);
        return SYMRAIL_ERR_INVALID;
    }
    return SYMRAIL_OK;
}

static void sr_health_lock(void)
{
    if (sr_rt.mt)
        pthread_mutex_lock(&sr_rt.lane_lock);
}

static void sr_health_unlock(void)
{
    if (sr_rt.mt)
        pthread_mutex_unlock(&sr_rt.lane_lock);
}

/* The earliest end of a pause of a peer's lanes; lane_lock held. */
static void sr_health_rewake(sr_peer_health_t *ph)
{
    uint64_t wake = UINT64_MAX;
    uint32_t paused = ph->paused;
    for (int l = 0; paused; l++, paused >>= 1)
        if ((paused & 1) && ph->lane[l].until < wake)
            wake = ph->lane[l].until;
    __atomic_store_n(&ph->wake, wake, __ATOMIC_RELAXED);
}

/* pe's health, made on its first failure; lane_lock held.  NULL: no memory
 * (the lane is not paused, as before). */
static sr_peer_health_t *sr_health_get(int pe)
{
    sr_peer_health_t *all = sr_rt.peer_health;
    if (all == NULL) {
        all = calloc((size_t)sr_rt.n_max, sizeof(*all));
        if (all == NULL)
            return NULL;
        __atomic_store_n(&sr_rt.peer_health, all, __ATOMIC_RELEASE);
    }
    sr_peer_health_t *ph = &all[pe];
    if (ph->lane == NULL)
        ph->lane = calloc(SR_TL_MAX_LANES, sizeof(*ph->lane));
    return ph->lane ? ph : NULL;
}

/* Paused lanes whose pause is over are probed. */
static void sr_health_wake(int pe, uint64_t now)
{
    sr_peer_health_t *ph = sr_peer_health(pe);
    uint32_t woke = 0;
    uint64_t ms[SR_TL_MAX_LANES];
    sr_health_lock();
    uint32_t paused = ph->paused;
    for (int l = 0; l < SR_TL_MAX_LANES; l++) {
        if (!(paused & (1u << l)) || sr_health_tick(&ph->lane[l], now) != SR_HEALTH_PROBING)
            continue;
        woke |= 1u << l;
        ms[l] = ph->lane[l].pause_ns / 1000000ull;
    }
    __atomic_store_n(&ph->probing, ph->probing | woke, __ATOMIC_RELAXED);
    __atomic_store_n(&ph->paused, paused & ~woke, __ATOMIC_RELAXED);
    sr_health_rewake(ph);
    sr_health_unlock();
    for (int l = 0; woke; l++, woke >>= 1) {
        if (!(woke & 1))
            continue;
        __atomic_fetch_add(&sr_rt.lane_probes, 1, __ATOMIC_RELAXED);
        sr_info("PE %d lane %d: probing again after a pause of %llu ms", pe, l,
                (unsigned long long)ms[l]);
    }
}

void sr_health_lane_error(int pe, int lane, const char *why)
{
    if (!sr_rt.spray || sr_rt.health.errors == 0 || lane < 0 || lane >= SR_TL_MAX_LANES ||
        __atomic_load_n(&sr_rt.peers[pe].lanes.n, __ATOMIC_RELAXED) < 2)
        return;
    uint64_t now = sr_time_ns();
    sr_health_change_t ch = SR_HEALTH_SAME;
    uint32_t errors = 0;
    uint64_t ms = 0;
    sr_health_lock();
    sr_peer_health_t *ph = sr_health_get(pe);
    if (ph != NULL) {
        sr_lane_health_t *h = &ph->lane[lane];
        ch = sr_health_error(h, &sr_rt.health, now);
        if (ch == SR_HEALTH_PAUSED) {
            ms = h->pause_ns / 1000000ull;
            errors = h->errors;
            __atomic_store_n(&ph->probing, ph->probing & ~(1u << lane), __ATOMIC_RELAXED);
            __atomic_store_n(&ph->paused, ph->paused | 1u << lane, __ATOMIC_RELAXED);
            sr_health_rewake(ph);
        }
    }
    sr_health_unlock();
    if (ch != SR_HEALTH_PAUSED)
        return;
    __atomic_fetch_add(&sr_rt.lanes_paused, 1, __ATOMIC_RELAXED);
    sr_info("PE %d lane %d paused for %llu ms after %u failures (last: %s); its traffic goes "
            "to the other lanes", pe, lane, (unsigned long long)ms, errors, why);
}

static void sr_health_lane_ok(sr_peer_health_t *ph, int pe, int lane)
{
    sr_health_change_t ch;
    sr_health_lock();
    ch = sr_health_ok(&ph->lane[lane]);
    if (ch == SR_HEALTH_RESUMED)
        __atomic_store_n(&ph->probing, ph->probing & ~(1u << lane), __ATOMIC_RELAXED);
    sr_health_unlock();
    if (ch != SR_HEALTH_RESUMED)
        return;
    __atomic_fetch_add(&sr_rt.lanes_resumed, 1, __ATOMIC_RELAXED);
    sr_info("PE %d lane %d resumed: a probe succeeded", pe, lane);
}

int sr_spray_lane(sr_ctx_t *ctx, sr_cpeer_t *cp, int avoid, size_t len)
{
    int pe = (int)(cp - ctx->peers);
    sr_peer_t *peer = &sr_rt.peers[pe];
    if (sr_unlikely(cp->spray == NULL)) {
        cp->spray = malloc(sizeof(*cp->spray));
        if (cp->spray == NULL)  /* the static turn needs no memory */
            return sr_lanes_pick(&peer->lanes, &cp->rr, avoid);
        sr_spray_init(cp->spray, (uint32_t)sr_rt.env.spray_probe);
    }
    uint64_t now = sr_time_ns();
    sr_peer_health_t *ph = sr_peer_health(pe);
    uint32_t paused = ph ? __atomic_load_n(&ph->paused, __ATOMIC_RELAXED) : 0;
    if (sr_unlikely(paused) && now >= __atomic_load_n(&ph->wake, __ATOMIC_RELAXED)) {
        sr_health_wake(pe, now);
        paused = __atomic_load_n(&ph->paused, __ATOMIC_RELAXED);
    }
    return sr_spray_pick(cp->spray, &peer->lanes, paused, avoid, len, now);
}

int sr_spray_repick(sr_ctx_t *ctx, sr_cpeer_t *cp, int avoid, size_t len)
{
    int pe = (int)(cp - ctx->peers);
    if (sr_rt.spray && __atomic_load_n(&sr_rt.peers[pe].lanes.n, __ATOMIC_RELAXED) > 1)
        return sr_spray_lane(ctx, cp, avoid, len);
    return sr_lanes_pick(&sr_rt.peers[pe].lanes, &cp->rr, avoid);
}

void sr_spray_slice_posted(sr_cpeer_t *cp, sr_slice_t *s)
{
    sr_spray_t *sp = cp->spray;
    if (s->lane < 0 || s->lane >= SR_TL_MAX_LANES || (s->inflight & SR_SLICE_SPRAYED))
        return;
    /* Only an idle lane starts a sample: the clock is read once per burst. */
    uint64_t now = sp->lane[s->lane].inflight ? 0 : sr_time_ns();
    sr_spray_posted(sp, s->lane, s->len, now);
    s->inflight |= SR_SLICE_SPRAYED;
}

void sr_spray_slice_done(sr_slice_t *s, symrail_status_t status)
{
    sr_cpeer_t *cp = &s->op.ctx->peers[s->pe];
    s->inflight &= (uint8_t)~SR_SLICE_SPRAYED;
    sr_spray_done(cp->spray, s->lane, s->len, status == SYMRAIL_OK, sr_time_ns());
    if (status != SYMRAIL_OK)
        return;
    sr_peer_health_t *ph = sr_peer_health(s->pe);
    if (sr_unlikely(ph != NULL) &&
        (__atomic_load_n(&ph->probing, __ATOMIC_RELAXED) & (1u << s->lane)))
        sr_health_lane_ok(ph, s->pe, s->lane);
}

void sr_spray_ctx_fini(sr_ctx_t *ctx)
{
    if (ctx->peers == NULL)
        return;
    for (int pe = 0; pe < sr_rt.n_max; pe++) {
        free(ctx->peers[pe].spray);
        ctx->peers[pe].spray = NULL;
    }
}

void sr_health_fini(void)
{
    sr_peer_health_t *all = sr_rt.peer_health;
    if (all == NULL)
        return;
    for (int pe = 0; pe < sr_rt.n_max; pe++)
        free(all[pe].lane);
    free(all);
    sr_rt.peer_health = NULL;
}
