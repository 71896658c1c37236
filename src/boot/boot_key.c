/*
 * The job key: random bytes that rank 0 draws and that reach the PEs of its
 * job, and no other process, through the launcher's PMIx server.  The server
 * hands a job's data only to clients it authenticated (by uid, through its
 * socket) as processes of that job, so the key is as private as the launcher
 * keeps the job; it rides on the data the next sr_boot_exchange collects, so
 * it costs no fence and one get per PE.
 */
#include "config.h"
#include "boot_int.h"
#include "util/crypto.h"
#include "util/log.h"

#include <stdio.h>
#include <string.h>

#define SR_BOOT_JOB_KEY "symrail.jobkey"

/* Under the key of the exchange it rides on: a library started again after
 * finalize has a new key, and peers may still cache the old one. */
static void sr_boot_key_name(unsigned exchange, char *name, size_t len)
{
    snprintf(name, len, "%s.%u", SR_BOOT_JOB_KEY, exchange);
}

symrail_status_t sr_boot_key_offer(sr_boot_t *boot)
{
    boot->key_exchange = boot->exchanges;
    boot->key_state = SR_BOOT_KEY_NONE;
    if (boot->info.rank != 0)
        return SYMRAIL_OK;
    if (sr_crypto_random(boot->key, sizeof(boot->key)) != SYMRAIL_OK) {
        sr_error("libcrypto has no random bytes for the job key");
        return SYMRAIL_ERR_SYSTEM;
    }
    boot->key_state = SR_BOOT_KEY_OWN;
    if (!boot->pmix_up)
        return SYMRAIL_OK;  /* a singleton: nobody else needs it */
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)boot->key;
    value.data.bo.size = sizeof(boot->key);
    char name[PMIX_MAX_KEYLEN + 1];
    sr_boot_key_name(boot->key_exchange, name, sizeof(name));
    /* Committed with the exchange's blob. */
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, name, &value);
    sr_boot_count_put(boot, sizeof(boot->key));
    if (rc != PMIX_SUCCESS) {
        /* The others find no key and fall back alike. */
        sr_warn("the launcher's PMIx cannot carry a job key (PMIx_Put: %s)",
                PMIx_Error_string(rc));
        boot->key_state = SR_BOOT_KEY_NONE;
    }
    return SYMRAIL_OK;
}

symrail_status_t sr_boot_key(sr_boot_t *boot, uint8_t key_p[SR_BOOT_KEY_LEN])
{
    if (boot->exchanges != boot->key_exchange + 1) {
        sr_error("internal: the job key is read before its exchange");
        return SYMRAIL_ERR_STATE;
    }
    if (boot->info.rank == 0 || !boot->pmix_up) {
        if (boot->key_state != SR_BOOT_KEY_OWN)
            return SYMRAIL_ERR_UNSUPPORTED;
        memcpy(key_p, boot->key, SR_BOOT_KEY_LEN);
        return SYMRAIL_OK;
    }
    pmix_proc_t proc;
    pmix_value_t *val = NULL;
    char name[PMIX_MAX_KEYLEN + 1];
    sr_boot_key_name(boot->key_exchange, name, sizeof(name));
    PMIX_LOAD_PROCID(&proc, boot->myproc.nspace, 0);
    pmix_status_t rc = sr_boot_get(boot, &proc, name, &val);
    if (rc == PMIX_ERR_NOT_FOUND) {
        sr_info("PE 0 put no job key into the launcher's PMIx store");
        return SYMRAIL_ERR_UNSUPPORTED;
    }
    if (rc != PMIX_SUCCESS || val->type != PMIX_BYTE_OBJECT ||
        val->data.bo.size != SR_BOOT_KEY_LEN) {
        sr_error("reading PE 0's job key through PMIx failed: %s",
                 rc != PMIX_SUCCESS ? PMIx_Error_string(rc) : "not a key of the right size");
        if (val)
            PMIX_VALUE_RELEASE(val);
        return rc == PMIX_SUCCESS ? SYMRAIL_ERR_BOOT : sr_boot_status(rc);
    }
    memcpy(key_p, val->data.bo.bytes, SR_BOOT_KEY_LEN);
    PMIX_VALUE_RELEASE(val);
    return SYMRAIL_OK;
}
