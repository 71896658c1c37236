#include "config.h"
#include "core/rt.h"
#include "core/team.h"
#include "util/log.h"

#include <stdio.h>

typedef struct {
    const uint64_t *word;
    symrail_cmp_t   cmp;
    uint64_t        value;
    uint64_t        seen;
} sr_sigwait_t;

static int sr_sig_ready(void *arg)
{
    sr_sigwait_t *w = arg;
    w->seen = __atomic_load_n(w->word, __ATOMIC_ACQUIRE);
    return sr_cmp(w->seen, w->cmp, w->value);
}

_Static_assert(sizeof(sr_heap_intern_t) <= SR_HEAP_RESERVED,
               "the library's symmetric words must fit the reserved start of the heap");

/*
 * One barrier word: which barrier (the epoch, modulo 2^16) and which
 * collective call it belongs to (kind, log2 of the alignment, size).  The
 * word a PE writes replaces the counter a barrier has to send anyway, so
 * comparing calls costs nothing.  Sizes from 2^40 - 1 on are written as
 * that value.
 */
#define SR_BW_EPOCH_BITS 16
#define SR_BW_KIND_BITS  3
#define SR_BW_ALIGN_BITS 5
#define SR_BW_SIZE_BITS  40
#define SR_BW_SIZE_MAX   ((UINT64_C(1) << SR_BW_SIZE_BITS) - 1)
#define SR_BW_EPOCH_MASK ((UINT64_C(1) << SR_BW_EPOCH_BITS) - 1)

static uint64_t sr_bw_encode(uint64_t epoch, sr_coll_t kind, uint64_t size, uint64_t align)
{
    uint64_t lg = 0;
    while (lg + 1 < (UINT64_C(1) << SR_BW_ALIGN_BITS) && (UINT64_C(1) << lg) < align)
        lg++;
    if (size > SR_BW_SIZE_MAX)
        size = SR_BW_SIZE_MAX;
    return (epoch & SR_BW_EPOCH_MASK) | (uint64_t)kind << SR_BW_EPOCH_BITS |
           lg << (SR_BW_EPOCH_BITS + SR_BW_KIND_BITS) |
           size << (SR_BW_EPOCH_BITS + SR_BW_KIND_BITS + SR_BW_ALIGN_BITS);
}

/* "symrail_malloc(1024)" and the like, for the mismatch message. */
static void sr_bw_describe(uint64_t w, char *buf, size_t len)
{
    unsigned kind = (unsigned)(w >> SR_BW_EPOCH_BITS) & ((1u << SR_BW_KIND_BITS) - 1);
    unsigned lg = (unsigned)(w >> (SR_BW_EPOCH_BITS + SR_BW_KIND_BITS)) &
                  ((1u << SR_BW_ALIGN_BITS) - 1);
    uint64_t size = w >> (SR_BW_EPOCH_BITS + SR_BW_KIND_BITS + SR_BW_ALIGN_BITS);
    char sz[48];
    if (size == SR_BW_SIZE_MAX)
        snprintf(sz, sizeof(sz), "%llu or more bytes", (unsigned long long)size);
    else
        snprintf(sz, sizeof(sz), "%llu bytes", (unsigned long long)size);
    switch (kind) {
    case SR_COLL_ALLOC:
        if (lg)
            snprintf(buf, len, "an allocation of %s aligned to %llu (symrail_align)", sz,
                     (unsigned long long)1 << lg);
        else
            snprintf(buf, len, "an allocation of %s (symrail_malloc/calloc)", sz);
        break;
    case SR_COLL_FREE:
        snprintf(buf, len, "symrail_free of a block of %s", sz);
        break;
    default:
        snprintf(buf, len, "a barrier (barrier_all, sync_all or finalize)");
        break;
    }
}

typedef struct {
    const uint64_t *word;
    uint64_t        epoch;
    uint64_t        seen;
} sr_bwait_t;

static int sr_bw_ready(void *arg)
{
    sr_bwait_t *w = arg;
    w->seen = __atomic_load_n(w->word, __ATOMIC_ACQUIRE);
    return (w->seen & SR_BW_EPOCH_MASK) == (w->epoch & SR_BW_EPOCH_MASK);
}

/* Both words of a barrier call, for the mismatch message; returns MISMATCH. */
static symrail_status_t sr_bw_mismatch(uint64_t epoch, uint64_t mine, int from, uint64_t seen)
{
    char a[160], b[160];
    sr_bw_describe(mine, a, sizeof(a));
    sr_bw_describe(seen, b, sizeof(b));
    sr_error("collective call %llu differs between PEs: PE %d made %s, PE %d made %s; "
             "every PE must make the same symmetric-heap and barrier calls with the "
             "same arguments", (unsigned long long)epoch, sr_rt.my_pe, a, from, b);
    return SYMRAIL_ERR_MISMATCH;
}

/* Up to this many PEs, PE 0 gathers and releases (sr_barrier_flat). */
#define SR_BARRIER_FLAT_MAX 8
_Static_assert(SR_BARRIER_FLAT_MAX - 1 <= SR_BARRIER_ROUNDS, "PE 0 has a word per PE");

typedef struct {
    sr_heap_intern_t *in;
    uint64_t          epoch;
    int               next, n;  /* the first word not yet seen */
} sr_bgather_t;

static int sr_bgather_ready(void *arg)
{
    sr_bgather_t *g = arg;
    for (; g->next < g->n; g->next++) {
        uint64_t w = __atomic_load_n(&g->in->barrier[g->next][g->epoch & 1], __ATOMIC_ACQUIRE);
        if ((w & SR_BW_EPOCH_MASK) != (g->epoch & SR_BW_EPOCH_MASK))
            return 0;
    }
    return 1;
}

/*
 * PE 0 gathers and releases: every other PE p writes its barrier word into
 * barrier[p - 1][epoch & 1] of PE 0, which waits for them all, then writes
 * its own into barrier[0][epoch & 1] of each.  PE 0 leaves first, and the
 * collective that most often follows a barrier is rooted at PE 0 (a
 * broadcast, a scatter of work): its root then moves the data while the
 * others are on their way out, rather than after them (the last PE out of
 * a dissemination may be the root, and where PEs share a CPU that is a
 * context switch later).  Among 3 to SR_BARRIER_FLAT_MAX PEs that costs
 * no more steps than a dissemination for 3 or 4 PEs (2), one fewer from 5
 * on; between 2 it would cost a second step.  PE 0 compares the words
 * with its own up to the first that differs, the others theirs with PE 0's;
 * it releases the others even then, so that every PE whose word is not
 * PE 0's says so too (one whose word matches leaves as from a good
 * barrier: the job ends through those that differ).  A PE
 * that left barrier e can write barrier e + 1 only, and PE 0 writes a
 * release only after that PE's arrival, so no word is overwritten before
 * it is read.
 */
static symrail_status_t sr_barrier_flat(sr_ctx_t *ctx, uint64_t epoch, uint64_t mine)
{
    int n = sr_rt.n_pes, me = sr_rt.my_pe;
    sr_heap_intern_t *in = sr_intern();
    symrail_status_t st;
    if (me != 0) {
        uint64_t *slot = &in->barrier[0][epoch & 1];
        st = sr_amo_set_own(ctx, sr_heap_offset(&in->barrier[me - 1][epoch & 1]), mine, 0);
        if (st != SYMRAIL_OK)
            return st;
        sr_bwait_t w = { slot, epoch, 0 };
        sr_wait_on_t on = { "barrier (PE 0's release)", 0, slot, 1 };
        st = sr_wait_on(ctx, sr_bw_ready, &w, SR_WAIT_REMOTE, 0, &on);
        if (st == SYMRAIL_OK && w.seen != mine)
            st = sr_bw_mismatch(epoch, mine, 0, w.seen);
        return st;
    }
    sr_bgather_t g = { in, epoch, 0, n - 1 };
    if (!sr_bgather_ready(&g)) {
        sr_wait_on_t on = { "barrier (the other PEs' arrivals)", SR_WAIT_PE_ANY,
                            &in->barrier[0][epoch & 1], 1 };
        st = sr_wait_on(ctx, sr_bgather_ready, &g, SR_WAIT_REMOTE, 0, &on);
        if (st != SYMRAIL_OK)
            return st;
    }
    symrail_status_t bad = SYMRAIL_OK;
    for (int pe = 1; pe < n && bad == SYMRAIL_OK; pe++) {
        uint64_t seen = __atomic_load_n(&in->barrier[pe - 1][epoch & 1], __ATOMIC_RELAXED);
        if (seen != mine)
            bad = sr_bw_mismatch(epoch, mine, pe, seen);
    }
    /* Where a set is no store, the releases go out together: one after
     * another's completion would make the last PE wait for all of them. */
    uint64_t off = sr_heap_offset(&in->barrier[0][epoch & 1]);
    int posted = 0;
    for (int pe = 1; pe < n; pe++) {
        if (sr_rt.peers[pe].immediate) {
            st = sr_amo_set_own(ctx, off, mine, pe);
        } else {
            st = sr_amo_nbi(ctx, SR_TL_AMO_SET, off, mine, 0, pe, NULL);
            posted = 1;
        }
        if (st != SYMRAIL_OK)
            return st;
    }
    if (posted && (st = sr_quiet(ctx)) != SYMRAIL_OK)
        return st;
    return bad;
}

/*
 * Dissemination barrier: in round r every PE writes its barrier word into
 * barrier[r][epoch & 1] of PE me+2^r and waits for its own to carry the
 * epoch.  A PE can be at most one barrier ahead of another (finishing one
 * means every PE has entered it), so two words per round suffice and a word
 * is never overwritten before it is read.  Each PE compares the word it
 * receives with its own; round 0 links every PE to its predecessor, so PEs
 * that disagree are found in the first round.
 */
static symrail_status_t sr_barrier_run(sr_ctx_t *ctx, sr_coll_t kind, uint64_t size,
                                       uint64_t align)
{
    uint64_t epoch = ++sr_rt.barrier_epoch;
    uint64_t mine = sr_bw_encode(epoch, kind, size, align);
    int n = sr_rt.n_pes, me = sr_rt.my_pe;
    sr_heap_intern_t *in = sr_intern();

    ctx->stats.barriers++;
    if (n > 2 && n <= SR_BARRIER_FLAT_MAX)
        return sr_barrier_flat(ctx, epoch, mine);
    for (int r = 0; r < SR_BARRIER_ROUNDS && (1 << r) < n; r++) {
        int partner = (me + (1 << r)) % n, from = ((me - (1 << r)) % n + n) % n;
        uint64_t *slot = &in->barrier[r][epoch & 1];
        symrail_status_t st = sr_amo_set_own(ctx, sr_heap_offset(slot), mine, partner);
        if (st != SYMRAIL_OK)
            return st;
        sr_bwait_t w = { slot, epoch, 0 };
        sr_wait_on_t on = { "barrier", from, slot, 1 };
        st = sr_wait_on(ctx, sr_bw_ready, &w, SR_WAIT_REMOTE, 0, &on);
        if (st != SYMRAIL_OK)
            return st;
        if (w.seen != mine)
            return sr_bw_mismatch(epoch, mine, from, w.seen);
    }
    return SYMRAIL_OK;
}

/* The barriers use a context of their own, so that they never wait for,
 * nor race with, the traffic of the application's threads. */
symrail_status_t sr_barrier_coll(sr_coll_t kind, uint64_t size, uint64_t align)
{
    sr_ctx_t *ctx = sr_rt.cctx;
    /* Every PE takes part: one that failed never arrives. */
    symrail_status_t st = sr_peers_members_ok("barrier", NULL, 0, 1, sr_rt.n_pes);
    if (st != SYMRAIL_OK)
        return st;
    sr_ctx_enter(ctx);
    st = sr_barrier_run(ctx, kind, size, align);
    sr_ctx_leave(ctx);
    return st;
}

size_t sr_fin_base(void)
{
    return SR_HEAP_RESERVED + sr_team_reserved_size();
}

typedef struct {
    const uint64_t *word;
    int             pe;
} sr_finwait_t;

static int sr_fin_ready(void *arg)
{
    sr_finwait_t *w = arg;
    return __atomic_load_n(w->word, __ATOMIC_ACQUIRE) != 0 || sr_peer_failed(w->pe);
}

/*
 * The barrier of a finalize under report once a PE has failed: the failed
 * never arrive, but the others must still wait for each other, or one
 * would unmap its heap while another reads it.  Which PEs failed may not
 * be agreed on yet (one may fail during it), so no tree: each PE sets its
 * word on every other that is not FAILED and waits for each one's word or
 * its failure.  O(n) a PE, on a path taken once, after a failure.  A
 * finalize's heap is new at every init, so the words start at zero.
 */
symrail_status_t sr_barrier_survivors(void)
{
    sr_ctx_t *ctx = sr_rt.cctx;
    int n = sr_rt.n_pes, me = sr_rt.my_pe;
    uint64_t mine = sr_fin_base() + (uint64_t)me * 8;
    symrail_status_t st = SYMRAIL_OK;
    sr_ctx_enter(ctx);
    for (int pe = 0; pe < n && st == SYMRAIL_OK; pe++) {
        if (pe == me || sr_peer_failed(pe))
            continue;
        st = sr_amo_set_own(ctx, mine, 1, pe);
        if (st == SYMRAIL_ERR_PEER_GONE && sr_peer_failed(pe))
            st = SYMRAIL_OK;
    }
    for (int pe = 0; pe < n && st == SYMRAIL_OK; pe++) {
        if (pe == me)
            continue;
        sr_finwait_t w = { (const uint64_t *)(void *)(sr_rt.heap_base + sr_fin_base() +
                                                      (size_t)pe * 8), pe };
        sr_wait_on_t on = { "finalize (the survivors' barrier)", pe, w.word, 0 };
        st = sr_wait_on(ctx, sr_fin_ready, &w, SR_WAIT_REMOTE, 0, &on);
        if (st == SYMRAIL_ERR_PEER_GONE && sr_peer_failed(pe))
            st = SYMRAIL_OK;
    }
    sr_ctx_leave(ctx);
    return st;
}

symrail_status_t sr_signal_wait(uint64_t *sig, symrail_cmp_t cmp, uint64_t value,
                                uint64_t *value_p)
{
    sr_sigwait_t w = { sig, cmp, value, 0 };
    sr_wait_on_t on = { "signal_wait_until", SR_WAIT_PE_ANY, sig, 0 };
    symrail_status_t st = sr_wait_on(NULL, sr_sig_ready, &w, SR_WAIT_REMOTE, 0, &on);
    if (st == SYMRAIL_OK && value_p)
        *value_p = w.seen;
    return st;
}
