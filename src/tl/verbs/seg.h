/*
 * RDMA verbs transport. Segments (tl.h, "Regions") on the post path: the
 * lkey of a local buffer, and the address and rkey of a peer's segment.
 *
 * Local segments are looked up by address in a sorted array that is never
 * changed once published: mem_reg and mem_dereg publish a new one and free
 * the old one once no post can still read it.  A post reads the array under
 * its lane's lock, so after the writer has taken and released every lane's
 * lock the old array is unreachable (with thread_multiple 0 nobody else
 * posts, and it goes at once).  Segments may overlap (a pool and a block of
 * it): max_hi lets the search stop at the first entry that cannot contain
 * the buffer, so in the usual case one entry is looked at.
 *
 * A peer's segment is known on the endpoint by the number the core chose
 * (2..65535), in chunks of SR_IB_RSEG_CHUNK entries that never move, so a
 * post on one rkey reads its entry while another thread unpacks another.
 */
#ifndef SR_TL_VERBS_SEG_H
#define SR_TL_VERBS_SEG_H

/* A segment of this PE, by address. */
typedef struct {
    uintptr_t lo, hi;    /* [lo, hi) */
    uintptr_t max_hi;    /* the largest hi of this entry and every one before it */
    uint32_t  lkey[SR_IB_MAX_RAILS];  /* by device */
} sr_ib_lseg_t;

typedef struct sr_ib_lsegs {
    size_t       n;
    sr_ib_lseg_t v[];    /* by lo */
} sr_ib_lsegs_t;

enum { SR_IB_RSEG_FREE = 0, SR_IB_RSEG_LIVE, SR_IB_RSEG_DEAD };
#define SR_IB_RSEG_CHUNK 256
#define SR_IB_RSEG_MAX   65536  /* region numbers are 16 bits */

/* A peer's segment unpacked on an endpoint. */
typedef struct sr_ib_rseg {
    uint64_t raddr;
    uint32_t rkey[SR_IB_MAX_RAILS];  /* by our rail */
    int      state;                  /* SR_IB_RSEG_*, atomic */
} sr_ib_rseg_t;

/* lkey of [addr, addr+len) on `dev` when it lies in registered memory
 * (lane lock held, see above). */
static inline int sr_ib_lkey(sr_tl_ctx_t *ctx, sr_ib_dev_t *dev, const void *addr, size_t len,
                             uint32_t *lkey_p)
{
    uintptr_t a = (uintptr_t)addr;
    for (uint32_t r = 0; r < ctx->nregions; r++) {
        uintptr_t lo = (uintptr_t)ctx->regions[r].addr;
        if (dev->mr[r] && a >= lo && a - lo <= ctx->regions[r].len &&
            len <= ctx->regions[r].len - (a - lo)) {
            *lkey_p = dev->mr[r]->lkey;
            return 1;
        }
    }
    uintptr_t slo = (uintptr_t)ctx->scratch;
    if (a >= slo && a + len <= slo + ctx->scratch_len) {
        *lkey_p = dev->scratch_mr->lkey;
        return 1;
    }
    const sr_ib_lsegs_t *s = SR_IB_LOAD(ctx->lsegs);
    if (sr_likely(s == NULL) || a + len < a)
        return 0;
    /* The last entry with lo <= a, then back while one may still hold it. */
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].lo <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && s->v[i].max_hi >= a + len;) {
        if (s->v[i].hi >= a + len) {
            *lkey_p = s->v[i].lkey[dev - ctx->devs];
            return 1;
        }
    }
    return 0;
}

/* The entry of rkey number `region` on ep, or NULL. */
static inline sr_ib_rseg_t *sr_ib_rseg(sr_tl_ep_t *ep, uint32_t region)
{
    sr_ib_rseg_t **dir = SR_IB_LOAD(ep->rsegs);
    if (sr_unlikely(dir == NULL || region >= SR_IB_RSEG_MAX))
        return NULL;
    sr_ib_rseg_t *chunk = SR_IB_LOAD(dir[region / SR_IB_RSEG_CHUNK]);
    return chunk ? &chunk[region % SR_IB_RSEG_CHUNK] : NULL;
}

/* Where (region, roff) of the peer is for our rail `rail`: 0, or the status
 * of a segment that is not usable (never unpacked, released, or found gone:
 * SYMRAIL_ERR_STALE). */
static inline symrail_status_t sr_ib_remote(sr_tl_ep_t *ep, int rail, uint32_t region,
                                            uint64_t roff, uint64_t *raddr_p, uint32_t *rkey_p)
{
    if (sr_likely(region < SR_TL_REGION_SEG0)) {
        *raddr_p = ep->raddr[region] + roff;
        *rkey_p = ep->rkey[rail][region];
        return SYMRAIL_OK;
    }
    sr_ib_rseg_t *rs = sr_ib_rseg(ep, region);
    int state = rs ? SR_IB_LOAD(rs->state) : SR_IB_RSEG_FREE;
    if (sr_unlikely(state != SR_IB_RSEG_LIVE))
        return state == SR_IB_RSEG_DEAD ? SYMRAIL_ERR_STALE : SYMRAIL_ERR_INVALID;
    *raddr_p = rs->raddr + roff;
    *rkey_p = rs->rkey[rail];
    return SYMRAIL_OK;
}

/* What the core is told of a lane (lane lock held).  One that the peer
 * broke by refusing a withdrawn rkey is the peer's doing, not the lane's:
 * it stays offered while it is repaired (posts wait for it), so that a
 * stale descriptor does not take every lane from the traffic around it,
 * and its repair is not held against it. */
static inline uint32_t sr_ib_lane_weight(const sr_ib_lane_t *lane)
{
    return lane->down && !lane->refused ? 0 : lane->rail->weight;
}

/* seg.c */
symrail_status_t sr_ib_segs_init(sr_tl_ctx_t *ctx);
symrail_status_t sr_ib_seg_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem);
symrail_status_t sr_ib_mem_dereg(sr_tl_ctx_t *ctx, uint32_t region);
symrail_status_t sr_ib_mkey_pack(sr_tl_ctx_t *ctx, uint32_t region, void *buf, size_t *len_p);
symrail_status_t sr_ib_rkey_unpack(sr_tl_ep_t *ep, uint32_t rkey, const void *buf, size_t len);
void sr_ib_rkey_release(sr_tl_ep_t *ep, uint32_t rkey);
/* The status a failed work request of op reports (lane lock held): a
 * segment's rkey refused by the peer is gone for good (SYMRAIL_ERR_STALE). */
symrail_status_t sr_ib_fail_status(sr_tl_ep_t *ep, sr_ib_op_t *op, enum ibv_wc_status wst);
void sr_ib_segs_fini(sr_tl_ctx_t *ctx);
void sr_ib_rsegs_free(sr_tl_ep_t *ep);

#endif
