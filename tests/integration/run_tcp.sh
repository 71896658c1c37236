#!/bin/sh
# The TCP transport on its own (SYMRAIL_TRANSPORTS=tcp): every PE reaches
# every other over loopback.  The integration programs with 2 and 4 PEs,
# lanes, faults, backpressure, interface selection, authentication, rogue
# clients against a running job, and one job under mpirun.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
export SYMRAIL_TRANSPORTS=tcp T_NO_PTR=1

# result NAME WHY: a check made here rather than by run_case; WHY empty = pass.
result() {
    if [ -z "$2" ]; then
        echo "PASS: $1"
        npass=$((npass + 1))
    else
        echo "FAIL: $1: $2"
        nfail=$((nfail + 1))
    fi
}

# A failed atomic is logged once, by whoever saw the failure first.
run_case "tcp: an atomic to a stopped peer fails" 0 '^ok: a stopped peer' \
    env T_ATOMIC=1 SYMRAIL_OP_TIMEOUT=2s "$SYMRUN" -n 2 --timeout 60 "$T/t_liveness"
lines=$(sed -n '/atomic to the stopped peer/,/atomic done/p' "$outdir/out" | grep -c 'error' || true)
if [ "$lines" -eq 1 ]; then
    result "tcp: a failed atomic is logged once" ""
else
    result "tcp: a failed atomic is logged once" "$lines error lines"
fi

for n in 1 2 3 4; do
    run_case "tcp: t_amo -n $n" 0 '^ok: atomics of both widths' \
        "$SYMRUN" -n "$n" --timeout 120 "$T/t_amo"
    run_case "tcp: t_shmem_amo -n $n" 0 '^ok: shmem atomics' \
        "$SYMRUN" -n "$n" --timeout 120 "$T/t_shmem_amo"
done
for bad in "pe|shmem_int_atomic_add: pe [0-9]+ is out of range" \
    "misaligned|shmem_long_atomic_fetch_add: dest 0x[0-9a-f]+ is not aligned to 8 bytes" \
    "local|shmem_ctx_int_atomic_fetch_inc: dest 0x[0-9a-f]+ is (not|neither) in the symmetric heap"; do
    run_case "tcp: shmem atomic with a bad ${bad%%|*} ends the job" nonzero "${bad#*|}" \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_shmem_amo" "${bad%%|*}"
done
for n in 2 4; do
    for t in t_rma t_signal t_notify t_atomic t_heap t_badinput t_storm; do
        run_case "tcp: $t -n $n" 0 '^ok: ' "$SYMRUN" -n "$n" --timeout 300 "$T/$t"
    done
    run_case "tcp: symrail_putmem with a bad PE aborts the job (-n $n)" nonzero \
        'symrail_putmem: pe 1000 is out of range' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_badinput" abort
    run_case "tcp: waiting on a departed peer ends in an error (-n $n)" 0 \
        'ok: waiting on a departed peer fails with: peer process is gone' \
        "$SYMRUN" -n "$n" --timeout 60 "$T/t_badinput" peergone
done
run_case "tcp: a peer gone mid-transfer gives an error in time" 0 \
    'ok: a peer killed mid-transfer gives "peer process is gone" after [0-9.]+ s' \
    "$SYMRUN" -n 2 --timeout 60 "$T/t_badinput" killmid

# A stopped peer (SIGSTOP) is unresponsive, not gone, and works again once
# resumed (SIGCONT).
run_case "tcp: a stopped peer is unresponsive, then works again" 0 \
    'ok: after SIGCONT the peer works again' \
    env SYMRAIL_OP_TIMEOUT=3s SYMRAIL_HEARTBEAT=200ms "$SYMRUN" -n 2 --timeout 120 \
    "$T/t_tcp_stop" 1000 7000

# Lanes: both connections of the default carry data; 4 lanes with 3 PEs; a
# lane broken mid-transfer has its slices retried on another lane.
run_case "tcp: both lanes carry data" 0 'PE 1: rail tcp:lane1 carried [1-9]' \
    env T_EXPECT_RAILS=2 "$SYMRUN" -n 2 --timeout 300 "$T/t_rma"
run_case "tcp: 4 lanes, 3 PEs, SYMRAIL_TCP_IF by name (lo)" 0 '^ok: put_nbi' \
    env SYMRAIL_TCP_LANES=4 SYMRAIL_TCP_IF=lo T_MAX_SIZE=262147 \
    "$SYMRUN" -n 3 --timeout 300 "$T/t_rma"
run_case "tcp: lane broken mid-transfer, slices retried on another lane" 0 \
    'slices retried on another lane' \
    env SYMRAIL_TCP_FAULT_CONN=0:20 T_EXPECT_RETRIES=1 T_MAX_SIZE=1048576 \
    "$SYMRUN" -n 2 --timeout 300 "$T/t_rma"
# Rail health: the broken lane is paused (at info level, once per PE that
# saw it fail), and the transfer still completes on the other.
run_case "tcp: a lane that fails is paused, its slices go to the other" 0 \
    'slices retried on another lane' \
    env SYMRAIL_TCP_FAULT_CONN=0:20 T_EXPECT_RETRIES=1 T_MAX_SIZE=1048576 \
    SYMRAIL_RAIL_PAUSE_ERRORS=1 SYMRAIL_LOG=info "$SYMRUN" -n 2 --timeout 300 "$T/t_rma"
paused=$(grep -c 'lane 0 paused for 100 ms after 1 failures' "$outdir/out" || true)
pes=$(grep 'lane 0 paused for' "$outdir/out" | sed 's/ PE [0-9]* lane.*//' | sort -u | wc -l)
if [ "$paused" -ge 1 ] && [ "$paused" -eq "$pes" ]; then
    result "tcp: the pause is logged once per PE" ""
else
    result "tcp: the pause is logged once per PE" "$paused pause lines from $pes PEs"
fi
# The verbs fault hook is not the TCP one.
run_case "tcp: SYMRAIL_IB_FAULT_QP_ERROR does not break TCP lanes" 0 '^ok: put_nbi' \
    env SYMRAIL_IB_FAULT_QP_ERROR=0:20 T_MAX_SIZE=262147 "$SYMRUN" -n 2 --timeout 300 "$T/t_rma"
if grep -q 'test fault hook' "$outdir/out"; then
    result "tcp: SYMRAIL_IB_FAULT_QP_ERROR arms no TCP fault hook" "a TCP lane armed it"
else
    result "tcp: SYMRAIL_IB_FAULT_QP_ERROR arms no TCP fault hook" ""
fi

# Backpressure: past the requests and bytes a lane may have in flight.
run_case "tcp: nbi storm past SYMRAIL_TCP_MAX_OPS" 0 'qp full [1-9]' \
    env SYMRAIL_TCP_MAX_OPS=4 T_EXPECT_STALLS=qp "$SYMRUN" -n 2 --timeout 300 "$T/t_storm"
run_case "tcp: nbi storm past SYMRAIL_TCP_MAX_INFLIGHT, one lane" 0 'qp full [1-9]' \
    env SYMRAIL_TCP_MAX_INFLIGHT=4K SYMRAIL_TCP_LANES=1 T_EXPECT_STALLS=qp \
    "$SYMRUN" -n 2 --timeout 300 "$T/t_storm"
run_case "tcp: notify with 2 slots per sender (credits)" 0 '^ok: notify: 3000' \
    env SYMRAIL_NOTIFY_SLOTS=2 "$SYMRUN" -n 4 --timeout 300 "$T/t_notify"

# Interfaces and the job secret.
run_case "tcp: SYMRAIL_TCP_IF by CIDR" 0 '^ok: a long wait sleeps' \
    env SYMRAIL_TCP_IF=127.0.0.0/8 "$SYMRUN" -n 2 --timeout 300 "$T/t_signal"
run_case "tcp: SYMRAIL_TCP_IF naming no interface is a clear error" nonzero \
    "SYMRAIL_TCP_IF='nosuchif0' matches no IPv4 interface" \
    env SYMRAIL_TCP_IF=nosuchif0 "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "tcp: a malformed SYMRAIL_TCP_IF is a clear error" nonzero \
    "SYMRAIL_TCP_IF='10.0.0.0/33' has an entry that is neither" \
    env SYMRAIL_TCP_IF=10.0.0.0/33 "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "tcp: PEs with different secrets do not connect" nonzero \
    'failed to authenticate: it does not know the job key' \
    "$SYMRUN" -n 2 --timeout 60 sh -c \
    'SYMRAIL_JOB_SECRET=secret-of-rank-$PMIX_RANK exec "$0"' "$top_builddir/examples/hello"
run_case "tcp: SYMRAIL_JOB_SECRET set but empty is an error" nonzero \
    'SYMRAIL_JOB_SECRET is set but empty' \
    env SYMRAIL_JOB_SECRET= "$SYMRUN" -n 2 --timeout 60 "$top_builddir/examples/hello"
run_case "tcp: finalize says goodbye (no warning, no error)" 0 '' \
    sh -c '"$0" -n 4 --timeout 60 "$1" 2>&1 | grep -E "warn|error" && exit 1; exit 0' \
    "$SYMRUN" "$top_builddir/examples/hello"

# Rogue clients against a running job.  The victim job trades verified puts
# until told to stop; each client connects to PE 0 and misbehaves; PE 0 must
# close the connection, log why, and go on with an intact guard region.
rdir=$outdir/rogue
mkdir -p "$rdir"
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
heap=16777216
env SYMRAIL_JOB_SECRET="$secret" SYMRAIL_HEAP_SIZE=$heap SYMRAIL_TCP_ADDR_FILE="$rdir/addr" \
    T_ROGUE_DIR="$rdir" "$SYMRUN" -n 2 --timeout 300 "$T/t_tcp_rogue" victim \
    >"$rdir/victim.out" 2>&1 &
vpid=$!
i=0
while [ ! -f "$rdir/ready" ] && [ $i -lt 300 ] && kill -0 $vpid 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
[ -f "$rdir/heap" ] && heap=$(cat "$rdir/heap")
cases="garbage|connection from [0-9.:]+ rejected: not a symrail connection \(bad hello magic\)
trunc-hello|connection from [0-9.:]+ ended during the handshake \(truncated message\)
nosecret|connection from [0-9.:]+ \(claims PE 1\) failed authentication: wrong job key
valid|
trunc-header|truncated frame header from PE 1 \([0-9.:]+\): 20 of 48 bytes
bad-magic|malformed frame from PE 1 \([0-9.:]+\): bad frame magic
bad-op|malformed frame from PE 1 \([0-9.:]+\): unknown opcode
big-payload|malformed frame from PE 1 \([0-9.:]+\): payload over the limit of its opcode
oob-end|access outside the memory region from PE 1 .*op 1, region 0, offset $((heap - 8)), length 64
oob-all|access outside the memory region from PE 1 .*op 1, region 0, offset 0, length $((heap + 1))
oob-wrap|access outside the memory region from PE 1 .*offset 18446744073709551600, length 64
oob-get|access outside the memory region from PE 1 .*op 2, region 0, offset $heap, length 8
oob-amo|access outside the memory region from PE 1 .*op 3, region 0, offset $heap
amo-misaligned|misaligned atomic from PE 1 .*offset 4097
bad-region|malformed frame from PE 1 \([0-9.:]+\): region id over the limit
stale-segment|"
if [ -f "$rdir/ready" ] && [ -f "$rdir/addr.0" ]; then
    addr=$(head -n 1 "$rdir/addr.0")
    job=$(cat "$rdir/job")
    echo "$cases" | while IFS='|' read -r mode pat; do
        "$T/t_tcp_rogue" attack "$mode" "$addr" "$job" "$secret" $heap \
            >"$rdir/attack-$mode.out" 2>&1
        echo $? >"$rdir/attack-$mode.rc"
    done
fi
touch "$rdir/stop"
wait $vpid
vrc=$?
why=
[ -f "$rdir/ready" ] || why="the victim job never got ready"
[ -z "$why" ] && [ "$vrc" -ne 0 ] && why="the victim job exited with status $vrc"
[ -z "$why" ] && ! grep -q '^ok: the victim kept working and its guard region is intact' \
    "$rdir/victim.out" && why="the victim did not report an intact guard region"
result "tcp rogue: the victim job survives every rogue client, guard intact" "$why"
[ -n "$why" ] && sed 's/^/    | /' "$rdir/victim.out" | tail -n 30
while IFS='|' read -r mode pat; do
    why=
    rc=$(cat "$rdir/attack-$mode.rc" 2>/dev/null || echo none)
    if [ "$rc" != 0 ]; then
        why="the client got status $rc: $(cat "$rdir/attack-$mode.out" 2>/dev/null)"
    elif [ -n "$pat" ] && ! grep -Eq -- "$pat" "$rdir/victim.out"; then
        why="the victim's log lacks /$pat/"
    fi
    result "tcp rogue: $mode" "$why"
done <<EOF
$cases
EOF

MPIRUN=${MPIRUN:-$(command -v mpirun)}
if [ -n "$MPIRUN" ] && [ -x "$MPIRUN" ]; then
    # No SYMRAIL_JOB_SECRET here: PE 0's random key comes through mpirun's PMIx.
    run_case "tcp: t_rma under mpirun -np 2 (job key through PMIx)" 0 \
        'info: tcp: job key random, drawn by PE 0 and handed out by the launcher' \
        env SYMRAIL_LOG=info T_MAX_SIZE=1048576 timeout 300 "$MPIRUN" --allow-run-as-root \
        --oversubscribe -np 2 "$T/t_rma"
    count_case "tcp: under mpirun -np 2 both PEs have the key from PMIx" 2 \
        'info: tcp: job key random, drawn by PE 0 and handed out by the launcher'
    run_case "tcp: a job key through PMIx is no warning at the default log level" 0 '' \
        env -u SYMRAIL_LOG sh -c '"$0" --allow-run-as-root --oversubscribe -np 2 "$1" 2>&1 |
               grep -E "^symrail .* (warn|error): " && exit 1; exit 0' "$MPIRUN" \
        "$top_builddir/examples/hello"
    # Two jobs of one user under mpirun: the second cannot reach the first.
    . "$top_srcdir/tests/integration/other_job.sh"
    other_job "tcp: another mpirun job" \
        "timeout 300 $MPIRUN --allow-run-as-root --oversubscribe -np 2" \
        "timeout 120 $MPIRUN --allow-run-as-root --oversubscribe -np 1"
    run_case "tcp: t_atomic under mpirun -np 3" 0 '^ok: compare_swap lock' \
        env T_ADDS=5000 timeout 300 "$MPIRUN" --allow-run-as-root --oversubscribe -np 3 \
        "$T/t_atomic"
else
    echo "SKIP: mpirun not found: the mpirun cases of the TCP suite did not run"
fi
finish
