/*
 * A scripted transport for the core's unit tests (test_core_rma, test_core_ctx):
 * lanes with weights and room, completions held back or failed at will,
 * flushes and atomics recorded.  A fault-injection stand-in; real data
 * movement is proven by the integration tests.
 */
#ifndef SR_TEST_FAKE_TL_H
#define SR_TEST_FAKE_TL_H

#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/rt.h"
#include "core/spray_core.h"

#define C (sr_rt.dctx)
#include "core/lanes.h"

#define NLANES  3
#define MAXOPS  4096

typedef struct {
    sr_tl_comp_t *comp;
    int           lane;
    uint64_t      roff;
    size_t        len;
} fake_op_t;

static struct {
    uint32_t  weights[NLANES];
    int       room;              /* outstanding ops allowed per lane */
    int       failing_lane;      /* completions on it fail; -1 none */
    int       outstanding[NLANES];
    int       posted[NLANES];
    int       again;             /* AGAIN answers given */
    int       refuse_lane;       /* posts to it fail at once; -1 none */
    int       stuck_lane;        /* always full; -1 none */
    int       hold;              /* progress completes nothing */
    int       hold_lane;         /* progress completes nothing on this lane; -1 none */
    uint32_t  flush_lanes;       /* the lanes the last flush asked for */
    int       amo_again;         /* atomics answer "no room" this many times, then apply */
    int       amo_tries[16];     /* the lanes they were offered */
    int       namo;
    int       local;             /* puts complete at post; flush says when they arrived */
    int       flushes;
    sr_tl_comp_t *flush_comp;
    fake_op_t q[MAXOPS];
    int       nq;
    unsigned char done[1 << 20]; /* bytes completed successfully */
} fk;

static symrail_status_t fake_rma(sr_tl_ep_t *ep, int lane, void *buf, uint32_t region,
                                 uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    (void)ep, (void)buf, (void)region;
    assert_true(lane >= 0 && lane < NLANES);
    assert_true(fk.weights[lane] != 0);  /* the core never picks a down lane */
    if (lane == fk.refuse_lane)
        return SYMRAIL_ERR_TRANSPORT;
    if (fk.outstanding[lane] >= fk.room || lane == fk.stuck_lane) {
        fk.again++;
        return SYMRAIL_ERR_AGAIN;
    }
    assert_true(fk.nq < MAXOPS);
    fk.q[fk.nq++] = (fake_op_t){ comp, lane, roff, len };
    fk.outstanding[lane]++;
    fk.posted[lane]++;
    return SR_TL_INPROGRESS;
}

static symrail_status_t fake_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                                 uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    if (fk.local) {
        fk.posted[lane]++;
        for (size_t b = 0; b < len; b++)
            fk.done[roff + b]++;
        return SYMRAIL_OK;
    }
    return fake_rma(ep, lane, (void *)src, region, roff, len, comp);
}

static symrail_status_t fake_flush(sr_tl_ep_t *ep, uint32_t lanes, sr_tl_comp_t *comp)
{
    (void)ep;
    fk.flushes++;
    fk.flush_lanes = lanes;
    fk.flush_comp = comp;
    return SR_TL_INPROGRESS;
}

static void fake_nothing(sr_tl_ep_t *ep)
{
    (void)ep;
}

static uint64_t fake_heard(sr_tl_ep_t *ep)
{
    (void)ep;
    return 0;
}

static symrail_status_t fake_atomic(sr_tl_ep_t *ep, int lane, sr_tl_amo_t op, uint32_t region,
                                    uint64_t roff, uint64_t operand, uint64_t compare,
                                    uint64_t *result_p, sr_tl_comp_t *comp)
{
    (void)ep, (void)lane, (void)op, (void)region, (void)roff, (void)operand, (void)compare;
    (void)result_p, (void)comp;
    return SR_TL_INPROGRESS;  /* and never completes */
}

/* Inline: only some of the tests that include this use it. */
static inline symrail_status_t fake_atomic_room(sr_tl_ep_t *ep, int lane, sr_tl_amo_t op,
                                                uint32_t region, uint64_t roff,
                                                uint64_t operand, uint64_t compare,
                                                uint64_t *result_p, sr_tl_comp_t *comp)
{
    (void)ep, (void)op, (void)region, (void)roff, (void)operand, (void)compare, (void)comp;
    if (fk.namo < 16)
        fk.amo_tries[fk.namo++] = lane;
    if (fk.amo_again > 0) {
        fk.amo_again--;
        return SYMRAIL_ERR_AGAIN;
    }
    if (result_p)
        *result_p = 0;
    return SYMRAIL_OK;
}

static int fake_progress(sr_tl_ctx_t *ctx)
{
    (void)ctx;
    if (fk.hold)
        return 0;
    if (fk.flush_comp) {
        sr_tl_comp_t *c = fk.flush_comp;
        fk.flush_comp = NULL;
        c->cb(c, SYMRAIL_OK);
    }
    int n = fk.nq;
    fake_op_t q[MAXOPS];
    memcpy(q, fk.q, (size_t)n * sizeof(q[0]));
    fk.nq = 0;
    for (int i = 0; i < n; i++) {
        if (q[i].lane == fk.hold_lane) {
            fk.q[fk.nq++] = q[i];
            continue;
        }
        fk.outstanding[q[i].lane]--;
        if (q[i].lane == fk.failing_lane) {
            /* The lane is found broken: it reports itself down from now on. */
            fk.weights[q[i].lane] = 0;
            q[i].comp->cb(q[i].comp, SYMRAIL_ERR_TRANSPORT);
        } else {
            for (size_t b = 0; b < q[i].len; b++)
                fk.done[q[i].roff + b]++;
            q[i].comp->cb(q[i].comp, SYMRAIL_OK);
        }
    }
    return n;
}

static int fake_lanes(sr_tl_ep_t *ep, uint32_t *w, int max)
{
    (void)ep, (void)max;
    memcpy(w, fk.weights, sizeof(fk.weights));
    return NLANES;
}

static symrail_status_t fake_ep_check(sr_tl_ep_t *ep)
{
    (void)ep;
    return SYMRAIL_OK;
}

static sr_tl_ops_t fake_ops;
static char *fake_getenv(const char *name)
{
    (void)name;
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    memset(&fk, 0, sizeof(fk));
    fk.weights[0] = 1;
    fk.weights[1] = 2;
    fk.weights[2] = 1;
    fk.room = 1000;
    fk.failing_lane = -1;
    fk.stuck_lane = -1;
    fk.refuse_lane = -1;
    fk.hold_lane = -1;
    fake_ops.put = fake_put;
    fake_ops.flush = fake_flush;
    fake_ops.atomic = fake_atomic;
    fake_ops.ep_post_end = fake_nothing;
    fake_ops.local_hint = sr_tl_no_local_hint;
    fake_ops.ep_heard = fake_heard;
    fake_ops.get = fake_rma;
    fake_ops.progress = fake_progress;
    fake_ops.ep_lanes = fake_lanes;
    fake_ops.ep_check = fake_ep_check;
    memset(&sr_rt, 0, sizeof(sr_rt));
    assert_int_equal(sr_env_load(fake_getenv, &sr_rt.env), SYMRAIL_OK);
    sr_rt.env.spin_count = 10;
    sr_rt.env.op_timeout = 2000;
    sr_rt.n_pes = 1;
    sr_rt.n_max = 1;  /* no connected peers */
    sr_rt.sleeper = -1;
    sr_rt.hold_lane = -1;
    sr_rt.peers = calloc(1, sizeof(*sr_rt.peers));
    sr_rt.pids = calloc(1, sizeof(int));
    sr_rt.peers[0].ops = &fake_ops;
    sr_rt.peers[0].ep = (sr_tl_ep_t *)&fk;
    sr_rt.peers[0].slice = 1000;
    sr_rt.peers[0].ordered = 1;
    sr_rt.tls[0].ops = &fake_ops;
    sr_rt.ntls = 1;
    assert_int_equal(sr_ctx_new(0, &sr_rt.dctx), SYMRAIL_OK);
    sr_peer_lanes_refresh(0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sr_ctxs_fini();
    sr_health_fini();
    free(sr_rt.peers);
    free(sr_rt.pids);
    sr_env_release(&sr_rt.env);
    return 0;
}

static void assert_each_byte_once(size_t len)
{
    for (size_t b = 0; b < len; b++)
        if (fk.done[b] != 1)
            fail_msg("byte %zu completed %d times", b, fk.done[b]);
}

#endif
