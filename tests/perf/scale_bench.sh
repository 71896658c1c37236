#!/bin/sh
# What a PE costs as the job grows on one machine: `make bench-scale`, or
#
#   sh SRCDIR/tests/perf/scale_bench.sh BUILDDIR [--transports "shm tcp"]
#       [--pes "2 4 8 16 32 64"] [--reps 3] [--heap 4M] [--rxe] [--raw FILE]
#
# For each transport and job size it runs tests/perf/scale_bench under
# symrun --reps times (SYMRAIL_TRANSPORTS set to that one transport,
# SYMRAIL_HEAP_SIZE small so that 64 PEs fit, SYMRAIL_STATS=1) and prints one
# row: the median over every PE of every run of the time symrail_init took,
# the RSS after init, the RSS init added, VmPin (memory pinned for a device:
# verbs registrations), open descriptors and what init added, and the PMIx
# gets and bytes a PE made (the library's counters).  Below each transport,
# the slope per added PE of each column (least squares over the sizes).
#
#   --rxe        run the verbs rows inside a Soft-RoCE guest
#                (tests/rxe/run-in-vm.sh; SCALE_BENCH_MEM MiB, default 3072,
#                SCALE_BENCH_TIMEOUT s, default 1500; the caller's SYMRAIL_*
#                variables go along): --transports defaults to "verbs" there
#   --raw FILE   keep every PE's line and the library's stats lines in FILE
#
# Exit 0 when every run succeeded, 1 otherwise (the row says which size
# failed and the first error line of that run).
set -u
me=scale_bench
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
build=${1:?usage: scale_bench.sh BUILDDIR [options] (see the comment at its top)}
shift
transports='' pes='2 4 8 16 32 64' reps=3 heap=4M rxe=0 raw=''
while [ $# -gt 0 ]; do
    case $1 in
        --transports) transports=$2; shift 2 ;;
        --pes) pes=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --heap) heap=$2; shift 2 ;;
        --rxe) rxe=1; shift ;;
        --raw) raw=$2; shift 2 ;;
        *) echo "$me: unknown argument $1" >&2; exit 2 ;;
    esac
done
build=$(CDPATH='' cd -- "$build" && pwd -P) || exit 2
for f in symrun tests/perf/scale_bench; do
    [ -x "$build/$f" ] || { echo "$me: no $f in $build: build first" >&2; exit 2; }
done
case $raw in '' | /*) ;; *) raw=$(pwd -P)/$raw ;; esac

if [ "$rxe" = 1 ]; then
    # The caller's SYMRAIL_* knobs go along (SYMRAIL_OP_TIMEOUT: an emulated
    # device takes minutes to connect 32 PEs); SYMRAIL_RXE_* steer the guest.
    set --
    for v in $(env | sed -n 's/^\(SYMRAIL_[A-Za-z0-9_]*\)=.*/\1/p'); do
        case $v in SYMRAIL_IB_DEVICES | SYMRAIL_RXE_*) continue ;; esac
        eval "set -- \"\$@\" --env \"$v=\${$v}\""
    done
    exec sh "$here/../rxe/run-in-vm.sh" --devices 1 --mem "${SCALE_BENCH_MEM:-3072}" \
        --timeout "${SCALE_BENCH_TIMEOUT:-1500}" "$@" --env SYMRAIL_IB_DEVICES=rxe0 \
        -- sh "$here/scale_bench.sh" "$build" --transports "${transports:-verbs}" \
        --pes "$pes" --reps "$reps" --heap "$heap" ${raw:+--raw "$raw"}
fi
: "${transports:=shm tcp}"
[ -z "$raw" ] || : > "$raw" || exit 2
w=$(mktemp -d "${TMPDIR:-/tmp}/scale_bench.XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT

# median: of the numbers on stdin, one a line.
median() {
    sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# field NAME FILE: the value after NAME in every "scale pe" line.
field() {
    awk -v k="$1" '$1 == "scale" { for (i = 2; i < NF; i++) if ($i == k) print $(i + 1) }' "$2"
}
# stat WORD FILE: the number after "pmix WORD" (or WORD) in each stats line,
# and with --bytes the byte count in the parentheses after it.
stat_n() {
    sed -n "s/.*stats:.*; pmix.* $1 \([0-9]*\).*/\1/p" "$2"
}
stat_b() {
    sed -n "s/.*stats:.*; pmix.* $1 [0-9]* (\([0-9]*\) B).*/\1/p" "$2"
}

echo "# $me: $(nproc) cores, $(uname -r), heap $heap, $reps run(s) a size, medians over all PEs"
fail=0
for t in $transports; do
    echo
    echo "## $t"
    printf '%5s %9s %9s %9s %8s %5s %6s %9s %11s\n' PEs init_ms rss_KiB +rss_KiB pin_KiB fds +fds pmix_gets pmix_get_B
    : > "$w/rows.$t"
    for n in $pes; do
        out=$w/$t.$n
        : > "$out"
        ok=1
        for r in $(seq "$reps"); do
            SYMRAIL_HEAP_SIZE=$heap SYMRAIL_TRANSPORTS=$t SYMRAIL_STATS=1 \
                "$build/symrun" -n "$n" "$build/tests/perf/scale_bench" \
                > "$w/run.out" 2> "$w/run.err" < /dev/null
            rc=$?
            cat "$w/run.out" "$w/run.err" >> "$out"
            [ -z "$raw" ] || { echo "==== $t n=$n run $r rc=$rc"; cat "$w/run.out" "$w/run.err"; } >> "$raw"
            if [ "$rc" -ne 0 ] || [ "$(grep -c '^scale pe' "$w/run.out")" -ne "$n" ]; then
                ok=0
                printf '%5s failed (exit %s): %s\n' "$n" "$rc" \
                    "$(grep -v 'stats:' "$w/run.err" | head -n 1 | cut -c 1-160)"
                fail=1
                break
            fi
        done
        [ "$ok" = 1 ] || continue
        init=$(field init_us "$out" | median)
        rss=$(field rss_kb "$out" | median)
        drss=$(awk '$1 == "scale" { for (i = 2; i < NF; i++) { if ($i == "rss_kb") a = $(i + 1); if ($i == "rss0_kb") b = $(i + 1) } print a - b }' "$out" | median)
        pin=$(field pin_kb "$out" | median)
        fds=$(field fds "$out" | median)
        dfds=$(awk '$1 == "scale" { for (i = 2; i < NF; i++) { if ($i == "fds") a = $(i + 1); if ($i == "fds0") b = $(i + 1) } print a - b }' "$out" | median)
        gets=$(stat_n gets "$out" | median)
        getb=$(stat_b gets "$out" | median)
        init_ms=$(echo "$init" | awk '{ printf "%.1f", $1 / 1000 }')
        printf '%5s %9s %9s %9s %8s %5s %6s %9s %11s\n' "$n" "$init_ms" "$rss" "$drss" "$pin" \
            "$fds" "$dfds" "$gets" "$getb"
        echo "$n $init_ms $rss $drss $pin $fds $dfds $gets $getb" >> "$w/rows.$t"
    done
    # Least squares slope of each column against the job size.
    awk '{ n++; x[n] = $1; for (c = 2; c <= NF; c++) y[n, c] = $c; nc = NF }
        END {
            if (n < 2) exit
            sx = 0; for (i = 1; i <= n; i++) sx += x[i]
            mx = sx / n; sxx = 0
            for (i = 1; i <= n; i++) sxx += (x[i] - mx) ^ 2
            line = sprintf("%5s", "/PE")
            w[2] = 9; w[3] = 9; w[4] = 9; w[5] = 8; w[6] = 5; w[7] = 6; w[8] = 9; w[9] = 11
            for (c = 2; c <= nc; c++) {
                my = 0; for (i = 1; i <= n; i++) my += y[i, c]; my /= n
                sxy = 0; for (i = 1; i <= n; i++) sxy += (x[i] - mx) * (y[i, c] - my)
                line = line sprintf(" %" w[c] ".2f", sxy / sxx)
            }
            print line
        }' "$w/rows.$t"
done
exit "$fail"
