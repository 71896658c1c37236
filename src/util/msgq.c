#include "config.h"
#include "util/msgq.h"

#include <stdlib.h>
#include <string.h>

symrail_status_t sr_msgq_push(sr_msgq_t *q, int src, uint32_t tag, const void *payload,
                              size_t len)
{
    return sr_msgq_push_flags(q, src, tag, 0, payload, len);
}

symrail_status_t sr_msgq_push_flags(sr_msgq_t *q, int src, uint32_t tag, uint32_t flags,
                                    const void *payload, size_t len)
{
    sr_msg_t *m = malloc(sizeof(*m) + len);
    if (m == NULL)
        return SYMRAIL_ERR_NOMEM;
    *m = (sr_msg_t){ .src = src, .tag = tag, .len = (uint32_t)len, .flags = flags,
                     .have = (uint32_t)len };
    if (len)
        memcpy(m->payload, payload, len);
    sr_msgq_link(q, m, 0);
    return SYMRAIL_OK;
}

void sr_msgq_link(sr_msgq_t *q, sr_msg_t *m, int front)
{
    if (front) {
        m->next = q->head;
        q->head = m;
        if (q->tail == NULL)
            q->tail = m;
    } else {
        m->next = NULL;
        if (q->tail)
            q->tail->next = m;
        else
            q->head = m;
        q->tail = m;
    }
    /* Atomic: a waiter may peek at the count without the queue's lock. */
    __atomic_store_n(&q->count, q->count + 1, __ATOMIC_RELAXED);
}

void sr_msgq_unlink(sr_msgq_t *q, sr_msg_t *prev, sr_msg_t *m)
{
    if (prev)
        prev->next = m->next;
    else
        q->head = m->next;
    if (q->tail == m)
        q->tail = prev;
    __atomic_store_n(&q->count, q->count - 1, __ATOMIC_RELAXED);
}

sr_msg_t *sr_msgq_pop(sr_msgq_t *q)
{
    sr_msg_t *m = q->head;
    if (m != NULL)
        sr_msgq_unlink(q, NULL, m);
    return m;
}

void sr_msgq_clear(sr_msgq_t *q)
{
    sr_msg_t *m;
    while ((m = sr_msgq_pop(q)) != NULL)
        free(m);
}
