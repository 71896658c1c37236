/*
 * Team collectives over the core's puts and signals.  A message into a
 * peer's dest or scratch waits for the peer's "ready" (it has entered the
 * collective, or freed that half of its scratch), so nothing is overwritten
 * before it is read however far a PE runs ahead.  Over shared memory every
 * put, signal and ready is a store.
 */
#include "config.h"
#include "core/coll.h"
#include "util/log.h"
#include "util/sys.h"

#include <stdlib.h>
#include <string.h>

int sr_coll_sym(const char *fn, const char *arg, const void *p, size_t len, uint64_t *off_p)
{
    *off_p = sr_sym_off(fn, arg, p, len);
    return *off_p != SR_OFF_BAD;
}

symrail_status_t sr_cop_begin(const char *fn, sr_team_t *team, sr_cop_t *cop)
{
    if (!sr_team_valid(team)) {
        sr_error("%s: team %p is not a valid team", fn, (void *)team);
        return SYMRAIL_ERR_INVALID;
    }
    if (team->my_pe < 0) {
        sr_error("%s: PE %d is not a member of team %p", fn, sr_rt.my_pe, (void *)team);
        return SYMRAIL_ERR_INVALID;
    }
    symrail_status_t st = sr_peers_members_ok(fn, team->world, 0, 0, team->size);
    if (st != SYMRAIL_OK)
        return st;
    cop->t = team;
    cop->p = team->priv;
    cop->ctx = sr_team_ctx(team);
    if (cop->ctx == NULL)
        return SYMRAIL_ERR_NOMEM;
    cop->fn = fn;
    cop->n = team->size;
    cop->me = team->my_pe;
    cop->e = ++team->priv->epoch;
    cop->what = cop->size = 0;
    return SYMRAIL_OK;
}

symrail_status_t sr_cop_end(sr_cop_t *cop, symrail_status_t st)
{
    symrail_status_t qst = sr_quiet(cop->ctx);
    return st != SYMRAIL_OK ? st : qst;
}

typedef struct {
    const uint64_t *word;
    uint64_t        want;
} sr_gewait_t;

static int sr_ge_ready(void *arg)
{
    sr_gewait_t *w = arg;
    return __atomic_load_n(w->word, __ATOMIC_ACQUIRE) >= w->want;
}

/* A word of ours that member m writes. */
static symrail_status_t sr_wait_ge(sr_cop_t *cop, int m, uint64_t off, uint64_t want)
{
    sr_gewait_t w = { (const uint64_t *)(const void *)(sr_rt.heap_base + off), want };
    if (sr_ge_ready(&w))
        return SYMRAIL_OK;
    return sr_cop_wait(cop, m, sr_ge_ready, &w);
}

symrail_status_t sr_cm_ready(sr_cop_t *cop, int m, uint64_t k)
{
    return sr_amo_set_own(cop->ctx, sr_team_ready_off(cop->t, cop->me), sr_seq(cop, k),
                          cop->t->world[m]);
}

symrail_status_t sr_cm_send(sr_cop_t *cop, int m, uint64_t rk, uint64_t k, const void *src,
                            uint64_t roff, size_t len)
{
    symrail_status_t st = sr_wait_ge(cop, m, sr_team_ready_off(cop->t, m), sr_seq(cop, rk));
    /* Before data goes into m's buffers: m's call must be ours. */
    if (st == SYMRAIL_OK && len)
        st = sr_cop_check(cop, m, sr_cop_check_remote);
    if (st != SYMRAIL_OK)
        return st;
    uint64_t sig = sr_team_sig_off(cop->t, cop->me);
    int pe = cop->t->world[m];
    if (len == 0)
        return sr_amo_set_own(cop->ctx, sig, sr_seq(cop, k), pe);
    return sr_put_signal(cop->ctx, src, roff, len, sig, SR_TL_AMO_SET, sr_seq(cop, k), pe);
}

symrail_status_t sr_cm_wait(sr_cop_t *cop, int m, uint64_t k)
{
    return sr_wait_ge(cop, m, sr_team_sig_off(cop->t, m), sr_seq(cop, k));
}

/* Two halves of the scratch, chunk c in half c & 1: the receiver frees a
 * half (ready kbase + c + 2) once it consumed chunk c. */
symrail_status_t sr_cm_pipe(sr_cop_t *cop, int to, int from, uint64_t kbase, const void *src,
                            size_t len, sr_consume_fn_t consume, void *arg)
{
    size_t half = sr_team_scratch_size() / 2;
    size_t chunks = len ? (len + half - 1) / half : 0;
    uint64_t soff = sr_team_scratch_off(cop->t);
    const char *scratch = sr_rt.heap_base + soff;
    symrail_status_t st = SYMRAIL_OK;
    if (chunks >= (UINT64_C(1) << SR_K_ROUND_SHIFT) - 2) {
        sr_error("%s: %zu bytes are more than one collective step carries", cop->fn, len);
        return SYMRAIL_ERR_INVALID;
    }
    if (from >= 0 && chunks)
        st = sr_cm_ready(cop, from, kbase + 1);
    for (size_t c = 0; c < chunks && st == SYMRAIL_OK; c++) {
        size_t at = c * half, n = len - at < half ? len - at : half;
        if (to >= 0) {
            st = sr_cm_send(cop, to, kbase + c, kbase + c, (const char *)src + at,
                            soff + (c & 1) * half, n);
            if (st != SYMRAIL_OK)
                break;
        }
        if (from >= 0) {
            st = sr_cm_wait(cop, from, kbase + c);
            if (st != SYMRAIL_OK)
                break;
            consume(arg, at, scratch + (c & 1) * half, n);
            if (c + 2 < chunks)
                st = sr_cm_ready(cop, from, kbase + c + 2);
        }
    }
    return st;
}

static symrail_status_t sr_sync_run(sr_cop_t *cop)
{
    /* Dissemination: round r signals member me + 2^r, waits for me - 2^r. */
    symrail_status_t st = SYMRAIL_OK;
    for (int r = 0; (1 << r) < cop->n && st == SYMRAIL_OK; r++) {
        int to = (cop->me + (1 << r)) % cop->n, from = (cop->me - (1 << r) + cop->n) % cop->n;
        st = sr_amo_set_own(cop->ctx, sr_team_sig_off(cop->t, cop->me), sr_seq(cop, (uint64_t)r + 1),
                            cop->t->world[to]);
        if (st == SYMRAIL_OK)
            st = sr_cm_wait(cop, from, (uint64_t)r + 1);
    }
    return st;
}

symrail_status_t sr_coll_sync(const char *fn, sr_team_t *team)
{
    sr_cop_t cop;
    symrail_status_t st = sr_cop_begin(fn, team, &cop);
    if (st != SYMRAIL_OK)
        return st;
    sr_cop_call(&cop, SR_CALL_SYNC, 0, -1);
    /* A sync, not a barrier: the caller's puts are not completed (shmem_barrier quiets). */
    return sr_cop_end(&cop, sr_sync_run(&cop));
}

/* Chunks of a pipelined broadcast: a member forwards chunk c as soon as it has it. */
#define SR_BCAST_CHUNK (256u * 1024u)

symrail_status_t sr_coll_bcast(const char *fn, sr_team_t *team, void *dest, const void *src,
                               size_t nbytes, int root)
{
    sr_cop_t cop;
    uint64_t doff, soff;
    symrail_status_t st = sr_cop_begin(fn, team, &cop);
    if (st != SYMRAIL_OK)
        return st;
    if (root < 0 || root >= cop.n) {
        sr_error("%s: PE_root %d is not a member of the team (0..%d)", fn, root, cop.n - 1);
        return SYMRAIL_ERR_INVALID;
    }
    if (!sr_coll_sym(fn, "dest", dest, nbytes, &doff) ||
        !sr_coll_sym(fn, "source", src, nbytes, &soff))
        return SYMRAIL_ERR_INVALID;
    sr_cop_call(&cop, SR_CALL_BCAST, nbytes, root);
    int n = cop.n, v = (cop.me - root + n) % n, mask = 1;
    /* Binomial tree on ranks relative to the root. */
    while (mask < n && !(v & mask))
        mask <<= 1;
    int parent = v ? ((v - mask) + root) % n : -1;
    size_t chunks = nbytes ? (nbytes + SR_BCAST_CHUNK - 1) / SR_BCAST_CHUNK : 0;
    const char *from = v ? (const char *)dest : (const char *)src;
    if (v == 0 && dest != src && nbytes)
        memmove(dest, src, nbytes);
    if (parent >= 0 && nbytes)
        st = sr_cm_ready(&cop, parent, SR_K_ENTER);
    for (size_t c = 0; c < chunks && st == SYMRAIL_OK; c++) {
        size_t at = c * SR_BCAST_CHUNK, len = nbytes - at < SR_BCAST_CHUNK ? nbytes - at
                                                                             : SR_BCAST_CHUNK;
        if (parent >= 0)
            st = sr_cm_wait(&cop, parent, SR_K_ENTER + c);
        for (int m = (v ? mask : (1 << 30)) >> 1; m > 0 && st == SYMRAIL_OK; m >>= 1) {
            if (v + m >= n)
                continue;
            st = sr_cm_send(&cop, (v + m + root) % n, SR_K_ENTER, SR_K_ENTER + c, from + at,
                            doff + at, len);
        }
    }
    return sr_cop_end(&cop, st);
}

/* Blocks of sizes[i] at offs[i] of every member's dest: every member sends
 * its own to all (shared memory, or few members) or around a ring. */
static symrail_status_t sr_gather_all(sr_cop_t *cop, char *dest, uint64_t doff, const void *src,
                                      const size_t *sizes, const size_t *offs)
{
    int n = cop->n, me = cop->me;
    symrail_status_t st = SYMRAIL_OK;
    if (sizes[me] && dest + offs[me] != (const char *)src)
        memmove(dest + offs[me], src, sizes[me]);
    for (int i = 1; i < n && st == SYMRAIL_OK; i++)
        st = sr_cm_ready(cop, (me - i + n) % n, SR_K_ENTER);
    if (cop->p->all_local || n <= 4) {
        for (int i = 1; i < n && st == SYMRAIL_OK; i++) {
            int to = (me + i) % n;
            st = sr_cm_send(cop, to, SR_K_ENTER, SR_K_ENTER + 1, dest + offs[me],
                            doff + offs[me], sizes[me]);
        }
        for (int i = 1; i < n && st == SYMRAIL_OK; i++)
            st = sr_cm_wait(cop, (me - i + n) % n, SR_K_ENTER + 1);
        return st;
    }
    /* Ring: step s forwards the block of member me - s + 1 to me + 1. */
    int next = (me + 1) % n, prev = (me - 1 + n) % n;
    for (int s = 1; s < n && st == SYMRAIL_OK; s++) {
        int b = (me - s + 1 + n) % n;
        st = sr_cm_send(cop, next, SR_K_ENTER, SR_K_ENTER + (uint64_t)s, dest + offs[b],
                        doff + offs[b], sizes[b]);
        if (st == SYMRAIL_OK)
            st = sr_cm_wait(cop, prev, SR_K_ENTER + (uint64_t)s);
    }
    return st;
}

/* sr_cop_begin for a collective whose dest holds nbytes of every member, and
 * whose source nbytes (src_all: nbytes for every member); on failure the call
 * has ended. */
static symrail_status_t sr_cop_begin_all(const char *fn, sr_team_t *team, void *dest,
                                         const void *src, size_t nbytes, int src_all,
                                         sr_cop_t *cop, uint64_t *doff_p)
{
    uint64_t soff;
    symrail_status_t st = sr_cop_begin(fn, team, cop);
    if (st != SYMRAIL_OK)
        return st;
    size_t n = (size_t)cop->n;
    if (nbytes > SIZE_MAX / n) {
        sr_error("%s: %zu bytes for each of %zu members overflow dest", fn, nbytes, n);
        st = SYMRAIL_ERR_INVALID;
    } else if (!sr_coll_sym(fn, "dest", dest, nbytes * n, doff_p) ||
               !sr_coll_sym(fn, "source", src, src_all ? nbytes * n : nbytes, &soff)) {
        st = SYMRAIL_ERR_INVALID;
    }
    return st == SYMRAIL_OK ? st : sr_cop_end(cop, st);
}

symrail_status_t sr_coll_fcollect(const char *fn, sr_team_t *team, void *dest, const void *src,
                                  size_t nbytes)
{
    sr_cop_t cop;
    uint64_t doff;
    symrail_status_t st = sr_cop_begin_all(fn, team, dest, src, nbytes, 0, &cop, &doff);
    if (st != SYMRAIL_OK)
        return st;
    sr_cop_call(&cop, SR_CALL_FCOLLECT, nbytes, -1);
    size_t *sz = malloc(2 * (size_t)cop.n * sizeof(size_t));
    if (sz == NULL)
        return sr_cop_end(&cop, SYMRAIL_ERR_NOMEM);
    for (int i = 0; i < cop.n; i++) {
        sz[i] = nbytes;
        sz[cop.n + i] = (size_t)i * nbytes;
    }
    st = sr_gather_all(&cop, dest, doff, src, sz, sz + cop.n);
    free(sz);
    return sr_cop_end(&cop, st);
}

static void sr_sum_u64(void *arg, void *inout, const void *in, size_t nbytes)
{
    uint64_t *a = inout;
    const uint64_t *b = in;
    for (size_t i = 0; i < nbytes / 8; i++)
        a[i] += b[i];
}

symrail_status_t sr_coll_collect(const char *fn, sr_team_t *team, void *dest, const void *src,
                                 size_t nbytes)
{
    sr_cop_t cop;
    uint64_t doff, soff;
    symrail_status_t st = sr_cop_begin(fn, team, &cop);
    if (st != SYMRAIL_OK)
        return st;
    if (!sr_coll_sym(fn, "source", src, nbytes, &soff))
        return sr_cop_end(&cop, SYMRAIL_ERR_INVALID);
    sr_cop_call(&cop, SR_CALL_COLLECT, 0, -1);  /* sizes may differ */
    int n = cop.n;
    uint64_t *all = calloc((size_t)n, 8);
    size_t *sz = malloc(2 * (size_t)n * sizeof(size_t));
    if (all == NULL || sz == NULL) {
        free(all);
        free(sz);
        return sr_cop_end(&cop, SYMRAIL_ERR_NOMEM);
    }
    /* Every member's size, by a sum of vectors with one non-zero entry. */
    all[cop.me] = nbytes;
    st = sr_coll_allreduce_fn(&cop, all, (size_t)n * 8, 8, sr_sum_u64, NULL);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        sz[i] = all[i];
        sz[n + i] = total;
        total += all[i];
    }
    if (st == SYMRAIL_OK && !sr_coll_sym(fn, "dest", dest, total, &doff))
        st = SYMRAIL_ERR_INVALID;
    if (st == SYMRAIL_OK) {
        /* A new epoch: the size exchange used our scratch and ready words. */
        cop.e = ++cop.p->epoch;
        sr_cop_call(&cop, SR_CALL_COLLECT, 0, -1);
        st = sr_gather_all(&cop, dest, doff, src, sz, sz + n);
    }
    free(all);
    free(sz);
    return sr_cop_end(&cop, st);
}

static void sr_copy_sink(void *arg, size_t off, const void *d, size_t len)
{
    memcpy(*(char **)arg + off, d, len);
}

static symrail_status_t sr_a2a_run(sr_cop_t *cop, char *dest, uint64_t doff, const char *src,
                                   size_t nbytes)
{
    int n = cop->n, me = cop->me;
    symrail_status_t st = SYMRAIL_OK;
    if (nbytes && dest + (size_t)me * nbytes != src + (size_t)me * nbytes)
        memmove(dest + (size_t)me * nbytes, src + (size_t)me * nbytes, nbytes);
    for (int i = 1; i < n && st == SYMRAIL_OK; i++)
        st = sr_cm_ready(cop, (me - i + n) % n, SR_K_ENTER);
    /* Pairwise: step i sends to me + i and hears from me - i. */
    for (int i = 1; i < n && st == SYMRAIL_OK; i++) {
        int to = (me + i) % n;
        st = sr_cm_send(cop, to, SR_K_ENTER, SR_K_ENTER + 1, src + (size_t)to * nbytes,
                        doff + (size_t)me * nbytes, nbytes);
    }
    for (int i = 1; i < n && st == SYMRAIL_OK; i++)
        st = sr_cm_wait(cop, (me - i + n) % n, SR_K_ENTER + 1);
    return st;
}

symrail_status_t sr_coll_alltoall(const char *fn, sr_team_t *team, void *dest, const void *src,
                                  size_t nbytes)
{
    sr_cop_t cop;
    uint64_t doff;
    symrail_status_t st = sr_cop_begin_all(fn, team, dest, src, nbytes, 1, &cop, &doff);
    if (st != SYMRAIL_OK)
        return st;
    sr_cop_call(&cop, SR_CALL_ALLTOALL, nbytes, -1);
    return sr_cop_end(&cop, sr_a2a_run(&cop, dest, doff, src, nbytes));
}

symrail_status_t sr_coll_alltoalls(const char *fn, sr_team_t *team, void *dest, const void *src,
                                   ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize)
{
    sr_cop_t cop;
    uint64_t doff, soff;
    symrail_status_t st = sr_cop_begin(fn, team, &cop);
    if (st != SYMRAIL_OK)
        return st;
    size_t n = (size_t)cop.n, span_d, span_s;
    if (dst <= 0 || sst <= 0) {
        sr_error("%s: strides dst %td and sst %td must be positive", fn, dst, sst);
        return sr_cop_end(&cop, SYMRAIL_ERR_INVALID);
    }
    span_d = nelems ? ((n * nelems - 1) * (size_t)dst + 1) * esize : 0;
    span_s = nelems ? ((n * nelems - 1) * (size_t)sst + 1) * esize : 0;
    if (!sr_coll_sym(fn, "dest", dest, span_d, &doff) ||
        !sr_coll_sym(fn, "source", src, span_s, &soff))
        return sr_cop_end(&cop, SYMRAIL_ERR_INVALID);
    /* Packed into private buffers, exchanged as an alltoall, unpacked. */
    size_t blk = nelems * esize;
    sr_cop_call(&cop, SR_CALL_ALLTOALLS, blk, -1);
    char *in = malloc(n * blk + 1), *out = malloc(n * blk + 1);
    if (in == NULL || out == NULL) {
        free(in);
        free(out);
        return sr_cop_end(&cop, SYMRAIL_ERR_NOMEM);
    }
    for (size_t i = 0; i < n * nelems; i++)
        memcpy(out + i * esize, (const char *)src + i * (size_t)sst * esize, esize);
    /* The packed exchange goes through the pipe: neither buffer is symmetric. */
    int me = cop.me;
    memcpy(in + (size_t)me * blk, out + (size_t)me * blk, blk);
    for (int i = 1; i < cop.n && st == SYMRAIL_OK; i++) {
        int to = (me + i) % cop.n, from = (me - i + cop.n) % cop.n;
        char *sink = in + (size_t)from * blk;
        st = sr_cm_pipe(&cop, to, from, (uint64_t)i << SR_K_ROUND_SHIFT, out + (size_t)to * blk,
                        blk, sr_copy_sink, &sink);
    }
    if (st == SYMRAIL_OK)
        for (size_t i = 0; i < n * nelems; i++)
            memcpy((char *)dest + i * (size_t)dst * esize, in + i * esize, esize);
    free(in);
    free(out);
    return sr_cop_end(&cop, st);
}
