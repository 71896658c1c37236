"""Exceptions: one class per symrail_status_t, all under SymrailError.

Each carries .status (the C value), .name (e.g. "SYMRAIL_ERR_STALE"),
.call (the C function that returned it) and the library's own message.
"""
import builtins

from ._layout import STATUS, STATUS_NAME


class SymrailError(Exception):
    """A symrail call failed; .status and .name say how."""

    status = None
    name = None

    def __init__(self, status=None, call=None, message=None):
        if status is None:
            status = type(self).status
        self.status = status
        self.name = STATUS_NAME.get(status, "status %d" % status)
        self.call = call
        self.message = message or self.name
        where = "%s: " % call if call else ""
        super().__init__("%s%s (%s)" % (where, self.message, self.name))


def _cls(pyname, status_name, *bases):
    cls = type(pyname, (SymrailError,) + bases, {
        "status": STATUS[status_name],
        "__doc__": "%s from the C library." % status_name,
        "__module__": __name__,
    })
    return cls


InvalidError = _cls("InvalidError", "SYMRAIL_ERR_INVALID", ValueError)
NoMemError = _cls("NoMemError", "SYMRAIL_ERR_NOMEM", MemoryError)
UnsupportedError = _cls("UnsupportedError", "SYMRAIL_ERR_UNSUPPORTED", NotImplementedError)
# A symrail timeout is also Python's own TimeoutError.
TimeoutError = _cls("TimeoutError", "SYMRAIL_ERR_TIMEOUT", builtins.TimeoutError)
AgainError = _cls("AgainError", "SYMRAIL_ERR_AGAIN", BlockingIOError)
BootError = _cls("BootError", "SYMRAIL_ERR_BOOT")
TransportError = _cls("TransportError", "SYMRAIL_ERR_TRANSPORT")
PeerGoneError = _cls("PeerGoneError", "SYMRAIL_ERR_PEER_GONE", ConnectionError)
NoTransportError = _cls("NoTransportError", "SYMRAIL_ERR_NO_TRANSPORT")
SysError = _cls("SysError", "SYMRAIL_ERR_SYSTEM", OSError)
TruncatedError = _cls("TruncatedError", "SYMRAIL_ERR_TRUNCATED")
StateError = _cls("StateError", "SYMRAIL_ERR_STATE")
PeerUnresponsiveError = _cls("PeerUnresponsiveError", "SYMRAIL_ERR_PEER_UNRESPONSIVE")
MismatchError = _cls("MismatchError", "SYMRAIL_ERR_MISMATCH")
StaleError = _cls("StaleError", "SYMRAIL_ERR_STALE")
CanceledError = _cls("CanceledError", "SYMRAIL_ERR_CANCELED")
ResultLostError = _cls("ResultLostError", "SYMRAIL_ERR_RESULT_LOST")

BY_STATUS = {c.status: c for c in (
    InvalidError, NoMemError, UnsupportedError, TimeoutError, AgainError, BootError,
    TransportError, PeerGoneError, NoTransportError, SysError, TruncatedError, StateError,
    PeerUnresponsiveError, MismatchError, StaleError, CanceledError, ResultLostError)}


def error_for(status, call=None, message=None):
    """The exception (not raised) for a status that is not SYMRAIL_OK."""
    cls = BY_STATUS.get(status, SymrailError)
    return cls(status, call, message)


__all__ = ["SymrailError", "error_for"] + [c.__name__ for c in BY_STATUS.values()]
