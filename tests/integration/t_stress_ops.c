/* The stress test's random operations, issued by one worker thread on its
 * own regions (see t_stress.h). */
#include "t_stress.h"

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 1 B .. ST_MAXLEN, most often small, often across the 64 KiB slices. */
static size_t pick_len(st_worker_t *w, size_t max)
{
    size_t len;
    switch (st_rnd(w) % 8) {
    case 0: case 1: case 2: len = 1 + st_rnd(w) % 256; break;
    case 3: case 4: len = 257 + st_rnd(w) % (16 * 1024); break;
    case 5: len = 60 * 1024 + st_rnd(w) % (16 * 1024); break;
    default: len = 1 + st_rnd(w) % ST_MAXLEN; break;
    }
    return len > max ? max : len;
}

static unsigned char *my_region(st_worker_t *w)
{
    return st_heap + st_slot(st_me, w->t) * ST_REGION;
}

void st_check_region(st_worker_t *w, int ci, int q, size_t off, size_t len,
                     const unsigned char *got, const char *what)
{
    const unsigned char *want = w->mirror + (size_t)q * ST_REGION + off;
    size_t i = st_diff(got, want, len);
    if (i != SIZE_MAX)
        ST_FAIL("mismatch: %s of %zu bytes at %zu on context %d: byte %zu of the region of "
                "(PE %d, thread %d) on PE %d is 0x%02x, expected 0x%02x " ST_REPLAY,
                what, len, off, ci, off + i, st_me, w->t, q, got[i], want[i],
                (unsigned long long)st_seed);
}

static void check_nbi(st_worker_t *w, const st_nbi_t *n)
{
    if (memcmp(n->old, n->want, n->width) != 0)
        ST_FAIL("mismatch: nbi atomic on word %d of (PE %d, thread %d) on PE %d fetched a "
                "wrong old value (%zu bytes) " ST_REPLAY, n->word, st_me, w->t, n->q, n->width,
                (unsigned long long)st_seed);
}

static void quiet(st_worker_t *w, int c)
{
    T_CHECK(symrail_ctx_quiet(w->ctx[c]));
    w->count[C_QUIET]++;
    w->dirty[c] = w->unfenced[c] = w->arena_ctx[c] = 0;
    /* Records of other contexts stay where they are: the library writes
     * their old values there at their own quiet. */
    for (int i = 0; i < ST_MAXNBI; i++) {
        if (w->nbi[i].ctx == c + 1) {
            check_nbi(w, &w->nbi[i]);
            w->amo_pend[w->nbi[i].q * ST_AWORDS + w->nbi[i].word] = 0;
            w->nbi[i].ctx = 0;
            w->nnbi--;
        }
    }
    int held = 0;
    for (int k = 0; k < ST_NCTX; k++)
        held |= w->arena_ctx[k];
    if (!held)
        w->arena_used = 0;
}

void st_quiet_all(st_worker_t *w)
{
    for (int c = 0; c < ST_NCTX; c++)
        if (w->dirty[c] || w->arena_ctx[c])
            quiet(w, c);
}

/* Stores on different contexts, or on one without a fence between them,
 * may land in any order: before a store to bytes an earlier store may
 * still be writing, complete the other contexts and fence this one. */
static void order_store(st_worker_t *w, int c)
{
    for (int k = 0; k < ST_NCTX; k++)
        if (k != c && w->dirty[k])
            quiet(w, k);
    if (w->unfenced[c]) {
        T_CHECK(symrail_ctx_fence(w->ctx[c]));
        w->count[C_FENCE]++;
        w->unfenced[c] = 0;
    }
}

static void do_put(st_worker_t *w, int kind)
{
    int q = (int)(st_rnd(w) % (uint64_t)st_npes), c = (int)(st_rnd(w) % ST_NCTX);
    size_t len = pick_len(w, ST_MAXLEN), off = st_rnd(w) % (ST_REGION - len + 1);
    unsigned char *dst = my_region(w) + off, *src = w->src;
    if (kind == C_PUT_NBI) {
        if (w->arena_used + len > ST_ARENA)
            st_quiet_all(w);
        src = w->arena + w->arena_used;
        w->arena_used += len;
    }
    order_store(w, c);
    st_fill(src, len, st_me, w->t, w->seq++);
    memcpy(w->mirror + (size_t)q * ST_REGION + off, src, len);
    if (kind == C_PUT) {
        T_CHECK(symrail_ctx_put(w->ctx[c], dst, src, len, q));
        /* The source may be reused at once: prove it by reusing it. */
        memset(src, 0xa5, len);
    } else if (kind == C_PUT_NBI) {
        T_CHECK(symrail_ctx_put_nbi(w->ctx[c], dst, src, len, q));
        w->arena_ctx[c] = 1;
    } else {
        uint64_t v = 1 + st_rnd(w) % 1000;
        symrail_signal_op_t op = st_rnd(w) % 4 ? SYMRAIL_SIGNAL_ADD : SYMRAIL_SIGNAL_SET;
        T_CHECK(symrail_ctx_put_signal(w->ctx[c], dst, src, len, &st_sig[st_slot(st_me, w->t)],
                                       v, op, q));
        memset(src, 0x5a, len);
        w->sig_expect[q] = op == SYMRAIL_SIGNAL_ADD ? w->sig_expect[q] + v : v;
    }
    w->dirty[c] = w->unfenced[c] = 1;
    w->count[kind]++;
    w->count[C_BYTES] += len;
}

static void do_get(st_worker_t *w, int nbi)
{
    int q = (int)(st_rnd(w) % (uint64_t)st_npes), c = (int)(st_rnd(w) % ST_NCTX);
    st_quiet_all(w);
    if (!nbi) {
        size_t len = pick_len(w, ST_MAXLEN), off = st_rnd(w) % (ST_REGION - len + 1);
        T_CHECK(symrail_ctx_get(w->ctx[c], w->buf, my_region(w) + off, len, q));
        st_check_region(w, c, q, off, len, w->buf, "get");
        if (st_rnd(w) % 4 == 0) {
            uint64_t s = 0;
            T_CHECK(symrail_ctx_get(w->ctx[c], &s, &st_sig[st_slot(st_me, w->t)], 8, q));
            if (s != w->sig_expect[q])
                ST_FAIL("mismatch: signal word of (PE %d, thread %d) on PE %d is %llu, "
                        "expected %llu " ST_REPLAY, st_me, w->t, q, (unsigned long long)s,
                        (unsigned long long)w->sig_expect[q], (unsigned long long)st_seed);
        }
        w->count[C_GET]++;
        w->count[C_BYTES] += len;
        return;
    }
    size_t at[4], lens[4], used = 0;
    int n = 1 + (int)(st_rnd(w) % 4);
    for (int i = 0; i < n; i++) {
        lens[i] = pick_len(w, (ST_MAXLEN - used) / (size_t)(n - i));
        if (lens[i] == 0)
            lens[i] = 1;
        at[i] = st_rnd(w) % (ST_REGION - lens[i] + 1);
        T_CHECK(symrail_ctx_get_nbi(w->ctx[c], w->buf + used, my_region(w) + at[i], lens[i], q));
        used += lens[i];
    }
    quiet(w, c);
    used = 0;
    for (int i = 0; i < n; i++) {
        st_check_region(w, c, q, at[i], lens[i], w->buf + used, "get_nbi");
        used += lens[i];
        w->count[C_BYTES] += lens[i];
    }
    w->count[C_GET_NBI] += (uint64_t)n;
}

static uint64_t load_w(const unsigned char *p, size_t width)
{
    if (width == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void store_w(unsigned char *p, size_t width, uint64_t v)
{
    if (width == 4) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

static void do_amo(st_worker_t *w, int nbi)
{
    int q = (int)(st_rnd(w) % (uint64_t)st_npes), c = (int)(st_rnd(w) % ST_NCTX);
    int k = (int)(st_rnd(w) % ST_AWORDS);
    size_t width = st_rnd(w) % 2 ? 4 : 8, half = width == 4 ? st_rnd(w) % 2 : 0;
    symrail_amo_op_t op = (symrail_amo_op_t)(st_rnd(w) % 8);
    int *pend = &w->amo_pend[q * ST_AWORDS + k];
    if (*pend)
        quiet(w, *pend - 1);
    if (nbi && w->nnbi == ST_MAXNBI)
        st_quiet_all(w);
    unsigned char *m = w->amo_model + ((size_t)q * ST_AWORDS + (size_t)k) * 8 + half * 4;
    uint64_t cur = load_w(m, width), value = st_rnd(w), cond = st_rnd(w) % 2 ? cur : st_rnd(w);
    if (width == 4) {
        value &= 0xffffffffu;
        cond &= 0xffffffffu;
    }
    uint64_t next = cur;
    switch (op) {
    case SYMRAIL_AMO_FETCH: break;
    case SYMRAIL_AMO_SET: case SYMRAIL_AMO_SWAP: next = value; break;
    case SYMRAIL_AMO_ADD: next = cur + value; break;
    case SYMRAIL_AMO_CSWAP: next = cur == cond ? value : cur; break;
    case SYMRAIL_AMO_AND: next = cur & value; break;
    case SYMRAIL_AMO_OR: next = cur | value; break;
    case SYMRAIL_AMO_XOR: next = cur ^ value; break;
    }
    store_w(m, width, next);
    unsigned char *target = (unsigned char *)&st_amo[st_slot(st_me, w->t) * ST_AWORDS + k] +
                            half * 4;
    if (nbi) {
        st_nbi_t *n = w->nbi;
        while (n->ctx)
            n++;
        w->nnbi++;
        memset(n, 0, sizeof(*n));
        store_w(n->want, width, cur);
        n->width = op == SYMRAIL_AMO_SET ? 0 : width;
        n->ctx = c + 1;
        n->q = q;
        n->word = k;
        T_CHECK(symrail_ctx_atomic_op_nbi(w->ctx[c], op, target, width, value, cond, q,
                                          op == SYMRAIL_AMO_SET ? NULL : n->old));
        *pend = c + 1;
        w->dirty[c] = 1;
        w->count[C_AMO_NBI]++;
        return;
    }
    unsigned char old[8] = { 0 };
    if (op == SYMRAIL_AMO_ADD && width == 8 && st_rnd(w) % 2) {
        uint64_t o = 0;
        T_CHECK(symrail_ctx_atomic_fetch_add(w->ctx[c], (uint64_t *)target, value, q, &o));
        memcpy(old, &o, 8);
    } else {
        T_CHECK(symrail_ctx_atomic_op(w->ctx[c], op, target, width, value, cond, q,
                                      op == SYMRAIL_AMO_SET ? NULL : old));
    }
    if (op != SYMRAIL_AMO_SET && load_w(old, width) != cur)
        ST_FAIL("mismatch: atomic %d (%zu bytes) on word %d of (PE %d, thread %d) on PE %d "
                "fetched %llu, expected %llu " ST_REPLAY, (int)op, width, k, st_me, w->t, q,
                (unsigned long long)load_w(old, width), (unsigned long long)cur,
                (unsigned long long)st_seed);
    w->count[C_AMO]++;
}

static void do_notify(st_worker_t *w)
{
    int q = (int)(st_rnd(w) % (uint64_t)st_npes);
    size_t len = ST_HDR + (st_rnd(w) % 4 ? st_rnd(w) % 240 :
                           st_rnd(w) % (SYMRAIL_NOTIFY_MAX_PAYLOAD - ST_HDR + 1));
    st_hdr_t h = { (uint32_t)w->t, (uint32_t)w->sent_msg[q], st_seed };
    memcpy(w->src, &h, sizeof(h));
    st_fill(w->src + ST_HDR, len - ST_HDR, st_me, w->t, ((uint64_t)1 << 62) | h.seq);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    symrail_status_t st;
    /* A blocking send consumes nothing while it waits for a slot: the main
     * thread of every PE drains meanwhile (t_stress.c), so it cannot wait
     * for ever. */
    if (st_rnd(w) % 4 == 0) {
        T_CHECK(symrail_notify_send(q, ST_TAG_MSG, w->src, len));
        goto sent;
    }
    /* trysend, draining between tries: every PE sends to every PE. */
    while ((st = symrail_notify_trysend(q, ST_TAG_MSG, w->src, len)) == SYMRAIL_ERR_AGAIN) {
        st_rx_drain(1);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 120)
            ST_FAIL("no notification slot at PE %d for 120 s " ST_REPLAY, q,
                    (unsigned long long)st_seed);
    }
    T_CHECK(st);
sent:
    w->sent_msg[q]++;
    w->count[C_NOTIFY]++;
}

static void wait_batch(st_worker_t *w)
{
    symrail_status_t st;
    while ((st = symrail_batch_wait(w->batch, 10)) == SYMRAIL_ERR_TIMEOUT)
        st_rx_drain(1);
    T_CHECK(st);
    T_CHECK(symrail_batch_reset(w->batch));
}

/* A batch of writes into our region of q's segment (single tasks, or paged
 * blocks), then a batch of reads of it, checked against the mirror. */
static void do_batch(st_worker_t *w)
{
    int q = (int)(st_rnd(w) % (uint64_t)st_npes);
    uint64_t base = st_slot(st_me, w->t) * ST_SEGREGION;
    unsigned char *sm = w->segmirror + (size_t)q * ST_SEGREGION;
    size_t used = 0, tasks = 0;
    if (st_rnd(w) % 3) {
        size_t cur = st_rnd(w) % 4096;
        for (int i = 0; i < 12; i++) {
            size_t len = pick_len(w, ST_MAXLEN - used);
            if (len == 0 || cur + len > ST_SEGREGION)
                break;
            st_fill(w->src + used, len, st_me, w->t, w->seq++);
            memcpy(sm + cur, w->src + used, len);
            T_CHECK(symrail_batch_add(w->batch, SYMRAIL_WRITE, w->src + used, w->rseg[q],
                                      base + cur, len, NULL));
            used += len;
            cur += len + st_rnd(w) % 2048;
            tasks++;
        }
    } else {
        size_t block = (size_t)512 << (st_rnd(w) % 5), nblk = ST_SEGREGION / block;
        size_t n = 1 + st_rnd(w) % 32;
        uint32_t li[32], ri[32];
        int rev = (int)(st_rnd(w) % 2);
        /* Distinct remote blocks, some adjacent to merge into one task. */
        for (size_t i = 0; i < n; i++) {
            uint32_t r;
            int again;
            do {
                r = (uint32_t)(i && st_rnd(w) % 2 ? (ri[i - 1] + 1) % nblk : st_rnd(w) % nblk);
                again = 0;
                for (size_t j = 0; j < i; j++)
                    again |= ri[j] == r;
            } while (again);
            ri[i] = r;
            li[i] = (uint32_t)(rev ? n - 1 - i : i);
        }
        st_fill(w->src, n * block, st_me, w->t, w->seq++);
        for (size_t i = 0; i < n; i++)
            memcpy(sm + (size_t)ri[i] * block, w->src + (size_t)li[i] * block, block);
        size_t nt = 0;
        T_CHECK(symrail_batch_add_blocks(w->batch, SYMRAIL_WRITE, w->src, li, w->rseg[q], base,
                                         ri, n, block, NULL, &nt));
        used = n * block;
        tasks = nt;
    }
    if (tasks == 0)
        return;
    if (st_rnd(w) % 2) {
        st_hdr_t h = { (uint32_t)w->t, (uint32_t)w->sent_batch[q], st_seed };
        st_rx_drain(1);
        T_CHECK(symrail_batch_submit_notify(w->batch, q, ST_TAG_BATCH, &h, sizeof(h)));
        w->sent_batch[q]++;
    } else {
        T_CHECK(symrail_batch_submit(w->batch));
    }
    wait_batch(w);
    w->count[C_BATCH_W]++;
    w->count[C_TASKS] += tasks;
    w->count[C_BYTES] += used;

    size_t at[4], lens[4];
    int n = 1 + (int)(st_rnd(w) % 4);
    used = 0;
    for (int i = 0; i < n; i++) {
        size_t room = (ST_MAXLEN - used) / (size_t)(n - i);
        lens[i] = pick_len(w, room < ST_SEGREGION ? room : ST_SEGREGION);
        at[i] = st_rnd(w) % (ST_SEGREGION - lens[i] + 1);
        T_CHECK(symrail_batch_add(w->batch, SYMRAIL_READ, w->buf + used, w->rseg[q],
                                  base + at[i], lens[i], NULL));
        used += lens[i];
    }
    T_CHECK(symrail_batch_submit(w->batch));
    wait_batch(w);
    used = 0;
    for (int i = 0; i < n; i++) {
        size_t d = st_diff(w->buf + used, sm + at[i], lens[i]);
        if (d != SIZE_MAX)
            ST_FAIL("mismatch: batch read of %zu bytes at %zu: byte %zu of the segment region "
                    "of (PE %d, thread %d) on PE %d is 0x%02x, expected 0x%02x " ST_REPLAY,
                    lens[i], at[i], at[i] + d, st_me, w->t, q, w->buf[used + d],
                    sm[at[i] + d], (unsigned long long)st_seed);
        used += lens[i];
    }
    w->count[C_BATCH_R]++;
    w->count[C_TASKS] += (uint64_t)n;
    w->count[C_BYTES] += used;
}

void st_worker_init(st_worker_t *w, int t)
{
    memset(w, 0, sizeof(*w));
    w->t = t;
    w->rng = st_mix(st_seed ^ st_mix((uint64_t)st_me * 131 + (uint64_t)t + 1)) | 1;
    size_t np = (size_t)st_npes;
    w->arena = malloc(ST_ARENA);
    w->src = malloc(ST_MAXLEN);
    w->buf = malloc(ST_MAXLEN);
    w->mirror = calloc(np, ST_REGION);
    w->segmirror = calloc(np, ST_SEGREGION);
    w->amo_model = calloc(np * ST_AWORDS, 8);
    w->amo_pend = calloc(np * ST_AWORDS, sizeof(int));
    w->sig_expect = calloc(np, sizeof(uint64_t));
    w->sent_msg = calloc(np, sizeof(uint64_t));
    w->sent_batch = calloc(np, sizeof(uint64_t));
    w->rseg = calloc(np, sizeof(symrail_rseg_t));
    T_ASSERT(w->arena && w->src && w->buf && w->mirror && w->segmirror && w->amo_model &&
             w->amo_pend && w->sig_expect && w->sent_msg && w->sent_batch && w->rseg,
             "out of memory");
    T_CHECK(symrail_batch_create(ST_BATCH_CAP, &w->batch));
}

void st_worker_fini(st_worker_t *w)
{
    for (int q = 0; q < st_npes; q++)
        T_CHECK(symrail_rseg_release(w->rseg[q]));
    T_CHECK(symrail_batch_free(w->batch));
    free(w->rseg);
    free(w->sent_batch);
    free(w->sent_msg);
    free(w->sig_expect);
    free(w->amo_pend);
    free(w->amo_model);
    free(w->segmirror);
    free(w->mirror);
    free(w->buf);
    free(w->src);
    free(w->arena);
}

void st_worker_run(st_worker_t *w)
{
    /* Private (this thread's only), serialized, and the default one that
     * every thread of the PE shares. */
    T_CHECK(symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &w->ctx[0]));
    T_CHECK(symrail_ctx_create(SYMRAIL_CTX_SERIALIZED, &w->ctx[1]));
    w->ctx[2] = SYMRAIL_CTX_DEFAULT;
    double end = now_s() + st_seconds;
    for (uint64_t i = 0; (!st_max_ops || i < st_max_ops) && now_s() < end; i++) {
        st_rx_drain(0);
        unsigned r = (unsigned)(st_rnd(w) % 32);
        if (r < 6)
            do_put(w, C_PUT);
        else if (r < 10)
            do_put(w, C_PUT_NBI);
        else if (r < 12)
            do_put(w, C_PUT_SIGNAL);
        else if (r < 15)
            do_get(w, 0);
        else if (r < 17)
            do_get(w, 1);
        else if (r < 21)
            do_amo(w, 0);
        else if (r < 24)
            do_amo(w, 1);
        else if (r < 28)
            do_notify(w);
        else if (r < 30)
            do_batch(w);
        else if (r < 31)
            quiet(w, (int)(st_rnd(w) % ST_NCTX));
        else
            st_quiet_all(w);
    }
    st_quiet_all(w);
    T_CHECK(symrail_ctx_destroy(w->ctx[0]));
    T_CHECK(symrail_ctx_destroy(w->ctx[1]));
    w->ctx[0] = w->ctx[1] = SYMRAIL_CTX_DEFAULT;
}
