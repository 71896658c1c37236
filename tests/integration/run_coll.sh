#!/bin/sh
# Teams and collectives under symrun, 1 to 6 PEs (odd folds, 2-d grids with
# a short last row), over shared memory and over TCP.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for tl in shm tcp; do
    for n in 1 2 3 4 5 6; do
        iters=200
        [ "$tl" = tcp ] && iters=40
        run_case "teams and collectives ($tl, -n $n)" 0 '^ok: teams and collectives' \
            env SYMRAIL_TRANSPORTS=$tl SYMRAIL_TEAM_SCRATCH=8K \
            "$SYMRUN" -n "$n" --timeout 300 "$T/t_coll" $iters
    done
done
for tl in shm tcp; do
    run_case "two teams' collectives on two threads at once ($tl, -n 3)" 0 \
        '^ok: collectives of two teams on two threads' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_TEAM_SCRATCH=8K "$SYMRUN" -n 3 --timeout 300 \
        "$T/t_coll" threads
done
run_case "a destroyed team is refused" 0 '^ok: a destroyed team is refused' \
    "$SYMRUN" -n 3 --timeout 60 "$T/t_coll" badteam
finish
