/*
 * What rma.c, ctx.c and init.c call of spray.c: adaptive spraying and rail
 * health over a peer's data lanes (sr_spray_lane, the pick, is in rt.h).
 */
#ifndef SR_CORE_SPRAY_CORE_H
#define SR_CORE_SPRAY_CORE_H

#include "core/rt.h"

/* In sr_slice_t's inflight: its bytes are counted in its context's
 * estimates. */
#define SR_SLICE_SPRAYED 2

/* Rail health of one peer's lanes: a bit per lane (atomic), the earliest
 * end of a pause, and each lane's state (NULL until one of its lanes
 * fails), all written under lane_lock. */
typedef struct sr_peer_health {
    uint32_t          paused, probing;
    uint64_t          wake;
    sr_lane_health_t *lane;
} sr_peer_health_t;

/* pe's, or NULL where no lane of any peer has failed yet. */
static inline sr_peer_health_t *sr_peer_health(int pe)
{
    sr_peer_health_t *h = __atomic_load_n(&sr_rt.peer_health, __ATOMIC_ACQUIRE);
    return h ? &h[pe] : NULL;
}

symrail_status_t sr_spray_setup(void);
/* A retried or refused slice's next lane, avoiding its last. */
int sr_spray_repick(sr_ctx_t *ctx, sr_cpeer_t *cp, int avoid, size_t len);
void sr_spray_slice_posted(sr_cpeer_t *cp, sr_slice_t *s);
void sr_spray_slice_done(sr_slice_t *s, symrail_status_t status);
/* A lane of pe's data endpoint failed (a slice, a lane report). */
void sr_health_lane_error(int pe, int lane, const char *why);
void sr_spray_ctx_fini(sr_ctx_t *ctx);
void sr_health_fini(void);

#endif
