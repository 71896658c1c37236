"""Batches of transfers between this PE's memory and peers' segments."""
import collections
import ctypes

from . import _buf, _layout as L, errors
from ._lib import call, check, fn
from .segment import RemoteSegment, _cleanup

TaskStatus = collections.namedtuple("TaskStatus", "state state_name nbytes error")
TaskStatus.__doc__ = """state: TASK_PENDING, TASK_DONE or TASK_FAILED; nbytes moved;
error: the exception of a failed task (not raised), else None."""


def _op(op):
    if op not in (L.WRITE, L.READ):
        raise errors.InvalidError(None, "batch", "op must be symrail.WRITE or symrail.READ")
    return op


def _rseg(rseg):
    if not isinstance(rseg, RemoteSegment):
        raise errors.InvalidError(None, "batch", "the remote side must be a RemoteSegment "
                                  "(seg_import or seg_lookup), not a %s" % type(rseg).__name__)
    return rseg._handle()


def _max_index(keep):
    """The largest of the indices index_array kept (a numpy array or an array.array)."""
    if len(keep) == 0:
        return -1
    return int(keep.max()) if hasattr(keep, "max") else max(keep)


class Batch:
    """A list of tasks, submitted together.  The local memory of every task
    is kept alive until reset() or free().  A context manager: on exit it is
    freed (canceled first when the block raised)."""

    def __init__(self, capacity):
        h = ctypes.c_void_p()
        call("symrail_batch_create", int(capacity), ctypes.byref(h))
        self._h = h
        self.capacity = int(capacity)
        self._keep = []

    def _handle(self):
        if self._h is None:
            raise errors.StateError(None, "Batch", "used after free()")
        return self._h

    def _local(self, op, local, offset, nbytes, what):
        addr, n, keep = _buf.span(local, offset, nbytes, op == L.READ, what)
        self._keep.append(keep)
        return addr, n

    def add(self, op, local, rseg, roff, nbytes=None, local_offset=0):
        """One task: nbytes (default: the rest of local) between local at
        local_offset and rseg at roff.  Returns the task's index."""
        h, r = self._handle(), _rseg(rseg)
        addr, n = self._local(_op(op), local, local_offset, nbytes, "symrail_batch_add")
        task = ctypes.c_size_t()
        call("symrail_batch_add", h, op, addr, r, int(roff), n, ctypes.byref(task))
        self._keep.append(rseg)
        return task.value

    def write(self, local, rseg, roff=0, nbytes=None, local_offset=0):
        return self.add(L.WRITE, local, rseg, roff, nbytes, local_offset)

    def read(self, local, rseg, roff=0, nbytes=None, local_offset=0):
        return self.add(L.READ, local, rseg, roff, nbytes, local_offset)

    def _blocks(self, op, local, local_span, local_idx, remote_idx, what):
        lp, ln, lkeep = _buf.index_array(local_idx, what)
        rp, rn, rkeep = _buf.index_array(remote_idx, what)
        if ln != rn:
            raise errors.InvalidError(None, what, "%d local and %d remote block indices"
                                      % (ln, rn))
        # The library checks the remote side; the local one is ours to check.
        need = local_span(_max_index(lkeep) + 1) if ln else 0
        addr, _ = self._local(op, local, 0, need, what)
        return addr, lp, rp, ln, (lkeep, rkeep)

    def add_blocks(self, op, local, local_idx, rseg, remote_base, remote_idx, block_bytes):
        """Block local_idx[i] of local (blocks of block_bytes) and block
        remote_idx[i] from remote_base of rseg; indices as lists or numpy
        uint32 arrays.  Returns (first task, number of tasks) after
        coalescing."""
        h, r = self._handle(), _rseg(rseg)
        bb = int(block_bytes)
        addr, lp, rp, n, keep = self._blocks(_op(op), local, lambda k: k * bb, local_idx,
                                             remote_idx, "symrail_batch_add_blocks")
        first, ntasks = ctypes.c_size_t(), ctypes.c_size_t()
        call("symrail_batch_add_blocks", h, op, addr, lp, r, int(remote_base), rp, n, bb,
             ctypes.byref(first), ctypes.byref(ntasks))
        self._keep.append(rseg)
        return first.value, ntasks.value

    def add_layers(self, op, local, local_stride, rseg, remote_base, remote_stride, nlayers,
                   local_idx, remote_idx, block_bytes):
        """add_blocks for each of nlayers layers, layer l at local + l *
        local_stride and at remote_base + l * remote_stride."""
        h, r = self._handle(), _rseg(rseg)
        bb, ls, nl = int(block_bytes), int(local_stride), int(nlayers)
        span = (lambda k: (nl - 1) * ls + k * bb) if nl > 0 else (lambda k: 0)
        addr, lp, rp, n, keep = self._blocks(_op(op), local, span, local_idx, remote_idx,
                                             "symrail_batch_add_layers")
        first, ntasks = ctypes.c_size_t(), ctypes.c_size_t()
        call("symrail_batch_add_layers", h, op, addr, ls, r, int(remote_base),
             int(remote_stride), nl, lp, rp, n, bb, ctypes.byref(first), ctypes.byref(ntasks))
        self._keep.append(rseg)
        return first.value, ntasks.value

    def submit(self):
        call("symrail_batch_submit", self._handle())

    def submit_notify(self, pe, tag, payload=b""):
        """Submit; PE pe gets a notification with tag and payload once every
        task is complete there, or one with the failure's status."""
        addr, n, keep = _buf.address(payload, False, "symrail_batch_submit_notify")
        self._keep.append(keep)
        call("symrail_batch_submit_notify", self._handle(), int(pe), int(tag), addr, n)

    def status(self, task=None):
        """TaskStatus of task `task`, or of the whole batch (None)."""
        t = L.BATCH_ALL if task is None else int(task)
        state, nbytes = ctypes.c_int(-1), ctypes.c_size_t()
        st = fn("symrail_batch_status")(self._handle(), t, ctypes.byref(state),
                                        ctypes.byref(nbytes))
        err = None
        if st != L.OK:
            if state.value != L.TASK_FAILED:
                check("symrail_batch_status", st)  # the call itself failed
            err = errors.error_for(st, "batch task %s" % ("(all)" if task is None else t),
                                   "the task failed")
        return TaskStatus(state.value, L.TASK_STATE_NAME.get(state.value, str(state.value)),
                          nbytes.value, err)

    def wait(self, timeout_ms=-1):
        """Until every task is complete: raises the first failure, or
        symrail.TimeoutError when timeout_ms passes with tasks pending."""
        call("symrail_batch_wait", self._handle(), int(timeout_ms))

    def cancel(self):
        call("symrail_batch_cancel", self._handle())

    def reset(self):
        call("symrail_batch_reset", self._handle())
        self._keep = []

    def free(self):
        """StateError while the batch is in flight."""
        if self._h is None:
            return
        call("symrail_batch_free", self._h)
        self._h = None
        self._keep = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._h is None:
            return False
        if exc_type is not None:
            _cleanup(self.cancel, exc_type)
        _cleanup(self.free, exc_type)
        return False

    def __repr__(self):
        return "<symrail.Batch capacity %d%s>" % (self.capacity,
                                                  "" if self._h is not None else " freed")
