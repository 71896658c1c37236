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
