/*
 * OpenSHMEM teams over the core's (src/core/team.c).  SHMEM_TEAM_WORLD and
 * SHMEM_TEAM_SHARED are the addresses of two objects defined here; each is
 * kept a copy of the core's team, so a handle of either reads and works as
 * the core's own.
 */
#include "config.h"
#include "shmem/sh.h"
#include "shmem/sh_team.h"

struct sr_team shmemx_team_world_obj_;
struct sr_team shmemx_team_shared_obj_;

void sr_sh_teams_bind(void)
{
    if (sr_team_world())
        shmemx_team_world_obj_ = *sr_team_world();
    if (sr_team_shared())
        shmemx_team_shared_obj_ = *sr_team_shared();
}

sr_team_t *sr_sh_team_or_null(shmem_team_t team)
{
    if (sr_rt.state != SR_STATE_UP)
        return NULL;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED) {
        if (shmemx_team_world_obj_.priv == NULL ||
            shmemx_team_world_obj_.priv != sr_team_world()->priv)
            sr_sh_teams_bind();  /* first use, or init again after finalize */
        return team == SHMEM_TEAM_WORLD ? sr_team_world() : sr_team_shared();
    }
    return sr_team_valid(team) ? team : NULL;
}

sr_team_t *sr_sh_team(const char *fn, shmem_team_t team)
{
    SR_SH_UP(fn);
    sr_team_t *t = sr_sh_team_or_null(team);
    if (t == NULL)
        sr_sh_fatal(fn, "team %p is not a valid team (SHMEM_TEAM_INVALID or destroyed)",
                    (void *)team);
    return t;
}

int shmem_team_my_pe(shmem_team_t team)
{
    sr_team_t *t = sr_sh_team_or_null(team);
    return t ? t->my_pe : -1;
}

int shmem_team_n_pes(shmem_team_t team)
{
    sr_team_t *t = sr_sh_team_or_null(team);
    return t ? t->size : -1;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    sr_team_t *t = sr_sh_team_or_null(team);
    if (t == NULL || config == NULL)
        return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = sr_team_nctx(t) < 0 ? 0 : sr_team_nctx(t);
    return 0;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    sr_team_t *s = sr_sh_team_or_null(src_team), *d = sr_sh_team_or_null(dest_team);
    if (s == NULL || d == NULL)
        return -1;
    return sr_team_translate(s, src_pe, d);
}

/* -1: the program did not say how many contexts it makes of the team, so
 * any number (they cost memory only); a number it gave is kept to. */
static int sr_sh_nctx(const shmem_team_config_t *config, long mask)
{
    return config && (mask & SHMEM_TEAM_NUM_CONTEXTS) ? config->num_contexts : -1;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team)
{
    static const char fn[] = "shmem_team_split_strided";
    sr_team_t *p = sr_sh_team(fn, parent_team), *t = NULL;
    if (new_team == NULL)
        sr_sh_fatal(fn, "new_team is NULL");
    *new_team = SHMEM_TEAM_INVALID;
    if (p->my_pe < 0)
        sr_sh_fatal(fn, "PE %d is not a member of the parent team", sr_rt.my_pe);
    symrail_status_t st = sr_team_split_strided(fn, p, start, stride, size,
                                                sr_sh_nctx(config, config_mask), &t);
    if (st == SYMRAIL_ERR_INVALID)
        sr_sh_fail(fn, st);
    if (st != SYMRAIL_OK)
        return -1;  /* no slot left: the specification's failure, on every PE alike */
    *new_team = t;
    return 0;
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team)
{
    static const char fn[] = "shmem_team_split_2d";
    sr_team_t *p = sr_sh_team(fn, parent_team), *x = NULL, *y = NULL;
    if (xaxis_team == NULL || yaxis_team == NULL)
        sr_sh_fatal(fn, "%s is NULL", xaxis_team ? "yaxis_team" : "xaxis_team");
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (p->my_pe < 0)
        sr_sh_fatal(fn, "PE %d is not a member of the parent team", sr_rt.my_pe);
    symrail_status_t st = sr_team_split_2d(fn, p, xrange, sr_sh_nctx(xaxis_config, xaxis_mask),
                                           sr_sh_nctx(yaxis_config, yaxis_mask), &x, &y);
    if (st == SYMRAIL_ERR_INVALID)
        sr_sh_fail(fn, st);
    if (st != SYMRAIL_OK)
        return -1;
    *xaxis_team = x;
    *yaxis_team = y;
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    static const char fn[] = "shmem_team_destroy";
    sr_team_t *t = sr_sh_team(fn, team);
    symrail_status_t st = sr_team_destroy(fn, t);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
}

void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    static const char fn[] = "shmem_team_ptr";
    sr_team_t *t = sr_sh_team(fn, team);
    int w = sr_team_world_pe(t, pe);
    if (w < 0)
        sr_sh_fatal(fn, "pe %d is not a member of the team (0..%d)", pe, t->size - 1);
    return symrail_ptr(dest, w);
}

int shmem_team_sync(shmem_team_t team)
{
    static const char fn[] = "shmem_team_sync";
    symrail_status_t st = sr_coll_sync(fn, sr_sh_team(fn, team));
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
    return 0;
}
