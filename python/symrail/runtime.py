"""Init and finalize, PE info, the symmetric heap and its put/get, counters."""
import atexit
import ctypes
import os

from . import _buf, _layout as L, errors
from ._lib import call, fn


class Runtime:
    """What init() returns; as a context manager it finalizes on exit."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if not initialized():
            return False
        if exc_type is None:
            finalize()
        else:
            try:
                finalize()
            except errors.SymrailError:
                pass  # the block's own exception says more
        return False

    @property
    def my_pe(self):
        return my_pe()

    @property
    def n_pes(self):
        return n_pes()


def init(thread_level=None):
    """Initializes the library (once per process; a second call is a no-op
    that returns the same Runtime).  The interpreter's own globals are of no
    use as symmetric memory, so unless SYMRAIL_SYMMETRIC_DATA is set the
    binding turns that off."""
    os.environ.setdefault("SYMRAIL_SYMMETRIC_DATA", "0")
    if thread_level is None:
        call("symrail_init_status")
    else:
        provided = ctypes.c_int(-1)
        call("symrail_init_thread", int(thread_level), ctypes.byref(provided))
    return _runtime


def finalize():
    call("symrail_finalize_status")


def initialized():
    return bool(fn("symrail_initialized")())


def my_pe():
    return fn("symrail_my_pe")()


def n_pes():
    return fn("symrail_n_pes")()


def version():
    return fn("symrail_version_string")().decode()


_runtime = Runtime()


@atexit.register
def _finalize_at_exit():
    # A program that ends without finalize() still leaves the job cleanly.
    if initialized():
        try:
            finalize()
        except errors.SymrailError:
            pass


class HeapBuffer:
    """A block of the symmetric heap: the same block on every PE.

    .view is a writable memoryview of this PE's copy; .numpy() a numpy view.
    put/get move bytes to and from another PE's copy.  free() is collective,
    like malloc(); views must not be used after it."""

    def __init__(self, addr, nbytes):
        self.addr = addr
        self.nbytes = nbytes
        self.view = _buf.view(addr, nbytes) if nbytes else memoryview(b"")

    def _symrail_region(self):
        if self.addr is None:
            raise errors.StateError(None, "HeapBuffer", "used after free()")
        return self.addr, self.nbytes

    def __len__(self):
        return self.nbytes

    def __bytes__(self):
        return bytes(self.view)

    def __getitem__(self, i):
        return self.view[i]

    def __setitem__(self, i, v):
        self.view[i] = v

    def numpy(self, dtype="uint8", shape=None):
        return _buf.numpy_view(self._symrail_region()[0], self.nbytes, dtype, shape)

    def torch(self, dtype=None, shape=None):
        """A CPU torch tensor over this PE's copy (dtype default uint8)."""
        return _buf.torch_view(self._symrail_region()[0], self.nbytes, dtype, shape)

    def put(self, src, pe, offset=0, nbi=False):
        """Writes src (any buffer) into PE pe's copy at offset."""
        put(self, src, pe, offset, nbi)

    def get(self, pe, offset=0, nbytes=None, out=None, nbi=False):
        """Reads PE pe's copy (nbytes from offset) into out, or a new bytearray
        it returns.  With nbi=True out is complete after quiet()."""
        return get(self, pe, offset, nbytes, out, nbi)

    def ptr(self, pe):
        """Whether PE pe's copy is mapped here: a memoryview of it, or None."""
        a = fn("symrail_ptr")(self._symrail_region()[0], int(pe))
        return _buf.view(a, self.nbytes) if a else None

    def free(self):
        if self.addr is not None:
            try:
                self.view.release()
            except BufferError:
                pass  # a numpy view still holds it: the memory goes all the same
            fn("symrail_free")(self.addr)
            self.addr = None

    def __repr__(self):
        return "<symrail.HeapBuffer %s bytes at %s>" % (self.nbytes, hex(self.addr or 0))


def malloc(nbytes, alignment=None, zero=False):
    """Collective: every PE calls with the same arguments."""
    nbytes = int(nbytes)
    if alignment is not None:
        a = fn("symrail_align")(int(alignment), nbytes)
    elif zero:
        a = fn("symrail_calloc")(1, nbytes)
    else:
        a = fn("symrail_malloc")(nbytes)
    if not a and nbytes:
        raise errors.NoMemError(None, "symrail_malloc",
                                "no %d bytes left in the symmetric heap (SYMRAIL_HEAP_SIZE)"
                                % nbytes)
    return HeapBuffer(a, nbytes)


def _heap_span(dst, offset, nbytes, what):
    if not isinstance(dst, HeapBuffer):
        raise errors.InvalidError(None, what, "the remote side must be a HeapBuffer, not a %s"
                                  % type(dst).__name__)
    return _buf.span(dst, offset, nbytes, True, what)


def put(dst, src, pe, offset=0, nbi=False):
    """Writes src into HeapBuffer dst of PE pe at offset."""
    saddr, n, keep = _buf.address(src, False, "symrail_put")
    daddr, n, _ = _heap_span(dst, offset, n, "symrail_put")
    call("symrail_put_nbi" if nbi else "symrail_put", daddr, saddr, n, int(pe))
    del keep


def get(src, pe, offset=0, nbytes=None, out=None, nbi=False):
    """Reads HeapBuffer src of PE pe (nbytes at offset) into out or a new bytearray."""
    if nbytes is None and out is not None:
        nbytes = _buf.address(out, True, "symrail_get")[1]
    saddr, n, _ = _heap_span(src, offset, nbytes, "symrail_get")
    if out is None:
        out = bytearray(n)
    daddr, m, keep = _buf.address(out, True, "symrail_get")
    if m < n:
        raise errors.InvalidError(None, "symrail_get", "out holds %d bytes, %d asked" % (m, n))
    call("symrail_get_nbi" if nbi else "symrail_get", daddr, saddr, n, int(pe))
    del keep
    return out


def quiet():
    call("symrail_quiet")


def fence():
    call("symrail_fence")


def barrier():
    """quiet, then a barrier over all PEs (symrail_barrier_all)."""
    call("symrail_barrier_all")


def sync_all():
    call("symrail_sync_all")


def stats():
    """This PE's counters since init: a dict, with 'rails' a list of dicts."""
    s = L.stats_t()
    call("symrail_stats", ctypes.byref(s))
    d = {n: getattr(s, n) for n in L.STATS_COUNTERS + L.STATS_HEALTH + L.STATS_RCACHE}
    d["rails"] = [{"name": r.name.decode(errors="replace"), "bytes": r.bytes,
                   "slices": r.slices} for r in s.rails[:min(s.nrails, L.STATS_MAX_RAILS)]]
    return d


def peer_state(pe):
    """What this PE knows of `pe`, looked at now: "OK", "SUSPECT" (stopped or
    silent for SYMRAIL_OP_TIMEOUT) or "FAILED" (gone, for good)."""
    s = ctypes.c_int(-1)
    call("symrail_peer_state", int(pe), ctypes.byref(s))
    return L.PEER_STATE_NAME[s.value]


def peer_states():
    """The state of every PE of the job, a list indexed by PE."""
    n = n_pes()
    states = (ctypes.c_int * max(n, 1))()
    call("symrail_peer_states", states, None)
    return [L.PEER_STATE_NAME[states[i]] for i in range(n)]
