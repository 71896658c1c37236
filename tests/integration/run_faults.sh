#!/bin/sh
# shellcheck disable=SC2154 # outdir, T, npass, nfail: lib.sh
# The fault matrix: each case makes one fault happen to a running job and
# asserts the documented outcome (exit status, message, how long it took),
# then that nothing of the job is left: no process (each case marks its
# processes through the environment), no /dev/shm object of the job, no
# file (PMIx sockets, symrun's directory) in the case's TMPDIR.  A table of the
# cases and their results ends the output.
# QP errors and links taken down are verbs faults: tests/rxe (make check-rxe).
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
export SYMRAIL_OP_TIMEOUT=2s
# Longest a fault may take to end a job: the timeout, symrun's grace period
# (2 s) and room for a loaded machine.
BOUND_S=${T_FAULT_BOUND_S:-20}

table=$outdir/table

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# record CASE EXPECTED WHY: WHY empty = pass.
record() {
    if [ -z "$3" ]; then
        echo "PASS: $1"
        npass=$((npass + 1))
        printf '%-50s %-52s PASS\n' "$1" "$2" >>"$table"
    else
        echo "FAIL: $1: $3"
        nfail=$((nfail + 1))
        printf '%-50s %-52s FAIL\n' "$1" "$2" >>"$table"
        for f in "$cdir"/out "$cdir"/err; do
            [ -s "$f" ] && sed 's/^/    | /' "$f" | tail -n 20
        done
    fi
}

# Processes of the case: every program of a case runs with T_FAULT_MARK set
# to its directory, which survives exec (libtool's wrappers exec the real
# programs) and reparenting.
case_pids() {
    grep -lzx "T_FAULT_MARK=$cdir" /proc/[0-9]*/environ 2>/dev/null |
        sed 's|/proc/\([0-9]*\)/environ|\1|' | tr '\n' ' '
}

# Processes of the case still there after up to BOUND_S (a PE that notices
# its launcher is gone needs up to SYMRAIL_OP_TIMEOUT, longer under load).
orphans() {
    i=0
    while [ $i -lt $((BOUND_S * 10)) ]; do
        left=$(case_pids)
        [ -z "$left" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    echo "$left"
}

# leftovers SYMRUN_PID: why the case left something behind, or nothing.
leftovers() {
    left=$(orphans)
    if [ -n "$left" ]; then
        # Do not let them disturb the next case.
        kill -KILL $left 2>/dev/null
        echo "processes left: $left"
        return
    fi
    n=$(shm_left "$1")
    [ "$n" -gt 0 ] && { echo "$n objects left in /dev/shm"; return; }
    files=$(ls -A "$cdir/tmp")
    [ -n "$files" ] && echo "left in TMPDIR: $files"
}

new_case() {
    cdir=$outdir/case.$1
    mkdir -p "$cdir/tmp" "$cdir/dir"
}

# wait_files DIR PREFIX N: until N files PREFIX.* exist while the job lives.
wait_files() {
    i=0
    while [ "$(find "$1" -maxdepth 1 -name "$2.*" | wc -l)" -lt "$3" ]; do
        kill -0 "$spid" 2>/dev/null || return 1
        [ $i -ge 600 ] && return 1
        sleep 0.1
        i=$((i + 1))
    done
}

# start_stream KEY TL [WRAP]: 3 PEs streaming verified puts; WRAP runs each
# PE under a shell, so that the PEs are not symrun's children.
start_stream() {
    new_case "$1"
    if [ "${3:-}" = survive ]; then
        # A PE killed is no failure to symrun (status 0), so the
        # survivors have to find out by themselves.
        env TMPDIR="$cdir/tmp" T_FAULT_DIR="$cdir/dir" T_FAULT_MARK="$cdir" SYMRAIL_TRANSPORTS=$2 \
            "$SYMRUN" -n 3 --timeout 120 sh -c \
            '"$0" stream; rc=$?; [ $rc -eq 137 ] && exit 0; exit $rc' "$T/t_faults" \
            >"$cdir/out" 2>"$cdir/err" </dev/null &
    elif [ -n "${3:-}" ]; then
        env TMPDIR="$cdir/tmp" T_FAULT_DIR="$cdir/dir" T_FAULT_MARK="$cdir" SYMRAIL_TRANSPORTS=$2 \
            "$SYMRUN" -n 3 --timeout 120 sh -c '"$0" stream & wait' "$T/t_faults" \
            >"$cdir/out" 2>"$cdir/err" </dev/null &
    else
        env TMPDIR="$cdir/tmp" T_FAULT_DIR="$cdir/dir" T_FAULT_MARK="$cdir" SYMRAIL_TRANSPORTS=$2 \
            "$SYMRUN" -n 3 --timeout 120 "$T/t_faults" stream \
            >"$cdir/out" 2>"$cdir/err" </dev/null &
    fi
    spid=$!
    wait_files "$cdir/dir" streaming 3 || return 1
    # The tracking must see the PEs, or "nothing left" would prove nothing.
    for f in "$cdir"/dir/pid.*; do
        case " $(case_pids)" in
            *" $(cat "$f") "*) ;;
            *) echo "FAIL: the case's processes cannot be told: PE $(cat "$f") not seen"
               return 1 ;;
        esac
    done
}

# A PE killed (SIGKILL) while every PE streams puts: symrun names it and
# ends the job; survivors stop at their next operation or by symrun's signal.
for tl in shm tcp; do
    name="PE killed (SIGKILL) mid-transfer, $tl"
    expect="job ends non-zero naming rank 1, in ${BOUND_S}s"
    if ! start_stream kill_$tl $tl; then
        kill -KILL $spid 2>/dev/null
        wait $spid
        record "$name" "$expect" "the job did not start streaming"
        continue
    fi
    victim=$(cat "$cdir/dir/pid.1")
    t0=$(now_ms)
    kill -KILL "$victim"
    wait $spid
    rc=$?
    el=$(($(now_ms) - t0))
    why=
    [ "$rc" -ne 0 ] || why="exit status 0"
    # symrun names the first rank it reaps: rank 1, or a survivor that saw
    # rank 1 gone first and said so (over TCP a closed lane can tell first).
    [ -z "$why" ] && ! grep -Eq "^symrun: rank 1 \(pid $victim\) killed by signal 9 \(SIGKILL\)|warn: PE 1 \(pid $victim\) failed: " \
        "$cdir/err" && why="no message naming rank 1"
    [ -z "$why" ] && [ $el -gt $((BOUND_S * 1000)) ] && why="took $el ms"
    [ -z "$why" ] && grep -q 'is wrong' "$cdir/err" && why="a survivor saw corrupt data"
    [ -z "$why" ] && why=$(leftovers $spid)
    record "$name" "$expect" "$why"
done

# The same where symrun does not end the job: the survivors' next
# operation fails, and the library's message names the PE that is gone.
for tl in shm tcp; do
    name="PE killed (SIGKILL), survivors notice, $tl"
    expect="survivors' ops fail naming PE 1, in ${BOUND_S}s"
    if ! start_stream survive_$tl $tl survive; then
        kill -KILL $spid 2>/dev/null
        wait $spid
        record "$name" "$expect" "the job did not start streaming"
        continue
    fi
    victim=$(cat "$cdir/dir/pid.1")
    t0=$(now_ms)
    kill -KILL "$victim"
    wait $spid
    rc=$?
    el=$(($(now_ms) - t0))
    why=
    [ "$rc" -ne 0 ] || why="exit status 0"
    [ -z "$why" ] && ! grep -Eq '^PE (0|2): round [0-9]+ failed: ' "$cdir/err" &&
        why="no survivor saw its operation fail"
    [ -z "$why" ] && ! grep -Eq "error: .*PE 1\b" "$cdir/err" && why="no error names PE 1"
    [ -z "$why" ] && [ $el -gt $((BOUND_S * 1000)) ] && why="took $el ms"
    [ -z "$why" ] && grep -q 'is wrong' "$cdir/err" && why="a survivor saw corrupt data"
    [ -z "$why" ] && why=$(leftovers $spid)
    record "$name" "$expect" "$why"
done

# The launcher killed (SIGKILL): no PE survives it, whether symrun started
# it (its death signal) or a shell between them (the lost PMIx server), also
# after the PE had finalized and initialized once, or after a failed init.
for how in direct wrapped reinit failed; do
    case $how in
        direct) name="symrun killed (SIGKILL), PEs its children" ;;
        wrapped) name="symrun killed (SIGKILL), PEs under a shell" ;;
        reinit) name="symrun killed (SIGKILL), PEs re-initialized" ;;
        *) name="symrun killed (SIGKILL), PEs after a failed init" ;;
    esac
    expect="every PE exits within 5s, nothing left"
    wrap=
    [ $how = direct ] || wrap=1
    [ $how = reinit ] && export T_REINIT=1
    [ $how = failed ] && export T_REINIT=failed
    start_stream launcher_$how tcp $wrap
    started=$?
    unset T_REINIT
    if [ $started -ne 0 ]; then
        kill -KILL $spid 2>/dev/null
        wait $spid
        record "$name" "$expect" "the job did not start streaming"
        continue
    fi
    kill -KILL $spid
    wait $spid 2>/dev/null
    left=$(orphans)
    why=
    if [ -n "$left" ]; then
        kill -KILL $left 2>/dev/null
        why="PEs survived their launcher: $left"
    fi
    [ -z "$why" ] && [ "$(shm_left $spid)" -gt 0 ] && why="objects left in /dev/shm"
    # A launcher killed cannot remove its directory: the next symrun of the
    # user does.
    if [ -z "$why" ]; then
        TMPDIR="$cdir/tmp" "$SYMRUN" -n 1 true >/dev/null 2>&1 </dev/null
        files=$(ls -A "$cdir/tmp")
        [ -n "$files" ] && why="the next symrun did not remove $files"
    fi
    record "$name" "$expect" "$why"
done

# run_fault NAME EXPECTED WANT_RC PATTERN CMD...: a case that ends by itself.
run_fault() {
    name=$1 expect=$2 want=$3 pattern=$4
    shift 4
    new_case "$(echo "$name" | tr -c 'a-z0-9' _)"
    t0=$(now_ms)
    env TMPDIR="$cdir/tmp" T_FAULT_DIR="$cdir/dir" T_FAULT_MARK="$cdir" "$@" >"$cdir/out" 2>"$cdir/err" </dev/null &
    spid=$!
    wait $spid
    rc=$?
    el=$(($(now_ms) - t0))
    why=
    [ "$rc" -eq "$want" ] || why="exit status $rc, expected $want"
    [ -z "$why" ] && ! cat "$cdir/out" "$cdir/err" | grep -Eq -- "$pattern" &&
        why="output lacks /$pattern/"
    [ -z "$why" ] && [ $el -gt $((BOUND_S * 3000)) ] && why="took $el ms"
    [ -z "$why" ] && why=$(leftovers $spid)
    record "$name" "$expect" "$why"
}

for tl in shm tcp; do
    run_fault "PE stopped (SIGSTOP), $tl" "barrier fails PEER_UNRESPONSIVE in 2s, resumes" 0 \
        '^ok: a stopped peer is unresponsive' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 60 "$T/t_liveness"
    run_fault "heap exhaustion, $tl" "NULL at the same call on every PE, data intact" 0 \
        '^ok: the heap ran out after [0-9]+ allocations.*guard intact' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_HEAP_SIZE=64M "$SYMRUN" -n 3 --timeout 60 \
        "$T/t_faults" heap
    why=
    grep -q 'raise SYMRAIL_HEAP_SIZE' "$cdir/err" || why="no such message"
    record "heap exhaustion message, $tl" "the error says what to raise" "$why"
    run_fault "notify receiver never consumes, $tl" "send fails ERR_TIMEOUT after 2 slots" 0 \
        '^ok: notify to a receiver that does not consume times out after 2 slots' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=2 SYMRAIL_OP_TIMEOUT=1s \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_notify" stuck
done

# A TCP lane reset mid-transfer (the test fault hook closes lane 0 after 20
# slices): its slices are retried on the other lane, every byte verified.
run_fault "TCP lane reset mid-transfer" "slices retried on the other lane, data verified" 0 \
    'slices retried on another lane' \
    env SYMRAIL_TRANSPORTS=tcp SYMRAIL_TCP_FAULT_CONN=0:20 T_EXPECT_RETRIES=1 \
    T_MAX_SIZE=1048576 T_NO_PTR=1 "$SYMRUN" -n 2 --timeout 120 "$T/t_rma"

# The only lane reset: nothing to retry on, so the operation fails with an
# error naming the peer and the test program ends the job.
run_fault "TCP lane reset, the only lane" "the operation fails naming the peer, job ends" 1 \
    'error: .* to PE [01] failed on lane 0' \
    env SYMRAIL_TRANSPORTS=tcp SYMRAIL_TCP_LANES=1 SYMRAIL_TCP_FAULT_CONN=0:20 \
    T_MAX_SIZE=1048576 T_NO_PTR=1 "$SYMRUN" -n 2 --timeout 120 "$T/t_rma"

echo "fault matrix:"
printf '%-50s %-52s %s\n' "case" "expected" "result"
cat "$table"
finish
