/*
 * OpenSHMEM contexts: a shmem_ctx_t is a native context, and a team
 * context is one whose `team` names the team, so that the RMA calls number
 * its PEs in the team (sr_sh_pe).  A context of SHMEM_TEAM_WORLD keeps
 * team NULL: its PEs are the world's with no translation.
 */
#include "config.h"
#include "shmem/sh.h"
#include "shmem/sh_team.h"

static int sr_sh_ctx_new(const char *fn, sr_team_t *team, long options, shmem_ctx_t *ctx)
{
    SR_SH_UP(fn);
    if (ctx == NULL)
        sr_sh_fatal(fn, "ctx is NULL");
    *ctx = SHMEM_CTX_INVALID;
    long known = SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE;
    if (options & ~known)
        sr_sh_fatal(fn, "options 0x%lx has bits that are no SHMEM_CTX_* option", options);
    sr_ctx_t *c;
    symrail_status_t st = sr_ctx_new(options, &c);
    if (st != SYMRAIL_OK) {
        /* Not an error of the program: it may try again (OpenSHMEM). */
        sr_info("%s: no context: %s", fn, symrail_strerror(st));
        return -1;
    }
    c->team = team;
    *ctx = c;
    return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    return sr_sh_ctx_new("shmem_ctx_create", NULL, options, ctx);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    static const char fn[] = "shmem_team_create_ctx";
    if (team == SHMEM_TEAM_INVALID) {
        if (ctx)
            *ctx = SHMEM_CTX_INVALID;
        sr_error("%s: team is SHMEM_TEAM_INVALID", fn);
        return -1;
    }
    if (team == SHMEM_TEAM_WORLD)
        return sr_sh_ctx_new(fn, NULL, options, ctx);
    /* Binds the predefined teams where the library came up without shmem_init. */
    sr_team_t *t = sr_sh_team(fn, team);
    if (t->my_pe < 0) {
        if (ctx)
            *ctx = SHMEM_CTX_INVALID;
        sr_error("%s: this PE is not a member of team %p", fn, (void *)team);
        return -1;
    }
    /* OpenSHMEM 1.6 (shmem_team_config_t): a split team configured with
     * SHMEM_TEAM_NUM_CONTEXTS takes that many contexts at a time, one
     * configured without it any number.  Like any failure to make
     * a context this is no error of the program, which may destroy one and
     * try again; the line says why it failed. */
    if (!sr_team_ctx_take(t)) {
        if (ctx)
            *ctx = SHMEM_CTX_INVALID;
        sr_info("%s: team %p has its %d context(s) in existence already (num_contexts of "
                "its configuration, SHMEM_TEAM_NUM_CONTEXTS)", fn, (void *)team,
                sr_team_nctx(t));
        return -1;
    }
    int rc = sr_sh_ctx_new(fn, team, options, ctx);
    if (rc != 0)
        sr_team_ctx_give(t);
    return rc;
}

void shmem_ctx_destroy(shmem_ctx_t uctx)
{
    static const char fn[] = "shmem_ctx_destroy";
    SR_SH_UP(fn);
    if (uctx == SHMEM_CTX_INVALID)
        return;  /* OpenSHMEM: nothing to do */
    if (uctx == SHMEM_CTX_DEFAULT)
        sr_sh_fatal(fn, "ctx is SHMEM_CTX_DEFAULT, which cannot be destroyed");
    sr_ctx_t *ctx = uctx;
    if (!sr_api_ctx_check(fn, ctx, 0))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    sr_team_t *team = ctx->team;
    symrail_status_t st = sr_ctx_free(ctx);
    if (team)
        sr_team_ctx_give(team);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
}

int shmem_ctx_get_team(shmem_ctx_t uctx, shmem_team_t *team)
{
    static const char fn[] = "shmem_ctx_get_team";
    SR_SH_UP(fn);
    if (team == NULL)
        sr_sh_fatal(fn, "team is NULL");
    sr_ctx_t *ctx = uctx;
    if (ctx == SHMEM_CTX_INVALID ||
        (ctx->state & ~(SR_CTX_LOCKED | SR_CTX_NOSTORE)) != SR_CTX_LIVE) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    *team = ctx->team ? ctx->team : SHMEM_TEAM_WORLD;
    return 0;
}
