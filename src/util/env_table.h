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
SR_ENV(spin_count,    SYMRAIL_SPIN_COUNT,    UINT,   "2000",
       "Polls a waiting call makes before it sleeps on a futex")
SR_ENV(notify_slots,  SYMRAIL_NOTIFY_SLOTS,  UINT,   "64",
       "Notification messages one sender may have in flight to one receiver")
SR_ENV(slice_size,    SYMRAIL_SLICE_SIZE,    SIZE,   "64K",
       "Network transfers are cut into slices of this size and spread over rails")
SR_ENV(retry_count,   SYMRAIL_RETRY_COUNT,   UINT,   "3",
       "A slice that fails on one lane (QP, connection) is retried on another this many times")
SR_ENV(ib_devices,    SYMRAIL_IB_DEVICES,    STRING, "",
       "RDMA rails to use, e.g. mlx5_0:1,mlx5_1 (device[:port]); empty: every active port")
SR_ENV(ib_gid_index,  SYMRAIL_IB_GID_INDEX,  STRING, "auto",
       "GID table index for RoCE; auto prefers RoCE v2 with an IPv4-mapped address")
SR_ENV(qps_per_peer,  SYMRAIL_QPS_PER_PEER,  UINT,   "2",
       "RDMA queue pairs per peer and rail; slices are spread over them")
SR_ENV(ib_max_wr,     SYMRAIL_MAX_WR,        UINT,   "256",
       "Outstanding work requests per queue pair")
SR_ENV(ib_cq_size,    SYMRAIL_CQ_SIZE,       UINT,   "4096",
       "Completion queue entries per device; outstanding completions never exceed it")
SR_ENV(ib_recv_depth, SYMRAIL_IB_NOTIFY_DEPTH, UINT, "256",
       "Receive buffers pre-posted per peer for notifications and signals over RDMA")
SR_ENV(ib_rail_ratio, SYMRAIL_IB_RAIL_RATIO, UINT,   "2",
       "Rails farther than this ratio of the nearest rail's distance are not used (0: use all)")
SR_ENV(fault_qp,      SYMRAIL_FAULT_QP_ERROR, STRING, "",
       "Testing only: LANE:N moves the RDMA queue pair of lane LANE to the error state after N slices")
SR_ENV(stats,         SYMRAIL_STATS,         BOOL,   "0",
       "Print per-PE transfer counters at finalize")
SR_ENV(job_secret,    SYMRAIL_JOB_SECRET,    STRING, "",
       "Per-job secret set by the launcher; authenticates network connections")
