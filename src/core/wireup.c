/*
 * Wireup: every PE packs its transports' addresses, its heap size and its
 * data segment's place into one blob, the launcher exchanges the blobs,
 * and each PE checks that the job agrees and connects to every peer.
 */
#include "config.h"
#include "core/rt.h"
#include "core/endpoint.h"
#include "util/log.h"
#include "util/sys.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SR_BLOB_MAGIC   0x73796d7261696c34ull  /* "symrail4" */
#define SR_TL_NAME_LEN  16
/* As many CPUs as glibc's cpu_set_t holds. */
#define SR_BLOB_CPU_WORDS 16

typedef struct {
    uint64_t magic;
    int32_t  pe;
    int32_t  pid;
    uint32_t ntls;
    uint64_t heap_size;  /* every PE must have the same */
    uint64_t data_len;   /* the data segment, 0: not symmetric here */
    uint64_t data_vaddr; /* its place in the executable */
    /* The CPUs this PE may run on, bit i for CPU i; none: not known. */
    uint64_t cpus[SR_BLOB_CPU_WORDS];
} sr_blob_hdr_t;

/* Entries are whole words and addresses padded to them: each transport
 * reads its address, aligned, as the struct it packed. */
#define SR_BLOB_ALIGN 8
typedef struct {
    char     name[SR_TL_NAME_LEN];
    uint32_t len, pad;
} sr_blob_tl_t;

static symrail_status_t sr_blob_pack(void **blob_p, size_t *len_p)
{
    size_t cap = sizeof(sr_blob_hdr_t);
    for (int i = 0; i < sr_rt.ntls; i++) {
        size_t alen = 0;
        symrail_status_t st = sr_rt.tls[i].ops->addr_pack(sr_rt.tls[i].tl, NULL, &alen);
        if (st != SYMRAIL_OK)
            return st;
        cap += sizeof(sr_blob_tl_t) + SR_ALIGN_UP(alen, SR_BLOB_ALIGN);
    }
    char *blob = calloc(1, cap), *p;
    if (blob == NULL)
        return SYMRAIL_ERR_NOMEM;
    sr_blob_hdr_t hdr = { SR_BLOB_MAGIC, sr_rt.my_pe, (int32_t)getpid(), (uint32_t)sr_rt.ntls,
                          sr_rt.heap_size, sr_rt.data_len, sr_rt.data_vaddr, { 0 } };
    cpu_set_t set;
    /* Fails with more CPUs than the set holds: left as not known. */
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < SR_BLOB_CPU_WORDS * 64; c++)
            if (CPU_ISSET(c, &set))
                hdr.cpus[c / 64] |= 1ull << (c % 64);
    }
    memcpy(blob, &hdr, sizeof(hdr));
    p = blob + sizeof(hdr);
    for (int i = 0; i < sr_rt.ntls; i++) {
        sr_blob_tl_t t = { { 0 }, 0, 0 };
        size_t alen = cap - (size_t)(p - blob) - sizeof(t);
        snprintf(t.name, sizeof(t.name), "%s", sr_rt.tls[i].ops->name);
        symrail_status_t st = sr_rt.tls[i].ops->addr_pack(sr_rt.tls[i].tl,
                                                            p + sizeof(t), &alen);
        if (st != SYMRAIL_OK) {
            free(blob);
            return st;
        }
        t.len = (uint32_t)alen;
        memcpy(p, &t, sizeof(t));
        p += sizeof(t) + SR_ALIGN_UP(alen, SR_BLOB_ALIGN);
    }
    *blob_p = blob;
    *len_p = (size_t)(p - blob);
    return SYMRAIL_OK;
}

/* The address `pe` published for transport `name`: 1 found, 0 not there,
 * -1 the blob is malformed. */
static int sr_blob_addr(const char *blob, size_t len, uint32_t ntls, const char *name,
                        const char **addr_p, size_t *alen_p)
{
    size_t pos = sizeof(sr_blob_hdr_t);
    for (uint32_t t = 0; t < ntls; t++) {
        sr_blob_tl_t bt;
        if (pos + sizeof(bt) > len)
            return -1;
        memcpy(&bt, blob + pos, sizeof(bt));
        pos += sizeof(bt);
        if (bt.len > len - pos)
            return -1;
        bt.name[SR_TL_NAME_LEN - 1] = '\0';
        if (strcmp(bt.name, name) == 0) {
            *addr_p = blob + pos;
            *alen_p = bt.len;
            return 1;
        }
        pos += SR_ALIGN_UP((size_t)bt.len, SR_BLOB_ALIGN);
    }
    return 0;
}

/* Where the main transport to a peer applies atomics with the CPU, a
 * transport whose atomics are the NIC's is connected too, if it reaches the
 * peer: it takes the peer's atomics should its words turn out to take NIC
 * atomics from elsewhere (sr_amo_route_apply). */
static symrail_status_t sr_peer_connect_amo(int pe, const char *blob, size_t len, uint32_t ntls)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    for (int i = 0; i < sr_rt.ntls; i++) {
        sr_tl_slot_t *slot = &sr_rt.tls[i];
        const char *addr;
        size_t alen;
        if (!slot->attr.nic_atomics || slot->ops == peer->ops ||
            sr_blob_addr(blob, len, ntls, slot->ops->name, &addr, &alen) != 1 ||
            !slot->ops->reachable(slot->tl, pe, addr, alen))
            continue;
        symrail_status_t st = slot->ops->connect(slot->tl, pe, addr, alen, &peer->amo_cand);
        if (st != SYMRAIL_OK) {
            sr_error("connecting to PE %d over %s for atomics failed: %s", pe, slot->ops->name,
                     symrail_strerror(st));
            return st;
        }
        peer->amo_cand_ops = slot->ops;
        sr_debug("PE %d also reached over %s, for atomics", pe, slot->ops->name);
        return SYMRAIL_OK;
    }
    return SYMRAIL_OK;
}

/* Connects to `pe` with the first of our transports (in preference order)
 * that the peer also runs and that reaches it. */
static symrail_status_t sr_peer_connect(int pe, const char *blob, size_t len)
{
    sr_blob_hdr_t hdr;
    if (len < sizeof(hdr))
        goto err_blob;
    memcpy(&hdr, blob, sizeof(hdr));
    if (hdr.magic != SR_BLOB_MAGIC || hdr.pe != pe)
        goto err_blob;
    sr_rt.pids[pe] = hdr.pid;
    for (int i = 0; i < sr_rt.ntls; i++) {
        sr_tl_slot_t *slot = &sr_rt.tls[i];
        const char *addr;
        size_t alen;
        int found = sr_blob_addr(blob, len, hdr.ntls, slot->ops->name, &addr, &alen);
        if (found < 0)
            goto err_blob;
        if (!found || !slot->ops->reachable(slot->tl, pe, addr, alen))
            continue;
        sr_tl_ep_t *ep;
        symrail_status_t st = slot->ops->connect(slot->tl, pe, addr, alen, &ep);
        if (st != SYMRAIL_OK) {
            sr_error("connecting to PE %d over %s failed: %s", pe, slot->ops->name,
                     symrail_strerror(st));
            return st;
        }
        sr_peer_setup(pe, slot, ep);
        return slot->attr.nic_atomics ? SYMRAIL_OK : sr_peer_connect_amo(pe, blob, len, hdr.ntls);
    }
    sr_error("no transport in SYMRAIL_TRANSPORTS='%s' reaches PE %d (pid %d)",
             sr_rt.env.transports, pe, hdr.pid);
    return SYMRAIL_ERR_NO_TRANSPORT;

err_blob:
    sr_error("the connection data of PE %d is malformed (mixed symrail versions?)", pe);
    return SYMRAIL_ERR_BOOT;
}

void sr_peer_setup(int pe, const sr_tl_slot_t *slot, sr_tl_ep_t *ep)
{
    sr_peer_t *peer = &sr_rt.peers[pe];
    peer->ops = slot->ops;
    peer->slice = slot->attr.max_slice < sr_rt.env.slice_size
                      ? slot->attr.max_slice : (size_t)sr_rt.env.slice_size;
    if (slot->attr.max_slice == SIZE_MAX)
        peer->slice = SIZE_MAX;  /* copies need no slicing */
    peer->base = slot->ops->ptr(ep, SR_HEAP_REGION, 0);
    peer->data_base = sr_rt.data_on ? slot->ops->ptr(ep, SR_DATA_REGION, 0) : NULL;
    peer->ordered = slot->attr.ordered_lanes;
    peer->local_comp = (uint8_t)slot->attr.local_completion;
    peer->immediate = (uint8_t)slot->attr.immediate;
    peer->amo_direct = peer->immediate;
    /* Last: a connected peer is usable once its endpoint is there. */
    __atomic_store_n(&peer->ep, ep, __ATOMIC_RELEASE);
    sr_peer_lanes_refresh(pe);
    sr_debug("PE %d reached over %s", pe, slot->ops->name);
}

/* Symmetric offsets are only symmetric if every heap has the same size: a
 * PE with a smaller one would fail allocations alone.  Every PE sees every
 * blob, so all of them refuse alike. */
static symrail_status_t sr_heap_sizes_agree(void *const *blobs, const size_t *lens)
{
    char list[256] = "";
    size_t pos = 0;
    int ndiff = 0;
    for (int pe = 0; pe < sr_rt.n_pes; pe++) {
        sr_blob_hdr_t hdr;
        if (lens[pe] < sizeof(hdr))
            continue;  /* sr_peer_connect reports it */
        memcpy(&hdr, blobs[pe], sizeof(hdr));
        if (hdr.magic != SR_BLOB_MAGIC || hdr.heap_size == sr_rt.heap_size)
            continue;
        if (ndiff++ < 8 && pos < sizeof(list))
            pos += (size_t)snprintf(list + pos, sizeof(list) - pos, "%sPE %d has %llu",
                                    ndiff > 1 ? ", " : "", pe,
                                    (unsigned long long)hdr.heap_size);
    }
    if (ndiff == 0)
        return SYMRAIL_OK;
    sr_error("SYMRAIL_HEAP_SIZE differs between PEs: PE %d has %zu bytes, %s%s; "
             "set the same value on every PE", sr_rt.my_pe, sr_rt.heap_size, list,
             ndiff > 8 ? ", ..." : "");
    return SYMRAIL_ERR_INVALID;
}

/* Offsets in the data segment are symmetric only if every PE runs the same
 * executable: the segments must have the same size and place in the file.
 * Every PE sees every blob, so all of them decide alike; a job whose PEs
 * differ still runs, with the heap only. */
static void sr_data_agree(void *const *blobs, const size_t *lens)
{
    int diff = -1;
    sr_blob_hdr_t hdr = { 0 };
    for (int pe = 0; pe < sr_rt.n_pes && diff < 0; pe++) {
        if (lens[pe] < sizeof(hdr))
            continue;  /* sr_peer_connect reports it */
        memcpy(&hdr, blobs[pe], sizeof(hdr));
        if (hdr.data_len != sr_rt.data_len || hdr.data_vaddr != sr_rt.data_vaddr)
            diff = pe;
    }
    sr_rt.data_on = sr_rt.data_len != 0 && diff < 0;
    if (diff < 0 || sr_rt.data_len == 0)
        return;
    /* Once, from the first PE that has the segment. */
    if (sr_rt.my_pe == (diff == 0 ? 1 : 0))
        sr_warn("global and static variables are not symmetric in this job: PE %d has a data "
                "segment of %zu bytes at 0x%llx in its executable, PE %d %llu bytes at 0x%llx "
                "(not the same executable, or SYMRAIL_SYMMETRIC_DATA=0 there); only the "
                "symmetric heap is", sr_rt.my_pe, sr_rt.data_len,
                (unsigned long long)sr_rt.data_vaddr, diff, (unsigned long long)hdr.data_len,
                (unsigned long long)hdr.data_vaddr);
}

/*
 * More PEs on this node than the CPUs they may run on, all of them
 * together: spinning waits steal the CPU from the peer they wait for, so
 * they yield instead.  The union, not this PE's own CPUs: PEs bound a core
 * each (symrun, mpirun) each see one CPU, yet none shares it.  A PE whose
 * CPUs are not known makes it the node's count.
 */
static void sr_oversubscribed_decide(void *const *blobs, const size_t *lens)
{
    const sr_boot_info_t *bi = sr_boot_info(sr_rt.boot);
    uint64_t all[SR_BLOB_CPU_WORDS] = { 0 };
    int known = 1, cpus = 0;
    for (int pe = 0; pe < sr_rt.n_pes; pe++) {
        sr_blob_hdr_t hdr;
        uint64_t any = 0;
        if (!bi->is_local[pe])
            continue;
        if (lens[pe] < sizeof(hdr)) {
            known = 0;  /* sr_peer_connect reports it */
            continue;
        }
        memcpy(&hdr, blobs[pe], sizeof(hdr));
        for (int w = 0; w < SR_BLOB_CPU_WORDS; w++) {
            all[w] |= hdr.cpus[w];
            any |= hdr.cpus[w];
        }
        known &= any != 0;
    }
    for (int w = 0; w < SR_BLOB_CPU_WORDS; w++)
        cpus += __builtin_popcountll(all[w]);
    if (!known || cpus == 0)
        cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    sr_rt.oversubscribed = cpus > 0 && bi->local_size > cpus;
    sr_info("PEs on this node: %d, CPUs they may run on: %d; waits %s", bi->local_size, cpus,
            sr_rt.oversubscribed ? "yield (oversubscribed)" : "poll");
}

/* The transports that want the job key get it now, between the exchange
 * that carried it and the first connect; a PE that dialled us early waits
 * in its handshake meanwhile. */
static symrail_status_t sr_job_key_hand_out(void)
{
    uint8_t key[SR_BOOT_KEY_LEN];
    const char *source = sr_boot_info(sr_rt.boot)->singleton
                             ? "random, of this process alone (no launcher)"
                             : "random, drawn by PE 0 and handed out by the launcher's PMIx "
                               "server to this job's processes";
    _Static_assert(SR_BOOT_KEY_LEN == SR_TL_JOB_KEY_LEN, "one key length");
    symrail_status_t st = sr_boot_key(sr_rt.boot, key);
    if (st != SYMRAIL_OK && st != SYMRAIL_ERR_UNSUPPORTED)
        return st;
    for (int i = 0; i < sr_rt.ntls; i++) {
        if (!sr_rt.tls[i].attr.job_key)
            continue;
        symrail_status_t kst = sr_rt.tls[i].ops->job_key(sr_rt.tls[i].tl,
                                                         st == SYMRAIL_OK ? key : NULL, source);
        if (kst != SYMRAIL_OK)
            return kst;
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_wireup(void)
{
    void *blob = NULL, **blobs = NULL;
    size_t len = 0, *lens = NULL;
    int want_key = 0;
    for (int i = 0; i < sr_rt.ntls; i++)
        want_key |= sr_rt.tls[i].attr.job_key;
    symrail_status_t st = want_key ? sr_boot_key_offer(sr_rt.boot) : SYMRAIL_OK;
    if (st == SYMRAIL_OK)
        st = sr_blob_pack(&blob, &len);
    if (st != SYMRAIL_OK)
        return st;
    st = sr_boot_exchange(sr_rt.boot, blob, len, &blobs, &lens);
    free(blob);
    if (st != SYMRAIL_OK)
        return st;
    if (want_key)
        st = sr_job_key_hand_out();
    if (st != SYMRAIL_OK) {
        sr_boot_blobs_free(sr_rt.boot, blobs, lens);
        return st;
    }
    st = sr_heap_sizes_agree(blobs, lens);
    sr_data_agree(blobs, lens);
    sr_oversubscribed_decide(blobs, lens);
    for (int pe = 0; pe < sr_rt.n_pes && st == SYMRAIL_OK; pe++)
        st = sr_peer_connect(pe, blobs[pe], lens[pe]);
    sr_boot_blobs_free(sr_rt.boot, blobs, lens);
    if (st == SYMRAIL_OK)
        st = sr_amo_route_publish();
    if (st != SYMRAIL_OK)
        return st;
    /* Every PE has mapped what it needs: the names of shared objects can go,
     * so that nothing outlives the job even if it is killed. */
    st = sr_boot_fence(sr_rt.boot);
    if (st != SYMRAIL_OK)
        return st;
    sr_amo_route_apply(sr_is_local);
    for (int i = 0; i < sr_rt.ntls; i++)
        sr_rt.tls[i].ops->wireup_done(sr_rt.tls[i].tl);
    sr_shm_unlink(sr_rt.heap_name);
    sr_rt.heap_named = 0;
    if (sr_rt.data_named)
        sr_shm_unlink(sr_rt.data_name);
    sr_rt.data_named = 0;

    /* Sleeping on one transport is only safe when it carries every peer. */
    sr_rt.sleeper = -1;
    for (int i = 0; i < sr_rt.ntls; i++) {
        int all = 1;
        for (int pe = 0; pe < sr_rt.n_pes; pe++)
            all &= sr_rt.peers[pe].ops == sr_rt.tls[i].ops;
        if (all && sr_rt.tls[i].attr.can_sleep)
            sr_rt.sleeper = i;
    }
    sr_wait_setup();
    return SYMRAIL_OK;
}
