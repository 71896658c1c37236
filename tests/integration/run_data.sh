#!/bin/sh
# Global and static variables as symmetric memory: t_data under symrun with
# 1 to 4 PEs over shared memory and over TCP, small slices so that transfers
# are cut and sprayed, and the cases where the data segment is off.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for n in 1 2 3 4; do
    run_case "data: globals over shm (-n $n)" 0 '^ok: data: globals and statics symmetric' \
        env SYMRAIL_TRANSPORTS=shm "$SYMRUN" -n "$n" --timeout 120 "$T/t_data"
    run_case "data: globals over tcp, 16K slices (-n $n)" 0 \
        '^ok: data: globals and statics symmetric' \
        env SYMRAIL_TRANSPORTS=tcp SYMRAIL_SLICE_SIZE=16K T_NO_PTR=1 \
        "$SYMRUN" -n "$n" --timeout 120 "$T/t_data"
done
# Two nodes pretended: shm within pairs, TCP between them.
run_case "data: globals over shm and tcp at once (-n 4)" 0 \
    '^ok: data: globals and statics symmetric' \
    env SYMRAIL_TRANSPORTS=shm,tcp SYMRAIL_TEST_NODE_SIZE=2 SYMRAIL_SLICE_SIZE=16K \
    "$SYMRUN" -n 4 --timeout 120 "$T/t_data"
for tl in shm tcp; do
    run_case "data: a thread writing a global during init loses nothing ($tl)" 0 \
        '^ok: data: a thread wrote a global' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 60 "$T/t_data" threads
done
run_case "data: a put past the end of the data segment is refused" 0 \
    'runs past the end of the symmetric data segment' \
    "$SYMRUN" -n 2 --timeout 60 "$T/t_data" bad
run_case "data: symrail_free of a global is refused" 0 \
    'symrail_free\(0x[0-9a-f]+\): a global or static variable' \
    "$SYMRUN" -n 2 --timeout 60 "$T/t_data" bad
run_case "data: SYMRAIL_SYMMETRIC_DATA=0 refuses globals" 0 \
    'is a global or static variable, and those are not symmetric in this job' \
    env SYMRAIL_SYMMETRIC_DATA=0 "$SYMRUN" -n 2 --timeout 60 "$T/t_data" off
for n in 2 3; do
    run_case "data: a PE without the segment turns it off everywhere (-n $n)" 0 \
        'global and static variables are not symmetric in this job: PE [0-9] has a data segment of [0-9]+ bytes' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_data" mismatch
done
finish
