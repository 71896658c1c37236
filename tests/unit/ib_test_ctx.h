/*
 * What the verbs unit tests that build a context by hand (test_ib_fake,
 * test_ib_getloss) free again: its flushes, op pool, buffers, lanes, and
 * its one endpoint.
 */
#ifndef SR_TEST_IB_TEST_CTX_H
#define SR_TEST_IB_TEST_CTX_H

#include <stdlib.h>

static void ib_test_ctx_free(sr_tl_ctx_t *ctx, sr_tl_ep_t *ep)
{
    for (sr_ib_flush_t *f = ctx->flushes, *n; f; f = n) {
        n = f->next;
        free(f);
    }
    sr_pool_fini(&ctx->ops);
    free(ctx->scratch);
    free(ctx->bounce);
    free(ctx->amo_res);
    free(ctx->lanes);
    free(ep);
    free(ctx);
}

#endif
