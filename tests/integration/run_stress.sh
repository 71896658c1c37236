#!/bin/sh
# Stress (t_stress): random mixes of every kind of operation from 3 threads
# per PE on 3 contexts each, every byte checked, over shared memory and TCP
# with 2 and 3 PEs, then with one byte corrupted, which must fail.
# STRESS_SECONDS (default 10) sets how long each case runs; STRESS_SEED
# replays a seed that a failure printed.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
secs=${STRESS_SECONDS:-10}
seed=${STRESS_SEED:-20261202}
for tl in shm tcp; do
    for n in 2 3; do
        run_case "$tl: stress for $secs s, 3 threads per PE, every byte checked (-n $n)" 0 \
            '^ok: stress: [1-9][0-9]* operations' \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n $n --timeout $((secs + 300)) \
            "$T/t_stress" --seconds "$secs" --seed "$seed"
        count_case "$tl: stress printed its seed and its totals (-n $n)" 2 \
            "^stress: (seed $seed,|totals: put [1-9])"
    done
done
# The checks can fail: one flipped byte of the heap is caught by its owner's
# checksum, and (flipped after the owners' checks) by its writer's reads.
run_case "shm: stress with one byte corrupted fails in its owner's check (-n 2)" nonzero \
    'FAIL .*mismatch: checksum of the heap region of \(PE 1, thread 0\) here' \
    env SYMRAIL_TRANSPORTS=shm "$SYMRUN" -n 2 --timeout 300 \
    "$T/t_stress" --seconds 2 --seed "$seed" --corrupt
run_case "tcp: stress with one byte corrupted fails in its writer's reads (-n 2)" nonzero \
    'FAIL .*mismatch: final read .* of the region of \(PE 1, thread 0\) on PE 0 is' \
    env SYMRAIL_TRANSPORTS=tcp "$SYMRUN" -n 2 --timeout 300 \
    "$T/t_stress" --seconds 2 --seed "$seed" --corrupt-late
finish
