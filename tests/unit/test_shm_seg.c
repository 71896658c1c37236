/* Segments of the shared-memory transport without the core: two transport
 * instances in one process (PE 0 owns, PE 1 imports), both paths (a shared
 * object mapped by name, private memory by cross-memory attach), every byte
 * checked; generations (a deregistered segment refuses old keys, memory
 * registered again at the same address is not touched through them, a
 * deregistration waits for copies in progress and is bounded by
 * SYMRAIL_OP_TIMEOUT); the key table in chunks; a full generation table;
 * nothing left in /dev/shm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tl/tl.h"
#include "util/env.h"
#include "util/sys.h"

extern const sr_tl_ops_t sr_tl_shm_ops;
#define OPS sr_tl_shm_ops
#define LEN (256 * 1024 + 123)
#define SLOTS 16

static sr_env_t env;
static sr_tl_ctx_t *ctx[2];
static sr_tl_ep_t *ep10;  /* PE 1 to PE 0 */

/* op_timeout bounds a deregistration that waits for copies in progress:
 * short where a test waits for it to pass, long where only a descheduled
 * copier would make it pass. */
static void up_with(const char *op_timeout)
{
    static const uint8_t local[2] = { 1, 1 };
    unsigned char addr[2][4096];
    size_t alen[2];
    setenv("SYMRAIL_SHM_SEG_SLOTS", "16", 1);
    setenv("SYMRAIL_OP_TIMEOUT", op_timeout, 1);
    assert_int_equal(sr_env_load(getenv, &env), SYMRAIL_OK);
    for (int pe = 0; pe < 2; pe++) {
        sr_tl_params_t p = { .my_pe = pe, .n_pes = 2, .job = "unit-seg", .is_local = local,
                             .env = &env, .thread_multiple = 1 };
        assert_int_equal(OPS.init(&p, &ctx[pe]), SYMRAIL_OK);
        alen[pe] = sizeof(addr[pe]);
        assert_int_equal(OPS.addr_pack(ctx[pe], addr[pe], &alen[pe]), SYMRAIL_OK);
    }
    assert_int_equal(OPS.connect(ctx[1], 0, addr[0], alen[0], &ep10), SYMRAIL_OK);
}

static void up(void)
{
    up_with("60s");
}

static int leftovers(void)
{
    int n = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "symrail-unit-seg-", 17) == 0)
            n++;
    closedir(d);
    return n;
}

static void down(void)
{
    OPS.disconnect(ep10);
    OPS.fini(ctx[1]);
    OPS.fini(ctx[0]);
    assert_int_equal(leftovers(), 0);
    sr_env_release(&env);
}

/* LEN bytes: a shared object named `name`, or private memory. */
static unsigned char *buf_alloc(int mapped, const char *name)
{
    void *buf = NULL;
    if (mapped)
        assert_int_equal(sr_shm_create(name, LEN, 0, &buf), SYMRAIL_OK);
    else
        buf = malloc(LEN);
    assert_non_null(buf);
    return buf;
}

static void buf_free(int mapped, const char *name, unsigned char *buf)
{
    if (mapped) {
        sr_shm_unlink(name);
        sr_shm_unmap(buf, LEN);
    } else {
        free(buf);
    }
}

static uint32_t reg_and_unpack(uint32_t id, void *addr, size_t len, const char *name,
                               uint32_t gen, uint32_t rkey)
{
    sr_tl_mem_t m = { .addr = addr, .len = len, .shm_name = name, .generation = gen };
    unsigned char key[SR_TL_MKEY_MAX];
    size_t klen = sizeof(key);
    assert_int_equal(OPS.mem_reg(ctx[0], id, &m), SYMRAIL_OK);
    assert_int_equal(OPS.mkey_pack(ctx[0], id, key, &klen), SYMRAIL_OK);
    assert_true(klen <= SR_TL_MKEY_MAX);
    assert_int_equal(OPS.rkey_unpack(ep10, rkey, key, klen), SYMRAIL_OK);
    return rkey;
}

/* Puts of several sizes and offsets, then gets, every byte compared. */
static void rw_check(unsigned char *owner, uint32_t rkey)
{
    static const size_t offs[] = { 0, 1, 4093, 65536, LEN - 17 };
    unsigned char *src = malloc(LEN), *dst = malloc(LEN);
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
        size_t off = offs[i], n = LEN - off;
        for (size_t j = 0; j < n; j++)
            src[j] = (unsigned char)(j * 7 + i + rkey);
        assert_int_equal(OPS.put(ep10, 0, src, rkey, off, n, NULL), SYMRAIL_OK);
        assert_memory_equal(owner + off, src, n);
        memset(dst, 0, n);
        assert_int_equal(OPS.get(ep10, 0, dst, rkey, off, n, NULL), SYMRAIL_OK);
        assert_memory_equal(dst, src, n);
    }
    /* Past the end is refused, whatever the core checked before. */
    assert_int_equal(OPS.put(ep10, 0, src, rkey, LEN - 8, 9, NULL), SYMRAIL_ERR_INVALID);
    free(src);
    free(dst);
}

static void test_paths(void **state)
{
    (void)state;
    up();
    unsigned char *priv = malloc(LEN);
    char name[128];
    unsigned char *shared;
    sr_shm_name(name, sizeof(name), "unit-seg", 0, "segalloc");
    assert_int_equal(sr_shm_create(name, LEN, 0, (void **)&shared), SYMRAIL_OK);

    /* Keys in several chunks, at both ends of the 16-bit range. */
    reg_and_unpack(2, priv, LEN, NULL, 1, 2);
    reg_and_unpack(3, shared, LEN, name, 1, 65535);
    rw_check(priv, 2);
    rw_check(shared, 65535);

    /* Atomics: on mapped memory, not by cross-memory attach. */
    uint64_t old = 0;
    memset(shared, 0, 16);
    assert_int_equal(OPS.atomic(ep10, 0, SR_TL_AMO_ADD, 65535, 8, 5, 0, &old, NULL), SYMRAIL_OK);
    assert_int_equal(OPS.atomic(ep10, 0, SR_TL_AMO_ADD, 65535, 8, 5, 0, &old, NULL), SYMRAIL_OK);
    assert_int_equal(old, 5);
    assert_int_equal(*(uint64_t *)(void *)(shared + 8), 10);
    assert_int_equal(OPS.atomic(ep10, 0, SR_TL_AMO_ADD, 2, 8, 5, 0, &old, NULL),
                     SYMRAIL_ERR_UNSUPPORTED);
    /* Segments have no load/store address: it would bypass the generation. */
    assert_null(OPS.ptr(ep10, 2, 0));
    assert_null(OPS.ptr(ep10, 65535, 0));
    /* A key never unpacked. */
    assert_int_equal(OPS.put(ep10, 0, priv, 300, 0, 8, NULL), SYMRAIL_ERR_INVALID);

    OPS.rkey_release(ep10, 2);
    OPS.rkey_release(ep10, 65535);
    assert_int_equal(OPS.put(ep10, 0, priv, 2, 0, 8, NULL), SYMRAIL_ERR_INVALID);
    assert_int_equal(OPS.mem_dereg(ctx[0], 2), SYMRAIL_OK);
    assert_int_equal(OPS.mem_dereg(ctx[0], 3), SYMRAIL_OK);
    sr_shm_unlink(name);
    sr_shm_unmap(shared, LEN);
    free(priv);
    down();
}

/* After mem_dereg returns no old key reaches the memory, even with new
 * memory registered at the same address under the same id. */
static void test_stale(void **state)
{
    (void)state;
    up();
    for (int mapped = 0; mapped < 2; mapped++) {
        char name[128];
        unsigned char *buf, src[64], got[64];
        sr_shm_name(name, sizeof(name), "unit-seg", 0, "stale");
        buf = buf_alloc(mapped, name);
        uint32_t id = 5, rkey = 1000 + (uint32_t)mapped;
        sr_tl_mem_t m = { .addr = buf, .len = LEN, .shm_name = mapped ? name : NULL,
                          .generation = 7 };
        unsigned char key[SR_TL_MKEY_MAX];
        size_t klen = sizeof(key);
        assert_int_equal(OPS.mem_reg(ctx[0], id, &m), SYMRAIL_OK);
        assert_int_equal(OPS.mem_reg(ctx[0], id, &m), SYMRAIL_ERR_STATE);
        assert_int_equal(OPS.mkey_pack(ctx[0], id, key, &klen), SYMRAIL_OK);
        assert_int_equal(OPS.rkey_unpack(ep10, rkey, key, klen), SYMRAIL_OK);
        assert_int_equal(OPS.rkey_unpack(ep10, rkey, key, klen), SYMRAIL_ERR_STATE);
        memset(src, 0xab, sizeof(src));
        assert_int_equal(OPS.put(ep10, 0, src, rkey, 0, sizeof(src), NULL), SYMRAIL_OK);

        assert_int_equal(OPS.mem_dereg(ctx[0], id), SYMRAIL_OK);
        assert_int_equal(OPS.mem_dereg(ctx[0], id), SYMRAIL_ERR_INVALID);
        memset(buf, 0x11, LEN);
        /* Registered again: same id, same address, next generation. */
        m.generation = 8;
        assert_int_equal(OPS.mem_reg(ctx[0], id, &m), SYMRAIL_OK);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(OPS.put(ep10, 0, src, rkey, 0, sizeof(src), NULL),
                             SYMRAIL_ERR_STALE);
            assert_int_equal(OPS.get(ep10, 0, got, rkey, 0, sizeof(got), NULL),
                             SYMRAIL_ERR_STALE);
        }
        if (mapped)
            assert_int_equal(OPS.atomic(ep10, 0, SR_TL_AMO_SET, rkey, 0, 1, 0, NULL, NULL),
                             SYMRAIL_ERR_STALE);
        for (size_t i = 0; i < LEN; i++)
            if (buf[i] != 0x11)
                fail_msg("byte %zu of the memory registered again was written", i);
        /* The old blob cannot be unpacked any more; the new one can. */
        assert_int_equal(OPS.rkey_unpack(ep10, rkey + 10, key, klen), SYMRAIL_ERR_STALE);
        klen = sizeof(key);
        assert_int_equal(OPS.mkey_pack(ctx[0], id, key, &klen), SYMRAIL_OK);
        assert_int_equal(OPS.rkey_unpack(ep10, rkey + 10, key, klen), SYMRAIL_OK);
        assert_int_equal(OPS.put(ep10, 0, src, rkey + 10, 0, sizeof(src), NULL), SYMRAIL_OK);
        assert_memory_equal(buf, src, sizeof(src));

        /* A key of another process (the owner restarted) is stale. */
        unsigned char other[SR_TL_MKEY_MAX];
        memcpy(other, key, klen);
        int32_t pid = (int32_t)getpid() + 1;
        memcpy(other + 16, &pid, sizeof(pid));
        assert_int_equal(OPS.rkey_unpack(ep10, rkey + 20, other, klen), SYMRAIL_ERR_STALE);
        /* A damaged blob is refused. */
        assert_int_equal(OPS.rkey_unpack(ep10, rkey + 20, key, klen - 1), SYMRAIL_ERR_INVALID);
        assert_int_equal(OPS.rkey_unpack(ep10, 1, key, klen), SYMRAIL_ERR_INVALID);

        OPS.rkey_release(ep10, rkey);
        OPS.rkey_release(ep10, rkey + 10);
        assert_int_equal(OPS.mem_dereg(ctx[0], id), SYMRAIL_OK);
        buf_free(mapped, name, buf);
    }
    down();
}

/* A peer puts in a loop while the owner deregisters: once mem_dereg has
 * returned, no byte of the memory changes any more. */
typedef struct {
    uint32_t rkey;
    int stale, bad;
    long puts;
} racer_t;

static void *racer(void *arg)
{
    racer_t *r = arg;
    static unsigned char src[LEN];
    memset(src, 0x5a, sizeof(src));
    for (;;) {
        symrail_status_t st = OPS.put(ep10, 0, src, r->rkey, 0, sizeof(src), NULL);
        if (st == SYMRAIL_ERR_STALE) {
            r->stale = 1;
            return NULL;
        }
        if (st != SYMRAIL_OK) {
            r->bad = st;
            return NULL;
        }
        r->puts++;
    }
}

static void test_race(void **state)
{
    (void)state;
    up();
    for (int round = 0; round < 40; round++) {
        int mapped = round & 1;
        char name[128];
        unsigned char *buf;
        sr_shm_name(name, sizeof(name), "unit-seg", 0, "race");
        buf = buf_alloc(mapped, name);
        racer_t r = { .rkey = 40 + (uint32_t)round };
        reg_and_unpack(9, buf, LEN, mapped ? name : NULL, (uint32_t)round + 1, r.rkey);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, racer, &r), 0);
        while (__atomic_load_n(&r.puts, __ATOMIC_RELAXED) < 3)
            sched_yield();
        assert_int_equal(OPS.mem_dereg(ctx[0], 9), SYMRAIL_OK);
        memset(buf, 0, LEN);
        pthread_join(th, NULL);
        assert_int_equal(r.bad, 0);
        assert_true(r.stale);
        for (size_t i = 0; i < LEN; i++)
            if (buf[i] != 0)
                fail_msg("round %d: byte %zu written after mem_dereg returned", round, i);
        OPS.rkey_release(ep10, r.rkey);
        buf_free(mapped, name, buf);
    }
    down();
}

/* The generation table's limits: an id past SYMRAIL_SHM_SEG_SLOTS, and a
 * copy that never leaves (its importer stuck) bounds mem_dereg by
 * SYMRAIL_OP_TIMEOUT. */
static void test_limits(void **state)
{
    (void)state;
    /* Long enough that "no second wait" below has a wide margin under load. */
    up_with("2s");
    static unsigned char buf[4096];
    sr_tl_mem_t m = { .addr = buf, .len = sizeof(buf), .generation = 1 };
    assert_int_equal(OPS.mem_reg(ctx[0], SLOTS, &m), SYMRAIL_ERR_NOMEM);
    assert_int_equal(OPS.mem_reg(ctx[0], SLOTS - 1, &m), SYMRAIL_OK);
    assert_int_equal(OPS.mem_dereg(ctx[0], SLOTS - 1), SYMRAIL_OK);
    assert_int_equal(OPS.mem_dereg(ctx[0], 4), SYMRAIL_ERR_INVALID);

    /* A copy in progress, as an importer would count it: the table is one
     * cache line of header, then a word per id. */
    assert_int_equal(OPS.mem_reg(ctx[0], 4, &m), SYMRAIL_OK);
    char name[128];
    uint64_t *tab;
    size_t tab_len = 64 + SLOTS * 8;
    sr_shm_name(name, sizeof(name), "unit-seg", 0, "seg");
    assert_int_equal(sr_shm_attach(name, tab_len, (void **)&tab), SYMRAIL_OK);
    __atomic_fetch_add(&tab[8 + 4], 1, __ATOMIC_RELAXED);
    uint64_t t0 = sr_time_ns();
    assert_int_equal(OPS.mem_dereg(ctx[0], 4), SYMRAIL_ERR_TIMEOUT);
    assert_true(sr_time_ns() - t0 >= 1500000000ull);
    /* Not registered again while the copy is in progress; done once it leaves. */
    assert_int_equal(OPS.mem_reg(ctx[0], 4, &m), SYMRAIL_ERR_STATE);
    __atomic_fetch_sub(&tab[8 + 4], 1, __ATOMIC_RELEASE);
    assert_int_equal(OPS.mem_dereg(ctx[0], 4), SYMRAIL_OK);
    assert_int_equal(OPS.mem_reg(ctx[0], 4, &m), SYMRAIL_OK);
    /* Timed out again, then registered anew once the copy has left. */
    __atomic_fetch_add(&tab[8 + 4], 1, __ATOMIC_RELAXED);
    assert_int_equal(OPS.mem_dereg(ctx[0], 4), SYMRAIL_ERR_TIMEOUT);
    /* Asked again while the copy is in: no second wait (one would take
     * 1.5 s at least, as above). */
    t0 = sr_time_ns();
    assert_int_equal(OPS.mem_dereg(ctx[0], 4), SYMRAIL_ERR_AGAIN);
    assert_true(sr_time_ns() - t0 < 1500000000ull);
    __atomic_fetch_sub(&tab[8 + 4], 1, __ATOMIC_RELEASE);
    assert_int_equal(OPS.mem_reg(ctx[0], 4, &m), SYMRAIL_OK);
    assert_int_equal(OPS.mem_dereg(ctx[0], 4), SYMRAIL_OK);
    sr_shm_unmap(tab, tab_len);
    down();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_stale),
        cmocka_unit_test(test_race),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
