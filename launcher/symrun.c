/*
 * symrun: starts the ranks of an SPMD job on this host and serves PMIx to
 * them, so that symrail programs need no external launcher on one node.
 *
 * One main thread does all process handling from a poll loop: child
 * output pipes, a signalfd (so no work happens in signal handlers and
 * SIGCHLD is just another event) and a pipe fed by the PMIx progress
 * thread for abort requests. The PMIx library's own thread never touches
 * child processes.
 */
#define _GNU_SOURCE

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun_args.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>

#define SR_SYMRUN_DEFAULT_GRACE_MS 2000L
/* Output pipes still open after the last rank was reaped are held by
 * descendants that left their rank's process group; their output is not
 * worth a long wait. */
#define SR_SYMRUN_DRAIN_MS 500L
/* How long to wait for killed stray descendants to be reapable. */
#define SR_SYMRUN_STRAY_MS 2000L
/* A line longer than this is forwarded in pieces, so one chatty rank cannot
 * make the launcher buffer without bound. */
#define SR_SYMRUN_LINE_MAX (64 * 1024)
#define SR_SYMRUN_READ_CHUNK (64 * 1024)
#define SR_SYMRUN_SECRET_BYTES 16
#define SR_SYMRUN_SECRET_ENV "SYMRAIL_JOB_SECRET"
#define SR_SYMRUN_EXIT_INTERNAL 1
#define SR_SYMRUN_EXIT_USAGE 2
#define SR_SYMRUN_EXIT_TIMEOUT 124
#define SR_SYMRUN_EXIT_NOEXEC 127

extern char **environ;

typedef struct {
    int fd;      /* read end of the child's pipe; -1 once at EOF */
    int dest_fd; /* STDOUT_FILENO or STDERR_FILENO */
    char *buf;   /* an unfinished line */
    size_t len;
    size_t cap;
    /* Part of the current line was already forwarded, prefix included. */
    bool midline;
} sr_symrun_stream_t;

typedef struct {
    pid_t pid; /* 0 until spawned */
    bool running;
    sr_symrun_stream_t out;
    sr_symrun_stream_t err;
} sr_symrun_rank_t;

/* Written by the PMIx progress thread; kept under PIPE_BUF so that each
 * record reaches the pipe whole. */
typedef struct {
    uint32_t rank;
    int32_t status;
    char msg[1024];
} sr_symrun_abort_rec_t;

_Static_assert(sizeof(sr_symrun_abort_rec_t) <= PIPE_BUF,
               "abort records must be written atomically");

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
} sr_symrun_wait_t;

typedef struct {
    sr_symrun_args_t args;
    long grace_ms;
    char *prog_path;
    char **base_env;
    char tmpdir[PATH_MAX];
    bool tmpdir_made;
    bool server_up;
    pmix_nspace_t nspace;
    char hostname[256];

    sr_symrun_rank_t *ranks;
    int nspawned;
    int nlive;

    sigset_t orig_mask;
    bool pipe_dfl; /* SIGPIPE was at its default when we started */
    int sigfd;
    int abort_rfd;
    int abort_wfd;

    bool stopping;
    bool killed;
    int64_t kill_deadline;
    int64_t drain_deadline;
    int64_t timeout_deadline;

    bool exit_decided;
    int exit_code;

    bool dest_dead[3]; /* our stdout/stderr went away: drop output */
    char *readbuf;
} sr_symrun_job_t;

/* The abort upcall runs on the PMIx thread and gets no context pointer of
 * ours, so the pipe's write end is reachable through this alone. */
static int sr_symrun_abort_fd = -1;

static const char sr_symrun_usage_line[] =
    "usage: symrun -n N [--prefix-output] [--timeout S] [-x VAR=value | -x VAR] "
    "[--] prog [args...]\n";

static void sr_symrun_usage(FILE *f)
{
    fputs(sr_symrun_usage_line, f);
    fputs("\n"
          "Runs N ranks of an SPMD program on this host and serves PMIx to them.\n"
          "\n"
          "  -n N, -np N        number of ranks (1..4096)\n"
          "  --prefix-output    prefix each output line with \"[rank] \"\n"
          "  --timeout S        stop the job after S seconds (fractions allowed) and\n"
          "                     exit 124; the environment variable SYMRUN_TIMEOUT\n"
          "                     sets a default\n"
          "  -x VAR=value       set VAR in the ranks' environment\n"
          "  -x VAR             pass this launcher's value of VAR to the ranks\n"
          "  -h, --help         print this help and exit\n"
          "  -V, --version      print the version and exit\n"
          "\n"
          "Signals INT, TERM and HUP are forwarded to all ranks; ranks still alive\n"
          "after a grace period (SYMRUN_GRACE_MS, default 2000 ms) are killed.\n"
          "When a rank fails, the others are stopped the same way and symrun\n"
          "exits with that rank's status (128+N for signal N).\n"
          "\n"
          "Each rank gets SYMRAIL_JOB_SECRET, a random key shared by the job,\n"
          "unless it is already set.\n"
          "\n"
          "symrun only starts ranks on the local host. Multi-host jobs use an\n"
          "existing PMIx launcher, for example\n"
          "  mpirun -H h1:2,h2:2 -np 4 prog\n"
          "  srun --mpi=pmix prog\n"
          "and symrail programs work with those unchanged.\n",
          f);
}

static int64_t sr_symrun_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sr_symrun_decide(sr_symrun_job_t *job, int code)
{
    if (job->exit_decided)
        return;
    job->exit_decided = true;
    job->exit_code = code;
}

static const char *sr_symrun_signame(int sig, char *buf, size_t len)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    const char *abbrev = sigabbrev_np(sig);

    if (abbrev != NULL) {
        snprintf(buf, len, "SIG%s", abbrev);
        return buf;
    }
#endif
    snprintf(buf, len, "%s", strsignal(sig));
    return buf;
}

/* Descriptors 0-2 must exist: otherwise a pipe created for a child could
 * land on one of them and be clobbered by its own dup2. */
static int sr_symrun_fix_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

            if (nfd < 0)
                return -1;
            if (nfd != fd) {
                close(nfd);
                return -1;
            }
        }
    }
    return 0;
}

/* Two pipes per rank plus the PMIx server's socket to each client. */
static int sr_symrun_raise_fd_limit(int nranks)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)nranks * 3 + 64;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_cur == RLIM_INFINITY)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        fprintf(stderr, "symrun: %d ranks need about %llu file descriptors, "
                "but the limit is %llu\n", nranks, (unsigned long long)need,
                (unsigned long long)rl.rlim_max);
        return -1;
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        fprintf(stderr, "symrun: cannot raise the file descriptor limit to "
                "%llu: %s\n", (unsigned long long)need, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- environment arrays ------------------------------------------------
 * PMIx_server_setup_fork edits the array with realloc and free, so every
 * array handed to it, and every string in it, must come from malloc. */

static void sr_symrun_env_free(char **env)
{
    if (env == NULL)
        return;
    for (char **e = env; *e != NULL; e++)
        free(*e);
    free(env);
}

static int sr_symrun_env_dup(char *const *src, char ***env_p)
{
    size_t n = 0;
    char **env;

    while (src != NULL && src[n] != NULL)
        n++;
    env = calloc(n + 1, sizeof(*env));
    if (env == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        env[i] = strdup(src[i]);
        if (env[i] == NULL) {
            sr_symrun_env_free(env);
            return -1;
        }
    }
    *env_p = env;
    return 0;
}

static char **sr_symrun_env_find(char **env, const char *name, size_t namelen)
{
    for (char **e = env; *e != NULL; e++) {
        if (strncmp(*e, name, namelen) == 0 && (*e)[namelen] == '=')
            return e;
    }
    return NULL;
}

static const char *sr_symrun_env_get(char **env, const char *name)
{
    char **e = sr_symrun_env_find(env, name, strlen(name));

    return e != NULL ? *e + strlen(name) + 1 : NULL;
}

static int sr_symrun_env_set(char ***env_p, const char *name, size_t namelen,
                             const char *value)
{
    char **slot = sr_symrun_env_find(*env_p, name, namelen);
    char *entry;

    if (asprintf(&entry, "%.*s=%s", (int)namelen, name, value) < 0)
        return -1;
    if (slot != NULL) {
        free(*slot);
        *slot = entry;
        return 0;
    }

    size_t n = 0;
    char **env;

    while ((*env_p)[n] != NULL)
        n++;
    env = realloc(*env_p, (n + 2) * sizeof(*env));
    if (env == NULL) {
        free(entry);
        return -1;
    }
    env[n] = entry;
    env[n + 1] = NULL;
    *env_p = env;
    return 0;
}

static int sr_symrun_make_secret(char *hex, size_t hexlen)
{
    unsigned char raw[SR_SYMRUN_SECRET_BYTES];
    size_t got = 0;

    if (hexlen < 2 * sizeof(raw) + 1)
        return -1;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* The ranks' environment before PMIx adds its per-rank part: ours, then
 * -x settings, then the job secret unless the user chose one. */
static int sr_symrun_build_env(sr_symrun_job_t *job)
{
    char secret[2 * SR_SYMRUN_SECRET_BYTES + 1];
    char **env;

    if (sr_symrun_env_dup(environ, &env) != 0)
        goto err_nomem;

    for (int i = 0; i < job->args.nexports; i++) {
        const char *spec = job->args.exports[i];
        const char *eq = strchr(spec, '=');

        if (eq != NULL) {
            if (sr_symrun_env_set(&env, spec, (size_t)(eq - spec), eq + 1) != 0)
                goto err_env;
        } else {
            const char *val = getenv(spec);

            if (val == NULL) {
                fprintf(stderr, "symrun: warning: -x %s: not set in the "
                        "environment\n", spec);
                continue;
            }
            if (sr_symrun_env_set(&env, spec, strlen(spec), val) != 0)
                goto err_env;
        }
    }

    if (sr_symrun_env_get(env, SR_SYMRUN_SECRET_ENV) == NULL) {
        if (sr_symrun_make_secret(secret, sizeof(secret)) != 0) {
            fprintf(stderr, "symrun: cannot generate the job secret: %s\n",
                    strerror(errno));
            sr_symrun_env_free(env);
            return -1;
        }
        if (sr_symrun_env_set(&env, SR_SYMRUN_SECRET_ENV,
                              strlen(SR_SYMRUN_SECRET_ENV), secret) != 0)
            goto err_env;
    }

    job->base_env = env;
    return 0;

err_env:
    sr_symrun_env_free(env);
err_nomem:
    fprintf(stderr, "symrun: out of memory\n");
    return -1;
}

/*
 * Resolves prog the way execvp would, but before anything starts, so that
 * a typo costs no PMIx server and yields one clear message. Returns 0 or
 * an errno value.
 */
static int sr_symrun_find_prog(const char *prog, const char *path,
                               char **resolved_p)
{
    int result = ENOENT;
    const char *p;

    if (prog[0] == '\0')
        return ENOENT;
    if (strchr(prog, '/') != NULL) {
        struct stat st;

        if (stat(prog, &st) != 0)
            return errno;
        if (S_ISDIR(st.st_mode))
            return EACCES;
        if (access(prog, X_OK) != 0)
            return errno;
        *resolved_p = strdup(prog);
        return *resolved_p != NULL ? 0 : ENOMEM;
    }

    if (path == NULL)
        path = "/bin:/usr/bin";
    p = path;
    for (;;) {
        const char *end = strchrnul(p, ':');
        size_t dlen = (size_t)(end - p);
        char *cand;
        struct stat st;

        /* An empty PATH element means the current directory. */
        if (asprintf(&cand, "%.*s%s%s", (int)dlen, p, dlen > 0 ? "/" : "",
                     prog) < 0)
            return ENOMEM;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(cand, X_OK) == 0) {
                *resolved_p = cand;
                return 0;
            }
            result = EACCES;
        }
        free(cand);
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return result;
}

/* ---- private directory ------------------------------------------------ */

static int sr_symrun_rm_entry(const char *path, const struct stat *st,
                              int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    /* Keep going on errors: remove as much as possible. */
    remove(path);
    return 0;
}

static int sr_symrun_tmpdir_make(sr_symrun_job_t *job)
{
    const char *base = getenv("TMPDIR");
    int n;

    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    n = snprintf(job->tmpdir, sizeof(job->tmpdir), "%s/symrun.XXXXXX", base);
    if (n < 0 || (size_t)n >= sizeof(job->tmpdir)) {
        fprintf(stderr, "symrun: TMPDIR is too long\n");
        return -1;
    }
    /* mkdtemp creates it 0700, which keeps PMIx's rendezvous and
     * shared-memory files away from other users. */
    if (mkdtemp(job->tmpdir) == NULL) {
        fprintf(stderr, "symrun: cannot create a directory in %s: %s\n", base,
                strerror(errno));
        return -1;
    }
    job->tmpdir_made = true;
    return 0;
}

/* symrail PEs name their shared-memory objects /symrail-<nspace>-...; they
 * unlink them once every local peer has attached, but a rank killed during
 * start-up cannot.  Every rank is gone by now, so whatever is left is stale. */
static void sr_symrun_shm_remove(sr_symrun_job_t *job)
{
    char prefix[PMIX_MAX_NSLEN + 16];
    int len = snprintf(prefix, sizeof(prefix), "symrail-%s-", job->nspace);
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, (size_t)len) == 0 && unlinkat(dirfd(d), e->d_name, 0) != 0)
            fprintf(stderr, "symrun: warning: cannot remove /dev/shm/%s: %s\n", e->d_name,
                    strerror(errno));
    closedir(d);
}

static void sr_symrun_tmpdir_remove(sr_symrun_job_t *job)
{
    if (!job->tmpdir_made)
        return;
    nftw(job->tmpdir, sr_symrun_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    job->tmpdir_made = false;
}

/* ---- PMIx server ------------------------------------------------------ */

static void sr_symrun_wait_init(sr_symrun_wait_t *w)
{
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->done = false;
    w->status = PMIX_SUCCESS;
}

static void sr_symrun_wait_fini(sr_symrun_wait_t *w)
{
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

static void sr_symrun_op_cb(pmix_status_t status, void *cbdata)
{
    sr_symrun_wait_t *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* Completes a non-blocking PMIx call: rc is what the call returned. */
static pmix_status_t sr_symrun_wait_for(sr_symrun_wait_t *w, pmix_status_t rc)
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
    (void)proc;
    (void)server_object;
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t sr_symrun_client_finalized(const pmix_proc_t *proc,
                                                void *server_object,
                                                pmix_op_cbfunc_t cbfunc,
                                                void *cbdata)
{
    (void)proc;
    (void)server_object;
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
};

static int sr_symrun_server_start(sr_symrun_job_t *job)
{
    pmix_info_t info[2];
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, job->tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, job->tmpdir, PMIX_STRING);
    rc = PMIx_server_init(&sr_symrun_module, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot start the PMIx server: %s\n",
                PMIx_Error_string(rc));
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

static int sr_symrun_nspace_register(sr_symrun_job_t *job)
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

/* ---- children ---------------------------------------------------------- */

static void sr_symrun_stream_init(sr_symrun_stream_t *s, int dest_fd)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->dest_fd = dest_fd;
}

/*
 * Starts rank r. Returns 0, or an errno value from posix_spawn (the
 * program could not be executed), or -1 after printing a message for any
 * other failure.
 */
static int sr_symrun_spawn_rank(sr_symrun_job_t *job, int r)
{
    sr_symrun_rank_t *rank = &job->ranks[r];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t dfl;
    pmix_proc_t proc;
    sr_symrun_wait_t w;
    pmix_status_t rc;
    char **env = NULL;
    int out[2], err[2];
    int ret = -1;
    int e;

    PMIX_LOAD_PROCID(&proc, job->nspace, (pmix_rank_t)r);

    sr_symrun_wait_init(&w);
    rc = PMIx_server_register_client(&proc, geteuid(), getegid(), NULL,
                                     sr_symrun_op_cb, &w);
    rc = sr_symrun_wait_for(&w, rc);
    sr_symrun_wait_fini(&w);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot register rank %d with PMIx: %s\n", r,
                PMIx_Error_string(rc));
        return -1;
    }

    if (sr_symrun_env_dup(job->base_env, &env) != 0) {
        fprintf(stderr, "symrun: out of memory\n");
        return -1;
    }
    rc = PMIx_server_setup_fork(&proc, &env);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "symrun: cannot set up rank %d with PMIx: %s\n", r,
                PMIx_Error_string(rc));
        goto err_env;
    }

    if (pipe2(out, O_CLOEXEC) != 0) {
        e = errno;
        goto err_pipe_out;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        e = errno;
        goto err_pipe_err;
    }

    e = posix_spawn_file_actions_init(&fa);
    if (e != 0)
        goto err_fa;
    if ((e = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
                                              O_RDONLY, 0)) != 0 ||
        (e = posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO)) != 0 ||
        (e = posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO)) != 0)
        goto err_attr;

    e = posix_spawnattr_init(&attr);
    if (e != 0)
        goto err_attr;
    /* Own process group, so that stopping a rank reaches whatever it
     * started; the launcher's blocked signals and ignored SIGPIPE are its
     * own business and must not leak into the program. */
    sigemptyset(&dfl);
    if (job->pipe_dfl)
        sigaddset(&dfl, SIGPIPE);
    if ((e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                                 POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSIGDEF)) != 0 ||
        (e = posix_spawnattr_setpgroup(&attr, 0)) != 0 ||
        (e = posix_spawnattr_setsigmask(&attr, &job->orig_mask)) != 0 ||
        (e = posix_spawnattr_setsigdefault(&attr, &dfl)) != 0)
        goto err_spawn;

    e = posix_spawn(&rank->pid, job->prog_path, &fa, &attr,
                    job->args.prog_argv, env);
    if (e != 0) {
        rank->pid = 0;
        ret = e;
        goto err_spawn;
    }
    rank->running = true;
    job->nlive++;
    job->nspawned++;

    close(out[1]);
    close(err[1]);
    rank->out.fd = out[0];
    rank->err.fd = err[0];
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    sr_symrun_env_free(env);
    return 0;

err_spawn:
    posix_spawnattr_destroy(&attr);
err_attr:
    posix_spawn_file_actions_destroy(&fa);
err_fa:
    close(err[0]);
    close(err[1]);
err_pipe_err:
    close(out[0]);
    close(out[1]);
err_pipe_out:
    if (ret == -1)
        fprintf(stderr, "symrun: cannot start rank %d: %s\n", r, strerror(e));
err_env:
    sr_symrun_env_free(env);
    return ret;
}

static void sr_symrun_stop(sr_symrun_job_t *job, int sig)
{
    if (!job->stopping) {
        job->stopping = true;
        job->kill_deadline = sr_symrun_now_ns() + job->grace_ms * 1000000;
    }
    for (int r = 0; r < job->nspawned; r++) {
        if (job->ranks[r].running)
            killpg(job->ranks[r].pid, sig);
    }
}

static void sr_symrun_kill_all(sr_symrun_job_t *job)
{
    job->killed = true;
    for (int r = 0; r < job->nspawned; r++) {
        if (job->ranks[r].running)
            killpg(job->ranks[r].pid, SIGKILL);
    }
}

static void sr_symrun_rank_exited(sr_symrun_job_t *job, int r, int status)
{
    sr_symrun_rank_t *rank = &job->ranks[r];
    char name[32];

    rank->running = false;
    job->nlive--;
    if (job->nlive == 0)
        job->drain_deadline = sr_symrun_now_ns() + SR_SYMRUN_DRAIN_MS * 1000000;
    /* The leader is gone; anything left in its group is an orphan of the
     * job. The group id cannot be reused while members remain. */
    killpg(rank->pid, SIGKILL);

    /* Once stopping, deaths are consequences of our own signals. */
    if (job->stopping)
        return;
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        fprintf(stderr, "symrun: rank %d (pid %ld) exited with status %d\n", r,
                (long)rank->pid, WEXITSTATUS(status));
        sr_symrun_decide(job, WEXITSTATUS(status));
        sr_symrun_stop(job, SIGTERM);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);

        fprintf(stderr, "symrun: rank %d (pid %ld) killed by signal %d (%s)\n",
                r, (long)rank->pid, sig, sr_symrun_signame(sig, name,
                                                            sizeof(name)));
        sr_symrun_decide(job, 128 + sig);
        sr_symrun_stop(job, SIGTERM);
    }
}

/* As a subreaper we also collect descendants orphaned by their rank, so
 * anything that is not a rank is simply reaped. */
static void sr_symrun_reap(sr_symrun_job_t *job)
{
    for (;;) {
        int status;
        pid_t p = waitpid(-1, &status, WNOHANG);

        if (p < 0 && errno == EINTR)
            continue;
        if (p <= 0)
            return;
        for (int r = 0; r < job->nspawned; r++) {
            if (job->ranks[r].running && job->ranks[r].pid == p) {
                sr_symrun_rank_exited(job, r, status);
                break;
            }
        }
    }
}

/* SIGKILLs our remaining children; returns how many were found. Without
 * /proc nothing is found and the caller's time limit applies. */
static int sr_symrun_kill_children(void)
{
    pid_t self = getpid();
    struct dirent *de;
    int found = 0;
    DIR *d = opendir("/proc");

    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        char path[300], buf[512], *close_paren;
        long ppid;
        ssize_t n;
        int fd;

        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        /* The command name may hold spaces and parentheses; the fields
         * after the last ')' are fixed: state, then ppid. */
        close_paren = strrchr(buf, ')');
        if (close_paren == NULL ||
            sscanf(close_paren + 1, " %*c %ld", &ppid) != 1 || ppid != self)
            continue;
        kill((pid_t)atol(de->d_name), SIGKILL);
        found++;
    }
    closedir(d);
    return found;
}

/*
 * After the last rank: descendants that escaped their rank's process
 * group (setsid) were adopted by us as subreaper. Kill and reap them, so
 * that the job leaves neither orphans nor zombies behind.
 */
static void sr_symrun_reap_strays(void)
{
    int64_t deadline = sr_symrun_now_ns() + SR_SYMRUN_STRAY_MS * 1000000;

    for (;;) {
        const struct timespec pause = {0, 10 * 1000000};
        pid_t p = waitpid(-1, NULL, WNOHANG);

        if (p > 0 || (p < 0 && errno == EINTR))
            continue;
        if (p < 0 || sr_symrun_now_ns() >= deadline)
            return;
        sr_symrun_kill_children();
        nanosleep(&pause, NULL);
    }
}

/* ---- output forwarding ------------------------------------------------- */

static void sr_symrun_writev_all(sr_symrun_job_t *job, int fd,
                                 struct iovec *iov, int iovcnt)
{
    if (job->dest_dead[fd])
        return;
    while (iovcnt > 0) {
        ssize_t n = writev(fd, iov, iovcnt);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                /* Our stdout may be shared with a process that set it
                 * non-blocking; wait rather than drop output. */
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};

                poll(&pfd, 1, -1);
                continue;
            }
            job->dest_dead[fd] = true;
            return;
        }
        while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
}

/* Writes one piece of a line (pending part a, new part b) in one call, so
 * lines of different ranks never interleave. */
static void sr_symrun_emit(sr_symrun_job_t *job, int r, sr_symrun_stream_t *s,
                           const char *a, size_t alen, const char *b,
                           size_t blen, bool add_newline)
{
    char prefix[24];
    struct iovec iov[4];
    int n = 0;

    if (job->args.prefix_output && !s->midline) {
        int plen = snprintf(prefix, sizeof(prefix), "[%d] ", r);

        iov[n].iov_base = prefix;
        iov[n++].iov_len = (size_t)plen;
    }
    if (alen > 0) {
        iov[n].iov_base = (void *)a;
        iov[n++].iov_len = alen;
    }
    if (blen > 0) {
        iov[n].iov_base = (void *)b;
        iov[n++].iov_len = blen;
    }
    if (add_newline) {
        iov[n].iov_base = "\n";
        iov[n++].iov_len = 1;
    }
    sr_symrun_writev_all(job, s->dest_fd, iov, n);
}

static int sr_symrun_stream_keep(sr_symrun_stream_t *s, const char *data,
                                 size_t len)
{
    if (s->len + len > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        char *buf;

        while (cap < s->len + len)
            cap *= 2;
        buf = realloc(s->buf, cap);
        if (buf == NULL)
            return -1;
        s->buf = buf;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    return 0;
}

static void sr_symrun_stream_input(sr_symrun_job_t *job, int r,
                                   sr_symrun_stream_t *s, const char *data,
                                   size_t len)
{
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t n;

        if (nl == NULL) {
            if (s->len + len >= SR_SYMRUN_LINE_MAX ||
                sr_symrun_stream_keep(s, data, len) != 0) {
                sr_symrun_emit(job, r, s, s->buf, s->len, data, len, false);
                s->len = 0;
                s->midline = true;
            }
            return;
        }
        n = (size_t)(nl - data) + 1;
        sr_symrun_emit(job, r, s, s->buf, s->len, data, n, false);
        s->len = 0;
        s->midline = false;
        data += n;
        len -= n;
    }
}

static void sr_symrun_stream_close(sr_symrun_job_t *job, int r,
                                   sr_symrun_stream_t *s)
{
    if (s->fd < 0)
        return;
    /* A last line without its newline is still output. It is terminated
     * so that another rank's next line does not continue it, except for a
     * lone unprefixed rank, whose output then passes through unchanged. */
    bool terminate = job->args.prefix_output || job->args.nranks > 1;

    if (s->len > 0 || (s->midline && terminate))
        sr_symrun_emit(job, r, s, s->buf, s->len, NULL, 0, terminate);
    s->len = 0;
    s->midline = false;
    close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

static void sr_symrun_stream_read(sr_symrun_job_t *job, int r,
                                  sr_symrun_stream_t *s)
{
    ssize_t n;

    do {
        n = read(s->fd, job->readbuf, SR_SYMRUN_READ_CHUNK);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        sr_symrun_stream_input(job, r, s, job->readbuf, (size_t)n);
        return;
    }
    if (n < 0 && errno == EAGAIN)
        return;
    sr_symrun_stream_close(job, r, s);
}

/* ---- events ------------------------------------------------------------- */

static void sr_symrun_handle_signals(sr_symrun_job_t *job)
{
    struct signalfd_siginfo si;
    bool child = false;
    char name[32];

    while (read(job->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;

        if (sig == SIGCHLD) {
            child = true;
            continue;
        }
        if (job->stopping) {
            /* Asked again while waiting out the grace period: no more
             * patience. */
            if (!job->killed)
                sr_symrun_kill_all(job);
            sr_symrun_decide(job, 128 + sig);
            continue;
        }
        fprintf(stderr, "symrun: received %s; stopping %d rank%s\n",
                sr_symrun_signame(sig, name, sizeof(name)), job->nlive,
                job->nlive == 1 ? "" : "s");
        sr_symrun_decide(job, 128 + sig);
        sr_symrun_stop(job, sig);
    }
    if (child)
        sr_symrun_reap(job);
}

static void sr_symrun_handle_aborts(sr_symrun_job_t *job)
{
    sr_symrun_abort_rec_t rec;

    while (read(job->abort_rfd, &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
        int code;

        if (job->stopping)
            continue;
        rec.msg[sizeof(rec.msg) - 1] = '\0';
        fprintf(stderr, "symrun: rank %" PRIu32 " aborted the job (status %"
                PRId32 "): %s\n", rec.rank, rec.status, rec.msg);
        /* Only the low byte survives as an exit status; never let a
         * failure look like success. */
        code = rec.status & 0xff;
        sr_symrun_decide(job, code != 0 ? code : 1);
        sr_symrun_stop(job, SIGTERM);
    }
}

static int sr_symrun_poll_timeout(sr_symrun_job_t *job, int64_t now)
{
    int64_t next = INT64_MAX;
    int64_t ms;

    if (job->args.timeout_set && !job->stopping)
        next = job->timeout_deadline;
    if (job->stopping && !job->killed && job->kill_deadline < next)
        next = job->kill_deadline;
    if (job->nlive == 0 && job->drain_deadline < next)
        next = job->drain_deadline;
    if (next == INT64_MAX)
        return -1;
    if (next <= now)
        return 0;
    ms = (next - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int sr_symrun_loop(sr_symrun_job_t *job)
{
    int nranks = job->nspawned;
    struct pollfd *pfd;
    int *owner; /* per pollfd: rank * 2 + (0 stdout, 1 stderr) */

    pfd = calloc((size_t)nranks * 2 + 2, sizeof(*pfd));
    owner = calloc((size_t)nranks * 2 + 2, sizeof(*owner));
    if (pfd == NULL || owner == NULL) {
        fprintf(stderr, "symrun: out of memory\n");
        goto err_poll;
    }

    for (;;) {
        int64_t now = sr_symrun_now_ns();
        int nfds = 0;
        int nstreams = 0;
        int n;

        if (job->args.timeout_set && !job->stopping &&
            now >= job->timeout_deadline) {
            fprintf(stderr, "symrun: timeout after %g s; stopping %d rank%s\n",
                    job->args.timeout_s, job->nlive,
                    job->nlive == 1 ? "" : "s");
            sr_symrun_decide(job, SR_SYMRUN_EXIT_TIMEOUT);
            sr_symrun_stop(job, SIGTERM);
        }
        if (job->stopping && !job->killed && now >= job->kill_deadline)
            sr_symrun_kill_all(job);

        pfd[nfds].fd = job->sigfd;
        pfd[nfds++].events = POLLIN;
        pfd[nfds].fd = job->abort_rfd;
        pfd[nfds++].events = POLLIN;
        for (int r = 0; r < nranks; r++) {
            sr_symrun_stream_t *s[2] = {&job->ranks[r].out, &job->ranks[r].err};

            for (int k = 0; k < 2; k++) {
                if (s[k]->fd < 0)
                    continue;
                pfd[nfds].fd = s[k]->fd;
                pfd[nfds].events = POLLIN;
                owner[nfds++] = r * 2 + k;
                nstreams++;
            }
        }

        if (job->nlive == 0 && (nstreams == 0 || now >= job->drain_deadline))
            break;

        n = poll(pfd, (nfds_t)nfds, sr_symrun_poll_timeout(job, now));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "symrun: poll: %s\n", strerror(errno));
            goto err_poll;
        }
        if (n == 0)
            continue;

        /* Aborts first: a client is released from PMIx_Abort only after
         * its record is in the pipe, so its exit must not be judged
         * before the abort itself. */
        if (pfd[1].revents != 0)
            sr_symrun_handle_aborts(job);
        if (pfd[0].revents != 0)
            sr_symrun_handle_signals(job);
        for (int i = 2; i < nfds; i++) {
            sr_symrun_rank_t *rank;

            if (pfd[i].revents == 0)
                continue;
            rank = &job->ranks[owner[i] / 2];
            sr_symrun_stream_read(job, owner[i] / 2,
                                  owner[i] % 2 ? &rank->err : &rank->out);
        }
    }

    for (int r = 0; r < nranks; r++) {
        sr_symrun_stream_close(job, r, &job->ranks[r].out);
        sr_symrun_stream_close(job, r, &job->ranks[r].err);
    }
    free(owner);
    free(pfd);
    return 0;

err_poll:
    /* Without the loop nothing can wait out a grace period: kill and reap
     * at once so that no rank outlives the launcher. */
    sr_symrun_decide(job, SR_SYMRUN_EXIT_INTERNAL);
    sr_symrun_kill_all(job);
    for (int r = 0; r < nranks; r++) {
        sr_symrun_rank_t *rank = &job->ranks[r];
        int status;

        if (rank->running) {
            while (waitpid(rank->pid, &status, 0) < 0 && errno == EINTR)
                ;
            rank->running = false;
            job->nlive--;
        }
        if (rank->out.fd >= 0)
            close(rank->out.fd);
        if (rank->err.fd >= 0)
            close(rank->err.fd);
        rank->out.fd = rank->err.fd = -1;
    }
    free(owner);
    free(pfd);
    return -1;
}

/* ---- setup ---------------------------------------------------------------- */

static int sr_symrun_signals_setup(sr_symrun_job_t *job)
{
    static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    sigset_t mask;

    /* Blocked before any thread exists (PMIx starts one), so every thread
     * inherits the mask and the signals reach only the signalfd. */
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
        struct sigaction old;

        sigaction(forwarded[i], NULL, &old);
        /* Respect an inherited "ignore" for INT and HUP (nohup, or a
         * background job of a non-interactive shell); TERM is how anyone
         * asks us to stop, so it is always handled. */
        if (old.sa_handler == SIG_IGN && forwarded[i] != SIGTERM)
            continue;
        /* A blocked signal is queued for the signalfd only if its
         * disposition is not "ignore". */
        if (old.sa_handler == SIG_IGN)
            signal(forwarded[i], SIG_DFL);
        sigaddset(&mask, forwarded[i]);
    }
    if (sigprocmask(SIG_BLOCK, &mask, &job->orig_mask) != 0)
        goto err_mask;

    job->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job->sigfd < 0)
        goto err_mask;

    /* A vanished reader of our output must not kill the launcher before
     * it has cleaned up. */
    memset(&sa, 0, sizeof(sa));
    sigaction(SIGPIPE, NULL, &sa);
    job->pipe_dfl = sa.sa_handler == SIG_DFL;
    signal(SIGPIPE, SIG_IGN);
    return 0;

err_mask:
    fprintf(stderr, "symrun: cannot set up signal handling: %s\n",
            strerror(errno));
    return -1;
}

static int sr_symrun_abort_pipe_setup(sr_symrun_job_t *job)
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

static int sr_symrun_read_env_settings(sr_symrun_job_t *job)
{
    const char *s;

    job->grace_ms = SR_SYMRUN_DEFAULT_GRACE_MS;
    s = getenv("SYMRUN_GRACE_MS");
    if (s != NULL && s[0] != '\0' &&
        sr_symrun_args_parse_grace(s, &job->grace_ms) != 0) {
        fprintf(stderr, "symrun: SYMRUN_GRACE_MS: invalid value '%s' "
                "(expected milliseconds, 0..%ld)\n", s, SR_SYMRUN_MAX_GRACE_MS);
        return -1;
    }
    s = getenv("SYMRUN_TIMEOUT");
    if (!job->args.timeout_set && s != NULL && s[0] != '\0') {
        if (sr_symrun_args_parse_timeout(s, &job->args.timeout_s) != 0) {
            fprintf(stderr, "symrun: SYMRUN_TIMEOUT: invalid number of seconds "
                    "'%s' (expected a number > 0)\n", s);
            return -1;
        }
        job->args.timeout_set = true;
    }
    return 0;
}

static void sr_symrun_server_stop(sr_symrun_job_t *job)
{
    if (!job->server_up)
        return;
    PMIx_server_finalize();
    job->server_up = false;
}

int main(int argc, char **argv)
{
    sr_symrun_job_t job;
    char err[512];
    int code = SR_SYMRUN_EXIT_INTERNAL;
    int e;

    memset(&job, 0, sizeof(job));
    job.sigfd = job.abort_rfd = job.abort_wfd = -1;

    if (sr_symrun_args_parse(argc, argv, &job.args, err, sizeof(err)) != 0) {
        fprintf(stderr, "symrun: %s\n%s", err, sr_symrun_usage_line);
        return SR_SYMRUN_EXIT_USAGE;
    }
    if (job.args.action == SR_SYMRUN_ACTION_HELP) {
        sr_symrun_usage(stdout);
        code = fflush(stdout) == 0 ? 0 : SR_SYMRUN_EXIT_INTERNAL;
        goto err_args;
    }
    if (job.args.action == SR_SYMRUN_ACTION_VERSION) {
        printf("symrun (symrail) %s\n", PACKAGE_VERSION);
        code = fflush(stdout) == 0 ? 0 : SR_SYMRUN_EXIT_INTERNAL;
        goto err_args;
    }
    if (sr_symrun_read_env_settings(&job) != 0) {
        code = SR_SYMRUN_EXIT_USAGE;
        goto err_args;
    }
    if (sr_symrun_fix_std_fds() != 0 ||
        sr_symrun_raise_fd_limit(job.args.nranks) != 0)
        goto err_args;

    if (sr_symrun_build_env(&job) != 0)
        goto err_args;
    e = sr_symrun_find_prog(job.args.prog_argv[0],
                            sr_symrun_env_get(job.base_env, "PATH"),
                            &job.prog_path);
    if (e != 0) {
        fprintf(stderr, "symrun: cannot execute '%s': %s\n",
                job.args.prog_argv[0], strerror(e));
        code = SR_SYMRUN_EXIT_NOEXEC;
        goto err_env;
    }

    job.ranks = calloc((size_t)job.args.nranks, sizeof(*job.ranks));
    job.readbuf = malloc(SR_SYMRUN_READ_CHUNK);
    if (job.ranks == NULL || job.readbuf == NULL) {
        fprintf(stderr, "symrun: out of memory\n");
        goto err_alloc;
    }
    for (int r = 0; r < job.args.nranks; r++) {
        sr_symrun_stream_init(&job.ranks[r].out, STDOUT_FILENO);
        sr_symrun_stream_init(&job.ranks[r].err, STDERR_FILENO);
    }
    if (gethostname(job.hostname, sizeof(job.hostname) - 1) != 0)
        snprintf(job.hostname, sizeof(job.hostname), "localhost");
    snprintf(job.nspace, sizeof(job.nspace), "symrun-%ld", (long)getpid());

    /* Descendants orphaned by a rank become ours rather than init's, so
     * that they can be reaped and, if still alive at the end, killed. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        fprintf(stderr, "symrun: warning: cannot become a subreaper: %s\n",
                strerror(errno));
    if (sr_symrun_signals_setup(&job) != 0)
        goto err_alloc;
    if (sr_symrun_abort_pipe_setup(&job) != 0)
        goto err_signals;
    if (sr_symrun_tmpdir_make(&job) != 0)
        goto err_abort_pipe;
    if (sr_symrun_server_start(&job) != 0)
        goto err_tmpdir;
    if (sr_symrun_nspace_register(&job) != 0)
        goto err_server;

    if (job.args.timeout_set)
        job.timeout_deadline = sr_symrun_now_ns() +
                               (int64_t)(job.args.timeout_s * 1e9);

    for (int r = 0; r < job.args.nranks; r++) {
        /* A signal or failure that arrived while starting makes starting
         * more ranks pointless. */
        sr_symrun_handle_aborts(&job);
        sr_symrun_handle_signals(&job);
        if (job.stopping)
            break;
        e = sr_symrun_spawn_rank(&job, r);
        if (e == 0)
            continue;
        if (e > 0 && e != EAGAIN && e != ENOMEM) {
            fprintf(stderr, "symrun: cannot execute '%s': %s\n",
                    job.args.prog_argv[0], strerror(e));
            sr_symrun_decide(&job, SR_SYMRUN_EXIT_NOEXEC);
        } else {
            if (e > 0)
                fprintf(stderr, "symrun: cannot start rank %d: %s\n", r,
                        strerror(e));
            sr_symrun_decide(&job, SR_SYMRUN_EXIT_INTERNAL);
        }
        sr_symrun_stop(&job, SIGTERM);
        break;
    }

    if (sr_symrun_loop(&job) != 0)
        sr_symrun_decide(&job, SR_SYMRUN_EXIT_INTERNAL);
    sr_symrun_reap_strays();
    sr_symrun_decide(&job, 0);
    code = job.exit_code;
    sr_symrun_shm_remove(&job);

err_server:
    sr_symrun_server_stop(&job);
err_tmpdir:
    sr_symrun_tmpdir_remove(&job);
err_abort_pipe:
    sr_symrun_abort_fd = -1;
    close(job.abort_rfd);
    close(job.abort_wfd);
err_signals:
    if (job.sigfd >= 0)
        close(job.sigfd);
err_alloc:
    free(job.readbuf);
    free(job.ranks);
    free(job.prog_path);
err_env:
    sr_symrun_env_free(job.base_env);
err_args:
    sr_symrun_args_fini(&job.args);
    return code;
}
