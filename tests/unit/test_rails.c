/*
 * Unit tests of rail selection: the device filter, loading a topology,
 * argument checks and the log format.  Ranking by locality is in
 * test_rails_rank.c; the synthetic topologies are in tests/unit/topo/.
 */
#include "config.h"

#include "rails_helpers.h"

/* ---- filter -------------------------------------------------------------- */

static void test_filter_select(void **state)
{
    (void)state;
    const char *f = "mlx5_0:1,mlx5_2";
    assert_true(sr_rails_filter_match(f, "mlx5_0", 1));
    assert_false(sr_rails_filter_match(f, "mlx5_0", 2));
    assert_true(sr_rails_filter_match(f, "mlx5_2", 1));
    assert_true(sr_rails_filter_match(f, "mlx5_2", 2));
    assert_false(sr_rails_filter_match(f, "mlx5_1", 1));
    /* Whole names only: neither prefixes nor extensions match. */
    assert_false(sr_rails_filter_match(f, "mlx5_", 1));
    assert_false(sr_rails_filter_match(f, "mlx5_20", 1));
    assert_false(sr_rails_filter_match(f, "mlx5_0x", 1));
    assert_false(sr_rails_filter_match(f, "", 1));
    assert_false(sr_rails_filter_match(f, NULL, 1));
    /* Spaces around entries are forgiven, and later entries still count. */
    f = " mlx5_0:1 ,\tmlx5_1:2 ";
    assert_true(sr_rails_filter_match(f, "mlx5_0", 1));
    assert_true(sr_rails_filter_match(f, "mlx5_1", 2));
    assert_false(sr_rails_filter_match(f, "mlx5_1", 1));
    assert_true(sr_rails_filter_match("rxe0", "rxe0", 1));
    assert_true(sr_rails_filter_match("mlx5_0:1,mlx5_0:2", "mlx5_0", 2));
    assert_true(sr_rails_filter_match("mlx5_0:12", "mlx5_0", 12));
    assert_false(sr_rails_filter_match("mlx5_0:12", "mlx5_0", 1));
    assert_int_equal(sr_rails_filter_check("mlx5_0:1,mlx5_2"), SYMRAIL_OK);
    assert_int_equal(sr_rails_filter_check(" mlx5_0:1 , mlx5_1:2 "), SYMRAIL_OK);
}

static void test_filter_empty(void **state)
{
    (void)state;
    const char *empty[] = { NULL, "", " ", ",", " , ,\t" };
    for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
        assert_true(sr_rails_filter_match(empty[i], "mlx5_0", 1));
        assert_true(sr_rails_filter_match(empty[i], "rxe0", 2));
        assert_int_equal(sr_rails_filter_check(empty[i]), SYMRAIL_OK);
    }
    /* Empty entries between real ones are skipped, not "select all". */
    assert_true(sr_rails_filter_match("mlx5_0,,", "mlx5_0", 1));
    assert_false(sr_rails_filter_match("mlx5_0,,", "mlx5_1", 1));
    assert_false(sr_rails_filter_match(",mlx5_0", "mlx5_1", 1));
}

/* An entry that names no rail selects nothing: a typo must not widen the
 * selection to every port, let alone every device. */
static void test_filter_garbage(void **state)
{
    (void)state;
    const char *bad[] = { ":", ":1", "mlx5_0:", "mlx5_0:x", "mlx5_0:0", "mlx5_0:-1",
                          "mlx5_0:+1", "mlx5_0:1x", "mlx5_0: 1", "mlx5_0:1:2",
                          "mlx5_0:99999999999999999999" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        for (int port = 0; port <= 2; port++)
            if (sr_rails_filter_match(bad[i], "mlx5_0", port))
                fail_msg("filter \"%s\" selected mlx5_0:%d", bad[i], port);
        if (sr_rails_filter_check(bad[i]) != SYMRAIL_ERR_INVALID)
            fail_msg("filter \"%s\" passed the check", bad[i]);
    }
    /* The good entries of a partly bad filter still work. */
    assert_true(sr_rails_filter_match("mlx5_0:x,mlx5_1", "mlx5_1", 1));
    assert_false(sr_rails_filter_match("mlx5_0:x,mlx5_1", "mlx5_0", 1));
    assert_int_equal(sr_rails_filter_check("mlx5_0:x,mlx5_1"), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_rails_filter_check("mlx5_1,:"), SYMRAIL_ERR_INVALID);
}

/* ---- loading --------------------------------------------------------------- */

static void test_load_errors(void **state)
{
    (void)state;
    hwloc_topology_t topo = (hwloc_topology_t)(uintptr_t)0x1;
    sr_log_level_t saved = sr_log_cfg.level;

    sr_log_cfg.level = SR_LOG_ERROR;   /* the failures below are expected */
    assert_int_equal(sr_rails_topo_load("no/such/topology.xml", &topo), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_rails_topo_load("<topology version=\"2.0\"><object", &topo),
                     SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_rails_topo_load("<not-a-topology/>", &topo), SYMRAIL_ERR_INVALID);
    sr_log_cfg.level = saved;
    /* A failed load leaves the output alone. */
    assert_ptr_equal(topo, (hwloc_topology_t)(uintptr_t)0x1);
    assert_int_equal(sr_rails_topo_load(NULL, NULL), SYMRAIL_ERR_INVALID);
}

/* The XML keeps its I/O objects, and a buffer loads like its file. */
static void test_load_xml(void **state)
{
    (void)state;
    hwloc_topology_t file = load("2s4n8g.xml");
    char *xml = read_topo("2s4n8g.xml");
    hwloc_topology_t buf = NULL;
    int nics = 0, gpus = 0;

    assert_int_equal(sr_rails_topo_load(xml, &buf), SYMRAIL_OK);
    free(xml);
    for (hwloc_obj_t o = hwloc_get_next_osdev(file, NULL); o; o = hwloc_get_next_osdev(file, o)) {
        nics += o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
        gpus += o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC;
    }
    assert_int_equal(nics, 4);
    assert_int_equal(gpus, 8);
    assert_int_equal(hwloc_get_nbobjs_by_type(file, HWLOC_OBJ_PACKAGE), 2);
    assert_int_equal(hwloc_get_nbobjs_by_type(file, HWLOC_OBJ_NUMANODE), 2);
    assert_int_equal(hwloc_get_nbobjs_by_type(file, HWLOC_OBJ_PU), 16);
    assert_int_equal(hwloc_get_nbobjs_by_type(buf, HWLOC_OBJ_PU), 16);
    assert_int_equal(hwloc_get_nbobjs_by_type(buf, HWLOC_OBJ_OS_DEVICE),
                     hwloc_get_nbobjs_by_type(file, HWLOC_OBJ_OS_DEVICE));
    hwloc_topology_destroy(buf);
    hwloc_topology_destroy(file);
}

/* Whatever this machine has, a device it does not have ranks as unknown and
 * the binding of this process is usable. */
static void test_this_machine(void **state)
{
    (void)state;
    hwloc_topology_t topo = NULL;
    sr_rail_t r[2] = { rail("no_such_dev0", 1, 25000), rail("no_such_dev1", 1, 0) };

    assert_int_equal(sr_rails_topo_load(NULL, &topo), SYMRAIL_OK);
    assert_int_equal(sr_rails_rank(topo, NULL, 2.0, r, 2), SYMRAIL_OK);
    expect_rail(&r[0], -1, 0, 25000);
    expect_rail(&r[1], -1, 0, 25000);
    hwloc_topology_destroy(topo);
}

static void test_rank_args(void **state)
{
    (void)state;
    sr_rail_t r = rail("mlx5_0", 1, HDR);

    assert_int_equal(sr_rails_rank(NULL, NULL, 2.0, NULL, 0), SYMRAIL_OK);
    assert_int_equal(sr_rails_rank(NULL, NULL, 2.0, NULL, 1), SYMRAIL_ERR_INVALID);
    assert_int_equal(sr_rails_rank(NULL, NULL, 2.0, &r, -1), SYMRAIL_ERR_INVALID);
    /* Rejected calls leave the rails alone. */
    assert_int_equal(r.weight, 77);
}

/* ---- format ---------------------------------------------------------------- */

static void test_format(void **state)
{
    (void)state;
    sr_rail_t r[3] = { rail("rxe0", 1, 25000), rail("mlx5_2", 2, 200000), rail("siw0", 1, 0) };
    char buf[512];
    const char *want =
        "rxe0:1  numa 0  distance 0  weight 100  speed 25000 Mb/s\n"
        "mlx5_2:2  numa 1  distance 21  weight 0  speed 200000 Mb/s\n"
        "siw0:1  numa ?  distance ?  weight 7  speed ?\n";

    r[0].numa = 0;
    r[0].distance = 0;
    r[0].weight = 100;
    r[1].numa = 1;
    r[1].distance = 21;
    r[1].weight = 0;
    r[2].numa = -1;
    r[2].distance = -1;
    r[2].weight = 7;
    sr_rails_format(r, 3, buf, sizeof(buf));
    assert_string_equal(buf, want);

    /* Only whole lines: the second one does not fit. */
    size_t first = strlen("rxe0:1  numa 0  distance 0  weight 100  speed 25000 Mb/s\n");
    sr_rails_format(r, 3, buf, first + 10);
    assert_int_equal(strlen(buf), first);
    assert_memory_equal(buf, want, first);
    sr_rails_format(r, 3, buf, first);   /* one byte short for the terminator */
    assert_string_equal(buf, "");
    sr_rails_format(r, 3, buf, first + 1);
    assert_int_equal(strlen(buf), first);

    memset(buf, 'z', sizeof(buf));
    sr_rails_format(r, 0, buf, sizeof(buf));
    assert_string_equal(buf, "");
    sr_rails_format(r, 3, buf, 1);
    assert_string_equal(buf, "");
    buf[0] = 'z';
    sr_rails_format(r, 3, buf, 0);   /* nothing may be written */
    assert_int_equal(buf[0], 'z');
    sr_rails_format(r, 3, NULL, 10);
}

/* What a caller would log after ranking. */
static void test_format_ranked(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_bitmap_t cpus = package_cpus(topo, 1);
    sr_rail_t r[3] = { rail("mlx5_0", 1, HDR), rail("mlx5_3", 1, HDR), rail("rxe0", 1, 25000) };
    char buf[512];

    assert_int_equal(sr_rails_rank(topo, cpus, 2.0, r, 3), SYMRAIL_OK);
    sr_rails_format(r, 3, buf, sizeof(buf));
    assert_string_equal(buf, "mlx5_0:1  numa 0  distance 21  weight 0  speed 200000 Mb/s\n"
                             "mlx5_3:1  numa 1  distance 0  weight 200000  speed 200000 Mb/s\n"
                             "rxe0:1  numa ?  distance ?  weight 25000  speed 25000 Mb/s\n");
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
}

/* ---- pairing by reachability ---- */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_select),
        cmocka_unit_test(test_filter_empty),
        cmocka_unit_test(test_filter_garbage),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_load_xml),
        cmocka_unit_test(test_this_machine),
        cmocka_unit_test(test_rank_args),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_ranked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
