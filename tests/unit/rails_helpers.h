/*
 * What the rail selection tests share: the synthetic topologies in
 * tests/unit/topo/, rails with garbage in their outputs, and the check of
 * what ranking wrote.
 */
#ifndef SR_TEST_RAILS_HELPERS_H
#define SR_TEST_RAILS_HELPERS_H

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

static inline void topo_path(const char *name, char *path, size_t len)
{
    const char *top = getenv("top_srcdir");
    int w;

    if (top && *top)
        w = snprintf(path, len, "%s/tests/unit/topo/%s", top, name);
    else
        w = snprintf(path, len, "%s/%s", SR_TEST_TOPO_DIR, name);
    assert_true(w > 0 && (size_t)w < len);
}

static inline hwloc_topology_t load(const char *name)
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

static inline char *read_topo(const char *name)
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
static inline hwloc_topology_t load_without_distances(const char *name)
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

static inline hwloc_bitmap_t package_cpus(hwloc_topology_t topo, unsigned idx)
{
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, idx);
    assert_non_null(pkg);
    return hwloc_bitmap_dup(pkg->cpuset);
}

static inline hwloc_bitmap_t node_cpus(hwloc_topology_t topo, unsigned os_index)
{
    hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(topo, os_index);
    assert_non_null(node);
    return hwloc_bitmap_dup(node->cpuset);
}

static inline hwloc_bitmap_t pus(unsigned first, unsigned last)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    assert_non_null(set);
    assert_int_equal(hwloc_bitmap_set_range(set, first, (int)last), 0);
    return set;
}

static inline sr_rail_t rail(const char *dev, int port, uint64_t speed)
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

static inline void expect_rail(const sr_rail_t *r, int numa, int distance, uint32_t weight)
{
    if (r->numa != numa || r->distance != distance || r->weight != weight)
        fail_msg("%s:%d: numa %d distance %d weight %u, expected numa %d distance %d weight %u",
                 r->dev, r->port, r->numa, r->distance, r->weight, numa, distance, weight);
}

/* The four HDR rails of 2s4n8g.xml. */
static inline void four_rails(sr_rail_t *r)
{
    r[0] = rail("mlx5_0", 1, HDR);
    r[1] = rail("mlx5_1", 1, HDR);
    r[2] = rail("mlx5_2", 1, HDR);
    r[3] = rail("mlx5_3", 1, HDR);
}

#endif
