/*
 * Transport layer interface.
 *
 * A transport moves bytes between this PE and one peer: it knows nothing of
 * the symmetric heap, slicing, requests or the public API, and never includes
 * core headers.  The core gives it memory regions (by small integer id), an
 * opaque address blob of every peer, and work items that are one slice each.
 *
 * An endpoint has one or more lanes (for RDMA: a QP on one rail; for TCP: a
 * connection).  The core sprays the slices of a transfer over the lanes by
 * their weights and retries a failed slice on another lane.
 *
 * Every op returns SYMRAIL_OK when the work is complete as far as the caller
 * can tell (comp is not touched), SR_TL_INPROGRESS when comp->cb will be
 * called exactly once from the transport's progress, SYMRAIL_ERR_AGAIN when
 * the transport has no room now (the caller progresses and posts again), or
 * an error.  For put, "complete" means the source buffer may be reused: a
 * transport whose attr says local_completion may still be carrying the data
 * (sent inline or from its own bounce buffer), and `flush` is how the core
 * learns that it has arrived.
 *
 * Ops tables are const and complete, never NULL: a slot a transport does
 * not need points to one of the fillers below (or to a function of its own
 * returning SYMRAIL_ERR_UNSUPPORTED).
 *
 * Threads.  With params.thread_multiple 0, one thread at a time calls the
 * transport.  With 1 (the application asked for SYMRAIL_THREAD_MULTIPLE),
 * any op may be called from several threads at once, for the same or for
 * different endpoints and lanes, and progress from several threads at once
 * and concurrently with the ops.  Two threads posting to different lanes
 * take no common lock on the post path (a lock per lane, not one per
 * transport), and a second concurrent caller of progress does not wait for
 * the first (try-lock) but returns.  Callbacks (comp->cb, notify_cb,
 * lane_cb) may run on any thread that calls progress, never with a lock of
 * the transport held, and post nothing (they may call ep_lanes).  A
 * transport's own threads may run concurrently with everything.
 */
#ifndef SR_TL_H
#define SR_TL_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

#include "util/env.h"

#define SR_TL_INPROGRESS SYMRAIL_INPROGRESS

typedef struct sr_tl_ctx sr_tl_ctx_t;
typedef struct sr_tl_ep  sr_tl_ep_t;

typedef struct sr_tl_comp {
    void (*cb)(struct sr_tl_comp *comp, symrail_status_t status);
    /* SR_TL_COMP_MORE: more slices of the same transfer follow on this
     * endpoint, and ep_post_end comes after the last one, from the same
     * thread, so a transport may hold this work request back to post the
     * transfer as one chain (or, shm, ring the peer's doorbell once). */
    uint32_t flags;
} sr_tl_comp_t;

#define SR_TL_COMP_MORE 1u

/* An atomic: a kind, and the width of the word.  Without SR_TL_AMO_W32 the
 * word is 8 bytes, aligned to 8; with it, 4 bytes aligned to 4, whose
 * neighbour in the same 8 bytes keeps its value (operand and compare in the
 * low 32 bits, the result zero-extended).  The width travels in the kind so
 * that a 64-bit atomic costs no more than before. */
typedef enum {
    SR_TL_AMO_FETCH,   /* result = *target */
    SR_TL_AMO_SET,     /* *target = operand */
    SR_TL_AMO_ADD,     /* result = *target; *target += operand */
    SR_TL_AMO_SWAP,    /* result = *target; *target = operand */
    SR_TL_AMO_CSWAP,   /* result = *target; if (result == compare) *target = operand */
    SR_TL_AMO_AND,     /* result = *target; *target &= operand */
    SR_TL_AMO_OR,      /* result = *target; *target |= operand */
    SR_TL_AMO_XOR,     /* result = *target; *target ^= operand */
    SR_TL_AMO_W32 = 8, /* flag: on a 4-byte word */
} sr_tl_amo_t;

#define SR_TL_AMO_NKINDS 16  /* kinds and flag: every value below this is valid */
#define SR_TL_AMO_KIND(op) ((sr_tl_amo_t)((unsigned)(op) & 7u))
#define SR_TL_AMO_WIDTH(op) (((unsigned)(op) & SR_TL_AMO_W32) ? 4u : 8u)

/* Called by a transport's progress for every notification message received.
 * The slot the message came in stays taken (its credit does not go back to
 * the sender) until the core calls notify_release for it, which it does when
 * the application consumes the message: a receiver that never consumes
 * stalls its senders instead of growing a queue. */
typedef void (*sr_tl_notify_cb_t)(void *arg, int src_pe, uint32_t tag, const void *payload,
                                  size_t len);
/* Largest payload of one transport message: every transport carries this
 * much, and the core sends a larger notification as several messages, one
 * after another to the same peer (receive buffers per peer stay small). */
#define SR_TL_NOTIFY_MAX 256
/* Called by a transport's progress when lane `lane` to `pe` goes down
 * (weight 0) or comes back (its weight).  `generation` grows with every
 * change of that lane, so the core can ignore a report older than one it
 * has already seen. */
typedef void (*sr_tl_lane_cb_t)(void *arg, int pe, int lane, uint32_t weight,
                                uint32_t generation);
/* Hands a control message of the transport (at most SR_TL_CTL_MAX bytes:
 * e.g. a lane repair's) to connected peer `pe` over the peer's other
 * endpoint, whose transport the core chose: the peer's core gives it to
 * its endpoint of this transport (ep_ctl), whole, in the order of the calls
 * that returned SYMRAIL_OK.  SYMRAIL_ERR_AGAIN: no room now, nothing went
 * (try again from a later progress); another error: no such channel.
 * Unlike the callbacks above it may be called with the transport's locks
 * held, from its ops and its progress: it never calls back into the
 * transport, never waits and never progresses. */
typedef symrail_status_t (*sr_tl_ctl_cb_t)(void *arg, int pe, const void *msg, size_t len);
#define SR_TL_CTL_MAX 64

typedef struct {
    int               my_pe;
    int               n_pes;
    const char       *job;       /* unique per job: names shared objects */
    const uint8_t    *is_local;  /* [n_pes] */
    const sr_env_t   *env;
    int               serve_local; /* no shared-memory transport carries local peers */
    /* A shared-memory transport carries local peers, but a transport whose
     * atomics are not atomic with the CPU's (attr nic_atomics) should reach
     * them and this PE too, if it may also carry remote peers: the core then
     * sends every atomic on a PE's words through it, so that one provider
     * applies them all. */
    int               amo_local;
    int               thread_multiple; /* see "Threads" above */
    sr_tl_notify_cb_t notify_cb;
    sr_tl_lane_cb_t   lane_cb;
    void             *cb_arg;
    /* Connected peers (processes of other jobs, see "Connected peers"):
     * PE numbers n_pes .. n_pes + peers_max - 1, which is_local has room
     * for; peer_secret (SR_TL_PEER_SECRET_LEN bytes) is what a process must
     * know to connect to this one; for_peers: started for connected peers
     * only, so the transport runs even where no PE of the job needs it. */
    int               peers_max;
    const uint8_t    *peer_secret;
    int               for_peers;
    sr_tl_ctl_cb_t    ctl_send;    /* NULL: no control channel to connected peers */
    /* SYMRAIL_JOB_SECRET is not set: a transport that authenticates the
     * job's PEs by a job key sets attr job_key and gets the key from the
     * core through the job_key op, after the address exchange (which
     * carries it) and before any connect; until then it holds the
     * handshakes of PEs that dial early.  0: the secret keys them. */
    int               job_key_late;
} sr_tl_params_t;

/*
 * Connected peers.  connect() with pe >= n_pes reaches a process of another
 * job: addr is an sr_tl_peer_addr_t followed by that process's addr_pack
 * blob.  The secret is the exporter's peer_secret and conn_id names the
 * pair at both ends: the exporter's transport takes the first connection
 * that proves to know the secret (for a conn_id it has not seen) as a new
 * peer, numbered from n_pes up by the transport, and reports it through
 * notify_cb like any peer; its core then connects back with that number and
 * the same conn_id, which the connector's transport recognises as the peer
 * it connected to.  A number is used once per process (never again after
 * disconnect).  connect returns SYMRAIL_ERR_AGAIN when the transport holds
 * number `pe` for another peer already (the core takes the next).
 */
#define SR_TL_PEER_SECRET_LEN 32
#define SR_TL_JOB_KEY_LEN 32
typedef struct {
    uint8_t  secret[SR_TL_PEER_SECRET_LEN];
    uint32_t conn_id;
    uint32_t pe;       /* the peer's number in its own job */
} sr_tl_peer_addr_t;

/* A transport with attr host_peers (shared memory) takes, after the
 * sr_tl_peer_addr_t, this instead of an addr_pack blob: the peer's process,
 * and a word of its memory that holds `probe_val`, which the transport reads
 * to learn whether it reaches that process (same host, same process ids,
 * allowed to attach) before it says yes.  It carries segments only
 * (rkey_unpack, and put, get and atomics through keys): no heap, no
 * notifications, which the core sends over the peer's other endpoint.
 * disconnect marks the endpoint gone (every access fails with
 * SYMRAIL_ERR_PEER_GONE from then on) and may be called more than once; the
 * endpoint's memory and keys stay until rkey_release and fini. */
typedef struct {
    int32_t  pid;
    uint32_t reserved;
    uint64_t probe_addr;
    uint64_t probe_val;
} sr_tl_host_addr_t;

/* A transport with attr peer_handshake (verbs) needs an exchange in both
 * directions: connect(pe >= n_pes) with the sr_tl_peer_addr_t alone makes
 * an endpoint that is not connected yet (the connector's offer);
 * ep_addr_pack of it gives what the peer's transport needs (at most
 * SR_TL_PEER_ADDR_MAX bytes), which the core carries to the peer over its
 * other endpoint; the peer's connect with the sr_tl_peer_addr_t and that
 * blob makes and connects its endpoint (the acceptor), whose ep_addr_pack
 * goes back, and the connector's connect with it, for the same pe,
 * completes the endpoint made by the offer.  Connected so, the endpoint
 * carries segments only (as with host_peers).  A lane that fails is
 * repaired as within a job, its messages going through params.ctl_send and
 * coming back through ep_ctl (without ctl_send it stays down); disconnect
 * (the peer left: its other endpoint says) fails what is outstanding, and
 * what a repair holds, with SYMRAIL_ERR_PEER_GONE; the endpoint's memory
 * and keys stay until rkey_release and fini. */
#define SR_TL_PEER_ADDR_MAX 1280

/*
 * Regions.  Region ids name this PE's memory that peers may access:
 * SR_TL_REGION_HEAP and SR_TL_REGION_DATA are registered before addr_pack
 * and reach peers in the address blob; segments (ids from SR_TL_REGION_SEG0
 * up, chosen by the core) are registered and deregistered at any time after
 * init, and reach a peer as a key blob (mkey_pack) that the peer's core
 * hands to its transport (rkey_unpack).
 *
 * The region argument of put, get and atomic names the PEER's memory: 0 and
 * 1 its heap and data from the address blob, any other value a key unpacked
 * on that endpoint under that value (the importer's own numbering, not the
 * owner's ids).  Offsets are from the start of the region.
 *
 * A segment id may be used again after mem_dereg with a larger generation.
 * Once mem_dereg returns, no access through a key packed before it succeeds,
 * whatever the peer holds: the transport checks the (id, generation) at the
 * target, invalidates the device key, or marks it gone where the peer looks
 * before it copies, and such an access ends with SYMRAIL_ERR_STALE (never
 * retried on another lane).  A mem_dereg that failed (shm: copies by peers
 * still in progress after SYMRAIL_OP_TIMEOUT) keeps the id taken; a later
 * mem_dereg of it waits for nothing: SYMRAIL_OK once nothing uses it any
 * more (the id may be registered again), an error while something does.
 */
#define SR_TL_REGION_HEAP 0
#define SR_TL_REGION_DATA 1
#define SR_TL_REGION_SEG0 2
#define SR_TL_MKEY_MAX    320  /* bytes mkey_pack may write */

/* A memory region of this PE that peers may access. */
typedef struct {
    void       *addr;
    size_t      len;
    const char *shm_name;  /* name of the shared-memory object backing it, or NULL */
    uint32_t    generation; /* 0 for the heap and data */
} sr_tl_mem_t;

#define SR_TL_MAX_LANES 32

typedef struct {
    size_t max_slice;      /* largest single transfer; SIZE_MAX when unlimited */
    int    can_sleep;      /* wait_prepare/wait block until a peer touches us */
    int    ordered_lanes;  /* a lane applies its requests at the target in order */
    int    local_completion; /* put may return SYMRAIL_OK before the data has arrived */
    int    immediate;      /* put, get and atomic are applied at the target, in order,
                            * before they return: the core calls them with comp NULL,
                            * or (a batch's run) with one that only says
                            * SR_TL_COMP_MORE, never called back */
    int    nic_atomics;    /* atomics are applied by a device and are not atomic with CPU
                            * atomics on the same word (no global atomicity) */
    int    host_peers;     /* reaches connected peers on this host only, by their process:
                            * connect takes an sr_tl_host_addr_t (see "Connected peers") */
    int    peer_handshake; /* connected peers take an exchange both ways (ep_addr_pack) */
    int    job_key;        /* waits for the job_key op (params.job_key_late) */
} sr_tl_attr_t;

typedef struct sr_tl_ops {
    const char *name;
    /* SYMRAIL_ERR_UNSUPPORTED when the transport cannot run here (no device). */
    symrail_status_t (*init)(const sr_tl_params_t *params, sr_tl_ctx_t **ctx_p);
    void (*fini)(sr_tl_ctx_t *ctx);
    void (*attr)(const sr_tl_ctx_t *ctx, sr_tl_attr_t *attr_p);
    /* The heap and data regions before addr_pack; segments at any time. */
    symrail_status_t (*mem_reg)(sr_tl_ctx_t *ctx, uint32_t region, const sr_tl_mem_t *mem);
    /* Segments only: see "Regions".  May wait (bounded) for accesses by
     * local peers that are copying at that moment. */
    symrail_status_t (*mem_dereg)(sr_tl_ctx_t *ctx, uint32_t region);
    /* What a peer needs to reach segment `region`: at most *len_p bytes
     * (SR_TL_MKEY_MAX), *len_p set to those written. */
    symrail_status_t (*mkey_pack)(sr_tl_ctx_t *ctx, uint32_t region, void *buf, size_t *len_p);
    /* Makes `rkey` (>= SR_TL_REGION_SEG0) name, on ep, the peer's segment
     * that `buf` describes; the core checks offsets against its length
     * before it posts.  rkey_release undoes it (no access with it may be
     * outstanding). */
    symrail_status_t (*rkey_unpack)(sr_tl_ep_t *ep, uint32_t rkey, const void *buf, size_t len);
    void (*rkey_release)(sr_tl_ep_t *ep, uint32_t rkey);
    symrail_status_t (*addr_pack)(sr_tl_ctx_t *ctx, void *buf, size_t *len_p);
    int (*reachable)(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len);
    symrail_status_t (*connect)(sr_tl_ctx_t *ctx, int pe, const void *addr, size_t len,
                                sr_tl_ep_t **ep_p);
    /* Every PE has connected to every peer (after a barrier): e.g. names of
     * shared objects can go. */
    void (*wireup_done)(sr_tl_ctx_t *ctx);
    /* attr job_key: the job key, SR_TL_JOB_KEY_LEN bytes that only the job's
     * processes learn (`source` says how, for the log), or NULL where the
     * launcher gave none: the transport then falls back on a key of its own
     * making, and warns.  Before connect; others: sr_tl_no_job_key. */
    symrail_status_t (*job_key)(sr_tl_ctx_t *ctx, const uint8_t *key, const char *source);
    void (*disconnect)(sr_tl_ep_t *ep);
    /* attr peer_handshake: a connected peer's endpoint, for that peer
     * (see "Connected peers"); others: sr_tl_no_ep_addr. */
    symrail_status_t (*ep_addr_pack)(sr_tl_ep_t *ep, void *buf, size_t *len_p);
    /* A control message that ep's peer's transport sent with ctl_send, from
     * the core's progress (no lock of the core held); others:
     * sr_tl_no_ep_ctl, which drops it. */
    void (*ep_ctl)(sr_tl_ep_t *ep, const void *msg, size_t len);
    /* Load/store address of (region, offset) at the peer, or NULL. */
    void *(*ptr)(sr_tl_ep_t *ep, uint32_t region, uint64_t offset);
    /* A hint: a put (write 1) or get of (region, offset) follows soon; a
     * load/store transport may start bringing the line in.  It never
     * faults, never fails, and may do nothing (sr_tl_no_prefetch). */
    void (*prefetch)(sr_tl_ep_t *ep, uint32_t region, uint64_t offset, int write);
    /* A hint: the slices of one transfer from or to local [local, +len)
     * follow; a transport that registers private memory on the fly may
     * register all of it now (sr_tl_no_local_hint: nothing). */
    void (*local_hint)(sr_tl_ep_t *ep, const void *local, size_t len);

    /* Fills the relative bandwidth of each lane (0: the lane is down) and
     * returns how many lanes the endpoint has (1 .. max). */
    int (*ep_lanes)(sr_tl_ep_t *ep, uint32_t *weights_p, int max);

    symrail_status_t (*put)(sr_tl_ep_t *ep, int lane, const void *src, uint32_t region,
                            uint64_t roff, size_t len, sr_tl_comp_t *comp);
    symrail_status_t (*get)(sr_tl_ep_t *ep, int lane, void *dst, uint32_t region, uint64_t roff,
                            size_t len, sr_tl_comp_t *comp);
    /* result_p may be NULL for SET, ADD, AND, OR and XOR; it receives 8
     * bytes whatever the width.  Every kind of both widths is supported
     * (a transport builds what its device lacks from what it has).  An
     * atomic is never applied twice: one that a lane's failure caught after
     * the target applied it ends with SYMRAIL_ERR_RESULT_LOST where its old
     * value was wanted and is not known (a FETCH is read again instead). */
    symrail_status_t (*atomic)(sr_tl_ep_t *ep, int lane, sr_tl_amo_t op, uint32_t region,
                               uint64_t roff, uint64_t operand, uint64_t compare,
                               uint64_t *result_p, sr_tl_comp_t *comp);
    symrail_status_t (*notify)(sr_tl_ep_t *ep, uint32_t tag, const void *payload, size_t len);
    /* Remote completion: every put, get and atomic posted to ep on a lane
     * of mask `lanes` (bit l: lane l) before this call, those that returned
     * SYMRAIL_OK included, has been applied at the target.  Contexts flush
     * only the lanes they used, so one context's quiet does not wait for
     * another's traffic on other lanes.  SYMRAIL_OK when nothing is
     * outstanding, SR_TL_INPROGRESS when comp->cb follows from progress, or
     * the error that an operation met after it had completed locally. */
    symrail_status_t (*flush)(sr_tl_ep_t *ep, uint32_t lanes, sr_tl_comp_t *comp);
    /* The core has posted every slice of a transfer that it posted with
     * SR_TL_COMP_MORE: a transport that held work requests back posts them
     * now as one chain.  (It also posts what it holds before it returns
     * SYMRAIL_ERR_AGAIN, from its progress and from flush.) */
    void (*ep_post_end)(sr_tl_ep_t *ep);
    /* The application consumed one message that came from ep's peer: its
     * slot may go back to the sender. */
    void (*notify_release)(sr_tl_ep_t *ep);

    /* Drives completions and incoming messages; returns how many it handled. */
    int (*progress)(sr_tl_ctx_t *ctx);
    /* SYMRAIL_OK while the peer is alive, SYMRAIL_ERR_PEER_GONE once it is
     * known to be gone (process exited, connection reset). */
    symrail_status_t (*ep_check)(sr_tl_ep_t *ep);
    /* When (sr_time_ns) the peer last showed it is alive: any message,
     * completion or heartbeat from it.  A transport that reports this keeps
     * it fresh on idle endpoints (a heartbeat every SYMRAIL_HEARTBEAT, and
     * at least four per SYMRAIL_OP_TIMEOUT) and
     * the core calls a peer unresponsive once it is older than
     * SYMRAIL_OP_TIMEOUT.  0: the transport cannot tell (sr_tl_heard_unknown). */
    uint64_t (*ep_heard)(sr_tl_ep_t *ep);
    /* Adds this transport's counters into *stats_p. */
    void (*stats)(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p);
    /* Sleeping wait: token = wait_prepare(); re-check the condition; then
     * wait(token) returns when a peer may have changed our memory, or after
     * timeout_ns; wait_done() always follows wait_prepare(). */
    uint32_t (*wait_prepare)(sr_tl_ctx_t *ctx);
    void (*wait)(sr_tl_ctx_t *ctx, uint32_t token, uint64_t timeout_ns);
    void (*wait_done)(sr_tl_ctx_t *ctx);
} sr_tl_ops_t;

/* Fillers for slots a transport does not need. */
int sr_tl_one_lane(sr_tl_ep_t *ep, uint32_t *weights_p, int max);
/* For transports whose SYMRAIL_OK already means applied at the target. */
symrail_status_t sr_tl_flush_nothing(sr_tl_ep_t *ep, uint32_t lanes, sr_tl_comp_t *comp);
uint64_t sr_tl_heard_unknown(sr_tl_ep_t *ep);
void *sr_tl_no_ptr(sr_tl_ep_t *ep, uint32_t region, uint64_t offset);
void sr_tl_no_prefetch(sr_tl_ep_t *ep, uint32_t region, uint64_t offset, int write);
void sr_tl_no_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p);
void sr_tl_no_local_hint(sr_tl_ep_t *ep, const void *local, size_t len);
symrail_status_t sr_tl_no_ep_addr(sr_tl_ep_t *ep, void *buf, size_t *len_p);
void sr_tl_no_ep_ctl(sr_tl_ep_t *ep, const void *msg, size_t len);
symrail_status_t sr_tl_no_job_key(sr_tl_ctx_t *ctx, const uint8_t *key, const char *source);

/* Prints the RDMA rails this process would use and their weights. */
void sr_tl_verbs_rails_report(FILE *out, const sr_env_t *env);

/* Every transport compiled in, in default order of preference. */
extern const sr_tl_ops_t *const sr_tl_all[];
extern const size_t sr_tl_nall;

#endif
