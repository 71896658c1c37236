"""Segments: this PE's memory registered for peers' transfers, and peers'
segments imported from their descriptors."""
import ctypes

from . import _buf, _layout as L, errors
from ._lib import call


def _cleanup(fn, exc_type):
    """fn() on leaving a with block; a failure there is raised unless the
    block raised already (its exception says more)."""
    if exc_type is None:
        fn()
        return
    try:
        fn()
    except errors.SymrailError:
        pass


class Segment:
    """One of this PE's segments (seg_register or seg_alloc).

    A registered object is kept alive until deregister(); memory from
    seg_alloc is the library's and is freed by deregister(), after which
    views of it (.view, .numpy()) must not be used.  A context manager:
    deregisters on exit."""

    def __init__(self, handle, addr, nbytes, obj, owned):
        self._h = handle
        self.addr = addr
        self.nbytes = nbytes
        self._obj = obj          # what must outlive the registration
        self._owned = owned      # allocated by seg_alloc
        self.view = _buf.view(addr, nbytes) if owned and nbytes else None

    def _handle(self):
        if self._h is None:
            raise errors.StateError(None, "Segment", "used after deregister()")
        return self._h

    def _symrail_region(self):
        self._handle()
        return self.addr, self.nbytes

    def __len__(self):
        return self.nbytes

    @property
    def obj(self):
        """The registered object (None for seg_alloc memory)."""
        return None if self._owned else self._obj

    def numpy(self, dtype="uint8", shape=None):
        self._handle()
        return _buf.numpy_view(self.addr, self.nbytes, dtype, shape)

    def torch(self, dtype=None, shape=None):
        """A CPU torch tensor over the segment's memory (dtype default uint8)."""
        self._handle()
        return _buf.torch_view(self.addr, self.nbytes, dtype, shape)

    def export(self):
        """The segment's descriptor (bytes) for seg_import on any PE of the job."""
        buf = ctypes.create_string_buffer(L.SEG_DESC_MAX)
        n = ctypes.c_size_t(L.SEG_DESC_MAX)
        call("symrail_seg_export", self._handle(), buf, ctypes.byref(n))
        return buf.raw[:n.value]

    def publish(self, name):
        call("symrail_seg_publish", self._handle(), name.encode())

    def info(self):
        a, n = ctypes.c_void_p(), ctypes.c_size_t()
        call("symrail_seg_info", self._handle(), ctypes.byref(a), ctypes.byref(n))
        return a.value or 0, n.value

    def deregister(self):
        """StateError while a batch that uses it is in flight (nothing changes)."""
        if self._h is None:
            return
        call("symrail_seg_deregister", self._h)
        self._h = None
        if self.view is not None:
            try:
                self.view.release()
            except BufferError:
                pass
        self._obj = None

    close = deregister

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        _cleanup(self.deregister, exc_type)
        return False

    def __repr__(self):
        state = "" if self._h is not None else " deregistered"
        return "<symrail.Segment %d bytes at %s%s>" % (self.nbytes, hex(self.addr), state)


def seg_register(obj, flags=0, offset=0, nbytes=None):
    """Registers obj's memory (a bytearray, a numpy array, a CPU torch
    tensor, any writable buffer), or nbytes of it from offset."""
    addr, n, keep = _buf.span(obj, offset, nbytes, True, "symrail_seg_register")
    h = ctypes.c_void_p()
    call("symrail_seg_register", addr, n, int(flags), ctypes.byref(h))
    return Segment(h, addr, n, keep, False)


def seg_alloc(nbytes, flags=0):
    """nbytes that local peers map directly, registered: .view, .numpy()."""
    a, h = ctypes.c_void_p(), ctypes.c_void_p()
    call("symrail_seg_alloc", int(nbytes), int(flags), ctypes.byref(a), ctypes.byref(h))
    return Segment(h, a.value or 0, int(nbytes), None, True)


class RemoteSegment:
    """A peer's segment, from its descriptor: .pe, .nbytes.  A context manager:
    released on exit."""

    def __init__(self, handle):
        self._h = handle
        pe, n = ctypes.c_int(), ctypes.c_size_t()
        try:
            call("symrail_rseg_info", handle, ctypes.byref(pe), ctypes.byref(n))
        except errors.SymrailError:
            self.release()
            raise
        self.pe = pe.value
        self.nbytes = n.value

    def _handle(self):
        if self._h is None:
            raise errors.StateError(None, "RemoteSegment", "used after release()")
        return self._h

    def __len__(self):
        return self.nbytes

    def release(self):
        if self._h is not None:
            call("symrail_rseg_release", self._h)
            self._h = None

    close = release

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        _cleanup(self.release, exc_type)
        return False

    def __repr__(self):
        return "<symrail.RemoteSegment of PE %d, %d bytes>" % (self.pe, self.nbytes)


def seg_import(desc):
    """A RemoteSegment from a descriptor (Segment.export's bytes)."""
    desc = bytes(desc)
    h = ctypes.c_void_p()
    call("symrail_seg_import", desc, len(desc), ctypes.byref(h))
    return RemoteSegment(h)


def seg_lookup(name, pe=L.ANY_PE, timeout_ms=-1):
    """The segment published under name on PE pe (ANY_PE: any), waiting up to
    timeout_ms (-1: SYMRAIL_OP_TIMEOUT)."""
    h = ctypes.c_void_p()
    call("symrail_seg_lookup", int(pe), name.encode(), int(timeout_ms), ctypes.byref(h))
    return RemoteSegment(h)


def seg_unpublish(name):
    call("symrail_seg_unpublish", name.encode())
