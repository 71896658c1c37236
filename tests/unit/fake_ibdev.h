/*
 * A fake RDMA device for the verbs transport's unit tests (test_ib_getloss):
 * QPs that execute their work requests in order against `rmem` (the peer's
 * memory at RADDR: a READ copies into the WR's local address, a WRITE out
 * of it), complete the signalled ones on their rail's CQ, and in error
 * flush everything they still hold, as RC does; ibv_create_qp, _destroy_qp,
 * _query_qp and _modify_qp are defined here.  The lanes loop back to their
 * own PE, so the receive PSN a QP reports is its own responder's.  The
 * includer defines NRAILS, TOTAL (bytes of rmem) and RADDR first.
 */
#ifndef SR_TEST_FAKE_IBDEV_H
#define SR_TEST_FAKE_IBDEV_H

#include <errno.h>

#define MAXQPS  512
#define RING    1024

typedef struct {
    uint64_t wr_id;
    int      opcode, sig;
    uintptr_t laddr;
    uint32_t len;
    uint64_t raddr;
    uint32_t psn_next;
} fwr_t;

typedef struct {
    struct ibv_qp qp;  /* first: the library's handle */
    int      dev, err, destroyed;
    uint32_t sq_psn, rq_psn, mtu;
    fwr_t    sq[RING];
    unsigned head, tail;
} fqp_t;

typedef struct {
    struct ibv_wc wc;
    uint32_t      qpn;
} fcqe_t;

static struct ibv_context fctx;
static struct ibv_cq fcq[NRAILS];
static struct ibv_mr fmr[NRAILS];
static fqp_t fqps[MAXQPS];
static int nfqps;
static fcqe_t cqes[NRAILS][RING];
static unsigned cq_head[NRAILS], cq_tail[NRAILS];
static unsigned char rmem[TOTAL];  /* the peer's heap: what the gets read */

static fqp_t *fq(struct ibv_qp *qp)
{
    return (fqp_t *)(void *)qp;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    (void)pd;
    assert_true(nfqps < MAXQPS);
    fqp_t *q = &fqps[nfqps];
    memset(q, 0, sizeof(*q));
    q->qp.context = &fctx;
    q->qp.qp_num = 1000 + (uint32_t)nfqps++;
    q->dev = ia->send_cq == &fcq[1];
    q->mtu = 1024;
    ia->cap.max_inline_data = 48;
    return &q->qp;
}

/* A QP destroyed with a completion of it still to come would name an op
 * that may serve another WR by then. */
int ibv_destroy_qp(struct ibv_qp *qp)
{
    fqp_t *q = fq(qp);
    assert_int_equal(q->head, q->tail);
    for (unsigned i = cq_head[q->dev]; i != cq_tail[q->dev]; i++)
        assert_int_not_equal(cqes[q->dev][i % RING].qpn, qp->qp_num);
    q->destroyed = 1;
    return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *ia)
{
    (void)mask, (void)ia;
    a->qp_state = fq(qp)->err ? IBV_QPS_ERR : IBV_QPS_RTS;
    a->rq_psn = fq(qp)->rq_psn;
    return 0;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    fqp_t *q = fq(qp);
    if (a->qp_state == IBV_QPS_ERR)
        q->err = 1;  /* what it holds is flushed on the device's next step */
    if (a->qp_state == IBV_QPS_RTR) {
        q->rq_psn = a->rq_psn & 0xffffff;
        q->mtu = 128u << a->path_mtu;
    }
    if (a->qp_state == IBV_QPS_RTS && (mask & IBV_QP_SQ_PSN))
        q->sq_psn = a->sq_psn & 0xffffff;
    return 0;
}

static void cqe_add(fqp_t *q, uint64_t wr_id, enum ibv_wc_status st)
{
    assert_true(cq_tail[q->dev] - cq_head[q->dev] < RING);
    cqes[q->dev][cq_tail[q->dev]++ % RING] =
        (fcqe_t){ { .wr_id = wr_id, .status = st }, q->qp.qp_num };
}

static int post_fails;  /* the next post takes this many WRs less one, then refuses */

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    fqp_t *q = fq(qp);
    assert_false(q->destroyed);
    for (; wr; wr = wr->next) {
        if (post_fails > 0 && --post_fails == 0) {
            *bad = wr;  /* this one and those after it never reached the QP */
            return ENOMEM;
        }
        assert_true(q->tail - q->head < RING);
        uint32_t len = wr->num_sge ? wr->sg_list[0].length : 0;
        q->sq_psn += wr->opcode == IBV_WR_RDMA_READ || wr->opcode == IBV_WR_RDMA_WRITE
                         ? (len ? (len - 1) / q->mtu + 1 : 1) : 1;
        q->sq_psn &= 0xffffff;
        q->sq[q->tail++ % RING] = (fwr_t){ wr->wr_id, wr->opcode,
                                           (wr->send_flags & IBV_SEND_SIGNALED) != 0,
                                           wr->num_sge ? wr->sg_list[0].addr : 0, len,
                                           wr->wr.rdma.remote_addr, q->sq_psn };
    }
    return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int d = cq == &fcq[1], k = 0;
    while (k < n && cq_head[d] != cq_tail[d])
        wc[k++] = cqes[d][cq_head[d]++ % RING].wc;
    return k;
}

static int fqp_busy(const fqp_t *q)
{
    return !q->destroyed && q->head != q->tail;
}

/* The responder (the QP itself: the lanes loop back) executes the head WR;
 * `land`: the bytes of a read that reach us (all, half or none). */
static fwr_t *fqp_exec(fqp_t *q, uint32_t land)
{
    fwr_t *w = &q->sq[q->head % RING];
    if (w->len && w->raddr >= RADDR) {
        uint64_t off = w->raddr - RADDR;
        assert_true(off + w->len <= TOTAL);
        if (w->opcode == IBV_WR_RDMA_READ)
            memcpy((void *)w->laddr, rmem + off, land < w->len ? land : w->len);
        else
            memcpy(rmem + off, (void *)w->laddr, w->len);
    }
    q->rq_psn = w->psn_next;
    return w;
}

static void fqp_complete_head(fqp_t *q)
{
    fwr_t *w = fqp_exec(q, UINT32_MAX);
    if (w->sig)
        cqe_add(q, w->wr_id, IBV_WC_SUCCESS);
    q->head++;
}

/* In error: every WR it still holds completes flushed, in order. */
static void fqp_flush(fqp_t *q)
{
    q->err = 1;
    for (; q->head != q->tail; q->head++)
        cqe_add(q, q->sq[q->head % RING].wr_id, IBV_WC_WR_FLUSH_ERR);
}

/* The QP's retries ran out on its head WR. */
static void fqp_retry_exceeded(fqp_t *q)
{
    cqe_add(q, q->sq[q->head++ % RING].wr_id, IBV_WC_RETRY_EXC_ERR);
    fqp_flush(q);
}

#endif
