/* Helpers shared by the integration tests: any failed check ends the whole
 * job with a message naming the PE, the place and the cause. */
#ifndef SR_TCOMMON_H
#define SR_TCOMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <symrail.h>

static inline void t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static inline void t_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "PE %d: FAIL %s:%d: %s\n", symrail_my_pe(), file, line, msg);
    fflush(stderr);
    symrail_abort(1, msg);
    abort();
}

#define T_CHECK(call)                                                                      \
    do {                                                                                   \
        symrail_status_t st_ = (call);                                                     \
        if (st_ != SYMRAIL_OK)                                                             \
            t_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, (int)st_,            \
                   symrail_strerror(st_));                                                 \
    } while (0)

#define T_EXPECT(call, want)                                                               \
    do {                                                                                   \
        symrail_status_t st_ = (call);                                                     \
        if (st_ != (want))                                                                 \
            t_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %s", #call, (int)st_, \
                   symrail_strerror(st_), #want);                                          \
    } while (0)

#define T_CHECK_STATS(call) T_CHECK(call)

#define T_ASSERT(cond, ...)                                                                \
    do {                                                                                   \
        if (!(cond))                                                                       \
            t_fail(__FILE__, __LINE__, __VA_ARGS__);                                       \
    } while (0)

/* Deterministic byte of a buffer written by `pe` in round `round`. */
static inline unsigned char t_byte(int pe, unsigned round, size_t i)
{
    uint64_t x = (uint64_t)(pe + 1) * 0x9E3779B97F4A7C15ull + round * 0xBF58476D1CE4E5B9ull + i;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    return (unsigned char)(x >> 32);
}

static inline void t_fill(unsigned char *buf, size_t n, int pe, unsigned round)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = t_byte(pe, round, i);
}

/* Index of the first byte that differs from the pattern, or SIZE_MAX. */
static inline size_t t_verify(const unsigned char *buf, size_t n, int pe, unsigned round)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != t_byte(pe, round, i))
            return i;
    return SIZE_MAX;
}

/* A knob of a test from the environment, for slow test beds. */
static inline unsigned long t_env(const char *name, unsigned long def)
{
    const char *v = getenv(name);
    return v && *v ? strtoul(v, NULL, 0) : def;
}

/* With T_EXPECT_RAILS=N: every one of the N rails carried data, and with
 * T_EXPECT_RETRIES=1 some slice was retried on another lane. */
static inline void t_check_rails(void)
{
    unsigned long want = t_env("T_EXPECT_RAILS", 0);
    symrail_stats_t st;
    T_CHECK_STATS(symrail_stats(&st));
    if (want) {
        T_ASSERT(st.nrails == want, "%u rails, expected %lu", st.nrails, want);
        for (uint32_t r = 0; r < st.nrails; r++) {
            T_ASSERT(st.rails[r].bytes > 0, "rail %s carried no data", st.rails[r].name);
            printf("PE %d: rail %s carried %llu bytes in %llu slices\n", symrail_my_pe(),
                   st.rails[r].name, (unsigned long long)st.rails[r].bytes,
                   (unsigned long long)st.rails[r].slices);
        }
    }
    if (t_env("T_EXPECT_RETRIES", 0) && symrail_my_pe() == 0) {
        T_ASSERT(st.retries > 0, "no slice was retried");
        printf("PE 0: %llu slices retried on another lane\n", (unsigned long long)st.retries);
    }
    if (t_env("T_EXPECT_REPAIRS", 0)) {
        T_ASSERT(st.repairs > 0, "no failed lane was repaired");
        printf("PE %d: %llu lanes repaired\n", symrail_my_pe(), (unsigned long long)st.repairs);
    }
}

/* Waits for *word >= v, written by a peer's put or atomic, without calling
 * the library (those land without their target's help on every transport):
 * a PE that must not progress for a while waits for the peer's word that
 * the while is over, not for a time that a loaded machine may outlast. */
static inline void t_wait_unprogressed(const uint64_t *word, uint64_t v)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < v) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        T_ASSERT(t.tv_sec - t0.tv_sec < 60, "no word %llu from the peer in 60 s",
                 (unsigned long long)v);
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    }
}

static inline void t_pass(const char *name)
{
    T_CHECK(symrail_barrier_all());
    if (symrail_my_pe() == 0)
        printf("ok: %s (%d PEs)\n", name, symrail_n_pes());
}

#endif
