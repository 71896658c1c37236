/*
 * Every SYMRAIL_* environment variable, in one place.
 *   SR_ENV(field, NAME, type, default, help)
 * `symrail-info` prints this table; an unknown SYMRAIL_* variable is warned about.
 */
SR_ENV(heap_size,     SYMRAIL_HEAP_SIZE,     SIZE,   "1G",
       "Size of each PE's symmetric heap (K, M, G suffixes); pages are backed on first touch")
SR_ENV(log,           SYMRAIL_LOG,           STRING, "warn",
       "Log level: error, warn, info, debug or trace")
SR_ENV(transports,    SYMRAIL_TRANSPORTS,    STRING, "shm,verbs,tcp",
       "Comma list of transports that may be used, in order of preference")
SR_ENV(op_timeout,    SYMRAIL_OP_TIMEOUT,    TIME,   "60s",
       "A blocking operation that cannot progress for this long fails (ms, s, m suffixes)")
SR_ENV(heartbeat,     SYMRAIL_HEARTBEAT,     TIME,   "1s",
       "An idle connection to a peer carries a heartbeat this often, so a silent peer is noticed")
SR_ENV(spin_count,    SYMRAIL_SPIN_COUNT,    UINT,   "2000",
       "Polls a waiting call makes before it sleeps on a futex")
SR_ENV(notify_slots,  SYMRAIL_NOTIFY_SLOTS,  UINT,   "64",
       "Notification messages one sender may have in flight to one receiver (over RDMA also bounded by SYMRAIL_IB_NOTIFY_DEPTH - 2)")
SR_ENV(slice_size,    SYMRAIL_SLICE_SIZE,    SIZE,   "64K",
       "Network transfers are cut into slices of this size and spread over rails")
SR_ENV(retry_count,   SYMRAIL_RETRY_COUNT,   UINT,   "3",
       "A slice that fails on one lane (QP, connection) is retried on another this many times")
SR_ENV(ib_devices,    SYMRAIL_IB_DEVICES,    STRING, "",
       "RDMA rails to use, e.g. mlx5_0:1,mlx5_1 (device[:port]); empty: every active port")
SR_ENV(ib_gid_index,  SYMRAIL_IB_GID_INDEX,  STRING, "auto",
       "GID table index for RoCE; auto prefers RoCE v2 with an IPv4-mapped address")
SR_ENV(qps_per_peer,  SYMRAIL_IB_QPS_PER_PEER, UINT, "2",
       "RDMA queue pairs per peer and rail; slices are spread over them")
SR_ENV(ib_max_wr,     SYMRAIL_IB_MAX_WR,     UINT,   "256",
       "Outstanding work requests per queue pair")
SR_ENV(ib_cq_size,    SYMRAIL_IB_CQ_SIZE,    UINT,   "4096",
       "Completion queue entries per device; outstanding completions never exceed it")
SR_ENV(ib_recv_depth, SYMRAIL_IB_NOTIFY_DEPTH, UINT, "256",
       "Receive buffers pre-posted per peer for notifications and signals over RDMA; at most SYMRAIL_NOTIFY_SLOTS of them carry application messages, the rest stay free for the transport's own (lane repair)")
SR_ENV(ib_rail_ratio, SYMRAIL_IB_RAIL_RATIO, UINT,   "2",
       "Rails farther than this ratio of the nearest rail's distance are not used (0: use all)")
SR_ENV(fault_qp,      SYMRAIL_FAULT_QP_ERROR, STRING, "",
       "Testing only: LANE:N breaks lane LANE after N slices (RDMA: its queue pair goes to the error state; TCP: its connection is shut down)")
SR_ENV(ib_fault_qp,   SYMRAIL_IB_FAULT_QP_ERROR, STRING, "",
       "Testing only: LANE:N[:M] puts RDMA lane LANE's queue pair in the error state after N slices; the first M lane-repair messages then cannot be sent (retried later)")
SR_ENV(ib_fault_init, SYMRAIL_IB_FAULT_INIT, UINT,   "0",
       "Testing only: step N (1, 2, ...) of RDMA transport init fails as if out of memory")
SR_ENV(stats,         SYMRAIL_STATS,         BOOL,   "0",
       "Print per-PE transfer counters at finalize")
SR_ENV(job_secret,    SYMRAIL_JOB_SECRET,    STRING, "",
       "Per-job secret set by the launcher; authenticates network connections")
SR_ENV(tcp_lanes,     SYMRAIL_TCP_LANES,     UINT,   "2",
       "TCP connections (lanes) per peer; slices are spread over them (1 .. 32)")
SR_ENV(tcp_if,        SYMRAIL_TCP_IF,        STRING, "",
       "TCP interfaces: comma list of names or IPv4 CIDRs (eth0, 10.10.0.0/16); empty: every non-loopback IPv4 interface, plus loopback when all PEs share one host")
SR_ENV(tcp_max_inflight, SYMRAIL_TCP_MAX_INFLIGHT, SIZE, "8M",
       "Bytes of put/get data in flight per TCP connection before slices wait")
SR_ENV(tcp_max_ops,   SYMRAIL_TCP_MAX_OPS,   UINT,   "1024",
       "Requests in flight per TCP connection before slices wait")
SR_ENV(tcp_addr_file, SYMRAIL_TCP_ADDR_FILE, STRING, "",
       "Testing only: every PE writes its TCP listening addresses (ip:port lines) to FILE.<pe>")
