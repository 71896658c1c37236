/*
 * TCP transport: connection management: dialing, the authenticated handshake (both
 * sides), accepting, goodbyes, the job key.
 */
#include "config.h"
#include "tl/tcp/tcp.h"

static symrail_status_t sr_tcp_random(void *buf, size_t len)
{
    if (sr_crypto_random(buf, len) != SYMRAIL_OK) {
        sr_error("tcp: libcrypto has no random bytes for a handshake nonce");
        return SYMRAIL_ERR_SYSTEM;
    }
    return SYMRAIL_OK;
}

static symrail_status_t sr_tcp_key_status(symrail_status_t st)
{
    if (st != SYMRAIL_OK)
        sr_error("tcp: libcrypto failed to compute the job key");
    return st;
}

/* Where the launcher gives no job key: one derived from what the job's
 * processes see alike, weaker, and said so. */
static symrail_status_t sr_tcp_fallback_key(sr_tl_ctx_t *ctx, uint8_t key_p[SR_TCP_KEY_LEN])
{
    symrail_status_t st;
    static const char *const shared[] = { "OMPI_MCA_orte_precondition_transports",
                                          "OMPI_MCA_opal_precondition_transports", NULL };
    const char *job = ctx->params.job ? ctx->params.job : "";
    const char *name = NULL, *val = NULL;
    for (int i = 0; shared[i] && val == NULL; i++) {
        name = shared[i];
        val = getenv(name);
        if (val && !*val)
            val = NULL;
    }
    char material[512];
    unsigned uid = (unsigned)getuid();
    snprintf(material, sizeof(material), "uid %u; %s", uid, val ? val : "");
    st = sr_tcp_key_status(sr_tcp_job_key(job, "derived", material, strlen(material), key_p));
    if (st != SYMRAIL_OK || ctx->params.for_peers)
        return st;  /* only connected peers, with keys of their own, come */
    if (val)
        sr_warn("tcp: SYMRAIL_JOB_SECRET is not set: connections are authenticated with a key "
                "derived from job %s and the launcher's job key (%s); a process that can read "
                "this job's environment can connect", job, name);
    else
        sr_warn("tcp: SYMRAIL_JOB_SECRET is not set and the launcher gives no job key: "
                "connections are authenticated with a key derived from job %s and user id %u "
                "only, which others may guess; set SYMRAIL_JOB_SECRET", job, uid);
    return SYMRAIL_OK;
}

symrail_status_t sr_tcp_derive_key(sr_tl_ctx_t *ctx)
{
    const char *secret = ctx->params.env->job_secret;
    const char *job = ctx->params.job ? ctx->params.job : "";
    if (getenv("SYMRAIL_JOB_SECRET") && !*secret) {
        /* Most likely a launcher or script meant to pass one and failed:
         * falling back on a guessable key would hide that. */
        sr_error("tcp: SYMRAIL_JOB_SECRET is set but empty; set it to the job's secret or "
                 "unset it");
        return SYMRAIL_ERR_INVALID;
    }
    ctx->key_ready = 1;  /* before the thread starts: no lock yet */
    if (secret && *secret) {
        symrail_status_t st = sr_tcp_key_status(sr_tcp_job_key(job, "secret", secret,
                                                               strlen(secret), ctx->key));
        if (st == SYMRAIL_OK && !ctx->params.for_peers)
            sr_info("tcp: job key from SYMRAIL_JOB_SECRET (symrun's, or set by hand)");
        return st;
    }
    if (ctx->params.job_key_late) {
        /* The core hands it over after the exchange (sr_tcp_job_key_set). */
        ctx->key_late = 1;
        ctx->key_ready = 0;
        return SYMRAIL_OK;
    }
    return sr_tcp_fallback_key(ctx, ctx->key);
}

symrail_status_t sr_tcp_job_key_set(sr_tl_ctx_t *ctx, const uint8_t *key, const char *source)
{
    uint8_t k[SR_TCP_KEY_LEN];
    const char *job = ctx->params.job ? ctx->params.job : "";
    symrail_status_t st;
    if (key != NULL) {
        st = sr_tcp_key_status(sr_tcp_job_key(job, "launcher", key, SR_TL_JOB_KEY_LEN, k));
        if (st == SYMRAIL_OK)
            sr_info("tcp: job key %s", source);
    } else {
        st = sr_tcp_fallback_key(ctx, k);
    }
    if (st != SYMRAIL_OK)
        return st;
    sr_tcp_io_lock_soon(ctx);
    memcpy(ctx->key, k, sizeof(k));
    ctx->key_ready = 1;
    /* The PEs that dialled while we were still in the exchange get their
     * challenge now. */
    for (sr_tcp_conn_t *c = ctx->conns; c; c = c->next) {
        if (c->state != SR_TCP_HS_KEY)
            continue;
        uint8_t hello[SR_TCP_HELLO_LEN];
        memcpy(hello, c->hello, sizeof(hello));
        c->state = SR_TCP_HS_HELLO;
        c->throttled = 0;
        c->deadline_ns = sr_time_ns() + SR_TCP_HS_TIMEOUT_NS;
        if (sr_tcp_on_handshake(ctx, c, hello) == 0)
            sr_tcp_conn_event(ctx, c, EPOLLIN);  /* reads what came meanwhile, arms */
    }
    pthread_mutex_unlock(&ctx->io_lock);
    return SYMRAIL_OK;
}

/* Finalize: tell every peer we leave on purpose, then wait a little for
 * their goodbyes, so that nobody closes on unread data (which resets the
 * connection and could drop the goodbye). */
/* Sends what `c` still has queued, then BYE, and closes our direction;
 * 0 when the connection is worth waiting on for the peer's goodbye. */
static int sr_tcp_goodbye_one(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const uint8_t *bye,
                              uint64_t end)
{
    if (c->state != SR_TCP_UP || c->fd < 0)
        return -1;
    /* Replies still queued (the last atomic of the final barrier) go first:
     * a peer may wait for them. */
    while (c->tx_head && c->state == SR_TCP_UP && sr_time_ns() < end) {
        struct pollfd p = { .fd = c->fd, .events = POLLOUT };
        if (poll(&p, 1, 10) > 0)
            sr_tcp_flush(ctx, c);
    }
    if (c->state != SR_TCP_UP)
        return -1;
    /* Only when nothing is half sent: a goodbye inside a frame is garbage. */
    if (c->tx_head == NULL)
        (void)!send(c->fd, bye, SR_TCP_HDR_LEN, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(c->fd, SHUT_WR);
    return 0;
}

void sr_tcp_goodbye(sr_tl_ctx_t *ctx)
{
    uint8_t hdr[SR_TCP_HDR_LEN], junk[4096];
    sr_tcp_frame_t f = { .op = SR_TCP_OP_BYE };
    sr_tcp_frame_encode(&f, hdr);
    struct pollfd pfd[256];
    int npfd = 0;
    uint64_t end = sr_time_ns() + SR_TCP_LINGER_MS * 1000000ull;
    sr_tcp_conn_t *lists[2] = { ctx->conns, ctx->out_conns };
    for (int side = 0; side < 2; side++) {
        for (sr_tcp_conn_t *c = lists[side]; c; c = c->next)
            if (sr_tcp_goodbye_one(ctx, c, hdr, end) == 0 && npfd < 256)
                pfd[npfd++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
    }
    int open = npfd;
    while (open > 0) {
        uint64_t now = sr_time_ns();
        if (now >= end || poll(pfd, (nfds_t)npfd, (int)((end - now) / 1000000 + 1)) <= 0)
            break;
        for (int i = 0; i < npfd; i++) {
            if (pfd[i].fd < 0 || !pfd[i].revents)
                continue;
            ssize_t r = recv(pfd[i].fd, junk, sizeof(junk), MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                pfd[i].fd = -1;
                open--;
            }
        }
    }
}

static symrail_status_t sr_tcp_io_all(int fd, int is_send, void *buf, size_t len,
                                      uint64_t deadline, const char *peer, int pe)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = is_send ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(fd, p, len, MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            len -= (size_t)r;
            continue;
        }
        if (r == 0) {
            sr_error("tcp: PE %d at %s closed the connection during the handshake (is "
                     "SYMRAIL_JOB_SECRET the same on every PE?)", pe, peer);
            return SYMRAIL_ERR_PEER_GONE;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            int err = errno;
            sr_error("tcp: handshake with PE %d at %s failed: %s", pe, peer, strerror(err));
            return sr_status_from_errno(err);
        }
        uint64_t now = sr_time_ns();
        struct pollfd pfd = { .fd = fd, .events = is_send ? POLLOUT : POLLIN };
        if (now >= deadline || poll(&pfd, 1, (int)((deadline - now) / 1000000 + 1)) == 0) {
            sr_error("tcp: handshake with PE %d at %s timed out", pe, peer);
            return SYMRAIL_ERR_TIMEOUT;
        }
    }
    return SYMRAIL_OK;
}

/* Dials `ip` and authenticates as lane `lane` of this PE to `pe`; the
 * socket stays non-blocking. */
static symrail_status_t sr_tcp_dial(sr_tl_ctx_t *ctx, int pe, int lane, const sr_tcp_ip_t *ip,
                                    int *fd_p, char *name, size_t name_len)
{
    symrail_status_t st;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = ip->ip,
                              .sin_port = ip->port };
    uint64_t deadline = sr_time_ns() + ctx->dial_ms * 1000000ull;
    sr_tcp_ipstr(ip->ip, ip->port, name, name_len);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int err = errno;
        sr_error("tcp: socket() failed: %s", strerror(err));
        return sr_status_from_errno(err);
    }
    sr_tcp_sockbuf(ctx, fd);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int err = errno;
        if (err == EINPROGRESS) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            socklen_t el = sizeof(err);
            int r = poll(&pfd, 1, (int)ctx->dial_ms);
            if (r == 0)
                err = ETIMEDOUT;
            else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
                err = errno;
        }
        if (err != 0) {
            sr_warn("tcp: connecting to PE %d at %s failed: %s", pe, name, strerror(err));
            close(fd);
            return err == ETIMEDOUT ? SYMRAIL_ERR_TIMEOUT : SYMRAIL_ERR_PEER_GONE;
        }
    }
    sr_tcp_sockopts(ctx, fd);

    sr_tcp_hello_t h = { .src_pe = (uint32_t)ctx->params.my_pe, .dst_pe = (uint32_t)pe,
                         .lane = (uint32_t)lane, .n_pes = (uint32_t)ctx->params.n_pes };
    const uint8_t *key = sr_tcp_peer_key(ctx, pe);
    if (pe >= ctx->params.n_pes) {
        /* A connected peer: we are a PE of its job no more than it is of ours. */
        h.flags = SR_TCP_HELLO_PEER;
        h.src_pe = ctx->cpeers[pe - ctx->params.n_pes].conn_id;
        h.dst_pe = ctx->cpeers[pe - ctx->params.n_pes].remote_pe;
        h.n_pes = 0;
    }
    uint8_t hello[SR_TCP_HELLO_LEN], chal[SR_TCP_CHAL_LEN], auth[SR_TCP_AUTH_LEN];
    uint8_t nonce_s[SR_TCP_NONCE_LEN], mac_s[SR_TCP_MAC_LEN], mac[SR_TCP_MAC_LEN];
    st = sr_tcp_random(h.nonce, sizeof(h.nonce));
    if (st != SYMRAIL_OK)
        goto err_fd;
    sr_tcp_hello_encode(&h, hello);
    st = sr_tcp_io_all(fd, 1, hello, sizeof(hello), deadline, name, pe);
    if (st == SYMRAIL_OK)
        st = sr_tcp_io_all(fd, 0, chal, sizeof(chal), deadline, name, pe);
    if (st != SYMRAIL_OK)
        goto err_fd;
    const char *why = sr_tcp_chal_decode(chal, nonce_s, mac_s);
    if (why == NULL && sr_tcp_hs_mac(key, 'S', hello, nonce_s, mac) != SYMRAIL_OK)
        why = "libcrypto failed to compute the MAC";
    else if (why == NULL && !sr_tcp_mac_equal(mac, mac_s))
        why = "it does not know the job key (is SYMRAIL_JOB_SECRET the same on every PE?)";
    if (why) {
        sr_error("tcp: PE %d at %s failed to authenticate: %s", pe, name, why);
        st = SYMRAIL_ERR_TRANSPORT;
        goto err_fd;
    }
    if (sr_tcp_hs_mac(key, 'C', hello, nonce_s, mac) != SYMRAIL_OK) {
        sr_error("tcp: libcrypto failed to compute the handshake MAC for PE %d", pe);
        st = SYMRAIL_ERR_SYSTEM;
        goto err_fd;
    }
    sr_tcp_auth_encode(mac, auth);
    st = sr_tcp_io_all(fd, 1, auth, sizeof(auth), deadline, name, pe);
    if (st != SYMRAIL_OK)
        goto err_fd;
    *fd_p = fd;
    return SYMRAIL_OK;

err_fd:
    close(fd);
    return st;
}

symrail_status_t sr_tcp_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                sr_tl_ep_t **ep_p)
{
    sr_tcp_addr_t a;
    int order[SR_TCP_MAX_ADDRS], npref, nup = 0;
    if (pe >= ctx->params.n_pes) {
        symrail_status_t cst = sr_tcp_peer_claim(ctx, pe, addr, len, &a);
        if (cst != SYMRAIL_OK)
            return cst;
    } else {
        if (!sr_tcp_reachable(ctx, pe, addr, len))
            return SYMRAIL_ERR_INVALID;
        memcpy(&a, addr, sizeof(a));
    }
    sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return SYMRAIL_ERR_NOMEM;
    ep->ctx = ctx;
    ep->pe = pe;
    ep->pid = a.pid;
    ep->instance = a.instance;
    ep->local = ctx->params.is_local[pe];
    ep->self = pe == ctx->params.my_pe;
    if (ep->self) {
        ep->nlanes = 1;
        ctx->eps[pe] = ep;
        *ep_p = ep;
        return SYMRAIL_OK;
    }
    int n = sr_tcp_rank_addrs(ctx, pe, &a, order, &npref);
    if (n == 0) {
        sr_error("tcp: PE %d publishes no address this PE can use", pe);
        free(ep);
        return SYMRAIL_ERR_NO_TRANSPORT;
    }
    ep->nlanes = (int)(ctx->nlanes < a.nlanes ? ctx->nlanes : a.nlanes);
    symrail_status_t st = SYMRAIL_ERR_NO_TRANSPORT;
    for (int l = 0; l < ep->nlanes && st != SYMRAIL_ERR_TRANSPORT; l++) {
        st = SYMRAIL_ERR_NO_TRANSPORT;
        char name[SR_TCP_NAME_LEN];
        int fd = -1;
        /* Spread lanes over the best addresses; fall back on the others. */
        for (int k = 0; k < n && st != SYMRAIL_OK; k++) {
            int i = k < npref ? order[(l + k) % npref] : order[k];
            st = sr_tcp_dial(ctx, pe, l, &a.addrs[i], &fd, name, sizeof(name));
            if (st == SYMRAIL_ERR_TRANSPORT)
                break;  /* authentication: another address will not help */
        }
        if (st != SYMRAIL_OK)
            continue;
        sr_tcp_conn_t *c = sr_tcp_conn_new(ctx, fd, 1, name);
        if (c) {
            sr_tcp_lock(c);  /* progress may see it already */
            c->pe = pe;
            c->lane = l;
            c->ep = ep;
            __atomic_store_n(&c->state, SR_TCP_UP, __ATOMIC_RELAXED);
            sr_tcp_unlock(c);
            ep->lanes[l] = c;
            nup++;
        }
        if (c == NULL)
            close(fd);
        else
            sr_debug("tcp: lane %d to PE %d over %s", l, pe, name);
    }
    if (nup == 0) {
        sr_error("tcp: no connection to PE %d could be made", pe);
        free(ep);
        return st == SYMRAIL_ERR_TRANSPORT ? st : SYMRAIL_ERR_PEER_GONE;
    }
    if (nup < ep->nlanes)
        sr_warn("tcp: only %d of %d lanes to PE %d are up", nup, ep->nlanes, pe);
    __atomic_store_n(&ctx->eps[pe], ep, __ATOMIC_RELEASE);
    *ep_p = ep;
    return SYMRAIL_OK;
}

void sr_tcp_wireup_done(sr_tl_ctx_t *ctx)
{
    (void)ctx;
}

void sr_tcp_disconnect(sr_tl_ep_t *ep)
{
    /* Connections belong to the context and close at fini, after the
     * goodbyes; the endpoint goes with them.  A connected peer's close now. */
    if (ep->pe >= ep->ctx->params.n_pes)
        sr_tcp_peer_disconnect(ep);
}

/* Target side of the handshake, one message at a time; 0 while it goes on. */
int sr_tcp_on_handshake(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const uint8_t *msg)
{
    const char *why;
    if (c->state == SR_TCP_HS_HELLO) {
        sr_tcp_hello_t h;
        uint8_t mac[SR_TCP_MAC_LEN];
        why = sr_tcp_hello_decode(msg, (uint32_t)ctx->params.my_pe,
                                  (uint32_t)ctx->params.n_pes, &h);
        if (why == NULL && (h.flags & SR_TCP_HELLO_PEER))
            sr_tcp_peer_hello(ctx, c, &h, &why);
        else if (why == NULL && ctx->params.for_peers)
            why = "a PE of this job, which this TCP (for connected peers only) does not carry";
        else if (why == NULL && !ctx->key_ready) {
            /* A PE out of the exchange's fence before us: it waits for its
             * challenge until we have the key; nothing more is read. */
            memcpy(c->hello, msg, SR_TCP_HELLO_LEN);
            c->state = SR_TCP_HS_KEY;
            c->throttled = 1;
            return 0;
        }
        if (why == NULL && sr_tcp_random(c->nonce_s, sizeof(c->nonce_s)) != SYMRAIL_OK)
            why = "no random nonce";
        const uint8_t *key = (h.flags & SR_TCP_HELLO_PEER) ? c->hs_key : ctx->key;
        if (why == NULL && sr_tcp_hs_mac(key, 'S', msg, c->nonce_s, mac) != SYMRAIL_OK)
            why = "libcrypto failed to compute the MAC";
        if (why) {
            sr_warn("tcp: connection from %s rejected: %s", c->name, why);
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
            return -1;
        }
        memcpy(c->hello, msg, SR_TCP_HELLO_LEN);
        c->peer_id = (h.flags & SR_TCP_HELLO_PEER) ? h.src_pe : 0;
        c->pe = c->peer_id ? -1 : (int)h.src_pe;  /* numbered once authenticated */
        c->lane = (int)h.lane;
        sr_tcp_txbuf_t *b = sr_tcp_txbuf_get(ctx, c);
        if (b == NULL) {
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_NOMEM);
            return -1;
        }
        b->tx.hlen = SR_TCP_CHAL_LEN;
        sr_tcp_chal_encode(c->nonce_s, mac, b->tx.hdr);
        sr_tcp_enqueue(c, &b->tx);
        c->state = SR_TCP_HS_AUTH;
        return sr_tcp_flush(ctx, c) < 0 ? -1 : 0;
    }
    uint8_t mac_c[SR_TCP_MAC_LEN], want[SR_TCP_MAC_LEN];
    why = sr_tcp_auth_decode(msg, mac_c);
    if (why == NULL && sr_tcp_hs_mac(c->peer_id ? c->hs_key : ctx->key, 'C', c->hello,
                                     c->nonce_s, want) != SYMRAIL_OK)
        why = "libcrypto failed to compute the MAC";
    else if (why == NULL && !sr_tcp_mac_equal(mac_c, want))
        why = "wrong job key (a process of another job, or SYMRAIL_JOB_SECRET differs)";
    if (why) {
        sr_warn("tcp: connection from %s (claims PE %d) failed authentication: %s; closed",
                c->name, c->pe, why);
        c->pe = -1;
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
        return -1;
    }
    if (c->peer_id) {
        int pe = sr_tcp_peer_authed(ctx, c);
        if (pe < 0) {
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
            return -1;
        }
        c->pe = pe;
    }
    ctx->nhs--;
    c->state = SR_TCP_UP;
    c->deadline_ns = 0;
    sr_debug("tcp: lane %d from PE %d (%s) authenticated", c->lane, c->pe, c->name);
    return 0;
}

void sr_tcp_accept(sr_tl_ctx_t *ctx, sr_tcp_lsn_t *l)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof(sa);
        char name[SR_TCP_NAME_LEN];
        int fd = accept4(l->fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                sr_warn("tcp: accept failed: %m");
            return;
        }
        sr_tcp_ipstr(sa.sin_addr.s_addr, sa.sin_port, name, sizeof(name));
        if (ctx->nhs >= SR_TCP_MAX_HS) {
            sr_warn("tcp: %d connections are in their handshake already: %s refused",
                    ctx->nhs, name);
            close(fd);
            continue;
        }
        sr_tcp_sockopts(ctx, fd);
        sr_tcp_conn_t *c = sr_tcp_conn_new(ctx, fd, 0, name);
        if (c == NULL) {
            close(fd);
            continue;
        }
        c->state = SR_TCP_HS_HELLO;
        c->deadline_ns = sr_time_ns() + SR_TCP_HS_TIMEOUT_NS;
        ctx->nhs++;
    }
}

/* Handshakes that take too long; io_lock held. */
void sr_tcp_check_handshakes(sr_tl_ctx_t *ctx, uint64_t now)
{
    ctx->next_check_ns = now + SR_TCP_CHECK_NS;
    for (sr_tcp_conn_t *c = ctx->conns; c; c = c->next) {
        /* One held for our own key is not the peer's delay. */
        if (c->state != SR_TCP_DEAD && c->state != SR_TCP_UP && c->state != SR_TCP_HS_KEY &&
            now > c->deadline_ns) {
            sr_warn("tcp: connection from %s did not complete its handshake in %llu s: closed",
                    c->name, SR_TCP_HS_TIMEOUT_NS / 1000000000ull);
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TIMEOUT);
        }
    }
}
