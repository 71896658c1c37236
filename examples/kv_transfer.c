/*
 * KV-cache transfer from prefill to decode workers, the way an LLM inference
 * engine moves it:
 *  - each decode PE owns a KV pool (layers x blocks x block bytes), registered
 *    as a segment, and hands its descriptor to the prefill PEs it serves;
 *  - it grants a prefill PE free blocks of its pool (any blocks, scattered)
 *    by a notification whose payload lists their indices;
 *  - the prefill PE fills blocks of its own pool with the request's KV (a
 *    pattern here: request, layer, block) and sends the whole request as ONE
 *    paged batch (the granted blocks of every layer), with a notification at
 *    its end;
 *  - the decode PE waits for that notification by tag: when it comes, every
 *    byte of the request is in place, or its status says why not.  It checks
 *    the blocks and frees them for the next grant.
 *
 *   symrun -n 2 ./kv_transfer --verify
 *   symrun -n 4 ./kv_transfer --block-bytes 4K,16K,64K --blocks-per-request 16,64,256
 *
 * PEs 0..P-1 are prefill PEs, the others decode PEs; prefill PE p sends to
 * decode PE P + p % D.  A one-PE job plays both parts.  It prints throughput
 * and the latency of a request (submit at the prefill PE to the notification
 * at the decode PE; both on one host) per block size and request size.
 * With --listen DIR and --connect DIR the two parts are two jobs that
 * connect through endpoints (kv_jobs.c).
 */
#include "kv_transfer.h"

void kv_die(const char *what, symrail_status_t st)
{
    char msg[512];
    snprintf(msg, sizeof(msg), "kv_transfer: %s: %s", what, symrail_strerror(st));
    symrail_abort(1, msg);
}

static int decode_of(const job_t *j, int p)
{
    return j->npes == 1 ? 0 : j->nprefill + p % j->ndecode;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* A pool: from symrail_seg_alloc (local peers map it and copy at memory
 * speed), or malloc'd and registered (what an engine's own allocator gives). */
static unsigned char *pool_new(const job_t *j, size_t bytes, symrail_seg_t *seg_p)
{
    void *p;
    if (j->o->malloc_pool) {
        p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
        if (p == NULL)
            kv_die("aligned_alloc of a pool", SYMRAIL_ERR_NOMEM);
        CHECK(symrail_seg_register(p, bytes, 0, seg_p));
    } else {
        CHECK(symrail_seg_alloc(bytes, 0, &p, seg_p));
    }
    return p;
}

static void pool_free(const job_t *j, unsigned char *p, symrail_seg_t seg)
{
    CHECK(symrail_seg_deregister(seg));
    if (j->o->malloc_pool)
        free(p);
}

/* ---- decode side ---------------------------------------------------------- */
typedef struct {
    const job_t *j;
    const conf_t *c;
    unsigned char *pool;
    symrail_seg_t seg;
    uint32_t *free_idx;          /* free blocks of the pool, in no order */
    size_t nfree;
    int nclients, clients[64];   /* the prefill PEs I serve */
    unsigned to_grant[64], outstanding[64];
    int *grant_client;           /* [ngrant]: the PE a grant went to, -1 free */
    uint32_t *grant_idx;         /* [ngrant][bpr]: its blocks */
    unsigned ngrant, expected, received;
    double *lat;
    report_t rep;
    uint64_t rng;
} decode_t;

static void decode_setup(decode_t *d, const job_t *j, const conf_t *c)
{
    *d = (decode_t){ .j = j, .c = c, .rng = 0x9e3779b97f4a7c15u ^ (uint64_t)j->me };
    for (int p = 0; p < (j->two_jobs ? j->npeers : j->nprefill); p++)
        if ((j->two_jobs || decode_of(j, p) == j->me) && d->nclients < KV_MAX_PEERS) {
            d->to_grant[d->nclients] = j->o->requests;
            d->clients[d->nclients++] = j->two_jobs ? j->peers[p] : p;
        }
    d->expected = (unsigned)d->nclients * j->o->requests;
    d->pool = pool_new(j, (size_t)j->o->layers * c->blocks * c->bb, &d->seg);
    d->nfree = c->blocks;
    d->free_idx = malloc(c->blocks * sizeof(uint32_t));
    for (uint32_t b = 0; b < c->blocks; b++)
        d->free_idx[b] = b;
    d->ngrant = (unsigned)d->nclients * j->o->inflight;
    d->grant_client = malloc((d->ngrant + 1) * sizeof(int));
    d->grant_idx = malloc(((size_t)d->ngrant + 1) * c->bpr * sizeof(uint32_t));
    for (unsigned g = 0; g < d->ngrant; g++)
        d->grant_client[g] = -1;
    d->lat = malloc((d->expected + 1) * sizeof(double));
    if (j->two_jobs) {
        kv_jobs_send_desc(j, c, d->seg);
        return;
    }
    /* Each prefill PE I serve finds my pool's descriptor on its board. */
    board_t mine = { .desc_len = sizeof(mine.desc) };
    CHECK(symrail_seg_export(d->seg, mine.desc, &mine.desc_len));
    for (int k = 0; k < d->nclients; k++)
        CHECK(symrail_put(j->board, &mine, sizeof(mine), d->clients[k]));
    CHECK(symrail_quiet());
}

/* Grant every client what the free blocks allow, up to `inflight` each. */
static int decode_grant(decode_t *d)
{
    const unsigned bpr = d->c->bpr;
    int granted = 0;
    for (int k = 0; k < d->nclients; k++) {
        while (d->to_grant[k] && d->outstanding[k] < d->j->o->inflight && d->nfree >= bpr) {
            unsigned g = 0;
            while (d->grant_client[g] >= 0)
                g++;
            unsigned char buf[SYMRAIL_NOTIFY_MAX_PAYLOAD];
            grant_msg_t *m = (grant_msg_t *)buf;
            uint32_t *idx = (uint32_t *)(m + 1), *keep = d->grant_idx + (size_t)g * bpr;
            /* Blocks picked at random, as a long-running engine's free list
             * has them: few are adjacent, so few coalesce. */
            for (unsigned i = 0; i < bpr; i++) {
                size_t at = rng_next(&d->rng) % d->nfree;
                idx[i] = keep[i] = d->free_idx[at];
                d->free_idx[at] = d->free_idx[--d->nfree];
            }
            m->grant = g;
            m->nblocks = bpr;
            CHECK(symrail_notify_send(d->clients[k], TAG_GRANT, buf,
                                      sizeof(*m) + bpr * sizeof(uint32_t)));
            d->grant_client[g] = d->clients[k];
            d->outstanding[k]++;
            d->to_grant[k]--;
            granted = 1;
        }
    }
    return granted;
}

/* The next message with `tag`, waiting up to timeout_ms (0: a poll); 0 if
 * none came. */
static int take(uint32_t tag, int timeout_ms, symrail_notify_t *m)
{
    symrail_status_t st = timeout_ms == 0 ? symrail_notify_poll_tag(tag, m)
                                          : symrail_notify_wait_tag(tag, timeout_ms, m);
    if (st == SYMRAIL_ERR_AGAIN || st == SYMRAIL_ERR_TIMEOUT)
        return 0;
    CHECK(st);
    return 1;
}

/* One request's KV, if its notification comes within timeout_ms. */
static int decode_receive(decode_t *d, int timeout_ms)
{
    static symrail_notify_t m;
    if (!take(TAG_KV, timeout_ms, &m))
        return 0;
    uint64_t now = kv_now_ns();
    kv_msg_t km;
    memcpy(&km, m.payload, sizeof(km));
    if (m.len != sizeof(km) || km.grant >= d->ngrant || d->grant_client[km.grant] != m.src_pe)
        kv_die("a KV notification for no grant of mine", SYMRAIL_ERR_INVALID);
    const conf_t *c = d->c;
    const uint32_t *idx = d->grant_idx + (size_t)km.grant * c->bpr;
    if (m.status != SYMRAIL_OK) {
        /* The batch failed: its blocks hold nothing to use. */
        fprintf(stderr, "kv_transfer: decode PE %d: request %u from PE %d failed: %s\n",
                d->j->me, km.req, m.src_pe, symrail_strerror(m.status));
        d->rep.failed++;
    } else {
        for (uint32_t l = 0; l < d->j->o->layers; l++)
            for (uint32_t b = 0; b < c->bpr; b++) {
                const uint64_t *p = (const uint64_t *)(d->pool + ((size_t)l * c->blocks +
                                                                  idx[b]) * c->bb);
                d->rep.bad_words += kv_check(p, c->bb, km.req, l, b, d->j->o->verify);
            }
        d->rep.requests++;
        d->rep.tasks += km.ntasks;
        d->rep.bytes += (uint64_t)d->j->o->layers * c->bpr * c->bb;
        d->lat[d->rep.nlat++] = (double)(now - km.submitted_ns) / 1e6;
    }
    for (unsigned b = 0; b < c->bpr; b++)
        d->free_idx[d->nfree++] = idx[b];
    for (int k = 0; k < d->nclients; k++)
        if (d->clients[k] == m.src_pe)
            d->outstanding[k]--;
    d->grant_client[km.grant] = -1;
    d->received++;
    return 1;
}

static void decode_teardown(decode_t *d)
{
    pool_free(d->j, d->pool, d->seg);
    free(d->free_idx);
    free(d->grant_client);
    free(d->grant_idx);
    free(d->lat);
}

/* ---- prefill side ----------------------------------------------------------- */
typedef struct {
    const job_t *j;
    const conf_t *c;
    int target;
    symrail_rseg_t rseg;
    unsigned char *pool;         /* layers x lblocks blocks */
    symrail_seg_t seg;
    size_t lblocks;
    symrail_batch_t batch[64];
    int busy[64];
    uint32_t *lidx;              /* [inflight][bpr]: the local blocks of a slot */
    unsigned sent, ended;
    report_t rep;
} prefill_t;

static void prefill_setup(prefill_t *p, const job_t *j, const conf_t *c)
{
    *p = (prefill_t){ .j = j, .c = c,
                      .target = j->two_jobs ? j->peers[0] : decode_of(j, j->me) };
    const unsigned w = j->o->inflight;
    /* Every other block of my pool: the blocks of a request are not
     * adjacent here either, as in an engine's paged cache. */
    p->lblocks = 2 * (size_t)w * c->bpr;
    p->pool = pool_new(j, (size_t)j->o->layers * p->lblocks * c->bb, &p->seg);
    p->lidx = malloc((size_t)w * c->bpr * sizeof(uint32_t));
    for (size_t i = 0; i < (size_t)w * c->bpr; i++)
        p->lidx[i] = (uint32_t)(2 * i);
    for (unsigned s = 0; s < w; s++)
        CHECK(symrail_batch_create((size_t)j->o->layers * c->bpr, &p->batch[s]));
    if (j->two_jobs)
        p->rseg = kv_jobs_recv_desc(j, c);
    else
        CHECK(symrail_seg_import(j->board->desc, j->board->desc_len, &p->rseg));
}

/* Notes the batches that ended; the number. */
static int prefill_reap(prefill_t *p)
{
    int n = 0;
    for (unsigned s = 0; s < p->j->o->inflight; s++) {
        if (!p->busy[s])
            continue;
        symrail_task_state_t state;
        symrail_status_t st = symrail_batch_status(p->batch[s], SYMRAIL_BATCH_ALL, &state, NULL);
        if (state == SYMRAIL_TASK_PENDING)
            continue;
        if (state == SYMRAIL_TASK_FAILED) {
            fprintf(stderr, "kv_transfer: prefill PE %d: a batch failed: %s\n", p->j->me,
                    symrail_strerror(st));
            p->rep.failed++;
        }
        p->busy[s] = 0;
        p->ended++;
        n++;
    }
    return n;
}

/* Fills and sends one request, if a slot is free and a grant comes within
 * timeout_ms. */
static int prefill_send(prefill_t *p, int timeout_ms)
{
    const kv_opts_t *o = p->j->o;
    const conf_t *c = p->c;
    unsigned s = 0;
    while (s < o->inflight && p->busy[s])
        s++;
    if (s == o->inflight || p->sent == o->requests)
        return 0;
    static symrail_notify_t m;
    if (!take(TAG_GRANT, timeout_ms, &m))
        return 0;
    grant_msg_t g;
    memcpy(&g, m.payload, sizeof(g));
    const uint32_t *ridx = (const uint32_t *)(void *)(m.payload + sizeof(g));
    if (g.nblocks != c->bpr)
        kv_die("a grant of the wrong size", SYMRAIL_ERR_INVALID);
    const uint32_t req = (uint32_t)p->j->me * o->requests + p->sent;
    const uint32_t *lidx = p->lidx + (size_t)s * c->bpr;
    const size_t lstride = p->lblocks * c->bb, rstride = (size_t)c->blocks * c->bb;
    for (uint32_t l = 0; l < o->layers; l++)
        for (uint32_t b = 0; b < c->bpr; b++)
            kv_fill((uint64_t *)(void *)(p->pool + l * lstride + lidx[b] * c->bb), c->bb, req,
                    l, b, o->verify);
    if (o->corrupt && p->sent == 0)
        p->pool[(size_t)(o->layers - 1) * lstride + lidx[c->bpr - 1] * c->bb] ^= 1;

    /* The whole request, every layer, in one call and one batch. */
    symrail_batch_t batch = p->batch[s];
    size_t ntasks;
    CHECK(symrail_batch_reset(batch));
    CHECK(symrail_batch_add_layers(batch, SYMRAIL_WRITE, p->pool, lstride, p->rseg, 0, rstride,
                                   o->layers, lidx, ridx, c->bpr, c->bb, NULL, &ntasks));
    kv_msg_t km = { .grant = g.grant, .req = req, .ntasks = (uint32_t)ntasks,
                    .submitted_ns = kv_now_ns() };
    CHECK(symrail_batch_submit_notify(batch, p->target, TAG_KV, &km, sizeof(km)));
    p->rep.tasks += ntasks;
    p->busy[s] = 1;
    p->sent++;
    return 1;
}

static void prefill_teardown(prefill_t *p)
{
    for (unsigned s = 0; s < p->j->o->inflight; s++)
        CHECK(symrail_batch_free(p->batch[s]));
    CHECK(symrail_rseg_release(p->rseg));
    pool_free(p->j, p->pool, p->seg);
    free(p->lidx);
}

/* ---- one configuration ---------------------------------------------------- */
static void gather(const job_t *j, const report_t *r, const double *lat)
{
    CHECK(symrail_put(&j->reports[j->me], r, sizeof(*r), 0));
    if (r->nlat)
        CHECK(symrail_put(j->lat + (size_t)j->me * j->maxlat, lat, r->nlat * sizeof(double), 0));
    CHECK(symrail_barrier_all());
}

/* Runs one configuration; on PE 0 prints its row and adds it to `dat`. */
static int run_conf(const job_t *j, const conf_t *c, FILE *dat, report_t *total)
{
    decode_t d;
    prefill_t p;
    if (j->is_decode)
        decode_setup(&d, j, c);
    CHECK(symrail_barrier_all());  /* descriptors are on the boards */
    if (j->is_prefill)
        prefill_setup(&p, j, c);
    CHECK(symrail_barrier_all());
    const uint64_t t0 = kv_now_ns();

    /* A PE with one part blocks in its waits; one with both polls. */
    const int wait_ms = j->is_decode && j->is_prefill ? 0 : 100;
    uint64_t last = t0;
    for (;;) {
        int moved = 0, done = 1;
        if (j->is_decode) {
            moved |= decode_grant(&d);
            if (d.received < d.expected)
                moved |= decode_receive(&d, wait_ms), done = 0;
        }
        if (j->is_prefill) {
            moved |= prefill_reap(&p) > 0;
            moved |= prefill_send(&p, wait_ms);
            if (p.ended < j->o->requests) {
                done = 0;
                if (!moved && wait_ms && p.sent == p.ended + j->o->inflight)
                    symrail_batch_wait(p.batch[0], wait_ms);  /* every slot is busy */
            }
        }
        if (done)
            break;
        uint64_t now = kv_now_ns();
        if (moved)
            last = now;
        else if (now - last > STALL_NS)
            kv_die("nothing moved for 60 s", SYMRAIL_ERR_TIMEOUT);
    }

    report_t mine = { 0 };
    const double *lat = NULL;
    if (j->is_decode)
        mine = d.rep, lat = d.lat, mine.expected = d.expected;
    if (j->is_prefill)
        mine.failed += p.rep.failed, mine.sent = p.ended;
    if (j->is_prefill && j->two_jobs)
        mine.tasks = p.rep.tasks;  /* the decode job counts them otherwise */
    CHECK(symrail_barrier_all());
    const double secs = (double)(kv_now_ns() - t0) / 1e9;
    gather(j, &mine, lat);
    if (j->is_prefill)
        prefill_teardown(&p);
    if (j->is_decode)
        decode_teardown(&d);

    int bad = 0;
    if (j->me == 0) {
        report_t r = { 0 };
        size_t nlat = 0;
        double *all = malloc((j->maxlat * (size_t)j->npes + 1) * sizeof(double));
        for (int pe = 0; pe < j->npes; pe++) {
            const report_t *x = &j->reports[pe];
            r.requests += x->requests, r.failed += x->failed, r.bad_words += x->bad_words;
            r.bytes += x->bytes, r.tasks += x->tasks;
            r.expected += x->expected, r.sent += x->sent;
            memcpy(all + nlat, j->lat + (size_t)pe * j->maxlat, x->nlat * sizeof(double));
            nlat += x->nlat;
        }
        const double mib = (double)j->o->layers * c->bpr * (double)c->bb / (1 << 20);
        /* A job of prefill PEs only knows what it sent. */
        const int sender = j->two_jobs && !j->is_decode;
        if (sender)
            r.requests = r.sent, r.bytes = (uint64_t)(r.sent * mib * (1 << 20));
        const double gbs = (double)r.bytes / secs / 1e9;
        const double p50 = kv_quantile(all, nlat, 0.5), p99 = kv_quantile(all, nlat, 0.99);
        printf("%6zuK %10u %8.1f %9.0f %9llu %8.2f %8.2f %8.2f %9llu\n", c->bb >> 10, c->bpr,
               mib, r.requests ? (double)r.tasks / (double)r.requests : 0.0,
               (unsigned long long)r.requests, gbs, p50, p99,
               (unsigned long long)r.bad_words);
        fflush(stdout);
        if (dat)
            fprintf(dat, "%zu %g %g %g %g\n", c->bb >> 10, mib, gbs, p50, p99);
        const uint64_t want = sender ? (uint64_t)j->npes * j->o->requests : r.expected;
        bad = r.failed || r.bad_words || r.requests != want;
        if (r.requests != want)
            fprintf(stderr, "kv_transfer: %llu requests arrived, %llu were sent\n",
                    (unsigned long long)r.requests, (unsigned long long)want);
        total->requests += r.requests, total->bytes += r.bytes;
        total->failed += r.failed, total->bad_words += r.bad_words;
        free(all);
    }
    CHECK(symrail_barrier_all());
    return bad;
}

/* The pool's blocks per layer: what was asked, else about 128 MiB, and at
 * least one request per prefill PE served. */
static unsigned pool_blocks(const job_t *j, size_t bb, unsigned bpr)
{
    unsigned clients = (unsigned)((j->nprefill + j->ndecode - 1) / j->ndecode);
    unsigned need = clients * bpr;
    if (j->o->blocks)
        return j->o->blocks;
    size_t fit = ((size_t)128 << 20) / ((size_t)j->o->layers * bb);
    if (fit > 1024)
        fit = 1024;
    return fit > need ? (unsigned)fit : need;
}

int main(int argc, char **argv)
{
    symrail_init();
    job_t j = { .me = symrail_my_pe(), .npes = symrail_n_pes() };
    kv_opts_t o;
    if (kv_parse(argc, argv, &o, j.me == 0)) {
        symrail_finalize();
        return argc > 1 && !strcmp(argv[1], "--help") ? 0 : 1;
    }
    j.o = &o;
    if (o.listen || o.connect) {
        if (kv_jobs_setup(&j)) {
            symrail_finalize();
            return 1;
        }
    } else {
        j.nprefill = j.npes == 1 ? 1 : o.prefill < 0 ? j.npes / 2 : o.prefill;
        j.ndecode = j.npes == 1 ? 1 : j.npes - j.nprefill;
        j.is_prefill = j.me < j.nprefill;
        j.is_decode = j.npes == 1 || !j.is_prefill;
    }
    if (j.nprefill < 1 || j.ndecode < 1) {
        if (j.me == 0)
            fprintf(stderr, "kv_transfer: --prefill %d leaves no %s PE of %d\n", o.prefill,
                    j.nprefill < 1 ? "prefill" : "decode", j.npes);
        symrail_finalize();
        return 1;
    }
    j.maxlat = (size_t)o.requests * (size_t)((j.nprefill + j.ndecode - 1) / j.ndecode);
    j.board = symrail_malloc(sizeof(board_t));
    j.reports = symrail_malloc((size_t)j.npes * sizeof(report_t));
    j.lat = symrail_malloc((size_t)j.npes * j.maxlat * sizeof(double));
    if (j.board == NULL || j.reports == NULL || j.lat == NULL)
        kv_die("symrail_malloc of the boards", SYMRAIL_ERR_NOMEM);

    FILE *dat = NULL;
    char datname[1024], titles[256] = "";
    if (j.me == 0) {
        printf("kv_transfer: %d prefill PE%s -> %d decode PE%s, %u layers, pools from %s, "
               "%s, %u requests per prefill PE, %u in flight%s\n",
               j.nprefill, j.nprefill > 1 ? "s" : "", j.ndecode, j.ndecode > 1 ? "s" : "",
               o.layers, o.malloc_pool ? "malloc" : "symrail_seg_alloc",
               o.verify ? "every byte checked" : "the ends of every block checked",
               o.requests, o.inflight,
               !j.two_jobs ? "" : j.is_decode ? " (two jobs: this one decodes)"
                                              : " (two jobs: this one prefills)");
        printf("  block blocks/req  MiB/req tasks/req  requests     GB/s   p50 ms   p99 ms "
               "bad words\n");
        if (o.plot) {
            snprintf(datname, sizeof(datname), "%.*s.dat", (int)(strlen(o.plot) - 4), o.plot);
            dat = fopen(datname, "w");
        }
    }
    /* `bad` (a configuration that cannot run) is the same on every PE;
     * `failed` (what went wrong in one) is known on PE 0 only. */
    int bad = 0, failed = 0;
    report_t total = { 0 };
    for (unsigned a = 0; a < o.nblock_bytes && !bad; a++) {
        for (unsigned b = 0; b < o.nbpr && !bad; b++) {
            conf_t c = { .bb = o.block_bytes[a], .bpr = o.bpr[b] };
            c.blocks = pool_blocks(&j, c.bb, c.bpr);
            if (c.bpr == 0 || c.bpr > MAX_BPR || c.blocks < c.bpr) {
                if (j.me == 0)
                    fprintf(stderr, "kv_transfer: %u blocks per request do not fit (pools of "
                            "%u blocks, a grant of at most %zu)\n", c.bpr, c.blocks, MAX_BPR);
                bad = 1;
                break;
            }
            failed |= run_conf(&j, &c, dat, &total);
        }
        if (dat)
            fprintf(dat, "\n\n");
        size_t len = strlen(titles);
        snprintf(titles + len, sizeof(titles) - len, "%s%zuKiB", len ? " " : "",
                 o.block_bytes[a] >> 10);
    }
    if (j.me == 0) {
        if (dat) {
            fclose(dat);
            kv_plot(datname, o.plot, titles, o.nblock_bytes);
        }
        if (bad)
            printf("kv_transfer: FAILED: a configuration does not fit\n");
        else if (failed)
            printf("kv_transfer: FAILED: %llu requests failed, %llu words did not match\n",
                   (unsigned long long)total.failed, (unsigned long long)total.bad_words);
        else if (j.two_jobs && !j.is_decode)
            printf("kv_transfer: %llu requests (%.1f MiB) sent to the decode job\n",
                   (unsigned long long)total.requests, (double)total.bytes / (1 << 20));
        else
            printf("kv_transfer: %s of %llu requests (%.1f MiB) verified\n",
                   o.verify ? "every byte" : "the ends of every block",
                   (unsigned long long)total.requests, (double)total.bytes / (1 << 20));
    }
    symrail_free(j.lat);
    symrail_free(j.reports);
    symrail_free(j.board);
    symrail_finalize();
    return bad || (j.me == 0 && failed);
}
