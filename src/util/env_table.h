/*
 * Every SYMRAIL_* environment variable, in one place.
 *   SR_ENV(field, NAME, type, default, range, help)
 * range is checked at load, for the default too:
 *   SIZE, UINT, TIME, BOOL: "MIN..MAX" in the type's units ("4K..1G", "1..32",
 *     "10ms..1h"); either end may be left out ("1.." has no maximum).
 *   STRING: "a|b|c" one of these (case-insensitive), where an entry "N..M"
 *     stands for the integers N to M; a trailing ",..." means a comma list of
 *     such entries; "*" means any string.
 * `symrail-info` prints this table; an unknown SYMRAIL_* variable is warned about.
 */
SR_ENV(heap_size,     SYMRAIL_HEAP_SIZE,     SIZE,   "1G", "8K..64T",
       "Size of each PE's symmetric heap (K, M, G suffixes); pages are backed on first touch")
SR_ENV(symmetric_data, SYMRAIL_SYMMETRIC_DATA, BOOL, "1", "0..1",
       "Global and static variables of the executable are symmetric: init moves its data segment onto shared memory (0: only the heap is)")
SR_ENV(python_lib,    SYMRAIL_PYTHON_LIB,    STRING, "", "*",
       "The Python binding loads this libsymrail (a path, or its directory); empty: the one recorded at install, else the build tree's")
SR_ENV(log,           SYMRAIL_LOG,           STRING, "warn", "error|warn|info|debug|trace",
       "Log level: error, warn, info, debug or trace")
SR_ENV(transports,    SYMRAIL_TRANSPORTS,    STRING, "shm,verbs,tcp", "shm|verbs|tcp,...",
       "Comma list of transports that may be used, in order of preference")
SR_ENV(op_timeout,    SYMRAIL_OP_TIMEOUT,    TIME,   "60s", "0..720h",
       "A blocking operation that cannot progress for this long fails (ms, s, m suffixes)")
SR_ENV(on_peer_failure, SYMRAIL_ON_PEER_FAILURE, STRING, "abort", "abort|report",
       "What a failed peer does: abort ends the job (the launcher does, naming it); report keeps it running, calls to the failed peer return SYMRAIL_ERR_PEER_GONE and collectives that include it fail (symrail_peer_state). symrun reads it too")
SR_ENV(coll_check,    SYMRAIL_COLL_CHECK,    BOOL,   "0", "0..1",
       "Team collectives compare the members' calls (kind, size, root) before data goes to a member over the network too, a get each (one round trip); over loads and stores they always do, and so does a stalled collective. On with SHMEM_DEBUG / SYMRAIL_LOG=debug")
SR_ENV(heartbeat,     SYMRAIL_HEARTBEAT,     TIME,   "1s", "10ms..1h",
       "An idle connection to a peer carries a heartbeat this often, so a silent peer is noticed")
SR_ENV(spin_count,    SYMRAIL_SPIN_COUNT,    UINT,   "2000", "0..1000000000",
       "Polls a waiting call makes before it sleeps on a futex (at least, unless they take over 20 ms; see SYMRAIL_SPIN_US)")
SR_ENV(spin_us,       SYMRAIL_SPIN_US,       UINT,   "2000", "0..10000000",
       "Microseconds a waiting call keeps polling over shared memory, after its SYMRAIL_SPIN_COUNT polls, before it sleeps (not with more PEs on the node than CPUs)")
SR_ENV(notify_slots,  SYMRAIL_NOTIFY_SLOTS,  UINT,   "64", "1..1048576",
       "Notification messages one sender may have in flight to one receiver (over RDMA also bounded by SYMRAIL_IB_NOTIFY_DEPTH - 2)")
SR_ENV(shm_seg_slots, SYMRAIL_SHM_SEG_SLOTS, UINT,  "65536", "16..16777216",
       "Segment ids a PE may register for shared-memory peers: slots of its generation table (8 bytes each, backed on first touch)")
SR_ENV(connect_max,   SYMRAIL_CONNECT_MAX,   UINT,   "64", "0..4096",
       "Processes of other jobs this process may connect to or accept over its life (symrail_endpoint_connect/accept; 0: none)")
SR_ENV(slice_size,    SYMRAIL_SLICE_SIZE,    SIZE,   "64K", "4K..1G",
       "Network transfers are cut into slices of this size and spread over rails")
SR_ENV(batch_window,  SYMRAIL_BATCH_WINDOW,  SIZE,   "64M", "64K..64G",
       "Bytes of one batch's tasks in flight at once; more are posted as they complete")
SR_ENV(spray,         SYMRAIL_SPRAY,         STRING, "adaptive", "adaptive|static",
       "How slices are spread over a peer's lanes (rails, queue pairs, TCP connections): adaptive sends each to the lane that should complete it first (bytes in flight / measured bandwidth, with a locality penalty) and pauses failing lanes; static splits them by the transport's weights, as before")
SR_ENV(spray_probe,   SYMRAIL_SPRAY_PROBE,   UINT,   "32", "0..1000000",
       "Adaptive spraying: one slice in this many goes to the lane with the oldest bandwidth estimate, to keep it fresh (0: only idle lanes with an estimate older than 4 ms are probed)")
SR_ENV(rail_pause_errors, SYMRAIL_RAIL_PAUSE_ERRORS, UINT, "3", "0..1000",
       "Adaptive spraying: a lane that fails this many times (failures within 1 ms count once) is paused while another lane is up (0: never)")
SR_ENV(rail_pause,    SYMRAIL_RAIL_PAUSE,    TIME,   "100ms", "1ms..1h",
       "A paused lane is probed again after this long; each failed probe doubles the pause")
SR_ENV(rail_pause_max, SYMRAIL_RAIL_PAUSE_MAX, TIME, "10s", "1ms..1h",
       "The longest pause of a failing lane; a lane with no failure for this long starts over")
SR_ENV(retry_count,   SYMRAIL_RETRY_COUNT,   UINT,   "3", "0..1000",
       "A slice that fails on one lane (QP, connection) is retried on another this many times")
SR_ENV(ib_devices,    SYMRAIL_IB_DEVICES,    STRING, "", "*",
       "RDMA rails to use, e.g. mlx5_0:1,mlx5_1 (device[:port]); empty: every active port")
SR_ENV(ib_gid_index,  SYMRAIL_IB_GID_INDEX,  STRING, "auto", "auto|0..255",
       "GID table index for RoCE; auto prefers RoCE v2 with an IPv4-mapped address")
SR_ENV(qps_per_peer,  SYMRAIL_IB_QPS_PER_PEER, UINT, "2", "1..8",
       "RDMA queue pairs per peer and rail; slices are spread over them")
SR_ENV(ib_max_wr,     SYMRAIL_IB_MAX_WR,     UINT,   "0", "0..32768",
       "Outstanding work requests per data queue pair (at least 4); 0: sized by the job, 4096 over the data QPs to all peers as a power of two minus one, 15..255 each (a connected peer: over those and the ones connected before it)")
SR_ENV(ib_cq_size,    SYMRAIL_IB_CQ_SIZE,    UINT,   "4096", "4..4194304",
       "Completion queue entries per device; outstanding completions never exceed it")
SR_ENV(ib_recv_depth, SYMRAIL_IB_NOTIFY_DEPTH, UINT, "256", "4..65536",
       "The most receive buffers of the shared notification queue one sender may hold over RDMA (its window starts at 4 and grows while the queue has room); at most SYMRAIL_NOTIFY_SLOTS of them carry application messages, two stay free for the transport's own (lane repair)")
SR_ENV(ib_notify_pool, SYMRAIL_IB_NOTIFY_POOL, UINT, "512", "0..1048576",
       "Receive buffers of the shared notification queue over RDMA beyond the 4 every peer has (the windows of busy senders grow out of them); 264 bytes each, registered")
/* 32K: a copy into a bounce buffer costs about as much as the wire time of
 * the same bytes at 100 Gb/s from there on, and more than a cache lookup
 * (a lock and a binary search); below it the copy is cheaper than even a
 * hit's bookkeeping, and far cheaper than a first registration (a system
 * call that pins every page).  With the default 64K slices every slice of
 * a transfer of 32K or more goes in place. */
SR_ENV(ib_zcopy_thresh, SYMRAIL_IB_ZCOPY_THRESH, SIZE, "32K", "0..1G",
       "Slices of private (unregistered) buffers of at least this size are registered on the fly (registration cache) and sent or received in place over RDMA; smaller ones go through bounce buffers (0: always bounce buffers)")
SR_ENV(ib_rcache_max, SYMRAIL_IB_RCACHE_MAX, SIZE, "1G", "0..1T",
       "Bytes of private memory the RDMA registration cache keeps registered (pinned) at most; the least recently used idle ranges go first")
SR_ENV(ib_rail_ratio, SYMRAIL_IB_RAIL_RATIO, UINT,   "2", "0..1000",
       "Rails farther than this ratio of the nearest rail's distance are not used (0: use all)")
SR_ENV(ib_fault_qp,   SYMRAIL_IB_FAULT_QP_ERROR, STRING, "", "*",
       "Testing only: LANE:N[:M] puts RDMA lane LANE's queue pair in the error state after N slices; the first M lane-repair messages then cannot be sent (retried later)")
SR_ENV(ib_fault_init, SYMRAIL_IB_FAULT_INIT, UINT,   "0", "0..16",
       "Testing only: step N (1, 2, ...) of RDMA transport init fails as if out of memory")
SR_ENV(tcp_fault_conn, SYMRAIL_TCP_FAULT_CONN, STRING, "", "*",
       "Testing only: LANE:N shuts down the connection of TCP lane LANE after N slices")
SR_ENV(test_node_size, SYMRAIL_TEST_NODE_SIZE, UINT, "0", "0..1048576",
       "Testing only: PEs count as on one node only if their ranks divided by N are equal, so that shared memory does not carry the others (0: as the launcher says)")
SR_ENV(test_names_local, SYMRAIL_TEST_NAMES_LOCAL, BOOL, "0", "0..1",
       "Testing only: segment names are asked of the peers by notification, as where the launcher has no PMIx publish/lookup")
SR_ENV(test_hold_lane, SYMRAIL_TEST_HOLD_LANE, STRING, "", "*",
       "Testing only: LANE:MS holds each completion of a slice on lane LANE back for MS milliseconds, so that operations stay outstanding (quiet isolation tests)")
SR_ENV(teams_max,     SYMRAIL_TEAMS_MAX,     UINT,   "32", "3..4096",
       "Teams that may exist at once (world and shared included); each has synchronisation words and a scratch area in a reserved part of the symmetric heap")
SR_ENV(team_scratch,  SYMRAIL_TEAM_SCRATCH,  SIZE,   "16K", "4K..1G",
       "Scratch bytes per team in the reserved heap; larger collective payloads go through it in chunks")
SR_ENV(stats,         SYMRAIL_STATS,         BOOL,   "0", "0..1",
       "Print per-PE transfer counters at finalize")
SR_ENV(job_secret,    SYMRAIL_JOB_SECRET,    STRING, "", "*",
       "Per-job secret set by the launcher; authenticates network connections")
SR_ENV(tcp_lanes,     SYMRAIL_TCP_LANES,     UINT,   "2", "1..32",
       "TCP connections (lanes) per peer; slices are spread over them (1 .. 32)")
SR_ENV(tcp_if,        SYMRAIL_TCP_IF,        STRING, "", "*",
       "TCP interfaces: comma list of names or IPv4 CIDRs (eth0, 10.10.0.0/16); empty: every non-loopback IPv4 interface, plus loopback when all PEs share one host")
SR_ENV(tcp_max_inflight, SYMRAIL_TCP_MAX_INFLIGHT, SIZE, "8M", "4K..16G",
       "Bytes of put/get data in flight per TCP connection before slices wait")
SR_ENV(tcp_sockbuf,   SYMRAIL_TCP_SOCKBUF,   SIZE,   "0", "0..1G",
       "Send and receive buffer of each TCP data connection (SO_SNDBUF, SO_RCVBUF); 0: the kernel sizes them itself (autotuning)")
SR_ENV(tcp_max_ops,   SYMRAIL_TCP_MAX_OPS,   UINT,   "1024", "1..1048576",
       "Requests in flight per TCP connection before slices wait")
SR_ENV(tcp_addr_file, SYMRAIL_TCP_ADDR_FILE, STRING, "", "*",
       "Testing only: every PE writes its TCP listening addresses (ip:port lines) to FILE.<pe>")
SR_ENV(print_version, SYMRAIL_PRINT_VERSION, BOOL,   "0", "0..1",
       "PE 0 prints the library's version at init (OpenSHMEM's SHMEM_VERSION sets it)")
SR_ENV(print_info,    SYMRAIL_PRINT_INFO,    BOOL,   "0", "0..1",
       "PE 0 prints the version and every variable of this table at init (OpenSHMEM's SHMEM_INFO sets it)")
