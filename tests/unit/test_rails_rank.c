/*
 * Unit tests of rail ranking by locality.  The topologies are synthetic
 * hwloc XML files (tests/unit/topo/) so the tests give the same answers on
 * any machine, NICs or not.
 */
#include "config.h"

#include "rails_helpers.h"
#include "util/sanitizer.h"

#include <malloc.h>

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

/* The PCI devices of topo, each as domain:bus:dev.fn and class, in order. */
static size_t pci_list(hwloc_topology_t topo, char *buf, size_t len)
{
    size_t n = 0, at = 0;
    buf[0] = '\0';
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o)) != NULL; n++) {
        int w = snprintf(buf + at, len - at, "%04x:%02x:%02x.%x/%04x ", o->attr->pcidev.domain,
                         o->attr->pcidev.bus, o->attr->pcidev.dev, o->attr->pcidev.func,
                         o->attr->pcidev.class_id);
        assert_true(w > 0 && (size_t)w < len - at);
        at += (size_t)w;
    }
    return n;
}

/* This machine's topology is loaded at every init over verbs: loading and
 * destroying it again must not keep memory (hwloc's pci component kept
 * about 430 KiB a load).  Under a sanitizer mallinfo2 may count nothing.
 * Without that component it still has every PCI device and OS device
 * (NICs) that a load with it finds: the rails are located by them. */
static void test_machine_reload(void **state)
{
    (void)state;
    static char want[16384], got[16384];
    hwloc_topology_t ref;
    assert_int_equal(hwloc_topology_init(&ref), 0);
    assert_int_equal(hwloc_topology_set_io_types_filter(ref, HWLOC_TYPE_FILTER_KEEP_IMPORTANT), 0);
    SR_LSAN_OFF();  /* what the pci component keeps, once */
    assert_int_equal(hwloc_topology_load(ref), 0);
    size_t npci = pci_list(ref, want, sizeof(want));
    int nos = hwloc_get_nbobjs_by_type(ref, HWLOC_OBJ_OS_DEVICE);
    hwloc_topology_destroy(ref);
    SR_LSAN_ON();
    if (npci == 0)
        print_message("note: hwloc finds no PCI device here; only the memory is checked\n");
    size_t base = 0;
    for (int i = 0; i < 6; i++) {
        hwloc_topology_t topo;
        assert_int_equal(sr_rails_topo_load(NULL, &topo), SYMRAIL_OK);
        assert_true(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU) > 0);
        if (i == 0) {
            assert_int_equal(pci_list(topo, got, sizeof(got)), npci);
            assert_string_equal(got, want);
            assert_int_equal(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_OS_DEVICE), nos);
        }
        hwloc_topology_destroy(topo);
        size_t inuse = mallinfo2().uordblks;
        if (i == 1)
            base = inuse;
        else if (i > 1 && inuse > base + 64 * 1024)
            fail_msg("load %d: %zu KiB in use, %zu KiB after the second", i, inuse >> 10,
                     base >> 10);
    }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_package0),
        cmocka_unit_test(test_bound_package1),
        cmocka_unit_test(test_bound_cores),
        cmocka_unit_test(test_unbound),
        cmocka_unit_test(test_speeds),
        cmocka_unit_test(test_unknown_speed),
        cmocka_unit_test(test_unknown_device),
        cmocka_unit_test(test_no_topology),
        cmocka_unit_test(test_machine_reload),
        cmocka_unit_test(test_no_distance_matrix),
        cmocka_unit_test(test_single_socket),
        cmocka_unit_test(test_sub_numa),
        cmocka_unit_test(test_root_attached),
        cmocka_unit_test(test_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
