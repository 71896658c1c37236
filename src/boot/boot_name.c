/* Names: publish, unpublish and lookup of small values through the
 * launcher's PMIx data store (PMIx_Publish / PMIx_Lookup). */
#include "config.h"
#include "boot_int.h"
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The application may publish names of its own through the same launcher. */
#define SR_BOOT_NAME_PREFIX "symrail.name:"
/* Polling interval where the launcher answers a waiting lookup at once. */
#define SR_BOOT_NAME_POLL_MAX_MS 50


typedef struct {
    char key[PMIX_MAX_KEYLEN + 1];
} sr_boot_key_t;

static symrail_status_t sr_boot_names_off(sr_boot_t *boot, const char *why)
{
    if (!atomic_exchange(&boot->names_off, 1))
        sr_info("names: %s; names go through symrail's own channel", why);
    return SYMRAIL_ERR_UNSUPPORTED;
}

static int sr_boot_names_missing(pmix_status_t rc)
{
#ifdef PMIX_ERR_NOT_IMPLEMENTED
    if (rc == PMIX_ERR_NOT_IMPLEMENTED)
        return 1;
#endif
    return rc == PMIX_ERR_NOT_SUPPORTED;
}

/* The end of a call that PMIx failed; a launcher without names is said
 * once. */
static symrail_status_t sr_boot_name_failed(sr_boot_t *boot, pmix_status_t rc, const char *call,
                                            const char *key)
{
    if (sr_boot_names_missing(rc)) {
        char why[64];
        snprintf(why, sizeof(why), "the launcher has no %s", call);
        return sr_boot_names_off(boot, why);
    }
    sr_error("names: %s of '%s' failed: %s", call, key, PMIx_Error_string(rc));
    return sr_boot_status(rc);
}

/* What every call checks first; fills the PMIx key. */
static symrail_status_t sr_boot_names_ready(sr_boot_t *boot, const char *key, sr_boot_key_t *full)
{
    size_t n = key != NULL ? strnlen(key, SR_BOOT_NAME_KEY_MAX + 1) : 0;
    if (boot == NULL || n == 0 || n > SR_BOOT_NAME_KEY_MAX) {
        sr_error("names: a name must have 1..%d bytes", SR_BOOT_NAME_KEY_MAX);
        return SYMRAIL_ERR_INVALID;
    }
    if (!boot->pmix_up)
        return sr_boot_names_off(boot, "no launcher (singleton): no PMIx publish/lookup");
    if (atomic_load(&boot->names_off))
        return SYMRAIL_ERR_UNSUPPORTED;
    /* The job's namespace in the key keeps jobs that share a launcher (a
     * PRRTE DVM, an ompi-server) apart. */
    int n_full = snprintf(full->key, sizeof(full->key), "%s%s:%s", SR_BOOT_NAME_PREFIX,
                          boot->myproc.nspace, key);
    if (n_full < 0 || (size_t)n_full >= sizeof(full->key)) {
        sr_error("names: '%s' with the job's namespace '%s' is longer than a PMIx key (%d)",
                 key, boot->myproc.nspace, PMIX_MAX_KEYLEN);
        return SYMRAIL_ERR_INVALID;
    }
    return SYMRAIL_OK;
}

/* PMIx's default range. Open MPI 4.1's mpirun never answers a lookup of a
 * key published with PMIX_RANGE_NAMESPACE (or crashes), so the job scope
 * comes from the key instead. */
static void sr_boot_name_range(pmix_info_t *info)
{
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    PMIX_INFO_LOAD(info, PMIX_RANGE, &range, PMIX_DATA_RANGE);
}

static pmix_status_t sr_boot_unpublish_key(const char *full)
{
    char *keys[2] = {(char *)full, NULL};
    pmix_info_t info;
    sr_boot_name_range(&info);
    pmix_status_t rc = PMIx_Unpublish(keys, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static pmix_status_t sr_boot_lookup_once(const sr_boot_key_t *full, int64_t deadline_ms,
                                         void **val_p, size_t *len_p, pmix_proc_t *owner_p);

/* Some launchers (Open MPI 4.1's mpirun) let a second process publish a
 * key and take it over: the owner is asked first.  Not atomic there; the
 * launchers that check duplicates themselves (symrun) are. */
static bool sr_boot_name_foreign(sr_boot_t *boot, const sr_boot_key_t *full)
{
    pmix_proc_t owner;
    void *val = NULL;
    size_t len = 0;
    if (sr_boot_lookup_once(full, 0, &val, &len, &owner) != PMIX_SUCCESS)
        return false;
    free(val);
    return !PMIX_CHECK_PROCID(&owner, &boot->myproc);
}

/* Adds (on) or drops (!on) a key of ours in the list finalize cleans. */
static void sr_boot_names_track(sr_boot_t *boot, const sr_boot_key_t *full, bool on)
{
    pthread_mutex_lock(&boot->names_lock);
    sr_boot_name_t **pp = &boot->names;
    while (*pp != NULL && strcmp((*pp)->key, full->key) != 0)
        pp = &(*pp)->next;
    if (on && *pp == NULL) {
        sr_boot_name_t *n = calloc(1, sizeof(*n));
        if (n != NULL) {   /* without it, only the cleanup at finalize is lost */
            memcpy(n->key, full->key, sizeof(n->key));
            n->next = boot->names;
            boot->names = n;
        }
    } else if (!on && *pp != NULL) {
        sr_boot_name_t *n = *pp;
        *pp = n->next;
        free(n);
    }
    pthread_mutex_unlock(&boot->names_lock);
}

void sr_boot_names_fini(sr_boot_t *boot)
{
    while (boot->names != NULL) {
        sr_boot_name_t *n = boot->names;
        boot->names = n->next;
        pmix_status_t rc = sr_boot_unpublish_key(n->key);
        if (rc != PMIX_SUCCESS && rc != PMIX_ERR_NOT_FOUND)
            sr_debug("names: unpublishing %s at finalize: %s", n->key, PMIx_Error_string(rc));
        free(n);
    }
}

symrail_status_t sr_boot_publish(sr_boot_t *boot, const char *key, const void *val, size_t len)
{
    sr_boot_key_t full;
    symrail_status_t st = sr_boot_names_ready(boot, key, &full);
    if (st != SYMRAIL_OK)
        return st;
    sr_boot_count_name(boot);
    if (val == NULL || len == 0 || len > SR_BOOT_NAME_VAL_MAX) {
        sr_error("names: the value of '%s' is %s%zu bytes (1..%d allowed)", key,
                 val == NULL ? "NULL, of " : "", len, SR_BOOT_NAME_VAL_MAX);
        return SYMRAIL_ERR_INVALID;
    }
    if (sr_boot_name_foreign(boot, &full)) {
        sr_error("names: '%s' is already published by another PE of this job", key);
        return SYMRAIL_ERR_STATE;
    }
    pmix_byte_object_t bo = {.bytes = (char *)val, .size = len};
    pmix_persistence_t persist = PMIX_PERSIST_PROC;
    pmix_info_t info[3];
    PMIX_INFO_LOAD(&info[0], full.key, &bo, PMIX_BYTE_OBJECT);
    sr_boot_name_range(&info[1]);
    PMIX_INFO_LOAD(&info[2], PMIX_PERSISTENCE, &persist, PMIX_PERSIST);
    pmix_status_t rc = PMIx_Publish(info, 3);
    /* Launchers that refuse even the publisher's own key again: take ours
     * back and publish once more (an unpublish leaves other PEs' keys). */
    if (rc == PMIX_ERR_DUPLICATE_KEY && sr_boot_unpublish_key(full.key) == PMIX_SUCCESS)
        rc = PMIx_Publish(info, 3);
    for (int i = 0; i < 3; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (rc == PMIX_SUCCESS) {
        sr_boot_names_track(boot, &full, true);
        sr_debug("names: published '%s' (%zu bytes)", key, len);
        return SYMRAIL_OK;
    }
    if (rc == PMIX_ERR_DUPLICATE_KEY) {
        sr_error("names: '%s' is already published by another PE of this job", key);
        return SYMRAIL_ERR_STATE;
    }
    return sr_boot_name_failed(boot, rc, "PMIx_Publish", key);
}

symrail_status_t sr_boot_unpublish(sr_boot_t *boot, const char *key)
{
    sr_boot_key_t full;
    symrail_status_t st = sr_boot_names_ready(boot, key, &full);
    if (st != SYMRAIL_OK)
        return st;
    sr_boot_count_name(boot);
    pmix_status_t rc = sr_boot_unpublish_key(full.key);
    if (rc == PMIX_SUCCESS || rc == PMIX_ERR_NOT_FOUND) {
        sr_boot_names_track(boot, &full, false);
        return SYMRAIL_OK;
    }
    return sr_boot_name_failed(boot, rc, "PMIx_Unpublish", key);
}

/*
 * One lookup in flight. The answer comes on the PMIx thread; a caller whose
 * deadline passed first leaves it to the callback to free (PMIx cannot
 * cancel a request, and the launcher answers it at its own timeout).
 */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t  cond;
    bool            done;
    bool            abandoned;
    pmix_status_t   status;
    void           *val;
    size_t          len;
    pmix_proc_t     owner;   /* the publisher */
    sr_boot_key_t   full;
} sr_boot_lk_t;

static void sr_boot_lk_free(sr_boot_lk_t *lk)
{
    pthread_cond_destroy(&lk->cond);
    pthread_mutex_destroy(&lk->lock);
    free(lk->val);
    free(lk);
}

static sr_boot_lk_t *sr_boot_lk_new(const sr_boot_key_t *full)
{
    pthread_condattr_t attr;
    sr_boot_lk_t *lk = calloc(1, sizeof(*lk));
    if (lk == NULL)
        return NULL;
    lk->full = *full;
    pthread_mutex_init(&lk->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&lk->cond, &attr);
    pthread_condattr_destroy(&attr);
    return lk;
}

static void sr_boot_lk_cb(pmix_status_t status, pmix_pdata_t pdata[], size_t ndata, void *cbdata)
{
    sr_boot_lk_t *lk = cbdata;
    void *val = NULL;
    size_t len = 0;

    if (status == PMIX_SUCCESS) {
        status = PMIX_ERR_NOT_FOUND;
        for (size_t i = 0; i < ndata; i++) {
            if (strncmp(pdata[i].key, lk->full.key, PMIX_MAX_KEYLEN) != 0)
                continue;
            if (pdata[i].value.type != PMIX_BYTE_OBJECT) {
                status = PMIX_ERR_TYPE_MISMATCH;
                break;
            }
            len = pdata[i].value.data.bo.size;
            val = malloc(len ? len : 1);
            if (val == NULL) {
                status = PMIX_ERR_NOMEM;
                break;
            }
            memcpy(val, pdata[i].value.data.bo.bytes, len);
            PMIX_LOAD_PROCID(&lk->owner, pdata[i].proc.nspace, pdata[i].proc.rank);
            status = PMIX_SUCCESS;
            break;
        }
    }
    pthread_mutex_lock(&lk->lock);
    if (lk->abandoned) {
        pthread_mutex_unlock(&lk->lock);
        free(val);
        sr_boot_lk_free(lk);
        return;
    }
    lk->status = status;
    lk->val = val;
    lk->len = len;
    lk->done = true;
    pthread_cond_signal(&lk->cond);
    pthread_mutex_unlock(&lk->lock);
}

/* false: the deadline passed first, and lk belongs to the callback now. */
static bool sr_boot_lk_wait(sr_boot_lk_t *lk, const struct timespec *deadline)
{
    int e = 0;
    pthread_mutex_lock(&lk->lock);
    while (!lk->done && e != ETIMEDOUT) {
        if (deadline != NULL)
            e = pthread_cond_timedwait(&lk->cond, &lk->lock, deadline);
        else
            pthread_cond_wait(&lk->cond, &lk->lock);
    }
    bool done = lk->done;
    if (!done)
        lk->abandoned = true;
    pthread_mutex_unlock(&lk->lock);
    return done;
}

static int64_t sr_boot_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sends one lookup and waits for its answer until deadline_ms (0: none). */
static pmix_status_t sr_boot_lookup_once(const sr_boot_key_t *full, int64_t deadline_ms,
                                         void **val_p, size_t *len_p, pmix_proc_t *owner_p)
{
    sr_boot_lk_t *lk = sr_boot_lk_new(full);
    if (lk == NULL)
        return PMIX_ERR_NOMEM;
    pmix_info_t info[3];
    size_t ninfo = 1;
    sr_boot_name_range(&info[0]);
    if (deadline_ms > 0) {
        /* The launcher answers when the key appears, or at its timeout, in
         * the whole seconds PMIx counts: never before ours. */
        int64_t left = deadline_ms - sr_boot_now_ms();
        int secs = left <= 0 ? 1 : left >= 86400000 ? 86400 : (int)((left + 999) / 1000);
        bool wait = true;
        PMIX_INFO_LOAD(&info[ninfo], PMIX_WAIT, &wait, PMIX_BOOL);
        ninfo++;
        PMIX_INFO_LOAD(&info[ninfo], PMIX_TIMEOUT, &secs, PMIX_INT);
        ninfo++;
    }
    char *keys[2] = {lk->full.key, NULL};
    pmix_status_t rc = PMIx_Lookup_nb(keys, info, ninfo, sr_boot_lk_cb, lk);
    for (size_t i = 0; i < ninfo; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_SUCCESS) {
        sr_boot_lk_free(lk);
        return rc;
    }
    struct timespec ts = {.tv_sec = deadline_ms / 1000, .tv_nsec = (deadline_ms % 1000) * 1000000};
    if (!sr_boot_lk_wait(lk, deadline_ms > 0 ? &ts : NULL))
        return PMIX_ERR_TIMEOUT;
    rc = lk->status;
    if (rc == PMIX_SUCCESS) {
        *val_p = lk->val;
        *len_p = lk->len;
        *owner_p = lk->owner;
        lk->val = NULL;
    }
    sr_boot_lk_free(lk);
    return rc;
}

symrail_status_t sr_boot_lookup(sr_boot_t *boot, const char *key, uint64_t timeout_ms,
                                void **val_p, size_t *len_p)
{
    sr_boot_key_t full;
    if (val_p == NULL || len_p == NULL)
        return SYMRAIL_ERR_INVALID;
    symrail_status_t st = sr_boot_names_ready(boot, key, &full);
    if (st != SYMRAIL_OK)
        return st;
    sr_boot_count_name(boot);
    /* A year stands for "forever" and keeps the sums in range. */
    uint64_t span = timeout_ms > 365ull * 86400000 ? 365ull * 86400000 : timeout_ms;
    int64_t deadline = span ? sr_boot_now_ms() + (int64_t)span : 0;
    unsigned poll_ms = 1;

    for (;;) {
        pmix_proc_t owner;
        pmix_status_t rc = sr_boot_lookup_once(&full, deadline, val_p, len_p, &owner);
        if (rc == PMIX_SUCCESS) {
            sr_debug("names: found '%s' (%zu bytes)", key, *len_p);
            return SYMRAIL_OK;
        }
        if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_TIMEOUT) {
            int64_t left = deadline - sr_boot_now_ms();
            if (deadline == 0 || left <= 0) {
                sr_debug("names: '%s' not published within %llu ms", key,
                         (unsigned long long)timeout_ms);
                return SYMRAIL_ERR_TIMEOUT;
            }
            /* The launcher does not wait for keys: ask again a little later. */
            unsigned nap = left < poll_ms ? (unsigned)left : poll_ms;
            struct timespec ts = {.tv_sec = nap / 1000, .tv_nsec = (long)(nap % 1000) * 1000000};
            nanosleep(&ts, NULL);
            if (poll_ms < SR_BOOT_NAME_POLL_MAX_MS)
                poll_ms *= 2;
            continue;
        }
        if (rc == PMIX_ERR_TYPE_MISMATCH) {
            sr_error("names: '%s' holds a value that is not symrail's", key);
            return SYMRAIL_ERR_BOOT;
        }
        return sr_boot_name_failed(boot, rc, "PMIx_Lookup", key);
    }
}
