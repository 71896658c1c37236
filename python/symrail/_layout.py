"""The C interface's constants and struct layouts (include/symrail.h), in one place.

tests/python/t_py_layout.c prints the C compiler's sizes, offsets and values
of everything here, and tests/python/test_layout.py compares them with these,
so a change to symrail.h that this file does not follow fails `make check`.
"""
import ctypes

# symrail_status_t
STATUS = {
    "SYMRAIL_INPROGRESS": 1,
    "SYMRAIL_OK": 0,
    "SYMRAIL_ERR_INVALID": -1,
    "SYMRAIL_ERR_NOMEM": -2,
    "SYMRAIL_ERR_UNSUPPORTED": -3,
    "SYMRAIL_ERR_TIMEOUT": -4,
    "SYMRAIL_ERR_AGAIN": -5,
    "SYMRAIL_ERR_BOOT": -6,
    "SYMRAIL_ERR_TRANSPORT": -7,
    "SYMRAIL_ERR_PEER_GONE": -8,
    "SYMRAIL_ERR_NO_TRANSPORT": -9,
    "SYMRAIL_ERR_SYSTEM": -10,
    "SYMRAIL_ERR_TRUNCATED": -11,
    "SYMRAIL_ERR_STATE": -12,
    "SYMRAIL_ERR_PEER_UNRESPONSIVE": -13,
    "SYMRAIL_ERR_MISMATCH": -14,
    "SYMRAIL_ERR_STALE": -15,
    "SYMRAIL_ERR_CANCELED": -16,
    "SYMRAIL_ERR_RESULT_LOST": -17,
}
STATUS_NAME = {v: k for k, v in STATUS.items()}

OK = 0
ERR_AGAIN = STATUS["SYMRAIL_ERR_AGAIN"]
ERR_TIMEOUT = STATUS["SYMRAIL_ERR_TIMEOUT"]

NOTIFY_MAX_PAYLOAD = 4096
NOTIFY_TAG_RESERVED = 0xFFFF0000
SEG_DESC_MAX = 512
ENDPOINT_MAX = 512
ANY_PE = -1
STATS_MAX_RAILS = 8
BATCH_ALL = ctypes.c_size_t(-1).value

# symrail_xfer_op_t
WRITE = 0
READ = 1
# symrail_task_state_t
TASK_PENDING = 0
TASK_DONE = 1
TASK_FAILED = 2
TASK_STATE_NAME = {TASK_PENDING: "PENDING", TASK_DONE: "DONE", TASK_FAILED: "FAILED"}

# symrail_peer_state_t
PEER_OK = 0
PEER_SUSPECT = 1
PEER_FAILED = 2
PEER_STATE_NAME = {PEER_OK: "OK", PEER_SUSPECT: "SUSPECT", PEER_FAILED: "FAILED"}

# Thread levels
THREAD_SINGLE = 0
THREAD_FUNNELED = 1
THREAD_SERIALIZED = 2
THREAD_MULTIPLE = 3

status_t = ctypes.c_int  # an enum with negative values: int on every ABI we build for


class notify_t(ctypes.Structure):
    _fields_ = [
        ("src_pe", ctypes.c_int),
        ("tag", ctypes.c_uint32),
        ("status", status_t),
        ("len", ctypes.c_size_t),
        ("payload", ctypes.c_ubyte * NOTIFY_MAX_PAYLOAD),
    ]


class stats_rail_t(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char * 32),
        ("bytes", ctypes.c_uint64),
        ("slices", ctypes.c_uint64),
    ]


STATS_COUNTERS = (
    "puts", "gets", "put_bytes", "get_bytes",
    "atomics", "signals", "notify_sent", "notify_recv",
    "quiets", "barriers", "sleeps",
    "slices_posted", "completions", "retries", "repairs",
    "stalls", "qp_full", "cq_full", "peers_suspect", "peers_failed",
)

# Rail health, after the rails in the struct.
STATS_HEALTH = ("lanes_paused", "lane_probes", "lanes_resumed")

# After the rail health counters, at the end of the struct.
STATS_RCACHE = (
    "rcache_hits", "rcache_misses", "rcache_regs",
    "rcache_invalidations", "rcache_evictions", "rcache_bytes",
)


class stats_t(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in STATS_COUNTERS] + [
        ("nrails", ctypes.c_uint32),
        ("rails", stats_rail_t * STATS_MAX_RAILS),
    ] + [(n, ctypes.c_uint64) for n in STATS_HEALTH + STATS_RCACHE]


# Declared by the binding before every header it runs with has them: the
# layout test compares them where the header has them.
PENDING = {"SYMRAIL_ENDPOINT_MAX"}


# What the layout test compares with the C compiler's view: name -> value.
def c_facts():
    facts = {
        "sizeof(symrail_notify_t)": ctypes.sizeof(notify_t),
        "sizeof(symrail_stats_t)": ctypes.sizeof(stats_t),
        "sizeof(symrail_status_t)": ctypes.sizeof(status_t),
        "sizeof(symrail_peer_state_t)": ctypes.sizeof(ctypes.c_int),
        "SYMRAIL_NOTIFY_MAX_PAYLOAD": NOTIFY_MAX_PAYLOAD,
        "SYMRAIL_NOTIFY_TAG_RESERVED": NOTIFY_TAG_RESERVED,
        "SYMRAIL_SEG_DESC_MAX": SEG_DESC_MAX,
        "SYMRAIL_ENDPOINT_MAX": ENDPOINT_MAX,
        "SYMRAIL_ANY_PE": ANY_PE,
        "SYMRAIL_STATS_MAX_RAILS": STATS_MAX_RAILS,
        "SYMRAIL_BATCH_ALL": BATCH_ALL,
        "SYMRAIL_WRITE": WRITE,
        "SYMRAIL_READ": READ,
        "SYMRAIL_TASK_PENDING": TASK_PENDING,
        "SYMRAIL_TASK_DONE": TASK_DONE,
        "SYMRAIL_TASK_FAILED": TASK_FAILED,
        "SYMRAIL_THREAD_MULTIPLE": THREAD_MULTIPLE,
        "SYMRAIL_PEER_OK": PEER_OK,
        "SYMRAIL_PEER_SUSPECT": PEER_SUSPECT,
        "SYMRAIL_PEER_FAILED": PEER_FAILED,
    }
    for st, prefix in ((notify_t, "symrail_notify_t"), (stats_t, "symrail_stats_t")):
        for name, _ in st._fields_:
            facts["offsetof(%s, %s)" % (prefix, name)] = getattr(st, name).offset
    for name, value in STATUS.items():
        facts[name] = value
    return facts
