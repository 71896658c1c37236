#include "config.h"
#include "core/ctx.h"
#include "util/log.h"

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

/*
 * Dissemination barrier over symmetric counters: in round r every PE adds one
 * to barrier[r] of PE me+2^r and waits for its own barrier[r] to reach the
 * epoch.  Counters only grow, so no reset is needed between barriers, and it
 * runs over whatever transport reaches each partner.
 */
symrail_status_t sr_barrier(void)
{
    uint64_t epoch = ++sr_ctx.barrier_epoch;
    int n = sr_ctx.n_pes, me = sr_ctx.my_pe;
    sr_heap_intern_t *in = sr_intern();

    sr_ctx.stats.barriers++;
    for (int r = 0; r < SR_BARRIER_ROUNDS && (1 << r) < n; r++) {
        int partner = (me + (1 << r)) % n;
        uint64_t off = sr_heap_offset(&in->barrier[r]);
        symrail_status_t st = sr_amo(SR_TL_AMO_ADD, off, 1, 0, partner, NULL);
        if (st != SYMRAIL_OK)
            return st;
        sr_sigwait_t w = { &in->barrier[r], SYMRAIL_CMP_GE, epoch, 0 };
        st = sr_wait(sr_sig_ready, &w, SR_WAIT_REMOTE, 0, "barrier");
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_signal_wait(uint64_t *sig, symrail_cmp_t cmp, uint64_t value,
                                uint64_t *value_p)
{
    sr_sigwait_t w = { sig, cmp, value, 0 };
    symrail_status_t st = sr_wait(sr_sig_ready, &w, SR_WAIT_REMOTE, 0, "signal_wait_until");
    if (st == SYMRAIL_OK && value_p)
        *value_p = w.seen;
    return st;
}
