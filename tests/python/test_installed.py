"""Run from an installed prefix (argv[1]): the package and the library it
loads both come from there."""
import os
import sys

import symrail

prefix = os.path.realpath(sys.argv[1])
pkg = os.path.realpath(symrail.__file__)
lib = os.path.realpath(symrail.library_path)
if not pkg.startswith(prefix + os.sep) or not lib.startswith(prefix + os.sep):
    print("FAIL: package %s, library %s: not both under %s" % (pkg, lib, prefix))
    sys.exit(1)
with symrail.init() as rt:
    buf = symrail.malloc(64)
    buf.put(b"pe %d" % rt.my_pe, (rt.my_pe + 1) % rt.n_pes)
    symrail.barrier()
    left = (rt.my_pe - 1) % rt.n_pes
    if bytes(buf[:4]) != b"pe %d" % left:
        print("FAIL: put through the installed package: %r" % bytes(buf[:8]))
        sys.exit(1)
    symrail.barrier()
    if rt.my_pe == 0:
        print("ok: installed package %s loads %s" % (symrail.version(), lib))
