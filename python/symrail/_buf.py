"""The address and size of a Python object's memory, for the C calls.

Accepted: the binding's own buffers (heap blocks, allocated segments),
numpy arrays and CPU torch tensors (C-contiguous), and any object with the
buffer protocol (bytearray, bytes, memoryview, array.array, mmap).  The
caller keeps the returned `keep` object alive for as long as C may touch
the memory: for a bytearray it also holds an export, so the bytearray
cannot be resized (and moved) meanwhile.
"""
import array
import ctypes

from . import errors

_U32 = "I" if array.array("I").itemsize == 4 else "L"


def _bad(what, why):
    return errors.InvalidError(None, what, why)


def _torch_addr(obj, writable, what):
    if obj.device.type != "cpu":
        raise _bad(what, "a torch tensor on %s: only CPU tensors are supported" % obj.device)
    if not obj.is_contiguous():
        raise _bad(what, "a torch tensor that is not contiguous")
    return obj.data_ptr(), obj.numel() * obj.element_size(), obj


def _numpy_addr(obj, writable, what):
    ai = obj.__array_interface__
    addr, readonly = ai["data"]
    flags = getattr(obj, "flags", None)
    if flags is not None and not flags["C_CONTIGUOUS"]:
        raise _bad(what, "a numpy array that is not C-contiguous")
    if writable and readonly:
        raise _bad(what, "a read-only numpy array where memory is written")
    return addr, obj.nbytes, obj


def _is_torch(obj):
    return type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "data_ptr")


def address(obj, writable=False, what="buffer"):
    """(addr, nbytes, keep) of obj's memory."""
    own = getattr(obj, "_symrail_region", None)
    if own is not None:
        addr, nbytes = own()
        return addr, nbytes, obj
    if _is_torch(obj):
        return _torch_addr(obj, writable, what)
    if hasattr(obj, "__array_interface__"):
        return _numpy_addr(obj, writable, what)
    if isinstance(obj, bytes):
        if writable:
            raise _bad(what, "bytes are read-only: pass a bytearray where memory is written")
        return ctypes.cast(ctypes.c_char_p(obj), ctypes.c_void_p).value or 0, len(obj), obj
    try:
        mv = memoryview(obj)
    except TypeError:
        raise _bad(what, "a %s has no memory to address (give a bytearray, a numpy array, "
                   "a CPU torch tensor or a symrail buffer)" % type(obj).__name__)
    if not mv.c_contiguous:
        raise _bad(what, "a memoryview that is not contiguous")
    if mv.readonly:
        if writable:
            raise _bad(what, "a read-only buffer where memory is written")
        copy = bytes(mv)  # ctypes addresses only writable buffers; a source may be copied
        return ctypes.cast(ctypes.c_char_p(copy), ctypes.c_void_p).value or 0, len(copy), copy
    arr = (ctypes.c_char * mv.nbytes).from_buffer(mv)
    return ctypes.addressof(arr), mv.nbytes, (arr, mv)


def span(obj, offset, nbytes, writable, what):
    """(addr, nbytes, keep) of nbytes at offset into obj (nbytes None: to its end)."""
    addr, size, keep = address(obj, writable, what)
    if offset < 0 or offset > size:
        raise _bad(what, "offset %d outside a buffer of %d bytes" % (offset, size))
    if nbytes is None:
        nbytes = size - offset
    if nbytes < 0 or offset + nbytes > size:
        raise _bad(what, "%d bytes at offset %d overrun a buffer of %d bytes"
                   % (nbytes, offset, size))
    return addr + offset, nbytes, keep


def view(addr, nbytes):
    """A writable memoryview of nbytes at addr (memory the library owns)."""
    return memoryview((ctypes.c_ubyte * nbytes).from_address(addr)).cast("B")


def numpy_view(addr, nbytes, dtype, shape):
    import numpy
    arr = numpy.frombuffer(view(addr, nbytes), dtype=dtype)
    return arr.reshape(shape) if shape is not None else arr


def torch_view(addr, nbytes, dtype, shape):
    import torch
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # older torch warns of every buffer it wraps
        t = torch.frombuffer(view(addr, nbytes), dtype=dtype or torch.uint8)
    return t.reshape(shape) if shape is not None else t


def index_array(idx, what):
    """(pointer, count, keep) of a list of block indices as uint32_t[]: a
    C-contiguous numpy uint32 array is passed as it is, anything else copied."""
    if hasattr(idx, "__array_interface__") and getattr(idx, "dtype", None) is not None:
        if str(idx.dtype) == "uint32" and idx.flags["C_CONTIGUOUS"] and idx.ndim == 1:
            return ctypes.cast(idx.ctypes.data, ctypes.POINTER(ctypes.c_uint32)), len(idx), idx
        idx = idx.tolist()
    try:
        arr = array.array(_U32, idx)  # checks the range at C speed
    except (OverflowError, TypeError) as e:
        raise _bad(what, "block indices must be uint32: %s" % e)
    if len(arr) == 0:
        return None, 0, arr
    return ctypes.cast((ctypes.c_uint32 * len(arr)).from_buffer(arr),
                       ctypes.POINTER(ctypes.c_uint32)), len(arr), arr
