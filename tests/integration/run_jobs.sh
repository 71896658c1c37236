#!/bin/sh
# Independent jobs (t_jobs): an exporter job of 1 and of 2 PEs and connector
# jobs of one PE, started separately, meet through files in a directory.
# The first connector is killed (SIGKILL) after its exchange: the exporter
# must see PEER_GONE within a short SYMRAIL_OP_TIMEOUT and keep its own job
# going; a second connector then connects, its predecessor's descriptor is
# refused as stale, and it disconnects at the end.
#
# Each case runs over shared memory (the jobs are on one host), over TCP
# (SYMRAIL_TRANSPORTS=tcp in every job) and mixed (the connectors run TCP
# only, so the exporter must not take shared memory to them either); the log
# (SYMRAIL_LOG=info) must say that the expected one was taken, at both ends.
# In the Soft-RoCE guest (tests/rxe/verbs_suite.sh, T_JOBS_MODES=verbs) the
# jobs run verbs without shared memory: segments and batches go over RDMA,
# the messages over TCP (the bytes the rails carried are checked too); and
# with an exporter on verbs and connectors on TCP only, everything is TCP.
# Pools are malloc'd (cross-memory attach) or, with T_JOBS_ALLOC=1, from
# symrail_seg_alloc (mapped).
#
# stale_case: a writer job writes T_JOBS_STALE segments of an owner job
# each through its descriptor after the owner deregistered it (STALE), and
# every transfer between and after them must succeed; over verbs each
# stale access breaks the queue pairs it was on, at both ends, and every
# lane must be repaired (over the TCP connection between the jobs): the
# writer counts at least one repair per stale access, neither log says a
# lane cannot be repaired, and each lane the writer saw fail came back.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
[ -x "$T/t_jobs" ] || { echo "SKIP: t_jobs not built"; exit 77; }

# wait_file PATH SECONDS: 0 once PATH exists.
wait_file() {
    i=0
    while [ ! -e "$1" ]; do
        i=$((i + 1))
        [ "$i" -le $(($2 * 10)) ] || return 1
        sleep 0.1
    done
}

# over FILE WANT: every connected peer in FILE's log is reached over WANT
# (shm, tcp or verbs), and at least one is.
over() {
    shm=$(grep -c 'is reached over shared memory' "$1")
    tcp=$(grep -c 'is reached over TCP' "$1")
    ib=$(grep -c 'is reached over verbs' "$1")
    case $2 in
    shm) [ "$shm" -gt 0 ] && [ "$tcp" -eq 0 ] && [ "$ib" -eq 0 ] ;;
    tcp) [ "$tcp" -gt 0 ] && [ "$shm" -eq 0 ] && [ "$ib" -eq 0 ] ;;
    verbs) [ "$ib" -gt 0 ] && [ "$shm" -eq 0 ] && [ "$tcp" -eq 0 ] ;;
    esac
}

# verbs_carried FILE: the segment traffic went over RDMA (t_jobs prints the
# bytes its verbs rails carried).
verbs_carried() {
    grep -q '^[a-z0-9 ]*: verbs carried [1-9][0-9]* bytes' "$1"
}

# jobs_case NAME N BYSTANDER SINGLETON MODE ALLOC: exporter of N PEs,
# connector killed, connector again (SINGLETON 1: started without a
# launcher); BYSTANDER 1: a third connector is connected throughout and
# exchanges after the kill; MODE shm, tcp or mixed (see above).
jobs_case() {
    name="$1 ($5${6:+, seg_alloc pools})" n=$2 by=$3 single=$4 mode=$5
    launch="$SYMRUN -n 1 --timeout 120"
    [ "$single" != 1 ] || launch="timeout 120"
    atl=shm,tcp ctl=shm,tcp want=shm
    [ "$mode" != tcp ] || atl=tcp
    [ "$mode" = shm ] || ctl=tcp want=tcp
    [ "$mode" != verbs ] || atl=verbs ctl=verbs want=verbs
    [ "$mode" != verbs-tcp ] || atl=verbs ctl=tcp want=tcp
    # Both on verbs, on rails of different subnets (rxe0, rxe1 in the guest):
    # the acceptor's answer carries no QPs, and both ends stay on TCP.
    aenv= cenv=
    [ "$mode" != verbs-apart ] || atl=verbs ctl=verbs want=tcp aenv=SYMRAIL_IB_DEVICES=rxe0 \
        cenv=SYMRAIL_IB_DEVICES=rxe1
    export SYMRAIL_LOG=info T_JOBS_ALLOC="${6:-0}"

    d=$(mktemp -d "$outdir/jobs.XXXXXX")
    why=
    env SYMRAIL_OP_TIMEOUT=4s SYMRAIL_TRANSPORTS=$atl $aenv T_JOBS_BYSTANDER="$by" \
        "$SYMRUN" -n "$n" --timeout 120 \
        "$T/t_jobs" exporter "$d" >"$d/a.out" 2>&1 &
    apid=$!
    cpid=
    if [ "$by" = 1 ]; then
        env SYMRAIL_OP_TIMEOUT=4s SYMRAIL_TRANSPORTS=$ctl $cenv \
            "$SYMRUN" -n 1 --timeout 120 "$T/t_jobs" connector "$d" 3 \
            >"$d/c.out" 2>&1 &
        cpid=$!
        wait_file "$d/c.seg" 60 || why="the bystander did not connect"
    fi
    env SYMRAIL_OP_TIMEOUT=4s SYMRAIL_TRANSPORTS=$ctl $cenv \
        "$SYMRUN" -n 1 --timeout 120 "$T/t_jobs" connector "$d" 1 \
        >"$d/b1.out" 2>&1 &
    b1pid=$!
    if wait_file "$d/b1.ok" 60; then
        # The connector's own process, not its launcher.
        kill -KILL "$(cat "$d/b1.ok")"
        wait "$b1pid"
        : >"$d/killed"
        # Its messages must not mix with the bystander's at the exporter.
        [ "$by" != 1 ] || wait_file "$d/c.done" 60 || why="no exchange with the bystander"
        env SYMRAIL_OP_TIMEOUT=4s SYMRAIL_TRANSPORTS=$ctl $cenv $launch "$T/t_jobs" connector "$d" 2 \
            >"$d/b2.out" 2>&1
        rc2=$?
        [ -n "$why" ] || [ "$rc2" -eq 0 ] || why="second connector: exit status $rc2"
    else
        why="the first connector did not finish its exchange"
        kill "$b1pid" 2>/dev/null
        wait "$b1pid"
    fi
    wait "$apid"
    rca=$?
    if [ -n "$cpid" ]; then
        wait "$cpid"
        rcc=$?
        [ -n "$why" ] || [ "$rcc" -eq 0 ] || why="bystander: exit status $rcc"
        [ -n "$why" ] || grep -q '^ok: jobs: bystander' "$d/c.out" || why="bystander: no ok line"
    fi
    [ -n "$why" ] || [ "$rca" -eq 0 ] || why="exporter: exit status $rca"
    left=$(($(shm_left "$apid") + $(shm_left "$b1pid")))
    [ -n "$why" ] || [ "$left" -eq 0 ] || why="left $left shared-memory objects in /dev/shm"
    [ -n "$why" ] || grep -q '^ok: jobs: exporter' "$d/a.out" || why="exporter: no ok line"
    [ -n "$why" ] || grep -q '^exporter: PEER_GONE after' "$d/a.out" ||
        why="exporter: no PEER_GONE line"
    [ -n "$why" ] || grep -q '^ok: jobs: connector 2' "$d/b2.out" || why="connector 2: no ok line"
    [ -n "$why" ] || grep -q '^connector 1: exchange done' "$d/b1.out" ||
        why="connector 1: no exchange"
    for f in a b1 b2 ${cpid:+c}; do
        [ -n "$why" ] || over "$d/$f.out" $want || why="$f: not every peer over $want"
    done
    if [ "$mode" = verbs ]; then
        for f in a b2; do
            [ -n "$why" ] || verbs_carried "$d/$f.out" || why="$f: verbs carried nothing"
        done
    fi
    if [ -z "$why" ]; then
        echo "PASS: $name"
        cat "$d/a.out" "$d/b2.out" ${cpid:+"$d/c.out"} |
            grep '^exporter:\|^ok:\|connect took\|is reached over\|verbs carried' | sed 's/^.*info: //; s/^/    /'
        # Which lanes a stale key broke (repaired over TCP between the jobs).
        cat "$d/a.out" "$d/b2.out" | grep 'to connected peer .* is down' |
            sed 's/^.*warn: verbs: //; s/(QP [0-9]*) //; s/^/    /' | sort | uniq -c
        npass=$((npass + 1))
    else
        echo "FAIL: $name: $why"
        for f in a b1 b2 c; do
            [ -f "$d/$f.out" ] && sed "s/^/    $f | /" "$d/$f.out" | tail -n 25
        done
        nfail=$((nfail + 1))
    fi
}

# stale_case MODE (shm, tcp or verbs, as above).
stale_case() {
    name="jobs: stale accesses between two jobs, then transfers ($1)" mode=$1
    tl=shm,tcp
    [ "$mode" != tcp ] || tl=tcp
    [ "$mode" != verbs ] || tl=verbs
    rep=0
    [ "$mode" != verbs ] || rep=1
    d=$(mktemp -d "$outdir/stale.XXXXXX")
    why=
    env SYMRAIL_LOG=info SYMRAIL_OP_TIMEOUT=10s SYMRAIL_TRANSPORTS=$tl SYMRAIL_SLICE_SIZE=16K \
        T_JOBS_STALE=8 "$SYMRUN" -n 1 --timeout 200 "$T/t_jobs" owner "$d" >"$d/o.out" 2>&1 &
    opid=$!
    env SYMRAIL_LOG=info SYMRAIL_OP_TIMEOUT=10s SYMRAIL_TRANSPORTS=$tl SYMRAIL_SLICE_SIZE=16K \
        T_JOBS_STALE=8 T_JOBS_EXPECT_REPAIRS=$rep "$SYMRUN" -n 1 --timeout 200 "$T/t_jobs" \
        writer "$d" >"$d/w.out" 2>&1
    rcw=$?
    wait "$opid"
    rco=$?
    [ "$rcw" -eq 0 ] || why="writer: exit status $rcw"
    [ -n "$why" ] || [ "$rco" -eq 0 ] || why="owner: exit status $rco"
    [ -n "$why" ] || grep -q '^ok: jobs: owner' "$d/o.out" || why="owner: no ok line"
    [ -n "$why" ] || grep -q '^ok: jobs: writer' "$d/w.out" || why="writer: no ok line"
    for f in o w; do
        [ -n "$why" ] || over "$d/$f.out" "$mode" || why="$f: not every peer over $mode"
        [ -n "$why" ] || ! grep -q 'cannot be repaired\|not repaired' "$d/$f.out" ||
            why="$f: a lane was not repaired"
    done
    if [ -z "$why" ] && [ "$mode" = verbs ]; then
        for f in o w; do
            [ -n "$why" ] || verbs_carried "$d/$f.out" || why="$f: verbs carried nothing"
            [ -n "$why" ] || grep -q 'to PE [0-9]* on .* repaired (QP' "$d/$f.out" ||
                why="$f: no lane repaired"
        done
        # Each lane that failed at the writer with an error of its own.
        for l in $(sed -n 's/.*verbs: lane \([0-9]*\) to connected peer .*repairing$/\1/p' \
                   "$d/w.out" | sort -u); do
            [ -n "$why" ] || grep -q "verbs: lane $l to PE [0-9]* on .* repaired" "$d/w.out" ||
                why="writer: its lane $l failed and was not repaired"
        done
    fi
    if [ -z "$why" ]; then
        echo "PASS: $name"
        cat "$d/o.out" "$d/w.out" | grep '^writer:\|^ok:\|verbs carried' | sed 's/^/    /'
        npass=$((npass + 1))
    else
        echo "FAIL: $name: $why"
        for f in o w; do
            sed "s/^/    $f | /" "$d/$f.out" | tail -n 30
        done
        nfail=$((nfail + 1))
    fi
}

for mode in ${T_JOBS_MODES:-shm tcp}; do
    stale_case $mode
    jobs_case "jobs: two jobs of one PE connect, one is killed and restarted" 1 0 0 $mode
    jobs_case "jobs: a job of 2 PEs and jobs of one PE, one of them connected throughout" \
        2 1 0 $mode
    jobs_case "jobs: a job of one PE, a job of one PE killed, a singleton after it" 1 0 1 $mode
    jobs_case "jobs: two jobs of one PE connect, one is killed and restarted" 1 0 0 $mode 1
done
case " $T_JOBS_MODES " in
*" verbs "*)
    # The exporter runs verbs, the connectors TCP only: nobody offers verbs.
    jobs_case "jobs: a verbs job and TCP-only jobs connect, one is killed and restarted" \
        1 0 0 verbs-tcp
    jobs_case "jobs: verbs jobs whose rails do not reach each other connect over TCP" \
        1 0 0 verbs-apart ;;
esac
if [ -z "$T_JOBS_MODES" ]; then
    jobs_case "jobs: two jobs of one PE connect, one is killed and restarted" 1 0 0 mixed
    jobs_case "jobs: a job of 2 PEs and jobs of one PE, one of them connected throughout" \
        2 1 0 mixed 1
fi
finish
