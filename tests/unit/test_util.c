/* Helpers the transports share: the fault-hook parser, the message queue,
 * atomics, the doorbell, shared-memory object names. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/atomic.h"
#include "util/doorbell.h"
#include "util/fault.h"
#include "util/msgq.h"
#include "util/sys.h"

static void test_fault(void **state)
{
    (void)state;
    sr_fault_t f;
    assert_int_equal(sr_fault_parse(NULL, "V", "t", NULL, &f), SYMRAIL_OK);
    assert_int_equal(f.lane, -1);
    assert_int_equal(sr_fault_parse("", "V", "t", "x", &f), SYMRAIL_OK);
    assert_int_equal(f.lane, -1);
    assert_int_equal(sr_fault_parse("1:20", "V", "t", NULL, &f), SYMRAIL_OK);
    assert_int_equal(f.lane, 1);
    assert_int_equal(f.after, 20);
    assert_int_equal(f.extra, 0);
    /* The third field, where the hook takes one (verbs: repair messages). */
    assert_int_equal(sr_fault_parse("0:20:2", "V", "t", "x", &f), SYMRAIL_OK);
    assert_int_equal(f.lane, 0);
    assert_int_equal(f.after, 20);
    assert_int_equal(f.extra, 2);
    assert_int_equal(sr_fault_parse("0:20", "V", "t", "x", &f), SYMRAIL_OK);
    assert_int_equal(f.extra, 0);
    const char *bad[] = { "0:20:2", "x", "0", "-1:5", "0:20x", "0:" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (sr_fault_parse(bad[i], "V", "t", NULL, &f) != SYMRAIL_ERR_INVALID)
            fail_msg("two-field hook accepted '%s'", bad[i]);
        assert_int_equal(f.lane, -1);
    }
    const char *bad3[] = { "0:20:", "0:20:x", "0:20:2:1", "0:20:2x", "0:20;2" };
    for (size_t i = 0; i < sizeof(bad3) / sizeof(bad3[0]); i++)
        if (sr_fault_parse(bad3[i], "V", "t", "x", &f) != SYMRAIL_ERR_INVALID)
            fail_msg("three-field hook accepted '%s'", bad3[i]);
    /* The syntax alone (the core's SYMRAIL_TEST_HOLD_LANE=LANE:MS). */
    assert_int_equal(sr_hook_parse("2:1500", "V", "MS", 0, &f), SYMRAIL_OK);
    assert_int_equal(f.lane, 2);
    assert_int_equal(f.after, 1500);
    assert_int_equal(sr_hook_parse("2:1500:1", "V", "MS", 0, &f), SYMRAIL_ERR_INVALID);
    assert_int_equal(f.lane, -1);
}

static void test_msgq_flags(void **state)
{
    (void)state;
    sr_msgq_t q = { NULL, NULL, 0 };
    assert_int_equal(sr_msgq_push(&q, 3, 7, "ab", 2), SYMRAIL_OK);
    assert_int_equal(sr_msgq_push_flags(&q, 4, 0, 0x80000000u, "xyz", 3), SYMRAIL_OK);
    assert_int_equal(q.count, 2);
    sr_msg_t *m = sr_msgq_pop(&q);
    assert_non_null(m);
    assert_int_equal(m->src, 3);
    assert_int_equal(m->tag, 7);
    assert_int_equal(m->len, 2);
    assert_int_equal(m->flags, 0);
    assert_memory_equal(m->payload, "ab", 2);
    free(m);
    m = sr_msgq_pop(&q);
    assert_non_null(m);
    assert_int_equal(m->src, 4);
    assert_int_equal(m->len, 3);
    assert_int_equal(m->flags, 0x80000000u);
    free(m);
    assert_null(sr_msgq_pop(&q));
    assert_int_equal(q.count, 0);
}

/* What the core's receive queues do: take out a message from the middle,
 * put one back at the head, and keep head, tail and count right. */
static void test_msgq_link_unlink(void **state)
{
    (void)state;
    sr_msgq_t q = { NULL, NULL, 0 };
    for (int i = 0; i < 3; i++)
        assert_int_equal(sr_msgq_push(&q, i, 10 + (uint32_t)i, NULL, 0), SYMRAIL_OK);
    sr_msg_t *a = q.head, *b = a->next, *c = b->next;
    sr_msgq_unlink(&q, a, b);     /* the middle one */
    assert_int_equal(q.count, 2);
    assert_ptr_equal(a->next, c);
    sr_msgq_unlink(&q, a, c);     /* the tail */
    assert_ptr_equal(q.tail, a);
    sr_msgq_link(&q, b, 1);       /* back, as the oldest */
    assert_ptr_equal(q.head, b);
    sr_msgq_link(&q, c, 0);
    assert_ptr_equal(q.tail, c);
    assert_int_equal(q.count, 3);
    static const int order[] = { 1, 0, 2 };
    for (int i = 0; i < 3; i++) {
        sr_msg_t *m = sr_msgq_pop(&q);
        assert_non_null(m);
        assert_int_equal(m->src, order[i]);
        free(m);
    }
    assert_null(q.head);
    assert_null(q.tail);
    assert_int_equal(q.count, 0);
    sr_msg_t *one = calloc(1, sizeof(*one));
    sr_msgq_link(&q, one, 1);     /* at the head of an empty queue: the tail too */
    assert_ptr_equal(q.tail, one);
    sr_msgq_clear(&q);
    assert_int_equal(q.count, 0);
}

static void test_cpu_amo(void **state)
{
    (void)state;
    uint64_t w = 5, old = 99;
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_FETCH, 0, 0, &old));
    assert_int_equal(old, 5);
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_ADD, 3, 0, &old));
    assert_int_equal(old, 5);
    assert_int_equal(w, 8);
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_SWAP, 1, 0, &old));
    assert_int_equal(old, 8);
    assert_int_equal(w, 1);
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_CSWAP, 7, 2, &old));  /* no match */
    assert_int_equal(old, 1);
    assert_int_equal(w, 1);
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_CSWAP, 7, 1, &old));
    assert_int_equal(old, 1);
    assert_int_equal(w, 7);
    old = 99;
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_SET, 4, 0, &old));
    assert_int_equal(old, 0);
    assert_int_equal(w, 4);
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_OR, 0x30, 0, &old));
    assert_int_equal(old, 4);
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_AND, 0x14, 0, &old));
    assert_int_equal(old, 0x34);
    assert_true(sr_cpu_amo(&w, SR_CPU_AMO_XOR, 0x11, 0, &old));
    assert_int_equal(old, 0x14);
    assert_int_equal(w, 5);
    old = 99;
    assert_false(sr_cpu_amo(&w, SR_CPU_AMO_W32 * 2, 1, 1, &old));
    assert_int_equal(w, 5);
    assert_int_equal(old, 99);
}

/* 4-byte words: operands truncated, results zero-extended, the other half
 * of the 8 bytes untouched. */
static void test_cpu_amo32(void **state)
{
    (void)state;
    uint32_t w[2] = { 0xfffffffeu, 0x5a5a5a5au };
    uint64_t old;
    assert_int_equal(sr_cpu_amo(&w[0], SR_CPU_AMO_W32 | SR_CPU_AMO_ADD, 0x100000003ull, 0, &old),
                     SR_CPU_AMO_RMW);
    assert_int_equal(old, 0xfffffffeu);
    assert_int_equal(w[0], 1);  /* wrapped within 32 bits */
    assert_true(sr_cpu_amo(&w[0], SR_CPU_AMO_W32 | SR_CPU_AMO_CSWAP, 9, 0x100000001ull, &old));
    assert_int_equal(old, 1);
    assert_int_equal(w[0], 9);
    assert_true(sr_cpu_amo(&w[0], SR_CPU_AMO_W32 | SR_CPU_AMO_XOR, 0xffffffffull, 0, &old));
    assert_int_equal(w[0], 0xfffffff6u);
    assert_int_equal(sr_cpu_amo(&w[0], SR_CPU_AMO_W32 | SR_CPU_AMO_FETCH, 0, 0, &old),
                     SR_CPU_AMO_READ);
    assert_int_equal(old, 0xfffffff6u);
    assert_int_equal(sr_cpu_amo(&w[0], SR_CPU_AMO_W32 | SR_CPU_AMO_SET, 7, 0, &old),
                     SR_CPU_AMO_STORE);
    assert_int_equal(w[0], 7);
    assert_int_equal(w[1], 0x5a5a5a5au);
}

static sr_doorbell_t bell;
static uint32_t flag;

static void *sleeper(void *arg)
{
    uint64_t *slept_ns = arg;
    uint64_t t0 = sr_time_ns();
    while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) {
        int nap;
        uint32_t token = sr_doorbell_arm(&bell, &nap);
        if (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE))
            sr_doorbell_sleep(&bell, token, 20000000000ull, nap);
        sr_doorbell_disarm(&bell);
    }
    *slept_ns = sr_time_ns() - t0;
    return NULL;
}

/* A kick wakes a sleeper at once; without one asleep it leaves the word be. */
static void test_doorbell(void **state)
{
    (void)state;
    sr_doorbell_setup();
    uint32_t seq = bell.seq;
    sr_doorbell_kick(&bell);
    sr_doorbell_kick_rmw(&bell);
    assert_int_equal(bell.seq, seq);
    for (int round = 0; round < 20; round++) {
        uint64_t slept = 0;
        pthread_t t;
        __atomic_store_n(&flag, 0, __ATOMIC_RELEASE);
        assert_int_equal(pthread_create(&t, NULL, sleeper, &slept), 0);
        while (__atomic_load_n(&bell.waiters, __ATOMIC_RELAXED) == 0)
            sr_cpu_relax();
        __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
        sr_doorbell_kick(&bell);
        pthread_join(t, NULL);
        /* Far below the 20 s it would sleep if the wake-up were lost. */
        if (slept > 5000000000ull)
            fail_msg("round %d: the sleeper woke only after %llu ms", round,
                     (unsigned long long)(slept / 1000000));
    }
    assert_int_equal(bell.waiters, 0);
}

static int shm_exists(const char *name)
{
    char path[300];
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

static void shm_make(const char *name)
{
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
}

/* The sweep at init removes objects of dead creators of this PID namespace
 * only: a pid from another namespace (a container sharing /dev/shm) names
 * some other process here, so that object may well be in use. */
static void test_shm_stale(void **state)
{
    (void)state;
    struct stat st;
    char mine[256], dead[256], foreign[256], old[256];
    pid_t child = fork();

    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(stat("/proc/self/ns/pid", &st), 0);
    unsigned long ns = (unsigned long)st.st_ino;

    sr_shm_name(mine, sizeof(mine), "unit.job/x", 3, "heap");
    assert_int_equal(sr_shm_name_pid(mine + 1, ns), getpid());
    assert_int_equal(sr_shm_name_pid(mine + 1, ns + 1), 0);
    snprintf(dead, sizeof(dead), "/symrail-unit.job-0-ctl.n%lx.p%ld", ns, (long)child);
    snprintf(foreign, sizeof(foreign), "/symrail-unit.job-1-ctl.n%lx.p%ld", ns + 1, (long)child);
    snprintf(old, sizeof(old), "/symrail-unit.job-2-ctl.p%ld", (long)child);
    assert_int_equal(sr_shm_name_pid(dead + 1, ns), child);
    assert_int_equal(sr_shm_name_pid(foreign + 1, ns), 0);
    assert_int_equal(sr_shm_name_pid(old + 1, ns), 0);
    assert_int_equal(sr_shm_name_pid("symrail-j-0-ctl.n.p", ns), 0);

    shm_make(mine);
    shm_make(dead);
    shm_make(foreign);
    shm_make(old);
    sr_shm_clean_stale();
    assert_true(shm_exists(mine));      /* its creator (we) lives */
    assert_false(shm_exists(dead));     /* ours, creator gone */
    assert_true(shm_exists(foreign));   /* another namespace's */
    assert_true(shm_exists(old));       /* no namespace: cannot tell */
    shm_unlink(mine);
    shm_unlink(foreign);
    shm_unlink(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault),
        cmocka_unit_test(test_msgq_flags),
        cmocka_unit_test(test_msgq_link_unlink),
        cmocka_unit_test(test_cpu_amo),
        cmocka_unit_test(test_cpu_amo32),
        cmocka_unit_test(test_doorbell),
        cmocka_unit_test(test_shm_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
