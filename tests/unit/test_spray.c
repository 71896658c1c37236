/*
 * Unit tests of adaptive spraying (core/spray.h) and rail health
 * (core/health.h) as pure functions.  A simulation of lanes of given
 * bandwidth (each a FIFO server with a fixed latency, fed by a sender that
 * keeps a window of slices in flight, as a bulk transfer does against a
 * QP's or a connection's limit) drives both choosers in simulated time:
 * static weights are capped by the slowest lane, adaptive reaches the sum.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "core/health.h"
#include "core/lanes.h"
#include "core/spray.h"

#define SLICE  65536u
#define WINDOW 32      /* slices in flight at once */
#define QCAP   1024

typedef struct {
    double   bw;       /* bytes per ns */
    uint64_t lat;      /* ns from the end of service to the completion */
    uint64_t free_at;  /* when the server is free */
    uint64_t done[QCAP];
    int      head, tail;
    uint64_t slices;   /* completed */
} sim_lane_t;

typedef struct {
    int        n;
    sim_lane_t lane[4];
    sr_lanes_t lanes;
    uint64_t   now;
    int        inflight;
    uint64_t   bytes;
} sim_t;

static void sim_init(sim_t *s, int n, const double *bw, const uint32_t *weights)
{
    *s = (sim_t){ 0 };
    s->n = n;
    for (int i = 0; i < n; i++) {
        s->lane[i].bw = bw[i];
        s->lane[i].lat = 2000;
    }
    sr_lanes_set(&s->lanes, weights, n);
}

static void sim_post(sim_t *s, int l)
{
    sim_lane_t *ln = &s->lane[l];
    uint64_t start = ln->free_at > s->now ? ln->free_at : s->now;
    ln->free_at = start + (uint64_t)(SLICE / ln->bw);
    assert_true(ln->tail - ln->head < QCAP);
    ln->done[ln->tail++ % QCAP] = ln->free_at + ln->lat;
    s->inflight++;
}

/* Advances to the next completion and returns its lane, or -1. */
static int sim_next(sim_t *s)
{
    int best = -1;
    for (int i = 0; i < s->n; i++) {
        sim_lane_t *ln = &s->lane[i];
        if (ln->head < ln->tail &&
            (best < 0 || ln->done[ln->head % QCAP] < s->lane[best].done[s->lane[best].head % QCAP]))
            best = i;
    }
    if (best < 0)
        return -1;
    sim_lane_t *ln = &s->lane[best];
    s->now = ln->done[ln->head++ % QCAP];
    ln->slices++;
    s->inflight--;
    s->bytes += SLICE;
    return best;
}

typedef struct {
    int         adaptive;
    sr_spray_t  sp;
    sr_lane_rr_t rr;
    uint32_t    paused;
    uint64_t    picked[4];
} chooser_t;

static int choose(chooser_t *c, sim_t *s)
{
    int l = c->adaptive ? sr_spray_pick(&c->sp, &s->lanes, c->paused, -1, SLICE, s->now)
                        : sr_lanes_pick(&s->lanes, &c->rr, -1);
    if (l >= 0) {
        c->picked[l]++;
        if (c->adaptive)
            sr_spray_posted(&c->sp, l, SLICE, s->now);
    }
    return l;
}

/* Runs until simulated time `until` (ns); returns bytes per ns from `from`. */
static double sim_run(sim_t *s, chooser_t *c, uint64_t from, uint64_t until)
{
    uint64_t bytes0 = 0;
    int counted = 0;
    while (s->now < until) {
        while (s->inflight < WINDOW) {
            int l = choose(c, s);
            if (l < 0)
                break;
            sim_post(s, l);
        }
        int l = sim_next(s);
        if (l < 0)
            break;
        if (c->adaptive)
            sr_spray_done(&c->sp, l, SLICE, 1, s->now);
        if (!counted && s->now >= from) {
            counted = 1;
            bytes0 = s->bytes;
            from = s->now;
        }
    }
    return (double)(s->bytes - bytes0) / (double)(s->now - from);
}

static double measure(int adaptive, double bw0, double bw1, chooser_t *c_p)
{
    sim_t s;
    double bw[2] = { bw0, bw1 };
    uint32_t w[2] = { 100, 100 };  /* equal links: the difference is load or shaping */
    sim_init(&s, 2, bw, w);
    chooser_t c = { .adaptive = adaptive };
    sr_spray_init(&c.sp, 32);
    /* 20 ms of warm-up, then 200 ms measured */
    double r = sim_run(&s, &c, 20000000ull, 220000000ull);
    if (c_p)
        *c_p = c;
    return r;
}

/* The table the README quotes: GB/s of one sender over two lanes. */
static void test_sim_table(void **state)
{
    (void)state;
    static const double cases[][2] = { { 1.0, 1.0 }, { 5.0, 1.0 }, { 1.0, 5.0 }, { 2.5, 0.5 } };
    printf("# lanes GB/s    sum   static  adaptive  adaptive/sum  static/slower  "
           "adaptive share of lane 0\n");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double b0 = cases[i][0], b1 = cases[i][1], sum = b0 + b1;
        double slow = b0 < b1 ? b0 : b1;
        chooser_t c;
        double st = measure(0, b0, b1, NULL);
        double ad = measure(1, b0, b1, &c);
        printf("# %4.1f:%-4.1f  %6.2f  %6.2f  %8.2f  %12.2f  %13.2f  %.2f\n", b0, b1, sum, st,
               ad, ad / sum, st / slow,
               (double)c.picked[0] / (double)(c.picked[0] + c.picked[1]));
        assert_true(ad >= 0.9 * sum);
        /* Equal weights: the slower lane sets the pace of both. */
        assert_true(st >= 1.8 * slow && st <= 2.2 * slow);
        assert_true(ad >= st * 0.98);
    }
}

/* The rails swap speeds (another job starts on the fast one): the
 * estimates follow, and the sum is reached again. */
static void test_sim_rails_change(void **state)
{
    (void)state;
    sim_t s;
    double bw[2] = { 5.0, 1.0 };
    uint32_t w[2] = { 1, 1 };
    sim_init(&s, 2, bw, w);
    chooser_t c = { .adaptive = 1 };
    sr_spray_init(&c.sp, 32);
    assert_true(sim_run(&s, &c, 10000000ull, 50000000ull) >= 0.9 * 6.0);
    s.lane[0].bw = 1.0;
    s.lane[1].bw = 5.0;
    double r = sim_run(&s, &c, s.now + 10000000ull, s.now + 60000000ull);
    printf("# after the swap: %.2f GB/s of 6.00\n", r);
    assert_true(r >= 0.9 * 6.0);
}

/*
 * Two links of two QPs each (lanes 0-1 on link 0, 2-3 on link 1, as verbs
 * numbers them with SYMRAIL_IB_QPS_PER_PEER=2), the QPs of a link sharing
 * it equally while they have data, at the pace of the two-guest bench's
 * shaped rails (MB/s): 4 MiB operations, each posted whole, then a quiet.
 * Returns bytes per ns over the second half and link 1's share of bytes.
 */
static double sim_links(double bw0, double bw1, double *share1_p)
{
    enum { NL = 4, NOPS = 200, PER_OP = 64 };
    double bw[2] = { bw0, bw1 }, left[NL][PER_OP], now = 1e6, bytes[2] = { 0, 0 }, busy = 0;
    int head[NL] = { 0 }, tail[NL] = { 0 };
    uint32_t w[NL] = { 100, 100, 100, 100 };
    sr_lanes_t lanes = { 0 };
    sr_spray_t sp;
    sr_lanes_set(&lanes, w, NL);
    sr_spray_init(&sp, 32);
    for (int op = 0; op < NOPS; op++) {
        double t0 = now;
        for (int i = 0; i < PER_OP; i++) {
            int l = sr_spray_pick(&sp, &lanes, 0, -1, SLICE, (uint64_t)now);
            assert_in_range(l, 0, NL - 1);
            sr_spray_posted(&sp, l, SLICE, (uint64_t)now);
            left[l][tail[l]++ % PER_OP] = SLICE;
            if (op >= NOPS / 2)
                bytes[l / 2] += SLICE;
        }
        for (;;) {
            int active[2] = { 0, 0 }, next = -1;
            double dt = 0;
            for (int l = 0; l < NL; l++)
                active[l / 2] += head[l] < tail[l];
            for (int l = 0; l < NL; l++) {
                if (head[l] == tail[l])
                    continue;
                double t = left[l][head[l] % PER_OP] / (bw[l / 2] / active[l / 2]);
                if (next < 0 || t < dt) {
                    next = l;
                    dt = t;
                }
            }
            if (next < 0)
                break;
            for (int l = 0; l < NL; l++)
                if (head[l] < tail[l])
                    left[l][head[l] % PER_OP] -= dt * bw[l / 2] / active[l / 2];
            now += dt;
            head[next]++;
            sr_spray_done(&sp, next, SLICE, 1, (uint64_t)now + 20000);  /* 20 us to the CQ */
        }
        if (op >= NOPS / 2)
            busy += now - t0;
        now += 2e6;  /* the quiet's round trip, the next operation's start */
    }
    *share1_p = bytes[1] / (bytes[0] + bytes[1]);
    return (bytes[0] + bytes[1]) / busy;
}

/* What the two-guest bench's multi-rail rows ask of the chooser itself:
 * two equal links at 1.9x one or better, evenly split; 5:1 at 0.9x the sum. */
static void test_sim_shared_links(void **state)
{
    (void)state;
    double share, r = sim_links(5e-3, 5e-3, &share);
    printf("# 2 links of 2 QPs, 5+5 MB/s: %.2f MB/s, link 1 share %.2f\n", r * 1e3, share);
    assert_true(r >= 1.9 * 5e-3);
    assert_true(share > 0.45 && share < 0.55);
    r = sim_links(5e-3, 1e-3, &share);
    printf("# 2 links of 2 QPs, 5+1 MB/s: %.2f MB/s, link 1 share %.2f\n", r * 1e3, share);
    assert_true(r >= 0.9 * 6e-3);
}

/* Every probe_every-th pick goes to the lane whose estimate is oldest,
 * even when another is predicted faster. */
static void test_probing(void **state)
{
    (void)state;
    sr_lanes_t l;
    uint32_t w[2] = { 1, 1 };
    sr_lanes_set(&l, w, 2);
    sr_spray_t sp;
    sr_spray_init(&sp, 32);
    uint64_t now = 100000000ull;
    /* Lane 0 measured fast, lane 1 at a thousandth and earlier; both busy. */
    sp.lane[0] = (sr_spray_lane_t){ .bw = 10, .fresh = now, .inflight = SLICE, .mark = now };
    sp.lane[1] = (sr_spray_lane_t){ .bw = 0.01, .fresh = now - 1, .inflight = SLICE, .mark = now };
    int to1 = 0;
    for (int i = 0; i < 320; i++) {
        int p = sr_spray_pick(&sp, &l, 0, -1, SLICE, now);
        to1 += p == 1;
        sr_spray_posted(&sp, p, SLICE, now);
    }
    assert_int_equal(to1, 10);
    assert_int_equal(sp.probes, 10);
    /* Without periodic probes, the slow lane is left alone while it is busy. */
    sr_spray_init(&sp, 0);
    sp.lane[0] = (sr_spray_lane_t){ .bw = 10, .fresh = now, .inflight = SLICE };
    sp.lane[1] = (sr_spray_lane_t){ .bw = 0.001, .fresh = now, .inflight = SLICE };
    for (int i = 0; i < 100; i++)
        assert_int_equal(sr_spray_pick(&sp, &l, 0, -1, SLICE, now), 0);
    /* ... and probed once idle with an estimate older than SR_SPRAY_STALE_NS. */
    sp.lane[1].inflight = 0;
    assert_int_equal(sr_spray_pick(&sp, &l, 0, -1, SLICE, now + SR_SPRAY_STALE_NS / 2), 0);
    assert_int_equal(sr_spray_pick(&sp, &l, 0, -1, SLICE, now + SR_SPRAY_STALE_NS + 1), 1);
}

/* A lane that goes down gets nothing; back up, it gets traffic again. */
static void test_down_and_back(void **state)
{
    (void)state;
    sim_t s;
    double bw[2] = { 1.0, 1.0 };
    uint32_t w[2] = { 1, 1 };
    sim_init(&s, 2, bw, w);
    chooser_t c = { .adaptive = 1 };
    sr_spray_init(&c.sp, 32);
    sim_run(&s, &c, 0, 10000000ull);
    assert_true(c.picked[1] > 0);
    w[1] = 0;
    sr_lanes_set(&s.lanes, w, 2);
    uint64_t before = c.picked[1];
    double r = sim_run(&s, &c, s.now, s.now + 10000000ull);
    assert_int_equal(c.picked[1], before);
    assert_true(r >= 0.9 * 1.0);
    w[1] = 1;
    sr_lanes_set(&s.lanes, w, 2);
    r = sim_run(&s, &c, s.now + 2000000ull, s.now + 12000000ull);
    assert_true(c.picked[1] > before + 100);
    assert_true(r >= 0.9 * 2.0);
    /* Every lane down: no lane. */
    w[0] = w[1] = 0;
    sr_lanes_set(&s.lanes, w, 2);
    assert_int_equal(sr_spray_pick(&c.sp, &s.lanes, 0, -1, SLICE, s.now), -1);
}

/* A paused lane gets nothing while another is up; avoid is honoured. */
static void test_paused_and_avoid(void **state)
{
    (void)state;
    sim_t s;
    double bw[3] = { 1.0, 1.0, 1.0 };
    uint32_t w[3] = { 1, 1, 1 };
    sim_init(&s, 3, bw, w);
    chooser_t c = { .adaptive = 1, .paused = 1u << 1 };
    sr_spray_init(&c.sp, 32);
    double r = sim_run(&s, &c, 1000000ull, 20000000ull);
    assert_int_equal(c.picked[1], 0);
    assert_true(r >= 0.9 * 2.0);
    /* Only paused lanes left: they are better than none. */
    assert_int_equal(sr_spray_pick(&c.sp, &s.lanes, 0x7, -1, SLICE, s.now) >= 0, 1);
    for (int i = 0; i < 100; i++)
        assert_true(sr_spray_pick(&c.sp, &s.lanes, 0, 2, SLICE, s.now) != 2);
    w[0] = w[1] = 0;
    sr_lanes_set(&s.lanes, w, 3);
    assert_int_equal(sr_spray_pick(&c.sp, &s.lanes, 0, 2, SLICE, s.now), 2);
}

#define MS 1000000ull

static void test_health_pause_backoff_resume(void **state)
{
    (void)state;
    const sr_health_cfg_t cfg = { .errors = 3, .base_ns = 100 * MS, .max_ns = 800 * MS };
    sr_lane_health_t h = { 0 };
    uint64_t t = 5 * MS;
    /* A burst (one QP failing with many slices on it) counts once. */
    for (int i = 0; i < 50; i++)
        assert_int_equal(sr_health_error(&h, &cfg, t + (uint64_t)i * 1000), SR_HEALTH_SAME);
    assert_int_equal(h.errors, 1);
    assert_int_equal(sr_health_error(&h, &cfg, t + 2 * MS), SR_HEALTH_SAME);
    assert_int_equal(sr_health_error(&h, &cfg, t + 4 * MS), SR_HEALTH_PAUSED);
    assert_int_equal(h.state, SR_LANE_PAUSED);
    t += 4 * MS;
    assert_int_equal(h.until, t + 100 * MS);
    /* Nothing changes while paused; the tick ends the pause on time. */
    assert_int_equal(sr_health_error(&h, &cfg, t + 10 * MS), SR_HEALTH_SAME);
    assert_int_equal(sr_health_tick(&h, t + 99 * MS), SR_HEALTH_SAME);
    uint64_t expect = 100 * MS;
    for (int round = 0; round < 5; round++) {
        t = h.until;
        assert_int_equal(sr_health_tick(&h, t), SR_HEALTH_PROBING);
        assert_int_equal(h.state, SR_LANE_PROBING);
        /* The probe fails, at once: paused again, twice as long, at most
         * max_ns. */
        assert_int_equal(sr_health_error(&h, &cfg, t + 1000), SR_HEALTH_PAUSED);
        expect = expect * 2 > cfg.max_ns ? cfg.max_ns : expect * 2;
        assert_int_equal(h.pause_ns, expect);
    }
    assert_int_equal(h.pause_ns, 800 * MS);
    t = h.until;
    assert_int_equal(sr_health_tick(&h, t), SR_HEALTH_PROBING);
    assert_int_equal(sr_health_ok(&h), SR_HEALTH_RESUMED);
    assert_int_equal(h.state, SR_LANE_UP);
    assert_int_equal(sr_health_ok(&h), SR_HEALTH_SAME);  /* once per change */
    /* Failing again soon: the pause stays long. */
    for (int i = 0; i < 3; i++)
        sr_health_error(&h, &cfg, t + (uint64_t)(10 + 2 * i) * MS);
    assert_int_equal(h.state, SR_LANE_PAUSED);
    assert_int_equal(h.pause_ns, 800 * MS);
    t = h.until;
    assert_int_equal(sr_health_tick(&h, t), SR_HEALTH_PROBING);
    assert_int_equal(sr_health_ok(&h), SR_HEALTH_RESUMED);
    /* Clean for max_ns: it starts over, errors and backoff both. */
    t += 2 * cfg.max_ns;
    assert_int_equal(sr_health_error(&h, &cfg, t), SR_HEALTH_SAME);
    assert_int_equal(h.errors, 1);
    sr_health_error(&h, &cfg, t + 2 * MS);
    assert_int_equal(sr_health_error(&h, &cfg, t + 4 * MS), SR_HEALTH_PAUSED);
    assert_int_equal(h.pause_ns, 100 * MS);
}

static void test_health_off(void **state)
{
    (void)state;
    const sr_health_cfg_t cfg = { .errors = 0, .base_ns = MS, .max_ns = MS };
    sr_lane_health_t h = { 0 };
    for (int i = 0; i < 100; i++)
        assert_int_equal(sr_health_error(&h, &cfg, (uint64_t)(i + 1) * 10 * MS), SR_HEALTH_SAME);
    assert_int_equal(h.state, SR_LANE_UP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_table),
        cmocka_unit_test(test_sim_rails_change),
        cmocka_unit_test(test_sim_shared_links),
        cmocka_unit_test(test_probing),
        cmocka_unit_test(test_down_and_back),
        cmocka_unit_test(test_paused_and_avoid),
        cmocka_unit_test(test_health_pause_backoff_resume),
        cmocka_unit_test(test_health_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
