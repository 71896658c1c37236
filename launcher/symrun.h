/*
 * symrun's private interface: the job state shared by the main loop
 * (symrun.c), the PMIx server (symrun_pmix.c) and its data store
 * (symrun_pubsub.c), the ranks' processes
 * (symrun_proc.c), their environment (symrun_env.c) and the forwarding of
 * their output (symrun_io.c).
 */
#ifndef SYMRUN_H
#define SYMRUN_H

#include "symrun_args.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <pmix.h>
#include <pmix_server.h>

#define SR_SYMRUN_DEFAULT_GRACE_MS 2000L
/* Output pipes still open after the last rank was reaped are held by
 * descendants that left their rank's process group; their output is not
 * worth a long wait. */
#define SR_SYMRUN_DRAIN_MS 500L
/* How long to wait for killed stray descendants to be reapable. */
#define SR_SYMRUN_STRAY_MS 2000L
/* In the private directory: the launcher's pid, for stale-directory
 * cleanup. */
#define SR_SYMRUN_PID_FILE "launcher.pid"
/* How long PMIx_server_finalize may take. */
#define SR_SYMRUN_FINALIZE_MS 2000L
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

/* How far a rank got with PMIx; written by the PMIx thread. */
enum {
    SR_SYMRUN_PMIX_NONE,
    SR_SYMRUN_PMIX_CONNECTED,
    SR_SYMRUN_PMIX_FINALIZED,
};

typedef struct {
    pid_t pid; /* 0 until spawned */
    bool running;
    _Atomic int pmix_state;
    /* Exited with status 0 without ever connecting to PMIx. */
    bool unfinished;
    sr_symrun_stream_t out;
    sr_symrun_stream_t err;
} sr_symrun_rank_t;

/* Written by the PMIx progress thread; kept under PIPE_BUF so that each
 * record reaches the pipe whole. */
typedef struct {
    uint32_t kind; /* SR_SYMRUN_REC_* */
    uint32_t rank;
    int32_t status;
    char msg[1024];
} sr_symrun_abort_rec_t;

/* An abort, or only a wake-up: a client connected or finalized. */
#define SR_SYMRUN_REC_ABORT 0
#define SR_SYMRUN_REC_STATE 1

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
    /* Rank r runs on bind_sets[r]; NULL: where the launcher runs. */
    cpu_set_t *bind_sets;
    char *prog_path;
    char **base_env;
    char tmpdir[PATH_MAX];
    bool tmpdir_made;
    bool server_up;
    bool server_stuck; /* PMIx_server_finalize never returned */
    pmix_nspace_t nspace;
    char hostname[256];

    sr_symrun_rank_t *ranks;
    int nspawned;
    int nlive;
    int nunfinished;

    sigset_t orig_mask;
    bool pipe_dfl; /* SIGPIPE was at its default when we started */
    int sigfd;
    int abort_rfd;
    int abort_wfd;

    bool stopping;
    bool killed;
    bool keep_going; /* SYMRAIL_ON_PEER_FAILURE=report: a rank's failure ends it alone */
    int64_t kill_deadline;
    int64_t drain_deadline;
    int64_t timeout_deadline;

    bool exit_decided;
    int exit_code;

    bool dest_dead[3]; /* our stdout/stderr went away: drop output */
    char *readbuf;
} sr_symrun_job_t;

/* symrun.c */
int64_t sr_symrun_now_ns(void);
void sr_symrun_decide(sr_symrun_job_t *job, int code);
const char *sr_symrun_signame(int sig, char *buf, size_t len);

/* symrun_env.c */
void sr_symrun_env_free(char **env);
int sr_symrun_env_dup(char *const *src, char ***env_p);
const char *sr_symrun_env_get(char **env, const char *name);
int sr_symrun_build_env(sr_symrun_job_t *job);
int sr_symrun_find_prog(const char *prog, const char *path, char **resolved_p);

/* symrun_pmix.c */
void sr_symrun_wait_init(sr_symrun_wait_t *w);
void sr_symrun_wait_fini(sr_symrun_wait_t *w);
void sr_symrun_op_cb(pmix_status_t status, void *cbdata);
pmix_status_t sr_symrun_wait_for(sr_symrun_wait_t *w, pmix_status_t rc);
int sr_symrun_abort_pipe_setup(sr_symrun_job_t *job);
void sr_symrun_abort_pipe_close(sr_symrun_job_t *job);
int sr_symrun_server_start(sr_symrun_job_t *job);
int sr_symrun_nspace_register(sr_symrun_job_t *job);
void sr_symrun_server_stop(sr_symrun_job_t *job);

/* symrun_pubsub.c: the server's publish, lookup and unpublish upcalls */
pmix_status_t sr_symrun_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t sr_symrun_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t sr_symrun_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
void sr_symrun_pubsub_purge(pmix_rank_t rank);
int sr_symrun_pubsub_start(const char *nspace);
void sr_symrun_pubsub_stop(void);

/* symrun_proc.c */
int sr_symrun_fix_std_fds(void);
int sr_symrun_raise_fd_limit(int nranks);
int sr_symrun_signals_setup(sr_symrun_job_t *job);
void sr_symrun_handle_signals(sr_symrun_job_t *job);
int sr_symrun_spawn_rank(sr_symrun_job_t *job, int r);
void sr_symrun_stop(sr_symrun_job_t *job, int sig);
void sr_symrun_kill_all(sr_symrun_job_t *job);
void sr_symrun_reap(sr_symrun_job_t *job);
void sr_symrun_reap_strays(void);
void sr_symrun_check_waiting(sr_symrun_job_t *job);

/* symrun_io.c */
void sr_symrun_stream_init(sr_symrun_stream_t *s, int dest_fd);
void sr_symrun_stream_read(sr_symrun_job_t *job, int r, sr_symrun_stream_t *s);
void sr_symrun_stream_close(sr_symrun_job_t *job, int r, sr_symrun_stream_t *s);

#endif
