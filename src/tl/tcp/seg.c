/*
 * TCP transport: segments.  The owner's table of registered segments, which
 * the target side reads as it applies requests; their key blobs; and each
 * endpoint's table of the peer's keys that the core unpacked, which the ops
 * read.
 *
 * The owner.  A request names a segment by the owner's region id and the
 * generation it was registered with (frame.h); the target looks both up
 * before it touches memory and answers a mismatch STALE, without touching
 * anything and without closing the connection (it is no lane failure).
 * Slots live in chunks that never move: a fixed array of chunk pointers,
 * each chunk allocated on first use and kept until fini, so that growing
 * the table never moves a slot the target is reading.  mem_reg fills a free
 * slot and publishes it by its key (release); it takes no lock the target
 * holds, so registering costs the same while traffic flows.  mem_dereg
 * clears the key under io_lock, which the target holds while it applies a
 * request: once it has the lock, no request is being applied, and none that
 * comes later finds the segment.  Two things outlive one pass of the target
 * over a connection and are put right there: a put whose payload is still
 * arriving is read on into nothing and answered STALE (what it wrote before
 * mem_dereg was called stays written), and get data queued for sending but
 * not sent yet is replaced by a STALE answer (or, when its header is on its
 * way already, copied, so that the reply no longer reads the memory).
 *
 * The importer.  Keys are numbered by the importer's core (2 .. 65535); the
 * ops find them in chunks that never move either, published the same way.
 * A key blob carries the owner process's random instance: a blob of a
 * process that has restarted is refused at unpack, whatever its ids.
 */
#include "config.h"
#include "tl/tcp/tcp.h"

/* The chunk at *chunk_p, allocated (n entries of `size` bytes, zeroed) and
 * published on first use; seg_lock held.  NULL when out of memory. */
static void *sr_tcp_chunk(void **chunk_p, size_t n, size_t size)
{
    void *chunk = *chunk_p;
    if (chunk == NULL && (chunk = calloc(n, size)) != NULL)
        __atomic_store_n(chunk_p, chunk, __ATOMIC_RELEASE);
    return chunk;
}

static sr_tcp_seg_t *sr_tcp_seg_slot(sr_tl_ctx_t *ctx, uint32_t region)
{
    sr_tcp_seg_t *chunk = __atomic_load_n(&ctx->segs[region / SR_TCP_SEG_CHUNK], __ATOMIC_ACQUIRE);
    return chunk ? &chunk[region % SR_TCP_SEG_CHUNK] : NULL;
}

symrail_status_t sr_tcp_mem_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem)
{
    if (region < SR_TL_REGION_SEG0) {
        pthread_mutex_lock(&ctx->io_lock);
        ctx->base[region] = mem->addr;
        ctx->rlen[region] = mem->len;
        if (region >= ctx->nregions)
            ctx->nregions = region + 1;
        pthread_mutex_unlock(&ctx->io_lock);
        return SYMRAIL_OK;
    }
    if (region >= SR_TCP_REGION_MAX) {
        sr_error("tcp: segment id %u over the limit of %u segments", region, SR_TCP_REGION_MAX);
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    symrail_status_t st = SYMRAIL_OK;
    pthread_mutex_lock(&ctx->seg_lock);
    sr_tcp_seg_t *chunk = sr_tcp_chunk((void **)&ctx->segs[region / SR_TCP_SEG_CHUNK],
                                       SR_TCP_SEG_CHUNK, sizeof(sr_tcp_seg_t));
    sr_tcp_seg_t *s = chunk ? &chunk[region % SR_TCP_SEG_CHUNK] : NULL;
    if (s == NULL) {
        st = SYMRAIL_ERR_NOMEM;
    } else if (__atomic_load_n(&s->key, __ATOMIC_RELAXED) != 0) {
        sr_error("tcp: segment id %u registered twice", region);
        st = SYMRAIL_ERR_STATE;
    } else {
        /* The key last: whoever sees it sees the rest. */
        s->base = mem->addr;
        s->len = mem->len;
        __atomic_store_n(&s->key, SR_TCP_LIVE | mem->generation, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx->seg_lock);
    return st;
}

/* Get data of segment [lo, hi) queued on target connection c, not sent yet:
 * a STALE answer instead, or a copy where the header is on its way; -1 when
 * that fails (the connection is closed then).  io_lock held. */
static int sr_tcp_seg_unqueue(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, uintptr_t lo,
                              uintptr_t hi)
{
    for (sr_tcp_tx_t *tx = c->tx_head; tx; tx = tx->next) {
        uintptr_t at = (uintptr_t)tx->data;
        if (tx->kind != SR_TCP_TX_POOL || tx->dlen == 0 || at < lo || at >= hi)
            continue;
        sr_tcp_txbuf_t *b = (sr_tcp_txbuf_t *)(void *)tx;
        sr_tcp_frame_t f;
        if (tx->sent == 0 &&
            sr_tcp_frame_decode(tx->hdr, SR_TCP_AT_INITIATOR, &f) == NULL &&
            f.op == SR_TCP_OP_GET_REPLY) {
            f.sub = SR_TCP_ST_STALE;
            f.plen = 0;
            sr_tcp_frame_encode(&f, tx->hdr);
            c->tx_bytes -= tx->dlen;
            tx->dlen = 0;
            tx->data = NULL;
            continue;
        }
        if ((b->copy = malloc(tx->dlen)) == NULL) {
            sr_error("tcp: out of memory for get data of a segment that goes: connection "
                     "from PE %d closed", c->pe);
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_NOMEM);
            return -1;
        }
        sr_copy(b->copy, tx->data, tx->dlen);
        tx->data = b->copy;
    }
    return 0;
}

symrail_status_t sr_tcp_mem_dereg(sr_tl_ctx_t *ctx, uint32_t region)
{
    sr_tcp_seg_t *s = region >= SR_TL_REGION_SEG0 && region < SR_TCP_REGION_MAX
                          ? sr_tcp_seg_slot(ctx, region) : NULL;
    if (s == NULL || __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == 0)
        return SYMRAIL_ERR_INVALID;
    /* Waits for the request being applied now, if any (one pass of the
     * target over one connection, bounded by SR_TCP_IO_BUDGET). */
    sr_tcp_io_lock_soon(ctx);
    __atomic_store_n(&s->key, 0, __ATOMIC_RELEASE);
    uintptr_t lo = (uintptr_t)s->base, hi = lo + s->len;
    for (sr_tcp_conn_t *c = ctx->conns; c; c = c->next) {
        if (c->state != SR_TCP_UP)
            continue;
        if (c->rx_state == SR_TCP_RX_PAYLOAD && c->cur.op == SR_TCP_OP_PUT &&
            c->cur.region == region && !c->rx_discard) {
            c->rx_discard = 1;
            c->rx_stale = 1;
        }
        sr_tcp_seg_unqueue(ctx, c, lo, hi);
    }
    pthread_mutex_unlock(&ctx->io_lock);
    return SYMRAIL_OK;
}

int sr_tcp_seg_find(sr_tl_ctx_t *ctx, uint32_t region, uint32_t generation, char **base_p,
                    uint64_t *len_p)
{
    const sr_tcp_seg_t *s = region < SR_TCP_REGION_MAX ? sr_tcp_seg_slot(ctx, region) : NULL;
    if (s == NULL || __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) != (SR_TCP_LIVE | generation))
        return 0;
    *base_p = s->base;
    *len_p = s->len;
    return 1;
}

symrail_status_t sr_tcp_mkey_pack(sr_tl_ctx_t *ctx, uint32_t region, void *buf, size_t *len_p)
{
    const sr_tcp_seg_t *s = region >= SR_TL_REGION_SEG0 && region < SR_TCP_REGION_MAX
                                ? sr_tcp_seg_slot(ctx, region) : NULL;
    uint64_t key = s ? __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) : 0;
    if (key == 0)
        return SYMRAIL_ERR_INVALID;
    if (*len_p < SR_TCP_MKEY_LEN)
        return SYMRAIL_ERR_TRUNCATED;
    sr_tcp_mkey_t k = { .region = region, .generation = (uint32_t)key, .len = s->len,
                        .instance = ctx->instance };
    sr_tcp_mkey_encode(&k, buf);
    *len_p = SR_TCP_MKEY_LEN;
    return SYMRAIL_OK;
}

static sr_tcp_rkey_t *sr_tcp_rkey_slot(const sr_tl_ep_t *ep, uint32_t rkey)
{
    sr_tcp_rkey_t *chunk = __atomic_load_n(&ep->rkeys[rkey / SR_TCP_RKEY_CHUNK], __ATOMIC_ACQUIRE);
    return chunk ? &chunk[rkey % SR_TCP_RKEY_CHUNK] : NULL;
}

symrail_status_t sr_tcp_rkey_unpack(sr_tl_ep_t *ep, uint32_t rkey, const void *buf, size_t len)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    sr_tcp_mkey_t k;
    if (rkey < SR_TL_REGION_SEG0 || rkey >= SR_TCP_RKEY_CHUNK * SR_TCP_RKEY_NCHUNKS)
        return SYMRAIL_ERR_INVALID;
    const char *why = sr_tcp_mkey_decode(buf, len, &k);
    if (why) {
        sr_error("tcp: a segment key for PE %d is malformed: %s", ep->pe, why);
        return SYMRAIL_ERR_INVALID;
    }
    if (k.instance != ep->instance) {
        sr_warn("tcp: a segment key of PE %d comes from another process (it restarted "
                "since): stale", ep->pe);
        return SYMRAIL_ERR_STALE;
    }
    symrail_status_t st = SYMRAIL_OK;
    pthread_mutex_lock(&ctx->seg_lock);
    sr_tcp_rkey_t *chunk = sr_tcp_chunk((void **)&ep->rkeys[rkey / SR_TCP_RKEY_CHUNK],
                                        SR_TCP_RKEY_CHUNK, sizeof(sr_tcp_rkey_t));
    sr_tcp_rkey_t *e = chunk ? &chunk[rkey % SR_TCP_RKEY_CHUNK] : NULL;
    if (e == NULL) {
        st = SYMRAIL_ERR_NOMEM;
    } else if (__atomic_load_n(&e->key, __ATOMIC_RELAXED) != 0) {
        st = SYMRAIL_ERR_STATE;
    } else {
        e->region = k.region;
        e->len = k.len;
        __atomic_store_n(&e->logged, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->key, SR_TCP_LIVE | k.generation, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx->seg_lock);
    return st;
}

void sr_tcp_rkey_release(sr_tl_ep_t *ep, uint32_t rkey)
{
    sr_tcp_rkey_t *e = rkey < SR_TCP_RKEY_CHUNK * SR_TCP_RKEY_NCHUNKS ? sr_tcp_rkey_slot(ep, rkey)
                                                                      : NULL;
    if (e)
        __atomic_store_n(&e->key, 0, __ATOMIC_RELEASE);
}

const sr_tcp_rkey_t *sr_tcp_rkey_find(const sr_tl_ep_t *ep, uint32_t rkey)
{
    const sr_tcp_rkey_t *e = rkey < SR_TCP_RKEY_CHUNK * SR_TCP_RKEY_NCHUNKS
                                 ? sr_tcp_rkey_slot(ep, rkey) : NULL;
    return e && __atomic_load_n(&e->key, __ATOMIC_ACQUIRE) ? e : NULL;
}

void sr_tcp_rkey_stale(sr_tl_ep_t *ep, uint32_t rkey)
{
    sr_tcp_rkey_t *e = sr_tcp_rkey_slot(ep, rkey);
    if (e && __atomic_exchange_n(&e->logged, 1, __ATOMIC_RELAXED) == 0)
        sr_warn("tcp: PE %d's segment %u (generation %u) behind key %u is gone "
                "(deregistered, or the id registered again): its accesses fail as stale",
                ep->pe, e->region, (uint32_t)__atomic_load_n(&e->key, __ATOMIC_RELAXED), rkey);
}

symrail_status_t sr_tcp_seg_self(sr_tl_ep_t *ep, uint32_t rkey, const sr_tcp_rkey_t *k,
                                 uint64_t off, void *buf, size_t len, int is_put)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    char *base;
    uint64_t rlen;
    symrail_status_t st = SYMRAIL_OK;
    /* io_lock: mem_dereg waits for the copy as it waits for the target's. */
    sr_tcp_io_lock_soon(ctx);
    if (!sr_tcp_seg_find(ctx, k->region, (uint32_t)__atomic_load_n(&k->key, __ATOMIC_RELAXED),
                         &base, &rlen))
        st = SYMRAIL_ERR_STALE;
    else if (!sr_tcp_span_ok(rlen, off, len))
        st = SYMRAIL_ERR_INVALID;
    else if (is_put)
        sr_copy(base + off, buf, len);
    else
        sr_copy(buf, base + off, len);
    pthread_mutex_unlock(&ctx->io_lock);
    if (st == SYMRAIL_ERR_STALE)
        sr_tcp_rkey_stale(ep, rkey);
    return st;
}

void sr_tcp_seg_fini(sr_tl_ctx_t *ctx)
{
    for (size_t i = 0; i < SR_TCP_SEG_NCHUNKS; i++)
        free(ctx->segs[i]);
}

void sr_tcp_rkeys_free(sr_tl_ep_t *ep)
{
    for (size_t i = 0; i < SR_TCP_RKEY_NCHUNKS; i++)
        free(ep->rkeys[i]);
}
