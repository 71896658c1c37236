#!/bin/sh
# symrail's OpenSHMEM against Open MPI's OSHMEM: tests/perf/shmem_bench.c
# built with symrail's symcc (from this build, installed into a private
# prefix) and with oshcc, measured in one run, alternated (symrail
# then OSHMEM at each PE count, REPS times), the median of the repetitions per
# point.  Prints a table per metric (symrail, OSHMEM, symrail speed / OSHMEM
# speed: above 1 symrail is faster) and writes, in OUTDIR (default BUILDDIR):
#   shmem_bench.txt  the tables    shmem_bench.raw  every measurement
#   shmem_bench.png  the plot (gnuplot; Debian: gnuplot-nox)
#
#   tests/perf/shmem_bench.sh BUILDDIR [--quick] [--reps R] [--out OUTDIR]
#                                      [--window MiB] [--pes "2 4 8"]
#                                      [--groups "rma barrier ..."]
# RMA points run on 2 PEs, the collectives at every PE count; --groups
# measures only those named (rma barrier bcast reduce fcollect alltoall).
# When one side cannot be built it says why and measures the other; a point
# symrail fails is reported and left out, the rest still measured.
set -eu
usage='usage: shmem_bench.sh BUILDDIR [--quick] [--reps R] [--out DIR] [--window MiB] [--pes LIST] [--groups LIST]'
build=${1:?$usage}
shift
build=$(cd "$build" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
quick= reps= out=$build window= pes="2 4 8" only=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=--quick ;;
        --reps) reps=${2:?$usage}; shift ;;
        --out) out=${2:?$usage}; shift ;;
        --window) window=${2:?$usage}; shift ;;
        --pes) pes=${2:?$usage}; shift ;;
        --groups) only=$(echo "${2:?$usage}" | tr ',' ' '); shift ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
    shift
done
# The heap of each PE is backed by memory (shm files for OSHMEM): keep it sane.
case ${window:-64} in
    *[!0-9]*) echo "--window takes MiB, 64 to 1024" >&2; exit 2 ;;
esac
if [ "${window:-64}" -lt 64 ] || [ "${window:-64}" -gt 1024 ]; then
    echo "--window takes MiB, 64 to 1024" >&2
    exit 2
fi
[ -n "$reps" ] || { [ -n "$quick" ] && reps=2 || reps=7; }
[ -n "$quick" ] && limit=120 || limit=300
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shmem-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
colls="barrier bcast reduce fcollect alltoall"
ncores=$(nproc)
note() { echo "$*" | tee -a "$tmp/notes"; }
: >"$tmp/notes"
: >"$tmp/raw"

# ---- build both ---------------------------------------------------------------
prefix=$tmp/prefix
have_sr=0
# Nothing of an outer make (jobs, flags) may leak into this one.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$build" install prefix="$prefix" \
        >"$tmp/install.log" 2>&1; then
    note "symrail: make install failed ($(tail -n 3 "$tmp/install.log" | tr '\n' ' ')): measuring OSHMEM only"
elif [ ! -f "$prefix/include/shmem.h" ]; then
    note "symrail: this build installs no shmem.h: measuring OSHMEM only"
elif ! "$prefix/bin/symcc" -O2 -o "$tmp/sb_symrail" "$src/shmem_bench.c" >"$tmp/symcc.err" 2>&1; then
    undef=$(sed -n "s/.*undefined reference to \`\([^']*\)'.*/\1/p" "$tmp/symcc.err" | sort -u | tr '\n' ' ')
    case " $undef " in
        *" shmem_init "*|*" shmem_barrier_all "*|*" shmem_malloc "*|*" shmem_align "*)
            note "symrail: no shmem_init/barrier_all/align in libsymrail yet: measuring OSHMEM only"
            undef= ;;
    esac
    if [ -z "$undef" ] && grep -q 'undefined reference' "$tmp/symcc.err"; then
        :
    elif [ -n "$undef" ]; then
        # What is missing gets a stub that ends the run saying so: the parts
        # that need it are found and left out, the others still measured.
        note "symrail: not in libsymrail yet: $undef"
        {
            echo '#include <stdio.h>'
            echo '#include <stdlib.h>'
            for f in $undef; do
                printf 'void %s(void);\nvoid %s(void) { fprintf(stderr, "%%s is not in libsymrail\\n", "%s"); exit(3); }\n' \
                    "$f" "$f" "$f"
            done
        } >"$tmp/stubs.c"
        if "$prefix/bin/symcc" -O2 -o "$tmp/sb_symrail" "$src/shmem_bench.c" "$tmp/stubs.c" \
                >"$tmp/symcc.err" 2>&1; then
            have_sr=1
        else
            note "symrail: not even with stubs ($(grep -m1 error "$tmp/symcc.err")): measuring OSHMEM only"
        fi
    else
        grep -E 'error' "$tmp/symcc.err" | head -n 8 | sed 's/^/    /' >"$tmp/why"
        note "symrail: symcc cannot build shmem_bench.c, measuring OSHMEM only:"
        tee -a "$tmp/notes" <"$tmp/why"
    fi
else
    have_sr=1
fi
symrun=$prefix/bin/symrun
[ -x "$symrun" ] || symrun=$build/symrun

have_osh=0
if ! command -v oshcc >/dev/null 2>&1 || ! command -v oshrun >/dev/null 2>&1; then
    note "OSHMEM: no oshcc/oshrun (Debian: openmpi-bin libopenmpi-dev): measuring symrail only"
elif ! oshcc -O2 -o "$tmp/sb_oshmem" "$src/shmem_bench.c" >"$tmp/oshcc.err" 2>&1; then
    note "OSHMEM: oshcc cannot build shmem_bench.c, measuring symrail only:"
    sed 's/^/    /' "$tmp/oshcc.err" | head -n 12 | tee -a "$tmp/notes"
else
    have_osh=1
fi
if [ "$have_sr" = 0 ] && [ "$have_osh" = 0 ]; then
    echo "neither side could be built" >&2
    exit 1
fi

# ---- run ------------------------------------------------------------------------
# One run: IMPL N ARGS...; appends "impl metric mode npes size value unit" to
# the raw file; returns the program's status.
run_one() {
    impl=$1 n=$2
    shift 2
    if [ "$n" -eq 2 ]; then heap=$((${window:-64} + 96))M; else heap=32M; fi
    set -- ${quick:+"$quick"} ${window:+--window "$window"} "$@"
    if [ "$impl" = symrail ]; then
        SYMRAIL_HEAP_SIZE=$heap SHMEM_SYMMETRIC_SIZE=$heap timeout "$limit" \
            "$symrun" -n "$n" "$tmp/sb_symrail" "$@" >"$tmp/one" 2>"$tmp/err" && rc=0 || rc=$?
    else
        # Open MPI 4.1 reads SMA_SYMMETRIC_SIZE; without osc ^rdma Debian's
        # OSHMEM crashes in shmem_finalize.
        SMA_SYMMETRIC_SIZE=$heap SHMEM_SYMMETRIC_SIZE=$heap timeout "$limit" \
            oshrun --allow-run-as-root --oversubscribe --mca osc '^rdma' -np "$n" \
            "$tmp/sb_oshmem" "$@" >"$tmp/one" 2>"$tmp/err" && rc=0 || rc=$?
    fi
    # A failed run's points come again from the parts run alone.
    [ "$rc" -ne 0 ] || sed "s/^/$impl /" "$tmp/one" >>"$tmp/raw"
    return "$rc"
}

# Why the last run failed, in one line: the program's own words if it said
# something, else the launcher's.
failure() {
    if [ "$1" -eq 124 ]; then
        echo "no end within ${limit} s"
    else
        l=$(grep -m1 -E 'shmem_bench|not in libsymrail|shmem_[a-z_0-9]+' "$tmp/err" || tail -n 1 "$tmp/err")
        echo "status $1: $l"
    fi
}

# What a side runs at N: "rma" (N=2) and the collectives not known to fail.
# A group that failed once (broken.IMPL.N) is left out of later runs.
groups_of() {
    g=
    [ "$2" -eq 2 ] && g=rma
    for c in $colls; do g="$g $c"; done
    if [ -n "$only" ]; then
        k=
        for x in $g; do
            case " $only " in *" $x "*) k="$k $x" ;; esac
        done
        g=$k
    fi
    for b in $(cat "$tmp/broken.$1.$2" 2>/dev/null); do
        g=$(echo " $g " | sed "s/ $b / /")
    done
    echo $g
}
run_groups() {
    impl=$1 n=$2
    g=$(groups_of "$impl" "$n")
    [ -n "$g" ] || return 0
    rma=--no-rma list=
    for x in $g; do
        case $x in
            rma) rma=--rma ;;
            *) list=${list:+$list,}$x ;;
        esac
    done
    run_one "$impl" "$n" "$rma" --coll "${list:-none}" && return 0
    rc=$?
    # Run each group alone once to tell which one fails; keep the rest.
    why=$(failure "$rc")
    note "$impl at N=$n: the run failed ($why); each part alone:"
    for x in $g; do
        case $x in
            rma) a="--rma --coll none" ;;
            *) a="--no-rma --coll $x" ;;
        esac
        # shellcheck disable=SC2086
        run_one "$impl" "$n" $a && rc=0 || rc=$?
        if [ "$rc" -ne 0 ]; then
            why=$(failure "$rc")
            note "    $x fails ($why), left out"
            echo "$x" >>"$tmp/broken.$impl.$n"
        fi
    done
}

impls=
[ "$have_sr" = 1 ] && impls=symrail
[ "$have_osh" = 1 ] && impls="$impls oshmem"
for n in $pes; do
    [ "$n" -gt "$ncores" ] && note "N=$n: $n PEs on $ncores cores, oversubscribed"
done
echo "shmem_bench: $reps repetitions ($(echo $impls | sed 's/ / then /') at each N), N = $pes${quick:+, quick}"
t0=$(date +%s)
r=1
while [ "$r" -le "$reps" ]; do
    for n in $pes; do
        for impl in $impls; do
            run_groups "$impl" "$n"
        done
    done
    echo "  repetition $r of $reps done ($(($(date +%s) - t0)) s)"
    r=$((r + 1))
done

# ---- tables and plot --------------------------------------------------------
cp "$tmp/raw" "$out/shmem_bench.raw"
python3 - "$tmp/raw" "$tmp/notes" "$out" "$ncores" <<'PY' | tee "$out/shmem_bench.txt"
import sys, statistics, collections
raw, notes, out, ncores = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
vals = collections.defaultdict(list)
units = {}
for line in open(raw):
    f = line.split()
    if len(f) != 7:
        continue
    impl, metric, mode, n, size, v, unit = f
    vals[(impl, metric, mode, int(n), int(size))].append(float(v))
    units[metric] = unit
med = {k: statistics.median(v) for k, v in vals.items()}
reps = {k: len(v) for k, v in vals.items()}

def human(b):
    for u, s in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << s and b % (1 << s) == 0:
            return f"{b >> s} {u}"
    return f"{b} B"

def ratio(metric, sr, osh):
    if sr is None or osh is None or sr <= 0 or osh <= 0:
        return None
    return sr / osh if units[metric] == "GB/s" else osh / sr

titles = {
    "put_bw": "put bandwidth, private malloc source (GB/s)",
    "get_bw": "get bandwidth, private malloc destination (GB/s)",
    "put_lat": "put + quiet latency (us)", "get_lat": "get latency (us)",
    "amo_lat": "fetch_add (64-bit) latency (us)", "barrier": "barrier_all latency (us)",
    "bcast": "broadcast64 latency (us)", "reduce": "long sum_to_all latency (us)",
    "fcollect": "fcollect64 latency (us, size per PE)",
    "alltoall": "alltoall64 latency (us, size per PE)",
}
order = ["put_bw", "get_bw", "put_lat", "get_lat", "amo_lat", "barrier", "bcast", "reduce",
         "fcollect", "alltoall"]
points = sorted({k[1:] for k in med}, key=lambda p: (order.index(p[0]), p[1] != "hot", p[2], p[3]))
print("symrail/OSHMEM = symrail speed / OSHMEM speed (> 1: symrail faster); "
      "median of the repetitions")
for line in open(notes):
    print("note: " + line.rstrip())
rows = []  # (metric, mode, n, size, sr, osh, r)
worst = None
for metric in order:
    ps = [p for p in points if p[0] == metric]
    if not ps:
        continue
    print(f"\n{titles[metric]}")
    print(f"{'mode':>5} {'N':>3} {'size':>8} {'symrail':>10} {'OSHMEM':>10} {'sr/osh':>8} reps")
    for (_, mode, n, size) in ps:
        sr = med.get(("symrail", metric, mode, n, size))
        osh = med.get(("oshmem", metric, mode, n, size))
        r = ratio(metric, sr, osh)
        rows.append((metric, mode, n, size, sr, osh, r))
        if r is not None and (worst is None or r < worst[0]):
            worst = (r, metric, mode, n, size)
        fmt = lambda v: f"{v:>10.4g}" if v is not None else f"{'-':>10}"
        sz = "" if metric == "barrier" else human(size)
        over = " (oversubscribed)" if n > ncores else ""
        nr = "/".join(str(reps.get((i, metric, mode, n, size), 0)) for i in ("symrail", "oshmem"))
        print(f"{mode:>5} {n:>3} {sz:>8} {fmt(sr)} {fmt(osh)} "
              f"{(f'{r:8.2f}' if r is not None else '       -')} {nr}{over}")
both = [x for x in rows if x[6] is not None]
if both:
    below = [x for x in both if x[6] < 1.0]
    print(f"\n{len(both)} points measured on both sides; {len(below)} below 1.0; worst "
          f"{worst[0]:.2f} ({worst[1]} {worst[2]} N={worst[3]} {human(worst[4])})")
missing = [x for x in rows if x[4] is None]
if missing:
    print(f"{len(missing)} points without a symrail value")

# Data for gnuplot: bandwidth by size, ratios of the latency points.
with open(f"{out}/shmem_bench.bw.dat", "w") as f:
    f.write("# size " + " ".join(f"{i}_{m}_{mode}" for m in ("put_bw", "get_bw")
                                 for mode in ("hot", "cold") for i in ("symrail", "oshmem")) + "\n")
    for size in sorted({p[3] for p in points if p[0] == "put_bw"}):
        cells = []
        for m in ("put_bw", "get_bw"):
            for mode in ("hot", "cold"):
                for i in ("symrail", "oshmem"):
                    v = med.get((i, m, mode, 2, size))
                    cells.append(f"{v:g}" if v else "-")
        f.write(f"{size} " + " ".join(cells) + "\n")
pes = sorted({p[2] for p in points if p[0] not in ("put_bw", "get_bw")})
with open(f"{out}/shmem_bench.lat.dat", "w") as f:
    f.write("# point " + " ".join(f"N={n}" for n in pes) + "\n")
    seen = []
    for (metric, mode, n, size, *_r) in rows:
        if metric in ("put_bw", "get_bw") or (metric, mode, size) in seen:
            continue
        seen.append((metric, mode, size))
        label = metric.replace("_lat", "") + ("" if metric == "barrier" else " " + human(size).replace(" ", ""))
        label += "-cold" if mode == "cold" else ""
        cells = []
        for n2 in pes:
            r = next((x[6] for x in rows if x[:4] == (metric, mode, n2, size)), None)
            cells.append(f"{r:g}" if r else "-")
        f.write(f'"{label}" ' + " ".join(cells) + "\n")
with open(f"{out}/shmem_bench.pes", "w") as f:
    f.write(" ".join(str(n) for n in pes) + "\n")
with open(f"{out}/shmem_bench.pairs", "w") as f:
    f.write(f"{len(both)}\n")
PY

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "no gnuplot (Debian: apt-get install gnuplot-nox): no plot"
    exit 0
fi
hist=
i=2
for n in $(cat "$out/shmem_bench.pes"); do
    hist="$hist${hist:+, }'shmem_bench.lat.dat' using $i:xtic(1) title 'N=$n'"
    i=$((i + 1))
done
# With one side only, the ratio panels say so instead.
ratio_bw="'shmem_bench.bw.dat' u 1:(\$2/\$3) w lp t 'put hot', '' u 1:(\$4/\$5) w lp t 'put cold', \
     '' u 1:(\$6/\$7) w lp t 'get hot', '' u 1:(\$8/\$9) w lp t 'get cold', 1 w l lc 'black' notitle"
ratio_lat=$hist
if [ "$(cat "$out/shmem_bench.pairs")" = 0 ]; then
    none="set label 1 'only one side measured: no ratio' at graph 0.3, graph 0.5; unset logscale; plot [0:1][0:1] -1 notitle; unset label 1"
    ratio_bw=$none ratio_lat=$none
fi
# Without the RMA group (--groups) the bandwidth panels say so.
put_bw="plot 'shmem_bench.bw.dat' u 1:2 w lp t 'symrail hot', '' u 1:3 w lp t 'OSHMEM hot', \
     '' u 1:4 w lp t 'symrail cold', '' u 1:5 w lp t 'OSHMEM cold'"
get_bw="plot 'shmem_bench.bw.dat' u 1:6 w lp t 'symrail hot', '' u 1:7 w lp t 'OSHMEM hot', \
     '' u 1:8 w lp t 'symrail cold', '' u 1:9 w lp t 'OSHMEM cold'"
if ! grep -q '^[0-9]' "$out/shmem_bench.bw.dat"; then
    nobw="set label 1 'bandwidth not measured (--groups)' at graph 0.3, graph 0.5; unset logscale; plot [0:1][0:1] -1 notitle; unset label 1; set logscale x 2; set logscale y"
    put_bw=$nobw get_bw=$nobw ratio_bw=$nobw
fi
rm -f "$out/shmem_bench.pes" "$out/shmem_bench.pairs"
cd "$out"
# Columns of a side that was not measured make gnuplot warn: keep that quiet.
if ! gnuplot 2>"$tmp/gnuplot.err" <<EOF
set terminal pngcairo size 1600,1100 font ",10"
set output 'shmem_bench.png'
set datafile missing '-'
set multiplot layout 2,2 title "symrail vs Open MPI OSHMEM over shared memory, $ncores cores (median of $reps)"
set logscale x 2
set xtics 4
set format x '%.0b%B'
set logscale y
set grid
set key left top
set xlabel 'bytes'
set ylabel 'GB/s'
set title 'put bandwidth (private malloc source)'
$put_bw
set title 'get bandwidth (private malloc destination)'
$get_bw
set title 'bandwidth: symrail / OSHMEM (> 1: symrail faster)'
set ylabel 'ratio'
$(case $ratio_bw in set*) echo "$ratio_bw" ;; *) echo "plot $ratio_bw" ;; esac)
unset logscale x
unset xlabel
set title 'latency: OSHMEM time / symrail time (> 1: symrail faster; N > $ncores oversubscribed)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -45 scale 0
set key right top
set arrow from graph 0, first 1 to graph 1, first 1 nohead lc 'black'
$(case $ratio_lat in set*) echo "$ratio_lat" ;; *) echo "plot $ratio_lat" ;; esac)
unset multiplot
EOF
then
    echo "gnuplot failed:" >&2
    cat "$tmp/gnuplot.err" >&2
    exit 1
fi
echo "plot: $out/shmem_bench.png; tables: $out/shmem_bench.txt"
