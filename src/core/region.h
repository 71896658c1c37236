/*
 * The memory registry: every range of this PE's memory that peers may reach,
 * and every peer's range this PE imported.
 *
 * A local region has an id (0 the heap, 1 the data segment, segments from
 * SR_TL_REGION_SEG0 up) and a generation that grows each time the id is used
 * again, so a descriptor names one registration for ever: once it is gone,
 * every transport refuses the descriptor (SYMRAIL_ERR_STALE) rather than
 * reach memory that may be reused.  An imported region has an import index
 * (SR_TL_REGION_SEG0 .. SR_REGION_MAX), the `region` the transports are
 * called with, and the owner's id and generation.
 */
#ifndef SR_CORE_REGION_H
#define SR_CORE_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

#define SR_MEM_HOST 0

struct symrail_seg {
    uint64_t magic;
    uint32_t id;
    uint32_t generation;
};

typedef struct sr_region {
    struct symrail_seg handle;  /* what the application holds */
    char    *addr;
    size_t   len;
    uint32_t refs;      /* registrations of this very range */
    uint32_t busy;      /* batches in flight that read or write it here */
    uint8_t  kind;      /* SR_MEM_HOST */
    uint8_t  owned;     /* allocated by symrail_seg_alloc: unmapped at the end */
    uint8_t  live;
    uint8_t  tls;       /* bit i: registered with transport i */
    char     shm_name[96];  /* the object behind an owned one */
} sr_region_t;

struct symrail_rseg {
    uint64_t magic;
    uint32_t idx;       /* import index: the transports' region */
    int32_t  pe;        /* owner */
    uint32_t id, generation;  /* the owner's */
    uint64_t addr;      /* at the owner (for PE == self) */
    uint64_t len;
    uint32_t busy;      /* tasks of batches that name it */
};

/* Registers [addr, addr+len) (or finds the same range registered) on every
 * transport. */
symrail_status_t sr_region_register(void *addr, size_t len, const char *shm_name, int owned,
                                    sr_region_t **reg_p);
/* Drops one registration; the last one deregisters from every transport. */
symrail_status_t sr_region_deregister(sr_region_t *reg);
/* The live region of a handle, or NULL (logged, naming fn). */
sr_region_t *sr_region_of(const char *fn, symrail_seg_t seg);
/* The live local region `id` of `generation`, or NULL. */
sr_region_t *sr_region_find(uint32_t id, uint32_t generation);
/* A copy to (write 1) or from this PE's own segment, checked against its
 * generation and length under the registry lock: SYMRAIL_ERR_STALE when it
 * is gone. */
symrail_status_t sr_region_copy_self(uint32_t id, uint32_t generation, uint64_t off, void *buf,
                                     size_t len, int write);
/* Descriptors. */
symrail_status_t sr_region_export(sr_region_t *reg, void *buf, size_t *len_p);
symrail_status_t sr_region_import(const void *buf, size_t len, struct symrail_rseg **rseg_p);
void sr_region_release(struct symrail_rseg *rseg);
/* The live import of a handle, or NULL (logged, naming fn). */
struct symrail_rseg *sr_rseg_of(const char *fn, symrail_rseg_t rseg);
/* Holds every live segment that overlaps [lo, hi) (their pointers in
 * (*held_p)[0 .. *n_p), an array grown as needed). */
symrail_status_t sr_region_hold_span(const char *lo, const char *hi, sr_region_t ***held_p,
                                     size_t *cap_p, size_t *n_p);
void sr_region_unhold(sr_region_t *reg);
void sr_regions_fini(void);
/* Transport `tl` started after init (connected jobs): every live segment
 * onto it too. */
void sr_regions_tl_added(int tl);

/* seg_name.c: names through the launcher, or asked of the peers. */
#define SR_SEG_NAME_MAX 200
symrail_status_t sr_seg_publish(symrail_seg_t seg, const char *name);
symrail_status_t sr_seg_unpublish(const char *name);
symrail_status_t sr_seg_lookup(int pe, const char *name, int timeout_ms,
                               struct symrail_rseg **rseg_p);
void sr_seg_names_drop(symrail_seg_t seg);
void sr_seg_names_fini(void);

#endif
