"""Finding and loading libsymrail, and the prototypes of the calls the binding makes.

The library is looked for, in this order:
  1. $SYMRAIL_PYTHON_LIB: the shared object's path, or a directory holding it;
  2. the library directory recorded when the package was installed (_config.py,
     written by `make install`);
  3. the build tree, for PYTHONPATH=<source>/python: <source>/build/.libs and
     <source>/.libs (a build in the source directory);
  4. the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig).
"""
import ctypes
import ctypes.util
import os

from . import _layout as L
from .errors import SymrailError, UnsupportedError, error_for

_SONAMES = ("libsymrail.so.0", "libsymrail.so")
_here = os.path.dirname(os.path.abspath(__file__))


def _installed_libdir():
    try:
        from . import _config  # written at install time only
    except ImportError:
        return None
    return getattr(_config, "LIBDIR", None)


def _candidates():
    env = os.environ.get("SYMRAIL_PYTHON_LIB")
    if env:
        # Named explicitly: that one or nothing.
        if os.path.isdir(env):
            return [os.path.join(env, n) for n in _SONAMES], True
        return [env], True
    dirs = []
    libdir = _installed_libdir()
    if libdir:
        dirs.append(libdir)
    src = os.path.dirname(os.path.dirname(_here))
    dirs += [os.path.join(src, "build", ".libs"), os.path.join(src, ".libs")]
    paths = [os.path.join(d, n) for d in dirs for n in _SONAMES]
    found = ctypes.util.find_library("symrail")
    paths += [found] if found else []
    return paths + list(_SONAMES), False


def _load():
    paths, explicit = _candidates()
    tried = []
    for p in paths:
        if os.sep in p and not os.path.exists(p):
            tried.append(p + " (absent)")
            continue
        try:
            return ctypes.CDLL(p), p
        except OSError as e:
            tried.append("%s (%s)" % (p, e))
    hint = "" if explicit else "; set SYMRAIL_PYTHON_LIB to the libsymrail.so to use"
    raise ImportError("symrail: libsymrail not found: tried %s%s" % (", ".join(tried), hint))


lib, path = _load()

_p = ctypes.c_void_p
_sz = ctypes.c_size_t
_szp = ctypes.POINTER(ctypes.c_size_t)
_int = ctypes.c_int
_u32 = ctypes.c_uint32
_u32p = ctypes.POINTER(ctypes.c_uint32)
_st = L.status_t
_pp = ctypes.POINTER(ctypes.c_void_p)

# name: (restype, argtypes).  A status restype is checked by call().
PROTOS = {
    "symrail_init_status": (_st, []),
    "symrail_init_thread": (_st, [_int, ctypes.POINTER(_int)]),
    "symrail_finalize_status": (_st, []),
    "symrail_initialized": (_int, []),
    "symrail_my_pe": (_int, []),
    "symrail_n_pes": (_int, []),
    "symrail_strerror": (ctypes.c_char_p, [_st]),
    "symrail_version_string": (ctypes.c_char_p, []),
    "symrail_malloc": (_p, [_sz]),
    "symrail_calloc": (_p, [_sz, _sz]),
    "symrail_align": (_p, [_sz, _sz]),
    "symrail_free": (None, [_p]),
    "symrail_ptr": (_p, [_p, _int]),
    "symrail_put": (_st, [_p, _p, _sz, _int]),
    "symrail_get": (_st, [_p, _p, _sz, _int]),
    "symrail_put_nbi": (_st, [_p, _p, _sz, _int]),
    "symrail_get_nbi": (_st, [_p, _p, _sz, _int]),
    "symrail_quiet": (_st, []),
    "symrail_fence": (_st, []),
    "symrail_barrier_all": (_st, []),
    "symrail_sync_all": (_st, []),
    "symrail_notify_send": (_st, [_int, _u32, _p, _sz]),
    "symrail_notify_trysend": (_st, [_int, _u32, _p, _sz]),
    "symrail_notify_poll": (_st, [ctypes.POINTER(L.notify_t)]),
    "symrail_notify_wait": (_st, [_int, ctypes.POINTER(L.notify_t)]),
    "symrail_notify_poll_tag": (_st, [_u32, ctypes.POINTER(L.notify_t)]),
    "symrail_notify_wait_tag": (_st, [_u32, _int, ctypes.POINTER(L.notify_t)]),
    "symrail_seg_register": (_st, [_p, _sz, ctypes.c_uint, _pp]),
    "symrail_seg_alloc": (_st, [_sz, ctypes.c_uint, _pp, _pp]),
    "symrail_seg_deregister": (_st, [_p]),
    "symrail_seg_info": (_st, [_p, _pp, _szp]),
    "symrail_seg_export": (_st, [_p, _p, _szp]),
    "symrail_seg_import": (_st, [_p, _sz, _pp]),
    "symrail_rseg_info": (_st, [_p, ctypes.POINTER(_int), _szp]),
    "symrail_rseg_release": (_st, [_p]),
    "symrail_seg_publish": (_st, [_p, ctypes.c_char_p]),
    "symrail_seg_unpublish": (_st, [ctypes.c_char_p]),
    "symrail_seg_lookup": (_st, [_int, ctypes.c_char_p, _int, _pp]),
    "symrail_batch_create": (_st, [_sz, _pp]),
    "symrail_batch_add": (_st, [_p, _int, _p, _p, ctypes.c_uint64, _sz, _szp]),
    "symrail_batch_add_blocks": (_st, [_p, _int, _p, _u32p, _p, ctypes.c_uint64, _u32p,
                                       _sz, _sz, _szp, _szp]),
    "symrail_batch_add_layers": (_st, [_p, _int, _p, _sz, _p, ctypes.c_uint64, _sz, _sz,
                                       _u32p, _u32p, _sz, _sz, _szp, _szp]),
    "symrail_batch_submit": (_st, [_p]),
    "symrail_batch_submit_notify": (_st, [_p, _int, _u32, _p, _sz]),
    "symrail_batch_status": (_st, [_p, _sz, ctypes.POINTER(_int), _szp]),
    "symrail_batch_wait": (_st, [_p, _int]),
    "symrail_batch_cancel": (_st, [_p]),
    "symrail_batch_reset": (_st, [_p]),
    "symrail_batch_free": (_st, [_p]),
    "symrail_stats": (_st, [ctypes.POINTER(L.stats_t)]),
    "symrail_peer_state": (_st, [_int, ctypes.POINTER(_int)]),
    "symrail_peer_states": (_st, [ctypes.POINTER(_int), ctypes.POINTER(_int)]),
    "symrail_endpoint_export": (_st, [_p, _szp]),
    "symrail_endpoint_connect": (_st, [_p, _sz, ctypes.POINTER(_int)]),
    "symrail_endpoint_accept": (_st, [_int, ctypes.POINTER(_int)]),
    "symrail_endpoint_disconnect": (_st, [_int]),
}

_fns = {}


def fn(name):
    """The C function `name`, with its prototype; UnsupportedError if this
    libsymrail does not have it (a build older than the call)."""
    f = _fns.get(name)
    if f is None:
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise UnsupportedError(None, name, "not in %s (a library without this call)" % path)
        f.restype, f.argtypes = PROTOS[name]
        _fns[name] = f
    return f


def strerror(status):
    s = fn("symrail_strerror")(status)
    return s.decode(errors="replace") if s else "status %d" % status


def check(name, status):
    if status != L.OK:
        raise error_for(status, name, strerror(status))
    return status


def call(name, *args):
    """Calls the status-returning C function `name`; raises its error."""
    return check(name, fn(name)(*args))


__all__ = ["lib", "path", "fn", "call", "check", "strerror", "SymrailError"]
