/* The bootstrap's state, shared by the files of src/boot. */
#ifndef SR_BOOT_INT_H
#define SR_BOOT_INT_H

#include "boot.h"

#include <pmix.h>
#include <pthread.h>

/* A name this PE published, taken back at finalize where the launcher does
 * not honour PMIX_PERSIST_PROC (Open MPI 4.1's mpirun). */
typedef struct sr_boot_name {
    struct sr_boot_name *next;
    char key[PMIX_MAX_KEYLEN + 1];
} sr_boot_name_t;

struct sr_boot {
    sr_boot_info_t info;
    pmix_proc_t    myproc;
    int            pmix_up;
    int            timeout_s;   /* PMIX_TIMEOUT for fences; 0: none */
    unsigned       exchanges;   /* blobs published so far: each under a key of its own */
    _Atomic int    names_off;   /* the launcher has no publish/lookup (told once) */
    pthread_mutex_t names_lock;
    sr_boot_name_t *names;      /* published by this PE */
    /* The job key (boot_key.c): rank 0's, and the exchange it rides on. */
    uint8_t        key[SR_BOOT_KEY_LEN];
    int            key_state;   /* SR_BOOT_KEY_* */
    unsigned       key_exchange;
    sr_boot_stats_t stats;      /* updated atomically: lookups come from any thread */
};

enum { SR_BOOT_KEY_NONE, SR_BOOT_KEY_OWN };

/* A PMIx status as ours: the codes every boot call shares. */
symrail_status_t sr_boot_status(pmix_status_t rc);
/* PMIx_Get, counted in boot->stats; the value as PMIx_Get gives it. */
pmix_status_t sr_boot_get(sr_boot_t *boot, const pmix_proc_t *proc, const char *key,
                          pmix_value_t **val_p);
/* Counts a PMIx_Put of `len` bytes. */
void sr_boot_count_put(sr_boot_t *boot, size_t len);
/* Counts a PMIx_Publish, _Unpublish or _Lookup. */
void sr_boot_count_name(sr_boot_t *boot);
/* Unpublishes what this PE still has published; before PMIx_Finalize. */
void sr_boot_names_fini(sr_boot_t *boot);

#endif
