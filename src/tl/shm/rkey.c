/*
 * A peer's segments on an endpoint (the importer's side; seg.c explains the
 * two paths and the generations): keys numbered by the core, and put, get
 * and atomics through them, each copy entered into and left from the
 * owner's generation table.
 */
#include "config.h"
#include "seg.h"
#include "util/copy.h"
#include "util/log.h"
#include "util/status.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Keys are the importer's region numbers, 16 bits: chunks that never move
 * once published, so that put and get read them without a lock while other
 * threads unpack. */
#define SR_SHM_KEY_CHUNK   256
#define SR_SHM_KEY_NCHUNKS ((UINT16_MAX + 1) / SR_SHM_KEY_CHUNK)

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
int sr_shm_cma(int pid, void *local, uint64_t raddr, size_t len, int to_peer)
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

void sr_shm_seg_prefetch(sr_tl_ep_t *ep, uint32_t rkey, uint64_t roff, int write)
{
    sr_shm_key_t *k = sr_shm_key(ep, rkey);
    if (k != NULL && k->base != NULL && roff < k->len)
        sr_prefetch(k->base + roff, write);
}

/*
 * A run of copies (posted with SR_TL_COMP_MORE, ended by ep_post_end from
 * the same thread) enters the key once and leaves it at the end, instead of
 * once a copy: the locked decrement after a copy waits until every store of
 * the copy has drained from the store buffer, so that the next copy's loads
 * cannot start under it (paged 16 KiB blocks: a quarter of the copy's time
 * went there, perf).  Deregistration waits for the run as it waits for a
 * copy; every SR_SHM_HELD_MAX bytes the run leaves and enters again, so
 * that it sees a deregistration soon and does not hold it up for long.
 */
#define SR_SHM_HELD_MAX ((uint64_t)1 << 20)

typedef struct {
    sr_shm_key_t *k;      /* entered for this thread's run; NULL: none */
    uint64_t      bytes;  /* copied since it was entered */
} sr_shm_held_t;

static __thread sr_shm_held_t sr_shm_held;

void sr_shm_seg_run_end(void)
{
    sr_shm_held_t *h = &sr_shm_held;
    if (h->k != NULL) {
        sr_shm_leave(h->k);
        h->k = NULL;
    }
}

symrail_status_t sr_shm_seg_copy(sr_tl_ep_t *ep, void *buf, uint32_t rkey, uint64_t roff,
                                 size_t len, int to_peer, const sr_tl_comp_t *comp)
{
    sr_shm_key_t *k = sr_shm_key(ep, rkey);
    symrail_status_t st = sr_shm_peer_live(ep);
    if (sr_unlikely(st != SYMRAIL_OK))
        return st;
    if (sr_unlikely(k == NULL || roff > k->len || len > k->len - roff)) {
        sr_error("shm: %s of %zu bytes at offset %llu through key %u to PE %d: %s",
                 to_peer ? "put" : "get", len, (unsigned long long)roff, rkey, ep->pe,
                 k == NULL ? "no such key" : "past the segment's end");
        return SYMRAIL_ERR_INVALID;
    }
    int more = comp != NULL && (comp->flags & SR_TL_COMP_MORE);
    sr_shm_held_t *h = &sr_shm_held;
    if (more && h->k == k && h->bytes < SR_SHM_HELD_MAX) {
        h->bytes += len;
    } else {
        sr_shm_seg_run_end();
        st = sr_shm_enter(ep, rkey, k);
        if (sr_unlikely(st != SYMRAIL_OK))
            return st;
        if (more) {
            h->k = k;
            h->bytes = len;
        }
    }
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
    if (!more)
        sr_shm_leave(k);
    if (to_peer)
        sr_shm_kick_copy(ep->hdr, comp);
    return st;
}

symrail_status_t sr_shm_seg_atomic(sr_tl_ep_t *ep, sr_tl_amo_t op, uint32_t rkey, uint64_t roff,
                                   uint64_t operand, uint64_t compare, uint64_t *result_p)
{
    sr_shm_key_t *k = sr_shm_key(ep, rkey);
    uint64_t old;
    symrail_status_t st = sr_shm_peer_live(ep);
    if (sr_unlikely(st != SYMRAIL_OK))
        return st;
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
    st = sr_shm_enter(ep, rkey, k);
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
    if (sr_shm_held.k == k)
        sr_shm_seg_run_end();
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
