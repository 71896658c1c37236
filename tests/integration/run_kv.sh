#!/bin/sh
# The KV-cache demo (examples/kv_transfer) checks every byte it moves: under
# symrun -n 1, 2 and 4, over shared memory and TCP, with small pools, several
# block and request sizes, and pools of both kinds (seg_alloc, malloc); and as
# two jobs that connect, over shared memory and over TCP.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
KV=$top_builddir/examples/kv_transfer
ARGS="--verify --no-plot --layers 4 --blocks 96 --block-bytes 4K,16K --blocks-per-request 8,24 --requests 6"
# 4 configurations x 6 requests per prefill PE.
ok() { echo "^kv_transfer: every byte of $(($1 * 24)) requests \([0-9.]+ MiB\) verified\$"; }
# Two jobs: decode listens, prefill connects through endpoint files, over
# shared memory (both on this host), TCP (SYMRAIL_TRANSPORTS=tcp) or, in the
# Soft-RoCE guest (T_KV_TWO_JOBS=verbs: only these cases), verbs; the log
# must say that every connected peer, at both ends, is reached over that.
two_jobs() {  # DECODE_PES PREFILL_PES TL
    d=$outdir/ep.$1.$2.$3
    rm -rf "$d" && mkdir -p "$d" || return 1
    tls=shm,tcp want='shared memory' not=TCP
    [ "$3" = shm ] || tls=tcp want=TCP not='shared memory'
    [ "$3" != verbs ] || tls=verbs want=verbs not=TCP
    env SYMRAIL_TRANSPORTS=$tls SYMRAIL_LOG=info "$SYMRUN" -n "$1" --timeout 120 "$KV" $ARGS \
        --listen "$d" --prefill "$2" >"$d/decode.out" 2>&1 &
    dpid=$!
    env SYMRAIL_TRANSPORTS=$tls SYMRAIL_LOG=info "$SYMRUN" -n "$2" --timeout 120 "$KV" $ARGS \
        --connect "$d" >"$d/prefill.out" 2>&1
    prc=$?
    wait $dpid
    drc=$?
    cat "$d/decode.out" "$d/prefill.out"
    for f in decode prefill; do
        got=$(grep -c "is reached over $want" "$d/$f.out")
        bad=$(grep -c "is reached over $not" "$d/$f.out")
        # Every prefill PE is connected to one decode PE, at both ends.
        if [ "$got" -ne "$2" ] || [ "$bad" -ne 0 ]; then
            echo "two_jobs: $f: $got peers over $want, $bad over $not; expected $2 and 0"
            return 1
        fi
    done
    [ $prc -eq 0 ] && [ $drc -eq 0 ]
}
if [ -n "${T_KV_TWO_JOBS:-}" ]; then
    for pair in "1 1" "2 2"; do
        set -- $pair
        run_case "kv_transfer as two jobs over $T_KV_TWO_JOBS: $2 prefill PEs connect to $1 decode PEs" \
            0 "$(ok $2)" two_jobs "$1" "$2" "$T_KV_TWO_JOBS"
        grep -h -A4 'GB/s' "$outdir/out" | head -n 6 | sed 's/^/    /'
    done
    finish
    exit
fi
for tl in shm tcp; do
    for n in 2 4; do
        run_case "kv_transfer over $tl (-n $n)" 0 "$(ok $((n / 2)))" \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n $n --timeout 120 "$KV" $ARGS
    done
    run_case "kv_transfer over $tl, malloc'd pools, 3 prefill PEs to 1 decode PE (-n 4)" 0 \
        "$(ok 3)" env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 4 --timeout 120 "$KV" $ARGS \
        --malloc --prefill 3
done
# Frames of a batch held back for one send must go out when a lane is full
# (3 requests a lane), else the batch would wait for room forever.
run_case "kv_transfer over tcp, 3 lanes of 3 requests (-n 4)" 0 "$(ok 2)" \
    env SYMRAIL_TRANSPORTS=tcp SYMRAIL_TCP_LANES=3 SYMRAIL_TCP_MAX_OPS=3 \
    "$SYMRUN" -n 4 --timeout 120 "$KV" $ARGS
run_case "kv_transfer on one PE (both parts)" 0 "$(ok 1)" "$SYMRUN" -n 1 --timeout 60 "$KV" $ARGS
run_case "kv_transfer sees a spoiled word (-n 2)" 1 \
    '^kv_transfer: FAILED: 0 requests failed, [1-9][0-9]* words did not match' \
    "$SYMRUN" -n 2 --timeout 60 "$KV" $ARGS --corrupt
for tl in shm tcp; do
    for pair in "1 1" "2 2" "1 3"; do
        set -- $pair
        run_case "kv_transfer as two jobs over $tl: $2 prefill PEs connect to $1 decode PEs" 0 \
            "$(ok $2)" two_jobs "$1" "$2" $tl
    done
done
# The Python twin, where the binding and numpy are there.
PY=
for cand in "${PYTHON:-}" python3 /usr/bin/python3; do
    if [ -n "$cand" ] && [ "$cand" != : ] && "$cand" -c 'import numpy' 2>/dev/null; then
        PY=$cand
        break
    fi
done
# Not under --enable-sanitizers: the interpreter is not instrumented.
if [ -f "$top_srcdir/python/symrail/__init__.py" ] && [ -n "$PY" ] &&
    [ "${SR_SANITIZERS:-no}" = no ]; then
    for tl in shm tcp; do
        run_case "kv_transfer.py over $tl (-n 2)" 0 \
            '^kv_transfer.py: every byte of 24 requests \([0-9.]+ MiB\) verified$' \
            env SYMRAIL_TRANSPORTS=$tl PYTHONPATH="$top_srcdir/python" \
            SYMRAIL_PYTHON_LIB="$top_builddir/.libs" \
            "$SYMRUN" -n 2 --timeout 180 "$PY" "$top_srcdir/examples/kv_transfer.py" \
            --verify --layers 4 --blocks 96 --block-bytes 4K,16K --blocks-per-request 8,24 \
            --requests 6 --malloc
    done
else
    echo "kv_transfer.py not run: no python/symrail binding, or no Python 3 with numpy"
fi
run_case "kv_transfer refuses a request larger than a pool" 1 'do not fit' \
    "$SYMRUN" -n 2 --timeout 60 "$KV" --no-plot --layers 2 --blocks 8 --blocks-per-request 9
finish
