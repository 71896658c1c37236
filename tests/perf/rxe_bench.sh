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
# MB/s (10^6) from a perftest bandwidth run ("bytes iterations peak avg
# msgrate", in MiB/s); nothing when the output has no such line.
pt_bw() { # out bytes
    [ -f "$1" ] || return 0
    awk -v b="$2" '$1 == b && NF >= 5 && $4 ~ /^[0-9.]+$/ { printf "%.3f\n", $4 * 1.048576; exit }' "$1"
}
sr_bw() { # out size column (3 put_nbi, 4 put, 5 get_nbi, 6 get)
    [ -f "$1" ] || return 0
    awk -v s="$2" -v c="$3" '$1 == s && NF == 6 && $2 ~ /^[0-9]+$/ { print $c; exit }' "$1"
}
median() { # values...: the median of those given (empty ones left out), or nothing
    for v in "$@"; do echo "$v"; done | sort -g | awk 'NF { v[n++] = $1 }
        END { if (n) printf "%.3f\n", n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2 }'
}
ratio() { # a b: b / a
    awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && a > 0) printf "%.2f", b / a; else printf "n/a" }'
}
fmt() { # number or n/a
    if [ -n "$1" ]; then printf '%.1f' "$1"; else printf 'n/a'; fi
}

say ""
say "# symrail vs perftest on rxe0, loopback; MB/s = 10^6 bytes/s; median of $passes pass(es)"
say "#   perftest: ib_write_bw / ib_read_bw -x 1 -F, one QP, $mib MiB a run"
say "#   symrail: sr_bench --net put_nbi / get_nbi windows (median of 3 rounds a pass);"
say "#   ratio = symrail / perftest, target >= 0.90"
printf '# %-9s %5s %14s %13s %6s %14s   %s\n' op bytes "perftest MB/s" "symrail MB/s" ratio \
    "blocking MB/s" "ratio of each pass"
met=0 total=0
for op in write read; do
    if [ $op = write ]; then name=write/put cnbi=3 cblk=4; else name=read/get cnbi=5 cblk=6; fi
    for s in $SIZES; do
        b=$(bytes "$s")
        pts='' srs='' blks='' each=''
        for p in $(seq "$passes"); do
            x=$(pt_bw "$w/${op}_$s.$p" "$b")
            y=$(sr_bw "$w/sr.$p" "$s" "$cnbi")
            pts="$pts $x" srs="$srs $y" blks="$blks $(sr_bw "$w/sr.$p" "$s" "$cblk")"
            each="$each $(ratio "$x" "$y")"
        done
        # shellcheck disable=SC2086
        pt=$(median $pts) sr=$(median $srs) blk=$(median $blks)
        r=$(ratio "$pt" "$sr")
        printf '  %-9s %5s %14s %13s %6s %14s  %s\n' "$name" "$s" "$(fmt "$pt")" "$(fmt "$sr")" \
            "$r" "$(fmt "$blk")" "$each"
        total=$((total + 1))
        case $r in n/a) ;; *) awk -v r="$r" 'BEGIN { exit !(r >= 0.9) }' && met=$((met + 1)) ;; esac
    done
done
say "# bandwidth target (symrail >= 0.90 x perftest): met at $met of $total sizes"

# ib_write_lat: "bytes iters t_min t_max t_typical t_avg ..."; sr_bench: "... median mean".
# Each row: the median over the passes of each pass's median and mean.
pt_lat1() { awk '$1 == 8 && NF >= 7 && $6 ~ /^[0-9.]+$/ { print $5, $6; exit }' "$1" 2>/dev/null; }
sr_row1() { # file pattern
    awk -v p="$2" 'index($0, p) && $NF ~ /^[0-9.]+$/ { print $(NF - 1), $NF; exit }' "$1"
}
over_passes() { # command args...: "median-of-medians median-of-means"
    meds='' means=''
    for p in $(seq "$passes"); do
        v=$("$@" "$p")
        [ -n "$v" ] || continue
        meds="$meds ${v% *}" means="$means ${v#* }"
    done
    # shellcheck disable=SC2086
    m1=$(median $meds) m2=$(median $means)
    [ -z "$m1" ] || echo "$m1 $m2"
}
pt_of() { pt_lat1 "$w/lat.$1"; }
sr_of() { sr_row1 "$w/sr.$2" "$1"; }
pt_lat=$(over_passes pt_of)
sr_ow=$(over_passes sr_of "one way (round trip/2)")
sr_put=$(over_passes sr_of "put (blocking")
sr_putq=$(over_passes sr_of "put + quiet")
lat_row() { # label "median mean" reference-median
    set -- "$1" "${2% *}" "${2#* }" "${3:-}"
    [ -n "$2" ] || set -- "$1" "" "" "$4"
    printf '  %-56s %8s %8s %7s\n' "$1" "$(fmt "$2")" "$(fmt "$3")" "$(ratio "$4" "$2")"
}
say ""
say "# latency, 8-byte payloads, one way, usec; median over $passes pass(es), each pass"
say "# running sr_bench and ib_write_lat back to back; ratio = median / perftest's median"
say "#   targets: put <= 1.3x, put_signal ping-pong <= 1.5x"
printf '# %-56s %8s %8s %7s\n' "" median mean ratio
lat_row "perftest ib_write_lat (write ping-pong / 2)" "$pt_lat" "${pt_lat% *}"
lat_row "symrail put_signal SET ping-pong / 2" "$sr_ow" "${pt_lat% *}"
lat_row "symrail put, blocking (until the source may be reused)" "$sr_put" "${pt_lat% *}"
lat_row "symrail put + quiet (until remote completion)" "$sr_putq" "${pt_lat% *}"
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
