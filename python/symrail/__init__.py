"""symrail from Python: a ctypes binding of libsymrail (include/symrail.h).

    import symrail
    with symrail.init() as rt:
        buf = symrail.malloc(4096)            # symmetric heap, collective
        buf.put(b"hello", (rt.my_pe + 1) % rt.n_pes)
        symrail.barrier()

Every failure raises a subclass of SymrailError named after its status
(StaleError, TimeoutError, ...), carrying .status and .name.

The package finds libsymrail through $SYMRAIL_PYTHON_LIB (a path to the
shared object, or its directory), else the directory recorded by `make
install`, else the build tree (<source>/build/.libs), else the loader's
search; symrail.library_path says which one was loaded.
"""
from ._layout import (ANY_PE, NOTIFY_MAX_PAYLOAD, NOTIFY_TAG_RESERVED, READ, SEG_DESC_MAX,
                      STATUS, STATUS_NAME, TASK_DONE, TASK_FAILED, TASK_PENDING,
                      THREAD_FUNNELED, THREAD_MULTIPLE, THREAD_SERIALIZED, THREAD_SINGLE,
                      WRITE)
from .errors import *  # noqa: F401,F403  (the exception classes)
from .errors import SymrailError, error_for
from ._lib import path as library_path, strerror
from .runtime import (HeapBuffer, Runtime, barrier, fence, finalize, get, init,
                      initialized, malloc, my_pe, n_pes, peer_state, peer_states, put, quiet,
                      stats, sync_all, version)
from .segment import (RemoteSegment, Segment, seg_alloc, seg_import, seg_lookup,
                      seg_register, seg_unpublish)
from .batch import Batch, TaskStatus
from .notify import Notification
from . import notify
from .endpoint import (accept as endpoint_accept, connect as endpoint_connect,
                       disconnect as endpoint_disconnect, export as endpoint_export)
from .notify import (poll as notify_poll, poll_tag as notify_poll_tag, send as notify_send,
                     trysend as notify_trysend, wait as notify_wait,
                     wait_tag as notify_wait_tag)
