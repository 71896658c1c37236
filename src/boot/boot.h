/* Bootstrap: who am I, who are my peers, which of them share my node, and an
 * all-to-all exchange of one connection blob per PE (through PMIx). */
#ifndef SR_BOOT_H
#define SR_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

typedef struct sr_boot sr_boot_t;

typedef struct {
    int   rank;
    int   size;
    int   local_rank;
    int   local_size;
    int   singleton;      /* started without a launcher: one PE */
    char  job[256];       /* namespace: unique per job */
    char  host[256];
    uint8_t *is_local;    /* [size]: 1 when the PE shares this node */
} sr_boot_info_t;

/* timeout_ms bounds every fence (0: no limit). */
symrail_status_t sr_boot_init(uint64_t timeout_ms, sr_boot_t **boot_p);
const sr_boot_info_t *sr_boot_info(const sr_boot_t *boot);
/* Publishes `blob` and returns every PE's blob (blobs_p[rank] is ours too);
 * free with sr_boot_blobs_free.  Collective. */
symrail_status_t sr_boot_exchange(sr_boot_t *boot, const void *blob, size_t len,
                                  void ***blobs_p, size_t **lens_p);
void sr_boot_blobs_free(sr_boot_t *boot, void **blobs, size_t *lens);
/* A barrier through the launcher (slow; for init and finalize only). */
symrail_status_t sr_boot_fence(sr_boot_t *boot);
/* Asks the launcher to end the whole job; does not return. */
void sr_boot_abort(sr_boot_t *boot, int code, const char *msg) __attribute__((noreturn));
void sr_boot_fini(sr_boot_t *boot);

/* This PE's calls into PMIx since sr_boot_init, and the bytes of the values
 * they carried: what init costs the launcher as the job grows (printed with
 * SYMRAIL_STATS).  A collecting fence brings every PE's data along, so the
 * gets after it are answered from the local copy; get_bytes still counts
 * them, which is what this PE took in. */
typedef struct {
    uint64_t gets, get_bytes;
    uint64_t puts, put_bytes;
    uint64_t fences;
    uint64_t names;       /* publish, unpublish and lookup calls */
} sr_boot_stats_t;
void sr_boot_stats(const sr_boot_t *boot, sr_boot_stats_t *stats_p);

/*
 * A job key: SR_BOOT_KEY_LEN random bytes that rank 0 draws and that reach
 * the processes of this job only, through the launcher's PMIx server, which
 * gives a job's data to the clients it authenticated as that job's.  It
 * travels with the next sr_boot_exchange (no fence of its own): every PE that
 * wants it calls sr_boot_key_offer before that exchange (rank 0 draws and
 * puts the key) and sr_boot_key after it (one get of rank 0's key).
 * SYMRAIL_ERR_UNSUPPORTED from sr_boot_key: rank 0 put none (it did not want
 * one, or its PMIx could not carry it); every PE that asks learns the same.
 * A singleton draws a key of its own.
 */
#define SR_BOOT_KEY_LEN 32
symrail_status_t sr_boot_key_offer(sr_boot_t *boot);
symrail_status_t sr_boot_key(sr_boot_t *boot, uint8_t key_p[SR_BOOT_KEY_LEN]);

/*
 * Names: small binary values (segment descriptors) published under a key
 * through the launcher's PMIx publish/lookup, visible to the PEs of this job
 * only (the PMIx key carries the job's namespace, so jobs that share a
 * launcher or data server never see each other's names; the PMIx range is
 * the default, PMIX_RANGE_SESSION) and kept until the publisher unpublishes
 * them or ends (PMIX_PERSIST_PROC).  Keys are at most SR_BOOT_NAME_KEY_MAX bytes, values
 * 1..SR_BOOT_NAME_VAL_MAX bytes of anything, zero bytes included.
 * SYMRAIL_ERR_UNSUPPORTED for a singleton and where the launcher has no
 * publish/lookup (logged at info once): the caller then uses a channel of its
 * own.
 */
#define SR_BOOT_NAME_KEY_MAX 255
#define SR_BOOT_NAME_VAL_MAX (64 * 1024)
/* Publishing a key this PE already published replaces its value; a key
 * another PE of the job published is SYMRAIL_ERR_STATE. */
symrail_status_t sr_boot_publish(sr_boot_t *boot, const char *key, const void *val, size_t len);
/* A key that is not published is not an error. */
symrail_status_t sr_boot_unpublish(sr_boot_t *boot, const char *key);
/* Waits up to timeout_ms for the key to be published (0: looks once) and
 * returns a copy of its value (free() it); SYMRAIL_ERR_TIMEOUT if it was not
 * published in time.  Thread-safe. */
symrail_status_t sr_boot_lookup(sr_boot_t *boot, const char *key, uint64_t timeout_ms,
                                void **val_p, size_t *len_p);

/* PMIX_LOCAL_PEERS, a comma list of ranks (util/strlist rules): marks each in
 * is_local[size] and counts it once in *local_size_p.  SYMRAIL_ERR_BOOT when
 * an entry is not a rank below `size`. */
symrail_status_t sr_boot_local_peers_parse(const char *list, int size, uint8_t *is_local,
                                           int *local_size_p);

#endif
