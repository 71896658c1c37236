/* The PMIx server: job registration and the upcalls of the PMIx thread. */
#define _GNU_SOURCE

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>


/* The abort upcall runs on the PMIx thread and gets no context pointer of
 * ours, so the pipe's write end is reachable through this alone. */
static int sr_symrun_abort_fd = -1;
static sr_symrun_rank_t *sr_symrun_pmix_ranks;
static int sr_symrun_pmix_nranks;

/* Runs on the PMIx thread: the rank's state is set before the client is
 * released, so the main loop sees it no later than the client's exit. */
static void sr_symrun_pmix_state(const pmix_proc_t *proc, int state)
{
    sr_symrun_abort_rec_t rec;

    if (proc == NULL || proc->rank >= (pmix_rank_t)sr_symrun_pmix_nranks)
        return;
    sr_symrun_pmix_ranks[proc->rank].pmix_state = state;
    memset(&rec, 0, sizeof(rec));
    rec.kind = SR_SYMRUN_REC_STATE;
    rec.rank = proc->rank;
    /* A full pipe already holds a wake-up for the main loop. */
    ssize_t n = write(sr_symrun_abort_fd, &rec, sizeof(rec));

    (void)n;
}

/* ---- PMIx server ------------------------------------------------------ */

void sr_symrun_wait_init(sr_symrun_wait_t *w)
{
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->done = false;
    w->status = PMIX_SUCCESS;
}

void sr_symrun_wait_fini(sr_symrun_wait_t *w)
{
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

void sr_symrun_op_cb(pmix_status_t status, void *cbdata)
{
    sr_symrun_wait_t *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* Completes a non-blocking PMIx call: rc is what the call returned. */
pmix_status_t sr_symrun_wait_for(sr_symrun_wait_t *w, pmix_status_t rc)
{
    if (rc == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS)
        return rc;
    pthread_mutex_lock(&w->lock);
    while (!w->done)
        pthread_cond_wait(&w->cond, &w->lock);
    rc = w->status;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

static pmix_status_t sr_symrun_client_connected(const pmix_proc_t *proc,
                                                void *server_object,
                                                pmix_op_cbfunc_t cbfunc,
                                                void *cbdata)
{
    (void)server_object;
    sr_symrun_pmix_state(proc, SR_SYMRUN_PMIX_CONNECTED);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t sr_symrun_client_finalized(const pmix_proc_t *proc,
                                                void *server_object,
                                                pmix_op_cbfunc_t cbfunc,
                                                void *cbdata)
{
    (void)server_object;
    sr_symrun_pmix_state(proc, SR_SYMRUN_PMIX_FINALIZED);
    if (proc != NULL)
        sr_symrun_pubsub_purge(proc->rank);
    /* The client blocks in PMIx_Finalize until this is called. */
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/*
 * Runs on the PMIx progress thread: only report to the main loop, which
 * owns the children. The record goes into the pipe before the client is
 * released, so the main loop sees the abort no later than the client's
 * exit. procs is ignored: any abort ends the whole job.
 */
static pmix_status_t sr_symrun_abort(const pmix_proc_t *proc,
                                     void *server_object, int status,
                                     const char msg[], pmix_proc_t procs[],
                                     size_t nprocs, pmix_op_cbfunc_t cbfunc,
                                     void *cbdata)
{
    sr_symrun_abort_rec_t rec;

    (void)server_object;
    (void)procs;
    (void)nprocs;
    memset(&rec, 0, sizeof(rec));
    rec.kind = SR_SYMRUN_REC_ABORT;
    rec.rank = proc != NULL ? proc->rank : PMIX_RANK_UNDEF;
    rec.status = status;
    snprintf(rec.msg, sizeof(rec.msg), "%s", msg != NULL ? msg : "");
    /* Non-blocking: if the pipe is full, earlier aborts already stop the
     * job and this one adds nothing. */
    ssize_t n = write(sr_symrun_abort_fd, &rec, sizeof(rec));

    (void)n;
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* All ranks live on this node, so the data every participant contributed
 * is already the complete result. */
static pmix_status_t sr_symrun_fence_nb(const pmix_proc_t procs[],
                                        size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        char *data, size_t ndata,
                                        pmix_modex_cbfunc_t cbfunc,
                                        void *cbdata)
{
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

static pmix_server_module_t sr_symrun_module = {
    .client_connected = sr_symrun_client_connected,
    .client_finalized = sr_symrun_client_finalized,
    .abort = sr_symrun_abort,
    .fence_nb = sr_symrun_fence_nb,
    .publish = sr_symrun_publish,
    .lookup = sr_symrun_lookup,
    .unpublish = sr_symrun_unpublish,
};

int sr_symrun_server_start(sr_symrun_job_t *job)
{
    pmix_info_t info[2];
    pmix_status_t rc;

    sr_symrun_pmix_ranks = job->ranks;
    sr_symrun_pmix_nranks = job->args.nranks;
    if (sr_symrun_pubsub_start(job->nspace) != 0)
        return -1;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, job->tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, job->tmpdir, PMIX_STRING);
    rc = PMIx_server_init(&sr_symrun_module, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot start the PMIx server: %s\n",
                PMIx_Error_string(rc));
        sr_symrun_pubsub_stop();
        return -1;
    }
    job->server_up = true;
    return 0;
}

static int sr_symrun_list_add(void *list, const char *key, const void *val,
                              pmix_data_type_t type)
{
    pmix_status_t rc = PMIx_Info_list_add(list, key, val, type);

    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot build job info (%s): %s\n", key,
                PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

static int sr_symrun_rank_info(void *list, uint32_t n, const char *hostname)
{
    pmix_rank_t rank = n;
    uint16_t local_rank = (uint16_t)n;
    uint32_t nodeid = 0;
    pmix_data_array_t darray;
    void *sub = PMIx_Info_list_start();
    pmix_status_t rc;
    int ret = -1;

    if (sub == NULL)
        return -1;
    /* PMIx requires PMIX_RANK to come first in each PMIX_PROC_DATA. */
    if (sr_symrun_list_add(sub, PMIX_RANK, &rank, PMIX_PROC_RANK) != 0 ||
        sr_symrun_list_add(sub, PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16) != 0 ||
        sr_symrun_list_add(sub, PMIX_NODE_RANK, &local_rank, PMIX_UINT16) != 0 ||
        sr_symrun_list_add(sub, PMIX_NODEID, &nodeid, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(sub, PMIX_HOSTNAME, hostname, PMIX_STRING) != 0)
        goto err_sub;
    memset(&darray, 0, sizeof(darray));
    darray.type = PMIX_INFO;
    rc = PMIx_Info_list_convert(sub, &darray);
    if (rc != PMIX_SUCCESS)
        goto err_sub;
    /* Adding copies the array, so ours is released right after. */
    ret = sr_symrun_list_add(list, PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
err_sub:
    PMIx_Info_list_release(sub);
    return ret;
}

int sr_symrun_nspace_register(sr_symrun_job_t *job)
{
    uint32_t n = (uint32_t)job->args.nranks;
    uint32_t zero = 0;
    uint32_t one = 1;
    char *peers, *regex = NULL, *ppn = NULL;
    size_t plen = (size_t)n * 6 + 1;
    pmix_data_array_t darray;
    sr_symrun_wait_t w;
    void *list;
    pmix_status_t rc;
    int ret = -1;

    peers = malloc(plen);
    if (peers == NULL)
        return -1;
    peers[0] = '\0';
    for (uint32_t i = 0, off = 0; i < n; i++)
        off += (uint32_t)snprintf(peers + off, plen - off, i ? ",%u" : "%u", i);

    list = PMIx_Info_list_start();
    if (list == NULL)
        goto err_peers;

    rc = PMIx_generate_regex(job->hostname, &regex);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_generate_ppn(peers, &ppn);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot describe the job layout: %s\n",
                PMIx_Error_string(rc));
        goto err_list;
    }

    if (sr_symrun_list_add(list, PMIX_UNIV_SIZE, &n, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(list, PMIX_JOB_SIZE, &n, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(list, PMIX_MAX_PROCS, &n, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(list, PMIX_LOCAL_SIZE, &n, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(list, PMIX_NODE_SIZE, &n, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(list, PMIX_NUM_NODES, &one, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(list, PMIX_JOBID, job->nspace, PMIX_STRING) != 0 ||
        sr_symrun_list_add(list, PMIX_LOCAL_PEERS, peers, PMIX_STRING) != 0 ||
        sr_symrun_list_add(list, PMIX_NODE_MAP, regex, PMIX_REGEX) != 0 ||
        sr_symrun_list_add(list, PMIX_PROC_MAP, ppn, PMIX_REGEX) != 0 ||
        sr_symrun_list_add(list, PMIX_NODEID, &zero, PMIX_UINT32) != 0 ||
        sr_symrun_list_add(list, PMIX_HOSTNAME, job->hostname, PMIX_STRING) != 0)
        goto err_list;
    for (uint32_t i = 0; i < n; i++) {
        if (sr_symrun_rank_info(list, i, job->hostname) != 0)
            goto err_list;
    }

    memset(&darray, 0, sizeof(darray));
    darray.type = PMIX_INFO;
    rc = PMIx_Info_list_convert(list, &darray);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot build job info: %s\n",
                PMIx_Error_string(rc));
        goto err_list;
    }

    /* The server keeps using the array until the callback has run. */
    sr_symrun_wait_init(&w);
    rc = PMIx_server_register_nspace(job->nspace, (int)n, darray.array,
                                     darray.size, sr_symrun_op_cb, &w);
    rc = sr_symrun_wait_for(&w, rc);
    sr_symrun_wait_fini(&w);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot register the job with PMIx: %s\n",
                PMIx_Error_string(rc));
        goto err_list;
    }
    ret = 0;

err_list:
    free(ppn);
    free(regex);
    PMIx_Info_list_release(list);
err_peers:
    free(peers);
    return ret;
}

int sr_symrun_abort_pipe_setup(sr_symrun_job_t *job)
{
    int fds[2];

    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "symrun: pipe: %s\n", strerror(errno));
        return -1;
    }
    job->abort_rfd = fds[0];
    job->abort_wfd = fds[1];
    sr_symrun_abort_fd = fds[1];
    return 0;
}

static void *sr_symrun_finalize_thread(void *arg)
{
    sr_symrun_wait_t *w = arg;

    PMIx_server_finalize();
    sr_symrun_op_cb(PMIX_SUCCESS, w);
    return NULL;
}

/*
 * OpenPMIx 4.2 can leave a lock held when a client dies in the middle of
 * its connection handshake (a rank stopped by a signal just as it starts),
 * and PMIx_server_finalize then blocks for good. Finalize is bounded, so
 * that such a job still ends; the caller must then leave with _exit,
 * since the library's exit handlers would block the same way.
 */
void sr_symrun_server_stop(sr_symrun_job_t *job)
{
    sr_symrun_wait_t *w;
    struct timespec deadline;
    pthread_t tid;
    int e = 0;

    if (!job->server_up)
        return;
    job->server_up = false;
    sr_symrun_pubsub_stop();
    /* On the heap: a stuck thread may still complete it after we left. */
    w = malloc(sizeof(*w));
    if (w != NULL)
        sr_symrun_wait_init(w);
    if (w == NULL || pthread_create(&tid, NULL, sr_symrun_finalize_thread, w) != 0) {
        free(w);
        PMIx_server_finalize();
        return;
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += SR_SYMRUN_FINALIZE_MS / 1000;
    pthread_mutex_lock(&w->lock);
    while (!w->done && e == 0)
        e = pthread_cond_timedwait(&w->cond, &w->lock, &deadline);
    bool done = w->done;
    pthread_mutex_unlock(&w->lock);
    if (!done) {
        fprintf(stderr, "symrun: warning: the PMIx server did not shut down "
                "within %ld ms; leaving without it\n", SR_SYMRUN_FINALIZE_MS);
        job->server_stuck = true;
        return;
    }
    pthread_join(tid, NULL);
    sr_symrun_wait_fini(w);
    free(w);
}


void sr_symrun_abort_pipe_close(sr_symrun_job_t *job)
{
    sr_symrun_abort_fd = -1;
    close(job->abort_rfd);
    close(job->abort_wfd);
}
