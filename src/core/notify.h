/*
 * Notification messages inside the core: the calls the public notify API,
 * batches and the library's own services (reserved tags) share.
 *
 * A message of up to SYMRAIL_NOTIFY_MAX_PAYLOAD bytes travels as fragments
 * of at most SR_TL_NOTIFY_MAX bytes (the transports' message size), one
 * after another on the sender's transport to that PE, so that per-peer
 * receive buffers stay small.  The receiver gives a fragment's slot back as
 * soon as it has copied it; a whole message keeps one slot until it is
 * consumed, so SYMRAIL_NOTIFY_SLOTS still bounds what a receiver holds.
 */
#ifndef SR_CORE_NOTIFY_H
#define SR_CORE_NOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

/* The library's own tags (from SYMRAIL_NOTIFY_TAG_RESERVED up), in one
 * list so that no two services share one. */
#define SR_TAG_SEG_LOOKUP (SYMRAIL_NOTIFY_TAG_RESERVED + 0x10u)  /* seg_name.c: a question */
#define SR_TAG_SEG_FOUND  (SYMRAIL_NOTIFY_TAG_RESERVED + 0x11u)  /* ... and its answer */
#define SR_TAG_EP_JOIN    (SYMRAIL_NOTIFY_TAG_RESERVED + 0x100u) /* endpoint.c: a connector */
#define SR_TAG_EP_CTL     (SYMRAIL_NOTIFY_TAG_RESERVED + 0x101u) /* endpoint_tl.c: a transport's */

/* Sends one message to `pe`: any tag (reserved ones included), `status`
 * travelling with it (SYMRAIL_OK for ordinary messages), len up to
 * SYMRAIL_NOTIFY_MAX_PAYLOAD.  Messages to one PE arrive whole and in the
 * order of the calls that returned SYMRAIL_OK.
 *
 * blocking 1: waits for room up to SYMRAIL_OP_TIMEOUT (SYMRAIL_ERR_TIMEOUT:
 * nothing of this message was sent).
 * blocking 0: never waits and never calls progress, so progress and the
 * handlers below may call it: SYMRAIL_ERR_AGAIN when it cannot start now
 * (nothing of this message was sent; the caller tries again later, e.g. on
 * its next progress).
 * SYMRAIL_OK: the message is on its way.  If the receiver had room for only
 * part of it, the rest (copied) goes out from progress, before any later
 * message to that PE. */
symrail_status_t sr_notify_send_msg(int pe, uint32_t tag, symrail_status_t status,
                                    const void *payload, size_t len, int blocking);

/* Called from progress for each message with reserved tag `tag`, oldest
 * first, never with a lock of the library held.  SYMRAIL_ERR_AGAIN keeps the
 * message (and the later ones of that tag) for the next progress; any other
 * return consumes it.  A handler must not wait: it may send with
 * sr_notify_send_msg(..., 0). */
typedef symrail_status_t (*sr_notify_handler_t)(void *arg, int src_pe, uint32_t tag,
                                                symrail_status_t status, const void *payload,
                                                size_t len);
/* Registers (fn non-NULL) or removes the handler of reserved tag `tag`.
 * Messages of a reserved tag without a handler stay queued for
 * sr_notify_recv with that tag.  Not from a handler. */
symrail_status_t sr_notify_handler_set(uint32_t tag, sr_notify_handler_t fn, void *arg);

/* The public send calls' path: status SYMRAIL_OK; blocking 0 also calls
 * progress after SYMRAIL_ERR_AGAIN, so that a caller looping on trysend sees
 * slots come back. */
symrail_status_t sr_notify_send(int pe, uint32_t tag, const void *payload, size_t len,
                                int blocking);

/* Takes the oldest message: of any user tag (any_tag 1), or of `tag`, which
 * may be reserved.  blocking 0: SYMRAIL_ERR_AGAIN when none is there;
 * blocking 1: waits up to timeout_ms (-1: forever) for one, failing as soon
 * as a peer is known to be gone. */
symrail_status_t sr_notify_recv(int any_tag, uint32_t tag, int timeout_ms, int blocking,
                                symrail_notify_t *msg_p);

/* The transports' notify_cb. */
void sr_notify_deliver(void *arg, int src_pe, uint32_t tag, const void *payload, size_t len);
/* Per-peer state, after the peers are known / at finalize. */
symrail_status_t sr_notify_init(int n_pes);
void sr_notify_fini(void);

/* Non-zero while fragments wait to go out, slots to go back, or reserved
 * messages to be handled: sr_progress then calls sr_notify_progress. */
extern uint32_t sr_notify_work;
void sr_notify_progress(void);

/* Between notify.c (sending) and notify_rx.c (receiving). */
#define SR_NOTIFY_WORK_TX      1u  /* the rest of a message waits to go out */
#define SR_NOTIFY_WORK_RELEASE 2u  /* slots of copied fragments to give back */
#define SR_NOTIFY_WORK_HANDLER 4u  /* reserved messages for handlers */
/* What precedes a message's payload in its first fragment. */
typedef struct {
    uint16_t magic;
    uint16_t len;     /* of the whole payload */
    int32_t  status;
} sr_notify_hdr_t;
#define SR_NOTIFY_MAGIC 0x4e73u
void sr_notify_rx_progress(uint32_t work);
symrail_status_t sr_notify_rx_init(int n_pes);
void sr_notify_rx_fini(void);

#endif
