#!/bin/sh
# The same programs under Open MPI's mpirun: symrail needs only a PMIx server.
. "${top_srcdir:-.}/tests/integration/lib.sh"

MPIRUN=${MPIRUN:-$(command -v mpirun)}
if [ -z "$MPIRUN" ] || [ ! -x "$MPIRUN" ]; then
    echo "SKIP: mpirun not found (apt-get install openmpi-bin)"
    exit 77
fi
mpi() { timeout 300 "$MPIRUN" --allow-run-as-root --oversubscribe -np "$@"; }
run_case "t_rma under mpirun -np 2" 0 '^ok: ring put/get' mpi 2 "$T/t_rma"
run_case "t_rma under mpirun -np 4" 0 '^ok: put_nbi' mpi 4 "$T/t_rma"
run_case "t_signal under mpirun -np 3" 0 '^ok: signal comparisons' mpi 3 "$T/t_signal"
run_case "t_atomic under mpirun -np 4" 0 '^ok: compare_swap lock' mpi 4 "$T/t_atomic"

# A PE killed during init (rank 1, once its objects exist, while rank 0
# never starts symrail) leaves them behind; nobody under mpirun knows their
# names, so a later job's init must remove them, as their creator is gone.
# The names are taken just before the kill: suites running beside this one
# start jobs too, and any of their inits may be the one that cleans.
env SYMRAIL_HEAP_SIZE=64M T_STALE="$outdir/shm.stale" timeout 60 "$MPIRUN" --allow-run-as-root \
    --oversubscribe -x T_STALE -np 2 \
    sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
               (i=0; while [ $i -lt 200 ] && [ "$(ls /dev/shm | grep -c "[.]p$$\$")" -lt 2 ]; do
                    sleep 0.1; i=$((i + 1)); done
                ls /dev/shm | grep "[.]p$$\$" >"$T_STALE"; kill -KILL $$) &
               exec "$0"; fi
           exec sleep 25' "$T/t_rma" >"$outdir/killed.out" 2>&1
if [ ! -s "$outdir/shm.stale" ]; then
    echo "FAIL: stale objects of a PE killed in init: the killed PE left nothing to clean (setup)"
    sed 's/^/    | /' "$outdir/killed.out" | tail -n 10
    nfail=$((nfail + 1))
else
    run_case "t_rma under mpirun -np 2 after a PE was killed in init" 0 '^ok: ring put/get' \
        mpi 2 "$T/t_rma"
    left=$(cd /dev/shm && cat "$outdir/shm.stale" | while read -r f; do [ -e "$f" ] && echo "$f"; done)
    if [ -z "$left" ]; then
        echo "PASS: stale objects of a PE killed in init removed by the next init"
        npass=$((npass + 1))
    else
        echo "FAIL: stale objects of a PE killed in init removed by the next init: left" $left
        (cd /dev/shm && rm -f $left)
        nfail=$((nfail + 1))
    fi
fi
finish
