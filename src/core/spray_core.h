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
