/*
 * Collectives called differently on different members of a team: each
 * member publishes what its current collective is (call, kind, size, root)
 * in two parity slots of its own words of the team, and the members it
 * sends to or waits for compare.  A sender into a peer's buffers over
 * loads and stores compares before the data goes (a larger size there
 * would overwrite the peer's heap); a wait that makes no progress for
 * SR_COP_PROBE_MS reads the awaited member's slot, with a get if it is
 * remote, so that two calls that wait for each other end with both named
 * rather than with SYMRAIL_OP_TIMEOUT.
 */
#include "config.h"
#include "core/coll.h"
#include "util/log.h"
#include "util/sys.h"

#include <string.h>

#define SR_COP_PROBE_MS 100

int sr_cop_check_remote;

/* One parity slot, 96 bytes: the epoch twice (before and after the rest,
 * so a torn read of a remote slot shows), what, size and the call's name. */
enum { SR_CALL_EPOCH_A, SR_CALL_WHAT, SR_CALL_SIZE, SR_CALL_NAME, SR_CALL_EPOCH_B = 11,
       SR_CALL_WORDS };
#define SR_CALL_NAME_LEN ((SR_CALL_EPOCH_B - SR_CALL_NAME) * 8)

static uint64_t sr_call_off(const sr_cop_t *cop, uint64_t e)
{
    return cop->p->call_off + (e & 1) * SR_CALL_WORDS * 8;
}

static __attribute__((noinline)) void sr_call_name(sr_cop_t *cop, uint64_t *w)
{
    strncpy((char *)&w[SR_CALL_NAME], cop->fn, SR_CALL_NAME_LEN - 1);
    ((char *)&w[SR_CALL_NAME])[SR_CALL_NAME_LEN - 1] = 0;
    cop->p->call_fn[cop->e & 1] = cop->fn;
}

void sr_cop_call(sr_cop_t *cop, unsigned kind, uint64_t size, int root)
{
    uint64_t *w = (uint64_t *)(void *)(sr_rt.heap_base + sr_call_off(cop, cop->e));
    cop->what = (uint64_t)kind | (uint64_t)(uint32_t)(root + 1) << 32;
    cop->size = size;
    __atomic_store_n(&w[SR_CALL_EPOCH_A], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&w[SR_CALL_EPOCH_B], 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    w[SR_CALL_WHAT] = cop->what;
    w[SR_CALL_SIZE] = size;
    /* The name only when it changed: most loops call one collective. */
    if (sr_unlikely(cop->p->call_fn[cop->e & 1] != cop->fn))
        sr_call_name(cop, w);
    __atomic_store_n(&w[SR_CALL_EPOCH_B], cop->e, __ATOMIC_RELEASE);
    __atomic_store_n(&w[SR_CALL_EPOCH_A], cop->e, __ATOMIC_RELEASE);
}

static void sr_call_say(char *buf, size_t len, const char *name, uint64_t what, uint64_t size)
{
    int root = (int)(uint32_t)(what >> 32) - 1;
    if (root >= 0)
        snprintf(buf, len, "%s (root %d, %llu bytes)", name, root, (unsigned long long)size);
    else
        snprintf(buf, len, "%s (%llu bytes)", name, (unsigned long long)size);
}

/* A copy s of member m's slot, whole (both epochs are ours): compared. */
static __attribute__((noinline, cold)) symrail_status_t sr_call_differ(sr_cop_t *cop, int m,
                                                                      const uint64_t *s)
{
    char mine[128], theirs[128], name[SR_CALL_NAME_LEN];
    if (s[SR_CALL_EPOCH_A] != cop->e || s[SR_CALL_EPOCH_B] != cop->e || s[SR_CALL_WHAT] == 0 ||
        (s[SR_CALL_WHAT] == cop->what && s[SR_CALL_SIZE] == cop->size))
        return SYMRAIL_OK;
    memcpy(name, &s[SR_CALL_NAME], sizeof(name));
    name[sizeof(name) - 1] = 0;
    sr_call_say(mine, sizeof(mine), cop->fn, cop->what, cop->size);
    sr_call_say(theirs, sizeof(theirs), name, s[SR_CALL_WHAT], s[SR_CALL_SIZE]);
    sr_error("%s: collectives do not match on team %p (collective #%llu of the team): PE %d "
             "(member %d) called %s, PE %d (member %d) called %s", cop->fn, (void *)cop->t,
             (unsigned long long)cop->e, sr_rt.my_pe, cop->me, mine, cop->t->world[m], m,
             theirs);
    return SYMRAIL_ERR_INVALID;
}

static __attribute__((noinline)) symrail_status_t sr_cop_check_copy(sr_cop_t *cop, int m,
                                                                    const uint64_t *w,
                                                                    uint64_t off)
{
    uint64_t s[SR_CALL_WORDS];
    if (w != NULL) {
        memcpy(s, w, sizeof(s));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&w[SR_CALL_EPOCH_A], __ATOMIC_RELAXED) != cop->e)
            return SYMRAIL_OK;  /* rewritten meanwhile: it went on */
    } else if (sr_rma(cop->ctx, 0, s, off, sizeof(s), cop->t->world[m], 1) != SYMRAIL_OK) {
        return SYMRAIL_OK;  /* the wait reports what is wrong with the peer */
    }
    return sr_call_differ(cop, m, s);
}

symrail_status_t sr_cop_check(sr_cop_t *cop, int m, int remote)
{
    if (cop->what == 0)
        return SYMRAIL_OK;  /* a collective that publishes nothing */
    uint64_t off = sr_call_off(cop, cop->e);
    const uint64_t *w = (const uint64_t *)(const void *)sr_sym_peer_addr(cop->t->world[m], off);
    if (w == NULL)
        return remote ? sr_cop_check_copy(cop, m, NULL, off) : SYMRAIL_OK;
    /* In place: the same call is the usual answer, and costs three loads. */
    if (__atomic_load_n(&w[SR_CALL_EPOCH_A], __ATOMIC_ACQUIRE) != cop->e)
        return SYMRAIL_OK;  /* not there yet, or gone on: nothing to compare */
    if (sr_likely(w[SR_CALL_WHAT] == cop->what && w[SR_CALL_SIZE] == cop->size))
        return SYMRAIL_OK;
    return sr_cop_check_copy(cop, m, w, off);
}

symrail_status_t sr_cop_wait(sr_cop_t *cop, int m, sr_cond_fn_t cond, void *arg)
{
    uint64_t start = sr_time_ns(), limit = sr_rt.env.op_timeout;
    for (;;) {
        symrail_status_t st = sr_wait_pe(cop->ctx, cond, arg,
                                         SR_WAIT_REMOTE | SR_WAIT_USER_TIMEOUT, SR_COP_PROBE_MS,
                                         cop->fn, cop->t->world[m]);
        if (st != SYMRAIL_ERR_TIMEOUT)
            return st;
        if ((st = sr_cop_check(cop, m, 1)) != SYMRAIL_OK)
            return st;
        if (limit && sr_time_ns() - start >= limit * 1000000ull) {
            sr_error("%s: no progress for %llu ms (SYMRAIL_OP_TIMEOUT) waiting for PE %d "
                     "(member %d of team %p)", cop->fn, (unsigned long long)limit,
                     cop->t->world[m], m, (void *)cop->t);
            return SYMRAIL_ERR_TIMEOUT;
        }
    }
}
