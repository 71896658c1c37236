/*
 * TCP transport: one-sided put, get, atomics and notifications over sockets.
 *
 * Lanes.  Every PE opens SYMRAIL_TCP_LANES connections to every peer it
 * reaches over TCP; these are the lanes the core sprays slices over.  A
 * connection carries requests one way (from the PE that opened it) and their
 * replies back, so each pair of PEs has 2 x lanes connections and nobody has
 * to break ties between simultaneous connects.  The target answers requests
 * of one connection in order, so the initiator matches each reply with the
 * oldest request still pending on that connection.
 *
 * Connection setup is eager: connect() of the ops table dials every lane
 * during wireup and authenticates it, so a job that starts has all its
 * connections and later operations never pay for a handshake.  (n_pes x lanes
 * sockets per PE; fine at the scale this transport is for.)
 *
 * Addresses.  Each PE listens on every address SYMRAIL_TCP_IF selects (names
 * or CIDRs); by default every non-loopback IPv4 interface that is up, and
 * loopback as well when every PE of the job is on this host.  All of them go
 * into the address blob.  A dialer prefers loopback for a peer on its own
 * host, then the peer's addresses in a subnet it shares, and spreads lanes
 * over those.
 *
 * Security.  Every connection starts with a challenge-response handshake
 * (frame.h) keyed by SHA-256 of SYMRAIL_JOB_SECRET and the job id.  Without
 * SYMRAIL_JOB_SECRET (e.g. under mpirun) the key is derived from the job id
 * and a random job key that Open MPI gives every process of the job
 * (OMPI_MCA_*_precondition_transports), falling back to the job id and user
 * id only.  That is weaker: anyone who can read the job's environment, or
 * guess its job id in the fallback case, can connect; it is logged at info.
 * A target checks every request against its registered regions before it
 * touches memory; a malformed or out-of-bounds frame closes that connection
 * and is logged, and the process goes on.
 *
 * Threads.  The target side (listening sockets and the connections peers
 * opened) is served by a progress thread that waits in epoll: it applies
 * puts and atomics, sends get data and acks, and queues notifications,
 * without the application's help; progress() serves it too when it can take
 * io_lock, which keeps latency low while the application polls.  The
 * initiator side (our lanes: posting requests, reading their replies) is
 * only ever touched by the application's thread, in the ops and progress(),
 * so it takes no lock and its completions go straight to comp->cb from
 * progress(); replies wait in the socket until then.  The thread never calls
 * into the core: notifications are queued under mq_lock and delivered by
 * progress().  It wakes an application sleeping in wait() for atomics,
 * notifications and small puts (flags), not for every slice of a bulk put.
 * A launcher that binds a PE to one core makes the thread share it with the
 * application; bulk bandwidth then drops to about half.
 *
 * Zero copy: a put is written with one sendmsg of header and the caller's
 * buffer, and the target reads the payload straight into its heap after the
 * bounds check; get data is sent from the heap and read into the caller's
 * buffer.  Backpressure: a lane takes a request only while it has fewer than
 * SYMRAIL_TCP_MAX_OPS requests and SYMRAIL_TCP_MAX_INFLIGHT bytes in flight
 * (SYMRAIL_ERR_AGAIN otherwise); a target stops reading a connection whose
 * replies pile up.
 *
 * Faults.  A connection that ends, resets or breaks the protocol fails its
 * pending operations at once and its lane goes down (weight 0); the core
 * retries slices on another lane.  A peer that answers nothing for 7/8 of
 * SYMRAIL_OP_TIMEOUT while operations wait (a dead link does not reset
 * anything) loses all its connections.  A PE that finalizes says BYE first,
 * so its peers do not take its departure for a failure.
 */
#include "config.h"
#include "tl/tl.h"
#include "tl/tcp/frame.h"
#include "util/log.h"
#include "util/pool.h"
#include "util/status.h"
#include "util/sys.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <sched.h>
#ifdef HAVE_GETRANDOM
#include <sys/random.h>
#endif

#define SR_TCP_ADDR_MAGIC    0x7372746370310000ull  /* "srtcp1" */
#define SR_TCP_MAX_ADDRS     8
#define SR_TCP_MAX_REGIONS   4
#define SR_TCP_RXBUF         (64u * 1024)
#define SR_TCP_HS_TIMEOUT_NS (10ull * 1000 * 1000 * 1000)
#define SR_TCP_MAX_HS        64          /* connections in handshake at once */
#define SR_TCP_REPLY_HIWAT   (32u << 20) /* queued reply bytes: stop reading requests */
#define SR_TCP_IO_BUDGET     (4u << 20)  /* bytes read from one connection per pass */
#define SR_TCP_BULK          4096        /* a payload this big is read in place */
#define SR_TCP_FLAG_MAX      256         /* puts up to this size wake a sleeping wait */
#define SR_TCP_EVENTS        64
#define SR_TCP_TICK_MS       100
#define SR_TCP_CHECK_NS      (10ull * 1000 * 1000)
#define SR_TCP_LINGER_MS     300         /* finalize: wait for peers' goodbyes */
#define SR_TCP_NAME_LEN      48

enum { SR_TCP_K_CONN = 1, SR_TCP_K_LSN, SR_TCP_K_WAKE, SR_TCP_K_IN };
enum { SR_TCP_HS_HELLO, SR_TCP_HS_AUTH, SR_TCP_UP, SR_TCP_DEAD };
enum { SR_TCP_RX_MSG, SR_TCP_RX_PAYLOAD };
enum { SR_TCP_TX_OP, SR_TCP_TX_POOL };

typedef struct {
    uint32_t ip;        /* network order */
    uint16_t port;      /* network order */
    uint8_t  prefix;
    uint8_t  loopback;
} sr_tcp_ip_t;

/* The address blob. */
typedef struct {
    uint64_t    magic;
    int32_t     pid;
    uint32_t    n_pes;
    uint32_t    nlanes;
    uint32_t    naddrs;
    sr_tcp_ip_t addrs[SR_TCP_MAX_ADDRS];
} sr_tcp_addr_t;

/* Bytes queued on a connection: a header and/or data that stays owned by
 * its producer (a put's source, the heap for get replies). */
typedef struct sr_tcp_tx {
    struct sr_tcp_tx *next;
    const char       *data;
    size_t            dlen;
    size_t            sent;
    uint8_t           hlen;
    uint8_t           kind;
    uint8_t           hdr[SR_TCP_CHAL_LEN];  /* a frame header or a handshake message */
} sr_tcp_tx_t;

/* Replies, credits, notifications: the payload is copied here. */
typedef struct sr_tcp_txbuf {
    sr_tcp_tx_t          tx;
    struct sr_tcp_txbuf *next_free;
    uint8_t              inl[SR_TCP_NOTIFY_MAX];
} sr_tcp_txbuf_t;

/* One request of ours awaiting its reply. */
typedef struct sr_tcp_op {
    sr_tcp_tx_t       tx;
    struct sr_tcp_op *next;
    sr_tl_comp_t     *comp;
    void             *dst;      /* get: data; atomic: result or NULL */
    size_t            len;      /* data bytes it keeps in flight */
    uint64_t          id;
    uint8_t           op;
    symrail_status_t  status;
} sr_tcp_op_t;

typedef struct sr_tcp_msg {
    struct sr_tcp_msg *next;
    int                src;
    uint32_t           tag;
    uint32_t           len;
    unsigned char      payload[];
} sr_tcp_msg_t;

typedef struct {
    int kind;
    int fd;
    sr_tcp_ip_t addr;
} sr_tcp_lsn_t;

typedef struct sr_tcp_conn {
    int                 kind;      /* SR_TCP_K_CONN: first, like sr_tcp_lsn_t */
    int                 fd;
    uint8_t             is_out;    /* we dialed: we send requests, read replies */
    uint8_t             state;
    uint8_t             rx_state;
    uint8_t             throttled;
    uint8_t             bye;
    uint8_t             rx_bulk;   /* big payloads come: read one header at a time */
    uint32_t            events;
    int                 pe;
    int                 lane;
    char                name[SR_TCP_NAME_LEN];
    struct sr_tl_ep    *ep;
    struct sr_tcp_conn *next;      /* every connection of its side */
    uint64_t            deadline_ns;
    uint8_t             hello[SR_TCP_HELLO_LEN];
    uint8_t             nonce_s[SR_TCP_NONCE_LEN];
    /* receive */
    uint8_t            *rxbuf;
    size_t              rx_lo, rx_hi;
    sr_tcp_frame_t      cur;
    char               *rx_dst;
    size_t              rx_left;
    uint64_t            last_rx_ns;
    uint8_t             nbuf[SR_TCP_NOTIFY_MAX];
    /* send */
    sr_tcp_tx_t        *tx_head, *tx_tail;
    size_t              tx_bytes;
    /* requests of ours, oldest first */
    sr_tcp_op_t        *pend_head, *pend_tail;
    uint32_t            nops;
    size_t              inflight;
    uint64_t            next_id;
    uint64_t            posted;
} sr_tcp_conn_t;

struct sr_tl_ep {
    struct sr_tl_ctx *ctx;
    int               pe;
    int               pid;
    int               self;
    int               local;
    int               nlanes;
    sr_tcp_conn_t    *lanes[SR_TCP_MAX_LANES];
    uint64_t          n_sent;       /* notifications sent */
    uint64_t          n_credit;     /* ... that the peer has consumed */
    int               gone;         /* declared unresponsive */
};

struct sr_tl_ctx {
    sr_tl_params_t  params;
    uint8_t         key[SR_TCP_KEY_LEN];
    uint32_t        nlanes;
    uint32_t        max_ops;
    size_t          max_inflight;
    uint64_t        dead_ns;        /* no answer for this long: the peer is gone */
    uint64_t        dial_ms;
    sr_tcp_lsn_t    lsn[SR_TCP_MAX_ADDRS];
    int             naddrs;
    sr_tcp_lsn_t    wake;           /* eventfd that stops the thread */
    sr_tcp_lsn_t    in_tag;         /* ep_in as an event source of ep_out */
    int             ep_in;          /* listeners and connections peers opened */
    int             ep_out;         /* our lanes, and ep_in */
    pthread_t       thread;
    int             thread_up;
    int             stop;

    /* The target side: served by the thread, and by progress() when it can
     * take the lock. */
    pthread_mutex_t io_lock;
    sr_tcp_conn_t  *conns;          /* connections peers opened */
    int             nhs;
    sr_tcp_txbuf_t *txb_free;
    sr_tcp_conn_t **credit_conn;    /* [n_pes]: where to return notify credits */
    char           *base[SR_TCP_MAX_REGIONS];
    uint64_t        rlen[SR_TCP_MAX_REGIONS];
    uint32_t        nregions;
    uint64_t        next_check_ns;
    int             wake_waiter;    /* applied something a sleeping wait may be for */

    pthread_mutex_t mq_lock;        /* notifications the thread hands to progress() */
    sr_tcp_msg_t   *mq_head, *mq_tail;
    uint8_t        *bye;            /* [n_pes]: the PE finalized (atomic) */

    /* The initiator side: our lanes, only ever touched by the application's
     * thread (connect, the ops, progress), so it needs no lock. */
    sr_tl_ep_t    **eps;            /* [n_pes] */
    sr_tcp_conn_t  *out_conns;
    sr_tcp_txbuf_t *txb_out_free;
    sr_tcp_op_t    *done_head, *done_tail;
    uint64_t        next_out_check_ns;
    sr_pool_t       ops;           /* sr_tcp_op_t; application thread only */
    uint64_t       *consumed, *reported;   /* [n_pes]: notifications delivered */
    uint64_t        lane_bytes[SR_TCP_MAX_LANES], lane_slices[SR_TCP_MAX_LANES];
    uint64_t        n_posted, n_completed, n_full;
    int             fault_lane;
    uint64_t        fault_after;

    /* sleeping waits (wait_prepare/wait) */
    uint32_t        seq;
    uint32_t        waiters;
};

static void sr_tcp_fini(sr_tl_ctx_t *ctx);
static void sr_tcp_rx(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
static int sr_tcp_flush(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
static symrail_status_t sr_tcp_ep_check(sr_tl_ep_t *ep);

static const char *sr_tcp_ipstr(uint32_t ip, uint16_t port, char *buf, size_t len)
{
    char a[INET_ADDRSTRLEN];
    struct in_addr in = { .s_addr = ip };
    inet_ntop(AF_INET, &in, a, sizeof(a));
    snprintf(buf, len, "%s:%u", a, (unsigned)ntohs(port));
    return buf;
}

static symrail_status_t sr_tcp_random(void *buf, size_t len)
{
#ifdef HAVE_GETRANDOM
    if (getrandom(buf, len, 0) == (ssize_t)len)
        return SYMRAIL_OK;
#endif
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sr_error("tcp: no source of random numbers for handshake nonces: %m");
        return SYMRAIL_ERR_SYSTEM;
    }
    ssize_t n = read(fd, buf, len);
    close(fd);
    if (n != (ssize_t)len) {
        sr_error("tcp: reading /dev/urandom failed: %m");
        return SYMRAIL_ERR_SYSTEM;
    }
    return SYMRAIL_OK;
}

/* Wakes an application sleeping in wait(): a peer changed our memory. */
static void sr_tcp_kick(sr_tl_ctx_t *ctx)
{
    __atomic_fetch_add(&ctx->seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ctx->waiters, __ATOMIC_SEQ_CST))
        sr_futex_wake_all(&ctx->seq);
}

/* ---- the job key ------------------------------------------------------------- */

static void sr_tcp_derive_key(sr_tl_ctx_t *ctx)
{
    static const char *const shared[] = { "OMPI_MCA_orte_precondition_transports",
                                          "OMPI_MCA_opal_precondition_transports", NULL };
    const char *secret = ctx->params.env->job_secret;
    const char *job = ctx->params.job ? ctx->params.job : "";
    if (secret && *secret) {
        sr_tcp_job_key(job, "secret", secret, strlen(secret), ctx->key);
        return;
    }
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
    sr_tcp_job_key(job, "derived", material, strlen(material), ctx->key);
    if (val)
        sr_info("tcp: SYMRAIL_JOB_SECRET is not set: connections are authenticated with a key "
                "derived from job %s and the launcher's job key (%s); a process that can read "
                "this job's environment can connect", job, name);
    else
        sr_info("tcp: SYMRAIL_JOB_SECRET is not set and the launcher gives no job key: "
                "connections are authenticated with a key derived from job %s and user id %u "
                "only, which others may guess; set SYMRAIL_JOB_SECRET", job, uid);
}

/* ---- interfaces and listening sockets --------------------------------------------- */

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

static int sr_tcp_if_match(const char *filter, const char *ifname, uint32_t ip)
{
    for (const char *p = filter; *p;) {
        size_t len = strcspn(p, ",");
        int m = sr_tcp_if_entry_match(p, len, ifname, ip);
        if (m != 0)
            return m;
        p += len;
        p += *p == ',';
    }
    return 0;
}

static int sr_tcp_if_valid(const char *filter)
{
    for (const char *p = filter; *p;) {
        size_t len = strcspn(p, ",");
        if (sr_tcp_if_entry_match(p, len, NULL, 0) < 0)
            return 0;
        p += len;
        p += *p == ',';
    }
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

static symrail_status_t sr_tcp_listen(sr_tl_ctx_t *ctx)
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
static void sr_tcp_write_addr_file(sr_tl_ctx_t *ctx)
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

/* ---- thread ------------------------------------------------------------------ */

static int sr_tcp_handle_in(sr_tl_ctx_t *ctx, struct epoll_event *ev, int n);
static void sr_tcp_check_handshakes(sr_tl_ctx_t *ctx, uint64_t now);

/* Frees the target side's dead connections; io_lock held.  Only the thread
 * may: it is the only one holding events across a release of the lock, and
 * it has handled them all by now.  (Clients that connect again and again
 * must not grow the process.) */
static void sr_tcp_reap(sr_tl_ctx_t *ctx)
{
    for (sr_tcp_conn_t **pc = &ctx->conns; *pc;) {
        sr_tcp_conn_t *c = *pc;
        if (c->state != SR_TCP_DEAD) {
            pc = &c->next;
            continue;
        }
        *pc = c->next;
        free(c);
    }
}

static void *sr_tcp_thread(void *arg)
{
    sr_tl_ctx_t *ctx = arg;
    struct epoll_event ev[SR_TCP_EVENTS];
    while (!__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE)) {
        int n = epoll_wait(ctx->ep_in, ev, SR_TCP_EVENTS, SR_TCP_TICK_MS);
        if (n < 0 && errno != EINTR) {
            sr_error("tcp: epoll_wait failed: %m; the progress thread stops");
            break;
        }
        pthread_mutex_lock(&ctx->io_lock);
        if (n > 0)
            sr_tcp_handle_in(ctx, ev, n);
        uint64_t now = sr_time_ns();
        if (now >= ctx->next_check_ns)
            sr_tcp_check_handshakes(ctx, now);
        sr_tcp_reap(ctx);
        int wake = ctx->wake_waiter;
        ctx->wake_waiter = 0;
        pthread_mutex_unlock(&ctx->io_lock);
        if (wake)
            sr_tcp_kick(ctx);
    }
    return NULL;
}

/* ---- init / fini ------------------------------------------------------------ */

static symrail_status_t sr_tcp_parse_fault(sr_tl_ctx_t *ctx)
{
    const char *f = ctx->params.env->fault_qp;
    int lane;
    unsigned long long after;
    ctx->fault_lane = -1;
    if (f == NULL || *f == '\0')
        return SYMRAIL_OK;
    if (sscanf(f, "%d:%llu", &lane, &after) != 2 || lane < 0) {
        sr_error("SYMRAIL_FAULT_QP_ERROR='%s' is not LANE:N", f);
        return SYMRAIL_ERR_INVALID;
    }
    ctx->fault_lane = lane;
    ctx->fault_after = after;
    sr_warn("tcp: test fault hook armed: lane %d breaks after %llu slices", lane, after);
    return SYMRAIL_OK;
}

static symrail_status_t sr_tcp_init(const sr_tl_params_t *params, sr_tl_ctx_t **ctx_p)
{
    symrail_status_t st;
    int remote = 0;
    for (int pe = 0; pe < params->n_pes; pe++)
        remote |= !params->is_local[pe];
    if (!remote && !params->serve_local) {
        sr_info("tcp: every PE is on this host and shared memory carries them");
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    const sr_env_t *env = params->env;
    if (env->notify_slots < 1) {
        sr_error("SYMRAIL_NOTIFY_SLOTS=0: a sender could never send a notification");
        return SYMRAIL_ERR_INVALID;
    }
    if (env->tcp_lanes < 1 || env->tcp_lanes > SR_TCP_MAX_LANES || env->tcp_max_ops < 1 ||
        env->tcp_max_ops > (1u << 20) || env->tcp_max_inflight < 4096) {
        sr_error("tcp: SYMRAIL_TCP_LANES (1 .. %d), SYMRAIL_TCP_MAX_OPS (1 .. 1048576) or "
                 "SYMRAIL_TCP_MAX_INFLIGHT (>= 4K) out of range", SR_TCP_MAX_LANES);
        return SYMRAIL_ERR_INVALID;
    }
    sr_tl_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return SYMRAIL_ERR_NOMEM;
    ctx->params = *params;
    ctx->nlanes = (uint32_t)env->tcp_lanes;
    ctx->max_ops = (uint32_t)env->tcp_max_ops;
    ctx->max_inflight = env->tcp_max_inflight;
    /* SYMRAIL_OP_TIMEOUT=0 (no limit): silence never ends a connection. */
    uint64_t tmo = env->op_timeout;
    ctx->dead_ns = tmo ? tmo * 1000000ull / 8 * 7 : UINT64_MAX;
    ctx->dial_ms = tmo && tmo < 30000 ? tmo : 30000;
    ctx->ep_in = ctx->ep_out = -1;
    ctx->wake.fd = -1;
    ctx->wake.kind = SR_TCP_K_WAKE;
    ctx->in_tag.kind = SR_TCP_K_IN;
    pthread_mutex_init(&ctx->io_lock, NULL);
    pthread_mutex_init(&ctx->mq_lock, NULL);
    sr_pool_init(&ctx->ops, sizeof(sr_tcp_op_t), 256);

    size_t n = (size_t)params->n_pes;
    ctx->credit_conn = calloc(n, sizeof(*ctx->credit_conn));
    ctx->bye = calloc(n, 1);
    ctx->eps = calloc(n, sizeof(*ctx->eps));
    ctx->consumed = calloc(n, sizeof(uint64_t));
    ctx->reported = calloc(n, sizeof(uint64_t));
    if (!ctx->credit_conn || !ctx->bye || !ctx->eps || !ctx->consumed || !ctx->reported) {
        st = SYMRAIL_ERR_NOMEM;
        goto err_ctx;
    }
    st = sr_tcp_parse_fault(ctx);
    if (st != SYMRAIL_OK)
        goto err_ctx;
    sr_tcp_derive_key(ctx);
    ctx->ep_in = epoll_create1(EPOLL_CLOEXEC);
    ctx->ep_out = epoll_create1(EPOLL_CLOEXEC);
    ctx->wake.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ctx->ep_in < 0 || ctx->ep_out < 0 || ctx->wake.fd < 0) {
        int err = errno;
        sr_error("tcp: epoll_create1/eventfd failed: %s", strerror(err));
        st = sr_status_from_errno(err);
        goto err_ctx;
    }
    /* progress() learns from one epoll_wait whether the target side has
     * work too. */
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &ctx->wake };
    struct epoll_event evin = { .events = EPOLLIN, .data.ptr = &ctx->in_tag };
    if (epoll_ctl(ctx->ep_in, EPOLL_CTL_ADD, ctx->wake.fd, &ev) != 0 ||
        epoll_ctl(ctx->ep_out, EPOLL_CTL_ADD, ctx->ep_in, &evin) != 0) {
        int err = errno;
        sr_error("tcp: epoll_ctl failed: %s", strerror(err));
        st = sr_status_from_errno(err);
        goto err_ctx;
    }
    st = sr_tcp_listen(ctx);
    if (st != SYMRAIL_OK)
        goto err_ctx;
    sr_tcp_write_addr_file(ctx);
    /* Up before any peer dials us: wireup handshakes are served here while
     * this PE's own thread dials its peers. */
    if (pthread_create(&ctx->thread, NULL, sr_tcp_thread, ctx) != 0) {
        sr_error("tcp: cannot start the progress thread");
        st = SYMRAIL_ERR_SYSTEM;
        goto err_ctx;
    }
    ctx->thread_up = 1;
    *ctx_p = ctx;
    return SYMRAIL_OK;

err_ctx:
    sr_tcp_fini(ctx);
    return st;
}

static void sr_tcp_conn_close_fd(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    if (c->fd >= 0) {
        /* Explicitly: a copy of the socket in a forked child would keep it
         * in the epoll set past close(). */
        epoll_ctl(c->is_out ? ctx->ep_out : ctx->ep_in, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
}

/* Each side has its own pool, so that neither needs the other's lock. */
static sr_tcp_txbuf_t **sr_tcp_pool(sr_tl_ctx_t *ctx, const sr_tcp_conn_t *c)
{
    return c->is_out ? &ctx->txb_out_free : &ctx->txb_free;
}

static void sr_tcp_tx_release(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, sr_tcp_tx_t *tx)
{
    if (tx->kind == SR_TCP_TX_POOL) {
        sr_tcp_txbuf_t *b = (sr_tcp_txbuf_t *)(void *)tx, **pool = sr_tcp_pool(ctx, c);
        b->next_free = *pool;
        *pool = b;
    }
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

static void sr_tcp_goodbye(sr_tl_ctx_t *ctx)
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

static void sr_tcp_fini(sr_tl_ctx_t *ctx)
{
    if (ctx->thread_up) {
        uint64_t one = 1;
        __atomic_store_n(&ctx->stop, 1, __ATOMIC_RELEASE);
        (void)!write(ctx->wake.fd, &one, sizeof(one));
        pthread_join(ctx->thread, NULL);
    }
    sr_tcp_goodbye(ctx);
    sr_tcp_conn_t **lists[2] = { &ctx->conns, &ctx->out_conns };
    for (int side = 0; side < 2; side++) {
        while (*lists[side]) {
            sr_tcp_conn_t *c = *lists[side];
            *lists[side] = c->next;
            sr_tcp_conn_close_fd(ctx, c);
            for (sr_tcp_tx_t *tx = c->tx_head, *next; tx; tx = next) {
                next = tx->next;
                sr_tcp_tx_release(ctx, c, tx);
            }
            free(c->rxbuf);
            free(c);
        }
    }
    for (int i = 0; i < ctx->naddrs; i++)
        close(ctx->lsn[i].fd);
    if (ctx->wake.fd >= 0)
        close(ctx->wake.fd);
    if (ctx->ep_in >= 0)
        close(ctx->ep_in);
    if (ctx->ep_out >= 0)
        close(ctx->ep_out);
    sr_tcp_txbuf_t **pools[2] = { &ctx->txb_free, &ctx->txb_out_free };
    for (int side = 0; side < 2; side++) {
        while (*pools[side]) {
            sr_tcp_txbuf_t *b = *pools[side];
            *pools[side] = b->next_free;
            free(b);
        }
    }
    while (ctx->mq_head) {
        sr_tcp_msg_t *m = ctx->mq_head;
        ctx->mq_head = m->next;
        free(m);
    }
    sr_pool_fini(&ctx->ops);
    for (int pe = 0; ctx->eps && pe < ctx->params.n_pes; pe++)
        free(ctx->eps[pe]);
    free(ctx->eps);
    free(ctx->credit_conn);
    free(ctx->bye);
    free(ctx->consumed);
    free(ctx->reported);
    pthread_mutex_destroy(&ctx->io_lock);
    pthread_mutex_destroy(&ctx->mq_lock);
    free(ctx);
}

static void sr_tcp_attr(const sr_tl_ctx_t *ctx, sr_tl_attr_t *attr_p)
{
    (void)ctx;
    attr_p->max_slice = SR_TCP_MAX_PAYLOAD;
    attr_p->can_sleep = 1;
}

static symrail_status_t sr_tcp_mem_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem)
{
    if (region >= SR_TCP_MAX_REGIONS)
        return SYMRAIL_ERR_UNSUPPORTED;
    pthread_mutex_lock(&ctx->io_lock);
    ctx->base[region] = mem->addr;
    ctx->rlen[region] = mem->len;
    if (region >= ctx->nregions)
        ctx->nregions = region + 1;
    pthread_mutex_unlock(&ctx->io_lock);
    return SYMRAIL_OK;
}

static symrail_status_t sr_tcp_addr_pack(sr_tl_ctx_t *ctx, void *buf, size_t *len_p)
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
    a.n_pes = (uint32_t)ctx->params.n_pes;
    a.nlanes = ctx->nlanes;
    a.naddrs = (uint32_t)ctx->naddrs;
    for (int i = 0; i < ctx->naddrs; i++)
        a.addrs[i] = ctx->lsn[i].addr;
    memcpy(buf, &a, sizeof(a));
    *len_p = sizeof(a);
    return SYMRAIL_OK;
}

static int sr_tcp_reachable(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len)
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

/* ---- connecting --------------------------------------------------------------- */

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

static void sr_tcp_sockopts(sr_tl_ctx_t *ctx, int fd)
{
    int one = 1;
    uint64_t tmo = ctx->params.env->op_timeout;
    unsigned int ms = tmo > UINT32_MAX ? UINT32_MAX : (unsigned int)tmo;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* Unacknowledged data for this long (a dead link): the kernel gives up. */
    if (ms)
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
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
    sr_tcp_hs_mac(ctx->key, 'S', hello, nonce_s, mac);
    if (why == NULL && !sr_tcp_mac_equal(mac, mac_s))
        why = "it does not know the job key (is SYMRAIL_JOB_SECRET the same on every PE?)";
    if (why) {
        sr_error("tcp: PE %d at %s failed to authenticate: %s", pe, name, why);
        st = SYMRAIL_ERR_TRANSPORT;
        goto err_fd;
    }
    sr_tcp_hs_mac(ctx->key, 'C', hello, nonce_s, mac);
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

static sr_tcp_conn_t *sr_tcp_conn_new(sr_tl_ctx_t *ctx, int fd, int is_out, const char *name)
{
    sr_tcp_conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL || (c->rxbuf = malloc(SR_TCP_RXBUF)) == NULL) {
        free(c);
        return NULL;
    }
    c->kind = SR_TCP_K_CONN;
    c->fd = fd;
    c->is_out = (uint8_t)is_out;
    c->pe = -1;
    c->lane = -1;
    c->last_rx_ns = sr_time_ns();
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->events = EPOLLIN;
    struct epoll_event ev = { .events = c->events, .data.ptr = c };
    if (epoll_ctl(is_out ? ctx->ep_out : ctx->ep_in, EPOLL_CTL_ADD, fd, &ev) != 0) {
        sr_error("tcp: epoll_ctl for the connection with %s failed: %m", name);
        free(c->rxbuf);
        free(c);
        return NULL;
    }
    sr_tcp_conn_t **list = is_out ? &ctx->out_conns : &ctx->conns;
    c->next = *list;
    *list = c;
    return c;
}

/* Candidate addresses of the peer, best first: loopback for a peer on this
 * host, then addresses in a subnet we share, then the rest. */
static int sr_tcp_rank_addrs(sr_tl_ctx_t *ctx, int pe, const sr_tcp_addr_t *a, int *order,
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

static symrail_status_t sr_tcp_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                       sr_tl_ep_t **ep_p)
{
    sr_tcp_addr_t a;
    int order[SR_TCP_MAX_ADDRS], npref, nup = 0;
    if (!sr_tcp_reachable(ctx, pe, addr, len))
        return SYMRAIL_ERR_INVALID;
    memcpy(&a, addr, sizeof(a));
    sr_tl_ep_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return SYMRAIL_ERR_NOMEM;
    ep->ctx = ctx;
    ep->pe = pe;
    ep->pid = a.pid;
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
            c->state = SR_TCP_UP;
            c->pe = pe;
            c->lane = l;
            c->ep = ep;
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
    ctx->eps[pe] = ep;
    *ep_p = ep;
    return SYMRAIL_OK;
}

static void sr_tcp_wireup_done(sr_tl_ctx_t *ctx)
{
    (void)ctx;
}

static void sr_tcp_disconnect(sr_tl_ep_t *ep)
{
    /* Connections belong to the context and close at fini, after the
     * goodbyes; the endpoint goes with them. */
    (void)ep;
}

static int sr_tcp_ep_lanes(sr_tl_ep_t *ep, uint32_t *weights_p, int max)
{
    int n = ep->nlanes < max ? ep->nlanes : max;
    if (ep->self) {
        weights_p[0] = 1;
        return 1;
    }
    for (int l = 0; l < n; l++) {
        sr_tcp_conn_t *c = ep->lanes[l];
        weights_p[l] = c && c->state == SR_TCP_UP ? 1 : 0;
    }
    return n;
}

/* ---- connection failure --------------------------------------------------------- */

/* A request of ours is over; comp->cb follows from progress(), never from
 * inside an op. */
static void sr_tcp_done_push(sr_tl_ctx_t *ctx, sr_tcp_op_t *op, symrail_status_t status)
{
    op->status = status;
    op->next = NULL;
    if (ctx->done_tail)
        ctx->done_tail->next = op;
    else
        ctx->done_head = op;
    ctx->done_tail = op;
}

static int sr_tcp_ep_alive(const sr_tl_ep_t *ep)
{
    for (int l = 0; l < ep->nlanes; l++)
        if (ep->lanes[l] && ep->lanes[l]->state == SR_TCP_UP)
            return 1;
    return 0;
}

/* Ends a connection: every request pending on it fails.  Held: io_lock for
 * the target side.  The struct stays until sr_tcp_reap (or fini): the
 * thread may hold an event naming it. */
static void sr_tcp_conn_fail(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, symrail_status_t status)
{
    if (c->state == SR_TCP_DEAD)
        return;
    if (!c->is_out && c->state != SR_TCP_UP)
        ctx->nhs--;
    c->state = SR_TCP_DEAD;
    sr_tcp_conn_close_fd(ctx, c);
    free(c->rxbuf);
    c->rxbuf = NULL;
    for (sr_tcp_tx_t *tx = c->tx_head, *next; tx; tx = next) {
        next = tx->next;
        sr_tcp_tx_release(ctx, c, tx);
    }
    c->tx_head = c->tx_tail = NULL;
    c->tx_bytes = 0;
    if (!c->is_out && c->pe >= 0 && ctx->credit_conn[c->pe] == c)
        ctx->credit_conn[c->pe] = NULL;
    if (c->is_out && c->pend_head) {
        /* The peer is gone when this was its last lane (or it said goodbye). */
        if (!sr_tcp_ep_alive(c->ep) || __atomic_load_n(&ctx->bye[c->pe], __ATOMIC_RELAXED))
            status = SYMRAIL_ERR_PEER_GONE;
        for (sr_tcp_op_t *op = c->pend_head, *next; op; op = next) {
            next = op->next;
            sr_tcp_done_push(ctx, op, status);
        }
    }
    c->pend_head = c->pend_tail = NULL;
    c->nops = 0;
    c->inflight = 0;
}

/* ---- sending -------------------------------------------------------------------- */

static void sr_tcp_arm(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    uint32_t want = (c->throttled ? 0 : EPOLLIN) | (c->tx_head ? EPOLLOUT : 0);
    if (c->state == SR_TCP_DEAD || want == c->events)
        return;
    struct epoll_event ev = { .events = want, .data.ptr = c };
    if (epoll_ctl(c->is_out ? ctx->ep_out : ctx->ep_in, EPOLL_CTL_MOD, c->fd, &ev) == 0)
        c->events = want;
}

/* Writes what the connection has queued, as far as the socket takes it;
 * -1 when the connection failed, 1 when a throttled target may read requests
 * again.  io_lock held for the target side. */
static int sr_tcp_flush(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    while (c->tx_head) {
        struct iovec iov[64];
        int n = 0;
        for (sr_tcp_tx_t *tx = c->tx_head; tx && n < 63; tx = tx->next) {
            size_t s = tx->sent;
            if (s < tx->hlen) {
                iov[n++] = (struct iovec){ tx->hdr + s, tx->hlen - s };
                s = tx->hlen;
            }
            if (tx->dlen > s - tx->hlen)
                iov[n++] = (struct iovec){ (void *)(tx->data + (s - tx->hlen)),
                                           tx->dlen - (s - tx->hlen) };
        }
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            int err = errno;
            if (c->pe >= 0)
                sr_warn("tcp: sending to PE %d (%s) failed: %s; connection closed", c->pe,
                        c->name, strerror(err));
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
            return -1;
        }
        size_t left = (size_t)w;
        while (left > 0) {
            sr_tcp_tx_t *tx = c->tx_head;
            size_t rest = tx->hlen + tx->dlen - tx->sent;
            if (left < rest) {
                tx->sent += left;
                break;
            }
            left -= rest;
            c->tx_bytes -= tx->hlen + tx->dlen;
            c->tx_head = tx->next;
            if (c->tx_head == NULL)
                c->tx_tail = NULL;
            sr_tcp_tx_release(ctx, c, tx);
        }
    }
    int resume = c->throttled && c->tx_bytes < SR_TCP_REPLY_HIWAT / 2;
    if (resume)
        c->throttled = 0;
    sr_tcp_arm(ctx, c);
    /* The caller reads again: frames may be waiting in the buffer already,
     * and no event will say so. */
    return resume;
}

static void sr_tcp_enqueue(sr_tcp_conn_t *c, sr_tcp_tx_t *tx)
{
    tx->next = NULL;
    tx->sent = 0;
    c->tx_bytes += tx->hlen + tx->dlen;
    if (c->tx_tail)
        c->tx_tail->next = tx;
    else
        c->tx_head = tx;
    c->tx_tail = tx;
}

static sr_tcp_txbuf_t *sr_tcp_txbuf_get(sr_tl_ctx_t *ctx, const sr_tcp_conn_t *c)
{
    sr_tcp_txbuf_t **pool = sr_tcp_pool(ctx, c), *b = *pool;
    if (b)
        *pool = b->next_free;
    else if ((b = malloc(sizeof(*b))) == NULL)
        return NULL;
    b->tx.kind = SR_TCP_TX_POOL;
    b->tx.data = NULL;
    b->tx.dlen = 0;
    b->tx.hlen = SR_TCP_HDR_LEN;
    return b;
}

/* Queues a reply (or credit) frame whose data, if any, stays where it is. */
static int sr_tcp_reply(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const sr_tcp_frame_t *f,
                        const void *data)
{
    sr_tcp_txbuf_t *b = sr_tcp_txbuf_get(ctx, c);
    if (b == NULL) {
        sr_error("tcp: out of memory for a reply to PE %d: connection closed", c->pe);
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_NOMEM);
        return -1;
    }
    sr_tcp_frame_encode(f, b->tx.hdr);
    b->tx.data = data;
    b->tx.dlen = data ? f->plen : 0;
    sr_tcp_enqueue(c, &b->tx);
    return 0;
}

/* ---- receiving ------------------------------------------------------------------------- */

static void sr_tcp_msg_push(sr_tl_ctx_t *ctx, int src, uint32_t tag, const void *payload,
                            uint32_t len)
{
    sr_tcp_msg_t *m = malloc(sizeof(*m) + len);
    if (m == NULL) {
        sr_error("tcp: out of memory: a notification from PE %d is lost", src);
        return;
    }
    m->next = NULL;
    m->src = src;
    m->tag = tag;
    m->len = len;
    if (len)
        memcpy(m->payload, payload, len);
    pthread_mutex_lock(&ctx->mq_lock);
    if (ctx->mq_tail)
        ctx->mq_tail->next = m;
    else
        __atomic_store_n(&ctx->mq_head, m, __ATOMIC_RELAXED);  /* progress() peeks */
    ctx->mq_tail = m;
    pthread_mutex_unlock(&ctx->mq_lock);
}

static uint64_t sr_tcp_amo_apply(uint64_t *t, uint8_t kind, uint64_t operand, uint64_t compare)
{
    uint64_t old = 0;
    switch (kind) {
    case SR_TL_AMO_FETCH:
        old = __atomic_load_n(t, __ATOMIC_ACQUIRE);
        break;
    case SR_TL_AMO_SET:
        /* Release: whoever sees the new value sees the data written before. */
        __atomic_store_n(t, operand, __ATOMIC_RELEASE);
        break;
    case SR_TL_AMO_ADD:
        old = __atomic_fetch_add(t, operand, __ATOMIC_ACQ_REL);
        break;
    case SR_TL_AMO_SWAP:
        old = __atomic_exchange_n(t, operand, __ATOMIC_ACQ_REL);
        break;
    case SR_TL_AMO_CSWAP:
        old = compare;
        __atomic_compare_exchange_n(t, &old, operand, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        break;
    }
    return old;
}

static void sr_tcp_pop(sr_tcp_conn_t *c, sr_tcp_op_t *op)
{
    c->pend_head = op->next;
    if (c->pend_head == NULL)
        c->pend_tail = NULL;
    c->nops--;
    c->inflight -= op->len;
}

/* A request or reply whose payload (if any) has fully arrived. */
static int sr_tcp_frame_done(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    sr_tcp_frame_t *f = &c->cur;
    if (c->is_out) {
        sr_tcp_op_t *op = c->pend_head;
        if (f->op == SR_TCP_OP_GET_REPLY) {
            sr_tcp_pop(c, op);
            sr_tcp_done_push(ctx, op, SYMRAIL_OK);
        }
        return 0;
    }
    if (f->op == SR_TCP_OP_PUT) {
        sr_tcp_frame_t ack = { .op = SR_TCP_OP_ACK, .id = f->id };
        /* A small put may be a flag somebody sleeps on; waking the
         * application for every slice of a bulk transfer would have it spin
         * against this thread for the CPU.  (A wait on bulk data rechecks
         * within its sleep slice.) */
        if (f->plen <= SR_TCP_FLAG_MAX)
            ctx->wake_waiter = 1;
        return sr_tcp_reply(ctx, c, &ack, NULL);
    }
    if (f->op == SR_TCP_OP_NOTIFY) {
        sr_tcp_msg_push(ctx, c->pe, (uint32_t)f->a, c->nbuf, f->plen);
        ctx->credit_conn[c->pe] = c;
        ctx->wake_waiter = 1;
    }
    return 0;
}

static void sr_tcp_protocol_error(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const char *why)
{
    const sr_tcp_frame_t *f = &c->cur;
    sr_error("tcp: %s from PE %d (%s): op %u, region %u, offset %llu, length %llu; "
             "connection closed", why, c->pe, c->name, f->op, f->region,
             (unsigned long long)f->off,
             (unsigned long long)(f->op == SR_TCP_OP_GET ? f->a : f->plen));
    sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
}

/* Handles one frame header; 0 when the connection lives on. */
static int sr_tcp_on_header(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const uint8_t *hdr)
{
    sr_tcp_frame_t *f = &c->cur;
    const char *why = sr_tcp_frame_decode(hdr, c->is_out ? SR_TCP_AT_INITIATOR : SR_TCP_AT_TARGET,
                                          f);
    if (why) {
        memset(f, 0, sizeof(*f));
        sr_error("tcp: malformed frame from PE %d (%s): %s; connection closed", c->pe, c->name,
                 why);
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
        return -1;
    }
    c->rx_left = 0;
    if (f->op == SR_TCP_OP_BYE) {
        c->bye = 1;
        __atomic_store_n(&ctx->bye[c->pe], 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (c->is_out) {
        sr_tl_ep_t *ep = c->ep;
        sr_tcp_op_t *op = c->pend_head;
        if (f->op == SR_TCP_OP_CREDIT) {
            if (f->a > ep->n_credit && f->a <= ep->n_sent)
                ep->n_credit = f->a;
            return 0;
        }
        static const uint8_t want[] = { [SR_TCP_OP_PUT] = SR_TCP_OP_ACK,
                                        [SR_TCP_OP_GET] = SR_TCP_OP_GET_REPLY,
                                        [SR_TCP_OP_AMO] = SR_TCP_OP_AMO_REPLY };
        if (op == NULL || op->id != f->id || want[op->op] != f->op ||
            (f->op == SR_TCP_OP_GET_REPLY && f->plen != op->len)) {
            sr_tcp_protocol_error(ctx, c, "a reply that matches no request");
            return -1;
        }
        if (f->op == SR_TCP_OP_GET_REPLY) {
            c->rx_dst = op->dst;
            c->rx_left = f->plen;
            return c->rx_left ? 0 : sr_tcp_frame_done(ctx, c);
        }
        if (f->op == SR_TCP_OP_AMO_REPLY && op->dst)
            *(uint64_t *)op->dst = f->a;
        sr_tcp_pop(c, op);
        sr_tcp_done_push(ctx, op, SYMRAIL_OK);
        return 0;
    }
    why = sr_tcp_frame_check_bounds(f, ctx->rlen, ctx->nregions);
    if (why) {
        sr_tcp_protocol_error(ctx, c, why);
        return -1;
    }
    char *at = f->op == SR_TCP_OP_NOTIFY ? NULL : ctx->base[f->region] + f->off;
    switch (f->op) {
    case SR_TCP_OP_PUT:
        c->rx_dst = at;
        c->rx_left = f->plen;
        return c->rx_left ? 0 : sr_tcp_frame_done(ctx, c);
    case SR_TCP_OP_NOTIFY:
        c->rx_dst = (char *)c->nbuf;
        c->rx_left = f->plen;
        return c->rx_left ? 0 : sr_tcp_frame_done(ctx, c);
    case SR_TCP_OP_GET: {
        sr_tcp_frame_t r = { .op = SR_TCP_OP_GET_REPLY, .id = f->id, .plen = (uint32_t)f->a };
        return sr_tcp_reply(ctx, c, &r, at);
    }
    case SR_TCP_OP_AMO: {
        sr_tcp_frame_t r = { .op = SR_TCP_OP_AMO_REPLY, .id = f->id };
        r.a = sr_tcp_amo_apply((uint64_t *)(void *)at, f->sub, f->a, f->b);
        ctx->wake_waiter |= f->sub != SR_TL_AMO_FETCH;
        return sr_tcp_reply(ctx, c, &r, NULL);
    }
    }
    return 0;
}

/* Target side of the handshake, one message at a time; 0 while it goes on. */
static int sr_tcp_on_handshake(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const uint8_t *msg)
{
    const char *why;
    if (c->state == SR_TCP_HS_HELLO) {
        sr_tcp_hello_t h;
        uint8_t mac[SR_TCP_MAC_LEN];
        why = sr_tcp_hello_decode(msg, (uint32_t)ctx->params.my_pe,
                                  (uint32_t)ctx->params.n_pes, &h);
        if (why == NULL && sr_tcp_random(c->nonce_s, sizeof(c->nonce_s)) != SYMRAIL_OK)
            why = "no random nonce";
        if (why) {
            sr_warn("tcp: connection from %s rejected: %s", c->name, why);
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
            return -1;
        }
        memcpy(c->hello, msg, SR_TCP_HELLO_LEN);
        c->pe = (int)h.src_pe;
        c->lane = (int)h.lane;
        sr_tcp_hs_mac(ctx->key, 'S', c->hello, c->nonce_s, mac);
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
    sr_tcp_hs_mac(ctx->key, 'C', c->hello, c->nonce_s, want);
    if (why == NULL && !sr_tcp_mac_equal(mac_c, want))
        why = "wrong job key (a process of another job, or SYMRAIL_JOB_SECRET differs)";
    if (why) {
        sr_warn("tcp: connection from %s (claims PE %d) failed authentication: %s; closed",
                c->name, c->pe, why);
        c->pe = -1;
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
        return -1;
    }
    ctx->nhs--;
    c->state = SR_TCP_UP;
    c->deadline_ns = 0;
    sr_debug("tcp: lane %d from PE %d (%s) authenticated", c->lane, c->pe, c->name);
    return 0;
}

static void sr_tcp_on_eof(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, int err)
{
    size_t partial = c->rx_hi - c->rx_lo;
    int pe = c->pe;
    if (c->state != SR_TCP_UP) {
        sr_warn("tcp: connection from %s ended during the handshake%s%s", c->name,
                err ? ": " : " (truncated message)", err ? strerror(err) : "");
    } else if (c->rx_state == SR_TCP_RX_PAYLOAD) {
        sr_error("tcp: connection with PE %d (%s) ended inside a frame (%zu payload bytes "
                 "missing)%s%s", pe, c->name, c->rx_left, err ? ": " : "",
                 err ? strerror(err) : "");
    } else if (partial) {
        sr_error("tcp: truncated frame header from PE %d (%s): %zu of %d bytes; connection "
                 "closed", pe, c->name, partial, SR_TCP_HDR_LEN);
    } else if (!c->bye && !__atomic_load_n(&ctx->bye[pe], __ATOMIC_RELAXED)) {
        if (c->is_out)
            sr_warn("tcp: lane %d to PE %d (%s) lost: %s", c->lane, pe, c->name,
                    err ? strerror(err) : "closed by the peer");
        else
            sr_info("tcp: connection from PE %d (%s) ended: %s", pe, c->name,
                    err ? strerror(err) : "closed by the peer");
    }
    sr_tcp_conn_fail(ctx, c, err == ETIMEDOUT ? SYMRAIL_ERR_TIMEOUT : SYMRAIL_ERR_TRANSPORT);
}

/* Reads and handles what the connection has; io_lock held for the target side. */
static void sr_tcp_rx(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c)
{
    size_t budget = SR_TCP_IO_BUDGET;
again:
    while (c->state != SR_TCP_DEAD) {
        if (c->rx_state == SR_TCP_RX_PAYLOAD) {
            size_t have = c->rx_hi - c->rx_lo;
            size_t n = have < c->rx_left ? have : c->rx_left;
            if (n) {
                memcpy(c->rx_dst, c->rxbuf + c->rx_lo, n);
                c->rx_dst += n;
                c->rx_lo += n;
                c->rx_left -= n;
            }
            if (c->rx_left == 0) {
                c->rx_state = SR_TCP_RX_MSG;
                if (sr_tcp_frame_done(ctx, c) != 0)
                    return;
                continue;
            }
            if (budget == 0)
                break;
            /* The buffer is empty: read the payload where it belongs, and
             * what follows into the buffer: after a big payload only the
             * next header, so that the next payload is not read into the
             * buffer and copied again. */
            c->rx_lo = c->rx_hi = 0;
            struct iovec iov[2] = { { c->rx_dst, c->rx_left },
                                    { c->rxbuf, c->rx_bulk ? SR_TCP_HDR_LEN : SR_TCP_RXBUF } };
            ssize_t r = readv(c->fd, iov, 2);
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                    break;
                sr_tcp_on_eof(ctx, c, r < 0 ? errno : 0);
                return;
            }
            c->last_rx_ns = sr_time_ns();
            budget = (size_t)r >= budget ? 0 : budget - (size_t)r;
            if ((size_t)r <= c->rx_left) {
                c->rx_dst += r;
                c->rx_left -= (size_t)r;
            } else {
                c->rx_hi = (size_t)r - c->rx_left;
                c->rx_dst += c->rx_left;
                c->rx_left = 0;
            }
            continue;
        }
        if (c->is_out == 0 && c->state == SR_TCP_UP && c->tx_bytes >= SR_TCP_REPLY_HIWAT) {
            /* The initiator does not read its replies: stop reading its requests. */
            c->throttled = 1;
            break;
        }
        size_t need = c->state == SR_TCP_HS_HELLO ? SR_TCP_HELLO_LEN
                    : c->state == SR_TCP_HS_AUTH  ? SR_TCP_AUTH_LEN
                                                  : SR_TCP_HDR_LEN;
        if (c->rx_hi - c->rx_lo >= need) {
            const uint8_t *msg = c->rxbuf + c->rx_lo;
            c->rx_lo += need;
            int rc = c->state == SR_TCP_UP ? sr_tcp_on_header(ctx, c, msg)
                                           : sr_tcp_on_handshake(ctx, c, msg);
            if (rc != 0)
                return;
            if (c->state == SR_TCP_UP && c->rx_left > 0)
                c->rx_state = SR_TCP_RX_PAYLOAD;
            c->rx_bulk = c->rx_left >= SR_TCP_BULK;
            continue;
        }
        if (budget == 0)
            break;
        if (c->rx_lo > 0) {
            memmove(c->rxbuf, c->rxbuf + c->rx_lo, c->rx_hi - c->rx_lo);
            c->rx_hi -= c->rx_lo;
            c->rx_lo = 0;
        }
        size_t want = c->rx_bulk ? need - (c->rx_hi - c->rx_lo) : SR_TCP_RXBUF - c->rx_hi;
        ssize_t r = recv(c->fd, c->rxbuf + c->rx_hi, want, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                break;
            sr_tcp_on_eof(ctx, c, r < 0 ? errno : 0);
            return;
        }
        c->last_rx_ns = sr_time_ns();
        c->rx_hi += (size_t)r;
        budget = (size_t)r >= budget ? 0 : budget - (size_t)r;
    }
    if (c->state == SR_TCP_DEAD)
        return;
    if (!c->tx_head)
        sr_tcp_arm(ctx, c);
    else if (sr_tcp_flush(ctx, c) == 1 && budget > 0)
        goto again;
}

static void sr_tcp_accept(sr_tl_ctx_t *ctx, sr_tcp_lsn_t *l)
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

static void sr_tcp_conn_event(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, uint32_t events)
{
    if (events & EPOLLOUT) {
        if (sr_tcp_flush(ctx, c) == 1)
            events |= EPOLLIN;
    }
    if (c->state != SR_TCP_DEAD && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
        sr_tcp_rx(ctx, c);
}

/* Target side events; io_lock held.  Returns how many it acted on. */
static int sr_tcp_handle_in(sr_tl_ctx_t *ctx, struct epoll_event *ev, int n)
{
    int act = 0;
    for (int i = 0; i < n; i++) {
        int kind = *(int *)ev[i].data.ptr;
        if (kind == SR_TCP_K_LSN) {
            sr_tcp_accept(ctx, ev[i].data.ptr);
            continue;
        }
        if (kind != SR_TCP_K_CONN)
            continue;
        sr_tcp_conn_t *c = ev[i].data.ptr;
        if (c->state == SR_TCP_DEAD)
            continue;  /* an event fetched before the connection ended */
        act++;
        sr_tcp_conn_event(ctx, c, ev[i].events);
    }
    return act;
}

/* Handshakes that take too long; io_lock held. */
static void sr_tcp_check_handshakes(sr_tl_ctx_t *ctx, uint64_t now)
{
    ctx->next_check_ns = now + SR_TCP_CHECK_NS;
    for (sr_tcp_conn_t *c = ctx->conns; c; c = c->next) {
        if (c->state != SR_TCP_DEAD && c->state != SR_TCP_UP && now > c->deadline_ns) {
            sr_warn("tcp: connection from %s did not complete its handshake in %llu s: closed",
                    c->name, SR_TCP_HS_TIMEOUT_NS / 1000000000ull);
            sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TIMEOUT);
        }
    }
}

/* Peers that stopped answering our requests. */
static void sr_tcp_check_lanes(sr_tl_ctx_t *ctx, uint64_t now)
{
    ctx->next_out_check_ns = now + SR_TCP_CHECK_NS;
    for (sr_tcp_conn_t *c = ctx->out_conns; c; c = c->next) {
        if (c->state != SR_TCP_UP || c->nops == 0 || now - c->last_rx_ns <= ctx->dead_ns)
            continue;
        sr_tl_ep_t *ep = c->ep;
        /* A dead link resets nothing: silence is all there is to see.  The
         * whole peer goes, so the core does not wait on its other lanes one
         * timeout after another. */
        sr_error("tcp: PE %d (%s) has not answered for %llu ms with %u requests pending: "
                 "its connections are closed", ep->pe, c->name,
                 (unsigned long long)((now - c->last_rx_ns) / 1000000), c->nops);
        ep->gone = 1;
        for (int l = 0; l < ep->nlanes; l++)
            if (ep->lanes[l])
                sr_tcp_conn_fail(ctx, ep->lanes[l], SYMRAIL_ERR_PEER_GONE);
    }
}

/* ---- data path ----------------------------------------------------------------------- */

static sr_tcp_op_t *sr_tcp_op_get(sr_tl_ctx_t *ctx)
{
    sr_tcp_op_t *op = sr_pool_get(&ctx->ops);
    if (sr_unlikely(op == NULL))
        return NULL;
    memset(op, 0, sizeof(*op));
    op->tx.kind = SR_TCP_TX_OP;
    op->tx.hlen = SR_TCP_HDR_LEN;
    return op;
}

/* Only after the op's reply (so its tx has left the send queue) or after
 * its connection failed (which drops the queue first). */
static void sr_tcp_op_put(sr_tl_ctx_t *ctx, sr_tcp_op_t *op)
{
    sr_pool_put(&ctx->ops, op);
}

/* Posts request `op` (frame `f`, `len` data bytes in flight) on a lane. */
static symrail_status_t sr_tcp_submit(sr_tl_ep_t *ep, int lane, sr_tcp_op_t *op,
                                      sr_tcp_frame_t *f, size_t len)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (sr_unlikely(lane < 0 || lane >= ep->nlanes))
        return SYMRAIL_ERR_INVALID;
    sr_tcp_conn_t *c = ep->lanes[lane];
    if (sr_unlikely(c == NULL || c->state != SR_TCP_UP))
        return __atomic_load_n(&ctx->bye[ep->pe], __ATOMIC_RELAXED) || ep->gone
                   ? SYMRAIL_ERR_PEER_GONE : SYMRAIL_ERR_TRANSPORT;
    if (c->nops >= ctx->max_ops || (c->nops > 0 && c->inflight + len > ctx->max_inflight)) {
        ctx->n_full++;
        return SYMRAIL_ERR_AGAIN;
    }
    f->id = op->id = c->next_id++;
    sr_tcp_frame_encode(f, op->tx.hdr);
    op->op = f->op;
    op->len = len;
    op->next = NULL;
    if (c->nops == 0)
        c->last_rx_ns = sr_time_ns();  /* the silence to time starts now */
    if (c->pend_tail)
        c->pend_tail->next = op;
    else
        c->pend_head = op;
    c->pend_tail = op;
    c->nops++;
    c->inflight += len;
    int idle = c->tx_head == NULL;
    sr_tcp_enqueue(c, &op->tx);
    if (idle)
        sr_tcp_flush(ctx, c);
    /* Slices only: the core retries those, not atomics. */
    if (sr_unlikely(ctx->fault_lane == lane) && f->op != SR_TCP_OP_AMO &&
        ++c->posted == ctx->fault_after && c->state == SR_TCP_UP) {
        sr_warn("tcp: lane %d to PE %d (%s) is down: test fault hook (SYMRAIL_FAULT_QP_ERROR)",
                lane, ep->pe, c->name);
        sr_tcp_conn_fail(ctx, c, SYMRAIL_ERR_TRANSPORT);
    }
    ctx->n_posted++;
    if (f->op != SR_TCP_OP_AMO && lane < SR_TCP_MAX_LANES) {
        ctx->lane_slices[lane]++;
        ctx->lane_bytes[lane] += len;
    }
    /* Failed on the way out or not: the outcome arrives through progress(). */
    return SR_TL_INPROGRESS;
}

static symrail_status_t sr_tcp_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                                   uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (ep->self) {
        memcpy(ctx->base[region] + roff, src, len);
        return SYMRAIL_OK;
    }
    if (len > SR_TCP_MAX_PAYLOAD)
        return SYMRAIL_ERR_INVALID;
    sr_tcp_op_t *op = sr_tcp_op_get(ctx);
    if (op == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_tcp_frame_t f = { .op = SR_TCP_OP_PUT, .region = region, .plen = (uint32_t)len,
                         .off = roff };
    op->comp = comp;
    op->tx.data = src;
    op->tx.dlen = len;
    symrail_status_t st = sr_tcp_submit(ep, lane, op, &f, len);
    if (st != SR_TL_INPROGRESS)
        sr_tcp_op_put(ctx, op);
    return st;
}

static symrail_status_t sr_tcp_get(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region,
                                   uint64_t roff, size_t len, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (ep->self) {
        memcpy(dst, ctx->base[region] + roff, len);
        return SYMRAIL_OK;
    }
    if (len > SR_TCP_MAX_PAYLOAD)
        return SYMRAIL_ERR_INVALID;
    sr_tcp_op_t *op = sr_tcp_op_get(ctx);
    if (op == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_tcp_frame_t f = { .op = SR_TCP_OP_GET, .region = region, .off = roff, .a = len };
    op->comp = comp;
    op->dst = dst;
    symrail_status_t st = sr_tcp_submit(ep, lane, op, &f, len);
    if (st != SR_TL_INPROGRESS)
        sr_tcp_op_put(ctx, op);
    return st;
}

static symrail_status_t sr_tcp_atomic(sr_tl_ep_t *ep, int lane, sr_tl_amo_t kind, uint32_t region,
                                      uint64_t roff, uint64_t operand, uint64_t compare,
                                      uint64_t *result_p, sr_tl_comp_t *comp)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if ((unsigned)kind > SR_TCP_AMO_MAX)
        return SYMRAIL_ERR_UNSUPPORTED;
    if (ep->self) {
        uint64_t old = sr_tcp_amo_apply((uint64_t *)(void *)(ctx->base[region] + roff),
                                        (uint8_t)kind, operand, compare);
        if (result_p)
            *result_p = old;
        return SYMRAIL_OK;
    }
    sr_tcp_op_t *op = sr_tcp_op_get(ctx);
    if (op == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_tcp_frame_t f = { .op = SR_TCP_OP_AMO, .sub = (uint8_t)kind, .region = region,
                         .off = roff, .a = operand, .b = compare };
    op->comp = comp;
    op->dst = result_p;
    symrail_status_t st = sr_tcp_submit(ep, lane, op, &f, 0);
    if (st != SR_TL_INPROGRESS)
        sr_tcp_op_put(ctx, op);
    /* Nothing was sent: the core may pick a lane that is still up. */
    if (st == SYMRAIL_ERR_TRANSPORT && sr_tcp_ep_check(ep) == SYMRAIL_OK)
        st = SYMRAIL_ERR_AGAIN;
    return st;
}

static symrail_status_t sr_tcp_notify(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                      size_t len)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    symrail_status_t st = SYMRAIL_OK;
    if (len > SR_TCP_NOTIFY_MAX || len > SYMRAIL_NOTIFY_MAX_PAYLOAD)
        return SYMRAIL_ERR_INVALID;
    if (ep->self) {
        sr_tcp_msg_push(ctx, ep->pe, tag, payload, (uint32_t)len);
        return SYMRAIL_OK;
    }
    /* Always the first lane that is up: one connection keeps them in order. */
    sr_tcp_conn_t *c = NULL;
    for (int l = 0; l < ep->nlanes && c == NULL; l++)
        if (ep->lanes[l] && ep->lanes[l]->state == SR_TCP_UP)
            c = ep->lanes[l];
    sr_tcp_txbuf_t *b;
    if (c == NULL) {
        st = SYMRAIL_ERR_PEER_GONE;
    } else if (ep->n_sent - ep->n_credit >= ctx->params.env->notify_slots) {
        st = SYMRAIL_ERR_AGAIN;  /* the receiver has not consumed enough yet */
    } else if ((b = sr_tcp_txbuf_get(ctx, c)) == NULL) {
        st = SYMRAIL_ERR_NOMEM;
    } else {
        sr_tcp_frame_t f = { .op = SR_TCP_OP_NOTIFY, .plen = (uint32_t)len, .a = tag };
        sr_tcp_frame_encode(&f, b->tx.hdr);
        if (len)
            memcpy(b->inl, payload, len);
        b->tx.data = (const char *)b->inl;
        b->tx.dlen = len;
        int idle = c->tx_head == NULL;
        sr_tcp_enqueue(c, &b->tx);
        ep->n_sent++;
        if (idle)
            sr_tcp_flush(ctx, c);
    }
    return st;
}

/* Tells senders how many of their notifications were handed to the core. */
static void sr_tcp_return_credits(sr_tl_ctx_t *ctx)
{
    pthread_mutex_lock(&ctx->io_lock);
    for (int pe = 0; pe < ctx->params.n_pes; pe++) {
        sr_tcp_conn_t *c = ctx->credit_conn[pe];
        if (ctx->consumed[pe] == ctx->reported[pe] || c == NULL || c->state != SR_TCP_UP)
            continue;
        sr_tcp_frame_t f = { .op = SR_TCP_OP_CREDIT, .a = ctx->consumed[pe] };
        int idle = c->tx_head == NULL;
        if (sr_tcp_reply(ctx, c, &f, NULL) == 0) {
            ctx->reported[pe] = ctx->consumed[pe];
            if (idle)
                sr_tcp_flush(ctx, c);
        }
    }
    pthread_mutex_unlock(&ctx->io_lock);
}

static int sr_tcp_progress(sr_tl_ctx_t *ctx)
{
    struct epoll_event ev[SR_TCP_EVENTS];
    int count = 0, in_ready = 0;
    int n = epoll_wait(ctx->ep_out, ev, SR_TCP_EVENTS, 0);
    for (int i = 0; i < n; i++) {
        sr_tcp_conn_t *c = ev[i].data.ptr;
        if (*(int *)ev[i].data.ptr == SR_TCP_K_IN) {
            in_ready = 1;
        } else if (c->state != SR_TCP_DEAD) {
            sr_tcp_conn_event(ctx, c, ev[i].events);
            count++;
        }
    }
    /* The thread may be at it already: then it needs no help. */
    if (in_ready && pthread_mutex_trylock(&ctx->io_lock) == 0) {
        n = epoll_wait(ctx->ep_in, ev, SR_TCP_EVENTS, 0);
        if (n > 0)
            count += sr_tcp_handle_in(ctx, ev, n);
        pthread_mutex_unlock(&ctx->io_lock);
    }
    uint64_t now = sr_time_ns();
    if (now >= ctx->next_out_check_ns)
        sr_tcp_check_lanes(ctx, now);

    sr_tcp_op_t *op = ctx->done_head;
    ctx->done_head = ctx->done_tail = NULL;
    while (op) {
        sr_tcp_op_t *next = op->next;
        sr_tl_comp_t *comp = op->comp;
        symrail_status_t status = op->status;
        sr_tcp_op_put(ctx, op);
        ctx->n_completed++;
        comp->cb(comp, status);
        op = next;
        count++;
    }
    if (__atomic_load_n(&ctx->mq_head, __ATOMIC_RELAXED) != NULL) {
        pthread_mutex_lock(&ctx->mq_lock);
        sr_tcp_msg_t *m = ctx->mq_head;
        __atomic_store_n(&ctx->mq_head, NULL, __ATOMIC_RELAXED);
        ctx->mq_tail = NULL;
        pthread_mutex_unlock(&ctx->mq_lock);
        int credits = 0;
        while (m) {
            sr_tcp_msg_t *next = m->next;
            ctx->params.notify_cb(ctx->params.cb_arg, m->src, m->tag, m->payload, m->len);
            if (m->src != ctx->params.my_pe) {
                ctx->consumed[m->src]++;
                credits = 1;
            }
            free(m);
            m = next;
            count++;
        }
        if (credits)
            sr_tcp_return_credits(ctx);
    }
    /* Nothing to do: whoever would give us something to do (our own thread,
     * maybe holding io_lock; peers; softirqs) may be waiting for this CPU.
     * Spinning on would keep it from them for a whole time slice, which cost
     * ms per round trip with more threads than cores. */
    if (count == 0)
        sched_yield();
    return count;
}

static symrail_status_t sr_tcp_ep_check(sr_tl_ep_t *ep)
{
    sr_tl_ctx_t *ctx = ep->ctx;
    if (ep->self || __atomic_load_n(&ctx->bye[ep->pe], __ATOMIC_RELAXED))
        return SYMRAIL_OK;  /* a peer that finalized is not a failure */
    if (ep->local && !sr_pid_alive(ep->pid))
        return SYMRAIL_ERR_PEER_GONE;
    for (int l = 0; l < ep->nlanes; l++) {
        sr_tcp_conn_t *c = ep->lanes[l];
        if (c && c->state == SR_TCP_UP)
            return SYMRAIL_OK;
    }
    return SYMRAIL_ERR_PEER_GONE;
}

static void sr_tcp_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p)
{
    stats_p->slices_posted += ctx->n_posted;
    stats_p->completions += ctx->n_completed;
    stats_p->qp_full += ctx->n_full;
    for (uint32_t l = 0; l < ctx->nlanes && stats_p->nrails < SYMRAIL_STATS_MAX_RAILS; l++) {
        __typeof__(stats_p->rails[0]) *out = &stats_p->rails[stats_p->nrails++];
        snprintf(out->name, sizeof(out->name), "tcp:lane%u", l);
        out->bytes = ctx->lane_bytes[l];
        out->slices = ctx->lane_slices[l];
    }
}

static uint32_t sr_tcp_wait_prepare(sr_tl_ctx_t *ctx)
{
    __atomic_fetch_add(&ctx->waiters, 1, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&ctx->seq, __ATOMIC_SEQ_CST);
}

static void sr_tcp_wait(sr_tl_ctx_t *ctx, uint32_t token, uint64_t timeout_ns)
{
    sr_futex_wait(&ctx->seq, token, timeout_ns);
}

static void sr_tcp_wait_done(sr_tl_ctx_t *ctx)
{
    __atomic_fetch_sub(&ctx->waiters, 1, __ATOMIC_SEQ_CST);
}

const sr_tl_ops_t sr_tl_tcp_ops = {
    .name         = "tcp",
    .init         = sr_tcp_init,
    .fini         = sr_tcp_fini,
    .attr         = sr_tcp_attr,
    .mem_reg      = sr_tcp_mem_reg,
    .addr_pack    = sr_tcp_addr_pack,
    .reachable    = sr_tcp_reachable,
    .connect      = sr_tcp_connect,
    .wireup_done  = sr_tcp_wireup_done,
    .disconnect   = sr_tcp_disconnect,
    .ptr          = sr_tl_no_ptr,
    .ep_lanes     = sr_tcp_ep_lanes,
    .put          = sr_tcp_put,
    .get          = sr_tcp_get,
    .atomic       = sr_tcp_atomic,
    .notify       = sr_tcp_notify,
    .flush        = sr_tl_flush_nothing,
    .ep_post_end  = sr_tl_ep_nothing,
    .notify_release = sr_tl_ep_nothing,
    .ep_heard     = sr_tl_heard_unknown,
    .progress     = sr_tcp_progress,
    .ep_check     = sr_tcp_ep_check,
    .stats        = sr_tcp_stats,
    .wait_prepare = sr_tcp_wait_prepare,
    .wait         = sr_tcp_wait,
    .wait_done    = sr_tcp_wait_done,
};
