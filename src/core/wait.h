/*
 * How blocking calls wait: the one wait loop (progress.c), requests
 * (req.c) and the liveness of peers (liveness.c, watch.c).  Part of rt.h,
 * which includes it where the types it uses are declared: include rt.h.
 */
#ifndef SR_CORE_WAIT_H
#define SR_CORE_WAIT_H

#ifndef SR_CORE_RT_H
#error "include core/rt.h, which includes this where its types are declared"
#endif

/* progress.c: one wait loop for every blocking call. */
typedef int (*sr_cond_fn_t)(void *arg);
enum {
    SR_WAIT_REMOTE = 1,        /* the condition changes when a peer writes to us: may sleep */
    SR_WAIT_USER_TIMEOUT = 2,  /* the caller asked for the timeout: not an error to log */
};
/* Drives the transports, and the completions and retries of ctx (NULL: of
 * no context; in a single-threaded job every context's are handled). */
int  sr_progress(sr_ctx_t *ctx);
/* After wireup: how long waits poll before they sleep (progress.c). */
void sr_wait_setup(void);
/* What a wait waits for, for its messages and for the failure policy:
 * `what` names the call, pe the peer it depends on (SR_WAIT_PE_ANY: one it
 * cannot name, as for a word that any PE may write), addr the word it
 * watches (or NULL). */
#define SR_WAIT_PE_ANY (-1)
typedef struct {
    const char *what;
    int         pe;
    const void *addr;
    /* A collective among all the job's PEs: under report it also ends for
     * any of them that fails while it waits, not only for pe. */
    int         all;
} sr_wait_on_t;
/* Waits until cond(arg) is true, progressing ctx (may be NULL); timeout_ms
 * 0: no limit.  A peer gone or unresponsive ends it (PEER_GONE, _UNRESPONSIVE):
 * any peer under SYMRAIL_ON_PEER_FAILURE=abort; under report the peer waited
 * on, or for SR_WAIT_PE_ANY one whose state changed during the wait. */
symrail_status_t sr_wait_on(sr_ctx_t *ctx, sr_cond_fn_t cond, void *arg, unsigned flags,
                            uint64_t timeout_ms, const sr_wait_on_t *on);
static inline symrail_status_t sr_wait(sr_ctx_t *ctx, sr_cond_fn_t cond, void *arg,
                                       unsigned flags, uint64_t timeout_ms, const char *what)
{
    sr_wait_on_t on = { what, SR_WAIT_PE_ANY, NULL, 0 };
    return sr_wait_on(ctx, cond, arg, flags, timeout_ms, &on);
}
/* The same naming the peer. */
static inline symrail_status_t sr_wait_pe(sr_ctx_t *ctx, sr_cond_fn_t cond, void *arg,
                                          unsigned flags, uint64_t timeout_ms, const char *what,
                                          int pe)
{
    sr_wait_on_t on = { what, pe, NULL, 0 };
    return sr_wait_on(ctx, cond, arg, flags, timeout_ms, &on);
}
/* req.c */
void sr_req_init(sr_ctx_t *ctx, sr_req_t *req);
sr_req_t *sr_req_get(sr_ctx_t *ctx);
/* Gives a request back; one still counting completions becomes an orphan. */
void sr_req_put(sr_req_t *req);
/* One of the request's operations finished. */
/* orphan: a request its caller gave up; SR_REQ_TASK: a batch task's, whose
 * end the batch hears of (sr_batch_task_done). */
#define SR_REQ_ORPHAN 1
#define SR_REQ_TASK   2
void sr_req_last(sr_req_t *req) __attribute__((noinline));
static inline void sr_req_complete(sr_req_t *req, symrail_status_t status)
{
    if (status != SYMRAIL_OK && req->status == SYMRAIL_OK)
        req->status = status;
    if (--req->remaining == 0 && req->orphan)
        sr_req_last(req);
}
symrail_status_t sr_req_wait(sr_req_t *req, const char *what);
/* The same for a request to one peer. */
symrail_status_t sr_req_wait_pe(sr_req_t *req, const char *what, int pe);

/* liveness.c: SYMRAIL_OK, SYMRAIL_ERR_PEER_GONE or SYMRAIL_ERR_PEER_UNRESPONSIVE;
 * records the peer's state (symrail_peer_state_t), logging each change once
 * with its cause.  A FAILED peer stays FAILED. */
symrail_status_t sr_peer_alive(int pe, uint64_t now_ns);
/* Checks a few peers (all of them over successive calls); -1 or the first
 * peer found gone or unresponsive, with its status in *st_p. */
int sr_peers_check(uint64_t now_ns, symrail_status_t *st_p);
/* The status that a peer's state gives a wait on it. */
static inline symrail_status_t sr_peer_state_status(int pe)
{
    int s = __atomic_load_n(&sr_rt.peers[pe].state, __ATOMIC_ACQUIRE);
    return s == SYMRAIL_PEER_FAILED    ? SYMRAIL_ERR_PEER_GONE
           : s == SYMRAIL_PEER_SUSPECT ? SYMRAIL_ERR_PEER_UNRESPONSIVE
                                       : SYMRAIL_OK;
}
static inline int sr_peer_failed(int pe)
{
    return sr_unlikely(__atomic_load_n(&sr_rt.peers[pe].state, __ATOMIC_RELAXED) ==
                       SYMRAIL_PEER_FAILED);
}
/* Marks FAILED the local peers whose process is gone (watch.c's thread);
 * sr_watch_start runs that thread under report where there are local
 * peers, sr_watch_stop ends it. */
void sr_peers_watch_local(void);
/* After a transport's failure: is pe gone, or found gone within a moment? */
int sr_peer_gone_soon(int pe);
symrail_status_t sr_watch_start(void);
void sr_watch_stop(void);
/* SYMRAIL_ERR_PEER_GONE when one of `n` world PEs (world[i], or start +
 * i * stride when world is NULL) has FAILED: a collective among them cannot
 * complete (logged naming fn and the PE); SYMRAIL_OK otherwise. */
symrail_status_t sr_peers_members_ok(const char *fn, const int *world, int start, int stride,
                                     int n);
/* "what, waiting on PE p at addr" into buf, for messages. */
const char *sr_wait_on_name(const sr_wait_on_t *on, char *buf, size_t len);
void sr_peer_fail_log(const sr_wait_on_t *on, int pe, symrail_status_t st);

#endif
