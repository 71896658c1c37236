#!/bin/sh
# Names under Open MPI's mpirun, whose daemons keep published names: the
# same checks as under symrun.
. "${top_srcdir:-.}/tests/integration/lib.sh"

MPIRUN=${MPIRUN:-$(command -v mpirun)}
if [ -z "$MPIRUN" ] || [ ! -x "$MPIRUN" ]; then
    echo "SKIP: mpirun not found (apt-get install openmpi-bin)"
    exit 77
fi
for n in 2 3; do
    run_case "names: t_names under mpirun -np $n" 0 "^ok: names done \\($n PEs\\)" \
        timeout 300 "$MPIRUN" --allow-run-as-root --oversubscribe -np "$n" "$T/t_names"
done
finish
