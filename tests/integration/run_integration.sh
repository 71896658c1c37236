#!/bin/sh
# Integration suite under symrun with 2 and 4 PEs.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for n in 2 4; do
    for t in t_rma t_signal t_notify t_atomic t_heap t_badinput t_storm; do
        run_case "$t -n $n" 0 '^ok: ' "$SYMRUN" -n "$n" --timeout 300 "$T/$t"
    done
    run_case "symrail_putmem with a bad PE aborts the job (-n $n)" nonzero \
        'symrail_putmem: pe 1000 is out of range' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_badinput" abort
    run_case "waiting on a departed peer ends in an error (-n $n)" 0 \
        'ok: waiting on a departed peer fails with: peer process is gone' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_badinput" peergone
done
run_case "a peer gone mid-transfer gives an error" 0 \
    'ok: a peer killed mid-transfer gives "peer process is gone"' \
    "$SYMRUN" -n 2 --timeout 60 "$T/t_badinput" killmid
for tl in shm; do
    run_case "a stopped peer is unresponsive, then works again ($tl)" 0 \
        '^ok: a stopped peer is unresponsive' \
        env SYMRAIL_OP_TIMEOUT=2s SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 60 "$T/t_liveness"
done
# Knobs: a tiny heap makes exhaustion happen for real; few notify slots force
# senders to wait for room; an unknown variable is warned about.
run_case "small heap exhaustion message" 0 'raise SYMRAIL_HEAP_SIZE' \
    env SYMRAIL_HEAP_SIZE=64M "$SYMRUN" -n 2 --timeout 120 "$T/t_heap"
run_case "notify with 2 slots per sender" 0 '^ok: notify' \
    env SYMRAIL_NOTIFY_SLOTS=2 "$SYMRUN" -n 4 --timeout 120 "$T/t_notify"
run_case "unknown SYMRAIL_ variable warned about" 0 'unknown variable SYMRAIL_BOGUS' \
    env SYMRAIL_BOGUS=1 "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "bad SYMRAIL_HEAP_SIZE is a clear init error" nonzero \
    "SYMRAIL_HEAP_SIZE='lots' is not valid" \
    env SYMRAIL_HEAP_SIZE=lots "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "unknown transport is a clear init error" nonzero \
    "unknown transport 'ib'" \
    env SYMRAIL_TRANSPORTS=ib "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "singleton without a launcher" 0 '^hello from PE 0 of 1$' \
    env -u PMIX_NAMESPACE "$top_builddir/examples/hello"
finish
