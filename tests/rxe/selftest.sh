#!/bin/sh
# Self-test of the Soft-RoCE test bed (run-in-vm.sh).  Each check boots its
# own guest.  Prints PASS:/FAIL: per check; exits 0 when all pass, 1 when one
# fails, 77 when the test bed is not installed (SYMRAIL_RXE_INSTALL=1 installs
# it first).
#
# GID indices on an rxe port (`ibv_devinfo -v -d rxe0` in the guest):
#   GID[0]  fe80::<from the veth MAC>   RoCE v2   (link-local, always there)
#   GID[1]  ::ffff:10.77.0.1            RoCE v2   (the IPv4-mapped address)
# Loopback traffic here uses GID index 1 (`ibv_rc_pingpong -g 1`, perftest's
# `-x 1`, which perftest also picks by itself).
set -u
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
R=$here/run-in-vm.sh
failed=0
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "${SYMRAIL_RXE_INSTALL:-0}" = 1 ]; then
    "$R" --install || exit 1
fi
for t in ibv_devices ibv_rc_pingpong; do
    command -v "$t" >/dev/null ||
        { echo "SKIP: $t is not installed (tests/rxe/run-in-vm.sh --install adds it)"; exit 77; }
done

pass() { echo "PASS: $1"; }
fail() {
    echo "FAIL: $1: $2"
    sed 's/^/    | /' "$out"
    failed=1
}

# check NAME EXPECTED-RC [run-in-vm options] -- CMD...; output in $out.
check_run() {
    name=$1 want=$2
    shift 2
    "$R" --timeout 300 "$@" > "$out" 2>&1
    rc=$?
    if [ "$rc" = 77 ]; then
        cat "$out"
        exit 77
    fi
    [ "$rc" = "$want" ] && return 0
    fail "$name" "exit status $rc, expected $want"
    return 1
}

# (0) a kernel that is not installed: skip, naming the ones there are.
name="--kernel with no such kernel skips"
"$R" --kernel 0.0.0-none -- true > "$out" 2>&1
rc=$?
if [ "$rc" = 77 ] && grep -q 'no kernel 0.0.0-none .*there are: .' "$out"; then
    pass "$name"
else
    fail "$name" "exit status $rc, expected 77 and the installed kernels"
fi

# (1) one device
name="ibv_devices lists rxe0"
if check_run "$name" 0 -- ibv_devices; then
    if grep -qw rxe0 "$out"; then pass "$name"; else fail "$name" "rxe0 not in the output"; fi
fi

# (2) RC ping-pong over rxe0 in loopback: server in the background, client to
# the veth address; the client retries until the server listens.
name="ibv_rc_pingpong over rxe0 in loopback"
pingpong='
ibv_rc_pingpong -d rxe0 -g 1 -n 200 > /tmp/server.log 2>&1 &
server=$!
i=0
until timeout 60 ibv_rc_pingpong -d rxe0 -g 1 -n 200 10.77.0.1 > /tmp/client.log 2>&1; do
    i=$((i + 1))
    if [ $i -ge 40 ] || ! kill -0 $server 2>/dev/null; then
        echo "client failed:"; cat /tmp/client.log; kill $server 2>/dev/null; exit 1
    fi
    sleep 0.25
done
wait $server
src=$?
echo "client:"; cat /tmp/client.log; echo "server (exit $src):"; cat /tmp/server.log
exit $src
'
if check_run "$name" 0 -- sh -c "$pingpong"; then
    if [ "$(grep -c 'iters in' "$out")" = 2 ]; then
        pass "$name"
    else
        fail "$name" "no iteration summary from both sides"
    fi
fi

# (3) two devices
name="--devices 2: ibv_devices lists rxe0 and rxe1"
if check_run "$name" 0 --devices 2 -- ibv_devices; then
    if grep -qw rxe0 "$out" && grep -qw rxe1 "$out"; then
        pass "$name"
    else
        fail "$name" "rxe0 and rxe1 not both in the output"
    fi
fi

# (4) the command's exit status comes back
name="exit status 7 is propagated"
check_run "$name" 7 -- sh -c 'exit 7' && pass "$name"

exit "$failed"
