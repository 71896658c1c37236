#!/bin/sh
# The verbs transport against perftest on Soft-RoCE, in one qemu guest boot
# (tests/rxe/run-in-vm.sh): `make bench-rxe`, or by hand from the build
# directory:
#
#   sh SRCDIR/tests/perf/rxe_bench.sh [--quick] [--passes N] [--log FILE]
#
# On rxe0 only (loopback, GID index 1, the IPv4-mapped one), N times in turn:
#   ib_write_bw and ib_read_bw -s SIZE for 64K, 256K, 1M and 4M, then
#   sr_bench --net over SYMRAIL_TRANSPORTS=verbs SYMRAIL_IB_DEVICES=rxe0;
# and in each pass ib_write_lat -s 8 right after sr_bench's latency table.  It prints the
# last sr_bench table, then one combined table: perftest MB/s and symrail
# MB/s (put_nbi / get_nbi windows of symmetric, registered buffers), each
# the median of the N passes, their ratio, the blocking put / get, and the
# ratio of each pass, which shows how much the machine's noise moves it;
# and the 8-byte latencies, median and mean.  MB/s is 10^6 bytes/s
# throughout; perftest's "MB/sec" (2^20 bytes/s) is converted.
#
#   --quick      one pass of shorter runs, for a smoke test
#   --passes N   passes (default 3): an emulated device on a shared machine
#                varies by tens of percent from one run to the next
#   --log FILE   also keep every program's raw output in FILE
#   --guests 2   (or RXE_BENCH_GUESTS=2) two guests on two rails instead,
#                perftest and the PEs across them: rxe_bench_two.sh
#
# SYMRAIL_* variables set by the caller reach the guest (for experiments:
# SYMRAIL_SLICE_SIZE=1M, SYMRAIL_IB_QPS_PER_PEER=1, ...), except that
# SYMRAIL_TRANSPORTS and SYMRAIL_IB_DEVICES are always verbs and rxe0;
# SYMRAIL_HEAP_SIZE defaults to 256M; SYMRAIL_RXE_* (the guest kernel:
# SYMRAIL_RXE_KERNEL=6.1) are the test bed's.  The guest gets RXE_BENCH_MEM MiB
# (default 3072) and RXE_BENCH_TIMEOUT seconds (default 900).  Exit 77 when
# qemu, a kernel with rdma_rxe or perftest is missing.
set -u
me=rxe_bench
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
SIZES="64K 256K 1M 4M"

# Bytes of a size like 64K or 4M.
bytes() {
    case $1 in
        *K) echo $((${1%K} * 1024)) ;;
        *M) echo $((${1%M} * 1048576)) ;;
        *) echo "$1" ;;
    esac
}

# ---- host: boot the guest, run this script in it --------------------------------
if [ "${1:-}" != --in-guest ]; then
    # Two guests, PEs and perftest across them: rxe_bench_two.sh.
    case " $* " in *" --guests 2 "*) RXE_BENCH_GUESTS=2 ;; esac
    if [ "${RXE_BENCH_GUESTS:-1}" = 2 ]; then
        exec sh "$here/rxe_bench_two.sh" "$@"
    fi
    quick=0 log='' passes=''
    while [ $# -gt 0 ]; do
        case $1 in
            --quick) quick=1; shift ;;
            --passes)
                if [ $# -lt 2 ] || ! [ "$2" -ge 1 ] 2>/dev/null; then
                    echo "$me: --passes needs a count" >&2
                    exit 2
                fi
                passes=$2; shift 2 ;;
            --log) [ $# -ge 2 ] || { echo "$me: --log needs a file" >&2; exit 2; }
                log=$2; shift 2 ;;
            -h | --help) sed -n '2,33s/^# \{0,1\}//p' "$here/rxe_bench.sh"; exit 0 ;;
            *) echo "$me: unknown argument $1 (see --help)" >&2; exit 2 ;;
        esac
    done
    builddir=${top_builddir:-.}
    cd "$builddir" || exit 1
    for f in symrun tests/perf/sr_bench; do
        [ -x "$f" ] || { echo "$me: no ./$f in $(pwd): build first (make bench-rxe does)" >&2; exit 2; }
    done
    for t in ib_write_bw ib_read_bw ib_write_lat; do
        command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (perftest)"; exit 77; }
    done
    case $log in '' | /*) ;; *) log=$(pwd -P)/$log ;; esac
    # The caller's SYMRAIL_* knobs, passed on; the rail is fixed below.
    set --
    for v in $(env | sed -n 's/^\(SYMRAIL_[A-Za-z0-9_]*\)=.*/\1/p'); do
        # SYMRAIL_RXE_* steer the test bed (run-in-vm.sh reads them here), not
        # the library, which would warn about them.
        case $v in SYMRAIL_TRANSPORTS | SYMRAIL_IB_DEVICES | SYMRAIL_RXE_*) continue ;; esac
        eval "set -- \"\$@\" --env \"$v=\${$v}\""
    done
    exec sh "$here/../rxe/run-in-vm.sh" --devices 1 --mem "${RXE_BENCH_MEM:-3072}" \
        --timeout "${RXE_BENCH_TIMEOUT:-900}" "$@" \
        --env SYMRAIL_TRANSPORTS=verbs --env SYMRAIL_IB_DEVICES=rxe0 \
        --env RXE_BENCH_QUICK="$quick" --env RXE_BENCH_PASSES="$passes" \
        --env RXE_BENCH_LOG="$log" \
        -- sh "$here/rxe_bench.sh" --in-guest
fi

# ---- guest: everything else --------------------------------------------------------
quick=${RXE_BENCH_QUICK:-0}
log=${RXE_BENCH_LOG:-}
: "${SYMRAIL_HEAP_SIZE:=256M}"
export SYMRAIL_HEAP_SIZE
addr=10.77.0.1
w=$(mktemp -d /tmp/rxe_bench.XXXXXX) || exit 1
port=18515
if [ "$quick" = 1 ]; then
    passes=${RXE_BENCH_PASSES:-1} mib=12 lat_iters=2000 sr_ms=400
else
    passes=${RXE_BENCH_PASSES:-3} mib=24 lat_iters=5000 sr_ms=800
fi

say() { printf '%s\n' "$*"; }
raw() { # file title: append to the log
    [ -z "$log" ] || { echo "==== $2"; cat "$1"; } >> "$log"
}
[ -z "$log" ] || : > "$log" || { echo "$me: cannot write $log" >&2; exit 1; }

# perftest TOOL OUT ARGS...: server in the background, client to $addr;
# the client retries while the server is not listening yet.
perftest() {
    tool=$1 out=$2
    shift 2
    port=$((port + 1))
    timeout 120 "$tool" -d rxe0 -x 1 -F -p "$port" "$@" > "$out.srv" 2>&1 &
    srv=$!
    tries=0
    while :; do
        timeout 120 "$tool" -d rxe0 -x 1 -F -p "$port" "$@" "$addr" > "$out" 2>&1 && break
        tries=$((tries + 1))
        if [ "$tries" -ge 40 ] || ! grep -qi 'connect' "$out"; then
            kill "$srv" 2>/dev/null
            wait "$srv" 2>/dev/null
            raw "$out" "$tool $* (FAILED)"
            echo "$me: $tool $* failed:" >&2
            sed 's/^/  /' "$out" >&2
            return 1
        fi
        sleep 0.25
    done
    wait "$srv"
    raw "$out" "$tool $*"
    return 0
}

fail=0
say "# $me: perftest and sr_bench --net on Soft-RoCE rxe0 (loopback, GID index 1), $(uname -r)"
say "# $passes pass(es) of: ib_write_bw + ib_read_bw ($mib MiB a run, at least 5 messages), sr_bench --net (~$sr_ms ms a kernel and size)"

for p in $(seq "$passes"); do
    for s in $SIZES; do
        b=$(bytes "$s")
        for op in write read; do
            n=$((mib * 1048576 / b))
            [ "$n" -ge 5 ] || n=5   # perftest's minimum
            perftest "ib_${op}_bw" "$w/${op}_$s.$p" -s "$b" -n "$n" || fail=1
        done
    done
    # Latencies every pass, symrail and ib_write_lat back to back, so that
    # both see the same spell of the machine.
    ./symrun -n 2 --timeout 400 ./tests/perf/sr_bench --net --sizes "$(echo "$SIZES" | tr " " ,)" \
        --time-ms "$sr_ms" > "$w/sr.$p" 2>&1
    rc=$?
    raw "$w/sr.$p" "sr_bench --net, pass $p (exit $rc)"
    [ "$rc" = 0 ] || { echo "$me: sr_bench failed (exit $rc):" >&2; cat "$w/sr.$p" >&2; fail=1; }
    perftest ib_write_lat "$w/lat.$p" -s 8 -n "$lat_iters" || fail=1
done

say ""
cat "$w/sr.$passes"

# ---- the combined table --------------------------------------------------------
. "$here/rxe_bench_table.sh"
say ""
bw_table "on rxe0, loopback"
lat_table
# Threads on private contexts over verbs (tests/perf/thread_bench.c).
if [ -x ./tests/perf/thread_bench ]; then
    say ""
    say "# threads on private contexts over verbs (rxe0): aggregate of 1, 2, 4 threads"
    ./symrun -n 2 --timeout 400 ./tests/perf/thread_bench --quick > "$w/threads" 2>&1 || fail=1
    while IFS= read -r line; do say "  $line"; done < "$w/threads"
fi
[ "$fail" = 0 ] || say "# some runs FAILED; see above${log:+ and $log}"
rm -rf "$w"
exit "$fail"
