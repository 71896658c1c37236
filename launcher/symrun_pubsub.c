/*
 * The job's PMIx data store: values the ranks publish (PMIx_Publish), found
 * by lookups that may wait for them (PMIX_WAIT, bounded by PMIX_TIMEOUT),
 * removed by unpublish, by the publisher's end (PMIX_PERSIST_PROC) and at
 * the end of the job.  The upcalls run on the PMIx thread, the purge of an
 * exited rank on the main loop, the expiry of waiting lookups on a thread
 * of its own; one lock covers the store.  Answers are given outside it.
 */
#define _GNU_SOURCE

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sr_symrun_name {
    struct sr_symrun_name *next;
    pmix_proc_t owner;
    pmix_data_range_t range;
    pmix_persistence_t persist;
    pmix_key_t key;
    pmix_value_t value;
} sr_symrun_name_t;

typedef struct sr_symrun_lookup {
    struct sr_symrun_lookup *next;
    pmix_proc_t proc;
    char **keys;        /* NULL-terminated copies */
    int64_t deadline;   /* sr_symrun_now_ns; 0: none */
    pmix_lookup_cbfunc_t cbfunc;
    void *cbdata;
    /* Filled when answered: */
    pmix_status_t status;
    pmix_pdata_t *pdata;
    size_t npdata;
} sr_symrun_lookup_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* to the timer: a new deadline, or stop */
    pthread_t timer;
    bool timer_up;
    bool stopping;
    pmix_nspace_t nspace;
    sr_symrun_name_t *names;
    sr_symrun_lookup_t *pending;
} sr_pubsub = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* One job on one node: every range wider than the namespace is the job. */
static bool sr_symrun_name_visible(const sr_symrun_name_t *n, const pmix_proc_t *proc)
{
    switch (n->range) {
    case PMIX_RANGE_PROC_LOCAL:
        return PMIX_CHECK_PROCID(&n->owner, proc);
    case PMIX_RANGE_NAMESPACE:
        return PMIX_CHECK_NSPACE(n->owner.nspace, proc->nspace);
    default:
        return true;
    }
}

static sr_symrun_name_t **sr_symrun_name_find(const char *key, const pmix_proc_t *proc)
{
    for (sr_symrun_name_t **pp = &sr_pubsub.names; *pp != NULL; pp = &(*pp)->next)
        if (PMIX_CHECK_KEY(*pp, key) && sr_symrun_name_visible(*pp, proc))
            return pp;
    return NULL;
}

static void sr_symrun_name_free(sr_symrun_name_t *n)
{
    PMIX_VALUE_DESTRUCT(&n->value);
    free(n);
}

static void sr_symrun_keys_free(char **keys)
{
    for (size_t i = 0; keys != NULL && keys[i] != NULL; i++)
        free(keys[i]);
    free(keys);
}

static void sr_symrun_lookup_free(sr_symrun_lookup_t *lk)
{
    sr_symrun_keys_free(lk->keys);
    if (lk->pdata != NULL)
        PMIX_PDATA_FREE(lk->pdata, lk->npdata);
    free(lk);
}

/*
 * Under the lock: the values of lk's keys that lk's process may see, into
 * lk->pdata. A waiting lookup is answered only once all of them are there;
 * one that does not wait gets what there is. Returns false (and leaves lk
 * as it was) when the lookup is to wait on.
 */
static bool sr_symrun_lookup_fill(sr_symrun_lookup_t *lk, bool all)
{
    size_t nkeys = 0, found = 0;

    for (; lk->keys[nkeys] != NULL; nkeys++)
        if (sr_symrun_name_find(lk->keys[nkeys], &lk->proc) != NULL)
            found++;
    if (found == 0 || (all && found < nkeys)) {
        if (all)
            return false;
        lk->status = PMIX_ERR_NOT_FOUND;
        return true;
    }
    PMIX_PDATA_CREATE(lk->pdata, found);
    if (lk->pdata == NULL) {
        lk->status = PMIX_ERR_NOMEM;
        return true;
    }
    lk->npdata = found;
    lk->status = PMIX_SUCCESS;
    for (size_t i = 0, j = 0; i < nkeys; i++) {
        sr_symrun_name_t **pp = sr_symrun_name_find(lk->keys[i], &lk->proc);
        if (pp == NULL)
            continue;
        sr_symrun_name_t *n = *pp;
        PMIX_LOAD_PROCID(&lk->pdata[j].proc, n->owner.nspace, n->owner.rank);
        PMIX_LOAD_KEY(lk->pdata[j].key, n->key);
        if (PMIx_Value_xfer(&lk->pdata[j].value, &n->value) != PMIX_SUCCESS)
            lk->status = PMIX_ERR_NOMEM;
        j++;
        if (n->persist == PMIX_PERSIST_FIRST_READ) {
            *pp = n->next;
            sr_symrun_name_free(n);
        }
    }
    return true;
}

static void sr_symrun_lookup_answer(sr_symrun_lookup_t *lk)
{
    lk->cbfunc(lk->status, lk->pdata, lk->npdata, lk->cbdata);
    sr_symrun_lookup_free(lk);
}

/* Under the lock: moves the waiting lookups that `pick` selects to *out. */
static void sr_symrun_pending_take(bool (*pick)(sr_symrun_lookup_t *, const void *),
                                   const void *arg, sr_symrun_lookup_t **out)
{
    sr_symrun_lookup_t **pp = &sr_pubsub.pending;
    while (*pp != NULL) {
        sr_symrun_lookup_t *lk = *pp;
        if (pick(lk, arg)) {
            *pp = lk->next;
            lk->next = *out;
            *out = lk;
        } else {
            pp = &lk->next;
        }
    }
}

static void sr_symrun_answer_all(sr_symrun_lookup_t *list)
{
    while (list != NULL) {
        sr_symrun_lookup_t *next = list->next;
        sr_symrun_lookup_answer(list);
        list = next;
    }
}

static bool sr_symrun_pick_complete(sr_symrun_lookup_t *lk, const void *arg)
{
    (void)arg;
    return sr_symrun_lookup_fill(lk, true);
}

static bool sr_symrun_pick_expired(sr_symrun_lookup_t *lk, const void *arg)
{
    int64_t now = *(const int64_t *)arg;
    if (lk->deadline == 0 || lk->deadline > now)
        return false;
    lk->status = PMIX_ERR_TIMEOUT;
    return true;
}

static bool sr_symrun_pick_rank(sr_symrun_lookup_t *lk, const void *arg)
{
    if (lk->proc.rank != *(const pmix_rank_t *)arg)
        return false;
    lk->status = PMIX_ERR_TIMEOUT;
    return true;
}

static bool sr_symrun_pick_any(sr_symrun_lookup_t *lk, const void *arg)
{
    (void)arg;
    lk->status = PMIX_ERR_TIMEOUT;
    return true;
}

/* Publish directives are the PMIx attributes; everything else is data. */
static bool sr_symrun_is_directive(const pmix_info_t *info)
{
    return strncmp(info->key, "pmix", 4) == 0;
}

/* Under the lock: a key of another process that overlaps the new scope. */
static bool sr_symrun_publish_clash(const pmix_proc_t *proc, const char *key)
{
    for (sr_symrun_name_t *n = sr_pubsub.names; n != NULL; n = n->next)
        if (PMIX_CHECK_KEY(n, key) && !PMIX_CHECK_PROCID(&n->owner, proc) &&
            sr_symrun_name_visible(n, proc))
            return true;
    return false;
}

static pmix_status_t sr_symrun_publish_locked(const pmix_proc_t *proc, const pmix_info_t info[],
                                              size_t ninfo, pmix_data_range_t range,
                                              pmix_persistence_t persist)
{
    for (size_t i = 0; i < ninfo; i++)
        if (!sr_symrun_is_directive(&info[i]) && sr_symrun_publish_clash(proc, info[i].key))
            return PMIX_ERR_DUPLICATE_KEY;
    for (size_t i = 0; i < ninfo; i++) {
        if (sr_symrun_is_directive(&info[i]))
            continue;
        /* The publisher's own key again: the new value replaces the old. */
        sr_symrun_name_t *n = NULL;
        for (n = sr_pubsub.names; n != NULL; n = n->next)
            if (PMIX_CHECK_KEY(n, info[i].key) && PMIX_CHECK_PROCID(&n->owner, proc))
                break;
        if (n != NULL) {
            PMIX_VALUE_DESTRUCT(&n->value);
        } else {
            n = calloc(1, sizeof(*n));
            if (n == NULL)
                return PMIX_ERR_NOMEM;
            PMIX_LOAD_PROCID(&n->owner, proc->nspace, proc->rank);
            PMIX_LOAD_KEY(n->key, info[i].key);
            n->next = sr_pubsub.names;
            sr_pubsub.names = n;
        }
        n->range = range;
        n->persist = persist;
        if (PMIx_Value_xfer(&n->value, &info[i].value) != PMIX_SUCCESS) {
            PMIX_VALUE_CONSTRUCT(&n->value);
            return PMIX_ERR_NOMEM;
        }
    }
    return PMIX_SUCCESS;
}

pmix_status_t sr_symrun_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    /* PMIx's defaults for publish. */
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    pmix_persistence_t persist = PMIX_PERSIST_SESSION;
    sr_symrun_lookup_t *ready = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_RANGE) && info[i].value.type == PMIX_DATA_RANGE)
            range = info[i].value.data.range;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE) &&
                 info[i].value.type == PMIX_PERSIST)
            persist = info[i].value.data.persist;
    }
    pthread_mutex_lock(&sr_pubsub.lock);
    pmix_status_t rc = sr_symrun_publish_locked(proc, info, ninfo, range, persist);
    if (rc == PMIX_SUCCESS)
        sr_symrun_pending_take(sr_symrun_pick_complete, NULL, &ready);
    pthread_mutex_unlock(&sr_pubsub.lock);
    sr_symrun_answer_all(ready);
    if (cbfunc != NULL)
        cbfunc(rc, cbdata);
    return PMIX_SUCCESS;
}

static bool sr_symrun_info_wait(const pmix_info_t *info)
{
    /* A flag, or (PMIx's definition) how many keys to wait for, 0 = all:
     * either way this store waits for all. */
    return info->value.type != PMIX_BOOL || info->value.data.flag;
}

pmix_status_t sr_symrun_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    bool wait = false;
    int timeout_s = 0;
    size_t nkeys = 0;
    sr_symrun_lookup_t *lk;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT))
            wait = sr_symrun_info_wait(&info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT) && info[i].value.type == PMIX_INT)
            timeout_s = info[i].value.data.integer;
    }
    while (keys != NULL && keys[nkeys] != NULL)
        nkeys++;
    lk = calloc(1, sizeof(*lk));
    if (lk == NULL || nkeys == 0)
        goto err_lk;
    lk->keys = calloc(nkeys + 1, sizeof(*lk->keys));
    if (lk->keys == NULL)
        goto err_lk;
    for (size_t i = 0; i < nkeys; i++)
        if ((lk->keys[i] = strdup(keys[i])) == NULL)
            goto err_lk;
    PMIX_LOAD_PROCID(&lk->proc, proc->nspace, proc->rank);
    lk->cbfunc = cbfunc;
    lk->cbdata = cbdata;
    if (timeout_s > 0)
        lk->deadline = sr_symrun_now_ns() + (int64_t)timeout_s * 1000000000;

    pthread_mutex_lock(&sr_pubsub.lock);
    if (!sr_symrun_lookup_fill(lk, wait)) {
        if (sr_pubsub.stopping) {
            lk->status = PMIX_ERR_TIMEOUT;
        } else {
            lk->next = sr_pubsub.pending;
            sr_pubsub.pending = lk;
            pthread_cond_signal(&sr_pubsub.cond);
            lk = NULL;
        }
    }
    pthread_mutex_unlock(&sr_pubsub.lock);
    if (lk != NULL)
        sr_symrun_lookup_answer(lk);
    return PMIX_SUCCESS;

err_lk:
    if (lk != NULL)
        sr_symrun_lookup_free(lk);
    cbfunc(nkeys == 0 ? PMIX_ERR_BAD_PARAM : PMIX_ERR_NOMEM, NULL, 0, cbdata);
    return PMIX_SUCCESS;
}

static bool sr_symrun_keys_have(char **keys, const char *key)
{
    for (size_t i = 0; keys[i] != NULL; i++)
        if (strncmp(keys[i], key, PMIX_MAX_KEYLEN) == 0)
            return true;
    return false;
}

/* A process takes back only its own keys; no keys means all of them. */
pmix_status_t sr_symrun_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)info;
    (void)ninfo;
    pthread_mutex_lock(&sr_pubsub.lock);
    sr_symrun_name_t **pp = &sr_pubsub.names;
    while (*pp != NULL) {
        sr_symrun_name_t *n = *pp;
        if (PMIX_CHECK_PROCID(&n->owner, proc) &&
            (keys == NULL || keys[0] == NULL || sr_symrun_keys_have(keys, n->key))) {
            *pp = n->next;
            sr_symrun_name_free(n);
        } else {
            pp = &n->next;
        }
    }
    pthread_mutex_unlock(&sr_pubsub.lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* A rank that finalized or exited: its PMIX_PERSIST_PROC keys go, and its
 * waiting lookups end (a client that gave up on one may still have it). */
void sr_symrun_pubsub_purge(pmix_rank_t rank)
{
    sr_symrun_lookup_t *gone = NULL;

    pthread_mutex_lock(&sr_pubsub.lock);
    sr_symrun_name_t **pp = &sr_pubsub.names;
    while (*pp != NULL) {
        sr_symrun_name_t *n = *pp;
        if (n->owner.rank == rank && PMIX_CHECK_NSPACE(n->owner.nspace, sr_pubsub.nspace) &&
            n->persist == PMIX_PERSIST_PROC) {
            *pp = n->next;
            sr_symrun_name_free(n);
        } else {
            pp = &n->next;
        }
    }
    sr_symrun_pending_take(sr_symrun_pick_rank, &rank, &gone);
    pthread_mutex_unlock(&sr_pubsub.lock);
    sr_symrun_answer_all(gone);
}

static void *sr_symrun_pubsub_timer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&sr_pubsub.lock);
    while (!sr_pubsub.stopping) {
        int64_t now = sr_symrun_now_ns(), next = 0;
        sr_symrun_lookup_t *expired = NULL;

        sr_symrun_pending_take(sr_symrun_pick_expired, &now, &expired);
        if (expired != NULL) {
            pthread_mutex_unlock(&sr_pubsub.lock);
            sr_symrun_answer_all(expired);
            pthread_mutex_lock(&sr_pubsub.lock);
            continue;
        }
        for (sr_symrun_lookup_t *lk = sr_pubsub.pending; lk != NULL; lk = lk->next)
            if (lk->deadline != 0 && (next == 0 || lk->deadline < next))
                next = lk->deadline;
        if (next == 0) {
            pthread_cond_wait(&sr_pubsub.cond, &sr_pubsub.lock);
        } else {
            struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
            pthread_cond_timedwait(&sr_pubsub.cond, &sr_pubsub.lock, &ts);
        }
    }
    pthread_mutex_unlock(&sr_pubsub.lock);
    return NULL;
}

int sr_symrun_pubsub_start(const char *nspace)
{
    pthread_condattr_t attr;

    PMIX_LOAD_NSPACE(sr_pubsub.nspace, nspace);
    pthread_condattr_init(&attr);
    /* sr_symrun_now_ns counts CLOCK_MONOTONIC. */
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&sr_pubsub.cond, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&sr_pubsub.timer, NULL, sr_symrun_pubsub_timer, NULL) != 0) {
        fprintf(stderr, "symrun: cannot start the lookup timer thread\n");
        pthread_cond_destroy(&sr_pubsub.cond);
        return -1;
    }
    sr_pubsub.timer_up = true;
    return 0;
}

/* Before the PMIx server stops: lookups still waiting end, the store goes. */
void sr_symrun_pubsub_stop(void)
{
    sr_symrun_lookup_t *left = NULL;

    if (!sr_pubsub.timer_up)
        return;
    pthread_mutex_lock(&sr_pubsub.lock);
    sr_pubsub.stopping = true;
    pthread_cond_signal(&sr_pubsub.cond);
    sr_symrun_pending_take(sr_symrun_pick_any, NULL, &left);
    while (sr_pubsub.names != NULL) {
        sr_symrun_name_t *n = sr_pubsub.names;
        sr_pubsub.names = n->next;
        sr_symrun_name_free(n);
    }
    pthread_mutex_unlock(&sr_pubsub.lock);
    pthread_join(sr_pubsub.timer, NULL);
    sr_pubsub.timer_up = false;
    pthread_cond_destroy(&sr_pubsub.cond);
    sr_symrun_answer_all(left);
}
