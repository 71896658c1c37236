"""Notification messages: send, poll and wait, by tag or any."""
import ctypes

from . import _buf, _layout as L, errors
from ._lib import call, fn, check


class Notification:
    """A received message: src_pe, tag, status (SYMRAIL_OK, or the failure of
    the batch it reports), status_name, payload (bytes)."""

    __slots__ = ("src_pe", "tag", "status", "payload")

    def __init__(self, src_pe, tag, status, payload):
        self.src_pe = src_pe
        self.tag = tag
        self.status = status
        self.payload = payload

    @property
    def status_name(self):
        return L.STATUS_NAME.get(self.status, "status %d" % self.status)

    @property
    def ok(self):
        return self.status == L.OK

    @property
    def error(self):
        """The exception for a failure notification, or None."""
        if self.ok:
            return None
        return errors.error_for(self.status, "notification from PE %d, tag %#x"
                                % (self.src_pe, self.tag), "the batch it reports failed")

    def raise_for_status(self):
        if not self.ok:
            raise self.error
        return self

    def __repr__(self):
        return "<symrail.Notification from PE %d tag %#x %s, %d bytes>" % (
            self.src_pe, self.tag, self.status_name, len(self.payload))


def _from_c(m):
    n = min(m.len, L.NOTIFY_MAX_PAYLOAD)
    return Notification(m.src_pe, m.tag, m.status, ctypes.string_at(m.payload, n))


def _payload(payload, what):
    if payload is None:
        payload = b""  # the C call wants a pointer even for no bytes
    return _buf.address(payload, False, what)


def send(pe, tag, payload=b""):
    """Sends; waits for a slot at the receiver (up to SYMRAIL_OP_TIMEOUT)."""
    addr, n, keep = _payload(payload, "symrail_notify_send")
    call("symrail_notify_send", int(pe), int(tag), addr, n)
    del keep


def trysend(pe, tag, payload=b""):
    """True if sent, False if the receiver has no free slot for us now."""
    addr, n, keep = _payload(payload, "symrail_notify_trysend")
    st = fn("symrail_notify_trysend")(int(pe), int(tag), addr, n)
    del keep
    if st == L.ERR_AGAIN:
        return False
    check("symrail_notify_trysend", st)
    return True


def _take(name, *args):
    m = L.notify_t()
    st = fn(name)(*args, ctypes.byref(m))
    if st == L.ERR_AGAIN and name.startswith("symrail_notify_poll"):
        return None
    check(name, st)
    return _from_c(m)


def poll():
    """The oldest message, or None."""
    return _take("symrail_notify_poll")


def wait(timeout_ms=-1):
    """The oldest message, waiting up to timeout_ms (-1: forever);
    symrail.TimeoutError if none comes."""
    return _take("symrail_notify_wait", int(timeout_ms))


def poll_tag(tag):
    """The oldest message with this tag, or None; others stay queued."""
    return _take("symrail_notify_poll_tag", int(tag))


def wait_tag(tag, timeout_ms=-1):
    return _take("symrail_notify_wait_tag", int(tag), int(timeout_ms))
