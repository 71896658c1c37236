#!/bin/sh
# Segments and batches (t_seg) under symrun with 1 to 3 PEs, over shared
# memory and over TCP, with small slices so that tasks are cut and sprayed.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
OK='^ok: seg: segments, paged batches, notifications and stale descriptors'
for n in 1 2 3; do
    run_case "seg: segments and batches over shm (-n $n)" 0 "$OK" \
        env SYMRAIL_TRANSPORTS=shm "$SYMRUN" -n "$n" --timeout 120 "$T/t_seg"
    run_case "seg: segments and batches over tcp, 16K slices (-n $n)" 0 "$OK" \
        env SYMRAIL_TRANSPORTS=tcp SYMRAIL_SLICE_SIZE=16K "$SYMRUN" -n "$n" --timeout 120 \
        "$T/t_seg"
done
for n in 2 3; do
    run_case "seg: names asked of the peers, not of the launcher (-n $n)" 0 "$OK" \
        env SYMRAIL_TEST_NAMES_LOCAL=1 "$SYMRUN" -n "$n" --timeout 120 "$T/t_seg"
done
run_case "seg: every PE its own target (-n 2)" 0 "$OK" \
    env T_SEG_SELF=1 "$SYMRUN" -n 2 --timeout 120 "$T/t_seg"
for tl in shm tcp; do
    run_case "seg: stale accesses while the owner's atomics and puts are in flight ($tl)" 0 \
        '^ok: stale accesses while the owner' env SYMRAIL_TRANSPORTS=$tl \
        "$SYMRUN" -n 2 --timeout 120 "$top_builddir/tests/rxe/t_stale_inflight"
    run_case "batch: its notification finds no slot for SYMRAIL_OP_TIMEOUT ($tl)" 0 \
        '^ok: batch: a notification with no free slot ends the batch with SYMRAIL_ERR_TIMEOUT' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=2 SYMRAIL_OP_TIMEOUT=2s T_OP_TIMEOUT_S=2 \
        "$SYMRUN" -n 2 --timeout 120 "$T/t_batch" notify-timeout
done
# Copies into a mapped segment ring the target's doorbell once a run of
# tasks, not once a task (sleeps counted by t_batch).
run_case "batch: a sleeping target is woken by batches, not by their blocks (shm)" 0 \
    '^ok: batch: a sleeping target is woken by batches' \
    env SYMRAIL_TRANSPORTS=shm SYMRAIL_SPIN_COUNT=64 SYMRAIL_SPIN_US=0 \
    "$SYMRUN" -n 2 --timeout 120 "$T/t_batch" wakes
finish
