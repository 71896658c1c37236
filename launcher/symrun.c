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

#include "symrun.h"
#include "symrun_bind.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static const char sr_symrun_usage_line[] =
    "usage: symrun -n N [--prefix-output] [--timeout S] [--bind-to core|none] "
    "[-x VAR=value | -x VAR] [--] prog [args...]\n";

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
          "  --bind-to core     run each rank on its own core, in hwloc's order,\n"
          "                     among the CPUs symrun may use (taskset); the default\n"
          "                     when there are no more ranks than such CPUs\n"
          "  --bind-to none     leave the ranks where symrun runs; the default when\n"
          "                     there are more ranks than CPUs.  The environment\n"
          "                     variable SYMRUN_BIND_TO sets a default\n"
          "  -x VAR=value       set VAR in the ranks' environment\n"
          "  -x VAR             pass this launcher's value of VAR to the ranks\n"
          "  -h, --help         print this help and exit\n"
          "  -V, --version      print the version and exit\n"
          "\n"
          "Signals INT, TERM and HUP are forwarded to all ranks; ranks still alive\n"
          "after a grace period (SYMRUN_GRACE_MS, default 2000 ms) are killed.\n"
          "When a rank fails, the others are stopped the same way and symrun\n"
          "exits with that rank's status (128+N for signal N).  With\n"
          "SYMRAIL_ON_PEER_FAILURE=report in its environment, a rank that fails\n"
          "after it started PMIx ends alone: the others go on, and symrun exits\n"
          "with the first failed rank's status once they are done.\n"
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

int64_t sr_symrun_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sr_symrun_decide(sr_symrun_job_t *job, int code)
{
    if (job->exit_decided)
        return;
    job->exit_decided = true;
    job->exit_code = code;
}

const char *sr_symrun_signame(int sig, char *buf, size_t len)
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

/* symrail PEs name their shared-memory objects /symrail-<nspace>-...; they
 * unlink them once every local peer has attached, but a rank killed during
 * start-up cannot.  Every rank is gone by now, so whatever is left is stale. */
static void sr_symrun_shm_remove(const char *nspace)
{
    char prefix[PMIX_MAX_NSLEN + 16];
    int len = snprintf(prefix, sizeof(prefix), "symrail-%s-", nspace);
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, (size_t)len) == 0 && unlinkat(dirfd(d), e->d_name, 0) != 0)
            fprintf(stderr, "symrun: warning: cannot remove /dev/shm/%s: %s\n", e->d_name,
                    strerror(errno));
    closedir(d);
}

/* The pid of the launcher that owns dir/name, or 0 if it cannot be told. */
static pid_t sr_symrun_tmpdir_owner(int dfd, const char *name)
{
    char path[NAME_MAX + 32], buf[32];
    ssize_t n;
    long pid;
    int fd;

    snprintf(path, sizeof(path), "%s/" SR_SYMRUN_PID_FILE, name);
    fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    pid = strtol(buf, NULL, 10);
    return pid > 0 && pid <= INT_MAX ? (pid_t)pid : 0;
}

/*
 * A launcher killed with SIGKILL leaves its private directory (and maybe
 * shared-memory objects of its job) behind. Removed here: only this user's
 * directories, and only those whose recorded launcher no longer exists; a
 * directory without a pid may be one another launcher is just creating.
 */
static void sr_symrun_stale_remove(const char *base)
{
    DIR *d = opendir(base);
    uid_t me = geteuid();

    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[PATH_MAX], nspace[PMIX_MAX_NSLEN + 1];
        struct stat st;
        pid_t owner;

        if (strncmp(e->d_name, "symrun.", 7) != 0 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != me)
            continue;
        owner = sr_symrun_tmpdir_owner(dirfd(d), e->d_name);
        if (owner == 0 || kill(owner, 0) == 0 || errno != ESRCH)
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", base, e->d_name) >= sizeof(path))
            continue;
        nftw(path, sr_symrun_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        snprintf(nspace, sizeof(nspace), "symrun-%ld", (long)owner);
        sr_symrun_shm_remove(nspace);
    }
    closedir(d);
}

static int sr_symrun_tmpdir_make(sr_symrun_job_t *job)
{
    const char *base = getenv("TMPDIR");
    char path[PATH_MAX + 32], pid[24];
    int n, fd;

    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    n = snprintf(job->tmpdir, sizeof(job->tmpdir), "%s/symrun.XXXXXX", base);
    if (n < 0 || (size_t)n >= sizeof(job->tmpdir)) {
        fprintf(stderr, "symrun: TMPDIR is too long\n");
        return -1;
    }
    sr_symrun_stale_remove(base);
    /* mkdtemp creates it 0700, which keeps PMIx's rendezvous and
     * shared-memory files away from other users. */
    if (mkdtemp(job->tmpdir) == NULL) {
        fprintf(stderr, "symrun: cannot create a directory in %s: %s\n", base,
                strerror(errno));
        return -1;
    }
    job->tmpdir_made = true;
    /* For the next launcher, should this one be killed. */
    snprintf(path, sizeof(path), "%s/" SR_SYMRUN_PID_FILE, job->tmpdir);
    n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, pid, (size_t)n) != n)
        fprintf(stderr, "symrun: warning: cannot write %s: %s\n", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return 0;
}

static void sr_symrun_tmpdir_remove(sr_symrun_job_t *job)
{
    if (!job->tmpdir_made)
        return;
    nftw(job->tmpdir, sr_symrun_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    job->tmpdir_made = false;
}

/* ---- events ------------------------------------------------------------- */

static void sr_symrun_handle_aborts(sr_symrun_job_t *job)
{
    sr_symrun_abort_rec_t rec;

    while (read(job->abort_rfd, &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
        int code;

        if (rec.kind == SR_SYMRUN_REC_STATE) {
            sr_symrun_check_waiting(job);
            continue;
        }
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
    s = getenv("SYMRUN_BIND_TO");
    if (!job->args.bind_set && s != NULL && s[0] != '\0') {
        if (sr_symrun_args_parse_bind(s, &job->args.bind) != 0) {
            fprintf(stderr, "symrun: SYMRUN_BIND_TO: invalid value '%s' "
                    "(expected core or none)\n", s);
            return -1;
        }
        job->args.bind_set = true;
    }
    return 0;
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

    /* Unasked, binding is only a default: a value that was asked for is
     * warned about when it cannot be honoured. */
    if (sr_symrun_bind_make(job.args.bind, job.args.bind_set, job.args.nranks,
                            &job.bind_sets) != 0)
        goto err_args;
    if (sr_symrun_build_env(&job) != 0)
        goto err_bind;
    /* The ranks' own setting, -x included: with it they go on without a
     * failed rank, and so do we. */
    const char *policy = sr_symrun_env_get(job.base_env, "SYMRAIL_ON_PEER_FAILURE");
    job.keep_going = policy != NULL && strcasecmp(policy, "report") == 0;
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
    sr_symrun_shm_remove(job.nspace);

err_server:
    sr_symrun_server_stop(&job);
err_tmpdir:
    sr_symrun_tmpdir_remove(&job);
err_abort_pipe:
    sr_symrun_abort_pipe_close(&job);
err_signals:
    if (job.sigfd >= 0)
        close(job.sigfd);
err_alloc:
    free(job.readbuf);
    free(job.ranks);
    free(job.prog_path);
err_env:
    sr_symrun_env_free(job.base_env);
err_bind:
    free(job.bind_sets);
err_args:
    sr_symrun_args_fini(&job.args);
    if (job.server_stuck) {
        fflush(NULL);
        _exit(code);
    }
    return code;
}
