/*
 * The memory registry (region.h).  Registration, export and import are off
 * the transfer path: they take one lock of their own, and the data path
 * reads an import's fields without it (an import never changes once made,
 * and is released only by its owner thread's call).
 */
#include "config.h"
#include "core/region.h"
#include "core/rt.h"
#include "core/endpoint.h"
#include "util/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SR_SEG_MAGIC   UINT64_C(0x7372534547000001)  /* "srSEG" */
#define SR_RSEG_MAGIC  UINT64_C(0x7372525347000001)  /* "srRSG" */
#define SR_DESC_MAGIC  0x44537253u                  /* "SrSD" */
#define SR_DESC_VERSION 1
#define SR_DESC_TLNAME 8

/* A descriptor: this header, then per transport a name, a length and the
 * transport's key.  Peers of one job run one build, so the header travels
 * as it is laid out. */
typedef struct {
    uint32_t magic;
    uint16_t version;
    uint16_t ntls;
    uint64_t job;         /* hash of the job's name */
    int32_t  pe;
    int32_t  pid;         /* the owner's process: a restarted one has another */
    uint32_t id, generation;
    uint64_t addr, len;
    uint32_t kind;
    uint32_t total;       /* bytes of the whole descriptor */
} sr_desc_hdr_t;

typedef struct {
    char     name[SR_DESC_TLNAME];
    uint32_t len;
} sr_desc_tl_t;

static pthread_mutex_t sr_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static sr_region_t   **sr_regs;      /* [sr_nregs] by id; NULL: free */
static uint32_t       *sr_reg_gen;   /* the generation the id had last */
static uint32_t        sr_nregs, sr_reg_cap;
static struct symrail_rseg **sr_imports;  /* [SR_REGION_MAX + 1] by import index */
static uint32_t        sr_import_next = SR_TL_REGION_SEG0, sr_nimports;

static void sr_region_unmap(sr_region_t *reg)
{
    sr_shm_unlink(reg->shm_name);
    sr_shm_unmap(reg->addr, reg->len);
}


static symrail_status_t sr_reg_grow(void)
{
    uint32_t cap = sr_reg_cap ? sr_reg_cap * 2 : 64;
    sr_region_t **regs = realloc(sr_regs, cap * sizeof(*regs));
    if (regs == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_regs = regs;
    uint32_t *gen = realloc(sr_reg_gen, cap * sizeof(*gen));
    if (gen == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_reg_gen = gen;
    for (uint32_t i = sr_reg_cap; i < cap; i++) {
        regs[i] = NULL;
        gen[i] = 0;
    }
    sr_reg_cap = cap;
    return SYMRAIL_OK;
}

static symrail_status_t sr_reg_tls_undo(sr_region_t *reg, int upto);

/* A free id from SR_TL_REGION_SEG0 up (the lowest, so ids stay dense).  An
 * id whose deregistration failed is free again once the transports that
 * kept it let it go (shm: its late copies have left); they are asked
 * again here, which costs them no wait. */
static symrail_status_t sr_reg_id(uint32_t *id_p)
{
    for (uint32_t id = SR_TL_REGION_SEG0; id < sr_nregs; id++) {
        sr_region_t *r = sr_regs[id];
        if (r != NULL && !r->live && sr_reg_tls_undo(r, sr_rt.ntls) == SYMRAIL_OK) {
            sr_info("segment %u (generation %u): its deregistration is complete now that its "
                    "late users have left: the id is free again", id, r->handle.generation);
            sr_regs[id] = NULL;
            free(r);
        }
        if (sr_regs[id] == NULL) {
            *id_p = id;
            return SYMRAIL_OK;
        }
    }
    if (sr_nregs < SR_TL_REGION_SEG0)
        sr_nregs = SR_TL_REGION_SEG0;
    if (sr_nregs >= sr_reg_cap) {
        symrail_status_t st = sr_reg_grow();
        if (st != SYMRAIL_OK)
            return st;
    }
    *id_p = sr_nregs++;
    return SYMRAIL_OK;
}

/* Deregisters from the transports that have it; the first failure.  Those
 * that let it go leave reg->tls, so that one that failed is asked again. */
static symrail_status_t sr_reg_tls_undo(sr_region_t *reg, int upto)
{
    symrail_status_t st = SYMRAIL_OK;
    for (int i = 0; i < upto; i++) {
        if (!(reg->tls & (1u << i)))
            continue;
        symrail_status_t tst = sr_rt.tls[i].ops->mem_dereg(sr_rt.tls[i].tl, reg->handle.id);
        if (tst == SYMRAIL_OK)
            reg->tls &= ~(1u << i);
        else if (st == SYMRAIL_OK)
            st = tst;
    }
    return st;
}

symrail_status_t sr_region_register(void *addr, size_t len, const char *shm_name, int owned,
                                    sr_region_t **reg_p)
{
    symrail_status_t st = SYMRAIL_OK;
    pthread_mutex_lock(&sr_reg_lock);
    for (uint32_t id = SR_TL_REGION_SEG0; id < sr_nregs; id++) {
        sr_region_t *r = sr_regs[id];
        if (r && r->live && r->addr == addr && r->len == len && !owned) {
            r->refs++;
            *reg_p = r;
            goto out;
        }
    }
    uint32_t id;
    st = sr_reg_id(&id);
    if (st != SYMRAIL_OK)
        goto out;
    sr_region_t *reg = calloc(1, sizeof(*reg));
    if (reg == NULL) {
        st = SYMRAIL_ERR_NOMEM;
        goto out;
    }
    reg->handle.magic = SR_SEG_MAGIC;
    reg->handle.id = id;
    reg->handle.generation = ++sr_reg_gen[id];
    reg->addr = addr;
    reg->len = len;
    reg->refs = 1;
    reg->kind = SR_MEM_HOST;
    reg->owned = (uint8_t)owned;
    if (shm_name)
        snprintf(reg->shm_name, sizeof(reg->shm_name), "%s", shm_name);
    sr_tl_mem_t mem = { addr, len, shm_name, reg->handle.generation };
    for (int i = 0; i < sr_rt.ntls; i++) {
        st = sr_rt.tls[i].ops->mem_reg(sr_rt.tls[i].tl, id, &mem);
        if (st == SYMRAIL_ERR_UNSUPPORTED) {
            /* Peers reached over it cannot import the segment; they are told so. */
            sr_info("segment %u: %s has no segments; peers it reaches cannot import it", id,
                    sr_rt.tls[i].ops->name);
            st = SYMRAIL_OK;
            continue;
        }
        reg->tls |= 1u << i;
        if (st != SYMRAIL_OK) {
            sr_error("registering %zu bytes at %p with %s failed: %s", len, addr,
                     sr_rt.tls[i].ops->name, symrail_strerror(st));
            reg->tls &= ~(1u << i);
            sr_reg_tls_undo(reg, i);
            free(reg);
            goto out;
        }
    }
    reg->live = 1;
    sr_regs[id] = reg;
    sr_debug("segment %u (generation %u): %zu bytes at %p", id, reg->handle.generation, len,
             addr);
    *reg_p = reg;
out:
    pthread_mutex_unlock(&sr_reg_lock);
    return st;
}

symrail_status_t sr_region_deregister(sr_region_t *reg)
{
    symrail_status_t st = SYMRAIL_OK;
    pthread_mutex_lock(&sr_reg_lock);
    if (reg->busy) {
        st = SYMRAIL_ERR_STATE;
        goto out;
    }
    if (--reg->refs > 0)
        goto out;
    /* Its names go first: a lookup must not find it while it goes. */
    sr_seg_names_drop(&reg->handle);
    reg->live = 0;
    reg->handle.magic = 0;
    /* A transport that fails says why.  The segment is gone all the same,
     * but its id stays taken (the entry is kept, not live) while that
     * transport may still hold it: sr_reg_id asks it again. */
    st = sr_reg_tls_undo(reg, sr_rt.ntls);
    sr_debug("segment %u (generation %u) deregistered", reg->handle.id, reg->handle.generation);
    if (reg->owned)
        sr_region_unmap(reg);
    if (st == SYMRAIL_OK) {
        sr_regs[reg->handle.id] = NULL;
        free(reg);
    }
out:
    pthread_mutex_unlock(&sr_reg_lock);
    return st;
}

sr_region_t *sr_region_of(const char *fn, symrail_seg_t seg)
{
    if (seg == NULL || seg->magic != SR_SEG_MAGIC) {
        sr_error("%s: seg %p is not a registered segment", fn, (void *)seg);
        return NULL;
    }
    return (sr_region_t *)(void *)seg;
}

sr_region_t *sr_region_find(uint32_t id, uint32_t generation)
{
    pthread_mutex_lock(&sr_reg_lock);
    sr_region_t *r = id < sr_nregs ? sr_regs[id] : NULL;
    if (r && (!r->live || r->handle.generation != generation))
        r = NULL;
    pthread_mutex_unlock(&sr_reg_lock);
    return r;
}

symrail_status_t sr_region_copy_self(uint32_t id, uint32_t generation, uint64_t off, void *buf,
                                     size_t len, int write)
{
    symrail_status_t st = SYMRAIL_ERR_STALE;
    /* Under the lock: a deregistration cannot come between check and copy. */
    pthread_mutex_lock(&sr_reg_lock);
    sr_region_t *r = id < sr_nregs ? sr_regs[id] : NULL;
    if (r && r->live && r->handle.generation == generation && off <= r->len &&
        len <= r->len - off) {
        if (write)
            memmove(r->addr + off, buf, len);
        else
            memmove(buf, r->addr + off, len);
        st = SYMRAIL_OK;
    }
    pthread_mutex_unlock(&sr_reg_lock);
    return st;
}

symrail_status_t sr_region_hold_span(const char *lo, const char *hi, sr_region_t ***held_p,
                                     size_t *cap_p, size_t *n_p)
{
    symrail_status_t st = SYMRAIL_OK;
    size_t n = 0;
    pthread_mutex_lock(&sr_reg_lock);
    for (uint32_t id = SR_TL_REGION_SEG0; id < sr_nregs; id++) {
        sr_region_t *r = sr_regs[id];
        if (r == NULL || !r->live || r->addr >= hi || r->addr + r->len <= lo)
            continue;
        if (n == *cap_p) {
            size_t cap = *cap_p ? *cap_p * 2 : 8;
            sr_region_t **held = realloc(*held_p, cap * sizeof(*held));
            if (held == NULL) {
                st = SYMRAIL_ERR_NOMEM;
                break;
            }
            *held_p = held;
            *cap_p = cap;
        }
        (*held_p)[n++] = r;
    }
    /* Under the lock: a deregistration that saw busy 0 has freed it. */
    for (size_t i = 0; i < n && st == SYMRAIL_OK; i++)
        (*held_p)[i]->busy++;
    pthread_mutex_unlock(&sr_reg_lock);
    *n_p = st == SYMRAIL_OK ? n : 0;
    return st;
}

void sr_region_unhold(sr_region_t *reg)
{
    pthread_mutex_lock(&sr_reg_lock);
    reg->busy--;
    pthread_mutex_unlock(&sr_reg_lock);
}

symrail_status_t sr_region_export(sr_region_t *reg, void *buf, size_t *len_p)
{
    unsigned char tmp[SYMRAIL_SEG_DESC_MAX];
    sr_desc_hdr_t hdr = {
        .magic = SR_DESC_MAGIC, .version = SR_DESC_VERSION, .ntls = (uint16_t)sr_rt.ntls,
        .job = sr_job_hash(), .pe = sr_rt.my_pe, .pid = sr_rt.pids[sr_rt.my_pe],
        .id = reg->handle.id, .generation = reg->handle.generation,
        .addr = (uint64_t)(uintptr_t)reg->addr, .len = reg->len, .kind = reg->kind,
    };
    size_t off = sizeof(hdr);
    for (int i = 0; i < sr_rt.ntls; i++) {
        sr_desc_tl_t t = { { 0 }, 0 };
        memcpy(t.name, sr_rt.tls[i].ops->name,
               strnlen(sr_rt.tls[i].ops->name, sizeof(t.name)));
        size_t klen = SR_TL_MKEY_MAX;
        if (off + sizeof(t) + klen > sizeof(tmp))
            klen = sizeof(tmp) - off - sizeof(t);
        symrail_status_t st = SYMRAIL_ERR_UNSUPPORTED;
        if (reg->tls & (1u << i))
            st = sr_rt.tls[i].ops->mkey_pack(sr_rt.tls[i].tl, reg->handle.id,
                                             tmp + off + sizeof(t), &klen);
        if (st == SYMRAIL_ERR_UNSUPPORTED) {
            klen = 0;  /* peers on that transport cannot import it: they are told so */
        } else if (st != SYMRAIL_OK) {
            sr_error("describing segment %u for %s failed: %s", reg->handle.id,
                     sr_rt.tls[i].ops->name, symrail_strerror(st));
            return st;
        }
        t.len = (uint32_t)klen;
        memcpy(tmp + off, &t, sizeof(t));
        off += sizeof(t) + klen;
    }
    hdr.total = (uint32_t)off;
    memcpy(tmp, &hdr, sizeof(hdr));
    if (*len_p < off) {
        *len_p = off;
        return SYMRAIL_ERR_TRUNCATED;
    }
    memcpy(buf, tmp, off);
    *len_p = off;
    return SYMRAIL_OK;
}

/* The key of transport `name` in a checked descriptor; 0 when absent. */
static int sr_desc_key(const unsigned char *buf, const sr_desc_hdr_t *hdr, const char *name,
                       const unsigned char **key_p, size_t *klen_p)
{
    size_t off = sizeof(*hdr);
    for (unsigned i = 0; i < hdr->ntls; i++) {
        sr_desc_tl_t t;
        if (off + sizeof(t) > hdr->total)
            return -1;
        memcpy(&t, buf + off, sizeof(t));
        off += sizeof(t);
        if (t.len > hdr->total - off)
            return -1;
        if (strncmp(t.name, name, sizeof(t.name)) == 0) {
            *key_p = buf + off;
            *klen_p = t.len;
            return 1;
        }
        off += t.len;
    }
    return 0;
}

static symrail_status_t sr_import_slot(struct symrail_rseg *rs)
{
    if (sr_imports == NULL) {
        sr_imports = calloc((size_t)SR_REGION_MAX + 1, sizeof(*sr_imports));
        if (sr_imports == NULL)
            return SYMRAIL_ERR_NOMEM;
    }
    if (sr_nimports >= SR_REGION_MAX + 1u - SR_TL_REGION_SEG0) {
        sr_error("symrail_seg_import: %u segments imported at once, the most there can be "
                 "(release some with symrail_rseg_release)", sr_nimports);
        return SYMRAIL_ERR_NOMEM;
    }
    /* Indexes are handed out in a circle, so one just released waits long
     * before it is used again. */
    while (sr_imports[sr_import_next] != NULL)
        sr_import_next = sr_import_next >= SR_REGION_MAX ? SR_TL_REGION_SEG0
                                                         : sr_import_next + 1;
    rs->idx = sr_import_next;
    sr_imports[rs->idx] = rs;
    sr_nimports++;
    return SYMRAIL_OK;
}

symrail_status_t sr_region_import(const void *buf, size_t len, struct symrail_rseg **rseg_p)
{
    const unsigned char *b = buf;
    sr_desc_hdr_t hdr;
    if (len < sizeof(hdr))
        goto err_desc;
    memcpy(&hdr, b, sizeof(hdr));
    if (hdr.magic != SR_DESC_MAGIC || hdr.version != SR_DESC_VERSION || hdr.total > len ||
        hdr.total < sizeof(hdr))
        goto err_desc;
    if (hdr.job != sr_job_hash()) {
        /* A connected peer's: under the number it has here. */
        int owner;
        symrail_status_t fst = sr_endpoint_find("symrail_seg_import", hdr.job, hdr.pe, hdr.pid,
                                                &owner);
        if (fst != SYMRAIL_OK)
            return fst;
        hdr.pe = owner;
    } else if (hdr.pe < 0 || hdr.pe >= sr_rt.n_pes) {
        goto err_desc;
    } else if (hdr.pid != sr_rt.pids[hdr.pe]) {
        sr_error("symrail_seg_import: the descriptor is of an earlier process of PE %d", hdr.pe);
        return SYMRAIL_ERR_STALE;
    }
    if (hdr.len >= SR_DATA_BIT)
        goto err_desc;
    struct symrail_rseg *rs = calloc(1, sizeof(*rs));
    if (rs == NULL)
        return SYMRAIL_ERR_NOMEM;
    rs->magic = SR_RSEG_MAGIC;
    rs->pe = hdr.pe;
    rs->id = hdr.id;
    rs->generation = hdr.generation;
    rs->addr = hdr.addr;
    rs->len = hdr.len;

    symrail_status_t st = SYMRAIL_OK;
    pthread_mutex_lock(&sr_reg_lock);
    if (hdr.pe == sr_rt.my_pe) {
        /* Our own: reached by copies here, checked against the registry. */
        sr_region_t *r = hdr.id < sr_nregs ? sr_regs[hdr.id] : NULL;
        if (r == NULL || !r->live || r->handle.generation != hdr.generation) {
            st = SYMRAIL_ERR_STALE;
            sr_error("symrail_seg_import: segment %u (generation %u) of this PE is gone",
                     hdr.id, hdr.generation);
        } else {
            st = sr_import_slot(rs);
        }
        goto out;
    }
    sr_peer_t *peer = &sr_rt.peers[hdr.pe];
    const unsigned char *key = NULL;
    size_t klen = 0;
    /* The descriptor may lie anywhere (in a message, a file): the transport
     * reads its key as the struct it packed, from an aligned copy. */
    uint64_t kcopy[SYMRAIL_SEG_DESC_MAX / sizeof(uint64_t)];
    int found = sr_desc_key(b, &hdr, peer->ops->name, &key, &klen);
    if (found < 0 || klen > sizeof(kcopy)) {
        pthread_mutex_unlock(&sr_reg_lock);
        free(rs);
        goto err_desc;
    }
    if (!found || klen == 0) {
        sr_error("symrail_seg_import: PE %d is reached over %s, which its descriptor has no "
                 "key of%s", hdr.pe, peer->ops->name,
                 hdr.pe >= sr_rt.n_pes ? " (a connected peer's descriptor exported before its "
                                         "TCP started? export it after the endpoint)" : "");
        st = SYMRAIL_ERR_UNSUPPORTED;
        goto out;
    }
    st = sr_import_slot(rs);
    if (st != SYMRAIL_OK)
        goto out;
    memcpy(kcopy, key, klen);
    st = peer->ops->rkey_unpack(peer->ep, rs->idx, kcopy, klen);
    if (st != SYMRAIL_OK) {
        sr_error("symrail_seg_import: the key of segment %u of PE %d is refused by %s: %s",
                 hdr.id, hdr.pe, peer->ops->name, symrail_strerror(st));
        sr_imports[rs->idx] = NULL;
        sr_nimports--;
    }
out:
    pthread_mutex_unlock(&sr_reg_lock);
    if (st != SYMRAIL_OK) {
        free(rs);
        return st;
    }
    sr_debug("imported segment %u (generation %u) of PE %d: %llu bytes, index %u", rs->id,
             rs->generation, rs->pe, (unsigned long long)rs->len, rs->idx);
    *rseg_p = rs;
    return SYMRAIL_OK;

err_desc:
    sr_error("symrail_seg_import: buf is not a segment descriptor of this version (%zu bytes)",
             len);
    return SYMRAIL_ERR_INVALID;
}

void sr_region_release(struct symrail_rseg *rs)
{
    pthread_mutex_lock(&sr_reg_lock);
    if (rs->pe != sr_rt.my_pe)
        sr_rt.peers[rs->pe].ops->rkey_release(sr_rt.peers[rs->pe].ep, rs->idx);
    sr_imports[rs->idx] = NULL;
    sr_nimports--;
    pthread_mutex_unlock(&sr_reg_lock);
    rs->magic = 0;
    free(rs);
}

struct symrail_rseg *sr_rseg_of(const char *fn, symrail_rseg_t rseg)
{
    if (rseg == NULL || rseg->magic != SR_RSEG_MAGIC) {
        sr_error("%s: rseg %p is not an imported segment (released, or never imported)", fn,
                 (void *)rseg);
        return NULL;
    }
    return rseg;
}

void sr_regions_tl_added(int tl)
{
    pthread_mutex_lock(&sr_reg_lock);
    for (uint32_t id = SR_TL_REGION_SEG0; id < sr_nregs; id++) {
        sr_region_t *r = sr_regs[id];
        if (r == NULL || !r->live)
            continue;
        sr_tl_mem_t mem = { r->addr, r->len, r->shm_name[0] ? r->shm_name : NULL,
                            r->handle.generation };
        symrail_status_t st = sr_rt.tls[tl].ops->mem_reg(sr_rt.tls[tl].tl, id, &mem);
        if (st == SYMRAIL_OK)
            r->tls |= 1u << tl;
        else if (st != SYMRAIL_ERR_UNSUPPORTED)
            sr_warn("segment %u: registering it with %s failed (%s): peers it reaches cannot "
                    "import it", id, sr_rt.tls[tl].ops->name, symrail_strerror(st));
    }
    pthread_mutex_unlock(&sr_reg_lock);
}

void sr_regions_fini(void)
{
    pthread_mutex_lock(&sr_reg_lock);
    if (sr_imports) {
        for (uint32_t i = 0; i <= SR_REGION_MAX; i++) {
            struct symrail_rseg *rs = sr_imports[i];
            if (rs == NULL)
                continue;
            if (rs->pe != sr_rt.my_pe)
                sr_rt.peers[rs->pe].ops->rkey_release(sr_rt.peers[rs->pe].ep, rs->idx);
            rs->magic = 0;
            free(rs);
        }
        free(sr_imports);
        sr_imports = NULL;
    }
    sr_nimports = 0;
    sr_import_next = SR_TL_REGION_SEG0;
    for (uint32_t id = SR_TL_REGION_SEG0; id < sr_nregs; id++) {
        sr_region_t *r = sr_regs[id];
        if (r == NULL)
            continue;
        if (r->live) {  /* not one whose deregistration failed: that one is undone */
            sr_reg_tls_undo(r, sr_rt.ntls);
            if (r->owned)
                sr_region_unmap(r);
        }
        r->handle.magic = 0;
        free(r);
        sr_regs[id] = NULL;
    }
    /* The generations stay: after init again, a descriptor of this process
     * from before must still be refused. */
    pthread_mutex_unlock(&sr_reg_lock);
}
