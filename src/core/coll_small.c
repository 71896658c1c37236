/*
 * The small-message path of the active-set collectives (coll_small.h).  It
 * keeps the pSync rules of coll_aset.c: its words are counters that peers
 * add to and their owner takes back, so they are at SHMEM_SYNC_VALUE (0)
 * when the call returns, and a waiter compares with >=, so that arrivals of
 * a fast PE's next call are left for that call.
 */
#include "config.h"
#include "core/coll_small.h"
#include "util/log.h"

#include <string.h>

/* Payloads up to this size are copied by one PE to all: past it, the tree
 * shares the copying out among the members. */
#define SR_SMALL_BYTES     1024
/* OpenSHMEM's SHMEM_REDUCE_MIN_WRKDATA_SIZE: every pWrk holds at least this
 * many elements, whatever nreduce. */
#define SR_SMALL_WRK_ELEMS 16

static int sr_small_pe(const sr_small_as_t *s, int member)
{
    return s->start + (member << s->lstride);
}

/* The load/store view of offset off (heap, or data segment with
 * SR_DATA_BIT) of member's memory; NULL where it has none. */
static char *sr_small_at(const sr_small_as_t *s, int member, uint64_t off)
{
    return sr_sym_peer_addr(sr_small_pe(s, member), off);
}

static int sr_small_mapped(const sr_small_as_t *s, size_t nbytes, uint64_t off_a,
                           uint64_t off_b)
{
    if (s->size < 2 || nbytes > SR_SMALL_BYTES)
        return 0;
    for (int i = 0; i < s->size; i++) {
        /* Counters that other PEs may change through the NIC take no CPU atomics. */
        if (!sr_rt.peers[sr_small_pe(s, i)].amo_direct)
            return 0;
        if (i != s->me && (sr_small_at(s, i, off_a) == NULL || sr_small_at(s, i, off_b) == NULL))
            return 0;
    }
    return 1;
}

int sr_small_aset_ok(const sr_small_as_t *s, size_t nbytes, uint64_t doff)
{
    return sr_small_mapped(s, nbytes, doff, doff);
}

int sr_small_reduce_ok(const sr_small_as_t *s, size_t nreduce, size_t esize, uint64_t doff,
                       uint64_t woff)
{
    return nreduce > 0 && (size_t)(s->size - 1) * nreduce <= SR_SMALL_WRK_ELEMS &&
           sr_small_mapped(s, nreduce * esize, doff, woff);
}

typedef struct {
    const uint64_t *w;
    uint64_t        want;
} sr_small_wait_t;

static int sr_small_ready(void *arg)
{
    sr_small_wait_t *w = arg;
    return __atomic_load_n(w->w, __ATOMIC_ACQUIRE) >= w->want;
}

/* Wait for `count` arrivals on pSync[idx] and take them back. */
static symrail_status_t sr_small_take(const sr_small_as_t *s, int idx, uint64_t count)
{
    sr_small_wait_t w = { (const uint64_t *)(const void *)(s->psync + idx), count };
    symrail_status_t st = SYMRAIL_OK;
    sr_wait_on_t on = { s->fn, SR_WAIT_PE_ANY, w.w, 0 };
    if (!sr_small_ready(&w))
        st = sr_wait_on(s->ctx, sr_small_ready, &w, SR_WAIT_REMOTE, sr_rt.env.op_timeout, &on);
    if (st == SYMRAIL_OK)
        st = sr_amo(s->ctx, SR_TL_AMO_ADD, s->ps + (uint64_t)idx * 8, (uint64_t)0 - count, 0,
                    sr_rt.my_pe, NULL);
    return st;
}

/* nbytes from src into member's memory at off, then one arrival on its
 * pSync[idx]: the atomic is ordered after the copy and wakes a sleeper. */
static symrail_status_t sr_small_put(const sr_small_as_t *s, int member, uint64_t off,
                                     const void *src, size_t nbytes, int idx)
{
    if (nbytes)
        memcpy(sr_small_at(s, member, off), src, nbytes);
    return sr_amo(s->ctx, SR_TL_AMO_ADD, s->ps + (uint64_t)idx * 8, 1, 0, sr_small_pe(s, member),
                  NULL);
}

symrail_status_t sr_small_bcast_aset(const sr_small_as_t *s, void *dest, const void *src,
                                     uint64_t doff, size_t nbytes, int root)
{
    (void)dest;
    if (s->me != root)
        return sr_small_take(s, s->data, 1);
    symrail_status_t st = SYMRAIL_OK;
    for (int i = 1; i < s->size && st == SYMRAIL_OK; i++)
        st = sr_small_put(s, (root + i) % s->size, doff, src, nbytes, s->data);
    return st;
}

/* Every other member stores its contribution into its slot of the last
 * member's pWrk; the last member combines them into its dest and stores the
 * result into every other dest.  The last member, because it is the last
 * out of a barrier (sync.c releases PE 0 first and the others in order):
 * the contributions are then waiting for it, instead of it for them.  A
 * member's next call can write the last member's pWrk only after it has its
 * result, so after the last member read the slots. */
symrail_status_t sr_small_reduce_aset(const sr_small_as_t *s, sr_dtype_t dt, sr_rop_t op,
                                      void *dest, const void *src, uint64_t doff,
                                      size_t nreduce, void *pwrk, uint64_t woff)
{
    size_t nbytes = nreduce * sr_dtype_size(dt);
    int last = s->size - 1;
    symrail_status_t st;
    if (s->me != last) {
        st = sr_small_put(s, last, woff + (size_t)s->me * nbytes, src, nbytes, s->data);
        return st == SYMRAIL_OK ? sr_small_take(s, s->res, 1) : st;
    }
    /* In member order, as every PE would: the same result on every PE. */
    st = sr_small_take(s, s->data, (uint64_t)last);
    if (st != SYMRAIL_OK)
        return st;
    char tmp[SR_SMALL_BYTES];
    memcpy(tmp, src, nbytes);
    if (last > 0) {
        memcpy(dest, pwrk, nbytes);
        for (int i = 1; i < last; i++)
            sr_reduce_apply(dt, op, dest, (const char *)pwrk + (size_t)i * nbytes, nreduce);
        sr_reduce_apply(dt, op, dest, tmp, nreduce);
    }
    for (int i = 0; i < last && st == SYMRAIL_OK; i++)
        st = sr_small_put(s, i, doff, dest, nbytes, s->res);
    return st;
}
