#!/bin/sh
# OpenSHMEM reductions under symrun with 1 to 4 PEs, on shared memory and TCP.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
P=$T/t_shmem_reduce
for tl in shm tcp; do
    for n in 1 2 3 4; do
        for part in team scan subteam toall large chain; do
            run_case "shmem reductions: $part (-n $n, $tl)" 0 "^ok: shmem reductions $part" \
                env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 300 "$P" "$part"
        done
    done
done
for n in 1 3; do
    run_case "a negative nreduce ends the job (-n $n)" nonzero \
        'shmem_long_sum_to_all: nreduce -1 is negative' \
        "$SYMRUN" -n "$n" --timeout 60 "$P" badcount
    run_case "a private dest ends the job (-n $n)" nonzero \
        'shmem_long_sum_reduce: .*(dest|not in the symmetric heap)' \
        "$SYMRUN" -n "$n" --timeout 60 "$P" badaddr
    run_case "SHMEM_TEAM_INVALID ends the job (-n $n)" nonzero \
        'shmem_long_sum_reduce: team .*not a valid team' \
        "$SYMRUN" -n "$n" --timeout 60 "$P" badteam
done
finish
