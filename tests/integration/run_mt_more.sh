#!/bin/sh
# The cases of the other drivers where the library runs threads of the
# application's or its own beside the main one, for `make check-tsan`
# (which runs this under ThreadSanitizer; `make check` runs each case in its
# own driver): two teams' collectives on two threads, a thread writing a
# global during init, names through the launcher's PMIx threads, and the
# thread that watches local peers under SYMRAIL_ON_PEER_FAILURE=report.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for tl in shm tcp; do
    run_case "two teams' collectives on two threads at once ($tl, -n 3)" 0 \
        '^ok: collectives of two teams on two threads' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_TEAM_SCRATCH=8K "$SYMRUN" -n 3 --timeout 300 \
        "$T/t_coll" threads
    run_case "data: a thread writing a global during init loses nothing ($tl)" 0 \
        '^ok: data: a thread wrote a global' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 120 "$T/t_data" threads
done
for n in 2 3; do
    run_case "names: t_names under symrun -n $n" 0 "^ok: names done \\($n PEs\\)" \
        "$SYMRUN" -n "$n" --timeout 300 "$T/t_names"
done
run_case "report: the watcher sees a dead local PE (shm)" 137 \
    '^ok: the first put to the dead PE 1 fails' \
    env SYMRAIL_TRANSPORTS=shm SYMRAIL_ON_PEER_FAILURE=report SYMRAIL_OP_TIMEOUT=2s \
    "$SYMRUN" -n 2 --timeout 120 "$T/t_peerfail" first put
# The killed PE's status is the job's: a report of the survivor's would not
# change it.
count_case "report: no ThreadSanitizer report from the survivor" 0 'ThreadSanitizer'
finish
