/*
 * Segments by name: symrail_seg_publish / symrail_seg_lookup.
 *
 * A name is published through the launcher's PMIx server (PMIx_Publish,
 * scoped to the job) where it has one, and always in this PE's own table,
 * which peers ask through notifications with a reserved tag where the
 * launcher cannot help (a singleton, a launcher without publish support).
 * PMIx keys are "symrail.seg.<pe>.<name>", for lookups on one PE, and
 * "symrail.seg.<name>" for lookups on any PE (the first PE to publish a
 * name holds that key).
 */
#include "config.h"
#include "core/notify.h"
#include "core/region.h"
#include "core/rt.h"
#include "util/log.h"
#include "util/sys.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SR_NAME_MAX      SR_SEG_NAME_MAX
#define SR_TAG_LOOKUP    (SYMRAIL_NOTIFY_TAG_RESERVED + 0x10)
#define SR_TAG_FOUND     (SYMRAIL_NOTIFY_TAG_RESERVED + 0x11)
/* How often a lookup of a name not yet published asks again. */
#define SR_LOOKUP_RETRY_NS (5u * 1000u * 1000u)

typedef struct sr_name {
    struct sr_name *next;
    char            name[SR_NAME_MAX + 1];
    symrail_seg_t   seg;
    int             pmix;  /* also published through PMIx */
} sr_name_t;

typedef struct {
    uint64_t id;
    char     name[SR_NAME_MAX + 1];
} sr_lookup_req_t;

static pthread_mutex_t sr_name_lock = PTHREAD_MUTEX_INITIALIZER;
static sr_name_t *sr_names;
static int sr_name_handler_on;
static uint64_t sr_lookup_ids;

static void sr_name_key(char *buf, size_t len, int pe, const char *name)
{
    if (pe >= 0)
        snprintf(buf, len, "symrail.seg.%d.%s", pe, name);
    else
        snprintf(buf, len, "symrail.seg.%s", name);
}

static void sr_name_unpublish_pmix(const char *name)
{
    char key[SR_NAME_MAX + 64];
    sr_name_key(key, sizeof(key), sr_rt.my_pe, name);
    sr_boot_unpublish(sr_rt.boot, key);
    sr_name_key(key, sizeof(key), -1, name);
    sr_boot_unpublish(sr_rt.boot, key);
}

/* A peer asks for a name: the descriptor, or status SYMRAIL_ERR_AGAIN when
 * this PE has not published it (yet). */
static symrail_status_t sr_name_answer(void *arg, int src_pe, uint32_t tag,
                                       symrail_status_t status, const void *payload,
                                       size_t len)
{
    (void)arg, (void)tag, (void)status;
    sr_lookup_req_t req;
    if (len < sizeof(req.id) + 1 || len > sizeof(req))
        return SYMRAIL_OK;  /* not ours to answer: dropped */
    memset(&req, 0, sizeof(req));
    memcpy(&req, payload, len);
    req.name[SR_NAME_MAX] = '\0';
    unsigned char reply[sizeof(uint64_t) + SYMRAIL_SEG_DESC_MAX];
    size_t dlen = SYMRAIL_SEG_DESC_MAX;
    symrail_status_t st = SYMRAIL_ERR_AGAIN;
    memcpy(reply, &req.id, sizeof(req.id));
    pthread_mutex_lock(&sr_name_lock);
    for (sr_name_t *n = sr_names; n; n = n->next) {
        if (strcmp(n->name, req.name) == 0) {
            st = sr_region_export((sr_region_t *)(void *)n->seg, reply + sizeof(req.id), &dlen);
            break;
        }
    }
    pthread_mutex_unlock(&sr_name_lock);
    if (st != SYMRAIL_OK)
        dlen = 0;
    /* No room at the asker now: keep the question for the next progress. */
    return sr_notify_send_msg(src_pe, SR_TAG_FOUND, st, reply, sizeof(req.id) + dlen, 0);
}

static symrail_status_t sr_name_handler(void)
{
    if (__atomic_load_n(&sr_name_handler_on, __ATOMIC_ACQUIRE))
        return SYMRAIL_OK;
    symrail_status_t st = sr_notify_handler_set(SR_TAG_LOOKUP, sr_name_answer, NULL);
    if (st == SYMRAIL_OK)
        __atomic_store_n(&sr_name_handler_on, 1, __ATOMIC_RELEASE);
    return st;
}

symrail_status_t sr_seg_publish(symrail_seg_t seg, const char *name)
{
    symrail_status_t st = sr_name_handler();
    if (st != SYMRAIL_OK)
        return st;
    sr_name_t *n = calloc(1, sizeof(*n));
    if (n == NULL)
        return SYMRAIL_ERR_NOMEM;
    snprintf(n->name, sizeof(n->name), "%s", name);
    n->seg = seg;
    pthread_mutex_lock(&sr_name_lock);
    for (sr_name_t *o = sr_names; o; o = o->next) {
        if (strcmp(o->name, name) == 0) {
            pthread_mutex_unlock(&sr_name_lock);
            free(n);
            sr_error("symrail_seg_publish: this PE has published '%s' already", name);
            return SYMRAIL_ERR_STATE;
        }
    }
    n->next = sr_names;
    sr_names = n;
    pthread_mutex_unlock(&sr_name_lock);

    unsigned char desc[SYMRAIL_SEG_DESC_MAX];
    size_t dlen = sizeof(desc);
    st = sr_region_export((sr_region_t *)(void *)seg, desc, &dlen);
    if (st != SYMRAIL_OK)
        return st;
    char key[SR_NAME_MAX + 64];
    sr_name_key(key, sizeof(key), sr_rt.my_pe, name);
    st = sr_rt.env.test_names_local ? SYMRAIL_ERR_UNSUPPORTED
                                    : sr_boot_publish(sr_rt.boot, key, desc, dlen);
    if (st == SYMRAIL_OK) {
        n->pmix = 1;
        /* The name for lookups on any PE: the first PE to publish it has it. */
        sr_name_key(key, sizeof(key), -1, name);
        if (sr_boot_publish(sr_rt.boot, key, desc, dlen) != SYMRAIL_OK)
            sr_debug("symrail_seg_publish: '%s' is published by another PE already", name);
    } else if (st != SYMRAIL_ERR_UNSUPPORTED) {
        sr_warn("symrail_seg_publish: the launcher did not take '%s' (%s); peers find it "
                "through this PE", name, symrail_strerror(st));
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_seg_unpublish(const char *name)
{
    sr_name_t **pp, *n = NULL;
    pthread_mutex_lock(&sr_name_lock);
    for (pp = &sr_names; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->name, name) == 0) {
            n = *pp;
            *pp = n->next;
            break;
        }
    }
    pthread_mutex_unlock(&sr_name_lock);
    if (n == NULL) {
        sr_error("symrail_seg_unpublish: this PE has not published '%s'", name);
        return SYMRAIL_ERR_INVALID;
    }
    if (n->pmix)
        sr_name_unpublish_pmix(name);
    free(n);
    return SYMRAIL_OK;
}

/* Forgets the names of a segment that goes, at the launcher too: a lookup
 * must not find a descriptor of memory that is no longer registered. */
void sr_seg_names_drop(symrail_seg_t seg)
{
    sr_name_t *gone = NULL;
    pthread_mutex_lock(&sr_name_lock);
    for (sr_name_t **pp = &sr_names; *pp;) {
        sr_name_t *n = *pp;
        if (n->seg == seg) {
            *pp = n->next;
            n->next = gone;
            gone = n;
        } else {
            pp = &n->next;
        }
    }
    pthread_mutex_unlock(&sr_name_lock);
    while (gone) {
        sr_name_t *n = gone;
        gone = n->next;
        if (n->pmix)
            sr_name_unpublish_pmix(n->name);
        free(n);
    }
}

/* Asks PE `pe` (or every PE: -1) through notifications until one answers
 * with a descriptor or the time is up. */
static symrail_status_t sr_lookup_ask(int pe, const char *name, uint64_t timeout_ms,
                                      void *desc, size_t *dlen_p)
{
    sr_lookup_req_t req;
    memset(&req, 0, sizeof(req));
    req.id = __atomic_add_fetch(&sr_lookup_ids, 1, __ATOMIC_RELAXED) |
             ((uint64_t)sr_rt.my_pe << 40);
    snprintf(req.name, sizeof(req.name), "%s", name);
    size_t rlen = sizeof(req.id) + strlen(req.name) + 1;
    uint64_t start = sr_time_ns(), deadline = start + timeout_ms * 1000000ull;
    for (;;) {
        int asked = 0;
        for (int p = 0; p < sr_rt.n_pes; p++) {
            if (pe >= 0 && p != pe)
                continue;
            symrail_status_t st = sr_notify_send_msg(p, SR_TAG_LOOKUP, SYMRAIL_OK, &req, rlen, 1);
            if (st != SYMRAIL_OK)
                return st;
            asked++;
        }
        /* Every PE asked answers once: found, or not (yet). */
        while (asked > 0) {
            uint64_t now = sr_time_ns();
            int left = now >= deadline ? 0 : (int)((deadline - now) / 1000000ull) + 1;
            symrail_notify_t m;
            symrail_status_t st = sr_notify_recv(0, SR_TAG_FOUND, left, 1, &m);
            if (st != SYMRAIL_OK)
                return st;
            uint64_t id;
            if (m.len < sizeof(id))
                continue;
            memcpy(&id, m.payload, sizeof(id));
            if (id != req.id)
                continue;  /* the answer to an earlier lookup that gave up */
            asked--;
            if (m.status == SYMRAIL_OK && m.len - sizeof(id) <= *dlen_p) {
                *dlen_p = m.len - sizeof(id);
                memcpy(desc, m.payload + sizeof(id), *dlen_p);
                return SYMRAIL_OK;
            }
        }
        if (sr_time_ns() >= deadline)
            return SYMRAIL_ERR_TIMEOUT;
        struct timespec ts = { 0, SR_LOOKUP_RETRY_NS };
        nanosleep(&ts, NULL);
    }
}

symrail_status_t sr_seg_lookup(int pe, const char *name, int timeout_ms,
                               struct symrail_rseg **rseg_p)
{
    uint64_t ms = timeout_ms < 0 ? sr_rt.env.op_timeout : (uint64_t)timeout_ms;
    symrail_status_t st = sr_name_handler();
    if (st != SYMRAIL_OK)
        return st;
    if (pe == sr_rt.my_pe || pe == SYMRAIL_ANY_PE) {
        symrail_seg_t mine = NULL;
        pthread_mutex_lock(&sr_name_lock);
        for (sr_name_t *n = sr_names; n && !mine; n = n->next)
            if (strcmp(n->name, name) == 0)
                mine = n->seg;
        pthread_mutex_unlock(&sr_name_lock);
        if (mine) {
            unsigned char desc[SYMRAIL_SEG_DESC_MAX];
            size_t dlen = sizeof(desc);
            st = sr_region_export((sr_region_t *)(void *)mine, desc, &dlen);
            return st == SYMRAIL_OK ? sr_region_import(desc, dlen, rseg_p) : st;
        }
    }
    char key[SR_NAME_MAX + 64];
    sr_name_key(key, sizeof(key), pe, name);
    void *val = NULL;
    size_t vlen = 0;
    st = sr_rt.env.test_names_local ? SYMRAIL_ERR_UNSUPPORTED
                                    : sr_boot_lookup(sr_rt.boot, key, ms, &val, &vlen);
    if (st == SYMRAIL_OK) {
        st = sr_region_import(val, vlen, rseg_p);
        free(val);
        return st;
    }
    if (st != SYMRAIL_ERR_UNSUPPORTED) {
        if (st == SYMRAIL_ERR_TIMEOUT)
            sr_error("symrail_seg_lookup: '%s' was not published on %s within %llu ms", name,
                     pe >= 0 ? "that PE" : "any PE", (unsigned long long)ms);
        return st;
    }
    unsigned char desc[SYMRAIL_SEG_DESC_MAX];
    size_t dlen = sizeof(desc);
    st = sr_lookup_ask(pe, name, ms, desc, &dlen);
    if (st == SYMRAIL_ERR_TIMEOUT)
        sr_error("symrail_seg_lookup: '%s' was not published on %s within %llu ms", name,
                 pe >= 0 ? "that PE" : "any PE", (unsigned long long)ms);
    if (st != SYMRAIL_OK)
        return st;
    return sr_region_import(desc, dlen, rseg_p);
}

void sr_seg_names_fini(void)
{
    pthread_mutex_lock(&sr_name_lock);
    while (sr_names) {
        sr_name_t *n = sr_names;
        sr_names = n->next;
        free(n);
    }
    pthread_mutex_unlock(&sr_name_lock);
    if (__atomic_exchange_n(&sr_name_handler_on, 0, __ATOMIC_ACQ_REL))
        sr_notify_handler_set(SR_TAG_LOOKUP, NULL, NULL);
}
