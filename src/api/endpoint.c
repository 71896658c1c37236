/* The public calls of independent jobs (core/endpoint.h). */
#include "config.h"
#include "api/api.h"
#include "core/endpoint.h"

int sr_api_peer_ok_slow(const char *fn, int pe)
{
    if (pe >= sr_rt.n_pes && pe < sr_rt.n_max &&
        __atomic_load_n(&sr_rt.peers[pe].ep, __ATOMIC_ACQUIRE) != NULL)
        return 1;
    if (pe >= sr_rt.n_pes && pe < sr_rt.n_max)
        sr_error("%s: pe %d is no connected peer (symrail_endpoint_connect, or _accept for "
                 "one that connected to this process)", fn, pe);
    else
        sr_error("%s: pe %d is out of range (0..%d, or a connected peer)", fn, pe,
                 sr_rt.n_pes - 1);
    return 0;
}

symrail_status_t symrail_endpoint_export(void *buf, size_t *len_p)
{
    static const char fn[] = "symrail_endpoint_export";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (len_p == NULL || (buf == NULL && *len_p != 0)) {
        sr_error("%s: len_p is NULL, or buf is NULL with *len_p > 0", fn);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_endpoint_export(buf, len_p);
}

symrail_status_t symrail_endpoint_connect(const void *buf, size_t len, int *peer_p)
{
    static const char fn[] = "symrail_endpoint_connect";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (buf == NULL || peer_p == NULL || len > SYMRAIL_ENDPOINT_MAX) {
        sr_error("%s: buf or peer_p is NULL, or len %zu is over SYMRAIL_ENDPOINT_MAX (%d)", fn,
                 len, SYMRAIL_ENDPOINT_MAX);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_endpoint_connect(buf, len, peer_p);
}

symrail_status_t symrail_endpoint_accept(int timeout_ms, int *peer_p)
{
    static const char fn[] = "symrail_endpoint_accept";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (peer_p == NULL) {
        sr_error("%s: peer_p is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_endpoint_accept(timeout_ms, peer_p);
}

symrail_status_t symrail_endpoint_disconnect(int peer)
{
    SR_API_UP("symrail_endpoint_disconnect", SYMRAIL_ERR_INVALID);
    return sr_endpoint_disconnect(peer);
}
