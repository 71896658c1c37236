#!/bin/sh
# The verbs test suite, run inside the Soft-RoCE guest (see check-rxe.sh):
# every PE reaches every other PE, and itself, over rxe0 and rxe1 in
# loopback, with shared memory switched off.
. "${top_srcdir:-.}/tests/integration/lib.sh"

export SYMRAIL_TRANSPORTS=verbs SYMRAIL_HEAP_SIZE=64M
# Emulated RDMA moves 10-20 MB/s: smaller sizes and counts, same checks.
export T_MAX_SIZE=4194304 T_ROUNDS=300 T_ADDS=2000 T_NO_PTR=1 T_WAIT_MAY_SPIN=1

run_case "put/get 1 B .. 4 MiB, one rail (rxe0)" 0 '^ok: put_nbi' \
    env SYMRAIL_IB_DEVICES=rxe0 T_EXPECT_RAILS=1 "$SYMRUN" -n 2 --timeout 400 "$T/t_rma"
run_case "put/get 1 B .. 4 MiB, two rails, both carry data" 0 'PE 1: rail rxe1:1 carried [1-9]' \
    env T_EXPECT_RAILS=2 "$SYMRUN" -n 2 --timeout 400 "$T/t_rma"
run_case "put/get with 3 PEs" 0 '^ok: all-to-all' \
    env T_MAX_SIZE=262147 "$SYMRUN" -n 3 --timeout 400 "$T/t_rma"
run_case "nbi storm past SYMRAIL_IB_MAX_WR x QPs" 0 'qp full [1-9]' \
    env SYMRAIL_IB_MAX_WR=4 SYMRAIL_IB_QPS_PER_PEER=1 T_EXPECT_STALLS=qp "$SYMRUN" --timeout 400 -n 2 "$T/t_storm"
run_case "nbi storm past the CQ size" 0 'cq full [1-9]' \
    env SYMRAIL_IB_CQ_SIZE=8 T_EXPECT_STALLS=cq "$SYMRUN" --timeout 400 -n 2 "$T/t_storm"
run_case "put_signal ordering over two rails" 0 '^ok: put_signal ADD' "$SYMRUN" --timeout 400 -n 2 "$T/t_signal"
run_case "notification messages (credits, no RNR)" 0 '^ok: notify: 3000' \
    env SYMRAIL_IB_NOTIFY_DEPTH=8 "$SYMRUN" --timeout 400 -n 2 "$T/t_notify"
run_case "SYMRAIL_NOTIFY_SLOTS bounds the messages in flight" 0 '^ok: notify burst waited' \
    env SYMRAIL_NOTIFY_SLOTS=2 T_EXPECT_NOTIFY_STALL=1 "$SYMRUN" --timeout 400 -n 2 "$T/t_notify"
run_case "notify sender stalls on 2 slots while the receiver does not consume" 0 \
    '^ok: notify sender stalled' \
    env SYMRAIL_NOTIFY_SLOTS=2 "$SYMRUN" --timeout 400 -n 2 "$T/t_notify" stall
run_case "notify sender stalls with SYMRAIL_IB_NOTIFY_DEPTH=8" 0 '^ok: notify sender stalled' \
    env SYMRAIL_IB_NOTIFY_DEPTH=8 "$SYMRUN" --timeout 400 -n 2 "$T/t_notify" stall
run_case "notify to a receiver that never consumes times out" 0 \
    '^ok: notify to a receiver that does not consume times out after 2 slots' \
    env SYMRAIL_NOTIFY_SLOTS=2 SYMRAIL_OP_TIMEOUT=2s "$SYMRUN" --timeout 400 -n 2 "$T/t_notify" stuck
# 4096-byte notifications travel as 256-byte messages: the receive buffers
# per peer stay small.
for n in 2 3; do
    run_case "notify sizes, tags, status, reserved tags (-n $n)" 0 \
        '^ok: notify: a handler of a reserved tag answers' \
        "$SYMRUN" --timeout 400 -n $n "$T/t_notify_tag"
    run_case "notify 4096-byte messages with 2 slots and SYMRAIL_IB_NOTIFY_DEPTH=8 (-n $n)" 0 \
        '^ok: notify: .* verified byte for byte' env SYMRAIL_NOTIFY_SLOTS=2 \
        SYMRAIL_IB_NOTIFY_DEPTH=8 "$SYMRUN" --timeout 400 -n $n "$T/t_notify_tag" sizes
done
run_case "senders to a receiver that does not consume stall (-n 3)" 0 \
    '^ok: PE 0 held [0-9]+ messages \(at most 4 slots' \
    env SYMRAIL_NOTIFY_SLOTS=4 "$SYMRUN" --timeout 400 -n 3 "$T/t_notify_tag" many
run_case "notify trysend: OK sends the rest later, AGAIN sends nothing" 0 '^ok: notify: trysend' \
    env SYMRAIL_NOTIFY_SLOTS=2 "$SYMRUN" --timeout 400 -n 2 "$T/t_notify_tag" trysend
run_case "notify wait_tag on a sender that left ends in an error" 0 \
    'ok: wait_tag on a departed sender fails with' \
    "$SYMRUN" --timeout 400 -n 2 "$T/t_notify_tag" peergone
run_case "SYMRAIL_NOTIFY_SLOTS=0 is refused" nonzero "SYMRAIL_NOTIFY_SLOTS='0' is out of range" \
    env SYMRAIL_NOTIFY_SLOTS=0 "$SYMRUN" --timeout 400 -n 1 "$T/t_heap"
run_case "atomics under contention" 0 '^ok: compare_swap lock' "$SYMRUN" --timeout 400 -n 3 "$T/t_atomic"
# PEs 0 and 1 share memory, PE 2 counts as on another node and is reached
# over verbs: every PE hammers the same words, so CPU atomics from the shm
# peers and NIC atomics from PE 2 must not meet on one word.
run_case "atomics from shared-memory and verbs peers on one word" 0 '^ok: compare_swap lock' \
    env SYMRAIL_TRANSPORTS=shm,verbs SYMRAIL_TEST_NODE_SIZE=2 T_ADDS=${T_MIX_ADDS:-20000} \
    SYMRAIL_LOG=info "$SYMRUN" --timeout 400 -n 3 "$T/t_atomic"
if ! grep -q 'atomics to 2 PE(s) of this node (this one included) go through verbs' "$outdir/out" ||
   ! grep -q 'atomics between PEs of this node go through the NIC' "$outdir/out"; then
    echo "FAIL: atomics from shared-memory and verbs peers: local atomics did not take the NIC"
    sed 's/^/    | /' "$outdir/out" | grep -i atomic | tail -n 10
    nfail=$((nfail + 1))
fi
# 4-byte words, AND/OR/XOR, swap and non-blocking fetches: compare-swap
# loops on the 8-byte word, atomic with the fetch-adds of the other PEs.
run_case "atomics of both widths and every kind (compare-swap emulation)" 0 \
    '^ok: atomics of both widths' "$SYMRUN" --timeout 400 -n 3 "$T/t_amo"
run_case "atomics of both widths from shared-memory and verbs peers" 0 \
    '^ok: atomics of both widths' env SYMRAIL_TRANSPORTS=shm,verbs SYMRAIL_TEST_NODE_SIZE=2 \
    "$SYMRUN" --timeout 400 -n 4 "$T/t_amo"
# Teams and collectives over verbs, and with some members sharing memory
# and others reached over verbs (team shared of 2, world of 3).
for n in 2 3; do
    run_case "teams and collectives over verbs (-n $n)" 0 '^ok: teams and collectives' \
        env SYMRAIL_TEAM_SCRATCH=8K "$SYMRUN" --timeout 400 -n $n "$T/t_coll" 8
done
run_case "teams and collectives, shared memory and verbs mixed (-n 4)" 0 \
    '^ok: teams and collectives' env SYMRAIL_TRANSPORTS=shm,verbs SYMRAIL_TEST_NODE_SIZE=2 \
    SYMRAIL_TEAM_SCRATCH=8K "$SYMRUN" --timeout 400 -n 4 "$T/t_coll" 8
# The transport's ops table from several threads at once (thread_multiple),
# and the same program single-threaded.
run_case "verbs ops from 4 threads plus a progress thread, every byte verified" 0 \
    '^ok: verbs threads: 4 threads' timeout 400 "$top_builddir/tests/rxe/t_verbs_threads" 4 150 1
run_case "verbs ops from 8 threads, one QP per peer and rail, small queues" 0 \
    '^ok: verbs threads: 8 threads' env SYMRAIL_IB_QPS_PER_PEER=1 SYMRAIL_IB_MAX_WR=8 \
    SYMRAIL_IB_CQ_SIZE=16 timeout 400 "$top_builddir/tests/rxe/t_verbs_threads" 8 60 1
run_case "verbs ops from one thread, thread_multiple 0" 0 '^ok: verbs threads: 1 threads' \
    timeout 400 "$top_builddir/tests/rxe/t_verbs_threads" 1 150 0
# The same through contexts (symrail_ctx_*): threads on private contexts and
# on the default one, ctx_destroy with transfers in flight, quiet isolation.
for n in 2 4; do
    for mode in private shared; do
        run_case "verbs: 4 threads per PE on $mode contexts (-n $n)" 0 '^ok: 4 threads per PE' \
            "$SYMRUN" --timeout 400 -n $n "$T/t_threads" $mode 4
    done
done
run_case "verbs: 8 threads per PE on private contexts (-n 2)" 0 '^ok: 8 threads per PE' \
    "$SYMRUN" --timeout 400 -n 2 "$T/t_threads" private 8
run_case "verbs: ctx_destroy completes; 10000 contexts leak nothing" 0 \
    '^ok: ctx_destroy completes' "$SYMRUN" --timeout 400 -n 2 "$T/t_threads" destroy
run_case "verbs: quiet on one context does not wait for another's" 0 \
    '^ok: quiet on context A returned' env SYMRAIL_IB_DEVICES=rxe0 SYMRAIL_IB_QPS_PER_PEER=2 \
    SYMRAIL_TEST_HOLD_LANE=1:2000 "$SYMRUN" --timeout 400 -n 2 "$T/t_threads" isolation
# Segments: registered at any time, keys unpacked on endpoints, a withdrawn
# rkey refused (SYMRAIL_ERR_STALE) and the lanes it broke repaired.
for mt in 0 1; do
    run_case "verbs segments through the ops table, thread_multiple $mt" 0 \
        '^ok: verbs segments: traffic through the new key' \
        timeout 400 "$top_builddir/tests/rxe/t_verbs_seg" $mt
done
# One rail and one QP: the lane the stale accesses break is the only one.
run_case "a peer's malloc'd segment over one rail, one lane; stale after deregistering" 0 \
    '^ok: rseg: a peer' env SYMRAIL_IB_DEVICES=rxe0 SYMRAIL_IB_QPS_PER_PEER=1 \
    SYMRAIL_SLICE_SIZE=16K T_EXPECT_RAILS=1 T_EXPECT_REPAIRS=1 \
    "$SYMRUN" -n 2 --timeout 400 "$top_builddir/tests/rxe/t_rseg"
run_case "a peer's malloc'd segment over two rails; stale after deregistering" 0 \
    '^ok: rseg: a peer' env SYMRAIL_SLICE_SIZE=16K T_EXPECT_RAILS=2 T_EXPECT_REPAIRS=1 \
    "$SYMRUN" -n 2 --timeout 400 "$top_builddir/tests/rxe/t_rseg"
# Stale accesses while the owner's atomics and puts are in flight on the
# queue pairs they break (one rail, one QP: all of it on one pair): the
# flushed atomics are sorted by the peer's receive PSN, none lost or doubled,
# and fetches the failure caught give the word's value.
run_case "stale accesses with the owner's atomics and puts in flight on the same QPs" 0 \
    '^ok: stale accesses while the owner' env SYMRAIL_IB_DEVICES=rxe0 \
    SYMRAIL_IB_QPS_PER_PEER=1 T_EXPECT_REPAIRS=1 \
    "$SYMRUN" -n 2 --timeout 400 "$top_builddir/tests/rxe/t_stale_inflight"
# Private buffers in place (registration cache): 16 MiB from and into
# malloc'd memory, then freed and malloc'd again, unmapped and mapped again
# at the same address: the new data must arrive, not the old pages'.
run_case "zero-copy private buffers: put/get, free and malloc again, MAP_FIXED" 0 \
    '^ok: zero-copy private buffers' env T_EXPECT_ZCOPY=1 \
    "$SYMRUN" -n 2 --timeout 400 "$top_builddir/tests/rxe/t_zcopy"
run_case "private buffers through bounce buffers (SYMRAIL_IB_ZCOPY_THRESH=0)" 0 \
    '^ok: zero-copy private buffers' env SYMRAIL_IB_ZCOPY_THRESH=0 T_EXPECT_ZCOPY=0 \
    "$SYMRUN" -n 2 --timeout 400 "$top_builddir/tests/rxe/t_zcopy"
# The core's segments and batches: paged batches with notifications, stale
# descriptors both ways at once (the queue pairs break at both ends under
# the barriers' atomics), names (by the launcher and by asking the peers).
run_case "segments and paged batches over verbs, 16K slices (-n 2)" 0 \
    '^ok: seg: segments, paged batches, notifications and stale' \
    env SYMRAIL_SLICE_SIZE=16K "$SYMRUN" --timeout 400 -n 2 "$T/t_seg"
run_case "segments and paged batches over verbs, names asked of the peers (-n 3)" 0 \
    '^ok: seg: segments, paged batches, notifications and stale' \
    env SYMRAIL_TEST_NAMES_LOCAL=1 "$SYMRUN" --timeout 400 -n 3 "$T/t_seg"
# Independent jobs (two symrun jobs, and a singleton) over verbs: segments
# and batches over RDMA both ways, every byte checked, notifications and the
# news of a killed peer over TCP (PEER_GONE in time), stale descriptors;
# repeated stale accesses between two jobs break their queue pairs, which are
# repaired over TCP, and the transfers after them succeed.
run_case "independent jobs over verbs (run_jobs.sh)" 0 '^7 passed, 0 failed' \
    env T_JOBS_MODES=verbs sh "$top_srcdir/tests/integration/run_jobs.sh"
run_case "kv_transfer as two jobs over verbs (run_kv.sh)" 0 '^2 passed, 0 failed' \
    env T_KV_TWO_JOBS=verbs sh "$top_srcdir/tests/integration/run_kv.sh"
# Stress: the random mix of every operation from 3 threads per PE on 3
# contexts each, every byte checked (run_stress.sh runs it on shm and TCP).
run_case "verbs: stress for ${STRESS_SECONDS:-30} s, 3 threads per PE (-n 2)" 0 \
    '^ok: stress: [1-9][0-9]* operations' \
    "$SYMRUN" --timeout 400 -n 2 "$T/t_stress" --seconds "${STRESS_SECONDS:-30}"
run_case "heap and barrier" 0 '^ok: barrier_all' "$SYMRUN" --timeout 400 -n 2 "$T/t_heap"
# Leaks over verbs (t_leaks.c): init/finalize cycles and a long run keep
# descriptors, threads, memory and the kernel's count of this PE's memory
# registrations, queue pairs and completion queues flat, none of them left
# after a finalize; resident memory within 768 KiB over the cycles after
# the first (a leak of about 130 KiB a cycle fails).  Few cycles and rounds: under emulation each init
# connects every lane, and each sample runs `rdma res show` three times.
run_case "leaks over verbs: ${T_LEAK_CYCLES:-8} init/finalize cycles, nothing registered after each" 0 \
    "^ok: ${T_LEAK_CYCLES:-8} init/finalize cycles.*no registration or queue left after finalize" \
    env SYMRAIL_HEAP_SIZE=32M T_RDMA_RES=1 T_SLACK_KB=768 "$SYMRUN" -n 2 --timeout 300 \
    "$T/t_leaks" cycles "${T_LEAK_CYCLES:-8}"
count_case "leaks over verbs: both PEs of the cycles stayed flat" 2 \
    '^ok: [0-9]+ init/finalize cycles.*no registration or queue left'
grep '^leaks:' "$outdir/out" | sed 's/^/    /'
run_case "leaks over verbs: ${T_LEAK_ROUNDS:-1000} rounds of operations after 300" 0 \
    '^ok: [0-9]+ rounds of operations.*registrations and queues flat' \
    env SYMRAIL_HEAP_SIZE=32M T_RDMA_RES=1 T_WARMUP=300 "$SYMRUN" -n 2 --timeout 300 \
    "$T/t_leaks" ops "${T_LEAK_ROUNDS:-1000}"
grep '^leaks:' "$outdir/out" | sed 's/^/    /'
run_case "bad input" 0 '^ok: bad input' "$SYMRUN" --timeout 400 -n 2 "$T/t_badinput"
run_case "QP forced into error mid-transfer: retried on another lane, lane repaired" 0 \
    "lanes repaired" \
    env SYMRAIL_IB_FAULT_QP_ERROR=0:20 T_EXPECT_RETRIES=1 T_EXPECT_REPAIRS=1 T_MAX_SIZE=1048576 "$SYMRUN" --timeout 400 -n 2 "$T/t_rma"
run_case "lane repair survives repair messages that could not be sent at first" 0 \
    "lanes repaired" \
    env SYMRAIL_IB_FAULT_QP_ERROR=0:20:2 T_EXPECT_RETRIES=1 T_EXPECT_REPAIRS=1 T_MAX_SIZE=1048576 "$SYMRUN" --timeout 400 -n 2 "$T/t_rma"
run_case "blocking puts complete at post; quiet, then a get or a load sees the data" 0 \
    '^ok: puts complete at post' "$SYMRUN" --timeout 400 -n 2 "$T/t_complete"
run_case "blocking puts complete at post, one QP per peer" 0 '^ok: puts complete at post' \
    env SYMRAIL_IB_QPS_PER_PEER=1 SYMRAIL_IB_DEVICES=rxe0 "$SYMRUN" --timeout 400 -n 2 "$T/t_complete"
run_case "a repaired lane carries data again" 0 'rail 0 carried [1-9][0-9]* bytes after the repair' \
    env SYMRAIL_IB_QPS_PER_PEER=1 SYMRAIL_IB_FAULT_QP_ERROR=0:20 T_EXPECT_REPAIRS=1 \
    "$SYMRUN" --timeout 400 -n 2 "$T/t_complete" repair
# Every step of init failing leaves a clean error, never a crash in fini.
for step in 1 2 3 4 5; do
    run_case "init step $step failing ends cleanly" nonzero "init step $step fails" \
        env SYMRAIL_IB_FAULT_INIT=$step "$SYMRUN" --timeout 400 -n 2 "$T/t_heap"
    if grep -Eqi 'signal|segmentation|core dumped' "$outdir/out"; then
        echo "FAIL: init step $step failing: a rank crashed"
        sed 's/^/    | /' "$outdir/out" | tail -n 10
        nfail=$((nfail + 1))
    fi
done
run_case "peer gone mid-transfer gives an error in time" 0 \
    'ok: a peer killed mid-transfer gives "peer process is gone"' \
    "$SYMRUN" --timeout 400 -n 2 "$T/t_badinput" killmid
# Global and static variables: the data segment is a second registered region.
for n in 2 3; do
    run_case "globals and statics over verbs, 16K slices (-n $n)" 0 \
        '^ok: data: globals and statics symmetric' \
        env SYMRAIL_SLICE_SIZE=16K "$SYMRUN" --timeout 400 -n "$n" "$T/t_data"
done
run_case "globals over shm and verbs, atomics on them through the NIC (-n 3)" 0 \
    '^ok: data: globals and statics symmetric' \
    env -u T_NO_PTR SYMRAIL_TRANSPORTS=shm,verbs SYMRAIL_TEST_NODE_SIZE=2 \
    "$SYMRUN" --timeout 400 -n 3 "$T/t_data"
# The OpenSHMEM programs (shmem.h alone) over verbs.
S=$top_builddir/tests/shmem
run_case "shmem: setup, memory, RMA of every type, contexts over verbs (-n 2)" 0 \
    '^ok: shmem setup, memory, RMA of 24 types, contexts, init again \(2 PEs\)' \
    "$SYMRUN" --timeout 400 -n 2 "$S/t_sh_rma"
run_case "shmem: teams and collectives over verbs (-n 2)" 0 '^ok: shmem teams and collectives on 2 PEs' \
    "$SYMRUN" --timeout 400 -n 2 "$T/t_shmem_coll"
run_case "shmem: p2p waits and tests over verbs (-n 2)" 0 '^ok: p2p waits and tests' \
    "$SYMRUN" --timeout 400 -n 2 "$S/t_p2p"
run_case "shmem: signals over verbs (-n 2)" 0 '^ok: signals' "$SYMRUN" --timeout 400 -n 2 "$S/t_sig"
run_case "shmem: locks over verbs (-n 2)" 0 '^ok: locks' "$SYMRUN" --timeout 400 -n 2 "$S/t_lock" 300
run_case "shmem: atomics over verbs (-n 2)" 0 '^ok: shmem atomics on 2 PEs' \
    "$SYMRUN" --timeout 400 -n 2 "$T/t_shmem_amo"
for part in team scan toall; do
    run_case "shmem: reductions $part over verbs (-n 2)" 0 "^ok: shmem reductions $part" \
        "$SYMRUN" --timeout 400 -n 2 "$T/t_shmem_reduce" $part
done
for n in 2 3; do
    run_case "shmem: split_2d, collectives, context RMA, atomics over verbs (-n $n)" 0 \
        "^ok: shmem split_2d, active-set and team collectives, sync_all, contexts, atomics \($n PEs\)" \
        "$SYMRUN" --timeout 400 -n $n "$S/t_sh_more"
done
MPIRUN=${MPIRUN:-$(command -v mpirun)}
if [ -n "$MPIRUN" ]; then
    run_case "put/get under mpirun" 0 '^ok: put_nbi' \
        env T_MAX_SIZE=262147 timeout 400 "$MPIRUN" --allow-run-as-root --oversubscribe \
        -np 2 "$T/t_rma"
fi
finish
