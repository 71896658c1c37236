/*
 * Credit rules of the notification channel, kept apart from the verbs calls
 * so that they can be checked without a device.
 *
 * Receive buffers are shared: one receive queue (an SRQ) per device holds
 * `P = n * SR_IB_CREDIT_STATIC + pool` buffers for every sender together,
 * and each buffer is re-posted as soon as its message is copied out.  So
 * that a sender never finds it empty (an RNR), the receiver hands out
 * windows: sender S may send while its count of messages sent is below
 * limit[S], an absolute count the receiver writes into S's memory (RDMA
 * write, with the consumed count).  The receiver keeps
 *
 *     sum over S of (limit[S] - arrived[S])  +  pool_free  +  unposted
 *         -  owed  ==  P
 *
 * (a window is buffers kept posted for S alone; unposted: buffers whose
 * post failed, counted nowhere until a later poll posts them; owed: what
 * the pool lent to such buffers when it was empty, paid back first), and
 * every window is at least SR_IB_CREDIT_STATIC after each arrival is
 * handled.  A sender whose notify QP failed gives its window back.  Windows start
 * with an even share of half the pool (the receiver's address blob says
 * how large), so a burst at the start runs at once.  Each arrival
 * gives its buffer back to the pool; sr_ib_grant then decides how far S's
 * window grows again: by one more than it lost while the pool is above its
 * low mark (a busy sender's window grows up to `depth`), not at all below
 * it (a busy sender gives buffers back to the others, down to the static
 * window).  A window never shrinks by revocation, only by arrivals, so a
 * limit the sender read stale is only ever too small.
 *
 * Apart from that, application messages obey the consumption rule: at most
 * `slots` messages the receiver's application has not consumed
 * (notify_release), and they never take the last SR_IB_CTL_RESERVE of a
 * window, so a lane repair can always be negotiated.  A sender has at most
 * `sq` sends whose completion it has not seen, which bounds its send queue.
 */
#ifndef SR_TL_VERBS_CREDITS_H
#define SR_TL_VERBS_CREDITS_H

#include <stdint.h>

/* The least window a sender has at a receiver: the reserve for the
 * transport's own messages plus room for two of the application's. */
#define SR_IB_CREDIT_STATIC 4

typedef struct {
    uint64_t sent;       /* messages posted to the peer */
    uint64_t send_done;  /* ... whose send completion we have seen */
    uint64_t consumed;   /* ... that the peer reports consumed (its counter) */
    uint64_t limit;      /* ... the peer's receive window: sent stays below it */
} sr_ib_credit_t;

/* May one more message be posted now?  consume_max: messages not consumed
 * the sender may have; reserve: buffers of the window it must leave free;
 * sq: sends not completed it may have. */
static inline int sr_ib_credit_avail(const sr_ib_credit_t *c, uint32_t consume_max,
                                     uint32_t reserve, uint32_t sq)
{
    return c->sent - c->consumed < consume_max && c->sent + reserve < c->limit &&
           c->sent - c->send_done < sq;
}

/* The receiver's side, after one message of a sender arrived and its
 * buffer went back to the pool: w is the window the sender has left
 * (limit - arrived), pool_free the pool with that buffer in it.  Returns
 * how many buffers to add to the sender's limit (taken from the pool). */
static inline uint32_t sr_ib_grant(uint32_t w, uint32_t pool_free, uint32_t depth, uint32_t low)
{
    uint32_t want = w + 2;
    if (want > depth)
        want = depth > w ? depth : w;
    if (pool_free <= low)
        want = w;
    if (want < SR_IB_CREDIT_STATIC)
        want = SR_IB_CREDIT_STATIC;
    uint32_t g = want > w ? want - w : 0;
    return g < pool_free ? g : pool_free;
}

#endif
