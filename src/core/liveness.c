/*
 * Is a peer still there?  The core answers for every transport, so that
 * every blocking call ends the same way when a peer dies or stops: local
 * peers by their process id (and its state in /proc: a stopped process is
 * alive but will not answer), remote ones by what their transport says
 * (the connection is gone) and by when it last heard from them.
 */
#include "config.h"
#include "core/rt.h"
#include "util/log.h"
#include "util/sys.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Peers looked at per call, so that a wait with many peers stays cheap. */
#define SR_LIVE_BATCH 16

/* The process's state letter in /proc (R, S, T, Z, ...), or 0 when it
 * cannot tell. */
static char sr_pid_state(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses. */
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

/* What a look at pe finds, and why (for the log). */
static symrail_status_t sr_peer_look(int pe, uint64_t now_ns, const char **cause_p)
{
    sr_peer_t *p = &sr_rt.peers[pe];
    uint64_t limit = sr_rt.env.op_timeout * 1000000ull;
    if (pe == sr_rt.my_pe || p->ep == NULL)
        return SYMRAIL_OK;
    if (p->is_local && sr_rt.pids[pe] > 0) {
        *cause_p = "its process is gone";
        if (!sr_pid_alive(sr_rt.pids[pe]))
            return SYMRAIL_ERR_PEER_GONE;
        char state = sr_pid_state(sr_rt.pids[pe]);
        if (state == 'Z' || state == 'X')  /* dead, not yet reaped */
            return SYMRAIL_ERR_PEER_GONE;
        /* Atomic: a thread whose slice failed may look while another
         * thread runs the periodic check. */
        if (state == 'T' || state == 't') {
            uint64_t since = __atomic_load_n(&p->stopped_since, __ATOMIC_RELAXED);
            if (since == 0)
                __atomic_store_n(&p->stopped_since, since = now_ns, __ATOMIC_RELAXED);
            *cause_p = "its process is stopped";
            if (limit && now_ns - since >= limit)
                return SYMRAIL_ERR_PEER_UNRESPONSIVE;
        } else {
            __atomic_store_n(&p->stopped_since, 0, __ATOMIC_RELAXED);
        }
    }
    *cause_p = "its connection is lost";
    if (p->ops->ep_check(p->ep) == SYMRAIL_ERR_PEER_GONE)
        return SYMRAIL_ERR_PEER_GONE;
    uint64_t heard = p->ops->ep_heard(p->ep);
    uint64_t resumed = __atomic_load_n(&sr_rt.live_resumed, __ATOMIC_RELAXED);
    if (heard && heard < resumed)
        heard = resumed;
    /* What we heard last may be up to one heartbeat old when the silence
     * starts, and a transport that waits on a request of ours says more
     * (which peer, which address) than silence does: one beat of slack. */
    uint64_t beat = sr_rt.env.heartbeat * 1000000ull;
    if (beat > limit / 4)
        beat = limit / 4;
    *cause_p = "nothing heard from it";
    if (heard && limit && now_ns > heard && now_ns - heard >= limit + beat)
        return SYMRAIL_ERR_PEER_UNRESPONSIVE;
    return SYMRAIL_OK;
}

/*
 * One change of pe's state, logged by the thread that makes it.  FAILED is
 * for good: a process that is gone does not come back under its number
 * (rejoining would take new endpoints).
 */
static void sr_peer_state_set(int pe, int to, const char *cause)
{
    sr_peer_t *p = &sr_rt.peers[pe];
    uint8_t from = __atomic_load_n(&p->state, __ATOMIC_RELAXED);
    do {
        if (from == to || from == SYMRAIL_PEER_FAILED)
            return;
    } while (!__atomic_compare_exchange_n(&p->state, &from, (uint8_t)to, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    /* Two changes of one peer from two threads may store out of order: the
     * newest number must stay, or a wait would skip the later change. */
    uint64_t gen = __atomic_add_fetch(&sr_rt.peer_events, 1, __ATOMIC_ACQ_REL);
    uint64_t cur = __atomic_load_n(&p->state_gen, __ATOMIC_RELAXED);
    while (cur < gen && !__atomic_compare_exchange_n(&p->state_gen, &cur, gen, 0,
                                                     __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    if (from == SYMRAIL_PEER_OK)
        __atomic_fetch_add(&sr_rt.peers_down, 1, __ATOMIC_ACQ_REL);
    else if (to == SYMRAIL_PEER_OK)
        __atomic_fetch_sub(&sr_rt.peers_down, 1, __ATOMIC_ACQ_REL);
    if (to == SYMRAIL_PEER_FAILED) {
        __atomic_fetch_add(&sr_rt.peers_failed, 1, __ATOMIC_RELAXED);
        sr_warn("PE %d (pid %d) failed: %s%s", pe, sr_rt.pids[pe], cause,
                sr_rt.report ? "; calls to it return an error (SYMRAIL_ON_PEER_FAILURE=report)"
                             : "");
    } else if (to == SYMRAIL_PEER_SUSPECT) {
        __atomic_fetch_add(&sr_rt.peers_suspect, 1, __ATOMIC_RELAXED);
        sr_warn("PE %d (pid %d) is suspect: %s for over %llu ms (SYMRAIL_OP_TIMEOUT)", pe,
                sr_rt.pids[pe], cause, (unsigned long long)sr_rt.env.op_timeout);
    } else {
        sr_info("PE %d (pid %d) answers again", pe, sr_rt.pids[pe]);
    }
}

symrail_status_t sr_peer_alive(int pe, uint64_t now_ns)
{
    if (sr_peer_failed(pe))
        return SYMRAIL_ERR_PEER_GONE;
    const char *cause = "";
    symrail_status_t st = sr_peer_look(pe, now_ns, &cause);
    sr_peer_state_set(pe,
                      st == SYMRAIL_ERR_PEER_GONE           ? SYMRAIL_PEER_FAILED
                      : st == SYMRAIL_ERR_PEER_UNRESPONSIVE ? SYMRAIL_PEER_SUSPECT
                                                            : SYMRAIL_PEER_OK,
                      cause);
    return st;
}

/* When the moment was last given to a peer in vain (by pe, folded: a
 * collision only costs a peer its moment). */
static uint64_t sr_gone_soon_no[256];

int sr_peer_gone_soon(int pe)
{
    /* A local peer breaks its lanes (its memory goes) a moment before its
     * process is seen gone, and a remote one's lanes close one after the
     * other: give either that moment, once.  Every slice of a transfer
     * over a dead link fails in turn; a moment each would stretch the
     * failure far past the operation timeout, so within one timeout of a
     * moment given in vain the answer is what the peer's state says now. */
    uint64_t *no = &sr_gone_soon_no[(unsigned)pe % 256];
    uint64_t now = sr_time_ns(), last = __atomic_load_n(no, __ATOMIC_RELAXED);
    uint64_t window = sr_rt.env.op_timeout ? sr_rt.env.op_timeout * 1000000ull : 1000000000ull;
    if (last && now - last < window)
        return sr_peer_alive(pe, now) == SYMRAIL_ERR_PEER_GONE;
    /* A quarter of the timeout, between 200 ms and 1 s: on a loaded
     * machine the last lane of a killed remote peer took more than 200 ms
     * to be seen closed (t_peerfail inflight fadd over TCP). */
    uint64_t moment = window / 4;
    moment = moment < 200000000ull ? 200000000ull : moment > 1000000000ull ? 1000000000ull : moment;
    for (uint64_t end = now + moment;;) {
        if (sr_peer_alive(pe, sr_time_ns()) == SYMRAIL_ERR_PEER_GONE)
            return 1;
        if (sr_time_ns() >= end)
            break;
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    __atomic_store_n(no, sr_time_ns(), __ATOMIC_RELAXED);
    return 0;
}

void sr_peers_watch_local(void)
{
    for (int pe = 0; pe < sr_rt.n_pes; pe++) {
        int pid = sr_rt.pids[pe];
        if (pe == sr_rt.my_pe || !sr_rt.peers[pe].is_local || pid <= 0 || sr_peer_failed(pe))
            continue;
        char state = sr_pid_alive(pid) ? sr_pid_state(pid) : 'X';
        if (state == 'Z' || state == 'X')  /* dead, reaped or not */
            sr_peer_state_set(pe, SYMRAIL_PEER_FAILED, "its process is gone");
    }
}

symrail_status_t sr_peers_members_ok(const char *fn, const int *world, int start, int stride,
                                     int n)
{
    if (sr_likely(__atomic_load_n(&sr_rt.peers_down, __ATOMIC_RELAXED) == 0))
        return SYMRAIL_OK;
    for (int i = 0; i < n; i++) {
        int pe = world ? world[i] : start + i * stride;
        if (sr_peer_failed(pe)) {
            sr_error("%s: PE %d of the team has failed: the collective cannot complete", fn, pe);
            return SYMRAIL_ERR_PEER_GONE;
        }
    }
    return SYMRAIL_OK;
}

int sr_peers_check(uint64_t now_ns, symrail_status_t *st_p)
{
    int n = sr_rt.n_pes;
    /* A long gap since the last look means this process did not run (it was
     * stopped, or not waiting): what it last heard is old through no fault
     * of the peers, who get a full timeout from now. */
    uint64_t gap = 2 * sr_rt.env.heartbeat * 1000000ull + 1000000000ull;
    if (sr_rt.live_last && now_ns - sr_rt.live_last > gap)
        __atomic_store_n(&sr_rt.live_resumed, now_ns, __ATOMIC_RELAXED);
    sr_rt.live_last = now_ns;
    for (int i = 0; i < n && i < SR_LIVE_BATCH; i++) {
        int pe = sr_rt.live_next;
        sr_rt.live_next = (pe + 1) % n;
        symrail_status_t st = sr_peer_alive(pe, now_ns);
        if (st != SYMRAIL_OK) {
            *st_p = st;
            return pe;
        }
    }
    return -1;
}

const char *sr_wait_on_name(const sr_wait_on_t *on, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s", on->what);
    if (on->pe >= 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", waiting on PE %d", on->pe);
    if (on->addr && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "%s word %p%s",
                      on->pe >= 0 ? " for" : ", waiting on", on->addr,
                      sr_data_contains(on->addr) ? " (data segment)" : "");
    return buf;
}

void sr_peer_fail_log(const sr_wait_on_t *on, int pe, symrail_status_t st)
{
    char what[192];
    sr_wait_on_name(on, what, sizeof(what));
    if (st == SYMRAIL_ERR_PEER_UNRESPONSIVE)
        sr_error("%s: PE %d (pid %d) is unresponsive: no sign of life for over %llu ms "
                 "(SYMRAIL_OP_TIMEOUT)", what, pe, sr_rt.pids[pe],
                 (unsigned long long)sr_rt.env.op_timeout);
    else
        sr_error("%s: PE %d (pid %d) is gone", what, pe, sr_rt.pids[pe]);
}
