#!/bin/sh
# OpenSHMEM point-to-point synchronisation, signals and locks under symrun
# with 1, 2, 3 and 4 PEs, over shared memory and over TCP; bad arguments end
# the job with one line naming the call and the argument.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
S=$top_builddir/tests/shmem
for tl in shm tcp; do
    for n in 1 2 3 4; do
        run_case "p2p waits and tests ($tl, -n $n)" 0 '^ok: p2p waits and tests' \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n $n --timeout 300 "$S/t_p2p"
        run_case "signals ($tl, -n $n)" 0 '^ok: signals' \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n $n --timeout 300 "$S/t_sig"
        run_case "locks ($tl, -n $n)" 0 '^ok: locks' \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n $n --timeout 300 "$S/t_lock"
    done
done
# More PEs than this machine has CPUs, contending for one lock.
run_case "locks, 8 PEs contending (shm)" 0 '^ok: locks' \
    "$SYMRUN" -n 8 --timeout 300 "$S/t_lock" 500

bad() {
    run_case "$1" nonzero "$2" "$SYMRUN" -n 2 --timeout 60 "$S/$3" bad "$4"
}
bad "wait_until on a private variable" 'shmem_long_wait_until: ivar 0x[0-9a-f]+ is (not|neither) in the symmetric heap' t_p2p notsym
bad "test with an invalid cmp" 'shmem_long_test: cmp 42 is none of SHMEM_CMP_' t_p2p cmp
bad "test_all on misaligned ivars" 'shmem_long_test_all: ivars 0x[0-9a-f]+ is not aligned to 8 bytes' t_p2p align
bad "test_some without indices" 'shmem_long_test_some: indices is NULL' t_p2p indices
bad "wait_until_any_vector without values" 'shmem_long_wait_until_any_vector: cmp_values is NULL' t_p2p vector
bad "signal_add to a PE out of range" 'shmem_signal_add: pe 2 is out of range \(0\.\.1\)' t_sig pe
bad "put_signal with a private sig_addr" 'shmem_putmem_signal: sig_addr 0x[0-9a-f]+ is (not|neither) in the symmetric heap' t_sig notsym
bad "put_signal with an invalid sig_op" 'shmem_putmem_signal: sig_op 7 is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD' t_sig sigop
bad "signal_wait_until with an invalid cmp" 'shmem_signal_wait_until: cmp -1 is none of' t_sig cmp
bad "pe_quiet of a PE out of range" 'shmem_pe_quiet: pe 2 is out of range' t_sig pequiet
bad "put_signal to a private dest" 'shmem_long_put_signal: dest 0x[0-9a-f]+ is (not|neither) in the symmetric heap' t_sig dest
bad "set_lock on a private lock" 'shmem_set_lock: lock 0x[0-9a-f]+ is (not|neither) in the symmetric heap' t_lock notsym
bad "clear_lock of a lock not held" 'shmem_clear_lock: lock 0x[0-9a-f]+ is not held by this PE' t_lock notheld
bad "set_lock twice" 'shmem_set_lock: lock 0x[0-9a-f]+ is held by this PE already' t_lock twice
for tl in shm tcp; do
    run_case "a wait on a departed peer ends with an error ($tl)" nonzero \
        'shmem_long_wait_until_all.*(gone|unresponsive)' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 60 "$S/t_p2p" bad gone
done
finish
