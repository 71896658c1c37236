#!/bin/sh
# The verbs transport against perftest on Soft-RoCE, in one qemu guest boot
# (tests/rxe/run-in-vm.sh): `make bench-rxe`, or by hand from the build
# directory:
#
#   sh SRCDIR/tests/perf/rxe_bench.sh [--quick] [--log FILE]
#
# On rxe0 only (loopback, GID index 1, the IPv4-mapped one) it runs
#   ib_write_bw and ib_read_bw -s SIZE for 64K, 256K, 1M and 4M,
#   ib_write_lat -s 8,
#   sr_bench --net over SYMRAIL_TRANSPORTS=verbs SYMRAIL_IB_DEVICES=rxe0,
#   and the bandwidth tests of perftest once more,
# and prints sr_bench's own table, then one combined table: perftest MB/s
# (the mean of its two runs, which bracket symrail's in time), symrail MB/s
# (put_nbi / get_nbi windows of symmetric, registered buffers) and their
# ratio, with the blocking put / get alongside, and the 8-byte latencies.
# MB/s is 10^6 bytes/s throughout; perftest's "MB/sec" (2^20 bytes/s) is
# converted.
#
#   --quick      shorter runs (about half the time), for a smoke test
#   --log FILE   also keep every program's raw output in FILE
#
# SYMRAIL_* variables set by the caller reach the guest (for experiments:
# SYMRAIL_SLICE_SIZE=1M, SYMRAIL_QPS_PER_PEER=1, ...), except that
# SYMRAIL_TRANSPORTS and SYMRAIL_IB_DEVICES are always verbs and rxe0.  The
# guest gets RXE_BENCH_MEM MiB (default 3072) and RXE_BENCH_TIMEOUT seconds
# (default 600).  Exit 77 when qemu or a kernel with rdma_rxe is missing.
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
    quick=0 log=
    while [ $# -gt 0 ]; do
        case $1 in
            --quick) quick=1; shift ;;
            --log) [ $# -ge 2 ] || { echo "$me: --log needs a file" >&2; exit 2; }
                log=$2; shift 2 ;;
            -h | --help) sed -n '2,29s/^# \{0,1\}//p' "$here/rxe_bench.sh"; exit 0 ;;
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
        case $v in SYMRAIL_TRANSPORTS | SYMRAIL_IB_DEVICES) continue ;; esac
        eval "set -- \"\$@\" --env \"$v=\${$v}\""
    done
    exec sh "$here/../rxe/run-in-vm.sh" --devices 1 --mem "${RXE_BENCH_MEM:-3072}" \
        --timeout "${RXE_BENCH_TIMEOUT:-600}" "$@" \
        --env SYMRAIL_TRANSPORTS=verbs --env SYMRAIL_IB_DEVICES=rxe0 \
        --env RXE_BENCH_QUICK="$quick" --env RXE_BENCH_LOG="$log" \
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
    mib=24 lat_iters=2000 sr_args="--time-ms 600"
else
    mib=64 lat_iters=5000 sr_args="--time-ms 1500"
fi

say() { printf '%s\n' "$*"; }
raw() { # file: append to the log
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

# MB/s (10^6) from a bandwidth run: "bytes iterations peak avg msgrate" in
# MiB/s; nothing when the output has no such line.
bw_of() { # out bytes
    awk -v b="$2" '$1 == b && NF >= 5 && $4 ~ /^[0-9.]+$/ { printf "%.2f\n", $4 * 1.048576; exit }' "$1"
}

fail=0
say "# $me: perftest and sr_bench --net on Soft-RoCE rxe0 (loopback, GID index 1), $(uname -r)"

# Bandwidth, pass $1 (1 before symrail, 2 after).
perftest_bw() {
    for s in $SIZES; do
        b=$(bytes "$s")
        n=$((mib * 1048576 / b))
        for op in write read; do
            perftest "ib_${op}_bw" "$w/${op}_$s.$1" -s "$b" -n "$n" || fail=1
        done
    done
}

perftest_bw 1
perftest ib_write_lat "$w/lat" -s 8 -n "$lat_iters" || fail=1

# shellcheck disable=SC2086
./symrun -n 2 --timeout 400 ./tests/perf/sr_bench --net --sizes 64K,256K,1M,4M $sr_args \
    > "$w/sr" 2>&1
sr_rc=$?
raw "$w/sr" "sr_bench --net (exit $sr_rc)"
say ""
cat "$w/sr"
[ "$sr_rc" = 0 ] || { echo "$me: sr_bench failed (exit $sr_rc)" >&2; fail=1; }

perftest_bw 2

# ---- the combined table --------------------------------------------------------
sr_col() { # size column(3 put_nbi, 4 put, 5 get_nbi, 6 get)
    awk -v s="$1" -v c="$2" '$1 == s && NF == 6 && $2 ~ /^[0-9]+$/ { print $c; exit }' "$w/sr"
}
mean() { # values...: the mean of those given, or nothing
    for v in "$@"; do echo "$v"; done | awk 'NF { s += $1; n++ } END { if (n) printf "%.2f\n", s / n }'
}
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && a > 0) printf "%.2f", b / a; else printf "n/a" }'
}
fmt() { # number or n/a
    [ -n "$1" ] && printf '%.1f' "$1" || printf 'n/a'
}

say ""
say "# symrail vs perftest on rxe0, one process pair in loopback; MB/s = 10^6 bytes/s"
say "# perftest: ib_{write,read}_bw -x 1 -F, ${mib} MiB per run, one QP, mean of 2 runs"
say "#   (before and after symrail); symrail: sr_bench --net, put_nbi/get_nbi windows,"
say "#   median of 3 rounds; ratio = symrail nbi / perftest (target >= 0.90)"
printf '# %-9s %6s %14s %14s %7s %14s   %s\n' op bytes "perftest MB/s" "symrail MB/s" ratio \
    "blocking MB/s" "perftest runs"
met=0 total=0
for op in write read; do
    if [ $op = write ]; then name=write/put nbi=3 blk=4; else name=read/get nbi=5 blk=6; fi
    for s in $SIZES; do
        b=$(bytes "$s")
        p1=$(bw_of "$w/${op}_$s.1" "$b" 2>/dev/null)
        p2=$(bw_of "$w/${op}_$s.2" "$b" 2>/dev/null)
        p=$(mean "$p1" "$p2")
        v=$(sr_col "$s" $nbi)
        r=$(ratio "$p" "$v")
        printf '  %-9s %6s %14s %14s %7s %14s   %s %s\n' "$name" "$s" "$(fmt "$p")" "$(fmt "$v")" \
            "$r" "$(fmt "$(sr_col "$s" $blk)")" "$(fmt "$p1")" "$(fmt "$p2")"
        total=$((total + 1))
        case $r in n/a) ;; *) awk -v r="$r" 'BEGIN { exit !(r >= 0.9) }' && met=$((met + 1)) ;; esac
    done
done
lat=$(awk '$1 == 8 && NF >= 7 && $6 ~ /^[0-9.]+$/ { print $6, $5; exit }' "$w/lat" 2>/dev/null)
lat_avg=${lat% *} lat_typ=${lat#* }
sr_ow=$(awk '/one way \(round trip\/2\)/ { print $(NF - 1); exit }' "$w/sr")
sr_put=$(awk '/^ *put \(blocking/ { print $(NF - 1); exit }' "$w/sr")
say "# latency, 8 B, one way in usec: perftest = ib_write_lat mean (typical), a write ping-pong / 2;"
say "#   symrail = put_signal SET ping-pong / 2; a blocking put waits a full round trip"
printf '  %-9s %6s %14s %14s %7s %14s\n' latency 8 \
    "$(fmt "$lat_avg") ($(fmt "$lat_typ"))" "$(fmt "$sr_ow")" "$(ratio "$lat_avg" "$sr_ow")" \
    "put $(fmt "$sr_put")"
say "# bandwidth target (symrail >= 0.90 x perftest): met at $met of $total sizes"
[ "$fail" = 0 ] || say "# some runs FAILED; see above${log:+ and $log}"
rm -rf "$w"
exit "$fail"
