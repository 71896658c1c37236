/*
 * What team.c and the collectives share.  Every team owns a slot of the
 * reserved heap: sig[j] and ready[j] (one word each written only by member j
 * of the team) and a scratch area.  Words carry sequence numbers
 * (epoch << SR_SEQ_KBITS | k): the team's collectives are numbered (epoch)
 * in the order all members call them, and k numbers the messages of one
 * collective between a pair.  A writer only writes larger values, each after
 * the one before is in place, so a waiter compares with >= and a fast PE's
 * next collective can never pass for the current one.
 */
#ifndef SR_CORE_COLL_H
#define SR_CORE_COLL_H

#include "core/team.h"

#define SR_TEAM_MAGIC  0x73725465u  /* "srTe" */
#define SR_SEQ_KBITS   28
/* k of one round or stream of chunks: round << SR_K_ROUND_SHIFT | chunk. */
#define SR_K_ROUND_SHIFT 22
#define SR_K_ENTER     1  /* "I have entered this collective": my dest and scratch are free */

struct sr_team_priv {
    uint32_t  magic;
    int       slot;
    uint64_t  epoch;      /* collectives so far */
    sr_ctx_t *ctx;        /* the team's own: teams' collectives run at once on threads */
    uint64_t  off;        /* heap offset of the slot */
    int      *world_arr;
    int       nctx;       /* num_contexts of the team's configuration */
    int       nctx_live;  /* contexts of the team in existence (atomic) */
    int       all_local;  /* every member's heap is mapped here */
    int       size_check; /* the team's size, against handles that are not teams */
    const char *call_fn[2]; /* the names in our call slots (coll_check.c) */
    uint64_t  call_off;   /* heap offset of those slots */
};

typedef struct {
    sr_team_t            *t;
    struct sr_team_priv  *p;
    sr_ctx_t             *ctx;
    uint64_t              e;
    const char           *fn;
    int                   n, me;
    uint64_t              what, size;  /* what sr_cop_call published (0: nothing) */
} sr_cop_t;

/* team.c */
uint64_t sr_team_sig_off(const sr_team_t *t, int member);
uint64_t sr_team_ready_off(const sr_team_t *t, int member);
uint64_t sr_team_scratch_off(const sr_team_t *t);
/* This member's two call slots (coll_check.c), at the same offset on every member. */
uint64_t sr_team_call_off(const sr_team_t *t);
size_t   sr_team_scratch_size(void);
/* The context of the active-set forms (one lock: they may come from threads). */
sr_ctx_t *sr_team_aset_ctx(void);
/* The team's own context (made at its first collective; its members call
 * one collective at a time). */
sr_ctx_t *sr_team_ctx(sr_team_t *team);
/* The bitmap of slots this PE uses (slot agreement of splits). */
#define SR_TEAM_MAP_WORDS 64  /* up to 4096 slots */

/* coll.c: the messages every algorithm is made of. */
symrail_status_t sr_cop_begin(const char *fn, sr_team_t *team, sr_cop_t *cop);
symrail_status_t sr_cop_end(sr_cop_t *cop, symrail_status_t st);
static inline uint64_t sr_seq(const sr_cop_t *cop, uint64_t k)
{
    return cop->e << SR_SEQ_KBITS | k;
}
/* Tell member m that my receive buffers for its messages up to k are free. */
symrail_status_t sr_cm_ready(sr_cop_t *cop, int m, uint64_t k);
/* Wait until member m said ready for rk, then put len bytes (0: none) at
 * roff of m and signal k behind them. */
symrail_status_t sr_cm_send(sr_cop_t *cop, int m, uint64_t rk, uint64_t k, const void *src,
                            uint64_t roff, size_t len);
/* Wait for message k of member m. */
symrail_status_t sr_cm_wait(sr_cop_t *cop, int m, uint64_t k);
/* len bytes from src to member `to` through its scratch while len bytes of
 * member `from` arrive through ours, chunk by chunk, each handed to consume
 * (offset in the stream, data, bytes).  Either side may be -1. */
typedef void (*sr_consume_fn_t)(void *arg, size_t off, const void *data, size_t n);
symrail_status_t sr_cm_pipe(sr_cop_t *cop, int to, int from, uint64_t kbase, const void *src,
                            size_t len, sr_consume_fn_t consume, void *arg);
/* The all-reduce of the core, on any combine function (slot agreement uses
 * it before sr_reduce_apply exists). */
typedef void (*sr_combine_fn_t)(void *arg, void *inout, const void *in, size_t nbytes);
symrail_status_t sr_coll_allreduce_fn(sr_cop_t *cop, void *buf, size_t nbytes, size_t esize,
                                      sr_combine_fn_t combine, void *arg);
/* coll_check.c: the members' calls compared.  Kinds of collective: */
enum { SR_CALL_SYNC = 1, SR_CALL_BCAST, SR_CALL_FCOLLECT, SR_CALL_COLLECT, SR_CALL_ALLTOALL,
       SR_CALL_ALLTOALLS, SR_CALL_REDUCE, SR_CALL_SCAN, SR_CALL_SPLIT };
/* Before its first message: what this member's collective is (kind may
 * carry more in its upper bits, root -1 for none; size in bytes, 0 where
 * the members' sizes may differ). */
void sr_cop_call(sr_cop_t *cop, unsigned kind, uint64_t size, int root);
/* SYMRAIL_ERR_INVALID, logged naming both members and both calls, if
 * member m published a different call for this collective; remote: read a
 * member without loads and stores by a get (else it is not compared). */
symrail_status_t sr_cop_check(sr_cop_t *cop, int m, int remote);
/* Whether senders compare with remote members too (SYMRAIL_COLL_CHECK, or
 * debug logging): set at team init. */
extern int sr_cop_check_remote;
/* sr_wait for a word that member m writes, comparing the calls whenever
 * it makes no progress for a while; SYMRAIL_OP_TIMEOUT still bounds it. */
symrail_status_t sr_cop_wait(sr_cop_t *cop, int m, sr_cond_fn_t cond, void *arg);
/* Symmetric offset of [p, p+len) (user heap or data segment), or logs
 * naming fn and arg. */
int sr_coll_sym(const char *fn, const char *arg, const void *p, size_t len, uint64_t *off_p);

#endif
