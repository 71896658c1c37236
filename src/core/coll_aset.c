/*
 * The active-set forms (OpenSHMEM 1.4): PEs start + i * 2^logstride, the
 * caller's pSync the synchronisation and pWrk the scratch.  pSync words are
 * counters that peers add to and their owner takes back, so they are at
 * SHMEM_SYNC_VALUE (0) again when the call returns; the user keeps a pSync
 * out of a second call until the first is done everywhere, as the
 * specification asks (a barrier's may be reused at once).
 *   pSync[0] data arrived, [1] grants (written by the parent only),
 *   [2] results arrived, [3] a collect's offset, [4] barrier rounds (2 bits each).
 */
#include "config.h"
#include "core/coll.h"
#include "core/coll_small.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

#define SR_PS_DATA  0
#define SR_PS_GRANT 1
#define SR_PS_RES   2
#define SR_PS_OFF   3
#define SR_PS_BAR   4
#define SR_PS_WORDS 5

typedef struct {
    const char *fn;
    sr_ctx_t   *ctx;
    int         start, lstride, size, me;
    uint64_t    ps;  /* symmetric offset of pSync */
    long       *psync;
} sr_aset_t;


static int sr_as_pe(const sr_aset_t *a, int i)
{
    return a->start + (i << a->lstride);
}

static symrail_status_t sr_aset_begin(const char *fn, int start, int logstride, int size,
                                      long *psync, sr_aset_t *a)
{
    uint64_t off;
    if (size <= 0 || logstride < 0 || logstride > 30 || start < 0 ||
        (long)start + ((long)(size - 1) << logstride) >= sr_rt.n_pes) {
        sr_error("%s: active set PE_start %d, logPE_stride %d, PE_size %d is not within the "
                 "%d PEs", fn, start, logstride, size, sr_rt.n_pes);
        return SYMRAIL_ERR_INVALID;
    }
    int d = sr_rt.my_pe - start;
    if (d < 0 || d % (1 << logstride) || d >> logstride >= size) {
        sr_error("%s: PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)",
                 fn, sr_rt.my_pe, start, logstride, size);
        return SYMRAIL_ERR_INVALID;
    }
    if (psync == NULL || !sr_coll_sym(fn, "pSync", psync, SR_PS_WORDS * sizeof(long), &off))
        return SYMRAIL_ERR_INVALID;
    if (off & 7) {
        sr_error("%s: pSync %p is not aligned to 8 bytes", fn, (void *)psync);
        return SYMRAIL_ERR_INVALID;
    }
    symrail_status_t st = sr_peers_members_ok(fn, NULL, start, 1 << logstride, size);
    if (st != SYMRAIL_OK)
        return st;
    if (sr_team_aset_ctx() == NULL)
        return SYMRAIL_ERR_NOMEM;
    *a = (sr_aset_t){ fn, sr_team_aset_ctx(), start, logstride, size, d >> logstride, off, psync };
    sr_ctx_enter(a->ctx);  /* threads may call these at once, on different active sets */
    return SYMRAIL_OK;
}

static symrail_status_t sr_aset_end(sr_aset_t *a, symrail_status_t st);

/* sr_aset_begin, then dest (dlen bytes; dest NULL: checked later) and source
 * (slen bytes) must be symmetric: on failure the call has ended. */
static symrail_status_t sr_aset_begin_io(const char *fn, int start, int logstride, int size,
                                         long *psync, void *dest, size_t dlen, const void *src,
                                         size_t slen, sr_aset_t *a, uint64_t *doff_p,
                                         uint64_t *soff_p)
{
    symrail_status_t st = sr_aset_begin(fn, start, logstride, size, psync, a);
    if (st != SYMRAIL_OK)
        return st;
    if ((dest != NULL && !sr_coll_sym(fn, "dest", dest, dlen, doff_p)) ||
        !sr_coll_sym(fn, "source", src, slen, soff_p)) {
        sr_aset_end(a, SYMRAIL_ERR_INVALID);
        return SYMRAIL_ERR_INVALID;
    }
    return SYMRAIL_OK;
}

static symrail_status_t sr_aset_end(sr_aset_t *a, symrail_status_t st)
{
    symrail_status_t qst = sr_quiet(a->ctx);
    sr_ctx_leave(a->ctx);
    return st != SYMRAIL_OK ? st : qst;
}

typedef struct {
    const uint64_t *w;
    int             shift;
    uint64_t        mask, want;
} sr_fwait_t;

static int sr_field_ready(void *arg)
{
    sr_fwait_t *f = arg;
    return (__atomic_load_n(f->w, __ATOMIC_ACQUIRE) >> f->shift & f->mask) >= f->want;
}

/* Wait until field (>> shift & mask) of pSync[idx] reaches want. */
static symrail_status_t sr_as_wait(sr_aset_t *a, int idx, int shift, uint64_t mask,
                                   uint64_t want)
{
    sr_fwait_t f = { (const uint64_t *)(const void *)(a->psync + idx), shift, mask, want };
    if (sr_field_ready(&f))
        return SYMRAIL_OK;
    sr_wait_on_t on = { a->fn, SR_WAIT_PE_ANY, f.w, 0 };
    return sr_wait_on(a->ctx, sr_field_ready, &f, SR_WAIT_REMOTE, sr_rt.env.op_timeout, &on);
}

static symrail_status_t sr_as_add(sr_aset_t *a, int idx, uint64_t v, int member)
{
    return sr_amo(a->ctx, SR_TL_AMO_ADD, a->ps + (uint64_t)idx * 8, v, 0, sr_as_pe(a, member),
                  NULL);
}

static symrail_status_t sr_as_set(sr_aset_t *a, int idx, uint64_t v, int member)
{
    return sr_amo(a->ctx, SR_TL_AMO_SET, a->ps + (uint64_t)idx * 8, v, 0, sr_as_pe(a, member),
                  NULL);
}

static symrail_status_t sr_as_put(sr_aset_t *a, const void *src, uint64_t roff, size_t len,
                                  int idx, int member)
{
    if (len == 0)
        return sr_as_add(a, idx, 1, member);
    return sr_put_signal(a->ctx, src, roff, len, a->ps + (uint64_t)idx * 8, SR_TL_AMO_ADD, 1,
                         sr_as_pe(a, member));
}

/* Wait for `count` arrivals on pSync[idx] and take them back. */
static symrail_status_t sr_as_take(sr_aset_t *a, int idx, uint64_t count)
{
    symrail_status_t st = sr_as_wait(a, idx, 0, UINT64_MAX, count);
    if (st == SYMRAIL_OK && count)
        st = sr_as_add(a, idx, (uint64_t)0 - count, a->me);
    return st;
}

symrail_status_t sr_coll_barrier_aset(const char *fn, int start, int logstride, int size,
                                      long *psync)
{
    sr_aset_t a;
    symrail_status_t st = sr_aset_begin(fn, start, logstride, size, psync, &a);
    if (st != SYMRAIL_OK)
        return st;
    /* Dissemination; a PE is at most one barrier ahead, so a round's field
     * holds at most 2 and never carries into the next. */
    for (int r = 0; (1 << r) < size && st == SYMRAIL_OK; r++) {
        st = sr_as_add(&a, SR_PS_BAR, UINT64_C(1) << (2 * r), (a.me + (1 << r)) % size);
        if (st == SYMRAIL_OK)
            st = sr_as_wait(&a, SR_PS_BAR, 2 * r, 3, 1);
        if (st == SYMRAIL_OK)
            st = sr_as_add(&a, SR_PS_BAR, (uint64_t)0 - (UINT64_C(1) << (2 * r)), a.me);
    }
    return sr_aset_end(&a, st);
}

/* Binomial tree relative to `root`: the parent and the highest child bit. */
static int sr_tree(int v, int n, int *mask_p)
{
    int mask = 1;
    while (mask < n && !(v & mask))
        mask <<= 1;
    *mask_p = v ? mask : 1 << 30;
    return v ? v - mask : -1;
}

symrail_status_t sr_coll_bcast_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                    int root, int start, int logstride, int size, long *psync)
{
    sr_aset_t a;
    uint64_t doff, soff;
    symrail_status_t st = sr_aset_begin(fn, start, logstride, size, psync, &a);
    if (st != SYMRAIL_OK)
        return st;
    if (root < 0 || root >= size) {
        sr_error("%s: PE_root %d is not in the active set (0..%d)", fn, root, size - 1);
        return sr_aset_end(&a, SYMRAIL_ERR_INVALID);
    }
    if (!sr_coll_sym(fn, "dest", dest, nbytes, &doff) ||
        !sr_coll_sym(fn, "source", src, nbytes, &soff))
        return sr_aset_end(&a, SYMRAIL_ERR_INVALID);
    sr_small_as_t sm = { fn, a.ctx, start, logstride, size, a.me, psync, a.ps, SR_PS_DATA,
                         SR_PS_RES };
    if (sr_small_aset_ok(&sm, nbytes, doff))
        return sr_aset_end(&a, sr_small_bcast_aset(&sm, dest, src, doff, nbytes, root));
    int v = (a.me - root + size) % size, mask, parent = sr_tree(v, size, &mask);
    if (parent >= 0)
        st = sr_as_take(&a, SR_PS_DATA, 1);
    const void *from = v ? dest : src;
    for (int m = mask >> 1; m > 0 && st == SYMRAIL_OK; m >>= 1)
        if (v + m < size)
            st = sr_as_put(&a, from, doff, nbytes, SR_PS_DATA, (v + m + root) % size);
    return sr_aset_end(&a, st);
}

/* Every member puts its block at offs into every other's dest. */
static symrail_status_t sr_as_allput(sr_aset_t *a, const void *src, uint64_t doff, size_t len)
{
    symrail_status_t st = SYMRAIL_OK;
    for (int i = 1; i < a->size && st == SYMRAIL_OK; i++)
        st = sr_as_put(a, src, doff, len, SR_PS_DATA, (a->me + i) % a->size);
    if (st == SYMRAIL_OK)
        st = sr_as_take(a, SR_PS_DATA, (uint64_t)a->size - 1);
    return st;
}

symrail_status_t sr_coll_fcollect_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                       int start, int logstride, int size, long *psync)
{
    sr_aset_t a;
    uint64_t doff, soff;
    symrail_status_t st = sr_aset_begin_io(fn, start, logstride, size, psync, dest,
                                           nbytes * (size_t)size, src, nbytes, &a, &doff, &soff);
    if (st != SYMRAIL_OK)
        return st;
    char *mine = (char *)dest + (size_t)a.me * nbytes;
    if (nbytes && mine != (const char *)src)
        memmove(mine, src, nbytes);
    return sr_aset_end(&a, sr_as_allput(&a, mine, doff + (size_t)a.me * nbytes, nbytes));
}

symrail_status_t sr_coll_collect_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                      int start, int logstride, int size, long *psync)
{
    sr_aset_t a;
    uint64_t doff, soff;
    symrail_status_t st = sr_aset_begin_io(fn, start, logstride, size, psync, NULL, 0, src,
                                           nbytes, &a, &doff, &soff);
    if (st != SYMRAIL_OK)
        return st;
    /* The offsets go down a chain: member i learns the sum of those before it. */
    uint64_t at = 0;
    if (a.me > 0) {
        st = sr_as_wait(&a, SR_PS_OFF, 0, UINT64_MAX, 1);
        at = (uint64_t)a.psync[SR_PS_OFF] - 1;
        if (st == SYMRAIL_OK)
            st = sr_as_set(&a, SR_PS_OFF, 0, a.me);
    }
    if (st == SYMRAIL_OK && a.me + 1 < size)
        st = sr_as_set(&a, SR_PS_OFF, at + nbytes + 1, a.me + 1);
    if (st != SYMRAIL_OK)
        return sr_aset_end(&a, st);
    if (!sr_coll_sym(fn, "dest", dest, at + nbytes, &doff))
        return sr_aset_end(&a, SYMRAIL_ERR_INVALID);
    if (nbytes && (char *)dest + at != (const char *)src)
        memmove((char *)dest + at, src, nbytes);
    return sr_aset_end(&a, sr_as_allput(&a, (char *)dest + at, doff + at, nbytes));
}

symrail_status_t sr_coll_alltoall_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                       int start, int logstride, int size, long *psync)
{
    sr_aset_t a;
    uint64_t doff, soff;
    symrail_status_t st = sr_aset_begin_io(fn, start, logstride, size, psync, dest,
                                           nbytes * (size_t)size, src, nbytes * (size_t)size,
                                           &a, &doff, &soff);
    if (st != SYMRAIL_OK)
        return st;
    const char *s = src;
    if (nbytes)
        memmove((char *)dest + (size_t)a.me * nbytes, s + (size_t)a.me * nbytes, nbytes);
    for (int i = 1; i < size && st == SYMRAIL_OK; i++) {
        int to = (a.me + i) % size;
        st = sr_as_put(&a, s + (size_t)to * nbytes, doff + (size_t)a.me * nbytes, nbytes,
                       SR_PS_DATA, to);
    }
    if (st == SYMRAIL_OK)
        st = sr_as_take(&a, SR_PS_DATA, (uint64_t)size - 1);
    return sr_aset_end(&a, st);
}

symrail_status_t sr_coll_alltoalls_aset(const char *fn, void *dest, const void *src,
                                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize,
                                        int start, int logstride, int size, long *psync)
{
    sr_aset_t a;
    uint64_t doff, soff;
    symrail_status_t st = sr_aset_begin(fn, start, logstride, size, psync, &a);
    if (st != SYMRAIL_OK)
        return st;
    if (dst <= 0 || sst <= 0) {
        sr_error("%s: strides dst %td and sst %td must be positive", fn, dst, sst);
        return sr_aset_end(&a, SYMRAIL_ERR_INVALID);
    }
    size_t n = (size_t)size;
    size_t span_d = nelems ? ((n * nelems - 1) * (size_t)dst + 1) * esize : 0;
    size_t span_s = nelems ? ((n * nelems - 1) * (size_t)sst + 1) * esize : 0;
    if (!sr_coll_sym(fn, "dest", dest, span_d, &doff) ||
        !sr_coll_sym(fn, "source", src, span_s, &soff))
        return sr_aset_end(&a, SYMRAIL_ERR_INVALID);
    for (int i = 0; i < size && st == SYMRAIL_OK; i++) {
        int to = (a.me + i) % size, pe = sr_as_pe(&a, to);
        for (size_t k = 0; k < nelems && st == SYMRAIL_OK; k++) {
            char *s = (char *)src + ((size_t)to * nelems + k) * (size_t)sst * esize;
            uint64_t d = doff + ((size_t)a.me * nelems + k) * (size_t)dst * esize;
            if (i == 0)
                memcpy(sr_sym_addr(d), s, esize);
            else
                st = sr_rma(a.ctx, 1, s, d, esize, pe, 1);
        }
        if (i > 0 && st == SYMRAIL_OK)
            st = sr_peer_flush(a.ctx, pe, fn);
        if (i > 0 && st == SYMRAIL_OK)
            st = sr_as_add(&a, SR_PS_DATA, 1, to);
    }
    if (st == SYMRAIL_OK)
        st = sr_as_take(&a, SR_PS_DATA, n - 1);
    return sr_aset_end(&a, st);
}

/* Up the tree into each parent's pWrk, one chunk per grant, then the result
 * down the tree. */
symrail_status_t sr_coll_reduce_aset(const char *fn, int start, int logstride, int size,
                                     sr_dtype_t dt, sr_rop_t op, void *dest, const void *src,
                                     size_t nreduce, void *pwrk, long *psync)
{
    sr_aset_t a;
    uint64_t doff, soff, woff;
    symrail_status_t st = sr_aset_begin(fn, start, logstride, size, psync, &a);
    if (st != SYMRAIL_OK)
        return st;
    if (dt >= SR_DT_COUNT || op >= SR_ROP_COUNT || !sr_reduce_valid(dt, op)) {
        sr_error("%s: operator %d is not defined on type %d", fn, (int)op, (int)dt);
        return sr_aset_end(&a, SYMRAIL_ERR_INVALID);
    }
    size_t es = sr_dtype_size(dt), nbytes = nreduce * es;
    size_t ce = nreduce / 2 + 1 < nreduce ? nreduce / 2 + 1 : (nreduce ? nreduce : 1);
    size_t cb = ce * es;
    if (!sr_coll_sym(fn, "dest", dest, nbytes, &doff) ||
        !sr_coll_sym(fn, "source", src, nbytes, &soff) ||
        (pwrk == NULL || !sr_coll_sym(fn, "pWrk", pwrk, cb, &woff)))
        return sr_aset_end(&a, SYMRAIL_ERR_INVALID);
    sr_small_as_t sm = { fn, a.ctx, start, logstride, size, a.me, psync, a.ps, SR_PS_DATA,
                         SR_PS_RES };
    if (sr_small_reduce_ok(&sm, nreduce, es, doff, woff))
        return sr_aset_end(&a, sr_small_reduce_aset(&sm, dt, op, dest, src, doff, nreduce, pwrk,
                                                    woff));
    if (nbytes && dest != src)
        memmove(dest, src, nbytes);
    size_t chunks = (nbytes + cb - 1) / cb;
    int v = a.me, mask, parent = sr_tree(v, size, &mask);
    uint64_t got = 0;
    for (int m = 1; m < mask && m < size && st == SYMRAIL_OK; m <<= 1) {
        if (v + m >= size)
            continue;
        for (size_t c = 0; c < chunks && st == SYMRAIL_OK; c++) {
            size_t at = c * cb, len = nbytes - at < cb ? nbytes - at : cb;
            st = sr_as_set(&a, SR_PS_GRANT, c + 1, v + m);
            if (st == SYMRAIL_OK)
                st = sr_as_wait(&a, SR_PS_DATA, 0, UINT64_MAX, ++got);
            if (st == SYMRAIL_OK)
                sr_reduce_apply(dt, op, (char *)dest + at, pwrk, len / es);
        }
    }
    if (st == SYMRAIL_OK && got)
        st = sr_as_add(&a, SR_PS_DATA, (uint64_t)0 - got, a.me);
    for (size_t c = 0; parent >= 0 && c < chunks && st == SYMRAIL_OK; c++) {
        size_t at = c * cb, len = nbytes - at < cb ? nbytes - at : cb;
        st = sr_as_wait(&a, SR_PS_GRANT, 0, UINT64_MAX, c + 1);
        if (st == SYMRAIL_OK)
            st = sr_put_signal(a.ctx, (char *)dest + at, woff, len,
                               a.ps + SR_PS_DATA * 8, SR_TL_AMO_ADD, 1, sr_as_pe(&a, parent));
    }
    if (parent >= 0 && st == SYMRAIL_OK && chunks)
        st = sr_as_set(&a, SR_PS_GRANT, 0, a.me);
    if (parent >= 0 && st == SYMRAIL_OK)
        st = sr_as_take(&a, SR_PS_RES, 1);
    for (int m = mask >> 1; m > 0 && st == SYMRAIL_OK; m >>= 1)
        if (v + m < size)
            st = sr_as_put(&a, dest, doff, nbytes, SR_PS_RES, v + m);
    return sr_aset_end(&a, st);
}
