/*
 * TCP transport: interfaces, listening sockets, the address blob and the choice of
 * a peer's address.
 */
#include "config.h"
#include "tl/tcp/tcp.h"
#include "util/strlist.h"

const char *sr_tcp_ipstr(uint32_t ip, uint16_t port, char *buf, size_t len)
{
    char a[INET_ADDRSTRLEN];
    struct in_addr in = { .s_addr = ip };
    inet_ntop(AF_INET, &in, a, sizeof(a));
    snprintf(buf, len, "%s:%u", a, (unsigned)ntohs(port));
    return buf;
}

/* Does entry `tok` (len bytes) of SYMRAIL_TCP_IF name interface `ifname` or
 * contain `ip`?  -1 when the entry is not valid. */
static int sr_tcp_if_entry_match(const char *tok, size_t len, const char *ifname, uint32_t ip)
{
    char buf[64];
    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    char *slash = strchr(buf, '/');
    if (slash == NULL)
        return ifname && strcmp(buf, ifname) == 0;
    *slash = '\0';
    char *end;
    long prefix = strtol(slash + 1, &end, 10);
    struct in_addr net;
    if (*end || end == slash + 1 || prefix < 0 || prefix > 32 || inet_pton(AF_INET, buf, &net) != 1)
        return -1;
    uint32_t mask = prefix == 0 ? 0 : htonl(~0u << (32 - prefix));
    return (ip & mask) == (net.s_addr & mask);
}

int sr_tcp_if_match(const char *filter, const char *ifname, uint32_t ip)
{
    const char *pos = filter, *item;
    size_t len;
    while (sr_list_next(&pos, &item, &len)) {
        int m = sr_tcp_if_entry_match(item, len, ifname, ip);
        if (m != 0)
            return m;
    }
    return 0;
}

int sr_tcp_if_valid(const char *filter)
{
    const char *pos = filter, *item;
    size_t len;
    while (sr_list_next(&pos, &item, &len))
        if (sr_tcp_if_entry_match(item, len, NULL, 0) < 0)
            return 0;
    return 1;
}

static symrail_status_t sr_tcp_listen_one(sr_tl_ctx_t *ctx, const sr_tcp_ip_t *ip)
{
    char name[SR_TCP_NAME_LEN];
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = ip->ip };
    socklen_t sl = sizeof(sa);
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int err = errno;
        sr_error("tcp: socket() failed: %s", strerror(err));
        return sr_status_from_errno(err);
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sr_tcp_sockbuf(ctx, fd);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        int err = errno;
        sr_error("tcp: cannot listen on %s: %s", sr_tcp_ipstr(ip->ip, 0, name, sizeof(name)),
                 strerror(err));
        close(fd);
        return sr_status_from_errno(err);
    }
    sr_tcp_lsn_t *l = &ctx->lsn[ctx->naddrs++];
    l->kind = SR_TCP_K_LSN;
    l->fd = fd;
    l->addr = *ip;
    l->addr.port = sa.sin_port;
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = l };
    if (epoll_ctl(ctx->ep_in, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int err = errno;
        sr_error("tcp: epoll_ctl on a listening socket failed: %s", strerror(err));
        return sr_status_from_errno(err);
    }
    sr_debug("tcp: listening on %s", sr_tcp_ipstr(l->addr.ip, l->addr.port, name, sizeof(name)));
    return SYMRAIL_OK;
}

symrail_status_t sr_tcp_listen(sr_tl_ctx_t *ctx)
{
    const char *filter = ctx->params.env->tcp_if;
    int all_local = 1;
    struct ifaddrs *ifs, *ifa;
    sr_tcp_ip_t want[SR_TCP_MAX_ADDRS];
    int nwant = 0;

    for (int pe = 0; pe < ctx->params.n_pes; pe++)
        all_local &= ctx->params.is_local[pe] != 0;
    if (filter && *filter && !sr_tcp_if_valid(filter)) {
        sr_error("SYMRAIL_TCP_IF='%s' has an entry that is neither an interface name nor an "
                 "IPv4 CIDR such as 10.10.0.0/16", filter);
        return SYMRAIL_ERR_INVALID;
    }
    if (getifaddrs(&ifs) != 0) {
        int err = errno;
        sr_error("tcp: getifaddrs failed: %s", strerror(err));
        return sr_status_from_errno(err);
    }
    for (ifa = ifs; ifa && nwant < SR_TCP_MAX_ADDRS; ifa = ifa->ifa_next) {
        if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET ||
            !(ifa->ifa_flags & IFF_UP))
            continue;
        uint32_t ip = ((struct sockaddr_in *)(void *)ifa->ifa_addr)->sin_addr.s_addr;
        uint32_t mask = ifa->ifa_netmask
                            ? ((struct sockaddr_in *)(void *)ifa->ifa_netmask)->sin_addr.s_addr
                            : 0xffffffffu;
        int loop = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
        int use = filter && *filter ? sr_tcp_if_match(filter, ifa->ifa_name, ip) > 0
                                    : !loop || all_local;
        for (int i = 0; i < nwant && use; i++)
            use = want[i].ip != ip;
        if (!use)
            continue;
        want[nwant].ip = ip;
        want[nwant].port = 0;
        want[nwant].prefix = (uint8_t)__builtin_popcount(mask);
        want[nwant].loopback = (uint8_t)loop;
        nwant++;
    }
    freeifaddrs(ifs);
    if (nwant == 0) {
        if (filter && *filter) {
            sr_error("SYMRAIL_TCP_IF='%s' matches no IPv4 interface that is up", filter);
            return SYMRAIL_ERR_INVALID;
        }
        sr_info("tcp: no IPv4 interface%s is up", all_local ? "" : " other than loopback");
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < nwant; i++) {
        symrail_status_t st = sr_tcp_listen_one(ctx, &want[i]);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

/* Testing aid: where a rogue client can find this PE. */
void sr_tcp_write_addr_file(sr_tl_ctx_t *ctx)
{
    const char *base = ctx->params.env->tcp_addr_file;
    char path[4096], tmp[4200], name[SR_TCP_NAME_LEN];
    if (base == NULL || *base == '\0')
        return;
    snprintf(path, sizeof(path), "%s.%d", base, ctx->params.my_pe);
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        sr_warn("tcp: cannot write SYMRAIL_TCP_ADDR_FILE %s: %m", tmp);
        return;
    }
    for (int i = 0; i < ctx->naddrs; i++)
        fprintf(f, "%s\n", sr_tcp_ipstr(ctx->lsn[i].addr.ip, ctx->lsn[i].addr.port, name,
                                        sizeof(name)));
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        sr_warn("tcp: cannot write SYMRAIL_TCP_ADDR_FILE %s: %m", path);
}

symrail_status_t sr_tcp_addr_pack(sr_tl_ctx_t *ctx, void *buf, size_t *len_p)
{
    sr_tcp_addr_t a;
    if (buf == NULL) {
        *len_p = sizeof(a);
        return SYMRAIL_OK;
    }
    if (*len_p < sizeof(a))
        return SYMRAIL_ERR_TRUNCATED;
    memset(&a, 0, sizeof(a));
    a.magic = SR_TCP_ADDR_MAGIC;
    a.pid = (int32_t)getpid();
    a.instance = ctx->instance;
    a.n_pes = (uint32_t)ctx->params.n_pes;
    a.nlanes = ctx->nlanes;
    a.naddrs = (uint32_t)ctx->naddrs;
    for (int i = 0; i < ctx->naddrs; i++)
        a.addrs[i] = ctx->lsn[i].addr;
    memcpy(buf, &a, sizeof(a));
    *len_p = sizeof(a);
    return SYMRAIL_OK;
}

int sr_tcp_reachable(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len)
{
    sr_tcp_addr_t a;
    if (len != sizeof(a))
        return 0;
    memcpy(&a, addr, sizeof(a));
    if (a.magic != SR_TCP_ADDR_MAGIC || a.n_pes != (uint32_t)ctx->params.n_pes ||
        a.naddrs < 1 || a.naddrs > SR_TCP_MAX_ADDRS || a.nlanes < 1)
        return 0;
    return !ctx->params.is_local[pe] || ctx->params.serve_local;
}

/* A fixed buffer turns the kernel's autotuning off; it must be set before
 * connect() (or on the listener, which accepted sockets inherit) for the
 * receive window to be scaled to it. */
void sr_tcp_sockbuf(sr_tl_ctx_t *ctx, int fd)
{
    uint64_t b = ctx->params.env->tcp_sockbuf;
    int v = (int)b;
    if (!b)
        return;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) != 0) {
        sr_warn("tcp: cannot set socket buffers to %d bytes (SYMRAIL_TCP_SOCKBUF): %m", v);
        return;
    }
    /* The kernel caps them at net.core.wmem_max/rmem_max without a word
     * (and doubles what it grants for its own bookkeeping). */
    int got = 0;
    socklen_t gl = sizeof(got);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &gl) == 0 && got / 2 < v &&
        !__atomic_exchange_n(&ctx->sockbuf_told, 1, __ATOMIC_RELAXED)) {
        sr_info("tcp: SYMRAIL_TCP_SOCKBUF=%d is capped by the kernel to %d bytes "
                "(net.core.rmem_max, wmem_max)", v, got / 2);
    }
}

void sr_tcp_sockopts(sr_tl_ctx_t *ctx, int fd)
{
    int one = 1;
    uint64_t tmo = ctx->params.env->op_timeout;
    unsigned int ms = tmo > UINT32_MAX ? UINT32_MAX : (unsigned int)tmo;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* Unacknowledged data for this long (a dead link): the kernel gives up. */
    if (ms)
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

/* Candidate addresses of the peer, best first: loopback for a peer on this
 * host, then addresses in a subnet we share, then the rest. */
int sr_tcp_rank_addrs(sr_tl_ctx_t *ctx, int pe, const sr_tcp_addr_t *a, int *order,
                      int *npref_p)
{
    int score[SR_TCP_MAX_ADDRS], n = 0;
    for (uint32_t i = 0; i < a->naddrs; i++) {
        const sr_tcp_ip_t *ip = &a->addrs[i];
        int s = 0;
        if (ip->loopback) {
            if (!ctx->params.is_local[pe])
                continue;
            s = 3;
        } else {
            for (int j = 0; j < ctx->naddrs && s == 0; j++) {
                const sr_tcp_ip_t *mine = &ctx->lsn[j].addr;
                int pfx = mine->prefix < ip->prefix ? mine->prefix : ip->prefix;
                uint32_t mask = pfx == 0 ? 0 : htonl(~0u << (32 - pfx));
                if (!mine->loopback && (mine->ip & mask) == (ip->ip & mask))
                    s = 2;
            }
            s = s ? s : 1;
        }
        score[n] = s;
        order[n++] = (int)i;
    }
    for (int i = 1; i < n; i++)  /* stable: keep the peer's order within a score */
        for (int j = i; j > 0 && score[j] > score[j - 1]; j--) {
            int t = score[j];
            score[j] = score[j - 1], score[j - 1] = t;
            t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    *npref_p = 0;
    while (*npref_p < n && score[*npref_p] == score[0])
        (*npref_p)++;
    return n;
}
