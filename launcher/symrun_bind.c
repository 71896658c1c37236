/* CPU binding of symrun's ranks (symrun_bind.h). */
#define _GNU_SOURCE

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun_bind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc/glibc-sched.h>

/* Objects of one depth whose allowed PUs are not empty. */
static int sr_symrun_bind_count(hwloc_topology_t topo, hwloc_obj_type_t type,
                                hwloc_const_bitmap_t allowed)
{
    int n = 0;

    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); o != NULL;
         o = hwloc_get_next_obj_by_type(topo, type, o))
        n += hwloc_bitmap_intersects(o->cpuset, allowed);
    return n;
}

int sr_symrun_bind_plan(hwloc_topology_t topo, hwloc_const_bitmap_t allowed,
                        int nranks, hwloc_bitmap_t *sets)
{
    hwloc_obj_type_t type = HWLOC_OBJ_CORE;
    hwloc_obj_t o = NULL;
    int r = 0;

    if (nranks <= 0)
        return 0;
    /* A machine whose topology hwloc cannot split into cores (some virtual
     * machines) still has PUs. */
    if (sr_symrun_bind_count(topo, HWLOC_OBJ_CORE, allowed) < nranks) {
        type = HWLOC_OBJ_PU;
        if (sr_symrun_bind_count(topo, HWLOC_OBJ_PU, allowed) < nranks)
            return 0;
    }
    for (; r < nranks; r++) {
        do
            o = hwloc_get_next_obj_by_type(topo, type, o);
        while (o != NULL && !hwloc_bitmap_intersects(o->cpuset, allowed));
        if (o == NULL)
            goto err_alloc; /* counted above: cannot happen */
        sets[r] = hwloc_bitmap_alloc();
        if (sets[r] == NULL || hwloc_bitmap_and(sets[r], o->cpuset, allowed) != 0) {
            r++;
            goto err_alloc;
        }
    }
    return nranks;

err_alloc:
    while (r-- > 0)
        hwloc_bitmap_free(sets[r]);
    return -1;
}

int sr_symrun_bind_make(sr_symrun_bind_t mode, bool explicit, int nranks,
                        cpu_set_t **sets_p)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t allowed = NULL, *sets = NULL;
    cpu_set_t self, *out = NULL;
    int ret = -1, n = 0;

    *sets_p = NULL;
    if (mode == SR_SYMRUN_BIND_NONE)
        return 0;
    /* A mask too small for this kernel's CPUs (over 1024): leave the ranks
     * where they are rather than bind them to part of the machine. */
    if (sched_getaffinity(0, sizeof(self), &self) != 0) {
        if (explicit)
            fprintf(stderr, "symrun: warning: --bind-to core: cannot read this "
                    "process's CPUs (%s); not binding\n", strerror(errno));
        return 0;
    }
    /* Fewer CPUs than ranks: no topology is needed to know the answer. */
    if (CPU_COUNT(&self) < nranks) {
        if (explicit)
            fprintf(stderr, "symrun: warning: --bind-to core: %d ranks but %d "
                    "CPUs to run on; not binding\n", nranks, CPU_COUNT(&self));
        return 0;
    }
    if (hwloc_topology_init(&topo) != 0) {
        fprintf(stderr, "symrun: cannot read the CPU topology: %s\n", strerror(errno));
        return -1;
    }
    /* Only CPUs matter here: no I/O objects, no caches to read. */
    hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(topo) != 0) {
        fprintf(stderr, "symrun: cannot read the CPU topology: %s\n", strerror(errno));
        goto err_topo;
    }
    allowed = hwloc_bitmap_alloc();
    sets = calloc((size_t)nranks, sizeof(*sets));
    out = calloc((size_t)nranks, sizeof(*out));
    if (allowed == NULL || sets == NULL || out == NULL ||
        hwloc_cpuset_from_glibc_sched_affinity(topo, allowed, &self, sizeof(self)) != 0 ||
        (n = sr_symrun_bind_plan(topo, allowed, nranks, sets)) < 0) {
        fprintf(stderr, "symrun: out of memory\n");
        n = 0;
        goto err_plan;
    }
    if (n == 0) {
        if (explicit)
            fprintf(stderr, "symrun: warning: --bind-to core: %d ranks would "
                    "share CPUs; not binding\n", nranks);
        ret = 0;
        goto err_plan;
    }
    for (int r = 0; r < n; r++)
        hwloc_cpuset_to_glibc_sched_affinity(topo, sets[r], &out[r], sizeof(out[r]));
    *sets_p = out;
    out = NULL;
    ret = 0;
err_plan:
    for (int r = 0; r < n; r++)
        hwloc_bitmap_free(sets[r]);
    free(sets);
    free(out);
    hwloc_bitmap_free(allowed);
err_topo:
    hwloc_topology_destroy(topo);
    return ret;
}
