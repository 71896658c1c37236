/*
 * Teams: the world, the PEs that share memory with this one, and splits.
 * Each team lives in a slot of the reserved heap; a split picks the lowest
 * slot that no member of the parent uses (an OR of the members' slot maps
 * over the parent), so every member of the new team finds it free and the
 * same on every member.
 */
#include "config.h"
#include "core/coll.h"
#include "util/log.h"
#include "util/sys.h"

#include <stdlib.h>
#include <string.h>

typedef struct sr_team_obj {
    sr_team_t           pub;
    struct sr_team_priv priv;
    struct sr_team_obj *next;  /* in sr_splits */
} sr_team_obj_t;

static sr_team_obj_t *sr_world, *sr_shared;
/* Every split of this init, destroyed or not (sr_slot_lock): a destroyed
 * one is kept to refuse its stale handle, and all are freed at fini. */
static sr_team_obj_t *sr_splits;
static sr_ctx_t *sr_aset_ctx;
static uint64_t sr_slot_map[SR_TEAM_MAP_WORDS];
static pthread_mutex_t sr_slot_lock = PTHREAD_MUTEX_INITIALIZER;

/* sig and ready words, one each per member, then our two call slots. */
#define SR_TEAM_CALL_BYTES 192
static size_t sr_team_words_size(void)
{
    return SR_ALIGN_UP((size_t)sr_rt.n_pes * 16, 64) + SR_TEAM_CALL_BYTES;
}

uint64_t sr_team_call_off(const sr_team_t *t)
{
    return t->priv->off + sr_team_words_size() - SR_TEAM_CALL_BYTES;
}

size_t sr_team_scratch_size(void)
{
    return SR_ALIGN_UP((size_t)sr_rt.env.team_scratch, 128);
}

static size_t sr_team_slot_size(void)
{
    return sr_team_words_size() + sr_team_scratch_size();
}

size_t sr_team_reserved_size(void)
{
    return (size_t)sr_rt.env.teams_max * sr_team_slot_size();
}

uint64_t sr_team_sig_off(const sr_team_t *t, int member)
{
    return t->priv->off + (uint64_t)member * 8;
}

uint64_t sr_team_ready_off(const sr_team_t *t, int member)
{
    return t->priv->off + (uint64_t)sr_rt.n_pes * 8 + (uint64_t)member * 8;
}

uint64_t sr_team_scratch_off(const sr_team_t *t)
{
    return t->priv->off + sr_team_words_size();
}

static sr_team_obj_t *sr_team_new(int slot, int size, const int *world, int nctx)
{
    sr_team_obj_t *o = calloc(1, sizeof(*o));
    int *arr = malloc((size_t)size * sizeof(int));
    if (o == NULL || arr == NULL) {
        free(o);
        free(arr);
        return NULL;
    }
    memcpy(arr, world, (size_t)size * sizeof(int));
    o->pub.size = size;
    o->pub.world = arr;
    o->pub.priv = &o->priv;
    o->pub.my_pe = -1;
    o->priv.world_arr = arr;
    o->priv.slot = slot;
    o->priv.off = SR_HEAP_RESERVED + (uint64_t)slot * sr_team_slot_size();
    o->priv.nctx = nctx;
    o->priv.call_off = sr_team_call_off(&o->pub);
    o->priv.all_local = 1;
    for (int i = 0; i < size; i++) {
        if (world[i] == sr_rt.my_pe)
            o->pub.my_pe = i;
        else if (sr_rt.peers[world[i]].base == NULL)
            o->priv.all_local = 0;
    }
    /* The world stride, when the members make one. */
    o->pub.start = world[0];
    o->pub.stride = size > 1 ? world[1] - world[0] : 1;
    for (int i = 2; i < size && o->pub.stride; i++)
        if (world[i] - world[i - 1] != o->pub.stride)
            o->pub.stride = 0;
    o->priv.size_check = size;
    o->priv.magic = SR_TEAM_MAGIC;
    return o;
}

static void sr_team_free(sr_team_obj_t *o)
{
    o->priv.magic = 0;
    if (o->priv.ctx)
        sr_ctx_free(o->priv.ctx);
    free(o->priv.world_arr);
    free(o);
}

symrail_status_t sr_team_init(void)
{
    sr_cop_check_remote = sr_rt.env.coll_check || sr_log_cfg.level >= SR_LOG_DEBUG;
    int n = sr_rt.n_pes, *w = calloc((size_t)n + 1, sizeof(int)), ns = 0;
    if (w == NULL)
        return SYMRAIL_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        w[i] = i;
    sr_world = sr_team_new(0, n, w, 0);
    /* Shared: whoever we reach by loads and stores; is_local groups are the
     * same seen from each of their members, so every member builds the same team. */
    for (int i = 0; i < n; i++)
        if (i == sr_rt.my_pe || sr_rt.peers[i].base != NULL)
            w[ns++] = i;
    sr_shared = sr_world ? sr_team_new(1, ns, w, 0) : NULL;
    free(w);
    if (sr_shared == NULL) {
        if (sr_world)
            sr_team_free(sr_world);
        sr_world = NULL;
        return SYMRAIL_ERR_NOMEM;
    }
    memset(sr_slot_map, 0, sizeof(sr_slot_map));
    sr_slot_map[0] = 3;
    return SYMRAIL_OK;
}

void sr_team_fini(void)
{
    /* Split teams the user did not destroy die with the runtime. */
    while (sr_splits) {
        sr_team_obj_t *o = sr_splits;
        sr_splits = o->next;
        sr_team_free(o);
    }
    if (sr_world)
        sr_team_free(sr_world);
    if (sr_shared)
        sr_team_free(sr_shared);
    sr_world = sr_shared = NULL;
    if (sr_aset_ctx)
        sr_ctx_free(sr_aset_ctx);
    sr_aset_ctx = NULL;
}

/* Contexts are made at first use, so that programs without collectives
 * number (and place) their own contexts as before. */
sr_ctx_t *sr_team_aset_ctx(void)
{
    sr_ctx_t *ctx = __atomic_load_n(&sr_aset_ctx, __ATOMIC_ACQUIRE);
    if (ctx)
        return ctx;
    pthread_mutex_lock(&sr_slot_lock);
    if (sr_aset_ctx == NULL && sr_ctx_new(0, &ctx) == SYMRAIL_OK)
        __atomic_store_n(&sr_aset_ctx, ctx, __ATOMIC_RELEASE);
    ctx = sr_aset_ctx;
    pthread_mutex_unlock(&sr_slot_lock);
    return ctx;
}

sr_ctx_t *sr_team_ctx(sr_team_t *team)
{
    struct sr_team_priv *p = team->priv;
    if (p->ctx == NULL && sr_ctx_new(SYMRAIL_CTX_PRIVATE, &p->ctx) != SYMRAIL_OK)
        p->ctx = NULL;
    return p->ctx;
}

sr_team_t *sr_team_world(void)
{
    return sr_world ? &sr_world->pub : NULL;
}

sr_team_t *sr_team_shared(void)
{
    return sr_shared ? &sr_shared->pub : NULL;
}

int sr_team_valid(const sr_team_t *team)
{
    /* A copy of a live team (the OpenSHMEM layer's exported objects) is
     * that team; a destroyed one keeps its (dead) private part. */
    return team != NULL && team->priv != NULL && team->priv->magic == SR_TEAM_MAGIC &&
           team->size == team->priv->size_check;
}

int sr_team_index(const sr_team_t *team, int wpe)
{
    if (team->stride > 0) {
        int d = wpe - team->start;
        if (d < 0 || d % team->stride)
            return -1;
        return d / team->stride < team->size ? d / team->stride : -1;
    }
    for (int i = 0; i < team->size; i++)
        if (team->world[i] == wpe)
            return i;
    return -1;
}

int sr_team_translate(const sr_team_t *from, int pe, const sr_team_t *to)
{
    int w = sr_team_world_pe(from, pe);
    return w < 0 ? -1 : sr_team_index(to, w);
}

int sr_team_nctx(const sr_team_t *team)
{
    return team->priv->nctx;
}

static int sr_team_predefined(const sr_team_t *team)
{
    return team->priv == &sr_world->priv || team->priv == &sr_shared->priv;
}

int sr_team_ctx_take(sr_team_t *team)
{
    if (sr_team_predefined(team))
        return 1;
    int *live = &team->priv->nctx_live, n = __atomic_load_n(live, __ATOMIC_RELAXED);
    do {
        if (team->priv->nctx >= 0 && n >= team->priv->nctx)
            return 0;
    } while (!__atomic_compare_exchange_n(live, &n, n + 1, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return 1;
}

void sr_team_ctx_give(sr_team_t *team)
{
    /* A team destroyed before its contexts (undefined in OpenSHMEM) counts nothing. */
    if (sr_team_valid(team) && !sr_team_predefined(team))
        __atomic_fetch_sub(&team->priv->nctx_live, 1, __ATOMIC_RELAXED);
}

static void sr_or_words(void *arg, void *inout, const void *in, size_t nbytes)
{
    uint64_t *a = inout;
    const uint64_t *b = in;
    for (size_t i = 0; i < nbytes / 8; i++)
        a[i] |= b[i];
}

/* Agree on a free slot among every member of the parent: -1 if none. */
static symrail_status_t sr_team_slot_agree(const char *fn, sr_team_t *parent, int *slot_p)
{
    uint64_t map[SR_TEAM_MAP_WORDS];
    int words = (int)((sr_rt.env.teams_max + 63) / 64);
    pthread_mutex_lock(&sr_slot_lock);
    memcpy(map, sr_slot_map, sizeof(map));
    pthread_mutex_unlock(&sr_slot_lock);
    sr_cop_t cop;
    symrail_status_t st = sr_cop_begin(fn, parent, &cop);
    if (st != SYMRAIL_OK)
        return st;
    sr_cop_call(&cop, SR_CALL_SPLIT, 0, -1);
    st = sr_coll_allreduce_fn(&cop, map, (size_t)words * 8, 8, sr_or_words, NULL);
    st = sr_cop_end(&cop, st);
    if (st != SYMRAIL_OK)
        return st;
    *slot_p = -1;
    for (int s = 2; s < (int)sr_rt.env.teams_max; s++)
        if (!(map[s / 64] >> (s % 64) & 1)) {
            *slot_p = s;
            break;
        }
    return SYMRAIL_OK;
}

symrail_status_t sr_team_split_strided(const char *fn, sr_team_t *parent, int start, int stride,
                                       int size, int nctx, sr_team_t **team_p)
{
    *team_p = NULL;
    if (size <= 0 || start < 0 || start >= parent->size ||
        (long)start + (long)(size - 1) * stride < 0 ||
        (long)start + (long)(size - 1) * stride >= parent->size || (stride == 0 && size > 1)) {
        sr_error("%s: start %d, stride %d, size %d do not select members of the parent team "
                 "(0..%d)", fn, start, stride, size, parent->size - 1);
        return SYMRAIL_ERR_INVALID;
    }
    int slot;
    symrail_status_t st = sr_team_slot_agree(fn, parent, &slot);
    if (st != SYMRAIL_OK)
        return st;
    if (slot < 0) {
        sr_error("%s: every team slot is in use (%llu teams); destroy teams or raise "
                 "SYMRAIL_TEAMS_MAX", fn, (unsigned long long)sr_rt.env.teams_max);
        return SYMRAIL_ERR_NOMEM;
    }
    int mine = -1;
    int *w = malloc((size_t)size * sizeof(int));
    if (w == NULL)
        return SYMRAIL_ERR_NOMEM;
    for (int i = 0; i < size; i++) {
        w[i] = parent->world[start + i * stride];
        if (w[i] == sr_rt.my_pe)
            mine = i;
    }
    if (mine >= 0) {
        sr_team_obj_t *o = sr_team_new(slot, size, w, nctx);
        if (o == NULL) {
            free(w);
            return SYMRAIL_ERR_NOMEM;
        }
        pthread_mutex_lock(&sr_slot_lock);
        sr_slot_map[slot / 64] |= UINT64_C(1) << (slot % 64);
        o->next = sr_splits;
        sr_splits = o;
        pthread_mutex_unlock(&sr_slot_lock);
        *team_p = &o->pub;
    }
    free(w);
    return SYMRAIL_OK;
}

symrail_status_t sr_team_split_2d(const char *fn, sr_team_t *parent, int xrange, int xctx,
                                  int yctx, sr_team_t **xteam_p, sr_team_t **yteam_p)
{
    *xteam_p = *yteam_p = NULL;
    if (xrange <= 0) {
        sr_error("%s: xrange %d must be positive", fn, xrange);
        return SYMRAIL_ERR_INVALID;
    }
    int n = parent->size, me = parent->my_pe;
    if (xrange > n)
        xrange = n;
    int yrange = (n + xrange - 1) / xrange;
    /* Every row, then every column: each a split of the parent, made by
     * all its members in the same order. */
    for (int row = 0; row < yrange; row++) {
        int start = row * xrange, size = n - start < xrange ? n - start : xrange;
        sr_team_t *t;
        symrail_status_t st = sr_team_split_strided(fn, parent, start, 1, size, xctx, &t);
        if (st != SYMRAIL_OK)
            return st;
        if (t)
            *xteam_p = t;
    }
    for (int col = 0; col < xrange; col++) {
        int size = (n - col + xrange - 1) / xrange;
        sr_team_t *t;
        symrail_status_t st = sr_team_split_strided(fn, parent, col, xrange, size, yctx, &t);
        if (st != SYMRAIL_OK)
            return st;
        if (t)
            *yteam_p = t;
    }
    (void)me;
    return SYMRAIL_OK;
}

symrail_status_t sr_team_destroy(const char *fn, sr_team_t *team)
{
    sr_team_obj_t *o = (sr_team_obj_t *)(void *)team;
    if (o == sr_world || o == sr_shared) {
        sr_error("%s: the predefined teams cannot be destroyed", fn);
        return SYMRAIL_ERR_INVALID;
    }
    /* After the sync nobody writes to our words of this slot any more: every
     * write of the team's collectives was waited for by its target. */
    symrail_status_t st = sr_coll_sync(fn, team);
    memset(sr_rt.heap_base + team->priv->off, 0, sr_team_words_size());
    pthread_mutex_lock(&sr_slot_lock);
    sr_slot_map[team->priv->slot / 64] &= ~(UINT64_C(1) << (team->priv->slot % 64));
    pthread_mutex_unlock(&sr_slot_lock);
    o->priv.magic = 0;  /* kept (sr_splits), so a stale handle is refused, not read after free */
    if (o->priv.ctx)
        sr_ctx_free(o->priv.ctx);
    o->priv.ctx = NULL;
    free(o->priv.world_arr);
    o->priv.world_arr = NULL;
    o->pub.world = NULL;
    o->pub.size = 0;
    return st;
}
