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
finish
