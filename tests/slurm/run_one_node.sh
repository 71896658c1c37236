#!/bin/sh
# The integration suite's representative programs under srun --mpi=pmix on
# a private one-node Slurm cluster (tests/slurm/cluster.sh): ring, RMA,
# atomics, collectives and barriers, OpenSHMEM, names, over shared memory
# and TCP, and a failing PE's status.  The bed goes at the end, also on
# failure; exits 77 only where Slurm, munge or root cannot be had.
#
#   make check-slurm
. "$top_srcdir/tests/slurm/common.sh"

bed_begin 1
for n in 1 4; do
    run_case "srun -n $n: ring example verifies its data" 0 '^ring: all data verified' \
        bed_srun -n "$n" "$E/ring"
done
run_case "srun -n 4: ring example over tcp" 0 '^ring: all data verified' \
    bed_srun -n 4 --export=ALL,SYMRAIL_TRANSPORTS=tcp,SYMRAIL_LOG=info "$E/ring"
count_case "srun -n 4: every PE has its TCP key from PMIx (srun gives no secret)" 4 \
    'info: tcp: job key random, drawn by PE 0 and handed out by the launcher'
count_case "srun -n 4: no PE warns of a derived TCP key" 0 'SYMRAIL_JOB_SECRET is not set'
# Two steps of one user: a task of the second cannot reach the first's PEs.
. "$top_srcdir/tests/integration/other_job.sh"
other_job "srun: another step" "bed_srun -n 2" "bed_srun -n 1"
# Over TCP alone, symrail_ptr to a PE on the same host is NULL (T_NO_PTR).
for tl in shm tcp; do
    noptr=
    [ $tl = tcp ] && noptr=,T_NO_PTR=1
    for t in t_rma t_atomic t_signal t_notify t_storm; do
        run_case "srun -n 4: $t over $tl" 0 '^ok: ' \
            bed_srun -n 4 --export=ALL,SYMRAIL_TRANSPORTS=$tl$noptr "$T/$t"
    done
done
run_case "srun -n 4: t_heap, allocation and no shm name left" 0 '^ok: no shared-memory names left' \
    bed_srun -n 4 "$T/t_heap"
run_case "srun -n 3: t_amo, atomics of every kind" 0 '^ok: atomics of both widths and every kind on 3 PEs' \
    bed_srun -n 3 "$T/t_amo"
run_case "srun -n 4: t_coll, teams, collectives and barriers" 0 '^ok: teams and collectives on 4 PEs' \
    bed_srun -n 4 "$T/t_coll"
for tl in shm tcp; do
    run_case "srun -n 4: OpenSHMEM t_sh_rma over $tl" 0 \
        '^ok: shmem setup, memory, RMA of 24 types, contexts, init again \(4 PEs\)' \
        bed_srun -n 4 --export=ALL,SYMRAIL_TRANSPORTS=$tl "$S/t_sh_rma"
done
run_case "srun -n 4: shmem_hello" 0 '^hello from PE 3 of 4: PE 2 says hi' \
    bed_srun -n 4 "$E/shmem_hello"
count_case "srun -n 4: every PE of shmem_hello said hello" 4 '^hello from PE [0-3] of 4'
run_case "srun -n 2: a PE that aborts gives srun a failing status" nonzero \
    'symrail_putmem: pe 1000 is out of range' \
    bed_srun -n 2 "$T/t_badinput" abort
run_case "names: run_names_srun.sh runs in the bed (no skip)" 0 '^[1-9][0-9]* passed, 0 failed' \
    env SR_SLURM_BED="$BED" SYMRAIL_TEST_SRUN="srun --mpi=pmix" \
    sh "$top_srcdir/tests/integration/run_names_srun.sh"
bed_end
finish
