#!/bin/sh
# The two-guest half of `make bench-rxe` (RXE_BENCH_GUESTS=2, or
# rxe_bench.sh --guests 2): two Soft-RoCE guests on two rails
# (tests/rxe/run-two-vms.sh), one Slurm job over them
# (tests/rxe/two_guest_bed.sh), PE 0 in guest a, PE 1 in guest b, so that
# every byte crosses between two kernels.
#
#   1. bandwidth, N passes, each pass: ib_write_bw and ib_read_bw -s SIZE
#      (64K..4M) from a to b over rxe0, then sr_bench --net over rxe0 in the
#      same pass; each size's ratio per pass, and the median of N;
#   2. latency: ib_write_lat -s 8 against sr_bench's blocking 8-byte put
#      and put_signal ping-pong, back to back in each pass;
#   3. multi-rail: put_nbi MB/s at 4M over 1 rail and 2 equal rails as
#      they are, then with tc tbf on eth0 and eth1 in both guests: 1 rail
#      at the fast rate, 2 rails at the fast rate each, and 2 rails 5:1,
#      each with SYMRAIL_SPRAY=static and adaptive side by side ("n/a"
#      where the library does not know SYMRAIL_SPRAY: it warns and ignores
#      it).  The unshaped rows are bound by the emulation's CPU (both rails'
#      packets are made by the same emulated core), the shaped ones by the
#      wire, which is what the ratios compare.
#
# Options as rxe_bench.sh's: --quick (short runs, 3 passes), --passes N
# (default 9), --log FILE; --multirail-only skips parts 1 and 2;
# --mr-passes N passes of part 3 (default: --passes; each of its 10 cells a
# pass is one sr_bench --put-nbi-only, 5-40 s on the shaped rows).
# Guests: RXE_BENCH_MEM MiB each (default 1024),
# RXE_BENCH_TIMEOUT s (default 1500); shaping: RXE_BENCH_SHAPE_MBIT, the
# faster rail's rate (default 40; the slower gets a fifth).
set -u
me=rxe_bench_two
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
SIZES="64K 256K 1M 4M"

bytes() {
    case $1 in
        *K) echo $((${1%K} * 1024)) ;;
        *M) echo $((${1%M} * 1048576)) ;;
        *) echo "$1" ;;
    esac
}

# ---- host ------------------------------------------------------------------
if [ -z "${TG_ROLE:-}" ]; then
    quick=0 log='' passes='' mronly=0 mrpasses=''
    while [ $# -gt 0 ]; do
        case $1 in
            --quick) quick=1; shift ;;
            --passes) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || { echo "$me: --passes needs a count" >&2; exit 2; }
                passes=$2; shift 2 ;;
            --log) [ $# -ge 2 ] || { echo "$me: --log needs a file" >&2; exit 2; }
                log=$2; shift 2 ;;
            --guests) shift 2 ;;
            --multirail-only) mronly=1; shift ;;
            --mr-passes) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || { echo "$me: --mr-passes needs a count" >&2; exit 2; }
                mrpasses=$2; shift 2 ;;
            -h | --help) sed -n '2,28s/^# \{0,1\}//p' "$here/rxe_bench_two.sh"; exit 0 ;;
            *) echo "$me: unknown argument $1 (see --help)" >&2; exit 2 ;;
        esac
    done
    builddir=${top_builddir:-.}
    cd "$builddir" || exit 1
    builddir=$(pwd -P)
    [ -x tests/perf/sr_bench ] || { echo "$me: no tests/perf/sr_bench in $builddir: build first" >&2; exit 2; }
    for t in ib_write_bw ib_read_bw ib_write_lat tc; do
        command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (perftest, iproute2)"; exit 77; }
    done
    case $log in '' | /*) ;; *) log=$builddir/$log ;; esac
    srcdir=$(cd "$here/../.." && pwd -P)
    SYMRAIL_RXE_SHARE="$srcdir:$builddir" exec sh "$srcdir/tests/rxe/run-two-vms.sh" --rails 2 \
        --mem "${RXE_BENCH_MEM:-1024}" --timeout "${RXE_BENCH_TIMEOUT:-1500}" \
        --env top_srcdir="$srcdir" --env top_builddir="$builddir" \
        --env RXE_BENCH_QUICK="$quick" --env RXE_BENCH_PASSES="$passes" \
        --env RXE_BENCH_LOG="$log" --env RXE_BENCH_MRONLY="$mronly" \
        --env RXE_BENCH_MR_PASSES="$mrpasses" --env RXE_BENCH_SHAPE_MBIT="${RXE_BENCH_SHAPE_MBIT:-40}" \
        -- sh "$here/rxe_bench_two.sh"
fi

# ---- guests ----------------------------------------------------------------
. "$top_srcdir/tests/rxe/two_guest_bed.sh"
if [ "$TG_ROLE" = b ]; then
    tg_bed_start || exit 1
    wait
    exit 0
fi
cd "$top_builddir" || exit 1
tg_bed_start && tg_bed_wait || { echo "$me: the Slurm bed did not come up" >&2; exit 1; }
quick=${RXE_BENCH_QUICK:-0}
log=${RXE_BENCH_LOG:-}
if [ "$quick" = 1 ]; then
    passes=${RXE_BENCH_PASSES:-3} mib=8 lat_iters=1000 sr_ms=300
else
    passes=${RXE_BENCH_PASSES:-9} mib=16 lat_iters=3000 sr_ms=600
fi
export SYMRAIL_TRANSPORTS=verbs SYMRAIL_HEAP_SIZE=128M
w=$(mktemp -d /tmp/rxe_bench_two.XXXXXX) || exit 1
port=18515
fail=0
say() { printf '%s\n' "$*"; }
raw() { [ -z "$log" ] || { echo "==== $2"; cat "$1"; } >> "$log"; }
[ -z "$log" ] || : > "$log" || { echo "$me: cannot write $log" >&2; exit 1; }
SR="-N 2 -n 2 --ntasks-per-node=1" # word-split below

# perftest TOOL OUT ARGS...: the server in guest b (through Slurm), the
# client here, retrying while the server does not listen yet.
perftest() {
    tool=$1 out=$2
    shift 2
    port=$((port + 1))
    env TG_STEP_TIMEOUT=150 "$TG_SRUN" -N 1 -n 1 -w gb "$tool" -d rxe0 -x 1 -F -p "$port" "$@" > "$out.srv" 2>&1 &
    srv=$!
    tries=0
    until timeout 120 "$tool" -d rxe0 -x 1 -F -p "$port" "$@" "$TG_B" > "$out" 2>&1; do
        tries=$((tries + 1))
        if [ "$tries" -ge 40 ] || ! kill -0 "$srv" 2>/dev/null; then
            kill "$srv" 2>/dev/null
            wait "$srv" 2>/dev/null
            raw "$out" "$tool $* (FAILED)"
            echo "$me: $tool $* failed:" >&2
            sed 's/^/  /' "$out" "$out.srv" >&2
            return 1
        fi
        sleep 0.5
    done
    wait "$srv"
    raw "$out" "$tool $*"
}
sr_bench() { # OUT ARGS..., with the assignments in $SR_ENV
    _o=$1
    shift
    # shellcheck disable=SC2086
    env TG_STEP_TIMEOUT=400 $SR_ENV "$TG_SRUN" $SR ./tests/perf/sr_bench --net "$@" > "$_o" 2>&1
    _rc=$?
    raw "$_o" "sr_bench --net $* (exit $_rc)"
    [ "$_rc" = 0 ] || { echo "$me: sr_bench $* failed (exit $_rc):" >&2; tail -n 5 "$_o" >&2; fail=1; }
}

. "$here/rxe_bench_table.sh"
if [ "${RXE_BENCH_MRONLY:-0}" != 1 ]; then
say "# $me: two guests, a -> b over Soft-RoCE rxe0 (eth0), $(uname -r), $passes pass(es)"
for p in $(seq "$passes"); do
    for s in $SIZES; do
        b=$(bytes "$s")
        n=$((mib * 1048576 / b))
        [ "$n" -ge 5 ] || n=5
        for op in write read; do
            perftest "ib_${op}_bw" "$w/${op}_$s.$p" -s "$b" -n "$n" || fail=1
        done
    done
    SR_ENV="SYMRAIL_IB_DEVICES=rxe0"
    sr_bench "$w/sr.$p" --sizes "$(echo "$SIZES" | tr ' ' ,)" --time-ms "$sr_ms"
    perftest ib_write_lat "$w/lat.$p" -s 8 -n "$lat_iters" || fail=1
done
bw_table "two guests, a -> b over rxe0"
lat_table
fi

# ---- multi-rail ---------------------------------------------------------------
# tbf on both guests' eth0 and eth1 (egress: a's for puts, b's for the
# acknowledgements and reads).
shape() { # RATE0 RATE1 (mbit; 0: no shaping)
    for g in a b; do
        cmd=''
        for i in 0 1; do
            r=$1
            [ $i = 0 ] || r=$2
            cmd="$cmd tc qdisc del dev eth$i root 2>/dev/null;"
            [ "$r" = 0 ] || cmd="$cmd tc qdisc add dev eth$i root tbf rate ${r}mbit burst 64kb latency 400ms || exit 1;"
        done
        cmd="$cmd exit 0"
        if [ $g = a ]; then sh -c "$cmd"; else tg_srun -N 1 -n 1 -w gb sh -c "$cmd"; fi ||
            { echo "$me: tc on guest $g failed" >&2; return 1; }
    done
}
put_bw() { # OUT: put_nbi MB/s at 4M, or nothing
    awk '$1 == "4M" && NF == 6 && $2 ~ /^[0-9]+$/ { print $3; exit }' "$1" 2>/dev/null
}
rail1_pct() { # OUT: the percentage of PE 0's bytes that went over rxe1 (SYMRAIL_STATS), or nothing
    # "... rails: rxe0:1 BYTES B/N slices rxe1:1 BYTES B/N slices" (device:port)
    awk '/:0 stats: / { for (i = 1; i < NF; i++) if ($i ~ /^rxe[01](:[0-9]+)?$/) b[substr($i, 4, 1)] = $(i + 1) + 0
        if (b[0] + b[1] > 0) printf "%.0f\n", 100 * b[1] / (b[0] + b[1]); exit }' "$1" 2>/dev/null
}
fast=${RXE_BENCH_SHAPE_MBIT:-40}
slow=$((fast / 5))
[ "$slow" -ge 1 ] || slow=1
mrp=${RXE_BENCH_MR_PASSES:-$passes}
say ""
say "# multi-rail: put_nbi MB/s at 4M (sr_bench --put-nbi-only), PE 0 in guest a -> PE 1 in guest b; median of $mrp pass(es)"
say "#   shaped: tc tbf ${fast} mbit (fast) and ${slow} mbit on eth0 and eth1 in both guests"
say "#   stat/1, adapt/1: against 1 rail static of the same kind (unshaped, or tbf fast);"
say "#   the targets: 2 equal rails >= 1.9, 5:1 >= 0.9 x 1.2 = 1.08"
say "#   rxe1 %: PE 0's bytes over rail 1 (SYMRAIL_STATS), static/adaptive, of the last pass"
printf '# %-28s %10s %10s %8s %8s %9s\n' rails static adaptive 'stat/1' 'adapt/1' 'rxe1 %'
one=''
t0=$(date +%s)
for cfg in "1 rail|rxe0|0|0" "2 equal rails|rxe0,rxe1|0|0" "1 rail (tbf fast)|rxe0|$fast|0" \
    "2 equal rails (tbf fast)|rxe0,rxe1|$fast|$fast" "2 rails 5:1 (tbf)|rxe0,rxe1|$fast|$slow"; do
    label=${cfg%%|*} rest=${cfg#*|}
    devs=${rest%%|*} rest=${rest#*|}
    shape "${rest%%|*}" "${rest#*|}" || { fail=1; continue; }
    cols='' pcts=''
    for mode in static adaptive; do
        vals='' known=1
        for p in $(seq "$mrp"); do
            SR_ENV="SYMRAIL_IB_DEVICES=$devs SYMRAIL_SPRAY=$mode SYMRAIL_STATS=1"
            sr_bench "$w/mr.$p" --sizes 4M --put-nbi-only --time-ms "$sr_ms"
            grep -q 'unknown variable SYMRAIL_SPRAY' "$w/mr.$p" && known=0
            vals="$vals $(put_bw "$w/mr.$p")"
        done
        pct=$(rail1_pct "$w/mr.$mrp")
        pcts="$pcts${pcts:+/}${pct:-?}"
        # shellcheck disable=SC2086
        m=$(median $vals)
        if [ "$known" = 0 ]; then cols="$cols n/a(${m:-?})"; else cols="$cols ${m:-n/a}"; fi
        # Each row against 1 rail of its kind: unshaped, or at the fast rate.
        case $label in "1 rail"*) [ "$mode" != static ] || one=$m ;; esac
        if [ "$mode" = adaptive ]; then last=$m; else first=$m; fi
    done
    # shellcheck disable=SC2086
    set -- $cols
    printf '  %-28s %10s %10s %8s %8s %9s\n' "$label" "$1" "$2" "$(ratio "$one" "$first")" \
        "$(ratio "$one" "$last")" "$pcts"
    echo "$me: row '$label' done, $(($(date +%s) - t0)) s into the multi-rail part" >&2
done
shape 0 0
say "# n/a(x): this library ignores SYMRAIL_SPRAY (it warned), x is what that run measured"
rm -rf "$w"
exit "$fail"
