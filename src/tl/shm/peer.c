/*
 * Connected peers over shared memory: a process of another job on this
 * host, reached for segments only (tl.h, sr_tl_host_addr_t).  Its segments
 * come as keys like those of a PE of this job (rkey.c): a symrail_seg_alloc
 * object is mapped by name, other memory is reached by cross-memory attach,
 * and the owner's generation table says whether a key is still good.  The
 * job's own control segment (doorbell, notification rings) is sized for the
 * job's PEs and loses its name at wire-up, so that nothing is left in
 * /dev/shm: a peer that comes later has no ring there, and its messages
 * travel over its other endpoint (TCP).
 *
 * Before it says yes, connect reads a word of the peer's memory by
 * cross-memory attach and compares it with what the peer said it holds:
 * the same host name and boot are not enough (another PID namespace, another
 * user, a ptrace policy), and a refusal here lets the core take TCP instead
 * of failing the first transfer.
 */
#include "config.h"
#include "seg.h"
#include "util/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

symrail_status_t sr_shm_peer_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                     sr_tl_ep_t **ep_p)
{
    sr_tl_host_addr_t h;
    if (pe >= ctx->params.n_pes + ctx->params.peers_max || addr == NULL ||
        len != sizeof(sr_tl_peer_addr_t) + sizeof(h))
        return SYMRAIL_ERR_INVALID;
    memcpy(&h, (const char *)addr + sizeof(sr_tl_peer_addr_t), sizeof(h));
    if (!ctx->params.is_local[pe] || h.pid <= 0)
        return SYMRAIL_ERR_UNSUPPORTED;
    /* The peer attaches to us too (its copies into our segments). */
    sr_shm_allow_attach();
    uint64_t val = 0;
    int err = sr_shm_cma(h.pid, &val, h.probe_addr, sizeof(val), 0);
    if (err || val != h.probe_val) {
        sr_info("shm: connected peer %d (process %d) cannot be reached by cross-memory "
                "attach: %s", pe, (int)h.pid,
                err == EPERM ? "not permitted (another user, or a ptrace policy)"
                : err == ESRCH ? "no such process here (another PID namespace?)"
                : err ? strerror(err) : "another process has that id here");
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return SYMRAIL_ERR_NOMEM;
    ep->ctx = ctx;
    ep->pe = pe;
    ep->pid = h.pid;
    ep->peer = 1;
    ep->hdr = ctx->hdr;
    pthread_mutex_init(&ep->tx_lock, NULL);
    pthread_mutex_lock(&ctx->seg_lock);
    ep->next_peer = ctx->peers;
    ctx->peers = ep;
    pthread_mutex_unlock(&ctx->seg_lock);
    *ep_p = ep;
    return SYMRAIL_OK;
}

/* Accesses in progress on other threads may still use the keys: they stay
 * until rkey_release or fini. */
void sr_shm_peer_disconnect(sr_tl_ep_t *ep)
{
    if (!__atomic_exchange_n(&ep->gone, 1, __ATOMIC_ACQ_REL))
        sr_debug("shm: connected peer %d (process %d) disconnected", ep->pe, ep->pid);
}

symrail_status_t sr_shm_peer_check(sr_tl_ep_t *ep)
{
    if (__atomic_load_n(&ep->gone, __ATOMIC_ACQUIRE) || sr_pid_gone(ep->pid))
        return SYMRAIL_ERR_PEER_GONE;
    return SYMRAIL_OK;
}

void sr_shm_peers_fini(sr_tl_ctx_t *ctx)
{
    while (ctx->peers) {
        sr_tl_ep_t *ep = ctx->peers;
        ctx->peers = ep->next_peer;
        sr_shm_seg_ep_fini(ep);
        pthread_mutex_destroy(&ep->tx_lock);
        free(ep);
    }
}
