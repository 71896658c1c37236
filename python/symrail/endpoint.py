"""Independent jobs: connect to a process that was not launched with us.

One side exports its endpoint (bytes, for any channel: a file, a socket);
the other connects and gets a PE number for it; the exporter learns of the
connection with accept().  Connected peers' numbers work with notifications,
segments and batches, not with symmetric-heap calls."""
import ctypes

from . import _layout as L
from ._lib import call, check, fn


def export():
    """This process's endpoint blob (bytes)."""
    buf = ctypes.create_string_buffer(L.ENDPOINT_MAX)
    n = ctypes.c_size_t(L.ENDPOINT_MAX)
    call("symrail_endpoint_export", buf, ctypes.byref(n))
    return buf.raw[:n.value]


def connect(blob):
    """The PE number of the process that exported blob."""
    blob = bytes(blob)
    peer = ctypes.c_int(-1)
    call("symrail_endpoint_connect", blob, len(blob), ctypes.byref(peer))
    return peer.value


def accept(timeout_ms=-1):
    """The PE number of the next process that connected to us; None when
    timeout_ms is 0 and none has; symrail.TimeoutError when timeout_ms passes."""
    peer = ctypes.c_int(-1)
    st = fn("symrail_endpoint_accept")(int(timeout_ms), ctypes.byref(peer))
    if st == L.ERR_AGAIN and int(timeout_ms) == 0:
        return None
    check("symrail_endpoint_accept", st)
    return peer.value


def disconnect(peer):
    call("symrail_endpoint_disconnect", int(peer))
