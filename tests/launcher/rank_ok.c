/*
 * Launcher test: a complete PMIx exchange. Every rank publishes a value
 * derived from its rank and the job secret, fences with data collection and
 * checks every peer's value, so a passing run shows that the job data, the
 * node and process maps, the fence and the per-job secret are right for all
 * ranks.
 */

/* pmix_common.h uses POSIX string and environment functions inline. */
#define _GNU_SOURCE

#include <pmix.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RANK_OK_KEY "symrun.test.value"

/* Peers compare a digest, so that the secret itself never travels
 * through PMIx. */
static uint64_t digest(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static int fail(const pmix_proc_t *me, const char *what, pmix_status_t rc)
{
    fprintf(stderr, "rank_ok: rank %u: %s: %s\n", me->rank, what,
            PMIx_Error_string(rc));
    return 1;
}

static int get_u32(const pmix_proc_t *proc, const char *key, uint32_t *v_p)
{
    pmix_value_t *val = NULL;

    if (PMIx_Get(proc, key, NULL, 0, &val) != PMIX_SUCCESS || val == NULL)
        return -1;
    switch (val->type) {
    case PMIX_UINT32:
        *v_p = val->data.uint32;
        break;
    case PMIX_UINT16:
        *v_p = val->data.uint16;
        break;
    case PMIX_PROC_RANK:
        *v_p = val->data.rank;
        break;
    default:
        PMIX_VALUE_RELEASE(val);
        return -1;
    }
    PMIX_VALUE_RELEASE(val);
    return 0;
}

int main(void)
{
    pmix_proc_t me, wild, peer;
    pmix_value_t value, *val = NULL;
    pmix_info_t collect;
    pmix_status_t rc;
    const char *secret = getenv("SYMRAIL_JOB_SECRET");
    const char *x = getenv("SYMRUN_TEST_X");
    char mine[256], expect[256], peers_expect[8192];
    uint32_t size, local_rank, node_rank;
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0;
    size_t off = 0;
    bool flag = true;

    if (secret == NULL)
        secret = "";
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank_ok: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (get_u32(&wild, PMIX_JOB_SIZE, &size) != 0 || size == 0 || size > 1024)
        return fail(&me, "PMIX_JOB_SIZE", PMIX_ERR_NOT_FOUND);
    if (get_u32(&me, PMIX_LOCAL_RANK, &local_rank) != 0 ||
        local_rank != me.rank)
        return fail(&me, "PMIX_LOCAL_RANK", PMIX_ERR_BAD_PARAM);

    /* Node and process maps: every rank of the job is on this node. */
    if (PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &val) != PMIX_SUCCESS ||
        val->type != PMIX_STRING)
        return fail(&me, "PMIX_HOSTNAME", PMIX_ERR_NOT_FOUND);
    rc = PMIx_Resolve_peers(val->data.string, me.nspace, &procs, &nprocs);
    PMIX_VALUE_RELEASE(val);
    if (rc != PMIX_SUCCESS)
        return fail(&me, "PMIx_Resolve_peers", rc);
    if (nprocs != size)
        return fail(&me, "PMIx_Resolve_peers count", PMIX_ERR_BAD_PARAM);
    PMIX_PROC_FREE(procs, nprocs);
    if (get_u32(&me, PMIX_NODE_RANK, &node_rank) != 0 || node_rank != me.rank)
        return fail(&me, "PMIX_NODE_RANK", PMIX_ERR_BAD_PARAM);

    for (uint32_t i = 0; i < size; i++)
        off += (size_t)snprintf(peers_expect + off, sizeof(peers_expect) - off,
                                i ? ",%u" : "%u", i);
    if (PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val) != PMIX_SUCCESS ||
        val->type != PMIX_STRING || strcmp(val->data.string, peers_expect) != 0)
        return fail(&me, "PMIX_LOCAL_PEERS", PMIX_ERR_BAD_PARAM);
    PMIX_VALUE_RELEASE(val);

    snprintf(mine, sizeof(mine), "r%u:%016llx", me.rank,
             (unsigned long long)digest(secret));
    value.type = PMIX_STRING;
    value.data.string = mine;
    if ((rc = PMIx_Put(PMIX_GLOBAL, RANK_OK_KEY, &value)) != PMIX_SUCCESS)
        return fail(&me, "PMIx_Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS)
        return fail(&me, "PMIx_Commit", rc);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    if ((rc = PMIx_Fence(&wild, 1, &collect, 1)) != PMIX_SUCCESS)
        return fail(&me, "PMIx_Fence", rc);

    for (uint32_t i = 0; i < size; i++) {
        PMIX_LOAD_PROCID(&peer, me.nspace, i);
        if ((rc = PMIx_Get(&peer, RANK_OK_KEY, NULL, 0, &val)) != PMIX_SUCCESS)
            return fail(&me, "PMIx_Get of a peer's value", rc);
        /* The same secret must have reached every rank. */
        snprintf(expect, sizeof(expect), "r%u:%016llx", i,
                 (unsigned long long)digest(secret));
        if (val->type != PMIX_STRING || strcmp(val->data.string, expect) != 0)
            return fail(&me, "peer value mismatch", PMIX_ERR_BAD_PARAM);
        PMIX_VALUE_RELEASE(val);
    }

    printf("rank %u of %u: ok pid %ld secret_len %zu x=%s\n", me.rank, size,
           (long)getpid(), strlen(secret), x != NULL ? x : "(unset)");
    if (getenv("RANK_OK_EXTRA") != NULL) {
        /* Exercise the stderr path and a last line without a newline. */
        fprintf(stderr, "rank %u: a line on stderr\n", me.rank);
        printf("partial %u", me.rank);
    }
    fflush(stdout);

    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        return fail(&me, "PMIx_Finalize", rc);
    return 0;
}
