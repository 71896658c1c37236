/*
 * Independent jobs: processes that were not launched together connect at
 * run time (symrail_endpoint_export / connect / accept / disconnect).
 *
 * A connected peer gets a PE number from n_pes up, in the per-PE arrays
 * that have room for SYMRAIL_CONNECT_MAX of them from init on; notifications,
 * segments and batches take it where they take a PE; the symmetric heap,
 * atomics, collectives and OpenSHMEM do not (the peer has no part in this
 * job's heap).  It is reached over TCP, and for segments and batches over
 * shared memory on one host or over verbs where both ends run it
 * (endpoint.c says when).  The TCP transport starts when the first export
 * or connect needs it, where the job did not start it.
 *
 * Both ends have a number for each other: the connector's connect() dials
 * the exporter's TCP addresses and sends a JOIN message (reserved tag) with
 * its own; the exporter's symrail_endpoint_accept takes it and connects
 * back, and from then on either side sends to the other.
 *
 * A peer that leaves (disconnect, finalize, death) fails what goes to it
 * with SYMRAIL_ERR_PEER_GONE; the job's own PEs and the other peers carry
 * on: the waits' liveness check, which ends any wait of the job when one of
 * its PEs is gone, never looks at connected peers.  A number is not used
 * again in the life of the process, so that descriptors of a peer that
 * left are told apart from those of its successor (SYMRAIL_ERR_STALE).
 */
#ifndef SR_CORE_ENDPOINT_H
#define SR_CORE_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

#include "core/notify.h"

#include "core/rt.h"

/* The reserved tag of the JOIN message. */
#define SR_EP_TAG_JOIN SR_TAG_EP_JOIN

extern uint8_t *sr_is_local;  /* init.c: [n_max] */

/* init.c */
symrail_status_t sr_tl_open(const sr_tl_ops_t *ops, int for_peers);
const sr_tl_ops_t *sr_tl_by_name(const char *name);
void sr_peer_setup(int pe, const sr_tl_slot_t *slot, sr_tl_ep_t *ep);

/* endpoint_tl.c, for endpoint.c; sr_ep_lock held where it says so.  The
 * TCP transport's slot, or the shared-memory one (NULL: none), started if
 * the job did not start it. */
sr_tl_slot_t *sr_ep_tcp(const char *fn);
sr_tl_slot_t *sr_ep_shm(void);
sr_tl_slot_t *sr_ep_verbs(void);
/* Verbs for connected peer pe (tl.h, peer_handshake): connect with the
 * peer's blob (none: the connector's offer), and where out is given, this
 * end's blob for the peer into out (at most *out_len_p bytes). */
symrail_status_t sr_ep_verbs_offer(sr_tl_slot_t *vs, int pe, const sr_tl_peer_addr_t *pa,
                                   const void *blob, size_t blen, sr_tl_ep_t **ep_p,
                                   void *out, size_t *out_len_p);
void sr_ep_tl_reset(void);
/* Connects number pe over shared memory too where it reaches the peer: what
 * carries its segments, in words for the log. */
const char *sr_ep_dial_shm(int pe, int same_host, int peer_shm, const sr_tl_peer_addr_t *pa,
                           const sr_tl_host_addr_t *ha, sr_tl_slot_t **slot_p, sr_tl_ep_t **ep_p);
/* Verbs where shared memory does not carry number pe and `wanted` (the
 * peer offered it, or runs it): the acceptor's endpoint for the connector's
 * vblob (into *slot_p, *ep_p), or with offer_p the connector's offer (into
 * *offer_p); this end's blob into vout (*vout_len_p: its size in, 0 out
 * where none).  What carries the segments, in words (NULL: not decided).
 * verbs_take: the connector's offer completed with the acceptor's answer
 * (blen 0: none) and made pe's data path, or dropped; in words. */
const char *sr_ep_dial_verbs(int pe, int wanted, const sr_tl_peer_addr_t *pa, const void *vblob,
                             size_t vblen, sr_tl_slot_t **slot_p, sr_tl_ep_t **ep_p,
                             sr_tl_ep_t **offer_p, void *vout, size_t *vout_len_p);
const char *sr_ep_verbs_take(int pe, sr_tl_ep_t *offer, const sr_tl_peer_addr_t *pa,
                             const void *blob, size_t blen);
/* A transport's control messages to a connected peer (tl.h, ctl_send),
 * carried by its other endpoint as messages of tag SR_TAG_EP_CTL, and the
 * handler that gives them to the data path's endpoint at the other end. */
symrail_status_t sr_ep_ctl_send(void *arg, int pe, const void *msg, size_t len);
symrail_status_t sr_ep_ctl_handler(void *arg, int src_pe, uint32_t tag,
                                   symrail_status_t status, const void *payload, size_t len);
/* Both endpoints of a connected peer: checked, disconnected. */
symrail_status_t sr_ep_check(int pe);
void sr_ep_close(int pe);

/* endpoint.c */
symrail_status_t sr_endpoint_init(void);
void sr_endpoint_fini(void);
/* What a process must know to connect to this one (SR_TL_PEER_SECRET_LEN bytes). */
const uint8_t *sr_endpoint_secret(void);
symrail_status_t sr_endpoint_export(void *buf, size_t *len_p);
symrail_status_t sr_endpoint_connect(const void *buf, size_t len, int *peer_p);
symrail_status_t sr_endpoint_accept(int timeout_ms, int *peer_p);
symrail_status_t sr_endpoint_disconnect(int peer);
/* A lane of the endpoint that carries a connected peer's messages went
 * down (lane report): with the last one, the peer is gone for the other
 * endpoint too. */
void sr_endpoint_msg_down(int pe);
/* A JOIN message, whole (from its notify handler): 1 when it took it. */
int sr_endpoint_deliver(int src_pe, uint32_t tag, const void *payload, size_t len);
/* 1 while connect waits for pe's answer to its offer of verbs. */
int sr_endpoint_offering(int pe);
/* A message of `pe` was consumed before its endpoint was there: its slot goes
 * back once accept has made it. */
void sr_endpoint_owe(int pe);
/* The PE number of (job, pe, pid) of a segment descriptor: SYMRAIL_OK with
 * *pe_p, SYMRAIL_ERR_STALE (an earlier process of a peer, or one that left)
 * or SYMRAIL_ERR_INVALID (not connected); logged, naming fn. */
symrail_status_t sr_endpoint_find(const char *fn, uint64_t job, int pe, int pid, int *pe_p);
/* endpoint_id.c: the hash of this job's name (descriptors and endpoints
 * carry it), and of this host (name, boot, PID namespace). */
uint64_t sr_job_hash(void);
uint64_t sr_ep_host_hash(void);

#endif
