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
    m->next = NULL;
    m->src = src;
    m->tag = tag;
    m->len = (uint32_t)len;
    m->flags = flags;
    if (len)
        memcpy(m->payload, payload, len);
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    /* Atomic: a waiter may peek at the count without the queue's lock. */
    __atomic_store_n(&q->count, q->count + 1, __ATOMIC_RELAXED);
    return SYMRAIL_OK;
}

sr_msg_t *sr_msgq_pop(sr_msgq_t *q)
{
    sr_msg_t *m = q->head;
    if (m == NULL)
        return NULL;
    q->head = m->next;
    if (q->head == NULL)
        q->tail = NULL;
    __atomic_store_n(&q->count, q->count - 1, __ATOMIC_RELAXED);
    return m;
}

void sr_msgq_clear(sr_msgq_t *q)
{
    sr_msg_t *m;
    while ((m = sr_msgq_pop(q)) != NULL)
        free(m);
}
