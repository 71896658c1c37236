#!/bin/sh
# t_sh_more (split_2d, active-set and team collectives, sync_all, context
# RMA, the bitwise and counting atomics) under symrun -n 1..4, over shared
# memory and over TCP.
. "${top_srcdir:-.}/tests/integration/lib.sh"
S=$top_builddir/tests/shmem

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for tl in shm tcp; do
    for n in 1 2 3 4; do
        run_case "$tl: the calls the other shmem tests leave out (-n $n)" 0 \
            "^ok: shmem split_2d, active-set and team collectives, sync_all, contexts, atomics \\($n PEs\\)" \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 200 "$S/t_sh_more"
    done
done
finish
