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
for tl in shm tcp; do
    for n in 1 2 3 4; do
        run_case "shmem teams and collectives ($tl, -n $n)" 0 '^ok: shmem teams and collectives' \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 300 "$T/t_shmem_coll"
    done
done
# Bad input: one line naming the call and the argument, and the job ends.
bad() {
    run_case "$1 is refused" nonzero "$2" "$SYMRUN" -n 3 --timeout 60 "$T/t_shmem_coll" bad "$1"
}
bad badteam 'shmem_team_sync: team .* is not a valid team'
bad root 'shmem_long_broadcast: PE_root 6 is not a member of the team'
bad psync 'shmem_broadcast64: pSync 0x[0-9a-f]+ is (not|neither) in the symmetric heap'
bad nonmember 'shmem_barrier: PE 0 is not in the active set'
bad overrun 'shmem_long_fcollect: dest 0x[0-9a-f]+ \+ [0-9]+ bytes runs past the end'
run_case "a heap too small for the teams' reserved slots is a clear init error" nonzero \
    "SYMRAIL_HEAP_SIZE=262144 leaves too little room for the teams" \
    env SYMRAIL_HEAP_SIZE=256K "$SYMRUN" -n 2 --timeout 60 "$T/t_coll" 1
run_case "a destroyed team is refused" 0 '^ok: a destroyed team is refused' \
    "$SYMRUN" -n 3 --timeout 60 "$T/t_coll" badteam
finish
