#!/bin/sh
# The Python binding under symrun: the layouts against C, heap, notify,
# errors, segments and batches, over shared memory and TCP.  The package
# comes from the source tree and the library from the build tree.
. "${top_srcdir:-.}/tests/integration/lib.sh"

PY=${PYTHON:-python3}
if [ "$PY" = : ] || ! command -v "$PY" >/dev/null 2>&1; then
    echo "SKIP: no Python 3 (configure found none)"
    exit 77
fi
[ -x "$SYMRUN" ] || { echo "FAIL: $SYMRUN not built"; exit 1; }
PYTHONPATH=$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH}
SYMRAIL_PYTHON_LIB=$top_builddir/.libs
export PYTHONPATH SYMRAIL_PYTHON_LIB
D=$top_srcdir/tests/python
echo "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"

"$top_builddir/tests/python/t_py_layout" >"$outdir/layout" ||
    { echo "FAIL: t_py_layout"; exit 1; }
run_case "struct layouts and constants agree with C" 0 '^ok: layout' \
    "$PY" "$D/test_layout.py" "$outdir/layout"
for n in 1 2 3; do
    run_case "heap put/get (-n $n)" 0 '^ok: python heap' \
        "$SYMRUN" -n $n --timeout 120 "$PY" "$D/test_heap.py"
done
for n in 2 3; do
    run_case "notify (-n $n)" 0 '^ok: python notify' \
        "$SYMRUN" -n $n --timeout 120 "$PY" "$D/test_notify.py"
done
run_case "errors raise with their status name" 0 '^ok: python errors' \
    "$SYMRUN" -n 2 --timeout 120 "$PY" "$D/test_errors.py"
for n in 2 3; do
    run_case "segments and batches (-n $n)" 0 '^ok: python segments' \
        "$SYMRUN" -n $n --timeout 300 "$PY" "$D/test_segments.py"
done
for t in heap notify segments; do
    run_case "$t over TCP (-n 2)" 0 "^ok: python $t" \
        env SYMRAIL_TRANSPORTS=tcp "$SYMRUN" -n 2 --timeout 300 "$PY" "$D/test_$t.py"
done
finish
