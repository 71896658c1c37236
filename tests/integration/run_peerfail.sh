#!/bin/sh
# A PE killed with SIGKILL mid-run, over shared memory and over TCP: under
# SYMRAIL_ON_PEER_FAILURE=report the others see it FAILED, calls to it fail
# at once, they keep working with each other and a barrier fails cleanly;
# under the default (abort) the job ends naming it.  Then what waits that
# fail say: the peer, or the word, they waited on.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for tl in shm tcp; do
    # symrun exits with the killed rank's status (128 + 9) once PEs 0 and 1 are done.
    run_case "report: PEs 0 and 1 go on without a killed PE 2 ($tl)" 137 \
        'symrun: rank 2 \(pid [0-9]+\) killed by signal 9.*the others go on' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_ON_PEER_FAILURE=report SYMRAIL_OP_TIMEOUT=2s \
        "$SYMRUN" -n 3 --timeout 120 "$T/t_peerfail" report
    count_case "report: both survivors finish ($tl)" 2 \
        '^ok: PE [01] saw PE 2 failed after [0-9.]+ s; calls to it fail'
    count_case "report: the change to FAILED is logged once per survivor ($tl)" 2 \
        'warn: PE 2 \(pid [0-9]+\) failed: '
    count_case "report: the signal wait names its word and the failed PE ($tl)" 1 \
        'signal_wait_until, waiting on word 0x[0-9a-f]+: PE 2 \(pid [0-9]+\) is gone'
    count_case "report: the barrier names the failed PE ($tl)" 2 \
        'barrier: PE 2 of the team has failed'
    # Before the barrier waited only for the PE it named, PEs 1 and 2 waited
    # for PE 0's release for good.
    run_case "report: a PE killed inside barrier_all fails it on the others ($tl)" 137 \
        'symrun: rank 3 \(pid [0-9]+\) killed by signal 9' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_ON_PEER_FAILURE=report SYMRAIL_OP_TIMEOUT=2s \
        "$SYMRUN" -n 4 --timeout 120 "$T/t_peerfail" inbar
    count_case "report: all three others leave the barrier ($tl)" 3 \
        '^ok: PE [012] left the barrier PE 3 died in'
    # Before the survivors synchronised, PE 0 left at once and PE 1's reads
    # of its heap failed (over shm they may outlive the unmap, so PE 0's
    # wait is asserted too).
    run_case "report: the survivors' finalize waits for each other ($tl)" 137 \
        'symrun: rank 2 \(pid [0-9]+\) killed by signal 9' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_ON_PEER_FAILURE=report SYMRAIL_OP_TIMEOUT=2s \
        "$SYMRUN" -n 3 --timeout 120 "$T/t_peerfail" fin
    count_case "report: PE 0's finalize waited for PE 1 ($tl)" 1 \
        "^ok: PE 0's finalize waited [0-9.]+ s for PE 1's"
    count_case "report: PE 1 read PE 0's heap throughout ($tl)" 1 \
        "^ok: PE 1 read PE 0's heap [0-9]+ times"
    run_case "abort: a killed PE 2 ends the job, named ($tl)" nonzero \
        'symrun: rank 2 \(pid [0-9]+\) killed by signal 9 \(Killed|KILL' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_OP_TIMEOUT=2s \
        "$SYMRUN" -n 3 --timeout 120 "$T/t_peerfail" abort
    count_case "abort: the others do not go on ($tl)" 0 'the others go on|^ok:'
done
# Over shared memory a call to a dead PE writes to memory that is still
# mapped: before a watcher looked at the local peers' processes, the first
# call after a quiet spell returned SYMRAIL_OK.
for kind in put get fadd set put_signal; do
    run_case "report: the first $kind to a PE dead for a while fails (shm)" 137 \
        "^ok: the first $kind to the dead PE 1 fails" \
        env SYMRAIL_TRANSPORTS=shm SYMRAIL_ON_PEER_FAILURE=report SYMRAIL_OP_TIMEOUT=2s \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_peerfail" first $kind
done
# A call in progress when its peer dies fails with the documented
# SYMRAIL_ERR_PEER_GONE, on every transport, for a peer on this host and one
# that counts as remote (SYMRAIL_TEST_NODE_SIZE=1): over TCP an atomic
# returned SYMRAIL_ERR_TRANSPORT when the first of its lanes closed.
for where in shm tcp tcp_remote; do
    tl=${where%_remote}
    ns=0
    [ "$where" = tcp_remote ] && ns=1
    for kind in get put fadd; do
        run_case "report: a $kind in progress as its peer dies fails PEER_GONE ($where)" 137 \
            "^ok: the $kind to PE 1 as it died fails with PEER_GONE" \
            env SYMRAIL_TRANSPORTS="$tl" SYMRAIL_TEST_NODE_SIZE=$ns SYMRAIL_ON_PEER_FAILURE=report \
            SYMRAIL_OP_TIMEOUT=2s "$SYMRUN" -n 2 --timeout 60 "$T/t_peerfail" inflight $kind
    done
done
# The reverse: the only lane to a live PE breaks.  Before, its peer was
# declared FAILED ("peer process is gone"); now the call fails as a
# transport failure and the peer stays OK.  (PE 1's finalize then fails:
# it cannot reach PE 0, status 1.)
run_case "report: the only TCP lane broken fails TRANSPORT, the peer stays OK" 1 \
    '^ok: the broken lane fails get [0-9]+ with TRANSPORT, PE 0 stays OK' \
    env SYMRAIL_TRANSPORTS=tcp SYMRAIL_TCP_LANES=1 SYMRAIL_TCP_FAULT_CONN=0:20 \
    SYMRAIL_ON_PEER_FAILURE=report SYMRAIL_OP_TIMEOUT=2s \
    "$SYMRUN" -n 2 --timeout 60 "$T/t_peerfail" lanereset
count_case "the live PE is never declared failed" 0 'warn: PE 0 \(pid [0-9]+\) failed'
# The policy given with -x is the ranks' and symrun's alike (symrun read
# only its own environment before).
run_case "report set with -x: symrun lets the others go on" 137 \
    'symrun: rank 3 \(pid [0-9]+\) killed by signal 9.*the others go on' \
    env SYMRAIL_TRANSPORTS=shm SYMRAIL_OP_TIMEOUT=2s \
    "$SYMRUN" -x SYMRAIL_ON_PEER_FAILURE=report -n 4 --timeout 120 "$T/t_peerfail" inbar
count_case "report set with -x: all three others leave the barrier" 3 \
    '^ok: PE [012] left the barrier PE 3 died in'
# Waits that time out name their peer (SYMRAIL_TEST_HOLD_LANE keeps the
# completions back for longer than SYMRAIL_OP_TIMEOUT).
run_case "a held get and quiet time out (tcp)" 0 '^ok: a held get and quiet time out' \
    env SYMRAIL_TRANSPORTS=tcp SYMRAIL_TCP_LANES=1 SYMRAIL_TEST_HOLD_LANE=0:1500 \
    SYMRAIL_OP_TIMEOUT=1s "$SYMRUN" -n 2 --timeout 120 "$T/t_peerfail" timeout
count_case "the get's timeout names PE 1" 1 \
    'error: get, waiting on PE 1: no progress for 1000 ms \(SYMRAIL_OP_TIMEOUT\)'
count_case "the quiet's timeout names PE 1" 1 \
    'error: quiet, waiting on PE 1: no progress for 1000 ms \(SYMRAIL_OP_TIMEOUT\)'
# A stopped peer: the barrier that fails names it and the word.  Over shared
# memory, where only the liveness check can tell (over TCP the transport may
# fail the barrier's request first, with a message of its own naming the PE).
run_case "a stopped peer fails a barrier (shm)" 0 '^ok: a stopped peer' \
    env SYMRAIL_TRANSPORTS=shm SYMRAIL_OP_TIMEOUT=2s \
    "$SYMRUN" -n 2 --timeout 60 "$T/t_liveness"
count_case "the barrier's message names the PE and word it waited on" 1 \
    'barrier, waiting on PE 1 for word 0x[0-9a-f]+: PE 1 \(pid [0-9]+\) is unresponsive'
count_case "the stopped PE is logged suspect once" 1 'warn: PE 1 \(pid [0-9]+\) is suspect: '
finish
