/*
 * Collectives of a few bytes among PEs that all share memory.  There every
 * put is a copy and every signal a store, and the cost is the number of
 * hand-offs one PE has to wait for (on an oversubscribed node each may be a
 * context switch), so these take the fewest dependent steps: the root stores
 * a broadcast into every member's dest, and a reduction is gathered into one
 * member's pWrk, combined there and stored back into every dest.
 */
#ifndef SR_CORE_COLL_SMALL_H
#define SR_CORE_COLL_SMALL_H

#include "core/coll.h"

/* An active set as the active-set forms checked it: member i is PE
 * start + (i << lstride), the caller member me; psync the caller's pSync
 * (heap offset ps) whose word data counts arrivals and res results. */
typedef struct {
    const char *fn;
    sr_ctx_t   *ctx;
    int         start, lstride, size, me;
    long       *psync;
    uint64_t    ps;
    int         data, res;
} sr_small_as_t;

/* Whether nbytes are few and every member of the set is reached by loads and
 * stores (its dest at doff too) and its words by CPU atomics, so that the
 * broadcast below may run on it.  Every member decides the same. */
int sr_small_aset_ok(const sr_small_as_t *s, size_t nbytes, uint64_t doff);
/* The root member stores nbytes of src at doff into every other member's
 * dest, then adds 1 to its pSync word data; the root's dest is left alone. */
symrail_status_t sr_small_bcast_aset(const sr_small_as_t *s, void *dest, const void *src,
                                     uint64_t doff, size_t nbytes, int root);
/* Whether a reduction of nreduce elements of esize bytes takes the small path:
 * the last member's pWrk must hold the other members' contributions within the
 * SR_SMALL_WRK_ELEMS elements every pWrk has. */
int sr_small_reduce_ok(const sr_small_as_t *s, size_t nreduce, size_t esize, uint64_t doff,
                       uint64_t woff);
symrail_status_t sr_small_reduce_aset(const sr_small_as_t *s, sr_dtype_t dt, sr_rop_t op,
                                      void *dest, const void *src, uint64_t doff,
                                      size_t nreduce, void *pwrk, uint64_t woff);

#endif
