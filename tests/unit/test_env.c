/*
 * Unit tests of the SYMRAIL_* configuration parser.  A mistyped variable must
 * stop the job with a clear error rather than silently run with a default, so
 * the tests care as much about what is rejected as about what is accepted.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/env.h"
#include "util/log.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

/* ---- fake environment --------------------------------------------------- */

/* sr_env_load takes a getenv-shaped function, so tests hand it this table
 * instead of touching the process environment. */
static const char *const *fake_env;

static char *fake_getenv(const char *name)
{
    size_t len = strlen(name);
    for (const char *const *e = fake_env; e && *e; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return (char *)*e + len + 1;
    return NULL;
}

static int reset_env(void **state)
{
    (void)state;
    fake_env = NULL;
    return 0;
}

/* ---- sizes --------------------------------------------------------------- */

static void expect_size(const char *s, uint64_t want)
{
    uint64_t v = 0xdeadbeef;
    symrail_status_t st = sr_env_parse_size(s, &v);
    if (st != SYMRAIL_OK)
        fail_msg("sr_env_parse_size(\"%s\") failed with %d", s, st);
    if (v != want)
        fail_msg("sr_env_parse_size(\"%s\") = %llu, expected %llu", s, (unsigned long long)v,
                 (unsigned long long)want);
}

static void expect_size_invalid(const char *s)
{
    uint64_t v = 0xdeadbeef;
    symrail_status_t st = sr_env_parse_size(s, &v);
    if (st != SYMRAIL_ERR_INVALID)
        fail_msg("sr_env_parse_size(\"%s\") returned %d (value %llu), expected INVALID", s, st,
                 (unsigned long long)v);
    /* A rejected value must not leak into the output. */
    assert_int_equal(v, 0xdeadbeef);
}

static void test_parse_size(void **state)
{
    (void)state;
    expect_size("0", 0);
    expect_size("1", 1);
    expect_size("4096", 4096);
    expect_size("100b", 100);
    expect_size("64K", 64 * KiB);
    expect_size("64k", 64 * KiB);
    expect_size("64KB", 64 * KiB);
    expect_size("64KiB", 64 * KiB);
    expect_size("512M", 512 * MiB);
    expect_size("512MiB", 512 * MiB);
    expect_size("512mib", 512 * MiB);
    expect_size("1G", GiB);
    expect_size("1g", GiB);
    expect_size("3GB", 3 * GiB);
    expect_size("2T", 2 * TiB);
    expect_size("0K", 0);
    expect_size("18446744073709551615", UINT64_MAX);
    expect_size("16777215T", 16777215 * TiB);   /* the largest whole number of TiB */
}

static void test_parse_size_invalid(void **state)
{
    (void)state;
    expect_size_invalid("");
    expect_size_invalid("12x");
    expect_size_invalid("12KX");
    expect_size_invalid("K");
    expect_size_invalid("-1");
    expect_size_invalid("-1K");
    expect_size_invalid("+1");
    expect_size_invalid(" 1");
    expect_size_invalid("1 ");
    expect_size_invalid("1 K");
    expect_size_invalid("1.5G");
    expect_size_invalid("0x100");
    expect_size_invalid("1e6");
    expect_size_invalid("99999999999999999999T");   /* strtoull range error */
    expect_size_invalid("18446744073709551616");    /* UINT64_MAX + 1 */
    expect_size_invalid("16777216T");               /* 2^64 exactly */
    expect_size_invalid("17179869184G");            /* 2^64 exactly */
    expect_size_invalid("18446744073709551615K");
    uint64_t v;
    assert_int_equal(sr_env_parse_size(NULL, &v), SYMRAIL_ERR_INVALID);
}

static void test_parse_uint(void **state)
{
    uint64_t v = 0;
    (void)state;
    assert_int_equal(sr_env_parse_uint("0", &v), SYMRAIL_OK);
    assert_int_equal(v, 0);
    assert_int_equal(sr_env_parse_uint("2000", &v), SYMRAIL_OK);
    assert_int_equal(v, 2000);
    /* Counts take no unit suffix: "2k" for a spin count is most likely a typo. */
    assert_int_equal(sr_env_parse_uint("2k", &v), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_env_parse_uint("-5", &v), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_env_parse_uint("", &v), SYMRAIL_ERR_INVALID);
    assert_int_equal(v, 2000);
}

/* ---- durations ---------------------------------------------------------- */

static void expect_ms(const char *s, uint64_t want)
{
    uint64_t v = 0xdeadbeef;
    symrail_status_t st = sr_env_parse_time_ms(s, &v);
    if (st != SYMRAIL_OK)
        fail_msg("sr_env_parse_time_ms(\"%s\") failed with %d", s, st);
    if (v != want)
        fail_msg("sr_env_parse_time_ms(\"%s\") = %llu ms, expected %llu", s,
                 (unsigned long long)v, (unsigned long long)want);
}

static void test_parse_time(void **state)
{
    (void)state;
    expect_ms("30", 30000);     /* a bare number is seconds */
    expect_ms("0", 0);
    expect_ms("500ms", 500);
    expect_ms("500MS", 500);
    expect_ms("30s", 30000);
    expect_ms("2m", 120000);
    expect_ms("2min", 120000);
    expect_ms("1h", 3600000);
    expect_ms("1H", 3600000);

    static const char *const bad[] = { "", "s", "-1", "1.5s", "10x", "1d", "1 s", "5sec",
                                       "99999999999999999999", "18446744073709551615s",
                                       "18446744073709551615h", NULL };
    for (int i = 0; bad[i]; i++) {
        uint64_t v = 7;
        if (sr_env_parse_time_ms(bad[i], &v) != SYMRAIL_ERR_INVALID)
            fail_msg("sr_env_parse_time_ms(\"%s\") accepted, value %llu", bad[i],
                     (unsigned long long)v);
        assert_int_equal(v, 7);
    }
}

/* ---- booleans ------------------------------------------------------------ */

static void test_parse_bool(void **state)
{
    static const char *const yes[] = { "1", "y", "Y", "yes", "YES", "Yes", "true", "TRUE",
                                       "on", "On", NULL };
    static const char *const no[] = { "0", "n", "N", "no", "NO", "false", "False", "off",
                                      "OFF", "", NULL };
    static const char *const bad[] = { "2", "-1", "yess", "tru", "onn", "enable", " 1", "1 ",
                                       "00", NULL };
    (void)state;
    for (int i = 0; yes[i]; i++) {
        int v = 0;
        if (sr_env_parse_bool(yes[i], &v) != SYMRAIL_OK || v != 1)
            fail_msg("\"%s\" should parse as true", yes[i]);
    }
    for (int i = 0; no[i]; i++) {
        int v = 1;
        if (sr_env_parse_bool(no[i], &v) != SYMRAIL_OK || v != 0)
            fail_msg("\"%s\" should parse as false", no[i]);
    }
    for (int i = 0; bad[i]; i++) {
        int v = 42;
        if (sr_env_parse_bool(bad[i], &v) != SYMRAIL_ERR_INVALID)
            fail_msg("\"%s\" should be rejected", bad[i]);
        assert_int_equal(v, 42);
    }
}

/* ---- the whole table ----------------------------------------------------- */

static void test_load_defaults(void **state)
{
    sr_env_t env;
    (void)state;
    fake_env = NULL;
    assert_int_equal(sr_env_load(fake_getenv, &env), SYMRAIL_OK);
    assert_int_equal(env.heap_size, GiB);
    assert_string_equal(env.log, "warn");
    assert_string_equal(env.transports, "shm,verbs,tcp");
    assert_int_equal(env.op_timeout, 60000);
    assert_int_equal(env.spin_count, 2000);
    assert_int_equal(env.spin_us, 2000);
    assert_int_equal(env.notify_slots, 64);
    assert_int_equal(env.slice_size, 64 * KiB);
    assert_int_equal(env.stats, 0);
    assert_non_null(env.job_secret);
    assert_string_equal(env.job_secret, "");
    sr_env_release(&env);
    assert_null(env.log);
    assert_null(env.transports);
    assert_null(env.job_secret);
}

static void test_load_values(void **state)
{
    static const char *const table[] = {
        "PATH=/usr/bin",
        "SYMRAIL_HEAP_SIZE=512M",
        "SYMRAIL_LOG=Debug",
        "SYMRAIL_TRANSPORTS=tcp",
        "SYMRAIL_OP_TIMEOUT=1500ms",
        "SYMRAIL_SPIN_COUNT=0",
        "SYMRAIL_SPIN_US=0",
        "SYMRAIL_NOTIFY_SLOTS=8",
        "SYMRAIL_SLICE_SIZE=1MiB",
        "SYMRAIL_STATS=yes",
        "SYMRAIL_JOB_SECRET=c0ffee",
        NULL,
    };
    sr_env_t env;
    (void)state;
    fake_env = table;
    assert_int_equal(sr_env_load(fake_getenv, &env), SYMRAIL_OK);
    assert_int_equal(env.heap_size, 512 * MiB);
    assert_string_equal(env.log, "debug");  /* a choice: in the table's spelling */
    assert_string_equal(env.transports, "tcp");
    assert_int_equal(env.op_timeout, 1500);
    assert_int_equal(env.spin_count, 0);
    assert_int_equal(env.spin_us, 0);
    assert_int_equal(env.notify_slots, 8);
    assert_int_equal(env.slice_size, MiB);
    assert_int_equal(env.stats, 1);
    assert_string_equal(env.job_secret, "c0ffee");
    /* The strings are copies, not pointers into the environment. */
    assert_ptr_not_equal(env.transports, fake_getenv("SYMRAIL_TRANSPORTS"));
    sr_env_release(&env);
}

static void test_load_partial(void **state)
{
    static const char *const table[] = { "SYMRAIL_OP_TIMEOUT=5", NULL };
    sr_env_t env;
    (void)state;
    fake_env = table;
    assert_int_equal(sr_env_load(fake_getenv, &env), SYMRAIL_OK);
    assert_int_equal(env.op_timeout, 5000);
    assert_int_equal(env.heap_size, GiB);
    assert_string_equal(env.log, "warn");
    sr_env_release(&env);
}

static void expect_load_invalid(const char *var)
{
    const char *table[] = { "SYMRAIL_TRANSPORTS=shm", var, "SYMRAIL_JOB_SECRET=x", NULL };
    sr_env_t env;
    fake_env = table;
    symrail_status_t st = sr_env_load(fake_getenv, &env);
    if (st != SYMRAIL_ERR_INVALID)
        fail_msg("sr_env_load with %s returned %d, expected INVALID", var, st);
    /* Strings parsed before the bad entry were released, not leaked. */
    assert_null(env.transports);
    assert_null(env.log);
    assert_null(env.job_secret);
}

static void test_load_invalid(void **state)
{
    (void)state;
    expect_load_invalid("SYMRAIL_HEAP_SIZE=1Q");
    expect_load_invalid("SYMRAIL_HEAP_SIZE=-1G");
    expect_load_invalid("SYMRAIL_HEAP_SIZE=");
    expect_load_invalid("SYMRAIL_LOG=loud");
    expect_load_invalid("SYMRAIL_LOG=");
    expect_load_invalid("SYMRAIL_OP_TIMEOUT=soon");
    expect_load_invalid("SYMRAIL_SPIN_COUNT=lots");
    expect_load_invalid("SYMRAIL_SLICE_SIZE=64Kb5");
    expect_load_invalid("SYMRAIL_STATS=maybe");
}

/* ---- ranges ---------------------------------------------------------------- */

static symrail_status_t load_one(const char *var)
{
    const char *table[] = { var, NULL };
    sr_env_t env;
    fake_env = table;
    symrail_status_t st = sr_env_load(fake_getenv, &env);
    if (st == SYMRAIL_OK)
        sr_env_release(&env);
    else
        assert_null(env.log);   /* released on failure */
    return st;
}

/* Choices match regardless of case, and the code that compares them with
 * the table's spelling sees that spelling: "TCP" was accepted, then no
 * transport was found by that name. */
static void test_choices_any_case(void **state)
{
    (void)state;
    const char *table[] = { "SYMRAIL_TRANSPORTS= TCP ,Shm", "SYMRAIL_ON_PEER_FAILURE=Report",
                            "SYMRAIL_IB_GID_INDEX=AUTO", NULL };
    sr_env_t env;
    fake_env = table;
    assert_int_equal(sr_env_load(fake_getenv, &env), SYMRAIL_OK);
    assert_string_equal(env.transports, " tcp ,shm");
    assert_string_equal(env.on_peer_failure, "report");
    assert_string_equal(env.ib_gid_index, "auto");
    sr_env_release(&env);
}

static void test_ranges(void **state)
{
    static const char *const bad[] = {
        "SYMRAIL_SLICE_SIZE=0",        /* 1-byte slices, as it was */
        "SYMRAIL_SLICE_SIZE=4095",
        "SYMRAIL_SLICE_SIZE=2G",
        "SYMRAIL_HEAP_SIZE=4K",
        "SYMRAIL_HEAP_SIZE=65T",
        "SYMRAIL_NOTIFY_SLOTS=0",
        "SYMRAIL_TCP_LANES=0",
        "SYMRAIL_TCP_LANES=33",
        "SYMRAIL_IB_QPS_PER_PEER=9",
        "SYMRAIL_IB_MAX_WR=32769",
        "SYMRAIL_HEARTBEAT=0",
        "SYMRAIL_TRANSPORTS=ib",
        "SYMRAIL_TRANSPORTS=",
        "SYMRAIL_TRANSPORTS= , ",
        "SYMRAIL_TRANSPORTS=shm,ib",
        "SYMRAIL_IB_GID_INDEX=256",
        "SYMRAIL_IB_GID_INDEX=x",
        "SYMRAIL_IB_GID_INDEX=",
        "SYMRAIL_LOG=warning",
        NULL,
    };
    static const char *const good[] = {
        "SYMRAIL_SLICE_SIZE=4K", "SYMRAIL_SLICE_SIZE=1G", "SYMRAIL_HEAP_SIZE=8K",
        "SYMRAIL_HEAP_SIZE=64T", "SYMRAIL_TCP_LANES=32", "SYMRAIL_OP_TIMEOUT=0",
        "SYMRAIL_TRANSPORTS=tcp,shm", "SYMRAIL_TRANSPORTS=TCP", "SYMRAIL_IB_GID_INDEX=0",
        /* the rules of every comma list (strlist.h): blanks around an item
         * and empty items do not count */
        "SYMRAIL_TRANSPORTS=shm, tcp", "SYMRAIL_TRANSPORTS=shm,,tcp", "SYMRAIL_TRANSPORTS=shm,",
        "SYMRAIL_IB_GID_INDEX=255", "SYMRAIL_IB_GID_INDEX=Auto", "SYMRAIL_LOG=TRACE",
        "SYMRAIL_TCP_IF=anything at all", NULL,
    };
    (void)state;
    for (int i = 0; bad[i]; i++)
        if (load_one(bad[i]) != SYMRAIL_ERR_INVALID)
            fail_msg("%s was accepted", bad[i]);
    for (int i = 0; good[i]; i++)
        if (load_one(good[i]) != SYMRAIL_OK)
            fail_msg("%s was rejected", good[i]);
}

/* The table itself: every range parses and holds its own default. */
static void test_table_ranges(void **state)
{
    (void)state;
    for (size_t i = 0; i < sr_env_ndescs; i++) {
        const sr_env_desc_t *d = &sr_env_descs[i];
        union { uint64_t u; int b; char *s; } v = { 0 };
        assert_non_null(d->range);
        if (d->range[0] == '\0')
            fail_msg("%s has an empty range", d->name);
        if (sr_env_parse_checked(d, d->defval, &v) != SYMRAIL_OK)
            fail_msg("%s: default '%s' fails its range '%s'", d->name, d->defval, d->range);
        if (d->type == SR_ENV_T_STRING)
            free(v.s);
        /* Choices are stored lower case (sr_env_parse_checked): the table
         * must spell them so. */
        for (const char *c = d->range; d->type == SR_ENV_T_STRING && *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                fail_msg("%s: the choices '%s' are not lower case", d->name, d->range);
    }
}

/* ---- unknown variables --------------------------------------------------- */

static void test_warn_unknown(void **state)
{
    char *envp[] = {
        "SYMRAIL_HEAP_SIZE=1G",     /* known */
        "SYMRAIL_BOGUS=1",          /* unknown */
        "SYMRAIL_HEAP_SIZEX=2",     /* unknown: a known name is only a prefix */
        "OTHER=3",                  /* not ours */
        "SYMRAIL_LOG",              /* known, even without '=' */
        "SYMRAIL_HEAP=4",           /* unknown: a prefix of a known name */
        "symrail_log=debug",        /* not ours: names are case sensitive */
        "XSYMRAIL_LOG=info",        /* not ours */
        NULL,
    };
    char *clean[] = { "PATH=/bin", "SYMRAIL_STATS=1", "SYMRAIL_JOB_SECRET=", NULL };
    char *none[] = { NULL };
    (void)state;
    assert_int_equal(sr_env_warn_unknown(envp), 3);
    assert_int_equal(sr_env_warn_unknown(clean), 0);
    assert_int_equal(sr_env_warn_unknown(none), 0);
    assert_int_equal(sr_env_warn_unknown(NULL), 0);

    /* Every name in the table is known. */
    for (size_t i = 0; i < sr_env_ndescs; i++) {
        char buf[128];
        char *one[] = { buf, NULL };
        snprintf(buf, sizeof(buf), "%s=1", sr_env_descs[i].name);
        if (sr_env_warn_unknown(one) != 0)
            fail_msg("%s is in the table but reported unknown", sr_env_descs[i].name);
    }
}

/* ---- printing ----------------------------------------------------------- */

static char *print_to_string(char *(*getenv_fn)(const char *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    sr_env_print(f, getenv_fn);
    assert_int_equal(fclose(f), 0);
    assert_non_null(buf);
    return buf;
}

static void test_print(void **state)
{
    static const char *const table[] = { "SYMRAIL_SPIN_COUNT=77777",
                                         "SYMRAIL_JOB_SECRET=topsecretvalue", NULL };
    (void)state;

    char *out = print_to_string(NULL);
    for (size_t i = 0; i < sr_env_ndescs; i++) {
        if (strstr(out, sr_env_descs[i].name) == NULL)
            fail_msg("sr_env_print output lacks %s:\n%s", sr_env_descs[i].name, out);
        if (strstr(out, sr_env_descs[i].help) == NULL)
            fail_msg("sr_env_print output lacks the help of %s", sr_env_descs[i].name);
        char want[256];
        snprintf(want, sizeof(want), "range %s",
                 strcmp(sr_env_descs[i].range, "*") == 0 ? "any" : sr_env_descs[i].range);
        if (strstr(out, want) == NULL)
            fail_msg("sr_env_print output lacks the range of %s", sr_env_descs[i].name);
    }
    free(out);

    fake_env = table;
    out = print_to_string(fake_getenv);
    for (size_t i = 0; i < sr_env_ndescs; i++)
        assert_non_null(strstr(out, sr_env_descs[i].name));
    assert_non_null(strstr(out, "77777"));
    /* The job secret authenticates connections; it must not reach logs. */
    assert_null(strstr(out, "topsecretvalue"));
    free(out);
}

static void test_table_sane(void **state)
{
    (void)state;
    assert_true(sr_env_ndescs > 0);
    for (size_t i = 0; i < sr_env_ndescs; i++) {
        const sr_env_desc_t *d = &sr_env_descs[i];
        assert_int_equal(strncmp(d->name, "SYMRAIL_", 8), 0);
        assert_non_null(d->help);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(d->name, sr_env_descs[j].name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_size_invalid),
        cmocka_unit_test(test_parse_uint),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_table_sane),
        cmocka_unit_test_setup(test_load_defaults, reset_env),
        cmocka_unit_test_setup(test_load_values, reset_env),
        cmocka_unit_test_setup(test_load_partial, reset_env),
        cmocka_unit_test_setup(test_load_invalid, reset_env),
        cmocka_unit_test_setup(test_ranges, reset_env),
        cmocka_unit_test_setup(test_choices_any_case, reset_env),
        cmocka_unit_test(test_table_ranges),
        cmocka_unit_test_setup(test_warn_unknown, reset_env),
        cmocka_unit_test_setup(test_print, reset_env),
    };
    /* The rejections below log on purpose; keep only errors so that the
     * expected warnings about unknown variables do not look like failures. */
    sr_log_cfg.level = SR_LOG_ERROR;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
