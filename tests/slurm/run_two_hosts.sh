#!/bin/sh
# The integration suite's representative programs under srun --mpi=pmix
# across two namespace-hosts, h1 and h2, of a private Slurm cluster
# (tests/slurm/cluster.sh): 2 PEs per host, shared memory within a host,
# TCP across.  Namespaces, bridge, daemons and directory go at the end,
# also on failure; exits 77 only where namespaces, Slurm or munge cannot
# be had.  Run it under `flock /tmp/symrail-heavy.lock` where others use
# namespaces too.
#
#   make check-slurm        (SR_SLURM_NET=10.98.0 picks the /24 to use)
. "$top_srcdir/tests/slurm/common.sh"

bed_begin 2
# PEs on the other host have no load/store view: t_rma skips symrail_ptr.
export T_NO_PTR=1
run_case "srun -N 2 -n 4: the PEs ran on two hosts" 0 'h2 [0-9]' \
    bed_srun -N 2 -n 4 sh -c 'echo "$(hostname) $SLURM_PROCID"'
count_case "srun -N 2 -n 4: two PEs on each host" 2 '^h1 [0-9]$'
# Cyclic: every PE's ring neighbour is on the other host.
run_case "srun -N 2 -n 4 cyclic: ring example verifies its data across hosts" 0 \
    '^ring: all data verified' bed_srun -N 2 -n 4 -m cyclic "$E/ring"
# Block: PEs 0 and 1 on h1, 2 and 3 on h2; each PE says which transport
# reaches each PE (itself included).
run_case "srun -N 2 -n 4 block: t_atomic, shm within a host, tcp across" 0 '^ok: ' \
    bed_srun -N 2 -n 4 -m block --export=ALL,SYMRAIL_LOG=debug "$T/t_atomic"
count_case "srun -N 2 -n 4 block: PEs on h1 reach PEs 0 and 1 over shm" 4 \
    '^symrail h1:[0-9]+:[01] debug: PE [01] reached over shm'
count_case "srun -N 2 -n 4 block: PEs on h2 reach PEs 2 and 3 over shm" 4 \
    '^symrail h2:[0-9]+:[23] debug: PE [23] reached over shm'
count_case "srun -N 2 -n 4 block: PEs on h1 reach PEs 2 and 3 over tcp" 4 \
    '^symrail h1:[0-9]+:[01] debug: PE [23] reached over tcp'
count_case "srun -N 2 -n 4 block: PEs on h2 reach PEs 0 and 1 over tcp" 4 \
    '^symrail h2:[0-9]+:[23] debug: PE [01] reached over tcp'
count_case "srun -N 2 -n 4 block: no PE is reached over two transports" 16 \
    ' debug: PE [0-3] reached over '
# Cyclic: every PE's right neighbour is on the other host (T_NO_PTR).
run_case "srun -N 2 -n 4 cyclic: t_rma" 0 '^ok: put_nbi/get_nbi' \
    bed_srun -N 2 -n 4 -m cyclic "$T/t_rma"
for t in t_atomic t_signal t_notify t_storm t_coll; do
    run_case "srun -N 2 -n 4 cyclic: $t" 0 '^ok: ' bed_srun -N 2 -n 4 -m cyclic "$T/$t"
done
run_case "srun -N 2 -n 4 cyclic: OpenSHMEM t_sh_rma" 0 \
    '^ok: shmem setup, memory, RMA of 24 types, contexts, init again \(4 PEs\)' \
    bed_srun -N 2 -n 4 -m cyclic "$S/t_sh_rma"
run_case "srun -N 2 -n 2: a PE that aborts gives srun a failing status" nonzero \
    'symrail_putmem: pe 1000 is out of range' \
    bed_srun -N 2 -n 2 "$T/t_badinput" abort
run_case "names: run_names_srun.sh across the two hosts" 0 '^[1-9][0-9]* passed, 0 failed' \
    env SR_SLURM_BED="$BED" SYMRAIL_TEST_SRUN="srun --mpi=pmix -N 2" \
    sh "$top_srcdir/tests/integration/run_names_srun.sh"
bed_end
finish
