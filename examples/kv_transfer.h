/*
 * What the parts of the KV-cache demo share: kv_transfer.c (the protocol)
 * and kv_jobs.c (prefill and decode as two jobs that connect).
 */
#ifndef KV_TRANSFER_H
#define KV_TRANSFER_H

#include <symrail.h>

#include "kv_common.h"

#define TAG_GRANT 0x4b560001u /* decode -> prefill: blocks to fill */
#define TAG_KV    0x4b560002u /* prefill -> decode, sent by the batch: the blocks are there */
#define TAG_DESC  0x4b560003u /* decode -> prefill of another job: a pool's descriptor */
#define STALL_NS  (60ull * 1000000000u)
#define KV_MAX_PEERS 64

typedef struct {
    uint32_t grant, nblocks;  /* then nblocks block indices of the decode pool */
} grant_msg_t;
#define MAX_BPR ((SYMRAIL_NOTIFY_MAX_PAYLOAD - sizeof(grant_msg_t)) / sizeof(uint32_t))

typedef struct {
    uint32_t grant, req, ntasks, pad;  /* ntasks: the batch's, after coalescing */
    uint64_t submitted_ns;
} kv_msg_t;

/* What each PE reports to PE 0 after a configuration. */
typedef struct {
    uint64_t requests, failed, bad_words, bytes, tasks, nlat, expected, sent;
} report_t;

/* On the symmetric heap. */
typedef struct {
    size_t        desc_len;      /* the pool descriptor of my decode PE */
    unsigned char desc[SYMRAIL_SEG_DESC_MAX];
} board_t;

typedef struct {
    int me, npes, nprefill, ndecode;
    int is_prefill, is_decode;
    const kv_opts_t *o;
    board_t  *board;
    report_t *reports;           /* [npes], filled on PE 0 */
    double   *lat;               /* [npes][maxlat] ms, filled on PE 0 */
    size_t    maxlat;
    /* Two jobs (--listen, --connect): the connected peers, the prefill PEs
     * a decode PE serves, or the decode PE of a prefill PE. */
    int       two_jobs, npeers, peers[KV_MAX_PEERS];
} job_t;

/* One configuration: block size, request size, pool shape. */
typedef struct {
    size_t   bb;                 /* block bytes */
    unsigned bpr;                /* blocks per request, in every layer */
    unsigned blocks;             /* per layer of a decode pool */
} conf_t;

/* A pool descriptor and its configuration, as TAG_DESC carries them. */
typedef struct {
    uint64_t bb;
    uint32_t bpr, blocks, layers, requests;
    uint64_t desc_len;
    unsigned char desc[SYMRAIL_SEG_DESC_MAX];
} desc_msg_t;

void kv_die(const char *what, symrail_status_t st);
#define CHECK(call)                                                                     \
    do {                                                                                \
        symrail_status_t st_ = (call);                                                  \
        if (st_ != SYMRAIL_OK)                                                          \
            kv_die(#call, st_);                                                         \
    } while (0)

/* kv_jobs.c: connect the two jobs (roles, peers); 0, or 1 after saying why. */
int kv_jobs_setup(job_t *j);
/* The decode side sends a pool's descriptor to its clients; the prefill
 * side takes it and checks that both jobs run the same configuration. */
void kv_jobs_send_desc(const job_t *j, const conf_t *c, symrail_seg_t seg);
symrail_rseg_t kv_jobs_recv_desc(const job_t *j, const conf_t *c);

#endif
