#!/bin/sh
# Instructions per call over shared memory between 2 PEs, counted by
# callgrind around loops of 10 000 calls: 8-byte put (put2: to a small
# object in a page that another block shares), 8-byte get, fetch_add and
# quiet, for symrail and for Open MPI's OSHMEM (shmem_putmem, getmem,
# atomic_fetch_add, quiet), printed as a table with the ratio.
#   tests/perf/callgrind_shm.sh BUILDDIR
# Set CG_ANNOTATE=1 to also print symrail's inclusive profile of the put loop.
set -eu
build=${1:?usage: callgrind_shm.sh BUILDDIR}
src=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
ops="put put2 get fadd quiet ctxput"
toggles=""
for op in $ops; do toggles="$toggles --toggle-collect=cg_${op}_loop"; done

count() { # impl outdir: prints "op instructions" for the PE that ran the loops
    for f in "$2"/cg.*; do
        callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null
    done | awk -v ops="$ops" '
        BEGIN { n = split(ops, o, " ") }
        { for (i = 1; i <= n; i++) if ($0 ~ ("[:]cg_" o[i] "_loop( |$)")) {
              v = $1; gsub(",", "", v); if (v + 0 > best[o[i]]) best[o[i]] = v + 0 } }
        END { for (i = 1; i <= n; i++) print o[i], best[o[i]] + 0 }'
}

mkdir "$tmp/sr" "$tmp/osh"
SYMRAIL_HEAP_SIZE=64M "$build/symrun" -n 2 "$build/libtool" --mode=execute valgrind -q --tool=callgrind --collect-atstart=no \
    $toggles --callgrind-out-file="$tmp/sr/cg.%p" "$build/tests/perf/callgrind_loop"
count symrail "$tmp/sr" >"$tmp/sr.txt"
mkdir "$tmp/srmt"
CG_MT=1 SYMRAIL_HEAP_SIZE=64M "$build/symrun" -n 2 "$build/libtool" --mode=execute valgrind -q --tool=callgrind --collect-atstart=no \
    $toggles --callgrind-out-file="$tmp/srmt/cg.%p" "$build/tests/perf/callgrind_loop"
count symrail "$tmp/srmt" >"$tmp/srmt.txt"
# The library's own part of the two puts (the entry points, inclusive),
# without the loops that call them (the context loop passes one more
# argument); symrail_put serves the put and put2 loops, 20 000 calls.
fn_cost() { # outdir function
    for f in "$1"/cg.*; do
        callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null
    done | awk -v fn="$2" '$0 ~ ("[:]" fn "$") { v = $1; gsub(",", "", v); if (v + 0 > b) b = v + 0 }
        END { print b + 0 }'
}
if [ "${CG_ANNOTATE:-0}" = 1 ]; then
    for f in "$tmp"/sr/cg.*; do callgrind_annotate --inclusive=yes "$f" | head -60; done
fi

have_osh=0
if command -v oshcc >/dev/null 2>&1 &&
   oshcc -O2 -DCG_OSHMEM -o "$tmp/cg_osh" "$src/callgrind_loop.c" 2>"$tmp/oshcc.err"; then
    have_osh=1
    OMPI_MCA_osc='^rdma' oshrun --allow-run-as-root --oversubscribe --mca osc '^rdma' -np 2 \
        valgrind -q --tool=callgrind --collect-atstart=no $toggles \
        --callgrind-out-file="$tmp/osh/cg.%p" "$tmp/cg_osh" 2>"$tmp/osh.err" ||
        { cat "$tmp/osh.err" >&2; exit 1; }
    count oshmem "$tmp/osh" >"$tmp/osh.txt"
else
    echo "no usable oshcc (openmpi-bin libopenmpi-dev): symrail only" >&2
    for op in $ops; do echo "$op 0"; done >"$tmp/osh.txt"
fi

echo "instructions per call over shm, 2 PEs, 10000 calls each (loop included)"
printf '%-10s %10s %10s %14s\n' op symrail oshmem symrail/oshmem
join "$tmp/sr.txt" "$tmp/osh.txt" | awk '{
    s = $2 / 10000; o = $3 / 10000
    printf "%-10s %10.1f %10.1f %14s\n", $1, s, o, (o > 0 ? sprintf("%.2f", s / o) : "-") }'
echo
echo "8-byte put: default context against a private one, per call"
printf '%-14s %14s %14s %16s %16s\n' "thread level" "loop default" "loop private" \
    "symrail_put" "symrail_ctx_put"
for lvl in single multiple; do
    f=$tmp/sr.txt d=$tmp/sr; [ $lvl = single ] || { f=$tmp/srmt.txt d=$tmp/srmt; }
    a=$(fn_cost "$d" symrail_put) b=$(fn_cost "$d" symrail_ctx_put)
    awk -v l=$lvl -v a="$a" -v b="$b" '$1 == "put" { d = $2 } $1 == "ctxput" { p = $2 }
        END { printf "%-14s %14.1f %14.1f %16.1f %16.1f\n", l, d / 10000, p / 10000,
              a / 20000, b / 10000 }' "$f"
done
