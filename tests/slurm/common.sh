# Shared by the check-slurm drivers: the integration library, the bed, a
# trap that stops the bed on every exit, and the checks after it stopped.
: "${top_builddir:?top_builddir must be set (run through make check-slurm)}"
: "${top_srcdir:?}"
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/slurm/cluster.sh"
S=$top_builddir/tests/shmem
E=$top_builddir/examples

skip() {
    echo "SKIP: $*"
    exit 77
}

trap 'slurm_bed_stop; rm -rf "$outdir"' EXIT
trap 'exit 1' INT TERM HUP

# Shared-memory objects of PEs started under srun (their job is the step's
# PMIx namespace, slurm.pmix.JOB.STEP).
srun_shm() {
    ls /dev/shm 2>/dev/null | grep -c '^symrail-slurm\.pmix\.' || true
}

# bed_begin HOSTS: starts the bed, or fails the driver saying why.
bed_begin() {
    for p in "$E/ring" "$T/t_rma" "$S/t_sh_rma"; do
        [ -x "$p" ] || skip "$p not built (run through make check-slurm)"
    done
    shm_before=$(srun_shm)
    slurm_bed_start "$1" || { echo "FAIL: the Slurm bed ($1 hosts) did not start"; exit 1; }
    echo "PASS: the Slurm bed is up: $(bed_env sinfo -h -N -o '%N %t' | tr '\n' ' ')"
    npass=$((npass + 1))
}

# bed_end: stops the bed and checks that nothing it started, and no
# shared-memory object of the PEs, is left.
bed_end() {
    slurm_bed_stop
    why=$(bed_gone)
    got=$(srun_shm)
    [ "$got" -gt "$shm_before" ] && why="$why $((got - shm_before)) shared-memory objects left in /dev/shm"
    if [ -z "$why" ]; then
        echo "PASS: the bed stopped: no daemon, step, task, namespace or directory left"
        npass=$((npass + 1))
    else
        echo "FAIL: the bed did not stop cleanly: $why"
        ps -eo pid,ppid,args | grep -E 'slurm|munge' | grep -v grep | sed 's/^/    | /'
        nfail=$((nfail + 1))
    fi
}
