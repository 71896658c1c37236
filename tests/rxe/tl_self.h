/* For the tests of the verbs transport through its ops table: one PE (0
 * of a one-PE job) with an endpoint to itself over every rail. */
#ifndef SR_TESTS_TL_SELF_H
#define SR_TESTS_TL_SELF_H

#include <stdio.h>
#include <stdlib.h>

#include "tl/tl.h"
#include "util/env.h"

extern const sr_tl_ops_t sr_tl_verbs_ops;

/* 0 when the transport is up, else the exit status: 77 without a device. */
static inline int tl_self_init(const char *job, int mt, sr_tl_notify_cb_t notify_cb,
                               sr_env_t *env, sr_tl_ctx_t **ctx_p)
{
    static uint8_t is_local = 1;
    if (sr_env_load(getenv, env) != SYMRAIL_OK)
        return 1;
    sr_tl_params_t params = { .my_pe = 0, .n_pes = 1, .job = job, .is_local = &is_local,
                              .env = env, .serve_local = 1, .thread_multiple = mt,
                              .notify_cb = notify_cb };
    symrail_status_t st = sr_tl_verbs_ops.init(&params, ctx_p);
    if (st == SYMRAIL_ERR_UNSUPPORTED) {
        printf("SKIP: no RDMA device here\n");
        return 77;
    }
    if (st != SYMRAIL_OK) {
        fprintf(stderr, "FAIL: verbs init: %d\n", (int)st);
        return 1;
    }
    return 0;
}

/* Registers heap as region 0 and connects to ourselves: the address blob
 * (free it at the end), or NULL after saying why. */
static inline void *tl_self_connect(sr_tl_ctx_t *ctx, void *heap, size_t len, sr_tl_ep_t **ep_p)
{
    const sr_tl_ops_t *ops = &sr_tl_verbs_ops;
    sr_tl_mem_t mem = { .addr = heap, .len = len };
    size_t alen = 0;
    void *addr = NULL;
    if (ops->mem_reg(ctx, SR_TL_REGION_HEAP, &mem) != SYMRAIL_OK ||
        ops->addr_pack(ctx, NULL, &alen) != SYMRAIL_OK || (addr = malloc(alen)) == NULL ||
        ops->addr_pack(ctx, addr, &alen) != SYMRAIL_OK || !ops->reachable(ctx, 0, addr, alen) ||
        ops->connect(ctx, 0, addr, alen, ep_p) != SYMRAIL_OK) {
        fprintf(stderr, "FAIL: cannot connect to ourselves\n");
        free(addr);
        return NULL;
    }
    ops->wireup_done(ctx);
    return addr;
}

#endif
