/*
 * Prints the C compiler's sizes, offsets and constant values of what the
 * Python binding declares in python/symrail/_layout.py, one "name value" a
 * line; test_layout.py compares them with the binding's own.
 */
#include <stddef.h>
#include <stdio.h>

#include <symrail.h>

#define P(name, val) printf("%s %lld\n", name, (long long)(val))
#define SZ(t) P("sizeof(" #t ")", sizeof(t))
#define OFF(t, f) P("offsetof(" #t ", " #f ")", offsetof(t, f))
#define V(c) P(#c, c)

int main(void)
{
    SZ(symrail_notify_t);
    SZ(symrail_stats_t);
    SZ(symrail_status_t);
    SZ(symrail_peer_state_t);
    OFF(symrail_notify_t, src_pe);
    OFF(symrail_notify_t, tag);
    OFF(symrail_notify_t, status);
    OFF(symrail_notify_t, len);
    OFF(symrail_notify_t, payload);
#define S(f) OFF(symrail_stats_t, f);
    S(puts) S(gets) S(put_bytes) S(get_bytes) S(atomics) S(signals) S(notify_sent)
    S(notify_recv) S(quiets) S(barriers) S(sleeps) S(slices_posted) S(completions)
    S(retries) S(repairs) S(stalls) S(qp_full) S(cq_full) S(peers_suspect) S(peers_failed)
    S(nrails) S(rails) S(lanes_paused) S(lane_probes) S(lanes_resumed)
    S(rcache_hits) S(rcache_misses) S(rcache_regs)
    S(rcache_invalidations) S(rcache_evictions) S(rcache_bytes)
#undef S
    V(SYMRAIL_NOTIFY_MAX_PAYLOAD);
    V(SYMRAIL_NOTIFY_TAG_RESERVED);
    V(SYMRAIL_SEG_DESC_MAX);
#ifdef SYMRAIL_ENDPOINT_MAX
    V(SYMRAIL_ENDPOINT_MAX);
#endif
    V(SYMRAIL_ANY_PE);
    V(SYMRAIL_STATS_MAX_RAILS);
    printf("SYMRAIL_BATCH_ALL %zu\n", SYMRAIL_BATCH_ALL);
    V(SYMRAIL_WRITE);
    V(SYMRAIL_READ);
    V(SYMRAIL_TASK_PENDING);
    V(SYMRAIL_TASK_DONE);
    V(SYMRAIL_TASK_FAILED);
    V(SYMRAIL_THREAD_MULTIPLE);
    V(SYMRAIL_PEER_OK);
    V(SYMRAIL_PEER_SUSPECT);
    V(SYMRAIL_PEER_FAILED);
    V(SYMRAIL_INPROGRESS);
    V(SYMRAIL_OK);
    V(SYMRAIL_ERR_INVALID);
    V(SYMRAIL_ERR_NOMEM);
    V(SYMRAIL_ERR_UNSUPPORTED);
    V(SYMRAIL_ERR_TIMEOUT);
    V(SYMRAIL_ERR_AGAIN);
    V(SYMRAIL_ERR_BOOT);
    V(SYMRAIL_ERR_TRANSPORT);
    V(SYMRAIL_ERR_PEER_GONE);
    V(SYMRAIL_ERR_NO_TRANSPORT);
    V(SYMRAIL_ERR_SYSTEM);
    V(SYMRAIL_ERR_TRUNCATED);
    V(SYMRAIL_ERR_STATE);
    V(SYMRAIL_ERR_PEER_UNRESPONSIVE);
    V(SYMRAIL_ERR_MISMATCH);
    V(SYMRAIL_ERR_STALE);
    V(SYMRAIL_ERR_CANCELED);
    V(SYMRAIL_ERR_RESULT_LOST);
    return 0;
}
