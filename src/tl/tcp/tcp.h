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
 * SYMRAIL_JOB_SECRET (e.g. under mpirun or srun) the key is SHA-256 of random
 * bytes that PE 0 drew and the launcher's PMIx server handed to the job's
 * processes with the address exchange (params.job_key_late, job_key op): a
 * hello that comes before this PE has it waits (SR_TCP_HS_KEY).  Where the
 * launcher could not carry it, the key is derived from the job id and a
 * random job key that Open MPI gives every process of the job
 * (OMPI_MCA_*_precondition_transports), falling back to the job id and user
 * id only.  That is weaker: anyone who can read the job's environment, or
 * guess its job id in the fallback case, can connect; it is logged as a warning.
 * SYMRAIL_JOB_SECRET set but empty is an error.
 * A target checks every request against its registered regions before it
 * touches memory; a malformed or out-of-bounds frame closes that connection
 * and is logged, and the process goes on.  A put or get of a segment names
 * the owner's id and generation; one that is not registered (any more) is
 * answered STALE and the connection goes on (seg.c).
 *
 * Threads.  The target side (listening sockets and the connections peers
 * opened) is served by a progress thread that waits in epoll: it applies
 * puts and atomics, sends get data and acks, and queues notifications,
 * without the application's help; progress() serves it too when it can take
 * io_lock, which keeps latency low while the application polls.  The
 * initiator side (our lanes: posting requests, reading their replies) is
 * touched by the application's threads only, in the ops and progress();
 * replies wait in the socket until then.  The thread never calls into the
 * core: notifications are queued under mq_lock and delivered by progress().  It wakes an application sleeping in wait() for atomics,
 * notifications and small puts (flags), not for every slice of a bulk put.
 * A launcher that binds a PE to one core makes the thread share it with the
 * application; bulk bandwidth then drops to about half.
 *
 * Application threads (params.thread_multiple; without it every lock below
 * is skipped by one predictable branch, and the initiator side is the
 * single thread's).  Each lane (connection) has its own lock, taken by a
 * post for its send queue, its pending requests, its counters and its pool
 * of requests, and by progress() while it reads that lane's replies: two
 * threads posting to two lanes share no lock.  The request pool is per
 * lane because a request lives and dies on its lane: a post takes one
 * under the lane lock it holds anyway, and whoever finishes one (any thread
 * in progress) pushes it onto the lane's lock-free return stack, which the
 * next post that finds its pool empty takes whole (push and take-all only,
 * so no ABA).  Finished requests go onto one lock-free stack of the
 * transport (done), which any caller of progress() empties and completes,
 * so nothing finished waits behind a busy progress.  The reading itself
 * (epoll of our lanes, the target side's io_lock, the timeout checks, the
 * lane events) is for one caller at a time: progress_lock, taken with
 * try-lock, so a second caller does not wait but only completes what is
 * done.  Order: progress_lock, then a lane lock or io_lock, never two lane
 * locks; comp->cb and lane_cb run with no lock held.  Notifications are
 * delivered by one caller at a time (msg_busy, a flag nobody waits for), so
 * that they reach the core in the order they came.  Fields read without
 * the lock that guards them (a lane's state, an endpoint's unresponsive
 * mark and notification counts, heard times, counters) are __atomic.
 *
 * Zero copy: a put is written with one sendmsg of header and the caller's
 * buffer (the frames of a run of puts posted with SR_TL_COMP_MORE, up to
 * SR_TCP_GATHER of them, with one sendmsg), and the target reads the
 * payload straight into its heap after the bounds check (the tail of one
 * below SR_TCP_BULK, and up to SR_TCP_RXBUF of what follows into its buffer); get data is sent from the heap and read into the caller's
 * buffer.  Backpressure: a lane takes a request only while it has fewer than
 * SYMRAIL_TCP_MAX_OPS requests and SYMRAIL_TCP_MAX_INFLIGHT bytes in flight
 * (SYMRAIL_ERR_AGAIN otherwise); a target stops reading a connection whose
 * replies pile up.
 *
 * Faults.  A connection that ends, resets or breaks the protocol fails its
 * pending operations at once and its lane goes down (weight 0); the core
 * retries slices on another lane.  A peer that answers nothing for 7/8 of
 * SYMRAIL_OP_TIMEOUT while operations wait is unresponsive: those
 * operations fail with SYMRAIL_ERR_PEER_UNRESPONSIVE, and so do new ones
 * until anything arrives from it again, but its connections stay: a stopped
 * process (SIGSTOP) may resume, and then it works again.  The abandoned
 * requests stay matched with their replies, which go nowhere (a put still
 * queued sends a copy of its data).  Only a connection that ends, resets or
 * breaks the protocol (the kernel's TCP_USER_TIMEOUT ends a dead link) makes
 * the peer gone.  The thread sends a PING on every idle connection peers
 * opened every SYMRAIL_HEARTBEAT, so that ep_heard stays fresh while nothing
 * is pending.  A PE that finalizes says BYE first, so its peers do not take
 * its departure for a failure.
 */
#ifndef SR_TL_TCP_H
#define SR_TL_TCP_H

#include "tl/tl.h"
#include "util/atomic.h"
#include "util/copy.h"
#include "util/doorbell.h"
#include "tl/tcp/frame.h"
#include "util/log.h"
#include "util/msgq.h"
#include "util/pool.h"
#include "util/status.h"
#include "util/sys.h"
#include "util/crypto.h"

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

#define SR_TCP_ADDR_MAGIC    0x7372746370320000ull  /* "srtcp2" */
#define SR_TCP_MAX_ADDRS     8
#define SR_TCP_MAX_REGIONS   SR_TCP_REGION_SEG0  /* heap and data; segments apart */
#define SR_TCP_RXBUF         (64u * 1024)
#define SR_TCP_HS_TIMEOUT_NS (10ull * 1000 * 1000 * 1000)
#define SR_TCP_MAX_HS        64          /* connections in handshake at once */
#define SR_TCP_REPLY_HIWAT   (32u << 20) /* queued reply bytes: stop reading requests */
#define SR_TCP_IO_BUDGET     (4u << 20)  /* bytes read from one connection per pass */
/* A payload this big is read in place, one frame a recv; smaller ones (KV
 * blocks of 4-32 KiB) are read with what follows them, several frames a
 * recv, and copied from the buffer: a copy from cache costs less than a
 * recvmsg a frame. */
#define SR_TCP_BULK          65536
#define SR_TCP_FLAG_MAX      256         /* puts up to this size wake a sleeping wait */
#define SR_TCP_EVENTS        64
#define SR_TCP_GATHER        32          /* frames held back (SR_TL_COMP_MORE) for one send */
#define SR_TCP_IOV           128         /* iovecs a send takes: two a frame */
#define SR_TCP_TICK_MS       100
#define SR_TCP_CHECK_NS      (10ull * 1000 * 1000)
#define SR_TCP_LINGER_MS     300         /* finalize: wait for peers' goodbyes */
#define SR_TCP_NAME_LEN      48

enum { SR_TCP_K_CONN = 1, SR_TCP_K_LSN, SR_TCP_K_WAKE, SR_TCP_K_IN };
/* HS_KEY: a PE's hello came before this PE had the job key; the connection
 * is held (not read) until sr_tcp_job_key_set answers it. */
enum { SR_TCP_HS_HELLO, SR_TCP_HS_AUTH, SR_TCP_UP, SR_TCP_DEAD, SR_TCP_HS_KEY };
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
    uint64_t    instance;   /* random per process: names it in segment keys */
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
    char                *copy;      /* get data copied from a segment that went */
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
    uint16_t          rkey;     /* the segment key it goes through, or 0 */
    symrail_status_t  status;
    uint64_t          t_ns;     /* posted at */
    struct sr_tcp_conn *conn;   /* the lane whose pool it came from */
    char             *copy;     /* abandoned put: its data, copied from the caller */
} sr_tcp_op_t;

typedef struct {
    int kind;
    int fd;
    sr_tcp_ip_t addr;
} sr_tcp_lsn_t;

/* Segments (seg.c).  A registered segment of ours, and a peer's segment
 * key unpacked on an endpoint; both in chunks that never move. */
#define SR_TCP_LIVE         (1ull << 32)  /* key: live | generation */
#define SR_TCP_SEG_CHUNK    1024
#define SR_TCP_SEG_NCHUNKS  (SR_TCP_REGION_MAX / SR_TCP_SEG_CHUNK)
#define SR_TCP_RKEY_CHUNK   256
#define SR_TCP_RKEY_NCHUNKS (65536 / SR_TCP_RKEY_CHUNK)

typedef struct sr_tcp_seg {
    uint64_t key;       /* SR_TCP_LIVE | generation while registered, else 0 (atomic) */
    char    *base;
    uint64_t len;
} sr_tcp_seg_t;

typedef struct sr_tcp_rkey {
    uint64_t key;       /* SR_TCP_LIVE | the owner's generation while unpacked (atomic) */
    uint32_t region;    /* the owner's id */
    uint32_t logged;    /* a stale access was logged (atomic) */
    uint64_t len;
} sr_tcp_rkey_t;

typedef struct sr_tcp_conn {
    int                 kind;      /* SR_TCP_K_CONN: first, like sr_tcp_lsn_t */
    int                 fd;
    uint8_t             is_out;    /* we dialed: we send requests, read replies */
    uint8_t             state;
    uint8_t             rx_state;
    uint8_t             throttled;
    uint8_t             bye;
    uint8_t             rx_bulk;   /* big payloads come: read one header at a time */
    uint8_t             rx_discard; /* the payload's request was abandoned, or its
                                     * segment is stale: drop it */
    uint8_t             rx_stale;   /* the put being read is answered STALE */
    uint32_t            events;
    uint8_t             mt;        /* lock: several application threads (out only) */
    int                 pe;
    int                 lane;
    char                name[SR_TCP_NAME_LEN];
    struct sr_tl_ep    *ep;
    struct sr_tcp_conn *next;      /* every connection of its side */
    uint64_t            deadline_ns;
    uint8_t             hello[SR_TCP_HELLO_LEN];
    uint8_t             nonce_s[SR_TCP_NONCE_LEN];
    uint8_t             hs_key[SR_TCP_KEY_LEN];  /* a connected peer's (peer.c) */
    uint32_t            peer_id;   /* its connection id; 0: a PE of the job */
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
    uint32_t            tx_held;   /* frames queued behind SR_TL_COMP_MORE, not yet
                                    * offered to the socket: ep_post_end sends them
                                    * (atomic: it peeks without the lock) */
    /* requests of ours, oldest first */
    sr_tcp_op_t        *pend_head, *pend_tail;
    uint32_t            nops;
    size_t              inflight;
    uint64_t            next_id;
    uint64_t            posted;
    /* Our lanes: everything above, and the pools and counters below, under
     * `lock` when mt (see "Application threads" above). */
    pthread_mutex_t     lock;
    sr_pool_t           ops;        /* sr_tcp_op_t */
    sr_tcp_op_t        *ops_back;   /* finished ones, back from any thread (atomic) */
    struct sr_tcp_txbuf *txb_free;  /* notifications */
    uint64_t            n_posted, n_full, n_slices, n_bytes;  /* read by stats (atomic) */
} sr_tcp_conn_t;

struct sr_tl_ep {
    struct sr_tl_ctx *ctx;
    int               pe;
    int               pid;
    int               self;
    int               local;
    int               nlanes;
    sr_tcp_conn_t    *lanes[SR_TCP_MAX_LANES];
    uint64_t          n_sent;       /* notifications sent (atomic) */
    uint64_t          n_credit;     /* ... that the peer has consumed (atomic) */
    uint32_t          lane_gen[SR_TCP_MAX_LANES];  /* grows with every change of a lane */
    uint32_t          lanes_down;   /* lanes that went down, not yet told to the core
                                     * (atomic) */
    int               unresp;       /* requests failed as unresponsive ... (atomic) */
    uint64_t          unresp_ns;    /* ... at this time, and nothing heard since */
    uint64_t          instance;     /* the peer process's (address blob) */
    struct sr_tcp_rkey *rkeys[SR_TCP_RKEY_NCHUNKS];  /* keys unpacked here (atomic) */
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
    int             sockbuf_told;   /* SYMRAIL_TCP_SOCKBUF capped: said once */
    int             stop;

    /* The target side: served by the thread, and by progress() when it can
     * take the lock. */
    pthread_mutex_t io_lock;
    int             io_wanted;      /* someone waits for io_lock: the thread lets go
                                     * between connections (atomic) */
    sr_tcp_conn_t  *conns;          /* connections peers opened */
    int             nhs;
    int             key_late;       /* the job key comes from the core (params) ... */
    int             key_ready;      /* ... and is in `key` (io_lock) */
    sr_tcp_txbuf_t *txb_free;
    sr_tcp_conn_t **credit_conn;    /* [n_pes]: where to return notify credits */
    char           *base[SR_TCP_MAX_REGIONS];
    uint64_t        rlen[SR_TCP_MAX_REGIONS];
    uint32_t        nregions;
    /* Segments (seg.c): written by mem_reg under seg_lock, cleared by
     * mem_dereg under io_lock too, read by the target under io_lock. */
    struct sr_tcp_seg *segs[SR_TCP_SEG_NCHUNKS];  /* (atomic) */
    pthread_mutex_t seg_lock;
    uint64_t        instance;
    uint64_t        next_check_ns;
    int             wake_waiter;    /* applied something a sleeping wait may be for */

    pthread_mutex_t mq_lock;        /* notifications the thread hands to progress() */
    sr_msgq_t       mq;
    int             mq_ready;       /* mq has messages: peeked without the lock (atomic) */
    uint8_t        *bye;            /* [n_pes]: the PE finalized (atomic) */
    uint64_t       *heard;          /* [n_pes]: anything arrived from the PE (atomic) */
    uint64_t        hb_ns;          /* heartbeat period; 0: none */
    uint64_t        next_hb_ns;

    /* The initiator side: our lanes, touched by the application's threads
     * (connect, the ops, progress); see "Application threads" above. */
    int             mt;             /* params.thread_multiple */
    pthread_mutex_t progress_lock;  /* mt: one reader of our lanes at a time */
    int             msg_busy;       /* mt: one deliverer of notifications at a time */
    sr_tl_ep_t    **eps;            /* [n_pes] (atomic: published by connect) */
    sr_tcp_conn_t  *out_conns;      /* grows at the head only (atomic) */
    sr_tcp_op_t    *done;           /* finished requests, newest first (atomic when mt) */
    uint64_t        next_out_check_ns;  /* progress_lock */
    int             lane_events;    /* some ep has lanes_down (atomic) */
    uint64_t       *consumed, *reported;   /* [n_pes]: notifications delivered; io_lock */
    uint64_t        n_completed;    /* atomic when mt */
    int             fault_lane;
    uint64_t        fault_after;

    /* Connected peers (peer.c): [params.peers_max], PE n_pes + i; io_lock. */
    struct sr_tcp_cpeer *cpeers;
    int             n_all;          /* n_pes + peers_max: the per-PE arrays' size */

    /* sleeping waits (wait_prepare/wait) */
    sr_doorbell_t   bell;         /* the application sleeps on it in wait() */
    int             nap;          /* this wait may miss a wake-up: nap only (atomic) */
};

/* iface.c */
void sr_tcp_kick(sr_tl_ctx_t *ctx);

/* net.c */
const char *sr_tcp_ipstr(uint32_t ip, uint16_t port, char *buf, size_t len);
/* SYMRAIL_TCP_IF, a comma list of interface names and IPv4 CIDRs (util/strlist
 * rules): 1 when an entry selects the interface, 0 when none does, -1 when an
 * entry before the first match is neither a name nor a CIDR. */
int sr_tcp_if_match(const char *filter, const char *ifname, uint32_t ip);
/* 0 when some entry is neither a name nor a CIDR. */
int sr_tcp_if_valid(const char *filter);
symrail_status_t sr_tcp_listen(sr_tl_ctx_t *ctx);
void sr_tcp_write_addr_file(sr_tl_ctx_t *ctx);
symrail_status_t sr_tcp_addr_pack(sr_tl_ctx_t *ctx, void *buf, size_t *len_p);
int sr_tcp_reachable(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len);
void sr_tcp_sockbuf(sr_tl_ctx_t *ctx, int fd);
void sr_tcp_sockopts(sr_tl_ctx_t *ctx, int fd);
int sr_tcp_rank_addrs(sr_tl_ctx_t *ctx, int pe, const sr_tcp_addr_t *a, int *order,
                      int *npref_p);

/* conn.c: receiving */
void sr_tcp_protocol_error(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const char *why);

/* cm.c */
symrail_status_t sr_tcp_derive_key(sr_tl_ctx_t *ctx);
symrail_status_t sr_tcp_job_key_set(sr_tl_ctx_t *ctx, const uint8_t *key, const char *source);
void sr_tcp_goodbye(sr_tl_ctx_t *ctx);
symrail_status_t sr_tcp_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                sr_tl_ep_t **ep_p);
void sr_tcp_wireup_done(sr_tl_ctx_t *ctx);
void sr_tcp_disconnect(sr_tl_ep_t *ep);
int sr_tcp_on_handshake(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const uint8_t *msg);
void sr_tcp_accept(sr_tl_ctx_t *ctx, sr_tcp_lsn_t *l);
void sr_tcp_check_handshakes(sr_tl_ctx_t *ctx, uint64_t now);

/* conn.c */
void sr_tcp_conn_close_fd(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
void sr_tcp_tx_release(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, sr_tcp_tx_t *tx);
sr_tcp_conn_t *sr_tcp_conn_new(sr_tl_ctx_t *ctx, int fd, int is_out, const char *name);
void sr_tcp_conn_fail(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, symrail_status_t status);
void sr_tcp_conn_free(sr_tcp_conn_t *c);
void sr_tcp_done_push(sr_tl_ctx_t *ctx, sr_tcp_op_t *op, symrail_status_t status);
sr_tcp_op_t *sr_tcp_done_take(sr_tl_ctx_t *ctx);
int sr_tcp_flush(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
/* c's queue is ours to send now: empty, or holding frames that no EPOLLOUT
 * waits for.  c's lock (or io_lock) held. */
static inline int sr_tcp_tx_idle(const sr_tcp_conn_t *c)
{
    return c->tx_head == NULL || c->tx_held != 0;
}
void sr_tcp_enqueue(sr_tcp_conn_t *c, sr_tcp_tx_t *tx);
sr_tcp_txbuf_t *sr_tcp_txbuf_get(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
int sr_tcp_reply(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const sr_tcp_frame_t *f,
                 const void *data);
void sr_tcp_conn_event(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, uint32_t events);
/* Our lanes' lock (see "Application threads"). */
static inline void sr_tcp_lock(sr_tcp_conn_t *c)
{
    if (sr_unlikely(c->mt))
        pthread_mutex_lock(&c->lock);
}

static inline void sr_tcp_unlock(sr_tcp_conn_t *c)
{
    if (sr_unlikely(c->mt))
        pthread_mutex_unlock(&c->lock);
}

/* A connection's state where its lock is not held. */
static inline int sr_tcp_up(const sr_tcp_conn_t *c)
{
    return c && __atomic_load_n(&c->state, __ATOMIC_RELAXED) == SR_TCP_UP;
}

/* A counter that stats reads while its owner (holding the lane lock) adds. */
static inline void sr_tcp_count(uint64_t *counter, uint64_t n)
{
    __atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

/* Something arrived on c: its peer is alive. */
static inline void sr_tcp_heard(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, uint64_t now)
{
    c->last_rx_ns = now;
    if (c->pe >= 0)
        __atomic_store_n(&ctx->heard[c->pe], now, __ATOMIC_RELAXED);
}

/* peer.c: connected peers (tl.h "Connected peers") */
typedef struct sr_tcp_cpeer {
    uint32_t conn_id;   /* 0: the number is free */
    uint8_t  gone;      /* disconnected: the number is not used again */
    uint32_t remote_pe; /* its number in its job (known where we connect) */
    uint8_t  key[SR_TCP_KEY_LEN];
} sr_tcp_cpeer_t;
/* Target side of a connected peer's HELLO: the key to check it with, in
 * c->hs_key; -1 when refused (why in *why_p). */
int sr_tcp_peer_hello(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c, const sr_tcp_hello_t *h,
                      const char **why_p);
/* ... and after its AUTH: the PE number it gets, -1 when none is left. */
int sr_tcp_peer_authed(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
/* connect() for pe >= n_pes: checks addr, takes number pe for the pair;
 * the peer's own address blob in *a. */
symrail_status_t sr_tcp_peer_claim(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                   sr_tcp_addr_t *a);
/* The handshake key of pe (the job's, or the pair's). */
const uint8_t *sr_tcp_peer_key(sr_tl_ctx_t *ctx, int pe);
void sr_tcp_peer_disconnect(sr_tl_ep_t *ep);

/* io_lock for a caller that should not wait behind a busy target (a
 * deregistration): the thread lets go after the connection it is serving
 * and waits for it before it takes the lock again. */
static inline void sr_tcp_io_lock_soon(sr_tl_ctx_t *ctx)
{
    __atomic_fetch_add(&ctx->io_wanted, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&ctx->io_lock);
    __atomic_fetch_sub(&ctx->io_wanted, 1, __ATOMIC_RELAXED);
}

/* target.c */
int sr_tcp_on_request(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
int sr_tcp_request_done(sr_tl_ctx_t *ctx, sr_tcp_conn_t *c);
void sr_tcp_reap(sr_tl_ctx_t *ctx);
void *sr_tcp_thread(void *arg);
void sr_tcp_msg_push(sr_tl_ctx_t *ctx, int src, uint32_t tag, const void *payload,
                     uint32_t len);
int sr_tcp_handle_in(sr_tl_ctx_t *ctx, struct epoll_event *ev, int n);

/* seg.c */
symrail_status_t sr_tcp_mem_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem);
symrail_status_t sr_tcp_mem_dereg(sr_tl_ctx_t *ctx, uint32_t region);
symrail_status_t sr_tcp_mkey_pack(sr_tl_ctx_t *ctx, uint32_t region, void *buf, size_t *len_p);
symrail_status_t sr_tcp_rkey_unpack(sr_tl_ep_t *ep, uint32_t rkey, const void *buf, size_t len);
void sr_tcp_rkey_release(sr_tl_ep_t *ep, uint32_t rkey);
/* The segment (region, generation) of ours: 1 and its base and length, or
 * 0 when it is not registered (stale); io_lock held. */
int sr_tcp_seg_find(sr_tl_ctx_t *ctx, uint32_t region, uint32_t generation, char **base_p,
                    uint64_t *len_p);
/* The live key `rkey` of ep, or NULL. */
const sr_tcp_rkey_t *sr_tcp_rkey_find(const sr_tl_ep_t *ep, uint32_t rkey);
/* An access through rkey was refused as stale: said once per key. */
void sr_tcp_rkey_stale(sr_tl_ep_t *ep, uint32_t rkey);
/* A put (is_put) or get through a key of this PE's own endpoint. */
symrail_status_t sr_tcp_seg_self(sr_tl_ep_t *ep, uint32_t rkey, const sr_tcp_rkey_t *k,
                                 uint64_t off, void *buf, size_t len, int is_put);
void sr_tcp_seg_fini(sr_tl_ctx_t *ctx);
void sr_tcp_rkeys_free(sr_tl_ep_t *ep);

/* ep.c */
int sr_tcp_ep_lanes(sr_tl_ep_t *ep, uint32_t *weights_p, int max);
void sr_tcp_ep_post_end(sr_tl_ep_t *ep);
int sr_tcp_ep_alive(const sr_tl_ep_t *ep);
/* Is the peer gone, as far as this transport can tell?  Its goodbye, or
 * for a peer on this host its process; for a remote one every lane down. */
int sr_tcp_peer_gone(const sr_tl_ep_t *ep);
void sr_tcp_check_lanes(sr_tl_ctx_t *ctx, uint64_t now);
void sr_tcp_op_put(sr_tcp_op_t *op);
symrail_status_t sr_tcp_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                            uint64_t roff, size_t len, sr_tl_comp_t *comp);
symrail_status_t sr_tcp_get(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region,
                            uint64_t roff, size_t len, sr_tl_comp_t *comp);
symrail_status_t sr_tcp_atomic(sr_tl_ep_t *ep, int lane, sr_tl_amo_t kind, uint32_t region,
                               uint64_t roff, uint64_t operand, uint64_t compare,
                               uint64_t *result_p, sr_tl_comp_t *comp);
symrail_status_t sr_tcp_notify(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                               size_t len);
void sr_tcp_return_credits(sr_tl_ctx_t *ctx, int pe, uint64_t more);
void sr_tcp_notify_release(sr_tl_ep_t *ep);
symrail_status_t sr_tcp_ep_check(sr_tl_ep_t *ep);
uint64_t sr_tcp_ep_heard(sr_tl_ep_t *ep);

extern const sr_tl_ops_t sr_tl_tcp_ops;

#endif
