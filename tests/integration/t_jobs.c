/*
 * Independent jobs (run_jobs.sh starts them): an exporter job (PE 0 does the
 * work, other PEs take part in its barriers) and connector jobs of one PE,
 * which find each other through files in a directory:
 *   t_jobs exporter DIR      exports its endpoint (DIR/a.ep) and a segment
 *                            (DIR/a.seg), accepts a connector, exchanges a
 *                            paged batch with a notification both ways and
 *                            checks every byte; after the connector is
 *                            killed (DIR/killed appears), checks that what
 *                            goes to it fails with PEER_GONE within the
 *                            timeout and that its own barrier works; accepts
 *                            the restarted connector, refuses the old one's
 *                            descriptor (STALE), exchanges with the new,
 *                            writes a second segment of it that is then
 *                            deregistered (STALE after), and sees it gone
 *                            (PEER_GONE) once it disconnected, alive.
 *   t_jobs connector DIR R   round R (1: waits to be killed after the
 *                            exchange; 2: also bad blobs, a descriptor of a
 *                            job it is not connected to, and disconnect;
 *                            3: a bystander, connected before round 1, that
 *                            exchanges only after the killed one is gone).
 *   t_jobs owner DIR         (run_jobs.sh, stale_case) exports its endpoint
 *                            (DIR/o.ep) and accepts a writer; T_JOBS_STALE
 *                            times registers a segment, sends its descriptor
 *                            in a notification, checks the writer's blocks,
 *                            deregisters it, and says so; then a live pool
 *                            each way: blocks both ways, checked, read back.
 *   t_jobs writer DIR        connects, writes each segment (must succeed),
 *                            then through its descriptor after it went
 *                            (SYMRAIL_ERR_STALE: over verbs each one breaks
 *                            the queue pairs it was on, at both ends); the
 *                            transfers after them must all succeed, and with
 *                            T_JOBS_EXPECT_REPAIRS=1 its lanes must have been
 *                            repaired at least once per stale access.
 * With T_JOBS_BYSTANDER=1 the exporter first accepts the bystander, and
 * exchanges with it after the kill (DIR/c.done once that is done).  With
 * T_JOBS_ALLOC=1 the pools come from symrail_seg_alloc (which local peers
 * map) instead of malloc (which they reach by cross-memory attach).
 */
#include "tcommon.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define NBLK  32
#define BLK   (16u * 1024)
#define NSEND 24
#define T_WAIT_MS 30000

static char dir[1024];

/* The bytes of puts and gets that RDMA rails carried (run_jobs.sh checks
 * them where the jobs run verbs). */
static void verbs_report(const char *who)
{
    symrail_stats_t st;
    unsigned long long n = 0;
    T_CHECK(symrail_stats(&st));
    for (uint32_t i = 0; i < st.nrails; i++)
        if (strncmp(st.rails[i].name, "tcp:", 4) != 0)
            n += st.rails[i].bytes;
    printf("%s: verbs carried %llu bytes\n", who, n);
}

static double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void put_file(const char *name, const void *buf, size_t len)
{
    char path[1100], tmp[1200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    T_ASSERT(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0 && rename(tmp, path) == 0,
             "cannot write %s: %s", path, strerror(errno));
}

/* Waits for DIR/name (written whole by a rename) and reads it. */
static size_t get_file(const char *name, void *buf, size_t cap)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    for (int i = 0; i < T_WAIT_MS / 10; i++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t n = fread(buf, 1, cap, f);
            fclose(f);
            return n;
        }
        usleep(10000);
    }
    t_fail(__FILE__, __LINE__, "%s did not appear in %d ms", path, T_WAIT_MS);
}

/* Which remote block local block i goes to: a run of adjacent blocks (one
 * task after coalescing), then scattered ones. */
static uint32_t dst_block(unsigned i)
{
    return i < 8 ? 8 + i : (i * 5u + 1) % NBLK;
}

/* Pattern of remote block b written by `writer` in round r. */
static void fill_block(unsigned char *p, int writer, unsigned r, uint32_t b)
{
    t_fill(p, BLK, writer, r * 1000 + b);
}

/* The pool of NBLK blocks, registered; its descriptor in desc. */
static unsigned char *pool_make(symrail_seg_t *seg_p, char *desc, size_t *dlen_p)
{
    unsigned char *pool = NULL;
    if (t_env("T_JOBS_ALLOC", 0)) {
        void *p;
        T_CHECK(symrail_seg_alloc((size_t)NBLK * BLK, 0, &p, seg_p));
        pool = p;
    } else {
        pool = malloc((size_t)NBLK * BLK);
        T_ASSERT(pool != NULL, "no memory");
        T_CHECK(symrail_seg_register(pool, (size_t)NBLK * BLK, 0, seg_p));
    }
    memset(pool, 0, (size_t)NBLK * BLK);
    *dlen_p = SYMRAIL_SEG_DESC_MAX;
    T_CHECK(symrail_seg_export(*seg_p, desc, dlen_p));
    return pool;
}

static void pool_free(symrail_seg_t seg, unsigned char *pool)
{
    T_CHECK(symrail_seg_deregister(seg));
    if (!t_env("T_JOBS_ALLOC", 0))
        free(pool);
}

static void pool_verify(const unsigned char *pool, int writer, unsigned r)
{
    unsigned char want[BLK];
    for (unsigned i = 0; i < NSEND; i++) {
        uint32_t b = dst_block(i);
        fill_block(want, writer, r, b);
        T_ASSERT(memcmp(pool + (size_t)b * BLK, want, BLK) == 0,
                 "block %u (round %u, from %d) differs", b, r, writer);
    }
}

/* Writes NSEND blocks into rseg as one paged batch with a notification of
 * `tag` to pe at the end. */
static symrail_status_t send_blocks(symrail_rseg_t rseg, int pe, uint32_t tag, int writer,
                                    unsigned r)
{
    static unsigned char src[NSEND * BLK];
    uint32_t lidx[NSEND], ridx[NSEND];
    for (unsigned i = 0; i < NSEND; i++) {
        lidx[i] = i;
        ridx[i] = dst_block(i);
        fill_block(src + (size_t)i * BLK, writer, r, ridx[i]);
    }
    symrail_batch_t b;
    size_t ntasks = 0;
    T_CHECK(symrail_batch_create(NSEND, &b));
    T_CHECK(symrail_batch_add_blocks(b, SYMRAIL_WRITE, src, lidx, rseg, 0, ridx, NSEND, BLK,
                                     NULL, &ntasks));
    T_ASSERT(ntasks < NSEND, "adjacent blocks were not coalesced (%zu tasks)", ntasks);
    symrail_status_t st = symrail_batch_submit_notify(b, pe, tag, &r, sizeof(r));
    if (st == SYMRAIL_OK)
        st = symrail_batch_wait(b, T_WAIT_MS);
    T_CHECK(symrail_batch_free(b));
    return st;
}

static void wait_tag(int from, uint32_t tag)
{
    symrail_notify_t m;
    T_CHECK(symrail_notify_wait(T_WAIT_MS, &m));
    T_ASSERT(m.src_pe == from && m.tag == tag && m.status == SYMRAIL_OK,
             "notification from %d tag %u status %d, expected from %d tag %u", m.src_pe,
             m.tag, (int)m.status, from, tag);
}

/* Imports a peer's descriptor, checking what it says. */
static symrail_rseg_t import_seg(const char *desc, size_t len, int want_pe)
{
    symrail_rseg_t rs = NULL;
    symrail_status_t st = symrail_seg_import(desc, len, &rs);
    T_ASSERT(st == SYMRAIL_OK, "symrail_seg_import: %s", symrail_strerror(st));
    int pe;
    size_t slen;
    T_CHECK(symrail_rseg_info(rs, &pe, &slen));
    T_ASSERT(pe == want_pe && slen == (size_t)NBLK * BLK, "import: PE %d, %zu bytes", pe, slen);
    return rs;
}

/* One write of len bytes at offset 0 of rseg, as a batch of one task. */
static symrail_status_t write_one(symrail_rseg_t rseg, const void *src, size_t len)
{
    symrail_batch_t b;
    T_CHECK(symrail_batch_create(1, &b));
    symrail_status_t st = symrail_batch_add(b, SYMRAIL_WRITE, (void *)src, rseg, 0, len, NULL);
    if (st == SYMRAIL_OK)
        st = symrail_batch_submit(b);
    if (st == SYMRAIL_OK)
        st = symrail_batch_wait(b, T_WAIT_MS);
    T_CHECK(symrail_batch_free(b));
    return st;
}

/* Sends to a peer that left until it fails: PEER_GONE, within the timeout. */
static double expect_gone(int pe, symrail_rseg_t rseg)
{
    double t0 = t_now(), limit = (double)t_env("T_JOBS_GONE_S", 10);
    symrail_status_t st;
    unsigned r = 99;
    while ((st = symrail_notify_send(pe, 9, &r, sizeof(r))) == SYMRAIL_OK &&
           t_now() - t0 < limit)
        usleep(20000);
    T_ASSERT(st == SYMRAIL_ERR_PEER_GONE, "notify to a peer that left: %s", symrail_strerror(st));
    /* Over shared memory the news that it left comes with the TCP
     * connection's end, a moment after notify may see it. */
    while (rseg && (st = send_blocks(rseg, pe, 9, 0, 9)) == SYMRAIL_OK && t_now() - t0 < limit)
        usleep(20000);
    T_ASSERT(rseg == NULL || st == SYMRAIL_ERR_PEER_GONE, "batch to a peer that left: %s",
             symrail_strerror(st));
    double dt = t_now() - t0;
    T_ASSERT(dt < limit, "PEER_GONE took %.1f s", dt);
    return dt;
}

/* One exchange with connected peer `peer` (round r). */
static int exchange_exporter(int peer, symrail_rseg_t rb, const unsigned char *pool, unsigned r)
{
    wait_tag(peer, 1);  /* the connector's batch is complete here */
    pool_verify(pool, 1, r);
    T_CHECK(send_blocks(rb, peer, 2, 0, r));
    wait_tag(peer, 3);  /* it checked ours */
    return 0;
}

static void exporter(void)
{
    int me = symrail_my_pe();
    if (me != 0) {
        /* Barriers at the two phases; their waits must outlast a peer's death. */
        T_CHECK(symrail_barrier_all());
        T_CHECK(symrail_barrier_all());
        return;
    }
    char desc[SYMRAIL_SEG_DESC_MAX], ep[SYMRAIL_ENDPOINT_MAX], b1[SYMRAIL_SEG_DESC_MAX],
        b2[SYMRAIL_SEG_DESC_MAX];
    size_t dlen, elen = sizeof(ep);
    symrail_seg_t seg;
    unsigned char *pool = pool_make(&seg, desc, &dlen);
    size_t small = 8;
    T_EXPECT(symrail_endpoint_export(ep, &small), SYMRAIL_ERR_TRUNCATED);
    T_ASSERT(small > 8 && small <= SYMRAIL_ENDPOINT_MAX, "export wants %zu bytes", small);
    T_CHECK(symrail_endpoint_export(ep, &elen));
    int none;
    T_EXPECT(symrail_endpoint_accept(0, &none), SYMRAIL_ERR_AGAIN);
    /* Exported once TCP, which connected jobs use, runs. */
    dlen = sizeof(desc);
    T_CHECK(symrail_seg_export(seg, desc, &dlen));
    put_file("a.seg", desc, dlen);
    put_file("a.ep", ep, elen);

    /* The bystander, connected while the other one dies. */
    int pc = -1;
    symrail_rseg_t rc = NULL;
    char cdesc[SYMRAIL_SEG_DESC_MAX];
    if (t_env("T_JOBS_BYSTANDER", 0)) {
        T_CHECK(symrail_endpoint_accept(T_WAIT_MS, &pc));
        size_t clen = get_file("c.seg", cdesc, sizeof(cdesc));
        rc = import_seg(cdesc, clen, pc);
    }

    /* Round 1. */
    int p1;
    T_CHECK(symrail_endpoint_accept(T_WAIT_MS, &p1));
    T_ASSERT(p1 >= symrail_n_pes(), "connected peer numbered %d", p1);
    size_t b1len = get_file("b1.seg", b1, sizeof(b1));
    symrail_rseg_t rb1 = import_seg(b1, b1len, p1);
    exchange_exporter(p1, rb1, pool, 1);
    printf("exporter: round 1 with peer %d done\n", p1);
    fflush(stdout);

    /* The connector is killed: what goes to it fails, the job goes on. */
    char junk[8];
    get_file("killed", junk, sizeof(junk));
    double dt = expect_gone(p1, rb1);
    T_CHECK(symrail_barrier_all());
    printf("exporter: PEER_GONE after %.2f s; barrier of this job fine\n", dt);
    fflush(stdout);
    if (pc >= 0) {
        T_CHECK(send_blocks(rc, pc, 2, 0, 3));
        wait_tag(pc, 1);
        pool_verify(pool, 1, 3);
        T_CHECK(symrail_notify_send(pc, 3, NULL, 0));
        T_CHECK(symrail_rseg_release(rc));
        printf("exporter: the bystander (peer %d) exchanged after the other one died\n", pc);
        fflush(stdout);
        put_file("c.done", "1", 1);
    }
    T_CHECK(symrail_rseg_release(rb1));

    /* Round 2: the restarted connector. */
    int p2;
    T_CHECK(symrail_endpoint_accept(T_WAIT_MS, &p2));
    T_ASSERT(p2 != p1 && p2 >= symrail_n_pes(), "restarted peer numbered %d (was %d)", p2, p1);
    symrail_rseg_t old;
    T_EXPECT(symrail_seg_import(b1, b1len, &old), SYMRAIL_ERR_STALE);
    size_t b2len = get_file("b2.seg", b2, sizeof(b2));
    symrail_rseg_t rb2 = import_seg(b2, b2len, p2);
    exchange_exporter(p2, rb2, pool, 2);
    /* A segment that it deregisters while we hold its descriptor: refused
     * (STALE), as within a job, on whatever transport reaches it. */
    char xd[SYMRAIL_SEG_DESC_MAX];
    size_t xlen = get_file("b2x.seg", xd, sizeof(xd));
    symrail_rseg_t rx = import_seg(xd, xlen, p2);
    static unsigned char xb[BLK];
    fill_block(xb, 0, 77, 0);
    T_CHECK(write_one(rx, xb, BLK));
    put_file("a.x1", "1", 1);
    get_file("b.x2", junk, sizeof(junk));
    T_EXPECT(write_one(rx, xb, BLK), SYMRAIL_ERR_STALE);
    T_CHECK(symrail_rseg_release(rx));
    /* Shared memory refuses it at import (the owner's generation table is
     * there to read); TCP at the first transfer (checked at the target). */
    symrail_status_t xst = symrail_seg_import(xd, xlen, &rx);
    if (xst == SYMRAIL_OK) {
        xst = write_one(rx, xb, BLK);
        T_CHECK(symrail_rseg_release(rx));
    }
    T_ASSERT(xst == SYMRAIL_ERR_STALE, "a deregistered segment's descriptor again: %s",
             symrail_strerror(xst));
    put_file("a.x3", "1", 1);
    /* It disconnects after the exchange, and stays with its pool registered
     * until we have seen it gone. */
    expect_gone(p2, rb2);
    put_file("a.gone2", "1", 1);
    T_CHECK(symrail_endpoint_disconnect(p2));
    T_EXPECT(symrail_endpoint_disconnect(p2), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_rseg_release(rb2));
    T_CHECK(symrail_barrier_all());
    pool_free(seg, pool);
    verbs_report("exporter");
    printf("ok: jobs: exporter\n");
}

static void bad_blobs(const char *ep, size_t elen, int peer)
{
    char bad[SYMRAIL_ENDPOINT_MAX], mine[SYMRAIL_ENDPOINT_MAX];
    size_t mlen = sizeof(mine);
    int p;
    T_EXPECT(symrail_endpoint_connect(ep, elen - 1, &p), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_endpoint_connect(ep, 10, &p), SYMRAIL_ERR_INVALID);
    memcpy(bad, ep, elen);
    bad[0] ^= 0x55;
    T_EXPECT(symrail_endpoint_connect(bad, elen, &p), SYMRAIL_ERR_INVALID);
    memcpy(bad, ep, elen);
    bad[4] ^= 0x7;  /* version */
    T_EXPECT(symrail_endpoint_connect(bad, elen, &p), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_endpoint_export(mine, &mlen));
    T_EXPECT(symrail_endpoint_connect(mine, mlen, &p), SYMRAIL_ERR_INVALID);
    /* Connecting again to a connected process gives its number. */
    T_CHECK(symrail_endpoint_connect(ep, elen, &p));
    T_ASSERT(p == peer, "connect again gave %d, not %d", p, peer);
    /* Not a connected peer: refused by the calls that take one. */
    T_EXPECT(symrail_notify_send(symrail_n_pes() + 40, 1, NULL, 0), SYMRAIL_ERR_INVALID);
}

static void connector(unsigned r)
{
    char desc[SYMRAIL_SEG_DESC_MAX], ep[SYMRAIL_ENDPOINT_MAX], adesc[SYMRAIL_SEG_DESC_MAX];
    size_t dlen;
    symrail_seg_t seg;
    T_ASSERT(symrail_n_pes() == 1, "a connector is a job of one PE");
    unsigned char *pool = pool_make(&seg, desc, &dlen);
    size_t elen = get_file("a.ep", ep, sizeof(ep));
    int a;
    double t0 = t_now();
    T_CHECK(symrail_endpoint_connect(ep, elen, &a));
    printf("connector %u: connect took %.1f ms\n", r, (t_now() - t0) * 1e3);
    dlen = sizeof(desc);
    T_CHECK(symrail_seg_export(seg, desc, &dlen));
    put_file(r == 1 ? "b1.seg" : r == 2 ? "b2.seg" : "c.seg", desc, dlen);
    size_t alen = get_file("a.seg", adesc, sizeof(adesc));
    symrail_rseg_t ra = import_seg(adesc, alen, a);
    if (r == 3) {
        /* Waits through the other connector's death. */
        symrail_notify_t m;
        T_CHECK(symrail_notify_wait(4 * T_WAIT_MS, &m));
        T_ASSERT(m.src_pe == a && m.tag == 2 && m.status == SYMRAIL_OK, "bystander got tag %u",
                 m.tag);
        pool_verify(pool, 0, 3);
        T_CHECK(send_blocks(ra, a, 1, 1, 3));
        wait_tag(a, 3);
        T_CHECK(symrail_rseg_release(ra));
        pool_free(seg, pool);
        printf("ok: jobs: bystander\n");
        return;
    }
    T_ASSERT(a == symrail_n_pes(), "the first connected peer is numbered %d", a);
    if (r == 2)
        bad_blobs(ep, elen, a);
    T_CHECK(send_blocks(ra, a, 1, 1, r));
    wait_tag(a, 2);
    pool_verify(pool, 0, r);
    T_CHECK(symrail_notify_send(a, 3, NULL, 0));
    printf("connector %u: exchange done\n", r);
    fflush(stdout);
    if (r == 1) {
        char pid[32];
        int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
        put_file("b1.ok", pid, (size_t)n);
        for (;;)
            pause();  /* until killed */
    }
    /* A second segment, which the exporter imports and writes, and which
     * goes while it holds the descriptor. */
    symrail_seg_t xs;
    char xd[SYMRAIL_SEG_DESC_MAX];
    size_t xlen;
    unsigned char *xpool = pool_make(&xs, xd, &xlen);
    put_file("b2x.seg", xd, xlen);
    char junk[8];
    get_file("a.x1", junk, sizeof(junk));
    unsigned char want[BLK];
    fill_block(want, 0, 77, 0);
    T_ASSERT(memcmp(xpool, want, BLK) == 0, "the exporter's write into the second segment differs");
    pool_free(xs, xpool);
    put_file("b.x2", "1", 1);
    get_file("a.x3", junk, sizeof(junk));
    /* A descriptor of a process this one never connected to. */
    char b1[SYMRAIL_SEG_DESC_MAX];
    size_t b1len = get_file("b1.seg", b1, sizeof(b1));
    symrail_rseg_t other;
    T_EXPECT(symrail_seg_import(b1, b1len, &other), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_endpoint_disconnect(a));
    T_EXPECT(symrail_notify_send(a, 4, NULL, 0), SYMRAIL_ERR_PEER_GONE);
    T_EXPECT(send_blocks(ra, a, 4, 1, 4), SYMRAIL_ERR_PEER_GONE);
    T_CHECK(symrail_rseg_release(ra));
    T_EXPECT(symrail_endpoint_disconnect(a), SYMRAIL_ERR_INVALID);
    get_file("a.gone2", junk, sizeof(junk));
    pool_free(seg, pool);
    verbs_report("connector");
    printf("ok: jobs: connector %u\n", r);
}

/* A notification of `tag` from `from` with a segment's descriptor. */
static size_t recv_desc(int from, uint32_t tag, char *desc)
{
    symrail_notify_t m;
    T_CHECK(symrail_notify_wait_tag(tag, T_WAIT_MS, &m));
    T_ASSERT(m.src_pe == from && m.status == SYMRAIL_OK && m.len <= SYMRAIL_SEG_DESC_MAX,
             "descriptor from %d (%zu bytes, status %d)", m.src_pe, m.len, (int)m.status);
    memcpy(desc, m.payload, m.len);
    return m.len;
}

/* Reads the NSEND blocks that `writer` wrote in round r back from rseg. */
static void read_back(symrail_rseg_t rseg, int writer, unsigned r)
{
    static unsigned char got[NSEND * BLK], want[BLK];
    uint32_t lidx[NSEND], ridx[NSEND];
    for (unsigned i = 0; i < NSEND; i++)
        lidx[i] = i, ridx[i] = dst_block(i);
    symrail_batch_t b;
    T_CHECK(symrail_batch_create(NSEND, &b));
    T_CHECK(symrail_batch_add_blocks(b, SYMRAIL_READ, got, lidx, rseg, 0, ridx, NSEND, BLK,
                                     NULL, NULL));
    T_CHECK(symrail_batch_submit(b));
    T_CHECK(symrail_batch_wait(b, T_WAIT_MS));
    T_CHECK(symrail_batch_free(b));
    for (unsigned i = 0; i < NSEND; i++) {
        fill_block(want, writer, r, ridx[i]);
        T_ASSERT(memcmp(got + (size_t)i * BLK, want, BLK) == 0, "block %u read back differs",
                 ridx[i]);
    }
}

static void stale_owner(void)
{
    char ep[SYMRAIL_ENDPOINT_MAX], desc[SYMRAIL_SEG_DESC_MAX], wdesc[SYMRAIL_SEG_DESC_MAX];
    size_t elen = sizeof(ep), dlen;
    unsigned n = (unsigned)t_env("T_JOBS_STALE", 8);
    T_CHECK(symrail_endpoint_export(ep, &elen));
    put_file("o.ep", ep, elen);
    int w;
    T_CHECK(symrail_endpoint_accept(T_WAIT_MS, &w));
    symrail_seg_t seg;
    unsigned char *pool;
    for (unsigned k = 0; k < n; k++) {
        pool = pool_make(&seg, desc, &dlen);
        T_CHECK(symrail_notify_send(w, 10, desc, dlen));
        wait_tag(w, 11);
        pool_verify(pool, 1, k);
        pool_free(seg, pool);
        T_CHECK(symrail_notify_send(w, 12, NULL, 0));
        wait_tag(w, 13);  /* refused */
    }
    pool = pool_make(&seg, desc, &dlen);
    T_CHECK(symrail_notify_send(w, 20, desc, dlen));
    size_t wlen = recv_desc(w, 21, wdesc);
    symrail_rseg_t rw = import_seg(wdesc, wlen, w);
    wait_tag(w, 22);
    pool_verify(pool, 1, 100);
    T_CHECK(send_blocks(rw, w, 23, 0, 100));
    read_back(rw, 0, 100);
    wait_tag(w, 24);
    T_CHECK(symrail_rseg_release(rw));
    pool_free(seg, pool);
    verbs_report("owner");
    printf("ok: jobs: owner of %u segments that went while their writer held them\n", n);
}

static void stale_writer(void)
{
    char ep[SYMRAIL_ENDPOINT_MAX], desc[SYMRAIL_SEG_DESC_MAX], mine[SYMRAIL_SEG_DESC_MAX];
    unsigned n = (unsigned)t_env("T_JOBS_STALE", 8);
    size_t elen = get_file("o.ep", ep, sizeof(ep)), mlen;
    int o;
    T_CHECK(symrail_endpoint_connect(ep, elen, &o));
    /* Four slices at 16 KiB: the stale write is on several lanes at once. */
    static unsigned char src[4 * BLK];
    t_fill(src, sizeof(src), 1, 5);
    for (unsigned k = 0; k < n; k++) {
        size_t dlen = recv_desc(o, 10, desc);
        symrail_rseg_t rs = import_seg(desc, dlen, o);
        symrail_status_t st = send_blocks(rs, o, 11, 1, k);
        T_ASSERT(st == SYMRAIL_OK, "round %u: blocks to a live segment after %u stale accesses: "
                 "%s", k, k, symrail_strerror(st));
        wait_tag(o, 12);  /* it is gone now */
        T_EXPECT(write_one(rs, src, sizeof(src)), SYMRAIL_ERR_STALE);
        T_CHECK(symrail_rseg_release(rs));
        T_CHECK(symrail_notify_send(o, 13, NULL, 0));
    }
    size_t dlen = recv_desc(o, 20, desc);
    symrail_rseg_t ro = import_seg(desc, dlen, o);
    symrail_seg_t seg;
    unsigned char *pool = pool_make(&seg, mine, &mlen);
    T_CHECK(symrail_notify_send(o, 21, mine, mlen));
    T_CHECK(send_blocks(ro, o, 22, 1, 100));
    wait_tag(o, 23);
    pool_verify(pool, 0, 100);
    read_back(ro, 1, 100);
    /* Every lane a stale access broke comes back (each one broke one at
     * least): repairs finish from progress, a moment after the last, and need the
     * owner there: it leaves when it has tag 24. */
    symrail_stats_t s;
    double t0 = t_now();
    for (;;) {
        T_CHECK(symrail_quiet());
        T_CHECK(symrail_stats(&s));
        if (!t_env("T_JOBS_EXPECT_REPAIRS", 0) || s.repairs >= n || t_now() - t0 > 10)
            break;
        usleep(10000);
    }
    printf("writer: %u stale accesses refused, %llu lanes repaired\n", n,
           (unsigned long long)s.repairs);
    if (t_env("T_JOBS_EXPECT_REPAIRS", 0))
        T_ASSERT(s.repairs >= n, "%llu lane repairs after %u stale accesses",
                 (unsigned long long)s.repairs, n);
    T_CHECK(symrail_notify_send(o, 24, NULL, 0));
    T_CHECK(symrail_rseg_release(ro));
    pool_free(seg, pool);
    verbs_report("writer");
    printf("ok: jobs: writer through %u segments that went, and after them\n", n);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: t_jobs exporter DIR | connector DIR ROUND | owner DIR | "
                "writer DIR\n");
        return 2;
    }
    snprintf(dir, sizeof(dir), "%s", argv[2]);
    T_CHECK(symrail_init_status());
    if (strcmp(argv[1], "exporter") == 0)
        exporter();
    else if (strcmp(argv[1], "owner") == 0)
        stale_owner();
    else if (strcmp(argv[1], "writer") == 0)
        stale_writer();
    else
        connector(argc > 3 ? (unsigned)atoi(argv[3]) : 1);
    fflush(stdout);
    T_CHECK(symrail_finalize_status());
    return 0;
}
