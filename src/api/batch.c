/* Batches: the checks of the public calls (the work is src/core/batch.c). */
#include "config.h"
#include "api/api.h"
#include "core/batch.h"

#include <stdlib.h>

#define SR_BATCH_MAGIC UINT64_C(0x7372424154434801)

static struct symrail_batch *sr_batch_of(const char *fn, symrail_batch_t batch)
{
    if (sr_unlikely(sr_rt.state != SR_STATE_UP)) {
        sr_api_not_up(fn);
        return NULL;
    }
    if (batch == NULL || batch->magic != SR_BATCH_MAGIC) {
        sr_error("%s: batch %p is not a batch (freed, or never created)", fn, (void *)batch);
        return NULL;
    }
    return batch;
}

static int sr_batch_open(const char *fn, struct symrail_batch *b)
{
    if (b->state == SR_BATCH_OPEN)
        return 1;
    sr_error("%s: the batch is submitted already (reset it once it is done)", fn);
    return 0;
}

symrail_status_t symrail_batch_create(size_t capacity, symrail_batch_t *batch_p)
{
    static const char fn[] = "symrail_batch_create";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (batch_p == NULL || capacity == 0 || capacity > (SIZE_MAX >> 8)) {
        sr_error("%s: %s", fn, batch_p == NULL ? "batch_p is NULL" : "capacity is 0 or too large");
        return SYMRAIL_ERR_INVALID;
    }
    return sr_batch_new(capacity, batch_p);
}

/* One task's tests, without a word: the per-block path runs them inline
 * and calls sr_task_check only to say what failed. */
static inline int sr_task_ok(symrail_xfer_op_t op, const void *local,
                             const struct symrail_rseg *rs, uint64_t roff, uint64_t len)
{
    return (op == SYMRAIL_WRITE || op == SYMRAIL_READ) && len != 0 && local != NULL &&
           (uintptr_t)local + len >= (uintptr_t)local && roff <= rs->len &&
           len <= rs->len - roff;
}

/* One task's checks: a live segment, a range inside it, a local buffer. */
static symrail_status_t sr_task_check(const char *fn, symrail_xfer_op_t op, const void *local,
                                      struct symrail_rseg *rs, uint64_t roff, uint64_t len,
                                      size_t i)
{
    if (sr_likely(sr_task_ok(op, local, rs, roff, len)))
        return SYMRAIL_OK;
    if (op != SYMRAIL_WRITE && op != SYMRAIL_READ) {
        sr_error("%s: op %d is neither SYMRAIL_WRITE nor SYMRAIL_READ", fn, (int)op);
        return SYMRAIL_ERR_INVALID;
    }
    if (len == 0) {
        sr_error("%s: task %zu has length 0", fn, i);
        return SYMRAIL_ERR_INVALID;
    }
    if (local == NULL || (uintptr_t)local + len < (uintptr_t)local) {
        sr_error("%s: task %zu: local buffer %p with %llu bytes is not valid", fn, i, local,
                 (unsigned long long)len);
        return SYMRAIL_ERR_INVALID;
    }
    if (roff > rs->len || len > rs->len - roff) {
        sr_error("%s: task %zu: [%llu, +%llu) is outside the segment of PE %d (%llu bytes)", fn,
                 i, (unsigned long long)roff, (unsigned long long)len, rs->pe,
                 (unsigned long long)rs->len);
        return SYMRAIL_ERR_INVALID;
    }
    return SYMRAIL_OK;
}

/* A batch that takes tasks, and a live import for them (logged if not). */
static int sr_batch_adding(const char *fn, symrail_batch_t batch, symrail_rseg_t rseg,
                           struct symrail_batch **b_p, struct symrail_rseg **rs_p)
{
    struct symrail_batch *b = sr_batch_of(fn, batch);
    if (b == NULL || !sr_batch_open(fn, b))
        return 0;
    *b_p = b;
    *rs_p = sr_rseg_of(fn, rseg);
    return *rs_p != NULL;
}

static int sr_batch_room(const char *fn, struct symrail_batch *b, size_t more)
{
    if (more <= b->cap - b->n)
        return 1;
    sr_error("%s: %zu more tasks would pass the batch's capacity (%zu, %zu taken)", fn, more,
             b->cap, b->n);
    return 0;
}

symrail_status_t symrail_batch_add(symrail_batch_t batch, symrail_xfer_op_t op, void *local,
                                   symrail_rseg_t rseg, uint64_t roff, size_t len,
                                   size_t *task_p)
{
    static const char fn[] = "symrail_batch_add";
    struct symrail_batch *b;
    struct symrail_rseg *rs;
    if (!sr_batch_adding(fn, batch, rseg, &b, &rs))
        return SYMRAIL_ERR_INVALID;
    symrail_status_t st = sr_task_check(fn, op, local, rs, roff, len, b->n);
    if (st != SYMRAIL_OK)
        return st;
    if (!sr_batch_room(fn, b, 1))
        return SYMRAIL_ERR_INVALID;
    if (task_p)
        *task_p = b->n;
    sr_batch_push(b, op, local, rs, roff, len);
    sr_batch_hold_rseg(rs, 1);
    return SYMRAIL_OK;
}

/* The length of the run of blocks from i on that are adjacent on both sides. */
static inline size_t sr_blocks_run(const uint32_t *local_idx, const uint32_t *remote_idx,
                                   size_t i, size_t nblocks)
{
    size_t run = 1;
    while (i + run < nblocks && local_idx[i + run] == local_idx[i] + run &&
           remote_idx[i + run] == remote_idx[i] + run)
        run++;
    return run;
}

/* How many tasks the blocks make (for the message of a call past capacity). */
static size_t sr_blocks_count(const uint32_t *local_idx, const uint32_t *remote_idx,
                              size_t nblocks)
{
    size_t ntasks = 0;
    for (size_t i = 0; i < nblocks; ntasks++)
        i += sr_blocks_run(local_idx, remote_idx, i, nblocks);
    return ntasks;
}

/* Runs of blocks adjacent on both sides, one task each, checked and pushed
 * in one pass: on a failure the caller takes back what was pushed
 * (b->n), so that the call adds all or nothing.  SYMRAIL_ERR_NOMEM: the
 * batch is full (the caller says so). */
static symrail_status_t sr_blocks(const char *fn, struct symrail_batch *b, symrail_xfer_op_t op,
                                  char *local_base, const uint32_t *local_idx,
                                  struct symrail_rseg *rs, uint64_t remote_base,
                                  const uint32_t *remote_idx, size_t nblocks,
                                  uint64_t block_bytes)
{
    for (size_t i = 0; i < nblocks;) {
        size_t run = sr_blocks_run(local_idx, remote_idx, i, nblocks);
        uint64_t len = run * block_bytes;
        /* Indices are 32-bit and block_bytes was bounded: no product wraps. */
        uint64_t roff = remote_base + (uint64_t)remote_idx[i] * block_bytes;
        char *local = local_base + (uint64_t)local_idx[i] * block_bytes;
        if (sr_unlikely(!sr_task_ok(op, local, rs, roff, len))) {
            symrail_status_t st = sr_task_check(fn, op, local, rs, roff, len, b->n);
            sr_error("%s: (blocks %zu.. with local index %u, remote index %u)", fn, i,
                     local_idx[i], remote_idx[i]);
            return st != SYMRAIL_OK ? st : SYMRAIL_ERR_INVALID;
        }
        if (sr_unlikely(b->n == b->cap))
            return SYMRAIL_ERR_NOMEM;
        sr_batch_push(b, op, local, rs, roff, len);
        i += run;
    }
    return SYMRAIL_OK;
}

static symrail_status_t sr_api_layers(const char *fn, symrail_batch_t batch,
                                      symrail_xfer_op_t op, void *local_base,
                                      size_t local_stride, symrail_rseg_t rseg,
                                      uint64_t remote_base, size_t remote_stride, size_t nlayers,
                                      const uint32_t *local_idx, const uint32_t *remote_idx,
                                      size_t nblocks, size_t block_bytes, size_t *first_p,
                                      size_t *ntasks_p)
{
    struct symrail_batch *b;
    struct symrail_rseg *rs;
    if (!sr_batch_adding(fn, batch, rseg, &b, &rs))
        return SYMRAIL_ERR_INVALID;
    /* Bounds that keep every offset below 2^64 before it is checked
     * against the segment. */
    if (nblocks == 0 || nlayers == 0 || block_bytes == 0 || block_bytes >= (1ull << 31) ||
        (local_idx == NULL || remote_idx == NULL) || nblocks >= (1ull << 32) ||
        remote_base >= SR_DATA_BIT || local_stride >= (1ull << 40) ||
        remote_stride >= (1ull << 40) || nlayers >= (1u << 20)) {
        sr_error("%s: %s", fn, nblocks == 0 ? "nblocks is 0" : nlayers == 0 ? "nlayers is 0"
                 : block_bytes == 0 ? "block_bytes is 0"
                 : (local_idx == NULL || remote_idx == NULL) ? "an index array is NULL"
                 : "block_bytes, nblocks, remote_base, a stride or nlayers is too large");
        return SYMRAIL_ERR_INVALID;
    }
    /* All or nothing: a failure takes back the tasks this call pushed. */
    size_t first = b->n;
    for (size_t l = 0; l < nlayers; l++) {
        symrail_status_t st = sr_blocks(fn, b, op, (char *)local_base + l * local_stride,
                                        local_idx, rs, remote_base + l * remote_stride,
                                        remote_idx, nblocks, block_bytes);
        if (sr_unlikely(st != SYMRAIL_OK)) {
            b->n = first;
            if (st == SYMRAIL_ERR_NOMEM) {
                sr_batch_room(fn, b, sr_blocks_count(local_idx, remote_idx, nblocks) * nlayers);
                st = SYMRAIL_ERR_INVALID;
            }
            return st;
        }
    }
    size_t total = b->n - first;
    if (first_p)
        *first_p = first;
    sr_batch_hold_rseg(rs, total);
    if (ntasks_p)
        *ntasks_p = total;
    return SYMRAIL_OK;
}

symrail_status_t symrail_batch_add_blocks(symrail_batch_t batch, symrail_xfer_op_t op,
                                          void *local_base, const uint32_t *local_idx,
                                          symrail_rseg_t rseg, uint64_t remote_base,
                                          const uint32_t *remote_idx, size_t nblocks,
                                          size_t block_bytes, size_t *first_p,
                                          size_t *ntasks_p)
{
    return sr_api_layers("symrail_batch_add_blocks", batch, op, local_base, 0, rseg,
                         remote_base, 0, 1, local_idx, remote_idx, nblocks, block_bytes,
                         first_p, ntasks_p);
}

symrail_status_t symrail_batch_add_layers(symrail_batch_t batch, symrail_xfer_op_t op,
                                          void *local_base, size_t local_stride,
                                          symrail_rseg_t rseg, uint64_t remote_base,
                                          size_t remote_stride, size_t nlayers,
                                          const uint32_t *local_idx, const uint32_t *remote_idx,
                                          size_t nblocks, size_t block_bytes, size_t *first_p,
                                          size_t *ntasks_p)
{
    return sr_api_layers("symrail_batch_add_layers", batch, op, local_base, local_stride, rseg,
                         remote_base, remote_stride, nlayers, local_idx, remote_idx, nblocks,
                         block_bytes, first_p, ntasks_p);
}

static symrail_status_t sr_api_submit(const char *fn, symrail_batch_t batch, int pe,
                                      uint32_t tag, const void *payload, size_t len)
{
    struct symrail_batch *b = sr_batch_of(fn, batch);
    if (b == NULL || !sr_batch_open(fn, b))
        return SYMRAIL_ERR_INVALID;
    return sr_batch_submit(b, pe, tag, payload, len);
}

symrail_status_t symrail_batch_submit(symrail_batch_t batch)
{
    return sr_api_submit("symrail_batch_submit", batch, -1, 0, NULL, 0);
}

symrail_status_t symrail_batch_submit_notify(symrail_batch_t batch, int pe, uint32_t tag,
                                             const void *payload, size_t len)
{
    static const char fn[] = "symrail_batch_submit_notify";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_peer_ok(fn, pe))
        return SYMRAIL_ERR_INVALID;
    if (len > SYMRAIL_NOTIFY_MAX_PAYLOAD || (payload == NULL && len != 0) ||
        tag >= SYMRAIL_NOTIFY_TAG_RESERVED) {
        sr_error("%s: %s", fn, tag >= SYMRAIL_NOTIFY_TAG_RESERVED ? "tag is a reserved one"
                 : len > SYMRAIL_NOTIFY_MAX_PAYLOAD ? "len is over SYMRAIL_NOTIFY_MAX_PAYLOAD"
                 : "payload is NULL");
        return SYMRAIL_ERR_INVALID;
    }
    return sr_api_submit(fn, batch, pe, tag, payload, len);
}

symrail_status_t symrail_batch_status(symrail_batch_t batch, size_t task,
                                      symrail_task_state_t *state_p, size_t *bytes_p)
{
    static const char fn[] = "symrail_batch_status";
    struct symrail_batch *b = sr_batch_of(fn, batch);
    if (b == NULL)
        return SYMRAIL_ERR_INVALID;
    if (task != SYMRAIL_BATCH_ALL && task >= b->n) {
        sr_error("%s: task %zu is not in the batch (%zu tasks)", fn, task, b->n);
        return SYMRAIL_ERR_INVALID;
    }
    int done = sr_batch_pump(b) && sr_batch_state(b) != SR_BATCH_OPEN;
    symrail_task_state_t state;
    size_t bytes = 0;
    symrail_status_t st;
    if (task == SYMRAIL_BATCH_ALL) {
        st = done ? b->first_err : SYMRAIL_OK;
        state = !done ? SYMRAIL_TASK_PENDING
                      : st == SYMRAIL_OK ? SYMRAIL_TASK_DONE : SYMRAIL_TASK_FAILED;
        bytes = (size_t)__atomic_load_n(&b->done_bytes, __ATOMIC_RELAXED);
    } else {
        const sr_task_t *t = &b->tasks[task];
        state = (symrail_task_state_t)__atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
        st = state == SYMRAIL_TASK_FAILED ? t->req.status : SYMRAIL_OK;
        bytes = state == SYMRAIL_TASK_DONE ? t->len : 0;
    }
    if (state_p)
        *state_p = state;
    if (bytes_p)
        *bytes_p = bytes;
    return st;
}

symrail_status_t symrail_batch_wait(symrail_batch_t batch, int timeout_ms)
{
    struct symrail_batch *b = sr_batch_of("symrail_batch_wait", batch);
    if (b == NULL)
        return SYMRAIL_ERR_INVALID;
    if (sr_batch_state(b) == SR_BATCH_OPEN) {
        sr_error("symrail_batch_wait: the batch is not submitted");
        return SYMRAIL_ERR_STATE;
    }
    return sr_batch_wait(b, timeout_ms);
}

symrail_status_t symrail_batch_cancel(symrail_batch_t batch)
{
    struct symrail_batch *b = sr_batch_of("symrail_batch_cancel", batch);
    return b ? sr_batch_cancel(b) : SYMRAIL_ERR_INVALID;
}

/* reset and free: only a batch that is not in flight. */
static symrail_status_t sr_batch_idle_do(const char *fn, symrail_batch_t batch,
                                         void (*what)(struct symrail_batch *b))
{
    struct symrail_batch *b = sr_batch_of(fn, batch);
    if (b == NULL)
        return SYMRAIL_ERR_INVALID;
    if (sr_batch_state(b) != SR_BATCH_OPEN && !sr_batch_pump(b)) {
        sr_error("%s: the batch is in flight (wait for it or cancel it first)", fn);
        return SYMRAIL_ERR_STATE;
    }
    what(b);
    return SYMRAIL_OK;
}

symrail_status_t symrail_batch_reset(symrail_batch_t batch)
{
    return sr_batch_idle_do("symrail_batch_reset", batch, sr_batch_clear);
}

symrail_status_t symrail_batch_free(symrail_batch_t batch)
{
    return sr_batch_idle_do("symrail_batch_free", batch, sr_batch_delete);
}
