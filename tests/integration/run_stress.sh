#!/bin/sh
# Stress (t_stress): random mixes of every kind of operation from 3 threads
# per PE on 3 contexts each, every byte checked, over shared memory and TCP
# with 2 and 3 PEs, then the same with one byte corrupted, which must fail.
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
# The checks can fail: one flipped byte of the heap is caught.
for tl in shm tcp; do
    run_case "$tl: stress with one byte corrupted fails with a mismatch (-n 2)" nonzero \
        'FAIL .*mismatch: (checksum of the heap region of \(PE 1, thread 0\)|final read .* of the region of \(PE 1, thread 0\) on PE 0)' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 300 \
        "$T/t_stress" --seconds 2 --seed "$seed" --corrupt
done
finish
