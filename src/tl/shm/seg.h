/* What the two sides of a segment share (seg.c: the owner; rkey.c: the
 * importer): the generation table and the key blob. */
#ifndef SR_TL_SHM_SEG_H
#define SR_TL_SHM_SEG_H

#include "shm.h"

#define SR_SHM_SEG_MAGIC 0x67736d73u  /* "smsg": a key blob */
/* A word of the generation table: {generation: 32, live: 1, copies in
 * progress: 31}. */
#define SR_SHM_LIVE      (1ull << 31)
#define SR_SHM_COUNT     (SR_SHM_LIVE - 1)
#define SR_SHM_GEN(w)    ((uint32_t)((w) >> 32))

/* The generation table, one per owner. */
typedef struct {
    uint64_t magic;
    int32_t  pid;
    uint32_t nslots;
    _Alignas(SR_CACHE_LINE) uint64_t word[];
} sr_shm_gtab_t;

static inline size_t sr_shm_gtab_len(uint32_t nslots)
{
    return sizeof(sr_shm_gtab_t) + (size_t)nslots * sizeof(uint64_t);
}

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

/* Yama's ptrace_scope, -1 without Yama. */
int sr_shm_yama_scope(void);
/* Under Yama's ptrace_scope 1, lets processes of this user attach to this
 * one (cross-memory attach); once per process. */
void sr_shm_allow_attach(void);
/* Cross-memory attach: 0 or the errno. */
int sr_shm_cma(int pid, void *local, uint64_t raddr, size_t len, int to_peer);

#endif
