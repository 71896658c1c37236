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
#include "shm.h"
#include "util/atomic.h"
#include "util/copy.h"
#include "util/log.h"
#include "util/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SR_SHM_SEG_MAGIC 0x67736d73u  /* "smsg" */
#define SR_SHM_LIVE      (1ull << 31)
#define SR_SHM_COUNT     (SR_SHM_LIVE - 1)
#define SR_SHM_GEN(w)    ((uint32_t)((w) >> 32))

/* Keys are the importer's region numbers, 16 bits: chunks that never move
 * once published, so that put and get read them without a lock while other
 * threads unpack. */
#define SR_SHM_KEY_CHUNK   256
#define SR_SHM_KEY_NCHUNKS ((UINT16_MAX + 1) / SR_SHM_KEY_CHUNK)

/* The generation table, one per owner. */
typedef struct {
    uint64_t magic;
    int32_t  pid;
    uint32_t nslots;
    _Alignas(SR_CACHE_LINE) uint64_t word[];
} sr_shm_gtab_t;

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
    int            ptracer_checked;
};

/* The key blob. */
typedef struct {
    uint32_t magic;
    uint32_t id;       /* the owner's */
    uint32_t gen;
    uint32_t nslots;   /* of the owner's table */
    int32_t  pid;
    uint16_t tab_name_len;  /* with the NUL */
    uint16_t seg_name_len;  /* with the NUL; 0: cross-memory attach */
    uint64_t addr;     /* in the owner's address space */
    uint64_t len;
    char     names[];  /* the table's, then the object's */
} sr_shm_mkey_t;

enum { SR_SHM_LOGGED_STALE = 1, SR_SHM_LOGGED_CMA = 2, SR_SHM_LOGGED_AMO = 4 };

typedef struct {
    char     *base;    /* the mapped object; NULL: cross-memory attach */
    uint64_t  raddr;
    uint64_t  len;
    uint64_t *word;    /* in the owner's table */
    uint32_t  gen;
    uint32_t  id;
    int       used;
    int       logged;  /* SR_SHM_LOGGED_*: each failure is logged once per key */
} sr_shm_key_t;

struct sr_shm_imp {
    pthread_mutex_t lock;  /* unpack and release */
    sr_shm_gtab_t  *tab;
    size_t          tab_len;
    sr_shm_key_t   *chunk[SR_SHM_KEY_NCHUNKS];
};

static size_t sr_shm_gtab_len(uint32_t nslots)
{
    return sizeof(sr_shm_gtab_t) + (size_t)nslots * sizeof(uint64_t);
}

/* ---- owner ---------------------------------------------------------------- */

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

/* -1 without Yama. */
static int sr_shm_yama_scope(void)
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
static void sr_shm_allow_attach(struct sr_shm_segs *segs)
{
    if (segs->ptracer_checked)
        return;
    segs->ptracer_checked = 1;
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
        sr_shm_allow_attach(segs);
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
                     "registered to nobody, its memory must not be reused yet", region,
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

/* ---- importer ------------------------------------------------------------- */

static inline sr_shm_key_t *sr_shm_key(sr_tl_ep_t *ep, uint32_t rkey)
{
    struct sr_shm_imp *imp = __atomic_load_n(&ep->imp, __ATOMIC_ACQUIRE);
    if (sr_unlikely(imp == NULL || rkey > UINT16_MAX))
        return NULL;
    sr_shm_key_t *c = __atomic_load_n(&imp->chunk[rkey / SR_SHM_KEY_CHUNK], __ATOMIC_ACQUIRE);
    if (sr_unlikely(c == NULL))
        return NULL;
    sr_shm_key_t *k = &c[rkey % SR_SHM_KEY_CHUNK];
    return __atomic_load_n(&k->used, __ATOMIC_ACQUIRE) ? k : NULL;
}

/* Logs `what` once per key. */
static int sr_shm_key_first(sr_shm_key_t *k, int what)
{
    return !(__atomic_fetch_or(&k->logged, what, __ATOMIC_RELAXED) & what);
}

static symrail_status_t sr_shm_enter(sr_tl_ep_t *ep, uint32_t rkey, sr_shm_key_t *k)
{
    uint64_t w = __atomic_load_n(k->word, __ATOMIC_RELAXED);
    do {
        if (sr_unlikely(SR_SHM_GEN(w) != k->gen || !(w & SR_SHM_LIVE))) {
            if (sr_shm_key_first(k, SR_SHM_LOGGED_STALE))
                sr_error("shm: segment %u of PE %d (generation %u, key %u) is deregistered: "
                         "access refused", k->id, ep->pe, k->gen, rkey);
            return SYMRAIL_ERR_STALE;
        }
    } while (!__atomic_compare_exchange_n(k->word, &w, w + 1, 1, __ATOMIC_ACQUIRE,
                                          __ATOMIC_RELAXED));
    return SYMRAIL_OK;
}

static inline void sr_shm_leave(sr_shm_key_t *k)
{
    __atomic_fetch_sub(k->word, 1, __ATOMIC_RELEASE);
}

/* Why cross-memory attach was refused (EPERM). */
static const char *sr_shm_attach_denied(void)
{
    switch (sr_shm_yama_scope()) {
    case 1:
        return "Yama's ptrace_scope is 1 and the owner did not allow this process";
    case 2:
        return "Yama's ptrace_scope is 2: only processes with CAP_SYS_PTRACE may attach";
    case 3:
        return "Yama's ptrace_scope is 3: no process may attach";
    default:
        return "the processes run as different users, the owner is not dumpable, or a "
               "security policy (seccomp, AppArmor, SELinux) forbids ptrace access";
    }
}

static symrail_status_t sr_shm_cma_error(sr_tl_ep_t *ep, uint32_t id, int pid, int err,
                                         int log)
{
    switch (err) {
    case ESRCH:
        if (log)
            sr_error("shm: PE %d (process %d) is gone", ep->pe, pid);
        return SYMRAIL_ERR_PEER_GONE;
    case EPERM:
    case ENOSYS:
        if (log)
            sr_error("shm: cross-memory attach to PE %d (process %d) is not permitted: %s; "
                     "allocate segment %u with symrail_seg_alloc so that peers map it",
                     ep->pe, pid,
                     err == ENOSYS ? "process_vm_readv/writev are not available (kernel or "
                                     "seccomp)"
                                   : sr_shm_attach_denied(),
                     id);
        return SYMRAIL_ERR_UNSUPPORTED;
    case EFAULT:
        if (log)
            sr_error("shm: cross-memory attach to segment %u of PE %d: the range is not "
                     "mapped in one of the two processes (the owner freed the memory "
                     "before deregistering it, or the local buffer is bad)", id, ep->pe);
        return SYMRAIL_ERR_INVALID;
    default:
        if (log)
            sr_error("shm: cross-memory attach to segment %u of PE %d failed: %s", id, ep->pe,
                     strerror(err));
        return sr_status_from_errno(err);
    }
}

/* The kernel may stop short (a fault, a signal): go on from where it
 * stopped until all is done or it makes no progress. */
static int sr_shm_cma(int pid, void *local, uint64_t raddr, size_t len, int to_peer)
{
    size_t done = 0;
    while (done < len) {
        struct iovec l = { (char *)local + done, len - done };
        struct iovec r = { (void *)(uintptr_t)(raddr + done), len - done };
        ssize_t n = to_peer ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n > 0)
            done += (size_t)n;
        else if (n == 0)
            return EFAULT;
        else if (errno != EINTR)
            return errno;
    }
    return 0;
}

symrail_status_t sr_shm_seg_copy(sr_tl_ep_t *ep, void *buf, uint32_t rkey, uint64_t roff,
                                 size_t len, int to_peer)
{
    sr_shm_key_t *k = sr_shm_key(ep, rkey);
    if (sr_unlikely(k == NULL || roff > k->len || len > k->len - roff)) {
        sr_error("shm: %s of %zu bytes at offset %llu through key %u to PE %d: %s",
                 to_peer ? "put" : "get", len, (unsigned long long)roff, rkey, ep->pe,
                 k == NULL ? "no such key" : "past the segment's end");
        return SYMRAIL_ERR_INVALID;
    }
    symrail_status_t st = sr_shm_enter(ep, rkey, k);
    if (sr_unlikely(st != SYMRAIL_OK))
        return st;
    if (k->base != NULL) {
        if (to_peer)
            sr_copy(k->base + roff, buf, len);
        else
            sr_copy(buf, k->base + roff, len);
    } else {
        int err = sr_shm_cma(ep->pid, buf, k->raddr + roff, len, to_peer);
        if (sr_unlikely(err))
            st = sr_shm_cma_error(ep, k->id, ep->pid, err,
                                  sr_shm_key_first(k, SR_SHM_LOGGED_CMA));
    }
    sr_shm_leave(k);
    if (to_peer)
        sr_shm_kick(ep->hdr);
    return st;
}

symrail_status_t sr_shm_seg_atomic(sr_tl_ep_t *ep, sr_tl_amo_t op, uint32_t rkey, uint64_t roff,
                                   uint64_t operand, uint64_t compare, uint64_t *result_p)
{
    sr_shm_key_t *k = sr_shm_key(ep, rkey);
    uint64_t old;
    if (sr_unlikely(k == NULL || roff > k->len || SR_TL_AMO_WIDTH(op) > k->len - roff)) {
        sr_error("shm: atomic at offset %llu through key %u to PE %d: %s",
                 (unsigned long long)roff, rkey, ep->pe,
                 k == NULL ? "no such key" : "past the segment's end");
        return SYMRAIL_ERR_INVALID;
    }
    if (sr_unlikely(k->base == NULL)) {
        if (sr_shm_key_first(k, SR_SHM_LOGGED_AMO))
            sr_error("shm: atomics on segment %u of PE %d need memory that local peers map "
                     "(symrail_seg_alloc); this one is reached by cross-memory attach",
                     k->id, ep->pe);
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    symrail_status_t st = sr_shm_enter(ep, rkey, k);
    if (sr_unlikely(st != SYMRAIL_OK))
        return st;
    int did = sr_cpu_amo(k->base + roff, op, operand, compare, &old);
    sr_shm_leave(k);
    return sr_shm_amo_done(ep, did, old, result_p);
}

static symrail_status_t sr_shm_imp_get(sr_tl_ep_t *ep, struct sr_shm_imp **imp_p)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    symrail_status_t st = SYMRAIL_OK;
    pthread_mutex_lock(&ctx->seg_lock);
    struct sr_shm_imp *imp = ep->imp;
    if (imp == NULL) {
        imp = calloc(1, sizeof(*imp));
        if (imp == NULL) {
            st = SYMRAIL_ERR_NOMEM;
        } else {
            pthread_mutex_init(&imp->lock, NULL);
            __atomic_store_n(&ep->imp, imp, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&ctx->seg_lock);
    *imp_p = imp;
    return st;
}

/* The blob's fields and names are consistent, whatever came over the wire. */
static int sr_shm_mkey_valid(const sr_shm_mkey_t *m, size_t len)
{
    if (len < sizeof(*m) || m->magic != SR_SHM_SEG_MAGIC || m->tab_name_len == 0 ||
        m->tab_name_len > SR_SHM_NAME_LEN || m->seg_name_len > SR_SHM_NAME_LEN ||
        len != sizeof(*m) + m->tab_name_len + m->seg_name_len || m->id >= m->nslots)
        return 0;
    if (m->names[m->tab_name_len - 1] != '\0')
        return 0;
    return m->seg_name_len == 0 || m->names[m->tab_name_len + m->seg_name_len - 1] == '\0';
}

/* The owner's table, mapped at the first key from it. */
static symrail_status_t sr_shm_imp_tab(sr_tl_ep_t *ep, struct sr_shm_imp *imp,
                                       const sr_shm_mkey_t *m)
{
    size_t tab_len = sr_shm_gtab_len(m->nslots);
    if (imp->tab != NULL) {
        if (tab_len == imp->tab_len)
            return SYMRAIL_OK;
        sr_error("shm: a key of PE %d names a generation table of another size", ep->pe);
        return SYMRAIL_ERR_INVALID;
    }
    sr_shm_gtab_t *tab;
    symrail_status_t st = sr_shm_attach(m->names, tab_len, (void **)&tab);
    if (st != SYMRAIL_OK)
        return st;
    if (__atomic_load_n(&tab->magic, __ATOMIC_ACQUIRE) != SR_SHM_MAGIC || tab->pid != m->pid ||
        tab->nslots != m->nslots) {
        sr_error("shm: the generation table %s of PE %d is not what its key says", m->names,
                 ep->pe);
        sr_shm_unmap(tab, tab_len);
        return SYMRAIL_ERR_INVALID;
    }
    imp->tab = tab;
    imp->tab_len = tab_len;
    sr_debug("shm: mapped the generation table of PE %d (%u slots)", ep->pe, m->nslots);
    return SYMRAIL_OK;
}

static symrail_status_t sr_shm_key_slot(struct sr_shm_imp *imp, uint32_t rkey,
                                        sr_shm_key_t **k_p)
{
    sr_shm_key_t **cp = &imp->chunk[rkey / SR_SHM_KEY_CHUNK];
    if (*cp == NULL) {
        sr_shm_key_t *c = calloc(SR_SHM_KEY_CHUNK, sizeof(*c));
        if (c == NULL)
            return SYMRAIL_ERR_NOMEM;
        __atomic_store_n(cp, c, __ATOMIC_RELEASE);
    }
    *k_p = &(*cp)[rkey % SR_SHM_KEY_CHUNK];
    return SYMRAIL_OK;
}

symrail_status_t sr_shm_rkey_unpack(sr_tl_ep_t *ep, uint32_t rkey, const void *buf, size_t len)
{
    const sr_shm_mkey_t *m = buf;
    struct sr_shm_imp *imp;
    sr_shm_key_t *k;
    symrail_status_t st;

    if (rkey < SR_TL_REGION_SEG0 || rkey > UINT16_MAX || buf == NULL ||
        !sr_shm_mkey_valid(m, len)) {
        sr_error("shm: key %u for PE %d: not a valid shared-memory segment key", rkey, ep->pe);
        return SYMRAIL_ERR_INVALID;
    }
    if (m->pid != ep->pid) {
        sr_error("shm: segment %u of PE %d: the key is of process %d, PE %d is process %d now",
                 m->id, ep->pe, (int)m->pid, ep->pe, ep->pid);
        return SYMRAIL_ERR_STALE;
    }
    st = sr_shm_imp_get(ep, &imp);
    if (st != SYMRAIL_OK)
        return st;
    pthread_mutex_lock(&imp->lock);
    st = sr_shm_imp_tab(ep, imp, m);
    if (st != SYMRAIL_OK)
        goto out;
    st = sr_shm_key_slot(imp, rkey, &k);
    if (st != SYMRAIL_OK)
        goto out;
    if (k->used) {
        sr_error("shm: key %u for PE %d is in use already", rkey, ep->pe);
        st = SYMRAIL_ERR_STATE;
        goto out;
    }
    uint64_t w = __atomic_load_n(&imp->tab->word[m->id], __ATOMIC_ACQUIRE);
    if (SR_SHM_GEN(w) != m->gen || !(w & SR_SHM_LIVE)) {
        sr_error("shm: segment %u of PE %d (generation %u) is deregistered", m->id, ep->pe,
                 m->gen);
        st = SYMRAIL_ERR_STALE;
        goto out;
    }
    memset(k, 0, sizeof(*k));
    if (m->seg_name_len) {
        const char *name = m->names + m->tab_name_len;
        if (m->len != 0) {
            st = sr_shm_attach_part(name, m->len, (void **)&k->base);
            if (st != SYMRAIL_OK)
                goto out;
        }
        sr_info("shm: key %u: segment %u of PE %d (generation %u, %llu bytes) mapped from %s",
                rkey, m->id, ep->pe, m->gen, (unsigned long long)m->len, name);
    } else {
        /* Ask now whether the kernel lets us in, so that the refusal comes
         * with its cause at import and not from the first transfer. */
        char probe;
        int err = m->len ? sr_shm_cma(ep->pid, &probe, m->addr, 1, 0) : 0;
        if (err) {
            st = sr_shm_cma_error(ep, m->id, ep->pid, err, 1);
            goto out;
        }
        sr_info("shm: key %u: segment %u of PE %d (generation %u, %llu bytes) reached by "
                "cross-memory attach to process %d", rkey, m->id, ep->pe, m->gen,
                (unsigned long long)m->len, ep->pid);
    }
    k->raddr = m->addr;
    k->len = m->len;
    k->word = &imp->tab->word[m->id];
    k->gen = m->gen;
    k->id = m->id;
    __atomic_store_n(&k->used, 1, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&imp->lock);
    return st;
}

static void sr_shm_key_drop(sr_shm_key_t *k)
{
    __atomic_store_n(&k->used, 0, __ATOMIC_RELEASE);
    if (k->base != NULL)
        sr_shm_unmap(k->base, k->len);
    k->base = NULL;
}

void sr_shm_rkey_release(sr_tl_ep_t *ep, uint32_t rkey)
{
    struct sr_shm_imp *imp = ep->imp;
    sr_shm_key_t *k = sr_shm_key(ep, rkey);
    if (k == NULL)
        return;
    pthread_mutex_lock(&imp->lock);
    sr_shm_key_drop(k);
    pthread_mutex_unlock(&imp->lock);
}

void sr_shm_seg_ep_fini(sr_tl_ep_t *ep)
{
    struct sr_shm_imp *imp = ep->imp;
    if (imp == NULL)
        return;
    for (int c = 0; c < SR_SHM_KEY_NCHUNKS; c++) {
        if (imp->chunk[c] == NULL)
            continue;
        for (int i = 0; i < SR_SHM_KEY_CHUNK; i++)
            if (imp->chunk[c][i].used)
                sr_shm_key_drop(&imp->chunk[c][i]);
        free(imp->chunk[c]);
    }
    sr_shm_unmap(imp->tab, imp->tab_len);
    pthread_mutex_destroy(&imp->lock);
    free(imp);
    ep->imp = NULL;
}
