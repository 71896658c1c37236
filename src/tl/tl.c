#include "config.h"
#include "tl.h"
#include "util/atomic.h"

extern const sr_tl_ops_t sr_tl_shm_ops;
extern const sr_tl_ops_t sr_tl_verbs_ops;
extern const sr_tl_ops_t sr_tl_tcp_ops;

const sr_tl_ops_t *const sr_tl_all[] = {
    &sr_tl_shm_ops,
    &sr_tl_verbs_ops,
    &sr_tl_tcp_ops,
};
/* Transports hand sr_tl_amo_t kinds to util/atomic.h as they are. */
_Static_assert((int)SR_TL_AMO_FETCH == SR_CPU_AMO_FETCH && (int)SR_TL_AMO_SET == SR_CPU_AMO_SET &&
                   (int)SR_TL_AMO_ADD == SR_CPU_AMO_ADD &&
                   (int)SR_TL_AMO_SWAP == SR_CPU_AMO_SWAP &&
                   (int)SR_TL_AMO_CSWAP == SR_CPU_AMO_CSWAP &&
                   (int)SR_TL_AMO_AND == SR_CPU_AMO_AND && (int)SR_TL_AMO_OR == SR_CPU_AMO_OR &&
                   (int)SR_TL_AMO_XOR == SR_CPU_AMO_XOR &&
                   (int)SR_TL_AMO_W32 == SR_CPU_AMO_W32,
               "sr_tl_amo_t and util/atomic.h number the kinds alike");

const size_t sr_tl_nall = sizeof(sr_tl_all) / sizeof(sr_tl_all[0]);

int sr_tl_one_lane(sr_tl_ep_t *ep, uint32_t *weights_p, int max)
{
    (void)ep, (void)max;
    weights_p[0] = 1;
    return 1;
}

symrail_status_t sr_tl_flush_nothing(sr_tl_ep_t *ep, uint32_t lanes, sr_tl_comp_t *comp)
{
    (void)ep, (void)comp;
    return SYMRAIL_OK;
}

void *sr_tl_no_ptr(sr_tl_ep_t *ep, uint32_t region, uint64_t offset)
{
    (void)ep, (void)region, (void)offset;
    return NULL;
}

symrail_status_t sr_tl_no_ep_addr(sr_tl_ep_t *ep, void *buf, size_t *len_p)
{
    (void)ep, (void)buf, (void)len_p;
    return SYMRAIL_ERR_UNSUPPORTED;
}

void sr_tl_no_ep_ctl(sr_tl_ep_t *ep, const void *msg, size_t len)
{
    (void)ep, (void)msg, (void)len;
}

void sr_tl_no_stats(sr_tl_ctx_t *ctx, symrail_stats_t *stats_p)
{
    (void)ctx, (void)stats_p;
}

void sr_tl_no_prefetch(sr_tl_ep_t *ep, uint32_t region, uint64_t offset, int write)
{
    (void)ep, (void)region, (void)offset, (void)write;
}

void sr_tl_no_local_hint(sr_tl_ep_t *ep, const void *local, size_t len)
{
    (void)ep, (void)local, (void)len;
}

uint64_t sr_tl_heard_unknown(sr_tl_ep_t *ep)
{
    (void)ep;
    return 0;
}

symrail_status_t sr_tl_no_job_key(sr_tl_ctx_t *ctx, const uint8_t *key, const char *source)
{
    (void)ctx, (void)key, (void)source;
    return SYMRAIL_OK;
}
