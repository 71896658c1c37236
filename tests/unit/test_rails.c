/*
 * Unit tests of rail selection by locality.  The topologies are synthetic
 * hwloc XML files (tests/unit/topo/) so the tests give the same answers on
 * any machine, NICs or not; only one test looks at this machine, and only
 * for things that hold everywhere.
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

#include "tl/verbs/rails.h"
#include "util/log.h"

/* Used when the tests run outside `make check`, which sets top_srcdir. */
#ifndef SR_TEST_TOPO_DIR
#define SR_TEST_TOPO_DIR "tests/unit/topo"
#endif

#define HDR  200000   /* Mb/s */
#define EDR  100000

/* 10 local vs 21 remote in 2s4n8g.xml. */
#define HDR_AT_21 95238   /* 200000 * 10 / 21, rounded */

/* ---- helpers ------------------------------------------------------------- */

static void topo_path(const char *name, char *path, size_t len)
{
    const char *top = getenv("top_srcdir");
    int w;

    if (top && *top)
        w = snprintf(path, len, "%s/tests/unit/topo/%s", top, name);
    else
        w = snprintf(path, len, "%s/%s", SR_TEST_TOPO_DIR, name);
    assert_true(w > 0 && (size_t)w < len);
}

static hwloc_topology_t load(const char *name)
{
    char path[4096];
    hwloc_topology_t topo = NULL;

    topo_path(name, path, sizeof(path));
    symrail_status_t st = sr_rails_topo_load(path, &topo);
    if (st != SYMRAIL_OK)
        fail_msg("cannot load %s (%d)", path, st);
    assert_non_null(topo);
    return topo;
}

static char *read_topo(const char *name)
{
    char path[4096];
    FILE *f;
    long size;
    char *buf;

    topo_path(name, path, sizeof(path));
    f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    buf[size] = '\0';
    fclose(f);
    return buf;
}

/* The same machine as 2s4n8g.xml without its NUMA latency matrix, as on a
 * BIOS that publishes no SLIT. */
static hwloc_topology_t load_without_distances(const char *name)
{
    char *xml = read_topo(name);
    char *start = strstr(xml, "<distances2");
    char *end = strstr(xml, "</distances2>");
    hwloc_topology_t topo = NULL;

    assert_non_null(start);
    assert_non_null(end);
    end += strlen("</distances2>");
    memmove(start, end, strlen(end) + 1);
    assert_int_equal(sr_rails_topo_load(xml, &topo), SYMRAIL_OK);
    free(xml);
    return topo;
}

static hwloc_bitmap_t package_cpus(hwloc_topology_t topo, unsigned idx)
{
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, idx);
    assert_non_null(pkg);
    return hwloc_bitmap_dup(pkg->cpuset);
}

static hwloc_bitmap_t node_cpus(hwloc_topology_t topo, unsigned os_index)
{
    hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(topo, os_index);
    assert_non_null(node);
    return hwloc_bitmap_dup(node->cpuset);
}

static hwloc_bitmap_t pus(unsigned first, unsigned last)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    assert_non_null(set);
    assert_int_equal(hwloc_bitmap_set_range(set, first, (int)last), 0);
    return set;
}

static sr_rail_t rail(const char *dev, int port, uint64_t speed)
{
    sr_rail_t r;

    memset(&r, 0, sizeof(r));
    snprintf(r.dev, sizeof(r.dev), "%s", dev);
    r.port = port;
    r.speed_mbps = speed;
    /* Garbage in the outputs proves rank writes every one of them. */
    r.numa = 77;
    r.distance = 77;
    r.weight = 77;
    return r;
}

static void expect_rail(const sr_rail_t *r, int numa, int distance, uint32_t weight)
{
    if (r->numa != numa || r->distance != distance || r->weight != weight)
        fail_msg("%s:%d: numa %d distance %d weight %u, expected numa %d distance %d weight %u",
                 r->dev, r->port, r->numa, r->distance, r->weight, numa, distance, weight);
}

/* The four HDR rails of 2s4n8g.xml. */
static void four_rails(sr_rail_t *r)
{
    r[0] = rail("mlx5_0", 1, HDR);
    r[1] = rail("mlx5_1", 1, HDR);
    r[2] = rail("mlx5_2", 1, HDR);
    r[3] = rail("mlx5_3", 1, HDR);
}

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

/* ---- ranking on two sockets ---------------------------------------------- */

static void test_bound_package0(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_bitmap_t cpus = package_cpus(topo, 0);
    sr_rail_t r[4];

    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 0, 0, HDR);
    expect_rail(&r[2], 1, 21, HDR_AT_21);
    expect_rail(&r[3], 1, 21, HDR_AT_21);

    /* 21/10 is past a limit of 2: the far rails go. */
    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 2.0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 0, 0, HDR);
    expect_rail(&r[2], 1, 21, 0);
    expect_rail(&r[3], 1, 21, 0);

    /* ... but not past 2.5, and a negative limit is no limit. */
    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 2.5, r, 4), SYMRAIL_OK);
    expect_rail(&r[2], 1, 21, HDR_AT_21);
    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, -1.0, r, 4), SYMRAIL_OK);
    expect_rail(&r[3], 1, 21, HDR_AT_21);

    /* A limit below 1 cannot drop the nearest rails. */
    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 0.5, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 0, 0, HDR);
    expect_rail(&r[2], 1, 21, 0);

    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
}

static void test_bound_package1(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_bitmap_t cpus = package_cpus(topo, 1);
    sr_rail_t r[4];

    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 21, HDR_AT_21);
    expect_rail(&r[1], 0, 21, HDR_AT_21);
    expect_rail(&r[2], 1, 0, HDR);
    expect_rail(&r[3], 1, 0, HDR);

    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 2.0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 21, 0);
    expect_rail(&r[1], 0, 21, 0);
    expect_rail(&r[2], 1, 0, HDR);
    expect_rail(&r[3], 1, 0, HDR);
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
}

/* One core is enough to make its package's rails local; CPUs on both
 * packages make every rail local. */
static void test_bound_cores(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_bitmap_t one = pus(3, 3), both = pus(7, 8);
    sr_rail_t r[4];

    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, one, 2.0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[2], 1, 21, 0);

    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, both, 2.0, r, 4), SYMRAIL_OK);
    for (int i = 0; i < 4; i++)
        expect_rail(&r[i], i / 2, 0, HDR);
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(both);
    hwloc_topology_destroy(topo);
}

/* NULL asks for the binding, which cannot be known for an XML topology:
 * like a process free to run anywhere, every rail is local. */
static void test_unbound(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    hwloc_bitmap_t outside = pus(100, 103);
    sr_rail_t r[4];

    hwloc_const_cpuset_t sets[] = { NULL, all, outside };
    for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
        four_rails(r);
        assert_int_equal(sr_rails_rank(topo, sets[s], 2.0, r, 4), SYMRAIL_OK);
        for (int i = 0; i < 4; i++)
            expect_rail(&r[i], i / 2, 0, HDR);
    }
    hwloc_bitmap_free(outside);
    hwloc_topology_destroy(topo);
}

static void test_speeds(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_bitmap_t cpus = package_cpus(topo, 0);
    sr_rail_t r[4] = { rail("mlx5_0", 1, HDR), rail("mlx5_1", 1, EDR), rail("mlx5_2", 1, HDR),
                       rail("mlx5_3", 1, EDR) };

    assert_int_equal(sr_rails_rank(topo, cpus, 0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 0, 0, EDR);
    expect_rail(&r[2], 1, 21, HDR_AT_21);
    expect_rail(&r[3], 1, 21, 47619);   /* 100000 * 10 / 21 */

    /* Two ports of one device share its locality. */
    sr_rail_t p[2] = { rail("mlx5_2", 1, 25000), rail("mlx5_2", 2, 50000) };
    assert_int_equal(sr_rails_rank(topo, cpus, 0, p, 2), SYMRAIL_OK);
    expect_rail(&p[0], 1, 21, 25000);   /* the nearest rails set the scale */
    expect_rail(&p[1], 1, 21, 50000);
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
}

/* Unknown speeds still leave room for the distance to show. */
static void test_unknown_speed(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_bitmap_t cpus = package_cpus(topo, 0);
    sr_rail_t r[4] = { rail("mlx5_0", 1, 0), rail("mlx5_1", 1, 0), rail("mlx5_2", 1, 0),
                       rail("mlx5_3", 1, 0) };

    assert_int_equal(sr_rails_rank(topo, cpus, 0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, 100);
    expect_rail(&r[1], 0, 0, 100);
    expect_rail(&r[2], 1, 21, 48);
    expect_rail(&r[3], 1, 21, 48);

    /* Next to known speeds, an unknown one counts as the slowest of them. */
    sr_rail_t m[3] = { rail("mlx5_0", 1, 0), rail("mlx5_1", 1, HDR), rail("mlx5_2", 1, EDR) };
    assert_int_equal(sr_rails_rank(topo, cpus, 0, m, 3), SYMRAIL_OK);
    expect_rail(&m[0], 0, 0, EDR);
    expect_rail(&m[1], 0, 0, HDR);
    expect_rail(&m[2], 1, 21, 47619);
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
}

/* A software device hwloc does not list keeps its speed's weight and
 * distance -1; the located rails are ranked among themselves. */
static void test_unknown_device(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4n8g.xml");
    hwloc_bitmap_t pkg0 = package_cpus(topo, 0), pkg1 = package_cpus(topo, 1);

    sr_rail_t r[3] = { rail("mlx5_0", 1, HDR), rail("mlx5_2", 1, HDR), rail("rxe0", 1, 25000) };
    assert_int_equal(sr_rails_rank(topo, pkg0, 2.0, r, 3), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 1, 21, 0);
    expect_rail(&r[2], -1, -1, 25000);

    /* The only located rail is remote: it is still the nearest one, so the
     * unknown device cannot push it past the limit. */
    sr_rail_t s[2] = { rail("rxe0", 1, 25000), rail("mlx5_0", 1, HDR) };
    assert_int_equal(sr_rails_rank(topo, pkg1, 2.0, s, 2), SYMRAIL_OK);
    expect_rail(&s[0], -1, -1, 25000);
    expect_rail(&s[1], 0, 21, HDR);

    /* No rail located at all: every rail is local and weighs its speed. */
    sr_rail_t u[2] = { rail("rxe0", 1, 25000), rail("siw0", 1, 10000) };
    assert_int_equal(sr_rails_rank(topo, pkg1, 2.0, u, 2), SYMRAIL_OK);
    expect_rail(&u[0], -1, 0, 25000);
    expect_rail(&u[1], -1, 0, 10000);

    /* A name filling the whole field, unterminated, matches no device. */
    sr_rail_t l[2] = { rail("mlx5_0", 1, HDR), rail("", 1, HDR) };
    memset(l[1].dev, 'x', sizeof(l[1].dev));
    assert_int_equal(sr_rails_rank(topo, pkg0, 2.0, l, 2), SYMRAIL_OK);
    expect_rail(&l[0], 0, 0, HDR);
    assert_int_equal(l[1].distance, -1);
    assert_int_equal(l[1].weight, HDR);

    hwloc_bitmap_free(pkg0);
    hwloc_bitmap_free(pkg1);
    hwloc_topology_destroy(topo);
}

/* Without a topology nothing is located. */
static void test_no_topology(void **state)
{
    (void)state;
    sr_rail_t r[2] = { rail("mlx5_0", 1, HDR), rail("mlx5_1", 1, 0) };

    assert_int_equal(sr_rails_rank(NULL, NULL, 2.0, r, 2), SYMRAIL_OK);
    expect_rail(&r[0], -1, 0, HDR);
    expect_rail(&r[1], -1, 0, HDR);
}

/* Without a NUMA matrix, remote is distance 1 and costs twice local. */
static void test_no_distance_matrix(void **state)
{
    (void)state;
    hwloc_topology_t topo = load_without_distances("2s4n8g.xml");
    hwloc_bitmap_t cpus = package_cpus(topo, 0);
    sr_rail_t r[4];

    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 2.0, r, 4), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 0, 0, HDR);
    expect_rail(&r[2], 1, 1, HDR / 2);
    expect_rail(&r[3], 1, 1, HDR / 2);

    four_rails(r);
    assert_int_equal(sr_rails_rank(topo, cpus, 1.5, r, 4), SYMRAIL_OK);
    expect_rail(&r[2], 1, 1, 0);
    expect_rail(&r[3], 1, 1, 0);
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
}

/* ---- other topologies ------------------------------------------------------ */

/* One socket: its PCIe root hangs off the machine, which is local to all. */
static void test_single_socket(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("1s2n.xml");
    hwloc_bitmap_t core0 = pus(0, 0);
    sr_rail_t r[2] = { rail("mlx5_0", 1, HDR), rail("mlx5_1", 1, EDR) };

    hwloc_const_cpuset_t sets[] = { NULL, core0 };
    for (size_t s = 0; s < 2; s++) {
        assert_int_equal(sr_rails_rank(topo, sets[s], 2.0, r, 2), SYMRAIL_OK);
        expect_rail(&r[0], 0, 0, HDR);
        expect_rail(&r[1], 0, 0, EDR);
    }
    hwloc_bitmap_free(core0);
    hwloc_topology_destroy(topo);
}

/* Sub-NUMA clustering: two nodes per package, 10 / 12 / 32.  NICs on nodes
 * 0, 1 and 3. */
static void test_sub_numa(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s4numa3n.xml");
    hwloc_bitmap_t node0 = node_cpus(topo, 0), node2 = node_cpus(topo, 2);
    hwloc_bitmap_t pkg0 = package_cpus(topo, 0);
    sr_rail_t r[3];

#define THREE_RAILS()                                                            \
    do {                                                                         \
        r[0] = rail("mlx5_0", 1, HDR);                                           \
        r[1] = rail("mlx5_1", 1, HDR);                                           \
        r[2] = rail("mlx5_2", 1, HDR);                                           \
    } while (0)

    THREE_RAILS();
    assert_int_equal(sr_rails_rank(topo, node0, 0, r, 3), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 1, 12, 166667);   /* 200000 * 10 / 12 */
    expect_rail(&r[2], 3, 32, 62500);    /* 200000 * 10 / 32 */
    THREE_RAILS();
    assert_int_equal(sr_rails_rank(topo, node0, 2.0, r, 3), SYMRAIL_OK);
    expect_rail(&r[1], 1, 12, 166667);
    expect_rail(&r[2], 3, 32, 0);

    /* No rail on node 2: the one on the sibling node is the nearest and
     * sets the scale, the other package's are 32/12 away. */
    THREE_RAILS();
    assert_int_equal(sr_rails_rank(topo, node2, 0, r, 3), SYMRAIL_OK);
    expect_rail(&r[0], 0, 32, 75000);    /* 200000 * 12 / 32 */
    expect_rail(&r[1], 1, 32, 75000);
    expect_rail(&r[2], 3, 12, HDR);
    THREE_RAILS();
    assert_int_equal(sr_rails_rank(topo, node2, 2.0, r, 3), SYMRAIL_OK);
    expect_rail(&r[0], 0, 32, 0);
    expect_rail(&r[1], 1, 32, 0);
    expect_rail(&r[2], 3, 12, HDR);

    /* Bound to a whole package, both of its nodes are local. */
    THREE_RAILS();
    assert_int_equal(sr_rails_rank(topo, pkg0, 0, r, 3), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], 1, 0, HDR);
    expect_rail(&r[2], 3, 32, 62500);
#undef THREE_RAILS

    hwloc_bitmap_free(node0);
    hwloc_bitmap_free(node2);
    hwloc_bitmap_free(pkg0);
    hwloc_topology_destroy(topo);
}

/* hwloc hangs a device whose PCIe root has no locality under the machine;
 * with two NUMA nodes that means unknown, not local to everyone. */
static void test_root_attached(void **state)
{
    (void)state;
    hwloc_topology_t topo = load("2s2n_noloc.xml");
    hwloc_bitmap_t pkg0 = package_cpus(topo, 0), pkg1 = package_cpus(topo, 1);
    sr_rail_t r[2] = { rail("mlx5_0", 1, HDR), rail("mlx5_1", 1, EDR) };

    assert_int_equal(sr_rails_rank(topo, pkg0, 2.0, r, 2), SYMRAIL_OK);
    expect_rail(&r[0], 0, 0, HDR);
    expect_rail(&r[1], -1, -1, EDR);

    /* Were mlx5_1 taken as local, mlx5_0 would be 21/10 away and dropped. */
    assert_int_equal(sr_rails_rank(topo, pkg1, 2.0, r, 2), SYMRAIL_OK);
    expect_rail(&r[0], 0, 21, HDR);
    expect_rail(&r[1], -1, -1, EDR);

    /* Alone, it is as local as anything. */
    assert_int_equal(sr_rails_rank(topo, pkg1, 2.0, &r[1], 1), SYMRAIL_OK);
    expect_rail(&r[1], -1, 0, EDR);
    hwloc_bitmap_free(pkg0);
    hwloc_bitmap_free(pkg1);
    hwloc_topology_destroy(topo);
}

/* ---- invariants ------------------------------------------------------------ */

/* Over every single-CPU binding and a range of limits: some rail is always
 * used, the result does not depend on the order of the rails, and ranking
 * twice gives the same answer. */
static void test_invariants(void **state)
{
    (void)state;
    const char *topos[] = { "2s4n8g.xml", "1s2n.xml", "2s4numa3n.xml", "2s2n_noloc.xml" };
    const double limits[] = { -1, 0, 0.5, 1.0, 1.1, 1.5, 2.0, 2.1, 3.0, 4.0 };
    const char *devs[] = { "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "rxe0" };
    enum { N = 5 };

    for (size_t t = 0; t < sizeof(topos) / sizeof(topos[0]); t++) {
        hwloc_topology_t topo = load(topos[t]);
        int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        for (int pu = 0; pu < npu; pu++) {
            hwloc_bitmap_t cpus = pus((unsigned)pu, (unsigned)pu);
            for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
                for (int subset = 1; subset < (1 << N); subset++) {
                    sr_rail_t a[N], b[N], c[N];
                    int n = 0;
                    for (int i = 0; i < N; i++)
                        if (subset & (1 << i))
                            a[n++] = rail(devs[i], 1, (uint64_t)(i % 3) * EDR);
                    for (int i = 0; i < n; i++)
                        b[i] = a[n - 1 - i];
                    memcpy(c, a, sizeof(a));
                    assert_int_equal(sr_rails_rank(topo, cpus, limits[l], a, n), SYMRAIL_OK);
                    assert_int_equal(sr_rails_rank(topo, cpus, limits[l], b, n), SYMRAIL_OK);
                    assert_int_equal(sr_rails_rank(topo, cpus, limits[l], c, n), SYMRAIL_OK);
                    uint64_t total = 0, fastest = 100;
                    for (int i = 0; i < n; i++)
                        if (a[i].speed_mbps > fastest)
                            fastest = a[i].speed_mbps;
                    for (int i = 0; i < n; i++) {
                        total += a[i].weight;
                        assert_memory_equal(&a[i], &b[n - 1 - i], sizeof(a[i]));
                        assert_memory_equal(&a[i], &c[i], sizeof(a[i]));
                        /* Distance only ever takes weight away. */
                        assert_true(a[i].weight <= fastest);
                        if (a[i].speed_mbps)
                            assert_true(a[i].weight <= a[i].speed_mbps);
                    }
                    if (total == 0)
                        fail_msg("%s, cpu %d, limit %g, subset %#x: no rail used", topos[t], pu,
                                 limits[l], subset);
                }
            }
            hwloc_bitmap_free(cpus);
        }
        hwloc_topology_destroy(topo);
    }
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
        cmocka_unit_test(test_bound_package0),
        cmocka_unit_test(test_bound_package1),
        cmocka_unit_test(test_bound_cores),
        cmocka_unit_test(test_unbound),
        cmocka_unit_test(test_speeds),
        cmocka_unit_test(test_unknown_speed),
        cmocka_unit_test(test_unknown_device),
        cmocka_unit_test(test_no_topology),
        cmocka_unit_test(test_no_distance_matrix),
        cmocka_unit_test(test_single_socket),
        cmocka_unit_test(test_sub_numa),
        cmocka_unit_test(test_root_attached),
        cmocka_unit_test(test_invariants),
        cmocka_unit_test(test_rank_args),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_ranked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
