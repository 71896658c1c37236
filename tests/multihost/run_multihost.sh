#!/bin/sh
# Several hosts on one machine: two network namespaces, each with its own
# address and host name, joined by a bridge; Open MPI's mpirun starts its
# daemons in them through rsh_agent.sh.  PEs on one namespace-host are local
# peers (shared memory); across hosts they use the TCP transport.
#
# Runs the integration programs with 2 hosts x 2 PEs (mapped round-robin, so
# every PE's right neighbour is on the other host), tcp alone, an interface
# chosen by CIDR, and a link taken down mid-transfer.  Everything it creates
# goes at the end, also on failure.  Exits 77 only where namespaces, mpirun
# or the tools cannot be had.  Traffic stays on the bridge and loopback.
#
#   make check-multihost        (SR_MH_NET=10.99.0 picks the /24 to use)
: "${top_builddir:?top_builddir must be set (run through make check-multihost)}"
: "${top_srcdir:?}"
. "$top_srcdir/tests/integration/lib.sh"

skip() {
    echo "SKIP: $*"
    exit 77
}

MPIRUN=${MPIRUN:-$(command -v mpirun)}
[ -n "$MPIRUN" ] && [ -x "$MPIRUN" ] || skip "mpirun not found (apt-get install openmpi-bin)"
MH=$top_builddir/tests/multihost
AGENT=$top_srcdir/tests/multihost/rsh_agent.sh
. "$top_srcdir/tests/multihost/netns.sh"
H1=$NS_H1
H2=$NS_H2
mpid=

cleanup() {
    [ -n "$mpid" ] && kill "$mpid" 2>/dev/null && wait "$mpid" 2>/dev/null
    netns_cleanup
    rm -rf "$outdir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
netns_setup "$outdir/err" || { echo "FAIL: setting up the namespace hosts failed"; exit 1; }

# mh [mpirun options] PROG ARGS: 4 PEs, 2 per host, round-robin over hosts.
mh() {
    timeout 300 "$MPIRUN" --allow-run-as-root --mca plm_rsh_agent "$AGENT" \
        --mca oob_tcp_if_include "$NET.0/24" -H "$H1:2,$H2:2" -np 4 --map-by node \
        -x T_NO_PTR=1 -x SYMRAIL_HEAP_SIZE=256M "$@"
}

for t in t_rma t_signal t_notify t_atomic t_heap t_badinput t_storm; do
    run_case "multihost: $t, 2 hosts x 2 PEs (shm + tcp)" 0 '^ok: ' mh "$T/$t"
done
run_case "multihost: the PEs ran on two hosts" 0 "$H2" \
    mh sh -c 'echo "$(hostname) rank $OMPI_COMM_WORLD_RANK"'
run_case "multihost: t_rma over tcp only, interface by CIDR, stats per lane" 0 \
    'rail tcp:lane1 carried [1-9]' \
    mh -x SYMRAIL_TRANSPORTS=tcp -x SYMRAIL_TCP_IF="$NET.0/24" -x T_EXPECT_RAILS=2 \
    -x T_MAX_SIZE=4194304 "$T/t_rma"
run_case "multihost: t_atomic over tcp only" 0 '^ok: compare_swap lock' \
    mh -x SYMRAIL_TRANSPORTS=tcp -x T_ADDS=5000 "$T/t_atomic"
run_case "multihost: t_tcp_seg, segments over tcp between the hosts" 0 '^ok: tcp segments' \
    mh -x SYMRAIL_TRANSPORTS=tcp -x SYMRAIL_TCP_IF="$NET.0/24" "$T/t_tcp_seg"

# A link that goes down mid-transfer: the error names the peer, in time.
# PE 0 leaves without finalize (its peer is unreachable), so mpirun's own
# status is not success; a hang would be.
out=$outdir/linkdown.out
mh -x SYMRAIL_OP_TIMEOUT=4s -x T_WAIT_MS=15000 "$MH/t_linkdown" >"$out" 2>&1 &
mpid=$!
i=0
while ! grep -q 'streaming to PE 1' "$out" && [ $i -lt 600 ] && kill -0 $mpid 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
why=
if grep -q 'streaming to PE 1' "$out"; then
    sleep 0.5
    ip link set "${H2}v" down
    i=0
    while ! grep -Eq '^ok: |FAIL' "$out" && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ $i -lt 300 ] || why="no error 30 s after the link went down (a hang)"
    ip link set "${H2}v" up
else
    why="PE 0 never started streaming"
fi
wait $mpid
rc=$?
mpid=
if [ -z "$why" ]; then
    if ! grep -Eq '^ok: the link to PE 1 went down' "$out"; then
        why="PE 0 did not report the failed transfer"
    elif ! grep -Eq "tcp: PE 1 \($NET\.2:[0-9]+\) has not answered for [0-9]+ ms" "$out"; then
        why="no error names PE 1 and its address"
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        why="the job hung until mpirun was killed"
    fi
fi
if [ -z "$why" ]; then
    echo "PASS: multihost: link down mid-transfer gives an error naming the peer, no hang"
    grep -E '^ok: |has not answered' "$out" | sed 's/^/    | /'
    npass=$((npass + 1))
else
    echo "FAIL: multihost: link down mid-transfer: $why"
    sed 's/^/    | /' "$out" | tail -n 30
    nfail=$((nfail + 1))
fi
finish
