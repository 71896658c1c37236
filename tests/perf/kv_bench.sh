#!/bin/sh
# KV-cache blocks per transport: kv_bench (tests/perf/kv_bench.c) under
# symrun -n 2, a paged batch of non-contiguous blocks against the same bytes
# in one contiguous task (and a symrail_put), alternated in the same run, at
# 4, 16 and 64 KiB blocks; and one batch of 32 000 x 16 KiB blocks.
#
#   tests/perf/kv_bench.sh [BUILDDIR] [--quick] [--multihost] [--rxe] [--runs N]
#                          [--bytes SIZE] [--blocks 4K,16K,64K] [--big N]
#                                                         (make bench-kv)
#
#   shm, tcp     always: SYMRAIL_TRANSPORTS=shm, then tcp, on this host
#   --multihost  TCP between two namespace-hosts (tests/multihost/netns.sh,
#                mpirun; root)
#   --rxe        verbs over Soft-RoCE in the qemu guest (tests/rxe/run-in-vm.sh);
#                emulated, so it moves a quarter of the bytes
#   --quick      3 runs of 16 MiB and a batch of 8 000 blocks, for a smoke run
#   --no-local   skip shm and tcp on this host (with --multihost or --rxe)
#   --blocks     the block sizes compared (default 4K,16K,64K)
#   --big N      the big batch's blocks (default 32000; 128000 is a 2 GiB pool
#                at the target; 0 skips it)
#   KV_BENCH_BIN=PROG  runs PROG instead of this build's kv_bench (another
#                build of it, to compare two builds the same way)
#
# The namespace-hosts and the guest are shared by everyone on the machine:
# those parts run under `flock /tmp/symrail-heavy.lock`, which this script
# takes itself (a caller holding it already sets SYMRAIL_HEAVY_LOCK to
# another file, or the two wait for each other).  Prints one table
# per transport, then all ratios side by side (target: paged >= 0.9x contig
# at 16 KiB), and draws kv_bench.png in the current directory with gnuplot.
# Samples are in kv_bench.dat.
set -u
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
builddir=${top_builddir:-$top_srcdir/build}
case ${1:-} in -* | '') ;; *) builddir=$1; shift ;; esac
builddir=$(cd "$builddir" && pwd -P) || exit 1
BENCH=${KV_BENCH_BIN:-$builddir/tests/perf/kv_bench}
SYMRUN=$builddir/symrun
LOCK=${SYMRAIL_HEAVY_LOCK:-/tmp/symrail-heavy.lock}

# ---- in the guest: verbs on rxe0 ------------------------------------------------
if [ "${1:-}" = --in-guest ]; then
    shift
    exec env SYMRAIL_TRANSPORTS=verbs SYMRAIL_IB_DEVICES=rxe0 KV_BENCH_NAME=verbs \
        "$SYMRUN" -n 2 --timeout 1200 "$BENCH" "$@"
fi

quick=0 multihost=0 rxe=0 local=1 runs='' bytes='' blocks='' nbig=''
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --multihost) multihost=1 ;;
        --rxe) rxe=1 ;;
        --no-local) local=0 ;;
        --runs) runs=$2; shift ;;
        --bytes) bytes=$2; shift ;;
        --blocks) blocks=$2; shift ;;
        --big) nbig=$2; shift ;;
        -h | --help) sed -n '2,28s/^# \{0,1\}//p' "$here/kv_bench.sh"; exit 0 ;;
        *) echo "kv_bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$BENCH" ] && [ -x "$SYMRUN" ] ||
    { echo "kv_bench.sh: build first (make bench-kv does)" >&2; exit 2; }
if [ "$quick" = 1 ]; then
    : "${runs:=3}" "${bytes:=16M}"; big=8000 big_runs=2
else
    : "${runs:=7}" "${bytes:=64M}"; big=32000 big_runs=3
fi
[ -n "$nbig" ] && big=$nbig
case $bytes in
    *M) mib=${bytes%M} ;;
    *) echo "kv_bench.sh: --bytes takes MiB (16M, 64M)" >&2; exit 2 ;;
esac
heap=$((2 * mib + 16))M
args="--bytes $bytes --runs $runs --big $big --big-runs $big_runs"
[ -n "$blocks" ] && args="$args --block-bytes $blocks"
out=$(pwd -P)
dat=$out/kv_bench.dat
work=$(mktemp -d "${TMPDIR:-/tmp}/symrail-kvbench.XXXXXX") || exit 1
cleanup() {
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
: >"$dat"
fail=0

run() {  # NAME CMD...: one kv_bench, its tables shown, its rows kept
    name=$1
    shift
    echo "## $name: $*" | sed "s|$builddir/||g"
    if "$@" >"$work/$name.out" 2>&1; then
        grep -v '^ROW\|^BIG' "$work/$name.out"
        grep '^ROW\|^BIG' "$work/$name.out" >>"$dat"
    else
        rc=$?
        if [ "$rc" = 77 ]; then
            grep SKIP "$work/$name.out" | head -n 3
        else
            echo "kv_bench.sh: $name failed (exit $rc):"
            tail -n 20 "$work/$name.out" | sed 's/^/  | /'
            fail=1
        fi
    fi
    echo
}

if [ "$local" = 1 ]; then
    run shm env SYMRAIL_TRANSPORTS=shm SYMRAIL_HEAP_SIZE=$heap KV_BENCH_NAME=shm \
        "$SYMRUN" -n 2 --timeout 900 "$BENCH" $args
    run tcp env SYMRAIL_TRANSPORTS=tcp SYMRAIL_HEAP_SIZE=$heap KV_BENCH_NAME=tcp \
        "$SYMRUN" -n 2 --timeout 900 "$BENCH" $args
fi

if [ "$multihost" = 1 ]; then
    MPIRUN=${MPIRUN:-$(command -v mpirun)}
    if [ -z "$MPIRUN" ]; then
        echo "## tcp2h: SKIP: mpirun not found (apt-get install openmpi-bin)"
    else
        # The namespace-hosts live as long as this script, which holds the lock.
        cat >"$work/mh.sh" <<EOF
. "$top_srcdir/tests/multihost/netns.sh"
skip() { echo "SKIP: \$*"; exit 77; }
trap netns_cleanup EXIT
netns_setup "$work/err" || { echo "setting up the namespace hosts failed"; exit 1; }
timeout 1200 "$MPIRUN" --allow-run-as-root --mca plm_rsh_agent "$top_srcdir/tests/multihost/rsh_agent.sh" \\
    --mca oob_tcp_if_include "\$NET.0/24" -H "\$NS_H1:1,\$NS_H2:1" -np 2 --map-by node --bind-to none \\
    -x SYMRAIL_TRANSPORTS=tcp -x SYMRAIL_HEAP_SIZE=$heap -x KV_BENCH_NAME=tcp2h "$BENCH" $args
EOF
        run tcp2h flock "$LOCK" sh "$work/mh.sh"
    fi
fi

if [ "$rxe" = 1 ]; then
    # Emulated RDMA moves some 15 MB/s: a quarter of the bytes, fewer blocks.
    rbytes=$((mib / 4 > 0 ? mib / 4 : 1))M
    rbig=$((big / 4))
    run verbs env SYMRAIL_RXE_SHARE="$top_srcdir:$builddir" flock "$LOCK" \
        sh "$top_srcdir/tests/rxe/run-in-vm.sh" --devices 1 --mem 3072 --timeout 1500 \
        --env SYMRAIL_HEAP_SIZE=$((2 * mib / 4 + 16))M \
        -- sh "$here/kv_bench.sh" "$builddir" --in-guest --bytes "$rbytes" --runs "$runs" \
        --big "$rbig" --big-runs "$big_runs"
fi

# ---- all transports side by side ----------------------------------------------
echo "# kv_bench: paged / contig (one task of the same bytes), median of $runs runs;"
echo "# GB/s = 10^9 bytes/s; target: paged >= 0.90x contig at 16 KiB on every transport"
awk '
    $1 == "ROW" { t = $2; if (!(t in seen)) { seen[t] = 1; order[n++] = t }
                  b = $3; if (!(b in bs)) { bs[b] = 1; blist[nb++] = b }
                  p[t, b] = $5; c[t, b] = $6; r[t, b] = $8 }
    $1 == "BIG" { big[$2] = $0 }
    END {
        printf "# %-6s", "block"
        for (i = 0; i < n; i++) printf " %22s", order[i] " paged/contig GB/s"
        printf "\n"
        ok = 1
        for (j = 0; j < nb; j++) {
            b = blist[j]; printf "  %5sK", b
            for (i = 0; i < n; i++) {
                t = order[i]
                if ((t, b) in r) printf " %9.2f/%-6.2f %5.2fx", p[t, b], c[t, b], r[t, b]
                else printf " %22s", "-"
                if (b == 16 && (t, b) in r && r[t, b] < 0.9) { ok = 0; miss = miss " " t }
            }
            printf "\n"
        }
        print ok ? "# target met at 16 KiB" : "# target MISSED at 16 KiB on:" miss
        printf "# one big batch: %-6s %7s %10s %10s %10s %10s %9s %10s %9s\n", "tl", "tasks",
               "create us", "add us", "submit us", "status us", "done ms", "tasks/s", "B/task"
        for (i = 0; i < n; i++) if (order[i] in big) {
            split(big[order[i]], f, " ")
            printf "#                %-6s %7s %10s %10s %10s %10s %9s %10s %9s\n", f[2], f[3],
                   f[4], f[5], f[6], f[7], f[8], f[9], f[10]
        }
    }' "$dat"

if command -v gnuplot >/dev/null 2>&1 && grep -q '^ROW' "$dat"; then
    grep '^ROW' "$dat" | awk '{ print $2, $3, $8 }' >"$work/ratio"
    tls=$(awk '{ print $1 }' "$work/ratio" | awk '!s[$1]++' | tr '\n' ' ')
    # One column per transport, one row per block size.
    awk -v tls="$tls" 'BEGIN { nt = split(tls, T, " ") }
        { r[$2, $1] = $3; if (!($2 in b)) { b[$2] = 1; bl[nb++] = $2 } }
        END { printf "block"; for (i = 1; i <= nt; i++) printf " %s", T[i]; printf "\n"
              for (j = 0; j < nb; j++) { printf "%sK", bl[j]
                  for (i = 1; i <= nt; i++) printf " %s", ((bl[j], T[i]) in r) ? r[bl[j], T[i]] : "NaN"
                  printf "\n" } }' "$work/ratio" >"$work/hist"
    nt=$(echo "$tls" | wc -w)
    gnuplot -e "set terminal png size 800,450; set output '$out/kv_bench.png';
        set title 'paged batch / one contiguous task (same bytes, same run)';
        set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8;
        set yrange [0:*]; set ylabel 'ratio'; set xlabel 'block size'; set key top left;
        set arrow from graph 0, first 0.9 to graph 1, first 0.9 nohead dt 2;
        plot for [i=2:$((nt + 1))] '$work/hist' using i:xtic(1) title columnheader(i)" &&
        echo "# plot in $out/kv_bench.png"
fi
echo "# samples in $dat"
exit $fail
