#!/bin/sh
# The verbs suite across two guest kernels (check-two-guest.sh runs it in
# both guests of run-two-vms.sh): one Slurm job over guests a and b, PEs of a
# guest reached over shared memory, PEs of the other guest over verbs on
# rxe0 (eth0) and rxe1 (eth1), so every RDMA packet crosses between kernels.
# Guest b only runs its slurmd; guest a runs the cases and prints the result.
: "${top_builddir:?top_builddir must be set (run through make check-rxe)}"
: "${top_srcdir:?}"
. "$top_srcdir/tests/rxe/two_guest_bed.sh"
if [ "$TG_ROLE" = b ]; then
    tg_bed_start || exit 1
    # Guest a's end powers this guest off.
    wait
    exit 0
fi
. "$top_srcdir/tests/integration/lib.sh"
t_start=$(date +%s)
tg_bed_start && tg_bed_wait || { echo "FAIL: the Slurm bed over the two guests did not come up"; exit 1; }
echo "PASS: slurmctld and slurmd ga in guest a, slurmd gb in guest b: both idle"
npass=$((npass + 1))

export SYMRAIL_TRANSPORTS=shm,verbs SYMRAIL_HEAP_SIZE=64M
# Emulated RDMA between two emulated machines on 2 host cores: smaller sizes
# and counts than verbs_suite.sh, same checks.
export T_MAX_SIZE=1048576 T_ROUNDS=100 T_ADDS=500 T_NO_PTR=1 T_WAIT_MAY_SPIN=1
# Block distribution: PEs 0..n/2-1 in guest a, the rest in guest b.
X2="-N 2 -n 2 --ntasks-per-node=1"
X4="-N 2 -n 4 --ntasks-per-node=2"

# perftest first: the wire itself, with no symrail in it.  The server runs
# in guest b through Slurm; the client retries until it listens.
perf_pair() { # TOOL ARGS...
    tool=$1
    shift
    tg_srun -N 1 -n 1 -w gb "$tool" -d rxe0 -x 1 "$@" &
    spid=$!
    i=0
    until "$tool" -d rxe0 -x 1 "$@" "$TG_B"; do
        i=$((i + 1))
        [ $i -lt 20 ] && kill -0 $spid 2>/dev/null || { kill $spid 2>/dev/null; wait $spid; return 1; }
        sleep 1
    done
    wait $spid
}
run_case "ib_write_bw from guest a to guest b over rxe0" 0 '^ *65536 +[0-9]+ ' \
    perf_pair ib_write_bw -s 65536 -n 200 -F
run_case "ib_read_bw from guest a to guest b over rxe0" 0 '^ *65536 +[0-9]+ ' \
    perf_pair ib_read_bw -s 65536 -n 200 -F

# Which transport reaches which PE, as each PE says.
run_case "srun -N 2 -n 4: atomics, shm within a guest, verbs across" 0 '^ok: ' \
    env SYMRAIL_LOG=debug "$TG_SRUN" $X4 "$T/t_atomic"
count_case "PEs 0 and 1 (guest a) reach each other over shm" 4 \
    '^symrail ga:[0-9]+:[01] debug: PE [01] reached over shm'
count_case "PEs 2 and 3 (guest b) reach each other over shm" 4 \
    '^symrail gb:[0-9]+:[23] debug: PE [23] reached over shm'
count_case "PEs in guest a reach PEs 2 and 3 over verbs" 4 \
    '^symrail ga:[0-9]+:[01] debug: PE [23] reached over verbs'
count_case "PEs in guest b reach PEs 0 and 1 over verbs" 4 \
    '^symrail gb:[0-9]+:[23] debug: PE [01] reached over verbs'

run_case "put/get 1 B .. 1 MiB across the guests, one rail (rxe0)" 0 '^ok: put_nbi' \
    env SYMRAIL_IB_DEVICES=rxe0 T_EXPECT_RAILS=1 "$TG_SRUN" $X2 "$T/t_rma"
run_case "put/get across the guests, two rails, both carry data" 0 'PE 1: rail rxe1:1 carried [1-9]' \
    env T_EXPECT_RAILS=2 "$TG_SRUN" $X2 "$T/t_rma"
# Cyclic: every PE's ring neighbour is in the other guest (T_NO_PTR).
run_case "put/get with 4 PEs, two per guest" 0 '^ok: all-to-all' \
    env T_MAX_SIZE=262147 "$TG_SRUN" $X4 -m cyclic "$T/t_rma"
run_case "atomics of both widths and every kind, 4 PEs" 0 '^ok: atomics of both widths' \
    tg_srun $X4 "$T/t_amo"
run_case "put_signal ordering over two rails" 0 '^ok: put_signal ADD' tg_srun $X2 "$T/t_signal"
run_case "put_signal ordering over one rail" 0 '^ok: put_signal ADD' \
    env SYMRAIL_IB_DEVICES=rxe0 "$TG_SRUN" $X2 "$T/t_signal"
run_case "notification messages (credits, no RNR)" 0 '^ok: notify: ' \
    env SYMRAIL_IB_NOTIFY_DEPTH=8 "$TG_SRUN" $X2 "$T/t_notify"
run_case "nbi storm past SYMRAIL_IB_MAX_WR x QPs" 0 'qp full [1-9]' \
    env SYMRAIL_IB_MAX_WR=4 SYMRAIL_IB_QPS_PER_PEER=1 T_EXPECT_STALLS=qp "$TG_SRUN" $X2 "$T/t_storm"
run_case "QP forced into error mid-transfer: retried on another lane, lane repaired" 0 \
    "lanes repaired" env SYMRAIL_IB_FAULT_QP_ERROR=0:20 T_EXPECT_RETRIES=1 T_EXPECT_REPAIRS=1 \
    "$TG_SRUN" $X2 "$T/t_rma"
run_case "segments and paged batches across the guests, 16K slices" 0 \
    '^ok: seg: segments, paged batches, notifications and stale' \
    env SYMRAIL_SLICE_SIZE=16K SYMRAIL_TEST_NAMES_LOCAL=1 "$TG_SRUN" $X2 "$T/t_seg"
KV=$top_builddir/examples/kv_transfer
run_case "kv_transfer: prefill in guest a, decode in guest b, every byte verified" 0 \
    '^kv_transfer: every byte of 24 requests \([0-9.]+ MiB\) verified$' \
    tg_srun $X2 "$KV" --verify --no-plot --layers 4 --blocks 96 --block-bytes 4K,16K \
    --blocks-per-request 8,24 --requests 6
# PE 0 streams puts for 3 s at most; then the error must come within
# SYMRAIL_OP_TIMEOUT (10 s): under 16 s in all.  Under srun nothing tells
# PE 0 that a PE of the other guest is gone: the operation timeout ends its
# put (SYMRAIL_ERR_TIMEOUT), which the case accepts.
run_case "a PE in guest b gone mid-transfer: PE 0 in guest a gets an error in time" 0 \
    'ok: a peer killed mid-transfer gives "[^"]+" after ([0-9]|1[0-5])[.][0-9] s' \
    env SYMRAIL_OP_TIMEOUT=10s T_GONE_MAY_TIME_OUT=1 "$TG_SRUN" $X2 "$T/t_badinput" killmid

# Rail 1 taken down in guest a while a two-rail transfer runs: the PE that
# gives a lane there up tells its peer over the notify channel (rail 0),
# which gives its end up at once, so the job finishes over rail 0 without
# waiting for SYMRAIL_OP_TIMEOUT (an operation that timed out fails the
# case; how long the job took after the rail went down is printed).
rail_down() {
    env T_ROUNDS=400 TG_STEP_TIMEOUT=200 SYMRAIL_OP_TIMEOUT=60s "$TG_SRUN" $X2 "$T/t_rma" &
    jpid=$!
    sleep "${TG_RAIL_DOWN_AFTER:-6}"
    # Down while the job runs, or the case proves nothing.
    kill -0 $jpid 2>/dev/null || { wait $jpid; echo "rail down: the job ended before the rail went down"; return 1; }
    ip link set eth1 down
    t_down=$(date +%s)
    echo "rail down: eth1 down in guest a"
    wait $jpid
    jrc=$?
    t_end=$(date +%s)
    ip link set eth1 up
    echo "rail down: the job ended $((t_end - t_down)) s after eth1 went down"
    # The whole log stays for a look at who gave which lane up, and when.
    cp "$outdir/out" "$top_builddir/tests/rxe/rail_down${i#0}.log" 2>/dev/null
    [ $jrc -ne 124 ] || { echo "rail down: the job hung"; return 124; }
    if grep -Eq 'returned -4 \(timed out\)|failed: timed out' "$outdir/out"; then
        echo "rail down: an operation waited for SYMRAIL_OP_TIMEOUT"
        return 1
    fi
    grep -q '^ok: put_nbi' "$outdir/out"
}
# TG_RAIL_DOWN_RUNS=N repeats it, to catch a failure that comes now and then.
i=0
while [ $i -lt "${TG_RAIL_DOWN_RUNS:-1}" ]; do
    run_case "rail 1 down mid-transfer: both ends give it up, the job finishes over rail 0" 0 \
        '^rail down: eth1 down' rail_down
    i=$((i + 1))
done

# Rail 1 down in guest a long enough for its lanes to be given up (a
# few seconds are not: RC's retries carry the transfer over them), then up
# again, while a long two-rail transfer runs: the lanes given up there are
# tried again (1 s, 2 s, 4 s ... after they were given up, once the port is
# active) and come back once the link has, so the job ends with rail 1
# repaired; the case fails when the job ends before any lane on rxe1 was
# repaired after eth1 came back.  SYMRAIL_OP_TIMEOUT=20s: a lane whose
# requests rxe keeps neither sent nor failed breaks after 5 s.
rail_back() {
    t0=$(date +%s)
    env SYMRAIL_LOG=info T_REPEAT="${TG_RAIL_BACK_REPEAT:-8}" TG_STEP_TIMEOUT=300 \
        SYMRAIL_OP_TIMEOUT=20s "$TG_SRUN" $X2 "$T/t_rma" > "$outdir/rail_back.out" 2>&1 &
    jpid=$!
    sleep 6
    kill -0 $jpid 2>/dev/null || { wait $jpid; echo "rail back: the job ended before the rail went down"; return 1; }
    ip link set eth1 down
    echo "rail back: eth1 down in guest a $(($(date +%s) - t0)) s in"
    sleep 12
    ip link set eth1 up
    echo "rail back: eth1 up again in guest a $(($(date +%s) - t0)) s in"
    wait $jpid
    jrc=$?
    echo "rail back: the job ended $(($(date +%s) - t0)) s in" | tee -a "$outdir/rail_back.out"
    cp "$outdir/rail_back.out" "$top_builddir/tests/rxe/rail_back.log" 2>/dev/null
    grep -v ' info: \| debug: ' "$outdir/rail_back.out"
    [ $jrc -ne 124 ] || { echo "rail back: the job hung"; return 124; }
    grep -q '^ok: put_nbi' "$outdir/rail_back.out" || return 1
    # Repairs before the lanes were given up do not count: only those after
    # a lane given up was tried again.
    # Tied to the process and lane: "symrail HOST:PID:PE info: verbs: lane L ...".
    n=$(awk '/ lane [0-9]+ to PE [0-9]+ on rxe1:1, given up, is tried again/ { t[$2 " " $6] = 1 }
             / lane [0-9]+ to PE [0-9]+ on rxe1:1 repaired/ { if (t[$2 " " $6]) n++ }
             END { print n + 0 }' "$outdir/rail_back.out")
    if grep -Eq 'returned -4 \(timed out\)|failed: timed out' "$outdir/rail_back.out"; then
        echo "rail back: an operation waited for SYMRAIL_OP_TIMEOUT"
        return 1
    fi
    if [ "$n" -gt 0 ]; then
        echo "rail back: $n lane ends on rxe1 repaired after they were tried again"
    else
        echo "rail back: no lane on rxe1 came back before the job ended"
        return 1
    fi
}
run_case "rail 1 down, then up again: its lanes are tried again and come back" 0 \
    '^rail back: [0-9]+ lane ends on rxe1 repaired after' rail_back

echo "two-guest suite: $(($(date +%s) - t_start)) s in guest a after the bed came up"
finish
