#!/bin/sh
# Segments over TCP (t_tcp_seg) with 2 and 3 PEs: sliced transfers over every
# lane, stale descriptors after deregistration, a deregistration racing with
# the peer's writes.  Each PE's stale key is logged once, however often it
# is used.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
export SYMRAIL_TRANSPORTS=tcp
OK='^ok: tcp segments: sliced transfers, stale descriptors, a racing deregistration'
for n in 2 3; do
    for lanes in 1 3; do
        run_case "tcp segments (-n $n, $lanes lanes, 64K slices)" 0 "$OK" \
            env SYMRAIL_TCP_LANES=$lanes SYMRAIL_SLICE_SIZE=64K "$SYMRUN" -n "$n" \
            --timeout 120 "$T/t_tcp_seg"
        # The stale phase uses one old key per PE; the race adds one more.
        logged=$(grep -c 'behind key .* is gone' "$outdir/out" || true)
        if [ "$logged" -ge "$n" ] && [ "$logged" -le $((2 * n)) ]; then
            echo "PASS: tcp segments (-n $n, $lanes lanes): stale keys logged once each"
            npass=$((npass + 1))
        else
            echo "FAIL: tcp segments (-n $n, $lanes lanes): $logged stale-key lines for $n PEs"
            nfail=$((nfail + 1))
        fi
    done
done
finish
