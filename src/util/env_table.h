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
SR_ENV(stats,         SYMRAIL_STATS,         BOOL,   "0",
       "Print per-PE transfer counters at finalize")
SR_ENV(job_secret,    SYMRAIL_JOB_SECRET,    STRING, "",
       "Per-job secret set by the launcher; authenticates network connections")
