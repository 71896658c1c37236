#!/bin/sh
# Names under Slurm's srun --mpi=pmix, on a Slurm cluster that is already
# running (SYMRAIL_TEST_SRUN: the srun command line to use, default
# "srun --mpi=pmix"); make check-slurm runs it in the private cluster of
# tests/slurm/cluster.sh.  Slurm's PMIx plugin may have no publish/lookup: then
# every call must say SYMRAIL_ERR_UNSUPPORTED, so that the library falls back
# to its own channel.
. "${top_srcdir:-.}/tests/integration/lib.sh"

SRUN=${SYMRAIL_TEST_SRUN:-srun --mpi=pmix}
set -- $SRUN
if ! command -v "$1" >/dev/null 2>&1; then
    echo "SKIP: $1 not found (Slurm is not installed)"
    exit 77
fi
if ! timeout 20 sinfo -h >/dev/null 2>&1; then
    echo "SKIP: no Slurm controller answers (sinfo failed): make check-slurm runs this in a cluster of its own"
    exit 77
fi
if ! timeout 20 "$@" --mpi=list 2>&1 | grep -q pmix; then
    echo "SKIP: this srun has no PMIx plugin"
    exit 77
fi
for n in 2 3; do
    run_case "names: t_names under $SRUN -n $n" 0 \
        "^ok: (names done \\($n PEs\\)|this launcher: names unsupported)" \
        env T_NAMES_UNSUPPORTED_OK=1 timeout 120 "$@" -n "$n" --overcommit "$T/t_names"
    if grep -q '^ok: this launcher: names unsupported' "$outdir/out"; then
        count_case "names: each PE says once that $SRUN has no names" "$n" \
            'info: names: the launcher has no PMIx_Publish'
    fi
done
finish
