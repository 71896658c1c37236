/* The ranks' processes: descriptors, spawning, signals, reaping. */
#define _GNU_SOURCE

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Descriptors 0-2 must exist: otherwise a pipe created for a child could
 * land on one of them and be clobbered by its own dup2. */
int sr_symrun_fix_std_fds(void)
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
int sr_symrun_raise_fd_limit(int nranks)
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

/* ---- children ---------------------------------------------------------- */

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/*
 * Marks every descriptor from 3 up close-on-exec, in the child between fork
 * and exec: the PMIx server opens its listener and its connections to the
 * ranks already started without that flag, and whatever symrun inherited
 * from its own caller is not the program's either.  Marking rather than
 * closing keeps the exec report pipe working until the exec. Kernels
 * before 5.11 lack close_range: then the descriptors open are read from
 * /proc/self/fd (raw getdents64, which is async-signal-safe where opendir
 * is not), since a loop to the soft limit both costs one fcntl per possible
 * descriptor and misses those opened above a limit lowered since; only
 * without /proc does it loop.  no_cr (SYMRUN_TEST_NO_CLOSE_RANGE) takes the
 * fallback where close_range exists, for the tests.
 */
struct sr_symrun_dirent64 {
    unsigned long long d_ino;
    long long          d_off;
    unsigned short     d_reclen;
    unsigned char      d_type;
    char               d_name[];
};

static int sr_symrun_cloexec_proc(void)
{
    int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    _Alignas(8) char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < n;) {
            const struct sr_symrun_dirent64 *d = (const void *)(buf + off);
            long fd = 0;
            const char *c = d->d_name;
            off += d->d_reclen;
            if (*c < '0' || *c > '9')
                continue;  /* . and .. */
            for (; *c >= '0' && *c <= '9'; c++)
                fd = fd * 10 + (*c - '0');
            if (fd >= 3 && fd != dfd)
                (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
        }
    }
    close(dfd);
    return n == 0 ? 0 : -1;
}

static void sr_symrun_cloexec_all(int no_cr, long fd_max)
{
#ifdef SYS_close_range
    if (!no_cr && syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
#else
    (void)no_cr;
#endif
    if (sr_symrun_cloexec_proc() == 0)
        return;
    for (long fd = 3; fd < fd_max; fd++)
        (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

/*
 * fork and exec rather than posix_spawn, for PR_SET_PDEATHSIG: a rank must
 * not outlive a launcher killed with SIGKILL, which can clean nothing up.
 * The child may only make async-signal-safe calls (the PMIx threads
 * exist). Returns 0, an errno value from execve (the program could not be
 * executed), or minus an errno value for any other failure.
 */
static int sr_symrun_fork_exec(sr_symrun_job_t *job, int r, int out_w, int err_w,
                               char **env, pid_t *pid_p)
{
    pid_t parent = getpid();
    long fd_max = sysconf(_SC_OPEN_MAX);
    int no_cr = getenv("SYMRUN_TEST_NO_CLOSE_RANGE") != NULL;
    int rep[2];
    pid_t pid;
    ssize_t n;
    int e;

    if (pipe2(rep, O_CLOEXEC) != 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        e = errno;
        close(rep[0]);
        close(rep[1]);
        return -e;
    }
    if (pid == 0) {
        struct sigaction dfl;
        int fd = open("/dev/null", O_RDONLY);

        if (fd < 0 || dup2(fd, STDIN_FILENO) < 0 ||
            dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0)
            goto child_fail;
        if (fd > STDERR_FILENO)
            close(fd);
        sr_symrun_cloexec_all(no_cr, fd_max < 0 ? 1024 : fd_max);
        /* Own process group, so that stopping a rank reaches whatever it
         * started. */
        if (setpgid(0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            goto child_fail;
        /* The launcher may have died before the death signal was armed. */
        if (getppid() != parent)
            _exit(SR_SYMRUN_EXIT_INTERNAL);
        /* The launcher's blocked signals and ignored SIGPIPE are its own
         * business and must not leak into the program. */
        if (job->pipe_dfl) {
            memset(&dfl, 0, sizeof(dfl));
            dfl.sa_handler = SIG_DFL;
            sigaction(SIGPIPE, &dfl, NULL);
        }
        sigprocmask(SIG_SETMASK, &job->orig_mask, NULL);
        /* The plan was made from the launcher's own CPUs, so this fails
         * only if they changed meanwhile: run unbound rather than not. */
        if (job->bind_sets != NULL &&
            sched_setaffinity(0, sizeof(job->bind_sets[r]), &job->bind_sets[r]) != 0) {
            static const char msg[] = "symrun: warning: cannot bind a rank to its CPUs\n";
            n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
            (void)n;
        }
        execve(job->prog_path, job->args.prog_argv, env);
child_fail:
        e = errno;
        n = write(rep[1], &e, sizeof(e));
        (void)n;
        _exit(SR_SYMRUN_EXIT_NOEXEC);
    }
    close(rep[1]);
    /* End of file: the exec happened (the pipe is close-on-exec). */
    do {
        n = read(rep[0], &e, sizeof(e));
    } while (n < 0 && errno == EINTR);
    close(rep[0]);
    if (n == (ssize_t)sizeof(e)) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return e != 0 ? e : EINVAL;
    }
    *pid_p = pid;
    return 0;
}

/*
 * Starts rank r. Returns 0, or an errno value from posix_spawn (the
 * program could not be executed), or -1 after printing a message for any
 * other failure.
 */
int sr_symrun_spawn_rank(sr_symrun_job_t *job, int r)
{
    sr_symrun_rank_t *rank = &job->ranks[r];
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

    e = sr_symrun_fork_exec(job, r, out[1], err[1], env, &rank->pid);
    if (e != 0) {
        rank->pid = 0;
        if (e > 0)
            ret = e;
        else
            e = -e;
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
    sr_symrun_env_free(env);
    return 0;

err_spawn:
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

void sr_symrun_stop(sr_symrun_job_t *job, int sig)
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

void sr_symrun_kill_all(sr_symrun_job_t *job)
{
    job->killed = true;
    for (int r = 0; r < job->nspawned; r++) {
        if (job->ranks[r].running)
            killpg(job->ranks[r].pid, SIGKILL);
    }
}

/* When a rank fails (often in init, timed out waiting for the others),
 * the ranks that never reached PMIx are the likely cause: name them. */
static void sr_symrun_name_absent(sr_symrun_job_t *job)
{
    for (int r = 0; r < job->nspawned; r++) {
        if (job->ranks[r].running &&
            job->ranks[r].pmix_state == SR_SYMRUN_PMIX_NONE)
            fprintf(stderr, "symrun: rank %d (pid %ld) had not started PMIx "
                    "(symrail_init)\n", r, (long)job->ranks[r].pid);
    }
}

/* Under SYMRAIL_ON_PEER_FAILURE=report the ranks go on without one that
 * failed once it was up (they notice it themselves); one that failed
 * before is likely what the others wait for in init. */
static const char *sr_symrun_goes_on(const sr_symrun_job_t *job, const sr_symrun_rank_t *rank)
{
    if (job->keep_going && rank->pmix_state != SR_SYMRUN_PMIX_NONE && job->nlive > 0)
        return "; the others go on (SYMRAIL_ON_PEER_FAILURE=report)";
    return "";
}

static void sr_symrun_failed(sr_symrun_job_t *job, const sr_symrun_rank_t *rank)
{
    if (*sr_symrun_goes_on(job, rank))
        return;
    sr_symrun_name_absent(job);
    sr_symrun_stop(job, SIGTERM);
}

static void sr_symrun_rank_exited(sr_symrun_job_t *job, int r, int status)
{
    sr_symrun_rank_t *rank = &job->ranks[r];
    char name[32];

    rank->running = false;
    job->nlive--;
    /* Its published keys describe memory that is gone. */
    sr_symrun_pubsub_purge((pmix_rank_t)r);
    if (job->nlive == 0)
        job->drain_deadline = sr_symrun_now_ns() + SR_SYMRUN_DRAIN_MS * 1000000;
    /* The leader is gone; anything left in its group is an orphan of the
     * job. The group id cannot be reused while members remain. */
    killpg(rank->pid, SIGKILL);

    /* Once stopping, deaths are consequences of our own signals. */
    if (job->stopping)
        return;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
        rank->pmix_state == SR_SYMRUN_PMIX_NONE) {
        rank->unfinished = true;
        job->nunfinished++;
        sr_symrun_check_waiting(job);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        fprintf(stderr, "symrun: rank %d (pid %ld) exited with status %d%s\n", r,
                (long)rank->pid, WEXITSTATUS(status), sr_symrun_goes_on(job, rank));
        sr_symrun_decide(job, WEXITSTATUS(status));
        sr_symrun_failed(job, rank);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);

        fprintf(stderr, "symrun: rank %d (pid %ld) killed by signal %d (%s)%s\n",
                r, (long)rank->pid, sig, sr_symrun_signame(sig, name, sizeof(name)),
                sr_symrun_goes_on(job, rank));
        sr_symrun_decide(job, 128 + sig);
        sr_symrun_failed(job, rank);
    }
}

/*
 * A rank that ended with status 0 without ever starting PMIx, while
 * others are connected, leaves them in the fence of init for good.
 * Programs that use no PMIx at all connect nothing and are left alone; a
 * rank that leaves after init is the library's to detect (peer gone).
 */
void sr_symrun_check_waiting(sr_symrun_job_t *job)
{
    int nwaiting = 0;

    if (job->stopping || job->nunfinished == 0)
        return;
    for (int r = 0; r < job->nspawned; r++) {
        if (job->ranks[r].running &&
            job->ranks[r].pmix_state == SR_SYMRUN_PMIX_CONNECTED)
            nwaiting++;
    }
    if (nwaiting == 0)
        return;
    for (int r = 0; r < job->nspawned; r++) {
        if (job->ranks[r].unfinished)
            fprintf(stderr, "symrun: rank %d (pid %ld) exited with status 0 "
                    "without starting PMIx (symrail_init) while other ranks "
                    "wait for it\n",
                    r, (long)job->ranks[r].pid);
    }
    sr_symrun_decide(job, SR_SYMRUN_EXIT_INTERNAL);
    sr_symrun_stop(job, SIGTERM);
}

/* As a subreaper we also collect descendants orphaned by their rank, so
 * anything that is not a rank is simply reaped. */
void sr_symrun_reap(sr_symrun_job_t *job)
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
void sr_symrun_reap_strays(void)
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

void sr_symrun_handle_signals(sr_symrun_job_t *job)
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
        if (job->nspawned == 0)
            fprintf(stderr, "symrun: received %s before any rank started; "
                    "starting none\n", sr_symrun_signame(sig, name, sizeof(name)));
        else
            fprintf(stderr, "symrun: received %s; stopping %d rank%s\n",
                    sr_symrun_signame(sig, name, sizeof(name)), job->nlive,
                    job->nlive == 1 ? "" : "s");
        sr_symrun_decide(job, 128 + sig);
        sr_symrun_stop(job, sig);
    }
    if (child)
        sr_symrun_reap(job);
}

/* ---- setup ---------------------------------------------------------------- */

int sr_symrun_signals_setup(sr_symrun_job_t *job)
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

