/*
 * Segments over shared memory: memory a PE registers at any time, which
 * local peers reach through a key (mkey_pack / rkey_unpack).
 *
 * Two paths, chosen by what the owner's memory is (and logged at info on
 * both sides):
 *  - a POSIX shared-memory object (symrail_seg_alloc): the importer maps it
 *    by name at rkey_unpack; put and get are load/store copies, atomics are
 *    CPU atomics on the mapping;
 *  - any other range (malloc'd, mmap'd, a tensor): cross-memory attach, the
 *    kernel copies between the two address spaces (process_vm_writev/readv
 *    on the owner's pid), one copy and no mapping; no atomics.
 *
 * Generations.  A PE that registers a segment owns a generation table, a
 * shared object with one 64-bit word per segment id: {generation, live,
 * copies in progress}.  An importer enters before every copy (a CAS that
 * succeeds only on a live word of the key's generation and counts one more
 * copy) and leaves after it.  mem_dereg clears `live`, so that no copy
 * enters any more, and waits for those in progress to leave: once it
 * returns, nobody reads or writes the memory through an old key, mapped or
 * attached.  Importers map an owner's table at their first key from it; the
 * table keeps its name until fini, since a key may be unpacked at any time.
 */
#include "config.h"
#include "seg.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

enum { SR_SHM_SEG_FREE, SR_SHM_SEG_LIVE, SR_SHM_SEG_DYING };

typedef struct {
    void    *addr;
    uint64_t len;
    uint32_t gen;
    int      state;
    char     name[SR_SHM_NAME_LEN];  /* "": reached by cross-memory attach */
} sr_shm_seg_t;

struct sr_shm_segs {
    sr_shm_gtab_t *tab;
    size_t         tab_len;
    char           tab_name[SR_SHM_NAME_LEN];
    sr_shm_seg_t  *byid;   /* [nbyid], grown to the largest id */
    uint32_t       nbyid;
};

static symrail_status_t sr_shm_segs_get(sr_tl_ctx_t *ctx, struct sr_shm_segs **segs_p)
{
    struct sr_shm_segs *segs = ctx->segs;
    if (segs != NULL) {
        *segs_p = segs;
        return SYMRAIL_OK;
    }
    segs = calloc(1, sizeof(*segs));
    if (segs == NULL)
        return SYMRAIL_ERR_NOMEM;
    uint32_t nslots = (uint32_t)ctx->params.env->shm_seg_slots;
    segs->tab_len = sr_shm_gtab_len(nslots);
    sr_shm_name(segs->tab_name, sizeof(segs->tab_name), ctx->params.job, ctx->params.my_pe,
                "seg");
    symrail_status_t st = sr_shm_create(segs->tab_name, segs->tab_len, 0, (void **)&segs->tab);
    if (st != SYMRAIL_OK) {
        free(segs);
        return st;
    }
    segs->tab->pid = (int32_t)getpid();
    segs->tab->nslots = nslots;
    __atomic_store_n(&segs->tab->magic, SR_SHM_MAGIC, __ATOMIC_RELEASE);
    ctx->segs = segs;
    *segs_p = segs;
    return SYMRAIL_OK;
}

int sr_shm_yama_scope(void)
{
    int scope = -1;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%d", &scope) != 1)
        scope = -1;
    fclose(f);
    return scope;
}

/* With Yama's ptrace_scope 1 only a parent may attach: local peers are not
 * our parents, so this process lets any process of its user attach (which
 * scope 0 allows anyway). */
void sr_shm_allow_attach(void)
{
    static int checked;
    if (__atomic_exchange_n(&checked, 1, __ATOMIC_RELAXED))
        return;
    if (sr_shm_yama_scope() != 1)
        return;
    if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0)
        sr_warn("shm: prctl(PR_SET_PTRACER) failed (%m): local peers may not reach "
                "segments by cross-memory attach");
    else
        sr_info("shm: Yama ptrace_scope is 1: processes of this user may attach to this one, "
                "for cross-memory attach of segments");
}

static symrail_status_t sr_shm_seg_slot(struct sr_shm_segs *segs, uint32_t region,
                                        sr_shm_seg_t **seg_p)
{
    if (region >= segs->tab->nslots) {
        sr_error("shm: segment id %u does not fit this PE's generation table "
                 "(SYMRAIL_SHM_SEG_SLOTS=%u): raise SYMRAIL_SHM_SEG_SLOTS",
                 region, segs->tab->nslots);
        return SYMRAIL_ERR_NOMEM;
    }
    if (region >= segs->nbyid) {
        uint32_t n = segs->nbyid ? segs->nbyid : 64;
        while (n <= region)
            n *= 2;
        sr_shm_seg_t *byid = realloc(segs->byid, (size_t)n * sizeof(*byid));
        if (byid == NULL)
            return SYMRAIL_ERR_NOMEM;
        memset(byid + segs->nbyid, 0, (size_t)(n - segs->nbyid) * sizeof(*byid));
        segs->byid = byid;
        segs->nbyid = n;
    }
    *seg_p = &segs->byid[region];
    return SYMRAIL_OK;
}

symrail_status_t sr_shm_seg_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem)
{
    struct sr_shm_segs *segs;
    sr_shm_seg_t *seg;
    symrail_status_t st;

    if (mem->shm_name != NULL && strlen(mem->shm_name) >= SR_SHM_NAME_LEN) {
        sr_error("shm: segment %u: shared-memory name too long", region);
        return SYMRAIL_ERR_INVALID;
    }
    pthread_mutex_lock(&ctx->seg_lock);
    st = sr_shm_segs_get(ctx, &segs);
    if (st != SYMRAIL_OK)
        goto out;
    st = sr_shm_seg_slot(segs, region, &seg);
    if (st != SYMRAIL_OK)
        goto out;
    /* A deregistration that timed out is over once its copies have left
     * (the core lets the id go whatever mem_dereg said). */
    if (seg->state == SR_SHM_SEG_DYING &&
        !(__atomic_load_n(&segs->tab->word[region], __ATOMIC_ACQUIRE) & SR_SHM_COUNT))
        seg->state = SR_SHM_SEG_FREE;
    if (seg->state != SR_SHM_SEG_FREE) {
        sr_error("shm: segment %u is %s", region,
                 seg->state == SR_SHM_SEG_LIVE ? "registered already"
                                               : "still being deregistered");
        st = SYMRAIL_ERR_STATE;
        goto out;
    }
    seg->addr = mem->addr;
    seg->len = mem->len;
    seg->gen = mem->generation;
    seg->state = SR_SHM_SEG_LIVE;
    snprintf(seg->name, sizeof(seg->name), "%s", mem->shm_name ? mem->shm_name : "");
    if (mem->shm_name == NULL)
        sr_shm_allow_attach();
    /* Importers only count copies in the word: keep their count. */
    uint64_t *word = &segs->tab->word[region];
    uint64_t w = __atomic_load_n(word, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(word, &w,
                                        ((uint64_t)mem->generation << 32) | SR_SHM_LIVE |
                                            (w & SR_SHM_COUNT),
                                        0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    if (mem->shm_name != NULL)
        sr_info("shm: segment %u (generation %u, %zu bytes) is shared object %s: local peers "
                "map it", region, mem->generation, mem->len, mem->shm_name);
    else
        sr_info("shm: segment %u (generation %u, %zu bytes at %p) is private memory: local "
                "peers reach it by cross-memory attach", region, mem->generation, mem->len,
                mem->addr);
out:
    pthread_mutex_unlock(&ctx->seg_lock);
    return st;
}

/* Waits for the copies in progress on `word` to leave, up to SYMRAIL_OP_TIMEOUT
 * (0: no limit).  Copies are short; a long wait sleeps a little each time. */
static symrail_status_t sr_shm_drain(sr_tl_ctx_t *ctx, uint32_t region, uint64_t *word)
{
    uint64_t limit_ns = ctx->params.env->op_timeout * 1000000ull;
    uint64_t start = 0;
    uint64_t w;

    for (unsigned spins = 0; ((w = __atomic_load_n(word, __ATOMIC_ACQUIRE)) & SR_SHM_COUNT);
         spins++) {
        if (spins < 1000) {
            sr_cpu_relax();
            continue;
        }
        uint64_t now = sr_time_ns();
        if (start == 0)
            start = now;
        if (limit_ns && now - start >= limit_ns) {
            sr_error("shm: deregistering segment %u: %u copies by local peers still in "
                     "progress after SYMRAIL_OP_TIMEOUT (%llu ms); the segment stays "
                     "registered to nobody, its memory must not be reused yet, and its id is "
                     "taken until they leave", region,
                     (unsigned)(w & SR_SHM_COUNT),
                     (unsigned long long)ctx->params.env->op_timeout);
            return SYMRAIL_ERR_TIMEOUT;
        }
        nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_shm_mem_dereg(sr_tl_ctx_t *ctx, uint32_t region)
{
    struct sr_shm_segs *segs;
    sr_shm_seg_t *seg = NULL;
    uint64_t *word;

    pthread_mutex_lock(&ctx->seg_lock);
    segs = ctx->segs;
    if (segs != NULL && region < segs->nbyid && region >= SR_TL_REGION_SEG0)
        seg = &segs->byid[region];
    if (seg == NULL || seg->state == SR_SHM_SEG_FREE) {
        pthread_mutex_unlock(&ctx->seg_lock);
        sr_error("shm: deregistering segment %u, which is not registered", region);
        return SYMRAIL_ERR_INVALID;
    }
    word = &segs->tab->word[region];
    if (seg->state == SR_SHM_SEG_DYING) {
        /* Its deregistration timed out before: over once its late copies
         * have left, and no second wait for them. */
        int busy = (__atomic_load_n(word, __ATOMIC_ACQUIRE) & SR_SHM_COUNT) != 0;
        if (!busy)
            seg->state = SR_SHM_SEG_FREE;
        pthread_mutex_unlock(&ctx->seg_lock);
        return busy ? SYMRAIL_ERR_AGAIN : SYMRAIL_OK;
    }
    __atomic_fetch_and(word, ~SR_SHM_LIVE, __ATOMIC_ACQ_REL);
    seg->state = SR_SHM_SEG_DYING;
    pthread_mutex_unlock(&ctx->seg_lock);

    symrail_status_t st = sr_shm_drain(ctx, region, word);
    if (st != SYMRAIL_OK)
        return st;
    pthread_mutex_lock(&ctx->seg_lock);
    seg->state = SR_SHM_SEG_FREE;
    pthread_mutex_unlock(&ctx->seg_lock);
    sr_debug("shm: segment %u deregistered", region);
    return SYMRAIL_OK;
}

symrail_status_t sr_shm_mkey_pack(sr_tl_ctx_t *ctx, uint32_t region, void *buf, size_t *len_p)
{
    struct sr_shm_segs *segs;
    symrail_status_t st = SYMRAIL_OK;

    pthread_mutex_lock(&ctx->seg_lock);
    segs = ctx->segs;
    if (segs == NULL || region < SR_TL_REGION_SEG0 || region >= segs->nbyid ||
        segs->byid[region].state != SR_SHM_SEG_LIVE) {
        sr_error("shm: packing a key of segment %u, which is not registered", region);
        st = SYMRAIL_ERR_INVALID;
        goto out;
    }
    const sr_shm_seg_t *seg = &segs->byid[region];
    size_t tlen = strlen(segs->tab_name) + 1;
    size_t slen = seg->name[0] ? strlen(seg->name) + 1 : 0;
    size_t need = sizeof(sr_shm_mkey_t) + tlen + slen;
    if (need > *len_p) {
        sr_error("shm: the key of segment %u needs %zu bytes, %zu given", region, need, *len_p);
        st = SYMRAIL_ERR_TRUNCATED;
        goto out;
    }
    sr_shm_mkey_t m = {
        .magic = SR_SHM_SEG_MAGIC, .id = region, .gen = seg->gen,
        .nslots = segs->tab->nslots, .pid = segs->tab->pid,
        .tab_name_len = (uint16_t)tlen, .seg_name_len = (uint16_t)slen,
        .addr = (uint64_t)(uintptr_t)seg->addr, .len = seg->len,
    };
    memcpy(buf, &m, sizeof(m));
    memcpy((char *)buf + sizeof(m), segs->tab_name, tlen);
    memcpy((char *)buf + sizeof(m) + tlen, seg->name, slen);
    *len_p = need;
out:
    pthread_mutex_unlock(&ctx->seg_lock);
    return st;
}

void sr_shm_seg_fini(sr_tl_ctx_t *ctx)
{
    struct sr_shm_segs *segs = ctx->segs;
    if (segs == NULL)
        return;
    sr_shm_unlink(segs->tab_name);
    sr_shm_unmap(segs->tab, segs->tab_len);
    free(segs->byid);
    free(segs);
    ctx->segs = NULL;
}
