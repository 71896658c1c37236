/*
 * Batches: many transfers between this PE's memory and peers' segments,
 * each a task with its own end, carried by a context of the batch's own.
 *
 * Submission posts tasks while the bytes in flight stay under
 * SYMRAIL_BATCH_WINDOW; as tasks end, the batch's progress (from any wait or
 * poll of the thread that submitted it) posts more, and once all have ended
 * it completes them at their targets (quiet of its context) and sends the
 * notification it was asked for, with the first failure as its status.
 */
#ifndef SR_CORE_BATCH_H
#define SR_CORE_BATCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

#include "core/region.h"
#include "core/rt.h"

typedef struct {
    sr_req_t req;              /* first: its last completion names the task */
    char    *local;
    struct symrail_rseg *rs;
    uint64_t roff;             /* in the segment */
    uint64_t len;
    uint8_t  op;               /* symrail_xfer_op_t */
    uint8_t  state;            /* symrail_task_state_t */
} sr_task_t;

typedef enum {
    SR_BATCH_OPEN = 0,   /* tasks are added */
    SR_BATCH_RUNNING,    /* submitted: tasks are posted and end */
    SR_BATCH_ENDING,     /* every task ended: completing them at the targets, notifying */
    SR_BATCH_DONE,
} sr_batch_state_t;

struct symrail_batch {
    uint64_t         magic;
    sr_ctx_t        *ctx;
    sr_task_t       *tasks;
    size_t           cap, n;
    size_t           next;        /* first task not posted yet */
    size_t           ended;       /* tasks done or failed */
    uint64_t         done_bytes;  /* of the tasks done */
    uint64_t         inflight;    /* bytes posted and not ended */
    symrail_status_t first_err;
    sr_batch_state_t state;
    int              canceled;
    int              pumping;     /* in sr_batch_pump: no second entry (atomic) */
    uint64_t         end_since;   /* when its notification first found no slot */
    pthread_t        owner;       /* the thread that submitted it */
    /* The local segments its tasks use, held from submit to the end, and
     * let go of by these very pointers: a segment registered meanwhile over
     * the same memory is none of the batch's. */
    sr_region_t    **held;
    size_t           nheld, held_cap;
    /* The notification at the end. */
    int              notify_pe;   /* -1: none */
    uint32_t         notify_tag;
    size_t           notify_len;
    unsigned char   *notify_payload;
    struct symrail_batch *next_active, *prev_active;
};

/* The batch's state, from any thread: DONE makes first_err and the tasks'
 * ends visible. */
static inline sr_batch_state_t sr_batch_state(const struct symrail_batch *b)
{
    return __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
}

void sr_batch_task_done(sr_req_t *req);
/* Batches in flight (submitted, notification not yet sent). */
extern struct symrail_batch *sr_batch_active;
void sr_batch_progress(void);
void sr_batches_fini(void);

symrail_status_t sr_batch_new(size_t capacity, struct symrail_batch **batch_p);
/* Appends one task that the caller checked; the caller counts the tasks
 * it pushed on their import with sr_batch_hold_rseg (one atomic a call,
 * not one a task). */
void sr_batch_push(struct symrail_batch *b, int op, char *local, struct symrail_rseg *rs,
                   uint64_t roff, uint64_t len);
void sr_batch_hold_rseg(struct symrail_rseg *rs, size_t ntasks);
symrail_status_t sr_batch_submit(struct symrail_batch *b, int pe, uint32_t tag,
                                 const void *payload, size_t len);
/* Posts more, ends the batch: returns whether the batch is done. */
int sr_batch_pump(struct symrail_batch *b);
symrail_status_t sr_batch_wait(struct symrail_batch *b, int timeout_ms);
symrail_status_t sr_batch_cancel(struct symrail_batch *b);
void sr_batch_clear(struct symrail_batch *b);
void sr_batch_delete(struct symrail_batch *b);

#endif
