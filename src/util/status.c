#include "config.h"
#include <symrail.h>

const char *symrail_strerror(symrail_status_t status)
{
    switch (status) {
    case SYMRAIL_INPROGRESS:       return "in progress";
    case SYMRAIL_OK:               return "success";
    case SYMRAIL_ERR_INVALID:      return "invalid argument";
    case SYMRAIL_ERR_NOMEM:        return "out of memory";
    case SYMRAIL_ERR_UNSUPPORTED:  return "operation not supported by this transport";
    case SYMRAIL_ERR_TIMEOUT:      return "timed out";
    case SYMRAIL_ERR_AGAIN:        return "resource temporarily unavailable";
    case SYMRAIL_ERR_BOOT:         return "bootstrap (PMIx) failure";
    case SYMRAIL_ERR_TRANSPORT:    return "transport failure";
    case SYMRAIL_ERR_PEER_GONE:    return "peer process is gone";
    case SYMRAIL_ERR_NO_TRANSPORT: return "no enabled transport reaches the peer";
    case SYMRAIL_ERR_SYSTEM:       return "operating system call failed";
    case SYMRAIL_ERR_TRUNCATED:    return "message truncated";
    case SYMRAIL_ERR_STATE:        return "call not allowed in the current state";
    case SYMRAIL_ERR_PEER_UNRESPONSIVE: return "peer does not respond";
    case SYMRAIL_ERR_MISMATCH:     return "PEs made different collective calls";
    case SYMRAIL_ERR_STALE:        return "segment registration is gone (stale descriptor)";
    case SYMRAIL_ERR_CANCELED:     return "canceled";
    case SYMRAIL_ERR_RESULT_LOST:  return "atomic applied once at most, its fetched value lost";
    }
    return "unknown status";
}
