/*
 * Credit rules of the notification channel, kept apart from the verbs calls
 * so that they can be checked without a device.
 *
 * The receiver pre-posts `depth` buffers per sender and re-posts each one as
 * soon as its message is copied out; it then tells the sender how many it
 * has consumed (an RDMA write of a counter; an application message counts
 * once the application has taken it, notify_release, the transport's own at
 * once).  The sender may have at most
 * `depth` messages the receiver has not consumed, so a receive buffer is
 * always posted for every message on the wire: no RNR, ever.  A send slot is
 * reused only after its send completion, which bounds slots the same way.
 */
#ifndef SR_TL_VERBS_CREDITS_H
#define SR_TL_VERBS_CREDITS_H

#include <stdint.h>

typedef struct {
    uint64_t sent;       /* messages posted to the peer */
    uint64_t send_done;  /* ... whose send completion we have seen */
    uint64_t consumed;   /* ... that the peer reports consumed (its counter) */
} sr_ib_credit_t;

/* May one more message be posted now? */
static inline int sr_ib_credit_avail(const sr_ib_credit_t *c, uint32_t depth)
{
    return c->sent - c->consumed < depth && c->sent - c->send_done < depth;
}

/* The send slot the next message uses (slots are [0, depth)). */
static inline uint32_t sr_ib_credit_slot(const sr_ib_credit_t *c, uint32_t depth)
{
    return (uint32_t)(c->sent % depth);
}

#endif
