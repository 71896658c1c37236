/*
 * Teams and collectives of the core.  A team is an ordered set of PEs with
 * its own synchronisation words and scratch in a reserved part of the
 * symmetric heap (never the user's part), so collectives on different teams
 * may run at once and none of them needs a user allocation.
 *
 * Every collective takes the name of the public call (`fn`) for its
 * messages; it checks its arguments itself, so the OpenSHMEM layer maps
 * types and names onto these and nothing else.
 */
#ifndef SR_CORE_TEAM_H
#define SR_CORE_TEAM_H

#include "core/rt.h"
#include "core/reduce.h"

typedef struct sr_team {
    int        size;     /* members */
    int        my_pe;    /* this PE's index in the team, -1 when not a member */
    const int *world;    /* world[i]: world PE of member i */
    int        start, stride;  /* world[i] == start + i * stride when stride != 0 */
    /* The rest belongs to team.c. */
    struct sr_team_priv *priv;
} sr_team_t;

/* The world PE of member `pe` of `team` (NULL: the world), -1 when `pe` is
 * not a member. */
static inline int sr_team_world_pe(const sr_team_t *team, int pe)
{
    if (team == NULL)
        return pe;
    if (sr_unlikely(pe < 0 || pe >= team->size))
        return -1;
    return team->world[pe];
}

/* ---- team.c ---------------------------------------------------------------- */

/* Bytes of the reserved heap the team slots take (known before the heap is
 * made: it depends on the world's size and the variables only). */
size_t sr_team_reserved_size(void);
/* World and shared teams, after wireup; fini releases every team. */
symrail_status_t sr_team_init(void);
void sr_team_fini(void);
sr_team_t *sr_team_world(void);
sr_team_t *sr_team_shared(void);
/* 1 when `team` is a live team of this PE (not destroyed, not garbage). */
int sr_team_valid(const sr_team_t *team);
/* The team's member of world PE `wpe`, -1 if none. */
int sr_team_index(const sr_team_t *team, int wpe);
/* Member `pe` of `from` as a member of `to`, -1 if it is not one. */
int sr_team_translate(const sr_team_t *from, int pe, const sr_team_t *to);
/* Collective over `parent`: members start + i * stride (i < size) of the
 * parent form the new team; *team_p is NULL on the PEs outside it.  `nctx`
 * is what the team's configuration asks for (kept, reported). */
symrail_status_t sr_team_split_strided(const char *fn, sr_team_t *parent, int start, int stride,
                                       int size, int nctx, sr_team_t **team_p);
/* Collective over `parent`: a grid of xrange columns; x teams are rows
 * (consecutive members), y teams columns. */
symrail_status_t sr_team_split_2d(const char *fn, sr_team_t *parent, int xrange, int xctx,
                                  int yctx, sr_team_t **xteam_p, sr_team_t **yteam_p);
/* Collective over the team's members: its slot is free for the next split. */
symrail_status_t sr_team_destroy(const char *fn, sr_team_t *team);
int sr_team_nctx(const sr_team_t *team);
/* One more context of the team: 0 when its num_contexts contexts exist
 * already (a team split with SHMEM_TEAM_NUM_CONTEXTS; nctx -1: any
 * number, as for the predefined teams).  give: one of them is destroyed. */
int sr_team_ctx_take(sr_team_t *team);
void sr_team_ctx_give(sr_team_t *team);

/* ---- coll.c: team collectives (sizes in bytes; dest, src symmetric) --------- */

symrail_status_t sr_coll_sync(const char *fn, sr_team_t *team);
symrail_status_t sr_coll_bcast(const char *fn, sr_team_t *team, void *dest, const void *src,
                               size_t nbytes, int root);
symrail_status_t sr_coll_fcollect(const char *fn, sr_team_t *team, void *dest, const void *src,
                                  size_t nbytes);
symrail_status_t sr_coll_collect(const char *fn, sr_team_t *team, void *dest, const void *src,
                                 size_t nbytes);
symrail_status_t sr_coll_alltoall(const char *fn, sr_team_t *team, void *dest, const void *src,
                                  size_t nbytes);
/* Strides in elements of `esize` bytes. */
symrail_status_t sr_coll_alltoalls(const char *fn, sr_team_t *team, void *dest, const void *src,
                                   ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize);

/* ---- coll_aset.c: the active-set forms, over the caller's pSync ------------- */

symrail_status_t sr_coll_barrier_aset(const char *fn, int start, int logstride, int size,
                                      long *psync);
symrail_status_t sr_coll_bcast_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                    int root, int start, int logstride, int size, long *psync);
symrail_status_t sr_coll_fcollect_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                       int start, int logstride, int size, long *psync);
symrail_status_t sr_coll_collect_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                      int start, int logstride, int size, long *psync);
symrail_status_t sr_coll_alltoall_aset(const char *fn, void *dest, const void *src, size_t nbytes,
                                       int start, int logstride, int size, long *psync);
symrail_status_t sr_coll_alltoalls_aset(const char *fn, void *dest, const void *src,
                                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize,
                                        int start, int logstride, int size, long *psync);

/* Reductions: every member's `dest` receives op over the members' `src`
 * (nelems elements of type dt; dest and src symmetric, and may be the same). */
symrail_status_t sr_coll_reduce(const char *fn, sr_team_t *team, sr_dtype_t dt, sr_rop_t op,
                                void *dest, const void *src, size_t nelems);
/* Prefix reductions (OpenSHMEM 1.6 inscan/exscan): member i receives op over
 * the src of members 0..i (inclusive) or 0..i-1 (exclusive; member 0's dest
 * is left as it is). */
symrail_status_t sr_coll_scan(const char *fn, sr_team_t *team, sr_dtype_t dt, sr_rop_t op,
                              void *dest, const void *src, size_t nelems, int exclusive);
/* The active-set form (`_to_all`): PEs start + i * 2^logstride, i < size,
 * with the caller's pWrk and pSync honoured as OpenSHMEM 1.4 says. */
symrail_status_t sr_coll_reduce_aset(const char *fn, int start, int logstride, int size,
                                     sr_dtype_t dt, sr_rop_t op, void *dest, const void *src,
                                     size_t nreduce, void *pwrk, long *psync);

#endif
