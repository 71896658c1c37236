/*
 * Where symrun's ranks run: each on its own core, in hwloc's order, within
 * the CPUs the launcher itself may use (taskset, a cgroup), as long as
 * there are no more ranks than such CPUs.  The plan is computed once, before
 * the first fork, so that a child only has to apply its own set.
 */
#ifndef SYMRUN_BIND_H
#define SYMRUN_BIND_H

#include "symrun_args.h"

#include <sched.h>
#include <stdbool.h>

#include <hwloc.h>

/*
 * Gives each of nranks ranks a set of CPUs of allowed: a core each (its
 * PUs that are in allowed) when there are at least nranks cores with such
 * PUs, else one PU each when there are at least nranks PUs.  Returns
 * nranks with sets[0..nranks-1] allocated (the caller frees them with
 * hwloc_bitmap_free), 0 when the ranks would share CPUs (nothing
 * allocated), or -1 when out of memory.
 */
int sr_symrun_bind_plan(hwloc_topology_t topo, hwloc_const_bitmap_t allowed,
                        int nranks, hwloc_bitmap_t *sets);

/*
 * The plan for this machine and this process's own CPU affinity, as
 * sched_setaffinity masks.  mode NONE, or ranks that would share CPUs:
 * *sets_p is NULL (with explicit, a warning says why there is no binding).
 * Returns 0, or -1 after printing why.
 */
int sr_symrun_bind_make(sr_symrun_bind_t mode, bool explicit, int nranks,
                        cpu_set_t **sets_p);

#endif
