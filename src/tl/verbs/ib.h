/*
 * RDMA verbs transport (RC queue pairs).
 *
 * Rails are the active (device, port) pairs.  Every peer gets
 * SYMRAIL_IB_QPS_PER_PEER data QPs on each rail: the lanes the core sprays
 * slices over.  All QP numbers for all peers travel in this PE's address
 * blob, so one PMIx fence connects the whole job.
 *
 * Backpressure has two levels: a lane accepts a work request only while its
 * QP has fewer than SYMRAIL_IB_MAX_WR outstanding, and only while its device's
 * CQ has room for one more completion; otherwise the op returns
 * SYMRAIL_ERR_AGAIN and the core progresses.  So ibv_post_send never fails
 * for lack of room and a CQ never overruns.  Not every work request is
 * signalled (see rma.c): an unsignalled one keeps its send-queue slot and
 * its CQ entry until a later completion of its QP covers it, since a QP in
 * error completes every WR, signalled or not.
 *
 * Notifications use one more RC QP per peer (on the first rail) with its own
 * CQ; the receive buffers of every peer's QP are one shared receive queue,
 * and send buffers one shared set, so neither grows with the job.  Credits
 * (credits.h): a receiver writes the count of messages it has consumed and
 * the window it keeps posted for the sender into the sender's memory with an
 * RDMA WRITE; a sender never sends past its window, so there is never an
 * RNR.  A progress thread keeps receive buffers posted while the
 * application computes.
 *
 * Threads (params.thread_multiple; tl.h says what callers may do).  QPs are
 * shared by every thread and context: completion is counted per lane (the
 * WR sequence numbers below), so a flush of some lanes needs nothing of
 * the others.  The locks, in the order they may be taken:
 *   dev->polling  a try-flag per CQ: the thread that holds it polls one
 *                 batch and retires it; a second poller skips that CQ.
 *                 Nobody ever waits for it.
 *   ctx->rlock    the repair state machine: one repair pass at a time
 *                 (try-lock), and the repair messages received.
 *   ctx->flock    the list of flushes in progress, every endpoint's replay
 *                 list and late error, and the retiring of a failed WR
 *                 (which may add to a replay list), so that a flush never
 *                 sees a lost put in neither its lane nor the replay list.
 *   lane->lock    everything of one lane: its QP, room (outstanding), the
 *                 sequence numbers, signalling, its wq and hold lists, its
 *                 repair state, its cache of free ops and its counters.
 *                 Two lanes' locks are never held together.
 *   ctx->plock, ctx->nlock  leaves: the op pool behind the lanes' caches;
 *                 the notify channel (shared with the progress thread).
 * Shared without a lock: a device's CQ entries (reserved with an atomic
 * add before a WR is taken, so a CQ never overruns), the bounce and atomic
 * result slots (bitmaps taken with compare-and-swap), and the flags that
 * tell progress there is work (held, replays, repairs_pending,
 * lane_events).  sq_posted, sq_done, sig_seq and hold_head are written
 * under the lane lock and may be read without it.  Completion callbacks are
 * collected while locks are held (sr_ib_done_t) and called after every
 * lock is released; notifications are handed to the core in order by one
 * thread at a time (ctx->dispatching, under nlock, again never waited for).
 * With thread_multiple 0 every lock is skipped behind one predictable
 * branch on ctx->mt.
 */
#ifndef SR_TL_VERBS_IB_H
#define SR_TL_VERBS_IB_H

#include "tl/tl.h"
#include "tl/verbs/credits.h"
#include "tl/verbs/rails.h"
#include "util/log.h"
#include "util/copy.h"
#include "util/msgq.h"
#include "util/pool.h"
#include "util/sys.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SR_IB_MAGIC        0x7372696276310000ull  /* "sribv1" */
#define SR_IB_MAX_RAILS    8
#define SR_IB_MAX_REGIONS  4
#define SR_IB_NAME_LEN     32
#define SR_IB_MSG_HDR      8
#define SR_IB_MSG_SIZE     (SR_IB_MSG_HDR + SR_TL_NOTIFY_MAX)
/* Buffers of a sender's window kept for the transport's own messages. */
#define SR_IB_CTL_RESERVE  2
/* Send buffers, shared by all peers; sends not completed per peer (its
 * notify QP's send queue holds them and the credit writes). */
#define SR_IB_SEND_SLOTS   256
#define SR_IB_NQP_SENDS    16
#define SR_IB_CREDIT_WRITES 4
#define SR_IB_AMO_SLOTS    64
#define SR_IB_BOUNCE_SLOTS 64
#define SR_IB_POLL_BATCH   64
/* Inline puts keep their own copy of the data in their op (posted from
 * there, and re-posted from there should their QP fail). */
#define SR_IB_INLINE_MAX   64
/* Inline data a data QP is created for (qp.c). */
#define SR_IB_INLINE_QP    48
/* A QP signals at least every SR_IB_SIG_EVERY-th work request (more often
 * with a small send queue: every max_wr/4-th of its lane): one completion
 * covers every earlier work request of that QP. */
#define SR_IB_SIG_EVERY    16
/* Ack timeout 4.096 us * 2^16 = 268 ms, 7 retries: a dead peer shows as a
 * completion error in about 2 s, a slow emulated peer does not. */
#define SR_IB_QP_TIMEOUT   16
#define SR_IB_QP_RETRY     7
/* Receiver-not-ready retries, finite (7 would be for ever): with exact
 * credits a notification never finds the shared receive queue empty, and
 * data lanes take no receives, so an RNR is an accounting slip that must
 * fail the QP (logged) rather than stall its sender for good. */
#define SR_IB_QP_RNR_RETRY 6
/* A lane waiting this long for a completion breaks (iface.c,
 * sr_ib_lane_watch): a quarter of SYMRAIL_OP_TIMEOUT within these bounds. */
#define SR_IB_STALL_MIN_NS (4ull * 1000000000ull)
#define SR_IB_STALL_MAX_NS (30ull * 1000000000ull)

/* wr_id of notify-channel work requests: kind in the top bits. */
#define SR_IB_WR_RECV   (1ull << 62)
#define SR_IB_WR_SEND   (2ull << 62)
#define SR_IB_WR_CREDIT (3ull << 62)
#define SR_IB_WR_KIND(x) ((x) & (3ull << 62))

typedef struct sr_ib_dev {
    struct ibv_context *ctx;
    struct ibv_pd      *pd;
    struct ibv_cq      *cq;
    struct ibv_mr      *mr[SR_IB_MAX_REGIONS];
    struct ibv_mr      *scratch_mr;
    char                name[SR_IB_NAME_LEN];
    uint32_t            cq_size;
    _Alignas(SR_CACHE_LINE) uint32_t cq_outstanding;  /* atomic when ctx->mt */
    int                 polling;       /* try-flag: some thread polls cq */
} sr_ib_dev_t;

typedef struct {
    sr_ib_dev_t   *dev;
    int            port;
    int            gid_index;
    union ibv_gid  gid;
    uint16_t       lid;
    uint8_t        mtu;          /* enum ibv_mtu */
    uint8_t        is_eth;
    uint32_t       prefix_bits;  /* RoCE over IPv4: netmask length of its address; 0 unknown */
    uint32_t       weight;
    uint64_t       speed_mbps;
    uint32_t       left_out;     /* PEs it did not reach at connect (qp.c) */
} sr_ib_rail_t;

/*
 * A lane whose QP failed is repaired: it drains (every outstanding WR
 * completes, flushed), then the lower-numbered PE of the pair creates a new
 * QP and sends its number over the notify channel (RECONNECT); the other PE
 * drains its side too, creates and connects its new QP and answers (ACK).
 * A higher-numbered PE that sees the failure first asks for this (REQUEST).
 * A PE that gives a lane up (DEAD: failed too often, no new QP) says so
 * (DEAD), and the peer gives its end up at once rather than wait for a
 * repair that cannot come.  A lane given up is tried again later, less
 * and less often (revive.c, "Lanes given up, tried again").
 */
typedef enum {
    SR_IB_LANE_UP = 0,
    SR_IB_LANE_DRAIN,     /* in error, waiting for outstanding WRs to flush */
    SR_IB_LANE_TELL,      /* lower PE: new QP made, RECONNECT not sent yet */
    SR_IB_LANE_WAIT,      /* lower PE: RECONNECT sent, waiting for the peer's ACK */
    SR_IB_LANE_ANSWER,    /* higher PE: new QP connected, ACK not sent yet */
    SR_IB_LANE_DEAD,      /* beyond repair */
} sr_ib_lane_state_t;

#define SR_IB_MAX_REPAIRS 3
/* A lane that stayed up this long after a repair starts its count again:
 * SR_IB_MAX_REPAIRS bounds failures in a row, not over a job's life. */
#define SR_IB_REPAIR_FORGET_NS (60ull * 1000000000ull)
/* A lane given up is tried again after 1 s, then after twice as long each
 * time it fails again, up to a minute (revive.c, sr_ib_revive_plan). */
#define SR_IB_REVIVE_MIN_NS 1000000000ull
#define SR_IB_REVIVE_MAX_NS (60ull * 1000000000ull)
#define SR_IB_TRY_NS        (10ull * 1000000000ull)
/* A DEAD that found no credit at the peer goes again after this long. */
#define SR_IB_TELL_RETRY_NS 1000000ull

typedef struct {
    pthread_mutex_t lock;        /* see "Threads" above */
    struct ibv_qp *qp;
    sr_ib_rail_t  *rail;
    int            down;         /* not usable now (any state but UP) */
    int            state;
    int            repairs;
    uint64_t       up_since;     /* when a repair last brought it up (0: never) */
    int            refused;      /* down because the peer refused a segment's rkey (seg.c) */
    int            asked;        /* REQUEST sent for this outage */
    uint32_t       peer_qpn;     /* the peer's new QP, once told (0: not yet) */
    uint32_t       rqpn;         /* the peer's QP this lane is connected to */
    int            ack_owed;     /* a repeated RECONNECT wants our ACK again */
    int            tell_dead;    /* DEAD: the peer is still to be told (repair.c) */
    int            reviving;     /* a lane given up, being tried again (repair.c) */
    int            revive_due;   /* ... its next try is due: the repair pass makes it */
    uint64_t       revive_at;    /* DEAD: when it is tried again (0: never) */
    uint64_t       revive_ns;    /* ... the wait before that try, doubled at each */
    uint64_t       try_until;    /* a try not done by then is given up again */
    uint64_t       quiet_until;  /* a try that came up and fails at once: logged at info */
    int            try_fresh;    /* the try's first rebuild: its old QP caught nothing */
    uint32_t       dead_qpn;     /* DEAD says which RECONNECT of the peer it answers (0: none) */
    uint64_t       tell_at;      /* a DEAD that found no credit goes again from here (repair.c) */
    uint32_t       gen;          /* grows with every down and up */
    uint32_t       gen_told;     /* ... the last one reported through lane_cb */
    uint64_t       posted;       /* for the test fault hook */
    /*
     * Selective signalling.  Work requests are numbered per QP (seq); ops
     * posted and not yet covered by a completion sit in wq in post order,
     * ops held back for a chain in hold.  Every op holds its send-queue slot
     * and one CQ entry (a QP in error completes every WR, signalled or not)
     * from the moment it is taken until a completion covers it.
     */
    struct sr_ib_op *wq_head, *wq_tail;
    struct sr_ib_op *hold_head, *hold_tail;
    uint64_t       sq_posted;    /* seq of the last WR posted */
    uint64_t       sq_done;      /* ... covered by a completion */
    uint64_t       sig_seq;      /* ... the last signalled one */
    uint32_t       unsig;        /* unsignalled WRs since the last signalled */
    struct sr_ib_op *free;       /* ops of this lane's cache (no shared pool on the post path) */
    /*
     * WRs that the lane's failure flushed, in post order, whose fate the
     * peer's old receive PSN decides (limbo.c, "Work caught in a
     * failure"; under flock and the lane lock, fates under the latter).  psn:
     * the first PSN of the next WR on qp; mtu_shift: log2 of its path MTU.
     * rq_psn: our old QP's next expected PSN, for the peer; peer_psn: the
     * peer's, for our atomics (each with its _ok: known).  wc_err: the
     * first error completion of this outage (0: only flushes seen).
     */
    struct sr_ib_op *limbo_head, *limbo_tail;
    uint64_t       limbo_since;
    uint32_t       psn;
    uint32_t       mtu_shift;
    uint32_t       rq_psn, peer_psn;
    int            rq_psn_ok, peer_psn_ok;
    int            wc_err;
    /* The stall watch (iface.c, sr_ib_lane_watch): sq_done when last
     * looked at, and since when a signalled WR has waited with it so. */
    uint64_t       watch_done, watch_since;
    /* Puts of other lanes replayed here (flock): a flush of those lanes
     * waits here up to replay_seq. */
    uint32_t       replay_orig;
    uint64_t       replay_seq;
    /* Counters, summed by sr_ib_stats. */
    uint64_t       n_posted, n_completed, n_qp_full, n_cq_full, bytes, slices;
    _Alignas(SR_CACHE_LINE) uint32_t outstanding;
    uint32_t       max_wr;       /* its send queue's WRs: ctx->max_wr, or less for a
                                  * connected peer (qp.c, sr_ib_conn_wr) */
    uint32_t       sig_every;    /* ... and how often it signals (sr_ib_lane_depth) */
} sr_ib_lane_t;

/* One outstanding data work request; its address is the wr_id. */
enum { SR_IB_OP_DATA = 0, SR_IB_OP_COVER };
/* In kind beside the type (SR_IB_OP_TYPE bits): the QP refused this WR or
 * never got it (rma.c, sr_ib_post_failed), so it holds no CQ entry and
 * completes only as flushed. */
#define SR_IB_OP_REFUSED 0x100
#define SR_IB_OP_TYPE    0xff
typedef struct sr_ib_op {
    struct sr_ib_op  *next;      /* in its lane's wq or hold list, or ep's replay */
    uint64_t          seq;
    uint32_t          psn;       /* PSN of its first packet (repair.c) */
    uint32_t          psn_next;  /* ... of the next WR's */
    int               fate;      /* in a lane's limbo: SR_IB_FATE_* */
    struct ibv_send_wr wr;
    struct ibv_sge    sge;
    int               kind;
    int               orig;      /* the lane the core posted it to (flush masks) */
    int               must_sig;  /* it took the last slot of some resource */
    uint32_t          region;    /* where a put goes, to re-post it elsewhere */
    uint64_t          roff;
    uint32_t          fail_qpn;  /* the QP it was lost with, to name in an error */
    int               fail_rail;
    unsigned char     inl[SR_IB_INLINE_MAX];
    sr_tl_comp_t     *comp;      /* NULL: complete locally (inline or bounce put) */
    struct sr_tl_ep  *ep;
    sr_ib_lane_t     *lane;
    void             *dst;       /* get through a bounce buffer, or atomic result */
    size_t            len;
    int               bounce;    /* bounce slot or -1 */
    struct sr_rcache_ent *rc_ent; /* private memory in place (rcache.c), or NULL */
    int               amo_slot;  /* atomic result slot or -1 */
    int               amo_loop;  /* built from compare-swap: see sr_ib_amo_next */
    uint8_t           amo_kind;  /* sr_tl_amo_t without the width */
    uint8_t           amo_w32;   /* on the 4 bytes at amo_shift of the 8-byte word */
    uint8_t           amo_shift;
    uint64_t          expect, operand, compare, raddr;
    uint32_t          rkey;
} sr_ib_op_t;

/* What a peer publishes for each rail. */
typedef struct {
    char     dev[SR_IB_NAME_LEN];
    uint8_t  gid[16];
    uint32_t port;
    uint32_t lid;
    uint32_t mtu;
    uint32_t is_eth;
    uint32_t prefix_bits;
    uint32_t rkey[SR_IB_MAX_REGIONS];
    uint32_t scratch_rkey;
} sr_ib_rail_addr_t;

typedef struct {
    uint64_t magic;
    int32_t  pid;
    uint32_t nrails;
    uint32_t n_pes;
    uint32_t qpp;
    uint32_t depth;
    uint32_t window;     /* the notification window each peer has here at first */
    uint64_t region_addr[SR_IB_MAX_REGIONS];
    uint64_t scratch_addr;
    /* then: sr_ib_rail_addr_t[nrails], uint32_t qpn[n_pes][nrails * qpp + 1] */
} sr_ib_addr_hdr_t;

struct sr_tl_ep {
    struct sr_tl_ctx *ctx;
    int               pe;
    int               pid;
    int               local;
    int               nlanes;
    sr_ib_lane_t     *lanes;
    uint64_t          raddr[SR_IB_MAX_REGIONS];
    uint32_t          rkey[SR_IB_MAX_RAILS][SR_IB_MAX_REGIONS];
    int8_t            peer_rail[SR_IB_MAX_RAILS];  /* the peer's rail that ours pairs with */
    struct sr_ib_rseg **rsegs;         /* the peer's segments unpacked here (seg.h) */
    /* notify channel (guarded by ctx->nlock) */
    struct ibv_qp    *nqp;
    uint64_t          n_sent;          /* messages sent to the peer */
    uint64_t          n_send_done;     /* their send completions */
    uint64_t          n_recv;          /* messages received and re-posted */
    uint64_t          n_released;      /* ... consumed (application: notify_release) */
    uint64_t          n_recv_reported; /* ... of n_released, what the peer knows */
    uint64_t          n_limit;         /* the window granted: the peer sends below it */
    uint64_t          n_limit_reported;
    uint32_t          n_cw;            /* credit writes not completed */
    uint64_t          credit_raddr;    /* where the peer counts what we consumed */
    uint32_t          credit_rkey;
    int               nqp_error;
    sr_ib_rail_addr_t rail_addr[SR_IB_MAX_RAILS];  /* to reconnect repaired lanes */
    /* The last word we set there and its value: the first guess of the next
     * compare-swap loop, right for flags and counters a PE keeps setting. */
    uint64_t          guess_raddr, guess_val;
    /* Locally completed puts whose QP failed, to be posted again (in order)
     * on another lane; the error to report from the next flush when that
     * was not possible. */
    struct sr_ib_op  *replay_head, *replay_tail;
    symrail_status_t  late_err;
    uint32_t          late_lanes;      /* ... for flushes of these lanes */
    char              late_why[160];
    int               held;            /* some lane holds WRs for a chain */
    uint64_t          heard;           /* sr_time_ns of the last sign of life (atomic) */
    uint64_t          hb_sent;         /* ... of our last message to the peer (nlock) */
    /* A connected peer of another job (peer.c): its lanes are its own, made
     * by the offer (first: 0) or by the acceptor (first: 1, whose rails
     * pair first); up: connected; gone: the peer left (atomic).  For every
     * endpoint, peer_qpp: the peer's QPs per rail, which number its lanes
     * (sr_ib_peer_lane). */
    int               conn, first, up, gone;
    uint32_t          peer_qpp;
    /* Rails (bits) on which a lane's reconnect failed: the peer is not
     * reached there, so the rail's other lanes to it are broken too, at
     * once, not each after its own stall (repair.c; atomic). */
    uint32_t          rails_cut;
};

/* A flush waiting for the lanes of ep to reach target. */
typedef struct sr_ib_flush {
    struct sr_ib_flush *next;
    sr_tl_ep_t         *ep;
    sr_tl_comp_t       *comp;
    uint32_t            lanes;
    uint64_t            target[SR_TL_MAX_LANES];
} sr_ib_flush_t;

struct sr_tl_ctx {
    sr_tl_params_t  params;
    int             mt;            /* params.thread_multiple: take the locks */
    pthread_mutex_t rlock, flock, plock;  /* see "Threads" above */
    sr_ib_dev_t     devs[SR_IB_MAX_RAILS];
    int             ndevs;
    sr_ib_rail_t    rails[SR_IB_MAX_RAILS];
    int             nrails;
    uint32_t        qpp;
    uint32_t        max_wr;     /* the job's data QPs */
    uint32_t        dev_max_wr; /* the smallest max_qp_wr of the devices */
    uint32_t        wr_auto;    /* max_wr from the budget (SYMRAIL_IB_MAX_WR=0) */
    uint32_t        wr_peers;   /* peers the budget is shared by, connected ones too */
    uint32_t        depth;         /* the most receive buffers one sender's window holds */
    uint32_t        slots;         /* messages of the application not consumed, per sender */
    int             max_inline;
    sr_tl_mem_t     regions[SR_IB_MAX_REGIONS];
    uint32_t        nregions;
    uint8_t        *use;           /* [n_pes]: peers reached over verbs */
    int             glob_atomics;  /* every device: IBV_ATOMIC_GLOB */
    struct sr_ib_segs  *segs;      /* segments by id (seg.c) */
    struct sr_ib_lsegs *lsegs;     /* ... by address, for lkeys on the post path (seg.h) */
    sr_ib_lane_t   *lanes;         /* [n_pes][nrails * qpp] */
    struct ibv_qp **nqps;          /* [n_pes] */
    sr_tl_ep_t    **eps;           /* [neps]: the job's PEs, then connected peers */
    int             neps;          /* n_pes + peers_max */

    /* Registered scratch: credits, atomic results, notify slots, bounce. */
    char           *scratch;
    size_t          scratch_len;
    uint64_t       *credits;       /* [n_pes][2]: messages each peer consumed of ours, its window */
    uint64_t       *amo_res;       /* [SR_IB_AMO_SLOTS] */
    char           *recv_slots;    /* [nrecv][SR_IB_MSG_SIZE], posted to srq */
    char           *send_slots;    /* [SR_IB_SEND_SLOTS][SR_IB_MSG_SIZE] */
    char           *bounce;        /* [SR_IB_BOUNCE_SLOTS][bounce_len] */
    size_t          bounce_len;
    uint64_t        amo_free;      /* bitmap */
    uint64_t        bounce_free;   /* bitmap */
    struct sr_rcache *rcache;      /* private buffers in place (rcache.c); NULL: off */
    size_t          zcopy_thresh;

    sr_pool_t       ops;           /* sr_ib_op_t, behind the lanes' caches (plock) */
    sr_ib_flush_t  *flushes;       /* flushes in progress */
    int             held;          /* some endpoint holds WRs */
    int             replays;       /* some endpoint has puts to post again */
    uint64_t        hb_ns;         /* heartbeat interval; 0: none */
    uint64_t        limbo_ns;      /* how long a limbo waits for its PSN; 0: no limit */
    uint64_t        stall_ns;      /* a lane with no completion this long fails (iface.c) */

    /* Notify channel, shared with the progress thread. */
    pthread_mutex_t nlock;
    struct ibv_comp_channel *nch;
    struct ibv_cq  *ncq;
    struct ibv_srq *srq;           /* every notify QP's receives (rails[0]'s device) */
    uint32_t        nrecv;         /* its buffers: SR_IB_CREDIT_STATIC a peer + pool */
    uint32_t        pool_free;     /* ... in no sender's window (nlock) */
    uint32_t        pool_low;      /* below it busy windows shrink again */
    uint32_t        pool_owed;     /* ... lent to buffers not posted, paid back first */
    uint32_t       *unposted;      /* [nrecv]: buffers whose post failed, to post again */
    uint32_t        nunposted;
    uint32_t        window0;       /* every sender's window at first */
    uint32_t        send_free[SR_IB_SEND_SLOTS];  /* stack of free send slots (nlock) */
    uint32_t        nsend_free;
    sr_msgq_t       mq;            /* received, not yet handed to the core */
    pthread_t       thread;
    int             thread_up;
    int             stop;          /* atomic */
    int             dispatching;   /* nlock: a thread hands messages to the core */
    int             wake_pipe[2];

    int             fault_lane;
    uint64_t        fault_after;
    uint32_t        fault_ctl;     /* repair messages still to be refused */
    int             fault_init;    /* init step that fails */
    uint64_t        n_repaired, n_replayed;
    int             repairs_pending;
    uint64_t        revive_next;   /* the earliest try of a lane given up (0: none; repair.c) */
    int             lane_events;   /* some lane's gen is not reported yet */
};

static inline uint32_t sr_ib_psn(uint32_t qpn)
{
    return (qpn * 2654435761u) & 0xffffff;
}

/* The locks and lock-free handoffs of "Threads" above (they need the
 * structs). */
#include "tl/verbs/threads.h"

static inline char *sr_ib_slot(char *base, uint64_t i)
{
    return base + (size_t)i * SR_IB_MSG_SIZE;
}

/* Room for one more WR on lane (lane lock held): its send-queue slot is
 * checked, its CQ entry reserved (sr_ib_cq_give returns one not used). */
static inline int sr_ib_room(sr_tl_ep_t *ep, sr_ib_lane_t *lane)
{
    const sr_tl_ctx_t *ctx = ep->ctx;
    sr_ib_dev_t *dev = lane->rail->dev;
    if (sr_unlikely(lane->outstanding >= lane->max_wr)) {
        SR_IB_COUNT(lane->n_qp_full, 1);
        return 0;
    }
    if (sr_likely(!ctx->mt)) {
        if (sr_unlikely(dev->cq_outstanding >= dev->cq_size))
            goto full;
        dev->cq_outstanding++;
        return 1;
    }
    if (sr_unlikely(__atomic_fetch_add(&dev->cq_outstanding, 1, __ATOMIC_RELAXED) >=
                    dev->cq_size)) {
        __atomic_fetch_sub(&dev->cq_outstanding, 1, __ATOMIC_RELAXED);
        goto full;
    }
    return 1;
full:
    SR_IB_COUNT(lane->n_cq_full, 1);
    return 0;
}

/* iface.c: testing only, init step `step` fails (SYMRAIL_IB_FAULT_INIT). */
int sr_ib_init_fault(sr_tl_ctx_t *ctx, int step);

/* device.c */
void sr_ib_dev_close(sr_ib_dev_t *dev);
symrail_status_t sr_ib_find_rails(sr_tl_ctx_t *ctx);
void sr_ib_weigh_rails(sr_tl_ctx_t *ctx);

/* md.c */
symrail_status_t sr_ib_scratch_init(sr_tl_ctx_t *ctx);
/* Lane lock held; op_put: op->lane's lock held. */
sr_ib_op_t *sr_ib_op_get(sr_tl_ctx_t *ctx, sr_ib_lane_t *lane);
void sr_ib_op_put(sr_tl_ctx_t *ctx, sr_ib_op_t *op);
symrail_status_t sr_ib_mem_reg(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem);

/* rcache.c: rc_lkey takes a reference (ent_p) that rc_put gives back. */
symrail_status_t sr_ib_rc_init(sr_tl_ctx_t *ctx);
void sr_ib_rc_fini(sr_tl_ctx_t *ctx);
int sr_ib_rc_lkey(sr_tl_ctx_t *ctx, sr_ib_dev_t *dev, void *addr, size_t len,
                  struct sr_rcache_ent **ent_p, uint32_t *lkey_p);
void sr_ib_rc_put(sr_tl_ctx_t *ctx, struct sr_rcache_ent *ent);
void sr_ib_local_hint(sr_tl_ep_t *ep, const void *local, size_t len);
void sr_ib_rc_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p);

/* qp.c; size_queues: sets max_wr where SYMRAIL_IB_MAX_WR is 0 (from the count of the
 * job's peers with data QPs) and what follows from it; conn_wr: the send
 * queue of one more connected peer's QPs, from the same budget; conn_wr_put:
 * that peer's share back, when its QPs could not be made. */
void sr_ib_size_queues(sr_tl_ctx_t *ctx, size_t npeers);
uint32_t sr_ib_conn_wr(sr_tl_ctx_t *ctx);
void sr_ib_conn_wr_put(sr_tl_ctx_t *ctx);
/* A lane's send queue of wr WRs, and how often it signals. */
void sr_ib_lane_depth(sr_ib_lane_t *lane, uint32_t wr);
struct ibv_qp *sr_ib_qp_create(sr_tl_ctx_t *ctx, sr_ib_rail_t *rail, struct ibv_cq *cq,
                               uint32_t send_wr, struct ibv_srq *srq);
/* Moves qp to RTR and RTS towards the peer's QP rqpn; 0, or the errno of
 * the step that failed, named in *step_p (the caller logs it). */
int sr_ib_qp_move(struct ibv_qp *qp, const sr_ib_rail_t *rail, const sr_ib_rail_addr_t *ra,
                  uint32_t rqpn, int pe, const char **step_p);
symrail_status_t sr_ib_qp_connect(struct ibv_qp *qp, const sr_ib_rail_t *rail,
                                  const sr_ib_rail_addr_t *ra, uint32_t rqpn, int pe);
symrail_status_t sr_ib_addr_pack(sr_tl_ctx_t *ctx, void *buf, size_t *len_p);
int sr_ib_reachable(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len);
symrail_status_t sr_ib_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                               sr_tl_ep_t **ep_p);
/* peer_of[r]: the peer's rail that our rail r pairs with, or -1; `first`:
 * ours go first (both ends must agree which one does). */
void sr_ib_pair_rails(sr_tl_ctx_t *ctx, int pe, const sr_ib_rail_addr_t *ras, int nr, int first,
                      int *peer_of);
void sr_ib_rail_addr_fill(const sr_ib_rail_t *rail, sr_ib_rail_addr_t *ra_p);

/* peer.c: connected peers (tl.h, "Connected peers", peer_handshake). */
symrail_status_t sr_ib_peer_connect(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                    sr_tl_ep_t **ep_p);
symrail_status_t sr_ib_ep_addr_pack(sr_tl_ep_t *ep, void *buf, size_t *len_p);
void sr_ib_peer_disconnect(sr_tl_ep_t *ep);
void sr_ib_peer_free(sr_tl_ep_t *ep);
/* A repair message from the peer, over its other endpoint (tl.h ep_ctl);
 * and the number the peer's end of our lane l has. */
void sr_ib_ep_ctl(sr_tl_ep_t *ep, const void *msg, size_t len);
uint32_t sr_ib_peer_lane(const sr_tl_ep_t *ep, int l);
void sr_ib_disconnect(sr_tl_ep_t *ep);
int sr_ib_ep_lanes(sr_tl_ep_t *ep, uint32_t *weights_p, int max);

/* rma.c */
symrail_status_t sr_ib_put(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                           uint64_t roff, size_t len, sr_tl_comp_t *comp);
symrail_status_t sr_ib_get(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region,
                           uint64_t roff, size_t len, sr_tl_comp_t *comp);
symrail_status_t sr_ib_atomic(sr_tl_ep_t *ep, int lane_idx, sr_tl_amo_t op_kind,
                              uint32_t region, uint64_t roff, uint64_t operand,
                              uint64_t compare, uint64_t *result_p, sr_tl_comp_t *comp);
/* Lane lock held. */
void sr_ib_post_amo(sr_tl_ep_t *ep, sr_ib_op_t *op, int cswap, uint64_t compare,
                    uint64_t operand, int take);
uint64_t sr_ib_amo_next(const sr_ib_op_t *op, uint64_t word);
void sr_ib_ep_post_end(sr_tl_ep_t *ep);
void sr_ib_post_held(sr_tl_ctx_t *ctx);
/* Lane lock held. */
void sr_ib_post_lane(sr_tl_ep_t *ep, sr_ib_lane_t *lane);
/* Takes the lane lock (flock may be held). */
int sr_ib_cover(sr_tl_ep_t *ep, sr_ib_lane_t *lane);
/* A failed lane's QP owes a completion behind its last WR (lane lock held). */
void sr_ib_drain_cover(sr_tl_ep_t *ep, sr_ib_lane_t *lane);

/* comp.c; complete_locked: lane lock held, and flock when wc failed. */
void sr_ib_complete_locked(sr_tl_ctx_t *ctx, struct ibv_wc *wc, sr_ib_done_t *done);
int sr_ib_poll(sr_tl_ctx_t *ctx, sr_ib_done_t *done);

/* flush.c */
symrail_status_t sr_ib_flush(sr_tl_ep_t *ep, uint32_t lanes, sr_tl_comp_t *comp);
int sr_ib_rma_progress(sr_tl_ctx_t *ctx, sr_ib_done_t *done);

/* notify.c */
symrail_status_t sr_ib_post_recv(sr_tl_ctx_t *ctx, uint32_t i);
symrail_status_t sr_ib_notify_init(sr_tl_ctx_t *ctx);
void sr_ib_wireup_done(sr_tl_ctx_t *ctx);
int sr_ib_npoll(sr_tl_ctx_t *ctx);
void sr_ib_return_credits(sr_tl_ctx_t *ctx);
void sr_ib_notify_release(sr_tl_ep_t *ep);
uint64_t sr_ib_ep_heard(sr_tl_ep_t *ep);
void sr_ib_heartbeats(sr_tl_ctx_t *ctx);
symrail_status_t sr_ib_send_msg(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                                size_t len, uint32_t flags);
symrail_status_t sr_ib_notify(sr_tl_ep_t *ep, uint32_t tag, const void *payload,
                              size_t len);

extern const sr_tl_ops_t sr_tl_verbs_ops;

#include "tl/verbs/seg.h"
#include "tl/verbs/repair.h"

#endif
