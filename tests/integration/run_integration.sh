#!/bin/sh
# Integration suite under symrun with 2 and 4 PEs.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for n in 1 2 3 4; do
    run_case "t_amo -n $n" 0 '^ok: atomics of both widths' "$SYMRUN" -n "$n" --timeout 120 "$T/t_amo"
    run_case "t_shmem_amo -n $n" 0 '^ok: shmem atomics' \
        "$SYMRUN" -n "$n" --timeout 120 "$T/t_shmem_amo"
done
for bad in "pe|shmem_int_atomic_add: pe [0-9]+ is out of range" \
    "misaligned|shmem_long_atomic_fetch_add: dest 0x[0-9a-f]+ is not aligned to 8 bytes" \
    "local|shmem_ctx_int_atomic_fetch_inc: dest 0x[0-9a-f]+ is (not|neither) in the symmetric heap"; do
    run_case "shmem atomic with a bad ${bad%%|*} ends the job" nonzero "${bad#*|}" \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_shmem_amo" "${bad%%|*}"
done
for n in 2 4; do
    for t in t_rma t_signal t_notify t_atomic t_heap t_badinput t_storm; do
        run_case "$t -n $n" 0 '^ok: ' "$SYMRUN" -n "$n" --timeout 300 "$T/$t"
    done
    run_case "symrail_putmem with a bad PE aborts the job (-n $n)" nonzero \
        'symrail_putmem: pe 1000 is out of range' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_badinput" abort
    # Collective calls that differ between PEs end the job, naming both.
    run_case "different symrail_malloc sizes end the job (-n $n)" nonzero \
        'PE [0-9] made an allocation of (1024|1048576) bytes .*PE [0-9] made an allocation of (1048576|1024) bytes' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_collmis" size
    run_case "a symrail_free missing on one PE ends the job (-n $n)" nonzero \
        'PE [0-9] made (symrail_free of a block of 4096 bytes|an allocation of 2048 bytes).*PE [0-9] made (an allocation of 2048 bytes|symrail_free of a block of 4096 bytes)' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_collmis" free
    run_case "barrier_all against symrail_malloc ends the job (-n $n)" nonzero \
        'PE [0-9] made (a barrier|an allocation of 2048).*PE [0-9] made (an allocation of 2048|a barrier)' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_collmis" barrier
    run_case "a different SYMRAIL_HEAP_SIZE on one PE stops init (-n $n)" nonzero \
        'SYMRAIL_HEAP_SIZE differs between PEs: PE [0-9] has [0-9]+ bytes, PE [0-9] has [0-9]+' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_collmis" heapsize
    run_case "matching collective calls (-n $n)" 0 '^ok: matching collective calls' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_collmis" same
    run_case "waiting on a departed peer ends in an error (-n $n)" 0 \
        'ok: waiting on a departed peer fails with: peer process is gone' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_badinput" peergone
done
run_case "a peer gone mid-transfer gives an error" 0 \
    'ok: a peer killed mid-transfer gives "peer process is gone"' \
    "$SYMRUN" -n 2 --timeout 60 "$T/t_badinput" killmid
# tcp_remote: TCP with the peer counted on another node, so that no
# process id tells what it is and only its silence does.
for tl in shm tcp tcp_remote; do
    node=0
    [ "$tl" = tcp_remote ] && node=1
    run_case "a stopped peer is unresponsive, then works again ($tl)" 0 \
        '^ok: a stopped peer is unresponsive' \
        env SYMRAIL_OP_TIMEOUT=2s SYMRAIL_TRANSPORTS=${tl%_remote} SYMRAIL_TEST_NODE_SIZE=$node \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_liveness"
    for call in sync malloc; do
        run_case "$call with a stopped peer fails in time, then works again ($tl)" 0 \
            "^ok: a stopped peer is unresponsive .*\\($call\\)" \
            env T_CALL=$call SYMRAIL_OP_TIMEOUT=2s SYMRAIL_TRANSPORTS=${tl%_remote} \
            SYMRAIL_TEST_NODE_SIZE=$node "$SYMRUN" -n 2 --timeout 60 "$T/t_liveness"
        count_case "the failed $call names the stopped peer ($tl)" 1 \
            'PE 1.*unresponsive|unresponsive.*PE 1'
    done
done
# Knobs: a tiny heap makes exhaustion happen for real; few notify slots force
# senders to wait for room; an unknown variable is warned about.
run_case "small heap exhaustion message" 0 'raise SYMRAIL_HEAP_SIZE' \
    env SYMRAIL_HEAP_SIZE=64M "$SYMRUN" -n 2 --timeout 120 "$T/t_heap"
run_case "notify with 2 slots per sender" 0 '^ok: notify' \
    env SYMRAIL_NOTIFY_SLOTS=2 "$SYMRUN" -n 4 --timeout 120 "$T/t_notify"
for tl in shm tcp; do
    run_case "a sender stalls while its receiver does not consume (2 slots, $tl)" 0 \
        '^ok: notify: a sender stalls' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=2 SYMRAIL_OP_TIMEOUT=1s \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_notify" consume
    run_case "notify sender waits for a sleeping receiver (2 slots, $tl)" 0 \
        '^ok: notify sender stalled' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=2 \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_notify" stall
    run_case "notify to a receiver that never consumes times out (2 slots, $tl)" 0 \
        '^ok: notify to a receiver that does not consume times out after 2 slots' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=2 SYMRAIL_OP_TIMEOUT=1s \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_notify" stuck
    count_case "the timeout names the receiver, once ($tl)" 1 \
        'error: notify_send to PE 1 \(its slots are full\): no progress for 1000 ms'
done
run_case "unknown SYMRAIL_ variable warned about" 0 'unknown variable SYMRAIL_BOGUS' \
    env SYMRAIL_BOGUS=1 "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "bad SYMRAIL_HEAP_SIZE is a clear init error" nonzero \
    "SYMRAIL_HEAP_SIZE='lots' is not valid" \
    env SYMRAIL_HEAP_SIZE=lots "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "unknown transport is a clear init error" nonzero \
    "SYMRAIL_TRANSPORTS='ib' is out of range: 'ib' is not one of shm\\|verbs\\|tcp" \
    env SYMRAIL_TRANSPORTS=ib "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "SYMRAIL_SLICE_SIZE=0 is refused naming the range" nonzero \
    "SYMRAIL_SLICE_SIZE='0' is out of range: allowed 4K\\.\\.1G" \
    env SYMRAIL_SLICE_SIZE=0 "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "symrail-info prints each variable's range" 0 \
    'SYMRAIL_SLICE_SIZE +default 64K +range 4K\.\.1G' "$top_builddir/symrail-info" --env
run_case "singleton without a launcher" 0 '^hello from PE 0 of 1$' \
    env -u PMIX_NAMESPACE "$top_builddir/examples/hello"
finish
