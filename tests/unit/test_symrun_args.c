/* Unit tests of symrun's argument parser: accepted forms, and that every
 * rejected form fails with a message naming what was wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../launcher/symrun_args.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

static char err[256];

static int parse(int argc, char **argv, sr_symrun_args_t *args)
{
    memset(err, 0, sizeof(err));
    memset(args, 0xa5, sizeof(*args));
    return sr_symrun_args_parse(argc, argv, args, err, sizeof(err));
}

/* A rejection must leave a one-line message that contains needle. */
static void expect_error(int argc, char **argv, const char *needle)
{
    sr_symrun_args_t args;

    assert_int_equal(parse(argc, argv, &args), -1);
    assert_non_null(strstr(err, needle));
    assert_null(strchr(err, '\n'));
}

static void test_minimal(void **state)
{
    char *argv[] = {"symrun", "-n", "4", "prog", "a", "b", NULL};
    sr_symrun_args_t args;

    (void)state;
    assert_int_equal(parse(ARGC(argv), argv, &args), 0);
    assert_int_equal(args.action, SR_SYMRUN_ACTION_RUN);
    assert_int_equal(args.nranks, 4);
    assert_false(args.prefix_output);
    assert_false(args.timeout_set);
    assert_int_equal(args.nexports, 0);
    assert_int_equal(args.prog_argc, 3);
    assert_string_equal(args.prog_argv[0], "prog");
    assert_string_equal(args.prog_argv[2], "b");
    assert_null(args.prog_argv[3]);
    sr_symrun_args_fini(&args);
}

static void test_all_options(void **state)
{
    char *argv[] = {"symrun", "-n4", "--prefix-output", "--timeout", "1.5",
                    "-x", "A=1", "-xB", "-x", "C=", "--export", "D=x=y",
                    "--export=E", "--", "prog", "-n", "3", NULL};
    sr_symrun_args_t args;

    (void)state;
    assert_int_equal(parse(ARGC(argv), argv, &args), 0);
    assert_int_equal(args.nranks, 4);
    assert_true(args.prefix_output);
    assert_true(args.timeout_set);
    assert_true(args.timeout_s > 1.49 && args.timeout_s < 1.51);
    assert_int_equal(args.nexports, 5);
    assert_string_equal(args.exports[0], "A=1");
    assert_string_equal(args.exports[1], "B");
    assert_string_equal(args.exports[2], "C=");
    assert_string_equal(args.exports[3], "D=x=y");
    assert_string_equal(args.exports[4], "E");
    /* After "--" everything belongs to the program, options included. */
    assert_int_equal(args.prog_argc, 3);
    assert_string_equal(args.prog_argv[0], "prog");
    assert_string_equal(args.prog_argv[1], "-n");
    sr_symrun_args_fini(&args);
}

static void test_rank_spellings(void **state)
{
    char *a1[] = {"symrun", "-np", "8", "prog", NULL};
    char *a2[] = {"symrun", "--np=8", "prog", NULL};
    char *a3[] = {"symrun", "--np", "8", "prog", NULL};
    char *a4[] = {"symrun", "-n", "2", "-n", "8", "prog", NULL};
    char *a5[] = {"symrun", "-n", "4096", "prog", NULL};
    sr_symrun_args_t args;

    (void)state;
    assert_int_equal(parse(ARGC(a1), a1, &args), 0);
    assert_int_equal(args.nranks, 8);
    sr_symrun_args_fini(&args);
    assert_int_equal(parse(ARGC(a2), a2, &args), 0);
    assert_int_equal(args.nranks, 8);
    sr_symrun_args_fini(&args);
    assert_int_equal(parse(ARGC(a3), a3, &args), 0);
    assert_int_equal(args.nranks, 8);
    sr_symrun_args_fini(&args);
    /* The last -n wins, as with most launchers. */
    assert_int_equal(parse(ARGC(a4), a4, &args), 0);
    assert_int_equal(args.nranks, 8);
    sr_symrun_args_fini(&args);
    assert_int_equal(parse(ARGC(a5), a5, &args), 0);
    assert_int_equal(args.nranks, SR_SYMRUN_MAX_RANKS);
    sr_symrun_args_fini(&args);
}

/* The first non-option ends symrun's options: the program's own options
 * must not be taken for ours. */
static void test_program_options_untouched(void **state)
{
    char *argv[] = {"symrun", "-n", "2", "--timeout=0.25", "prog", "--timeout",
                    "bogus", "-x", NULL};
    sr_symrun_args_t args;

    (void)state;
    assert_int_equal(parse(ARGC(argv), argv, &args), 0);
    assert_true(args.timeout_s > 0.24 && args.timeout_s < 0.26);
    assert_int_equal(args.prog_argc, 4);
    assert_string_equal(args.prog_argv[1], "--timeout");
    sr_symrun_args_fini(&args);
}

static void test_help_version(void **state)
{
    char *a1[] = {"symrun", "--help", NULL};
    char *a2[] = {"symrun", "-n", "2", "-h", NULL};
    char *a3[] = {"symrun", "--version", NULL};
    char *a4[] = {"symrun", "-V", "prog", NULL};
    sr_symrun_args_t args;

    (void)state;
    assert_int_equal(parse(ARGC(a1), a1, &args), 0);
    assert_int_equal(args.action, SR_SYMRUN_ACTION_HELP);
    sr_symrun_args_fini(&args);
    assert_int_equal(parse(ARGC(a2), a2, &args), 0);
    assert_int_equal(args.action, SR_SYMRUN_ACTION_HELP);
    sr_symrun_args_fini(&args);
    assert_int_equal(parse(ARGC(a3), a3, &args), 0);
    assert_int_equal(args.action, SR_SYMRUN_ACTION_VERSION);
    sr_symrun_args_fini(&args);
    assert_int_equal(parse(ARGC(a4), a4, &args), 0);
    assert_int_equal(args.action, SR_SYMRUN_ACTION_VERSION);
    sr_symrun_args_fini(&args);
}

static void test_n_missing(void **state)
{
    char *a1[] = {"symrun", "prog", NULL};
    char *a2[] = {"symrun", "--prefix-output", "prog", NULL};
    char *a3[] = {"symrun", "prog", "-n", "2", NULL};
    char *a4[] = {"symrun", "-n", NULL};

    (void)state;
    expect_error(ARGC(a1), a1, "-n");
    expect_error(ARGC(a2), a2, "-n");
    /* -n after the program is the program's. */
    expect_error(ARGC(a3), a3, "-n");
    expect_error(ARGC(a4), a4, "'-n'");
}

static void test_n_invalid(void **state)
{
    char *zero[] = {"symrun", "-n", "0", "prog", NULL};
    char *neg[] = {"symrun", "-n", "-1", "prog", NULL};
    char *garbage[] = {"symrun", "-n", "abc", "prog", NULL};
    char *trailing[] = {"symrun", "-n", "4x", "prog", NULL};
    char *empty[] = {"symrun", "-n", "", "prog", NULL};
    char *blank[] = {"symrun", "-n", " 4", "prog", NULL};
    char *plus[] = {"symrun", "-n", "+4", "prog", NULL};
    char *big[] = {"symrun", "-n", "4097", "prog", NULL};
    char *huge[] = {"symrun", "-n", "99999999999999999999", "prog", NULL};
    char *attached[] = {"symrun", "-nfoo", "prog", NULL};
    char *np[] = {"symrun", "--np=0", "prog", NULL};

    (void)state;
    expect_error(ARGC(zero), zero, "'0'");
    expect_error(ARGC(neg), neg, "'-1'");
    expect_error(ARGC(garbage), garbage, "'abc'");
    expect_error(ARGC(trailing), trailing, "'4x'");
    expect_error(ARGC(empty), empty, "''");
    expect_error(ARGC(blank), blank, "' 4'");
    expect_error(ARGC(plus), plus, "'+4'");
    expect_error(ARGC(big), big, "'4097'");
    expect_error(ARGC(huge), huge, "'99999999999999999999'");
    expect_error(ARGC(attached), attached, "'foo'");
    expect_error(ARGC(np), np, "'0'");
}

static void test_timeout_invalid(void **state)
{
    static const char *bad[] = {"abc", "0", "0.0", "-1", "inf", "nan", "1e10",
                                "", "1s", " 1", "0x10", "+1"};
    char *missing[] = {"symrun", "-n", "2", "--timeout", NULL};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char needle[32];
        char *argv[] = {"symrun", "-n", "2", "--timeout", (char *)bad[i],
                        "prog", NULL};

        snprintf(needle, sizeof(needle), "'%s'", bad[i]);
        expect_error(ARGC(argv), argv, needle);
        assert_non_null(strstr(err, "--timeout"));
    }
    expect_error(ARGC(missing), missing, "'--timeout'");
}

static void test_timeout_values(void **state)
{
    double t = 0;

    (void)state;
    assert_int_equal(sr_symrun_args_parse_timeout("2", &t), 0);
    assert_true(t == 2.0);
    assert_int_equal(sr_symrun_args_parse_timeout(".5", &t), 0);
    assert_true(t == 0.5);
    assert_int_equal(sr_symrun_args_parse_timeout("1e3", &t), 0);
    assert_true(t == 1000.0);
    assert_int_equal(sr_symrun_args_parse_timeout(NULL, &t), -1);
    assert_int_equal(sr_symrun_args_parse_timeout("-0.5", &t), -1);
}

static void test_grace_values(void **state)
{
    long g = -1;

    (void)state;
    assert_int_equal(sr_symrun_args_parse_grace("0", &g), 0);
    assert_int_equal(g, 0);
    assert_int_equal(sr_symrun_args_parse_grace("2500", &g), 0);
    assert_int_equal(g, 2500);
    assert_int_equal(sr_symrun_args_parse_grace("1.5", &g), -1);
    assert_int_equal(sr_symrun_args_parse_grace("-1", &g), -1);
    assert_int_equal(sr_symrun_args_parse_grace("", &g), -1);
    assert_int_equal(sr_symrun_args_parse_grace("99999999999", &g), -1);
}

static void test_export_invalid(void **state)
{
    char *digit[] = {"symrun", "-n", "2", "-x", "1A=2", "prog", NULL};
    char *noname[] = {"symrun", "-n", "2", "-x", "=v", "prog", NULL};
    char *dash[] = {"symrun", "-n", "2", "-x", "A-B=1", "prog", NULL};
    char *empty[] = {"symrun", "-n", "2", "-x", "", "prog", NULL};
    char *missing[] = {"symrun", "-n", "2", "-x", NULL};
    char *attached[] = {"symrun", "-n", "2", "-x=A", "prog", NULL};

    (void)state;
    expect_error(ARGC(digit), digit, "'1A=2'");
    expect_error(ARGC(noname), noname, "'=v'");
    expect_error(ARGC(dash), dash, "'A-B=1'");
    expect_error(ARGC(empty), empty, "''");
    expect_error(ARGC(missing), missing, "'-x'");
    expect_error(ARGC(attached), attached, "'=A'");
}

static void test_valid_name(void **state)
{
    (void)state;
    assert_true(sr_symrun_args_valid_name("_A1", 3));
    assert_true(sr_symrun_args_valid_name("PATH=x", 4));
    assert_false(sr_symrun_args_valid_name("", 0));
    assert_false(sr_symrun_args_valid_name("9X", 2));
    assert_false(sr_symrun_args_valid_name("A.B", 3));
}

static void test_missing_program(void **state)
{
    char *none[] = {"symrun", "-n", "2", NULL};
    char *dashdash[] = {"symrun", "-n", "2", "--", NULL};
    char *nothing[] = {"symrun", NULL};

    (void)state;
    expect_error(ARGC(none), none, "program");
    expect_error(ARGC(dashdash), dashdash, "program");
    expect_error(ARGC(nothing), nothing, "program");
}

static void test_dashdash_program(void **state)
{
    char *argv[] = {"symrun", "-n", "1", "--", "--weird-name", NULL};
    sr_symrun_args_t args;

    (void)state;
    assert_int_equal(parse(ARGC(argv), argv, &args), 0);
    assert_int_equal(args.prog_argc, 1);
    assert_string_equal(args.prog_argv[0], "--weird-name");
    sr_symrun_args_fini(&args);
}

static void test_unknown_option(void **state)
{
    char *a1[] = {"symrun", "-n", "2", "--bogus", "prog", NULL};
    char *a2[] = {"symrun", "-q", "-n", "2", "prog", NULL};
    char *a3[] = {"symrun", "-n", "2", "--prefix-output=yes", "prog", NULL};
    char *a4[] = {"symrun", "-n", "2", "-", "prog", NULL};

    (void)state;
    expect_error(ARGC(a1), a1, "'--bogus'");
    expect_error(ARGC(a2), a2, "'-q'");
    expect_error(ARGC(a3), a3, "'--prefix-output=yes'");
    /* A lone "-" is no option: it is taken as the program's name (which
     * then fails to execute) rather than silently dropped. */
    {
        sr_symrun_args_t args;

        assert_int_equal(parse(ARGC(a4), a4, &args), 0);
        assert_string_equal(args.prog_argv[0], "-");
        sr_symrun_args_fini(&args);
    }
}

/* Errors must never overflow the caller's buffer. */
static void test_small_error_buffer(void **state)
{
    char *argv[] = {"symrun", "-n", "abcdefghijklmnopqrstuvwxyz", "prog", NULL};
    sr_symrun_args_t args;
    char small[8];

    (void)state;
    memset(small, 'z', sizeof(small));
    assert_int_equal(sr_symrun_args_parse(ARGC(argv), argv, &args, small,
                                          sizeof(small)), -1);
    assert_int_equal(small[sizeof(small) - 1], '\0');
    assert_int_equal(sr_symrun_args_parse(ARGC(argv), argv, &args, NULL, 0),
                     -1);
}

static void test_bind(void **state)
{
    char *argv1[] = {"symrun", "-n", "2", "--bind-to", "none", "prog", NULL};
    char *argv2[] = {"symrun", "--bind-to=core", "-n", "2", "prog", NULL};
    char *argv3[] = {"symrun", "-n", "2", "prog", "--bind-to", "none", NULL};
    char *bad1[] = {"symrun", "-n", "2", "--bind-to", "socket", "prog", NULL};
    char *bad2[] = {"symrun", "-n", "2", "--bind-to=", "prog", NULL};
    char *bad3[] = {"symrun", "-n", "2", "--bind-to", NULL};
    char *bad4[] = {"symrun", "-n", "2", "--bind-toe", "prog", NULL};
    sr_symrun_bind_t b = SR_SYMRUN_BIND_NONE;
    sr_symrun_args_t args;

    (void)state;
    assert_int_equal(parse(ARGC(argv1), argv1, &args), 0);
    assert_true(args.bind_set);
    assert_int_equal(args.bind, SR_SYMRUN_BIND_NONE);
    assert_string_equal(args.prog_argv[0], "prog");
    sr_symrun_args_fini(&args);
    assert_int_equal(parse(ARGC(argv2), argv2, &args), 0);
    assert_true(args.bind_set);
    assert_int_equal(args.bind, SR_SYMRUN_BIND_CORE);
    sr_symrun_args_fini(&args);
    /* After the program, it is the program's: the default stays. */
    assert_int_equal(parse(ARGC(argv3), argv3, &args), 0);
    assert_false(args.bind_set);
    assert_int_equal(args.bind, SR_SYMRUN_BIND_CORE);
    assert_int_equal(args.prog_argc, 3);
    sr_symrun_args_fini(&args);

    expect_error(ARGC(bad1), bad1, "'socket'");
    expect_error(ARGC(bad2), bad2, "--bind-to: invalid value ''");
    expect_error(ARGC(bad3), bad3, "'--bind-to' needs");
    expect_error(ARGC(bad4), bad4, "unknown option '--bind-toe'");

    assert_int_equal(sr_symrun_args_parse_bind("core", &b), 0);
    assert_int_equal(b, SR_SYMRUN_BIND_CORE);
    assert_int_equal(sr_symrun_args_parse_bind("none", &b), 0);
    assert_int_equal(b, SR_SYMRUN_BIND_NONE);
    assert_int_equal(sr_symrun_args_parse_bind("Core", &b), -1);
    assert_int_equal(sr_symrun_args_parse_bind("", &b), -1);
    assert_int_equal(sr_symrun_args_parse_bind(NULL, &b), -1);
    assert_int_equal(b, SR_SYMRUN_BIND_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal),
        cmocka_unit_test(test_all_options),
        cmocka_unit_test(test_rank_spellings),
        cmocka_unit_test(test_program_options_untouched),
        cmocka_unit_test(test_help_version),
        cmocka_unit_test(test_n_missing),
        cmocka_unit_test(test_n_invalid),
        cmocka_unit_test(test_timeout_invalid),
        cmocka_unit_test(test_timeout_values),
        cmocka_unit_test(test_grace_values),
        cmocka_unit_test(test_export_invalid),
        cmocka_unit_test(test_valid_name),
        cmocka_unit_test(test_missing_program),
        cmocka_unit_test(test_dashdash_program),
        cmocka_unit_test(test_unknown_option),
        cmocka_unit_test(test_small_error_buffer),
        cmocka_unit_test(test_bind),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
