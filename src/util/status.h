/* Translation of foreign error codes into symrail_status_t, at module edges. */
#ifndef SR_UTIL_STATUS_H
#define SR_UTIL_STATUS_H

#include <errno.h>
#include <symrail.h>

static inline symrail_status_t sr_status_from_errno(int err)
{
    switch (err) {
    case 0:       return SYMRAIL_OK;
    case ENOMEM:
    case ENOSPC:  return SYMRAIL_ERR_NOMEM;
    case EINVAL:  return SYMRAIL_ERR_INVALID;
    case EAGAIN:  return SYMRAIL_ERR_AGAIN;
    case ETIMEDOUT: return SYMRAIL_ERR_TIMEOUT;
    case ESRCH:
    case ECONNRESET:
    case EPIPE:   return SYMRAIL_ERR_PEER_GONE;
    case ENOSYS:
    case EOPNOTSUPP: return SYMRAIL_ERR_UNSUPPORTED;
    default:      return SYMRAIL_ERR_SYSTEM;
    }
}

#endif
