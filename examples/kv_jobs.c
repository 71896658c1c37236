/*
 * Prefill and decode as two separate jobs, as they are deployed: the decode
 * job listens, the prefill job connects, through endpoint files in a
 * directory both can read.
 *
 *   symrun -n 2 ./kv_transfer --listen DIR --prefill 2 ...   (decode job)
 *   symrun -n 2 ./kv_transfer --connect DIR ...              (prefill job)
 *
 * Every decode PE d writes its endpoint to DIR/decode.<d>.ep and accepts
 * the prefill PEs it serves (p % D == d); PE 0 writes D to DIR/decode.n.
 * Prefill PE p connects to DIR/decode.<p % D>.ep.  From then on the
 * protocol is that of one job, except that a pool's descriptor goes by
 * notification (TAG_DESC, with the configuration, which both jobs must be
 * given alike) instead of through the symmetric heap.  Both jobs must run
 * on one host for the latency (the monotonic clock of the host).
 */
#include "kv_transfer.h"

#include <errno.h>
#include <unistd.h>

#define KV_WAIT_MS 60000

/* Written under a temporary name and renamed: a reader sees all or none. */
static int put_file(const char *path, const void *buf, size_t len)
{
    char tmp[1200];
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path)) {
        fprintf(stderr, "kv_transfer: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* Waits up to KV_WAIT_MS for `path`; its length, or 0. */
static size_t get_file(const char *path, void *buf, size_t cap)
{
    for (int i = 0; i < KV_WAIT_MS / 20; i++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t n = fread(buf, 1, cap, f);
            fclose(f);
            return n;
        }
        usleep(20000);
    }
    fprintf(stderr, "kv_transfer: %s did not appear in %d s (is the decode job started "
            "with --listen on the same directory?)\n", path, KV_WAIT_MS / 1000);
    return 0;
}

static int listen_side(job_t *j, const char *dir)
{
    char path[1100], ep[SYMRAIL_ENDPOINT_MAX];
    size_t len = sizeof(ep);
    CHECK(symrail_endpoint_export(ep, &len));
    snprintf(path, sizeof(path), "%s/decode.%d.ep", dir, j->me);
    if (put_file(path, ep, len))
        return 1;
    if (j->me == 0) {
        snprintf(path, sizeof(path), "%s/decode.n", dir);
        char n[32];
        int k = snprintf(n, sizeof(n), "%d\n", j->npes);
        if (put_file(path, n, (size_t)k))
            return 1;
    }
    /* The prefill PEs p with p % D == me. */
    for (int p = j->me; p < j->nprefill; p += j->npes) {
        if (j->npeers == KV_MAX_PEERS) {
            fprintf(stderr, "kv_transfer: more than %d prefill PEs for one decode PE\n",
                    KV_MAX_PEERS);
            return 1;
        }
        symrail_status_t st = symrail_endpoint_accept(KV_WAIT_MS, &j->peers[j->npeers]);
        if (st != SYMRAIL_OK) {
            fprintf(stderr, "kv_transfer: decode PE %d: no prefill PE connected in %d s "
                    "(%s; start the other job with --connect %s)\n", j->me,
                    KV_WAIT_MS / 1000, symrail_strerror(st), dir);
            return 1;
        }
        j->npeers++;
    }
    return 0;
}

static int connect_side(job_t *j, const char *dir)
{
    char path[1100], buf[SYMRAIL_ENDPOINT_MAX];
    snprintf(path, sizeof(path), "%s/decode.n", dir);
    size_t n = get_file(path, buf, sizeof(buf) - 1);
    if (n == 0)
        return 1;
    buf[n] = '\0';
    j->ndecode = atoi(buf);
    if (j->ndecode < 1)
        return fprintf(stderr, "kv_transfer: %s says %s\n", path, buf), 1;
    snprintf(path, sizeof(path), "%s/decode.%d.ep", dir, j->me % j->ndecode);
    if ((n = get_file(path, buf, sizeof(buf))) == 0)
        return 1;
    symrail_status_t st = symrail_endpoint_connect(buf, n, &j->peers[0]);
    if (st != SYMRAIL_OK) {
        fprintf(stderr, "kv_transfer: prefill PE %d: connecting to %s: %s\n", j->me, path,
                symrail_strerror(st));
        return 1;
    }
    j->npeers = 1;
    return 0;
}

int kv_jobs_setup(job_t *j)
{
    const kv_opts_t *o = j->o;
    if (o->listen && o->connect) {
        if (j->me == 0)
            fprintf(stderr, "kv_transfer: --listen or --connect, not both\n");
        return 1;
    }
    j->two_jobs = 1;
    if (o->listen) {
        /* --prefill: the PEs of the other job (default: as many as here). */
        j->nprefill = o->prefill > 0 ? o->prefill : j->npes;
        j->ndecode = j->npes;
        j->is_decode = 1;
    } else {
        j->nprefill = j->npes;
        j->is_prefill = 1;
    }
    int rc = o->listen ? listen_side(j, o->listen) : connect_side(j, o->connect);
    /* The job goes on only if every PE is connected. */
    uint64_t *all = symrail_malloc(sizeof(uint64_t));
    if (all == NULL)
        kv_die("symrail_malloc", SYMRAIL_ERR_NOMEM);
    *all = 0;
    CHECK(symrail_barrier_all());
    if (rc)
        CHECK(symrail_atomic_add(all, 1, 0));
    CHECK(symrail_barrier_all());
    uint64_t v = 0;
    CHECK(symrail_atomic_fetch(all, 0, &v));
    CHECK(symrail_barrier_all());
    symrail_free(all);
    return v != 0;
}

void kv_jobs_send_desc(const job_t *j, const conf_t *c, symrail_seg_t seg)
{
    desc_msg_t m = { .bb = c->bb, .bpr = c->bpr, .blocks = c->blocks,
                     .layers = j->o->layers, .requests = j->o->requests,
                     .desc_len = sizeof(m.desc) };
    size_t len = sizeof(m.desc);
    CHECK(symrail_seg_export(seg, m.desc, &len));
    m.desc_len = len;
    for (int k = 0; k < j->npeers; k++)
        CHECK(symrail_notify_send(j->peers[k], TAG_DESC, &m,
                                  offsetof(desc_msg_t, desc) + len));
}

symrail_rseg_t kv_jobs_recv_desc(const job_t *j, const conf_t *c)
{
    static symrail_notify_t msg;
    CHECK(symrail_notify_wait_tag(TAG_DESC, KV_WAIT_MS, &msg));
    desc_msg_t m;
    memcpy(&m, msg.payload, msg.len < sizeof(m) ? msg.len : sizeof(m));
    if (m.bb != c->bb || m.bpr != c->bpr || m.blocks != c->blocks ||
        m.layers != j->o->layers || m.requests != j->o->requests) {
        char why[256];
        snprintf(why, sizeof(why), "the decode job runs %llu-byte blocks, %u a request, pools "
                 "of %u, %u layers, %u requests; start both jobs with the same options",
                 (unsigned long long)m.bb, m.bpr, m.blocks, m.layers, m.requests);
        kv_die(why, SYMRAIL_ERR_MISMATCH);
    }
    symrail_rseg_t r;
    CHECK(symrail_seg_import(m.desc, m.desc_len, &r));
    return r;
}
