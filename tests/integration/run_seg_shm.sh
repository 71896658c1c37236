#!/bin/sh
# Segments between local peers over shared memory (t_seg_shm): a malloc'd
# pool by cross-memory attach and an allocated one mapped, stale descriptors,
# deregistrations racing with copies; the log says which path each segment
# takes; nothing is left in /dev/shm (lib.sh checks every case).
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
OK='^ok: seg_shm: both paths, stale descriptors, deregistration racing with copies'
probe=$(env SYMRAIL_TRANSPORTS=shm "$SYMRUN" -n 2 --timeout 120 "$T/t_seg_shm" 2>&1)
if [ $? -eq 77 ]; then
    echo "SKIP: $(echo "$probe" | grep -m1 -E 'not permitted|SKIP')"
    exit 77
fi
for n in 2 3; do
    run_case "seg_shm: both paths, stale, races (-n $n)" 0 "$OK" \
        env SYMRAIL_TRANSPORTS=shm "$SYMRUN" -n "$n" --timeout 120 "$T/t_seg_shm"
done
run_case "seg_shm: the log names cross-memory attach for a malloc'd pool" 0 \
    'segment [0-9]+ of PE [0-9]+ .* reached by cross-memory attach to process' \
    env SYMRAIL_TRANSPORTS=shm SYMRAIL_LOG=info "$SYMRUN" -n 2 --timeout 120 "$T/t_seg_shm"
run_case "seg_shm: the log names the mapping of an allocated pool" 0 \
    'segment [0-9]+ of PE [0-9]+ .* mapped from /symrail-' \
    env SYMRAIL_TRANSPORTS=shm SYMRAIL_LOG=info "$SYMRUN" -n 2 --timeout 120 "$T/t_seg_shm"
for n in 1 2; do
    run_case "seg_shm: an id whose deregistration timed out is free again once its copy left (-n $n)" \
        0 '^ok: seg: an id whose deregistration timed out is used again' \
        env SYMRAIL_TRANSPORTS=shm SYMRAIL_OP_TIMEOUT=300ms SYMRAIL_SHM_SEG_SLOTS=16 \
        "$SYMRUN" -n "$n" --timeout 120 "$T/t_seg_late"
done
finish
