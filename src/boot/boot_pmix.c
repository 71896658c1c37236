#include "config.h"
#include "boot_int.h"
#include "util/log.h"
#include "util/strlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SR_BOOT_KEY "symrail.blob"

symrail_status_t sr_boot_status(pmix_status_t rc)
{
    switch (rc) {
    case PMIX_SUCCESS:            return SYMRAIL_OK;
    case PMIX_ERR_NOMEM:          return SYMRAIL_ERR_NOMEM;
    case PMIX_ERR_TIMEOUT:        return SYMRAIL_ERR_TIMEOUT;
    case PMIX_ERR_UNREACH:
    case PMIX_ERR_LOST_CONNECTION: return SYMRAIL_ERR_PEER_GONE;
    default:                      return SYMRAIL_ERR_BOOT;
    }
}

/* Set before our own PMIx_Finalize, which closes the connection too. */
static volatile int sr_boot_leaving;

/*
 * Runs on the PMIx thread when the connection to the local PMIx server
 * breaks. The server is the launcher (symrun, an mpirun daemon,
 * slurmstepd), so the job is over: nobody is left to tell, and a PE spinning
 * in a barrier would otherwise run on for good with parent 1. This is the
 * one place outside the API layer that ends a process, because no call of
 * the application's is guaranteed to come.
 */
static void sr_boot_lost(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                         size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                         void *cbdata)
{
    (void)id; (void)source; (void)info; (void)ninfo; (void)results; (void)nresults;
    if (!sr_boot_leaving) {
        sr_error("lost the connection to the PMIx server (%s): the launcher is gone; exiting",
                 PMIx_Error_string(status));
        _exit(1);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* PMIx clients find their server through variables the launcher sets. */
static int sr_boot_launched(void)
{
    extern char **environ;
    if (getenv("PMIX_NAMESPACE") != NULL)
        return 1;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return 1;
    return 0;
}

#define SR_BOOT_ADD(field, n) __atomic_fetch_add(&(field), (uint64_t)(n), __ATOMIC_RELAXED)

/* The bytes a value brings: its payload, or its fixed size. */
static size_t sr_boot_value_len(const pmix_value_t *val)
{
    switch (val->type) {
    case PMIX_BYTE_OBJECT: return val->data.bo.size;
    case PMIX_STRING:      return val->data.string ? strlen(val->data.string) + 1 : 0;
    case PMIX_UINT16:      return sizeof(val->data.uint16);
    case PMIX_UINT32:      return sizeof(val->data.uint32);
    case PMIX_INT:         return sizeof(val->data.integer);
    case PMIX_PROC_RANK:   return sizeof(val->data.rank);
    default:               return sizeof(val->data);
    }
}

pmix_status_t sr_boot_get(sr_boot_t *boot, const pmix_proc_t *proc, const char *key,
                          pmix_value_t **val_p)
{
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, val_p);
    SR_BOOT_ADD(boot->stats.gets, 1);
    if (rc == PMIX_SUCCESS && *val_p != NULL)
        SR_BOOT_ADD(boot->stats.get_bytes, sr_boot_value_len(*val_p));
    return rc;
}

void sr_boot_count_put(sr_boot_t *boot, size_t len)
{
    SR_BOOT_ADD(boot->stats.puts, 1);
    SR_BOOT_ADD(boot->stats.put_bytes, len);
}

void sr_boot_count_name(sr_boot_t *boot)
{
    SR_BOOT_ADD(boot->stats.names, 1);
}

void sr_boot_stats(const sr_boot_t *boot, sr_boot_stats_t *stats_p)
{
    const sr_boot_stats_t *s = &boot->stats;
    stats_p->gets = __atomic_load_n(&s->gets, __ATOMIC_RELAXED);
    stats_p->get_bytes = __atomic_load_n(&s->get_bytes, __ATOMIC_RELAXED);
    stats_p->puts = __atomic_load_n(&s->puts, __ATOMIC_RELAXED);
    stats_p->put_bytes = __atomic_load_n(&s->put_bytes, __ATOMIC_RELAXED);
    stats_p->fences = __atomic_load_n(&s->fences, __ATOMIC_RELAXED);
    stats_p->names = __atomic_load_n(&s->names, __ATOMIC_RELAXED);
}

static symrail_status_t sr_boot_get_u32(sr_boot_t *boot, const pmix_proc_t *proc,
                                        const char *key, uint32_t *val_p)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = sr_boot_get(boot, proc, key, &val);
    if (rc != PMIX_SUCCESS) {
        sr_error("PMIx_Get(%s) for rank %u failed: %s", key, proc->rank, PMIx_Error_string(rc));
        return sr_boot_status(rc);
    }
    switch (val->type) {
    case PMIX_UINT32: *val_p = val->data.uint32; break;
    case PMIX_UINT16: *val_p = val->data.uint16; break;
    case PMIX_INT:    *val_p = (uint32_t)val->data.integer; break;
    case PMIX_PROC_RANK: *val_p = val->data.rank; break;
    default:
        sr_error("PMIx key %s has unexpected type %d", key, (int)val->type);
        PMIX_VALUE_RELEASE(val);
        return SYMRAIL_ERR_BOOT;
    }
    PMIX_VALUE_RELEASE(val);
    return SYMRAIL_OK;
}

symrail_status_t sr_boot_local_peers_parse(const char *list, int size, uint8_t *is_local,
                                           int *local_size_p)
{
    const char *pos = list, *item;
    size_t len;
    while (sr_list_next(&pos, &item, &len)) {
        long r = 0;
        for (size_t i = 0; i < len; i++) {
            if (item[i] < '0' || item[i] > '9' || r >= size)
                return SYMRAIL_ERR_BOOT;
            r = r * 10 + (item[i] - '0');
        }
        if (r >= size)
            return SYMRAIL_ERR_BOOT;
        if (!is_local[r]) {  /* a rank listed twice is one peer */
            is_local[r] = 1;
            (*local_size_p)++;
        }
    }
    return SYMRAIL_OK;
}

static symrail_status_t sr_boot_locality(sr_boot_t *boot)
{
    sr_boot_info_t *info = &boot->info;
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    symrail_status_t st;
    uint32_t u32;

    PMIX_LOAD_PROCID(&wild, boot->myproc.nspace, PMIX_RANK_WILDCARD);
    st = sr_boot_get_u32(boot, &wild, PMIX_JOB_SIZE, &u32);
    if (st != SYMRAIL_OK)
        return st;
    info->size = (int)u32;
    if (sr_boot_get_u32(boot, &boot->myproc, PMIX_LOCAL_RANK, &u32) == SYMRAIL_OK)
        info->local_rank = (int)u32;
    info->is_local = calloc((size_t)info->size, 1);
    if (info->is_local == NULL)
        return SYMRAIL_ERR_NOMEM;

    pmix_status_t rc = sr_boot_get(boot, &wild, PMIX_LOCAL_PEERS, &val);
    if (rc != PMIX_SUCCESS || val->type != PMIX_STRING) {
        sr_error("PMIx_Get(PMIX_LOCAL_PEERS) failed: %s; the launcher must provide locality",
                 PMIx_Error_string(rc));
        if (val)
            PMIX_VALUE_RELEASE(val);
        return SYMRAIL_ERR_BOOT;
    }
    st = sr_boot_local_peers_parse(val->data.string, info->size, info->is_local,
                                   &info->local_size);
    if (st != SYMRAIL_OK) {
        sr_error("PMIX_LOCAL_PEERS='%s' has an entry that is not a rank of this job (0..%d)",
                 val->data.string, info->size - 1);
        PMIX_VALUE_RELEASE(val);
        return st;
    }
    PMIX_VALUE_RELEASE(val);
    if (!info->is_local[info->rank]) {
        sr_error("PMIX_LOCAL_PEERS does not list this process (rank %d)", info->rank);
        return SYMRAIL_ERR_BOOT;
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_boot_init(uint64_t timeout_ms, sr_boot_t **boot_p)
{
    symrail_status_t st;
    sr_boot_t *boot = calloc(1, sizeof(*boot));
    if (boot == NULL)
        return SYMRAIL_ERR_NOMEM;
    pthread_mutex_init(&boot->names_lock, NULL);
    if (gethostname(boot->info.host, sizeof(boot->info.host)) != 0)
        strcpy(boot->info.host, "localhost");
    boot->info.host[sizeof(boot->info.host) - 1] = '\0';

    if (!sr_boot_launched()) {
        /* No launcher: a documented singleton, as OpenSHMEM users expect. */
        boot->info.singleton = 1;
        boot->info.size = boot->info.local_size = 1;
        snprintf(boot->info.job, sizeof(boot->info.job), "single.%d", (int)getpid());
        boot->info.is_local = calloc(1, 1);
        if (boot->info.is_local == NULL) {
            st = SYMRAIL_ERR_NOMEM;
            goto err_free;
        }
        boot->info.is_local[0] = 1;
        sr_info("no PMIx launcher found: running as a singleton (1 PE)");
        *boot_p = boot;
        return SYMRAIL_OK;
    }

    pmix_status_t rc = PMIx_Init(&boot->myproc, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        sr_error("PMIx_Init failed: %s (is the program started by symrun, mpirun or srun "
                 "--mpi=pmix?)", PMIx_Error_string(rc));
        st = sr_boot_status(rc);
        goto err_free;
    }
    boot->pmix_up = 1;
    sr_boot_leaving = 0;  /* set by an earlier client's finalize */
    /* A PE that never reaches init (it exited early, or hangs before it)
     * would keep the others in the fence for good: the operation timeout
     * bounds it, in the whole seconds PMIx counts. */
    boot->timeout_s = timeout_ms == 0 ? 0
                      : timeout_ms >= 86400000ull ? 86400 : (int)((timeout_ms + 999) / 1000);
    pmix_status_t codes[] = {PMIX_ERR_LOST_CONNECTION, PMIX_ERR_UNREACH};
    rc = PMIx_Register_event_handler(codes, 2, NULL, 0, sr_boot_lost, NULL, NULL);
    if (rc < 0)
        sr_warn("cannot watch the connection to the PMIx server: %s", PMIx_Error_string(rc));
    boot->info.rank = (int)boot->myproc.rank;
    snprintf(boot->info.job, sizeof(boot->info.job), "%s", boot->myproc.nspace);
    sr_log_set_pe(boot->info.rank);
    st = sr_boot_locality(boot);
    if (st != SYMRAIL_OK)
        goto err_fini;
    sr_debug("PMIx job %s: rank %d of %d, %d on this node", boot->info.job, boot->info.rank,
             boot->info.size, boot->info.local_size);
    *boot_p = boot;
    return SYMRAIL_OK;

err_fini:
    sr_boot_leaving = 1;
    PMIx_Finalize(NULL, 0);
err_free:
    free(boot->info.is_local);
    free(boot);
    return st;
}

const sr_boot_info_t *sr_boot_info(const sr_boot_t *boot)
{
    return &boot->info;
}

static symrail_status_t sr_boot_fence_collect(sr_boot_t *boot, int collect)
{
    pmix_info_t info[2];
    size_t ninfo = 1;
    bool flag = collect ? true : false;
    if (!boot->pmix_up)
        return SYMRAIL_OK;
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    if (boot->timeout_s > 0)
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &boot->timeout_s, PMIX_INT);
    pmix_status_t rc = PMIx_Fence(NULL, 0, info, ninfo);
    SR_BOOT_ADD(boot->stats.fences, 1);
    for (size_t i = 0; i < ninfo; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (rc == PMIX_ERR_TIMEOUT) {
        sr_error("PMIx_Fence: not every PE reached it within %d s (SYMRAIL_OP_TIMEOUT): a PE "
                 "exited or hangs before symrail_init (symrun names it)",
                 boot->timeout_s);
        return sr_boot_status(rc);
    }
    if (rc != PMIX_SUCCESS) {
        sr_error("PMIx_Fence failed: %s", PMIx_Error_string(rc));
        return sr_boot_status(rc);
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_boot_fence(sr_boot_t *boot)
{
    return sr_boot_fence_collect(boot, 0);
}

symrail_status_t sr_boot_exchange(sr_boot_t *boot, const void *blob, size_t len,
                                  void ***blobs_p, size_t **lens_p)
{
    int n = boot->info.size;
    symrail_status_t st = SYMRAIL_ERR_NOMEM;
    void **blobs = calloc((size_t)n, sizeof(*blobs));
    size_t *lens = calloc((size_t)n, sizeof(*lens));
    if (blobs == NULL || lens == NULL)
        goto err_free;

    if (boot->pmix_up) {
        pmix_value_t value;
        pmix_status_t rc;
        PMIX_VALUE_CONSTRUCT(&value);
        value.type = PMIX_BYTE_OBJECT;
        value.data.bo.bytes = (char *)blob;
        value.data.bo.size = len;
        /* A library started again after finalize publishes anew; the old
         * values may still be cached by the peers, so the key changes. */
        char key[PMIX_MAX_KEYLEN + 1];
        snprintf(key, sizeof(key), "%s.%u", SR_BOOT_KEY, boot->exchanges);
        rc = PMIx_Put(PMIX_GLOBAL, key, &value);
        sr_boot_count_put(boot, len);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) {
            sr_error("publishing the connection blob through PMIx failed: %s",
                     PMIx_Error_string(rc));
            st = sr_boot_status(rc);
            goto err_free;
        }
        st = sr_boot_fence_collect(boot, 1);
        if (st != SYMRAIL_OK)
            goto err_free;
    }

    for (int r = 0; r < n; r++) {
        if (r == boot->info.rank) {
            blobs[r] = malloc(len);
            if (blobs[r] == NULL) {
                st = SYMRAIL_ERR_NOMEM;
                goto err_blobs;
            }
            memcpy(blobs[r], blob, len);
            lens[r] = len;
            continue;
        }
        pmix_proc_t proc;
        pmix_value_t *val = NULL;
        PMIX_LOAD_PROCID(&proc, boot->myproc.nspace, (pmix_rank_t)r);
        char key[PMIX_MAX_KEYLEN + 1];
        snprintf(key, sizeof(key), "%s.%u", SR_BOOT_KEY, boot->exchanges);
        pmix_status_t rc = sr_boot_get(boot, &proc, key, &val);
        if (rc != PMIX_SUCCESS || val->type != PMIX_BYTE_OBJECT) {
            sr_error("reading the connection blob of PE %d through PMIx failed: %s", r,
                     PMIx_Error_string(rc));
            if (val)
                PMIX_VALUE_RELEASE(val);
            st = rc == PMIX_SUCCESS ? SYMRAIL_ERR_BOOT : sr_boot_status(rc);
            goto err_blobs;
        }
        /* Take ownership of the bytes instead of copying them. */
        blobs[r] = val->data.bo.bytes;
        lens[r] = val->data.bo.size;
        val->data.bo.bytes = NULL;
        val->data.bo.size = 0;
        PMIX_VALUE_RELEASE(val);
    }
    boot->exchanges++;
    *blobs_p = blobs;
    *lens_p = lens;
    return SYMRAIL_OK;

err_blobs:
    for (int r = 0; r < n; r++)
        free(blobs[r]);
err_free:
    free(blobs);
    free(lens);
    return st;
}

void sr_boot_blobs_free(sr_boot_t *boot, void **blobs, size_t *lens)
{
    for (int r = 0; blobs && r < boot->info.size; r++)
        free(blobs[r]);
    free(blobs);
    free(lens);
}

void sr_boot_abort(sr_boot_t *boot, int code, const char *msg)
{
    if (boot != NULL && boot->pmix_up)
        PMIx_Abort(code, msg, NULL, 0);
    /* PMIx_Abort returns once the launcher has the request (or could not be
     * told); either way this process ends here. */
    _exit(code ? code : 1);
}

void sr_boot_fini(sr_boot_t *boot)
{
    if (boot == NULL)
        return;
    if (boot->pmix_up) {
        sr_boot_names_fini(boot);
        sr_boot_leaving = 1;
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS)
            sr_warn("PMIx_Finalize failed: %s", PMIx_Error_string(rc));
    }
    pthread_mutex_destroy(&boot->names_lock);
    free(boot->info.is_local);
    free(boot);
}
