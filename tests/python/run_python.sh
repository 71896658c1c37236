#!/bin/sh
# The Python binding under symrun: the layouts against C, heap, notify,
# errors, segments and batches, over shared memory and TCP.  The package
# comes from the source tree and the library from the build tree.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# An uninstrumented program (the interpreter, or one built by symcc) loads
# a sanitizer build's library only with the sanitizer's runtime preloaded.
if [ "${SR_SANITIZERS:-no}" != no ]; then
    echo "SKIP: the Python binding under --enable-sanitizers=$SR_SANITIZERS"
    exit 77
fi
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
run_case "errors raise with their status name" 0 '^ok: python errors' \
    "$SYMRUN" -n 2 --timeout 120 "$PY" "$D/test_errors.py"
# Cases that need calls the library does not have yet say so and are skipped.
lacks() {
    "$PY" -c 'import sys, symrail._lib as l
m = [n for n in sys.argv[1:] if not hasattr(l.lib, n)]
print(" ".join(m)); sys.exit(1 if m else 0)' "$@" >"$outdir/lacks" && return 1
    echo "SKIP: $case_name (libsymrail lacks $(cat "$outdir/lacks"))"
}
SEGS="pools stale cancel"
case_name="segments and batches"
if ! lacks symrail_seg_register symrail_batch_submit_notify symrail_notify_wait_tag; then
    for n in 1 2 3; do
        run_case "segments and batches: $SEGS (-n $n)" 0 '^ok: python segments' \
            "$SYMRUN" -n $n --timeout 300 "$PY" "$D/test_segments.py" $SEGS
    done
    run_case "segments and batches over TCP: $SEGS (-n 2)" 0 '^ok: python segments' \
        env SYMRAIL_TRANSPORTS=tcp "$SYMRUN" -n 2 --timeout 300 "$PY" "$D/test_segments.py" $SEGS
    # A window of 64K leaves most of the batch unposted when cancel comes.
    run_case "a canceled batch over TCP notifies its target with CANCELED (-n 2)" 0 \
        'canceled batch ended SYMRAIL_ERR_CANCELED, its notification agrees' \
        env SYMRAIL_TRANSPORTS=tcp SYMRAIL_BATCH_WINDOW=64K "$SYMRUN" -n 2 --timeout 120 \
        "$PY" "$D/test_segments.py" cancel
fi
case_name="segment publish/lookup"
if ! lacks symrail_seg_publish symrail_seg_lookup symrail_notify_wait_tag; then
    run_case "segment publish/lookup (-n 2)" 0 '^ok: python segments' \
        "$SYMRUN" -n 2 --timeout 120 "$PY" "$D/test_segments.py" publish
fi
case_name="notify"
if ! lacks symrail_notify_wait_tag; then
    for n in 2 3; do
        run_case "notify (-n $n)" 0 '^ok: python notify' \
            "$SYMRUN" -n $n --timeout 120 "$PY" "$D/test_notify.py"
    done
    run_case "notify over TCP (-n 2)" 0 '^ok: python notify' \
        env SYMRAIL_TRANSPORTS=tcp "$SYMRUN" -n 2 --timeout 120 "$PY" "$D/test_notify.py"
fi
case_name="two jobs that connect"
if ! lacks symrail_endpoint_connect symrail_notify_wait_tag; then
    # On one host the segment goes over shared memory, or over TCP where
    # SYMRAIL_TRANSPORTS says so; the log says which.
    for tl in shm,tcp tcp; do
        over='shared memory'
        [ "$tl" = shm,tcp ] || over=TCP
        jd=$(mktemp -d "$outdir/jobs.XXXXXX")
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_LOG=info "$SYMRUN" -n 1 --timeout 120 "$PY" \
            "$D/test_jobs.py" exporter "$jd" >"$jd/exporter" 2>&1 &
        epid=$!
        run_case "two jobs that connect ($tl): the connector" 0 '^ok: python jobs: connector' \
            env SYMRAIL_TRANSPORTS=$tl SYMRAIL_LOG=info "$SYMRUN" -n 1 --timeout 120 "$PY" \
            "$D/test_jobs.py" connector "$jd"
        count_case "two jobs that connect ($tl): the connector reached the exporter over $over" \
            1 "is reached over $over"
        wait $epid
        run_case "two jobs that connect ($tl): the exporter" 0 '^ok: python jobs: exporter' \
            sh -c 'cat "$1"; exit "$2"' sh "$jd/exporter" $?
        count_case "two jobs that connect ($tl): the exporter reached the connector over $over" \
            1 "is reached over $over"
    done
fi
run_case "heap over TCP (-n 2)" 0 '^ok: python heap' \
    env SYMRAIL_TRANSPORTS=tcp "$SYMRUN" -n 2 --timeout 120 "$PY" "$D/test_heap.py"
finish
