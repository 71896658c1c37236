/* sr_bench: the timed kernels. */
#include "sr_bench.h"

symrail_status_t k_put(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_put(b->dst, b->src, n, TARGET_PE);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

/* Blocking put and get from and into private (malloc'd) memory. */
symrail_status_t k_put_priv(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_put(b->dst, b->psrc, n, TARGET_PE);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

symrail_status_t k_get_priv(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_get(b->pdst, b->gsrc, n, TARGET_PE);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

/* A put and its remote completion. */
symrail_status_t k_put_quiet(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_put(b->dst, b->src, n, TARGET_PE);
        if (st == SYMRAIL_OK)
            st = symrail_quiet();
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

symrail_status_t k_put_nbi(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_put_nbi(b->dst, b->src, n, TARGET_PE);
        if (st == SYMRAIL_OK && (i + 1) % (uint64_t)b->window == 0)
            st = symrail_quiet();
        if (st != SYMRAIL_OK)
            return st;
    }
    return symrail_quiet();
}

symrail_status_t k_get(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_get(b->gdst, b->gsrc, n, TARGET_PE);
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}

symrail_status_t k_get_nbi(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_get_nbi(b->gdst, b->gsrc, n, TARGET_PE);
        if (st == SYMRAIL_OK && (i + 1) % (uint64_t)b->window == 0)
            st = symrail_quiet();
        if (st != SYMRAIL_OK)
            return st;
    }
    return symrail_quiet();
}

/* The compiler barrier keeps repeated identical copies from being merged. */
symrail_status_t k_memcpy_put(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        memcpy(b->dst_map, b->src, n);
        __asm__ __volatile__("" ::: "memory");
    }
    return SYMRAIL_OK;
}

symrail_status_t k_memcpy_get(bench_t *b, size_t n, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        memcpy(b->gdst, b->gsrc_map, n);
        __asm__ __volatile__("" ::: "memory");
    }
    return SYMRAIL_OK;
}

symrail_status_t k_fetch_add(bench_t *b, size_t n, uint64_t iters)
{
    (void)n;
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t old;
        symrail_status_t st = symrail_atomic_fetch_add(&b->ctl->counter, 1, TARGET_PE, &old);
        if (st != SYMRAIL_OK)
            return st;
        b->data_errors += old != b->fadd_expect++;
    }
    return SYMRAIL_OK;
}

symrail_status_t k_signal_pp(bench_t *b, size_t n, uint64_t iters)
{
    (void)n;
    for (uint64_t i = 1; i <= iters; i++) {
        uint64_t v = b->cur_base + i;
        symrail_status_t st = symrail_put_signal(&b->ctl->pingbuf, &v, sizeof(v), &b->ctl->ping,
                                                 v, SYMRAIL_SIGNAL_SET, TARGET_PE);
        if (st == SYMRAIL_OK)
            st = symrail_signal_wait_until(&b->ctl->pong, SYMRAIL_CMP_GE, v, NULL);
        if (st != SYMRAIL_OK)
            return st;
        b->data_errors += b->ctl->pongbuf != v;
    }
    return SYMRAIL_OK;
}

symrail_status_t k_notify_pp(bench_t *b, size_t n, uint64_t iters)
{
    (void)n;
    for (uint64_t i = 0; i < iters; i++) {
        symrail_notify_t m;
        symrail_status_t st = symrail_notify_send(TARGET_PE, NOTIFY_TAG, &i, sizeof(i));
        if (st == SYMRAIL_OK)
            st = symrail_notify_wait(-1, &m);
        if (st != SYMRAIL_OK)
            return st;
        uint64_t echoed;
        memcpy(&echoed, m.payload, sizeof(echoed));
        b->data_errors += m.src_pe != TARGET_PE || m.tag != NOTIFY_TAG ||
                          m.len != sizeof(i) || echoed != i;
    }
    return SYMRAIL_OK;
}

symrail_status_t k_barrier(bench_t *b, size_t n, uint64_t iters)
{
    (void)b;
    (void)n;
    for (uint64_t i = 0; i < iters; i++) {
        symrail_status_t st = symrail_barrier_all();
        if (st != SYMRAIL_OK)
            return st;
    }
    return SYMRAIL_OK;
}
