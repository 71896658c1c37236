"""The binding's layouts and constants against the C compiler's (t_py_layout's
output, the file named by argv[1]); every fact of either side is compared."""
import sys

from symrail import _layout

c = {}
with open(sys.argv[1]) as f:
    for line in f:
        name, value = line.rsplit(" ", 1)
        c[name] = int(value)
py = _layout.c_facts()
bad = []
for name in sorted(set(c) | set(py)):
    if name not in py:
        bad.append("%s: C has %d, the binding does not declare it" % (name, c[name]))
    elif name not in c and name in _layout.PENDING:
        print("note: %s is not in this symrail.h yet" % name)
    elif name not in c:
        bad.append("%s: the binding has %d, t_py_layout does not print it" % (name, py[name]))
    elif c[name] != py[name]:
        bad.append("%s: C %d, binding %d" % (name, c[name], py[name]))
for b in bad:
    print("FAIL:", b)
if bad:
    sys.exit(1)
print("ok: layout: %d sizes, offsets and constants agree with C" % len(c))
