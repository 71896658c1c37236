/*
 * A FIFO of notification messages: what a transport's progress thread has
 * received and not yet handed to the core, and what the core holds until
 * the application consumes it.  Not locked: its owner decides how.
 */
#ifndef SR_UTIL_MSGQ_H
#define SR_UTIL_MSGQ_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

typedef struct sr_msg {
    struct sr_msg *next;
    int            src;
    uint32_t       tag;
    uint32_t       len;
    uint32_t       flags;  /* the owner's marks (e.g. a transport's own messages) */
    /* Kept by a receiver that reassembles: the transport that carried it
     * (which gets its slot back), the status the sender attached, and the
     * bytes of payload that have come so far. */
    uint32_t       tl;
    int32_t        status;
    uint32_t       have;
    unsigned char  payload[];
} sr_msg_t;

typedef struct {
    sr_msg_t *head, *tail;
    size_t    count;
} sr_msgq_t;

/* Copies the message in, with flags 0; SYMRAIL_ERR_NOMEM when it cannot. */
symrail_status_t sr_msgq_push(sr_msgq_t *q, int src, uint32_t tag, const void *payload,
                              size_t len);
symrail_status_t sr_msgq_push_flags(sr_msgq_t *q, int src, uint32_t tag, uint32_t flags,
                                    const void *payload, size_t len);
/* The oldest message, or NULL; the caller frees it with free(). */
sr_msg_t *sr_msgq_pop(sr_msgq_t *q);
/* A message the caller allocated (malloc, freed by whoever takes it out),
 * at the tail, or at the head where front is 1: one taken out and put back
 * stays the oldest. */
void sr_msgq_link(sr_msgq_t *q, sr_msg_t *m, int front);
/* Takes m out; prev: the message before it, NULL for the head. */
void sr_msgq_unlink(sr_msgq_t *q, sr_msg_t *prev, sr_msg_t *m);
void sr_msgq_clear(sr_msgq_t *q);

#endif
