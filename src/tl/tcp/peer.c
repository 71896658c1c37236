/*
 * TCP transport: connected peers, processes of other jobs (tl.h, "Connected
 * peers").  Such a peer cannot know this job's key, so each pair has its
 * own: SHA-256 of the exporter's peer secret and the connection id, which
 * both ends can compute and nobody else can.  The connection id also names
 * the pair in every HELLO (flag SR_TCP_HELLO_PEER), so that the lanes of one
 * peer, and the lanes back, meet at one PE number at each end.
 *
 * The table of numbers (ctx->cpeers) is read and changed under io_lock: by
 * the target side's handshakes (thread or progress) and by connect and
 * disconnect (the application).
 */
#include "config.h"
#include "tl/tcp/tcp.h"

static symrail_status_t sr_tcp_pair_key(const uint8_t *secret, uint32_t conn_id,
                                        uint8_t key_p[SR_TCP_KEY_LEN])
{
    uint8_t m[SR_TL_PEER_SECRET_LEN + 4];
    memcpy(m, secret, SR_TL_PEER_SECRET_LEN);
    for (int i = 0; i < 4; i++)
        m[SR_TL_PEER_SECRET_LEN + i] = (uint8_t)(conn_id >> (8 * i));
    symrail_status_t st = sr_tcp_job_key("", "peer", m, sizeof(m), key_p);
    explicit_bzero(m, sizeof(m));
    return st;
}

/* The number that conn_id has; -1 when none. */
static int sr_tcp_peer_find(sr_tl_ctx_t *ctx, uint32_t conn_id)
{
    for (int i = 0; i < ctx->params.peers_max; i++)
        if (ctx->cpeers[i].conn_id == conn_id)
            return ctx->params.n_pes + i;
    return -1;
}

int sr_tcp_peer_hello(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const sr_tcp_hello_t *h,
                      const char **why_p)
{
    if (ctx->cpeers == NULL || ctx->params.peer_secret == NULL) {
        *why_p = "a process of another job, and this one takes no connected peers "
                 "(SYMRAIL_CONNECT_MAX=0)";
        return -1;
    }
    int pe = sr_tcp_peer_find(ctx, h->src_pe);
    if (pe >= 0 && ctx->cpeers[pe - ctx->params.n_pes].gone) {
        *why_p = "a connected peer that was disconnected";
        return -1;
    }
    if (pe >= 0) {
        memcpy(c->hs_key, ctx->cpeers[pe - ctx->params.n_pes].key, SR_TCP_KEY_LEN);
        return 0;
    }
    /* A new peer: it must know our secret, which the AUTH shows. */
    if (sr_tcp_pair_key(ctx->params.peer_secret, h->src_pe, c->hs_key) != SYMRAIL_OK) {
        *why_p = "libcrypto failed to compute the key";
        return -1;
    }
    return 0;
}

int sr_tcp_peer_authed(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    uint32_t id = c->peer_id;
    int pe = sr_tcp_peer_find(ctx, id);
    if (pe >= 0)
        return pe;
    for (int i = 0; i < ctx->params.peers_max; i++) {
        sr_tcp_cpeer_t *p = &ctx->cpeers[i];
        if (p->conn_id == 0 && !p->gone) {
            p->conn_id = id;
            memcpy(p->key, c->hs_key, SR_TCP_KEY_LEN);
            sr_info("tcp: a process of another job connects (%s): PE %d", c->name,
                    ctx->params.n_pes + i);
            return ctx->params.n_pes + i;
        }
    }
    sr_warn("tcp: connection from %s refused: all %d numbers for connected peers are taken "
            "(SYMRAIL_CONNECT_MAX)", c->name, ctx->params.peers_max);
    return -1;
}

symrail_status_t sr_tcp_peer_claim(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                   sr_tcp_addr_t *a)
{
    sr_tl_peer_addr_t pa;
    if (ctx->cpeers == NULL || pe >= ctx->n_all || len != sizeof(pa) + sizeof(*a))
        return SYMRAIL_ERR_INVALID;
    memcpy(&pa, addr, sizeof(pa));
    memcpy(a, (const char *)addr + sizeof(pa), sizeof(*a));
    if (pa.conn_id == 0 || a->magic != SR_TCP_ADDR_MAGIC || a->naddrs < 1 ||
        a->naddrs > SR_TCP_MAX_ADDRS || a->nlanes < 1)
        return SYMRAIL_ERR_INVALID;
    uint8_t key[SR_TCP_KEY_LEN];
    symrail_status_t st = sr_tcp_pair_key(pa.secret, pa.conn_id, key);
    explicit_bzero(&pa.secret, sizeof(pa.secret));
    if (st != SYMRAIL_OK) {
        sr_error("tcp: libcrypto failed to compute the key of a connected peer");
        return st;
    }
    pthread_mutex_lock(&ctx->io_lock);
    sr_tcp_cpeer_t *p = &ctx->cpeers[pe - ctx->params.n_pes];
    int held = sr_tcp_peer_find(ctx, pa.conn_id);
    if (held >= 0 && held != pe) {
        st = SYMRAIL_ERR_INVALID;  /* the core asks for the number we gave it */
    } else if (held < 0 && (p->conn_id != 0 || p->gone)) {
        st = SYMRAIL_ERR_AGAIN;    /* taken by a peer that connected meanwhile */
    } else {
        p->conn_id = pa.conn_id;
        p->remote_pe = pa.pe;
        memcpy(p->key, key, sizeof(key));
    }
    pthread_mutex_unlock(&ctx->io_lock);
    explicit_bzero(key, sizeof(key));
    return st;
}

const uint8_t *sr_tcp_peer_key(sr_tl_ctx_t *ctx, int pe)
{
    if (pe < ctx->params.n_pes)
        return ctx->key;
    return ctx->cpeers[pe - ctx->params.n_pes].key;  /* set before any dial */
}

/* Closes what `c` carries after a goodbye, so the peer takes it for a
 * departure, not a failure.  Held: io_lock or the lane's lock. */
static void sr_tcp_peer_close(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    if (c->state == SR_TCP_UP && c->fd >= 0 && c->tx_head == NULL) {
        uint8_t hdr[SR_TCP_HDR_LEN];
        sr_tcp_frame_t f = { .op = SR_TCP_OP_BYE };
        sr_tcp_frame_encode(&f, hdr);
        (void)!send(c->fd, hdr, sizeof(hdr), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_PEER_GONE);
}

void sr_tcp_peer_disconnect(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    for (int l = 0; l < ep->nlanes; l++) {
        sr_tcp_conn_t *c = ep->lanes[l];
        if (c == NULL)
            continue;
        sr_tcp_lock(c);
        sr_tcp_peer_close(ctx, c);
        sr_tcp_unlock(c);
    }
    pthread_mutex_lock(&ctx->io_lock);
    __atomic_store_n(&ctx->bye[ep->pe], 1, __ATOMIC_RELAXED);
    ctx->cpeers[ep->pe - ctx->params.n_pes].gone = 1;
    for (sr_tcp_conn_t *c = ctx->conns; c; c = c->next)
        if (c->pe == ep->pe)
            sr_tcp_peer_close(ctx, c);
    pthread_mutex_unlock(&ctx->io_lock);
}
