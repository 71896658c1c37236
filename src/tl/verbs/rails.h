/*
 * Choosing RDMA rails by locality.
 *
 * A rail is one (RDMA device, port) pair.  Traffic should prefer the rails
 * close to the CPUs a process runs on: a NIC behind the other socket costs an
 * inter-socket hop on every DMA, so it gets a smaller share, or none when it
 * is much farther than the nearest rail.  The policy is a pure function of
 * the topology, the binding and the rails given, so every process of a job
 * on identical nodes reaches the same answer.
 *
 * Knows nothing of verbs itself: the caller fills dev, port and speed_mbps
 * from ibv_query_port and turns the weights into lanes.
 */
#ifndef SR_TL_VERBS_RAILS_H
#define SR_TL_VERBS_RAILS_H

#include <stddef.h>
#include <stdint.h>
#include <hwloc.h>
#include <symrail.h>

typedef struct {
    char     dev[64];      /* device name, e.g. "mlx5_0" */
    int      port;         /* 1-based */
    uint64_t speed_mbps;   /* link speed (from the port's active_speed x width); 0 if unknown */
    /* outputs of sr_rails_rank: */
    int      numa;         /* NUMA node of the device, -1 if unknown */
    int      distance;     /* 0 = local to the process's CPUs, larger = farther; -1 unknown */
    uint32_t weight;       /* 0 = not used; otherwise relative share of traffic */
} sr_rail_t;

/*
 * Parses a SYMRAIL_IB_DEVICES-style filter "mlx5_0:1,mlx5_1" (no port = all
 * ports of that device); returns 1 if (dev,port) is selected; an empty or
 * NULL filter selects all.
 *
 * Spaces around entries are ignored and empty entries are skipped, so a
 * filter of only commas and spaces is empty.  An entry that cannot name a
 * rail (":", ":1", "mlx5_0:", "mlx5_0:x", "mlx5_0:0", "mlx5_0:-1") selects
 * nothing rather than falling back to every port or device: a mistyped
 * filter must not silently widen the selection.  A filter made only of such
 * entries therefore selects nothing; sr_rails_filter_check reports them.
 */
int sr_rails_filter_match(const char *filter, const char *dev, int port);

/* SYMRAIL_ERR_INVALID when some entry of the filter can never select a rail
 * (see above), so a typo can be reported once instead of ignored. */
symrail_status_t sr_rails_filter_check(const char *filter);

/*
 * Loads the topology of this machine (or from an XML file/buffer for tests).
 * NULL: this machine (hwloc still honours HWLOC_XMLFILE).  A string starting
 * with '<' is taken as an XML document, anything else as the path of one.
 * I/O objects are kept so devices can be found.  Release the topology with
 * hwloc_topology_destroy().  *topo_p is only written on success.
 */
symrail_status_t sr_rails_topo_load(const char *xml_path_or_null, hwloc_topology_t *topo_p);

/*
 * Ranks rails for a process bound to `cpuset` (NULL: the current process's
 * binding, or all CPUs if unbound or the topology is not this machine's):
 * fills numa, distance and weight of each rail; the array is not reordered.
 *
 * distance is 0 when the device's locality (cpuset of its first non-I/O
 * ancestor) intersects the process cpuset.  Otherwise it is the NUMA latency
 * from the process's nearest node to the device's (e.g. 21 when local is 10)
 * when the topology has a NUMA latency matrix, else 1.
 *
 * weight is speed_mbps for the nearest rails; a farther rail's weight is
 * scaled down by its distance ratio to the nearest (10 vs 21: about half;
 * without a matrix, local and remote count as 10 and 20) and is 0 when that
 * ratio exceeds max_ratio (<= 0: no limit; the nearest rails are never
 * dropped, whatever the limit).
 * An unknown speed counts as the slowest known speed among the rails, or as
 * 100 when no speed is known, so distance still shows in the weights.
 *
 * A device absent from the topology (a software device such as rxe0), or
 * one hwloc could not place on a machine with several NUMA nodes, has numa
 * -1, distance -1 and weight by speed, unscaled and never dropped; it does
 * not count as nearest.  A device on an object spanning several NUMA nodes
 * reports the first of them.
 * If no rail has locality information (or topo is NULL) every rail gets
 * distance 0 and weight by speed.  When n > 0 at least one weight is nonzero.
 */
symrail_status_t sr_rails_rank(hwloc_topology_t topo, hwloc_const_cpuset_t cpuset,
                               double max_ratio, sr_rail_t *rails, int n);

/*
 * One line per rail: "rxe0:1  numa 0  distance 0  weight 100  speed 25000 Mb/s"
 * into buf; unknown numa, distance or speed print as "?".  Only whole lines
 * are written: output stops at the first line that does not fit.  buf is
 * always terminated when len > 0.
 */
void sr_rails_format(const sr_rail_t *rails, int n, char *buf, size_t len);

/*
 * Pairing the rails of two PEs by reachability.  A rail's link as its peers
 * see it: link layer, GID and, for RoCE, the prefix length of the address on
 * its network interface (0: unknown).  Two rails reach each other when
 * their link layers match and their GIDs share a subnet: InfiniBand and
 * RoCE over IPv6 by the 64-bit subnet prefix (an all-zero GID, an
 * InfiniBand port without one, matches any); RoCE over IPv4 by the shorter
 * of the two prefixes (unknown on either side: any IPv4 address).
 */
typedef struct {
    int      is_eth;
    uint8_t  gid[16];
    uint32_t prefix_bits;
} sr_rail_link_t;

int sr_rails_reach(const sr_rail_link_t *a, const sr_rail_link_t *b);

/*
 * Pairs rails a[0..na) of the lower-numbered PE with b[0..nb) of the
 * higher-numbered one, one to one: pair_p[i] is the rail of b that a[i]
 * uses, or -1 when none is left that it reaches.  a[i] takes b[i] when it
 * reaches it and b[i] is free, else the first free rail of b it reaches.
 * Both PEs compute the same pairing from the same two lists.
 */
void sr_rails_pair(const sr_rail_link_t *a, int na, const sr_rail_link_t *b, int nb,
                   int *pair_p);

#endif
