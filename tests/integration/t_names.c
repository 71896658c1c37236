/*
 * Names through the launcher (sr_boot_publish / sr_boot_lookup /
 * sr_boot_unpublish), without the rest of the library: PE 1 publishes, PE 0
 * looks up before (the lookup waits) and after; a name never published
 * times out; an unpublished name is gone; binary values with zero bytes come
 * back whole; a name of another PE cannot be taken; waiting lookups from
 * several threads; a publisher's names go when it ends.
 *
 * Without a launcher (run directly) every call is SYMRAIL_ERR_UNSUPPORTED.
 * T_NAMES_UNSUPPORTED_OK=1 accepts a launcher without publish/lookup (that
 * must then say so on every call).  T_NAMES_PROC_END=0 skips the check that
 * a publisher's names end with it; T_NAMES_EXIT=1 has the publisher leave
 * without finalizing (the launcher must drop its names: PMIX_PERSIST_PROC).
 */
#include "boot/boot.h"
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T_THREADS 4

static sr_boot_t *boot;
static int me, npes;

static void t_fail(int line, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void t_fail(int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "PE %d: FAIL t_names.c:%d: %s\n", me, line, msg);
    fflush(stderr);
    if (boot != NULL)
        sr_boot_abort(boot, 1, msg);
    exit(1);
}

#define T_ASSERT(cond, ...)                                                                \
    do {                                                                                   \
        if (!(cond))                                                                       \
            t_fail(__LINE__, __VA_ARGS__);                                                 \
    } while (0)
#define T_EXPECT(call, want)                                                               \
    do {                                                                                   \
        symrail_status_t st_ = (call);                                                     \
        T_ASSERT(st_ == (want), "%s returned %d (%s), expected %s", #call, (int)st_,      \
                 symrail_strerror(st_), #want);                                            \
    } while (0)

static int t_env_on(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && atoi(v) != 0;
}

static int64_t t_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void t_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* A descriptor-like value: `len` bytes of a pattern of `seed`, with zero
 * bytes at the start, the middle and the end and a run of them inside. */
static void t_value(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)((i * 37 + seed * 101 + 11) % 251 + 1);
    buf[0] = 0;
    buf[len / 2] = 0;
    buf[len - 1] = 0;
    for (size_t i = len / 4; i < len / 4 + 8 && i < len; i++)
        buf[i] = 0;
}

static void t_lookup_check(const char *key, uint64_t timeout_ms, size_t len, unsigned seed)
{
    unsigned char want[1024];
    void *val = NULL;
    size_t got = 0;
    symrail_status_t st = sr_boot_lookup(boot, key, timeout_ms, &val, &got);
    T_ASSERT(st == SYMRAIL_OK, "lookup of '%s': %s", key, symrail_strerror(st));
    t_value(want, len, seed);
    T_ASSERT(got == len, "'%s' has %zu bytes, expected %zu", key, got, len);
    T_ASSERT(memcmp(val, want, len) == 0, "'%s' has other bytes than were published", key);
    free(val);
}

static void t_publish(const char *key, size_t len, unsigned seed)
{
    unsigned char v[1024];
    t_value(v, len, seed);
    T_EXPECT(sr_boot_publish(boot, key, v, len), SYMRAIL_OK);
}

static void t_fence(void)
{
    T_EXPECT(sr_boot_fence(boot), SYMRAIL_OK);
}

/* Every call says UNSUPPORTED, and nothing is left half done. */
static void t_unsupported(const char *why)
{
    unsigned char v[4] = {0, 1, 0, 2};
    void *val = NULL;
    size_t len = 0;
    T_EXPECT(sr_boot_publish(boot, "kv.a", v, sizeof(v)), SYMRAIL_ERR_UNSUPPORTED);
    T_EXPECT(sr_boot_lookup(boot, "kv.a", 100, &val, &len), SYMRAIL_ERR_UNSUPPORTED);
    T_EXPECT(sr_boot_unpublish(boot, "kv.a"), SYMRAIL_ERR_UNSUPPORTED);
    T_ASSERT(val == NULL, "a lookup that failed returned a value");
    if (me == 0)
        printf("ok: %s: names unsupported\n", why);
}

static void t_bad_input(void)
{
    char longkey[SR_BOOT_NAME_KEY_MAX + 2];
    unsigned char v[8] = {0};
    void *val = NULL;
    size_t len = 0;
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    char rank[16];   /* each PE a name of its own */
    memcpy(longkey, rank, (size_t)snprintf(rank, sizeof(rank), "%d.", me));
    T_EXPECT(sr_boot_publish(boot, "", v, sizeof(v)), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_publish(boot, NULL, v, sizeof(v)), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_publish(boot, longkey, v, sizeof(v)), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_publish(boot, "kv.bad", v, 0), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_publish(boot, "kv.bad", NULL, 8), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_publish(boot, "kv.bad", v, SR_BOOT_NAME_VAL_MAX + 1), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_lookup(boot, longkey, 0, &val, &len), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_lookup(boot, "kv.bad", 0, NULL, &len), SYMRAIL_ERR_INVALID);
    T_EXPECT(sr_boot_unpublish(boot, ""), SYMRAIL_ERR_INVALID);
    longkey[SR_BOOT_NAME_KEY_MAX] = '\0';   /* the longest allowed */
    T_EXPECT(sr_boot_publish(boot, longkey, v, sizeof(v)), SYMRAIL_OK);
    T_EXPECT(sr_boot_unpublish(boot, longkey), SYMRAIL_OK);
}

static void *t_thread_lookup(void *arg)
{
    int i = (int)(intptr_t)arg;
    char key[32];
    snprintf(key, sizeof(key), "kv.thread.%d", i);
    t_lookup_check(key, 20000, 100 + (size_t)i * 200, 40u + (unsigned)i);
    return NULL;
}

/* Publishes kv.a half a second from now, with the time it did. */
static void *t_publish_late(void *arg)
{
    (void)arg;
    t_sleep_ms(500);
    int64_t t = t_now_ms();
    unsigned char v[1024];
    t_value(v, sizeof(v), 1);
    memcpy(v + 1, &t, sizeof(t));
    T_EXPECT(sr_boot_publish(boot, "kv.a", v, sizeof(v)), SYMRAIL_OK);
    return NULL;
}

int main(void)
{
    /* The drivers count the info line of a launcher without names. */
    sr_log_setup(SR_LOG_INFO);
    symrail_status_t st = sr_boot_init(30000, &boot);
    T_ASSERT(st == SYMRAIL_OK, "sr_boot_init: %s", symrail_strerror(st));
    const sr_boot_info_t *info = sr_boot_info(boot);
    me = info->rank;
    npes = info->size;
    if (info->singleton) {
        t_unsupported("singleton");
        sr_boot_fini(boot);
        return 0;
    }
    int pub = npes > 1 ? 1 : 0, look = 0;
    unsigned char probe = 0;
    char probe_key[32];
    snprintf(probe_key, sizeof(probe_key), "kv.probe.%d", me);
    st = sr_boot_publish(boot, probe_key, &probe, 1);
    if (st == SYMRAIL_ERR_UNSUPPORTED && t_env_on("T_NAMES_UNSUPPORTED_OK")) {
        t_unsupported("this launcher");
        t_fence();
        sr_boot_fini(boot);
        return 0;
    }
    T_ASSERT(st == SYMRAIL_OK, "publish of a probe: %s", symrail_strerror(st));
    T_EXPECT(sr_boot_unpublish(boot, probe_key), SYMRAIL_OK);
    t_bad_input();
    t_fence();

    /* A lookup issued before the publish waits for it. */
    pthread_t late;
    if (me == pub && me == look)
        T_ASSERT(pthread_create(&late, NULL, t_publish_late, NULL) == 0, "pthread_create");
    else if (me == pub)
        t_publish_late(NULL);
    if (me == look) {
        int64_t t0 = t_now_ms();
        void *val = NULL;
        size_t len = 0;
        st = sr_boot_lookup(boot, "kv.a", 20000, &val, &len);
        int64_t t1 = t_now_ms(), tpub;
        T_ASSERT(st == SYMRAIL_OK, "waiting lookup: %s", symrail_strerror(st));
        T_ASSERT(len == 1024, "waiting lookup: %zu bytes", len);
        memcpy(&tpub, (unsigned char *)val + 1, sizeof(tpub));
        /* By the publisher's clock (one machine's), not by how long the
         * lookup took: the PEs leave the fence at different times. */
        T_ASSERT(t0 < tpub, "the lookup began %lld ms after the publish: it did not wait",
                 (long long)(t0 - tpub));
        T_ASSERT(t1 >= tpub && t1 - tpub < 2000, "the lookup returned %lld ms after the publish",
                 (long long)(t1 - tpub));
        printf("ok: a waiting lookup is answered %lld ms after the publish\n",
               (long long)(t1 - tpub));
        free(val);
        if (me == pub)
            pthread_join(late, NULL);
    }
    t_fence();

    /* After the publish: found at once, by every PE, zero bytes and all. */
    {
        unsigned char want[1024];
        void *val = NULL;
        size_t len = 0;
        int64_t t0 = t_now_ms();
        T_EXPECT(sr_boot_lookup(boot, "kv.a", 0, &val, &len), SYMRAIL_OK);
        t_value(want, sizeof(want), 1);
        T_ASSERT(len == sizeof(want) && want[0] == 0 && ((unsigned char *)val)[0] == 0 &&
                     memcmp((unsigned char *)val + 9, want + 9, sizeof(want) - 9) == 0,
                 "the value of kv.a changed on the way (%zu bytes)", len);
        free(val);
        if (me == look)
            printf("ok: a published 1 KiB value with zero bytes is found at once (%lld ms) "
                   "by every PE\n", (long long)(t_now_ms() - t0));
    }

    /* A name never published: SYMRAIL_ERR_TIMEOUT, in time. */
    if (me == look) {
        void *val = NULL;
        size_t len = 0;
        int64_t t0 = t_now_ms();
        T_EXPECT(sr_boot_lookup(boot, "kv.never", 700, &val, &len), SYMRAIL_ERR_TIMEOUT);
        int64_t dt = t_now_ms() - t0;
        T_ASSERT(dt >= 650 && dt < 3000, "a 700 ms lookup took %lld ms", (long long)dt);
        t0 = t_now_ms();
        T_EXPECT(sr_boot_lookup(boot, "kv.never", 0, &val, &len), SYMRAIL_ERR_TIMEOUT);
        T_ASSERT(t_now_ms() - t0 < 1000, "a lookup without wait took %lld ms",
                 (long long)(t_now_ms() - t0));
        T_ASSERT(val == NULL, "a lookup that timed out returned a value");
        printf("ok: a name never published times out after %lld ms (700 asked)\n",
               (long long)dt);
    }
    t_fence();

    /* The publisher may publish its name again: the new value replaces it;
     * another PE may not take it. */
    if (me == pub)
        t_publish("kv.a", 7, 2);
    t_fence();
    if (me != pub)
        t_lookup_check("kv.a", 5000, 7, 2);
    if (me == look && pub != look) {
        unsigned char v[3] = {0, 0, 0};
        T_EXPECT(sr_boot_publish(boot, "kv.a", v, sizeof(v)), SYMRAIL_ERR_STATE);
        T_EXPECT(sr_boot_unpublish(boot, "kv.a"), SYMRAIL_OK);   /* not ours: stays */
        t_lookup_check("kv.a", 0, 7, 2);
        printf("ok: a name is replaced by its publisher, and kept from other PEs\n");
    }
    t_fence();

    /* Unpublished: gone, and a lookup times out; unpublishing again is fine. */
    if (me == pub) {
        T_EXPECT(sr_boot_unpublish(boot, "kv.a"), SYMRAIL_OK);
        T_EXPECT(sr_boot_unpublish(boot, "kv.a"), SYMRAIL_OK);
    }
    t_fence();
    if (me == look) {
        void *val = NULL;
        size_t len = 0;
        T_EXPECT(sr_boot_lookup(boot, "kv.a", 500, &val, &len), SYMRAIL_ERR_TIMEOUT);
        printf("ok: an unpublished name is gone\n");
    }
    t_fence();

    /* Several threads wait at once, each for its own name. */
    pthread_t tid[T_THREADS];
    if (me == look)
        for (int i = 0; i < T_THREADS; i++)
            T_ASSERT(pthread_create(&tid[i], NULL, t_thread_lookup, (void *)(intptr_t)i) == 0,
                     "pthread_create");
    t_fence();
    if (me == pub) {
        for (int i = T_THREADS - 1; i >= 0; i--) {
            char key[32];
            snprintf(key, sizeof(key), "kv.thread.%d", i);
            t_sleep_ms(50);
            t_publish(key, 100 + (size_t)i * 200, 40u + (unsigned)i);
        }
    }
    if (me == look) {
        for (int i = 0; i < T_THREADS; i++)
            pthread_join(tid[i], NULL);
        printf("ok: %d threads waiting for names at once all get theirs\n", T_THREADS);
    }
    t_fence();

    /* A publisher that ends takes its names with it (PMIX_PERSIST_PROC). */
    const char *pe_env = getenv("T_NAMES_PROC_END");
    if (pub != look && (pe_env == NULL || t_env_on("T_NAMES_PROC_END"))) {
        if (me == pub)
            t_publish("kv.gone", 16, 3);
        t_fence();
        if (me == look)
            t_lookup_check("kv.gone", 0, 16, 3);
        t_fence();
        if (me == pub) {
            if (t_env_on("T_NAMES_EXIT")) {
                fflush(stdout);
                _exit(0);
            }
            sr_boot_fini(boot);
            boot = NULL;
            return 0;
        }
        if (me == look) {
            void *val = NULL;
            size_t len = 0;
            int64_t t0 = t_now_ms();
            while ((st = sr_boot_lookup(boot, "kv.gone", 0, &val, &len)) == SYMRAIL_OK) {
                free(val);
                T_ASSERT(t_now_ms() - t0 < 10000, "kv.gone outlived its publisher by 10 s");
                t_sleep_ms(20);
            }
            T_ASSERT(st == SYMRAIL_ERR_TIMEOUT, "lookup of kv.gone: %s", symrail_strerror(st));
            printf("ok: a publisher's names end with it\n");
        }
    }
    if (me == look)
        printf("ok: names done (%d PEs)\n", npes);
    sr_boot_fini(boot);
    return 0;
}
