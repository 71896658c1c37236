"""Failures raise the exception of their status, carrying its name; the
binding refuses what C cannot check (read-only memory written, spans past a
buffer, use after free) before it reaches C."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symrail  # noqa: E402
from symrail import errors  # noqa: E402
from tcommon import check, raises  # noqa: E402

# Every status has its own class, named for it, under SymrailError.
for name, value in symrail.STATUS.items():
    if value > 0 or value == 0:
        continue
    e = symrail.error_for(value, "symrail_x", "why")
    check(type(e) is not symrail.SymrailError and isinstance(e, symrail.SymrailError)
          and e.status == value and e.name == name, "%s has its class: %r" % (name, e))
check(issubclass(symrail.StaleError, symrail.SymrailError)
      and issubclass(symrail.TimeoutError, TimeoutError)
      and issubclass(symrail.InvalidError, ValueError), "class hierarchy")

with symrail.init() as rt:
    me, n = rt.my_pe, rt.n_pes
    buf = symrail.malloc(4096)
    e = raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", buf.put, b"x", 1000)
    check(e.call == "symrail_put" and "invalid argument" in str(e), "put names the call: %s" % e)
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", buf.get, -3)
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", symrail.notify_send, n + 5, 1, b"x")
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", symrail.notify_send, (me + 1) % n, 1,
           bytes(symrail.NOTIFY_MAX_PAYLOAD + 1))
    raises(symrail.TimeoutError, "SYMRAIL_ERR_TIMEOUT", symrail.notify_wait, 20)
    raises(symrail.NoMemError, "SYMRAIL_ERR_NOMEM", symrail.malloc, 1 << 50)
    # refused by the binding: past the block, into read-only memory, not heap memory
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", buf.put, bytes(4097), me)
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", buf.put, b"xy", me, 4095)
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", buf.get, me, 0, 16, b"read-only")
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", symrail.put, bytearray(8), b"x", me)
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", buf.put, object(), me)
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", symrail.seg_register, b"bytes")
    raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", symrail.seg_register,
           bytearray(64), 0, 32, 64)
    symrail.barrier()
    buf.free()
    raises(symrail.StateError, "SYMRAIL_ERR_STATE", buf.put, b"x", me)
    check(symrail.strerror(-15) and errors.error_for(-999).name == "status -999",
          "an unknown status still makes an error")
    symrail.barrier()
    if me == 0:
        print("ok: python errors raise their status' class and name on %d PEs" % n)
