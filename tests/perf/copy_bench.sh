#!/bin/sh
# Copy matrix over shared memory: symrail and Open MPI's OSHMEM alternated in
# one run (ROUNDS rounds each, best per cell), printed as one table with the
# ratio to the best offset at each size and symrail/OSHMEM.
#   tests/perf/copy_bench.sh BUILDDIR [--quick] [--window MiB] [--target-spin]
# Needs oshcc/oshrun (Debian: openmpi-bin libopenmpi-dev) for the OSHMEM
# columns; without them it measures symrail only.
set -eu
build=${1:?usage: copy_bench.sh BUILDDIR [copy_bench options]}
shift
src=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# The walking window plus slack must fit the symmetric heap.
heap=${COPY_BENCH_HEAP:-3G}

have_osh=0
if command -v oshcc >/dev/null 2>&1 && command -v oshrun >/dev/null 2>&1; then
    if oshcc -O2 -DCB_OSHMEM -o "$tmp/copy_bench_osh" "$src/copy_bench.c" 2>"$tmp/oshcc.err"; then
        have_osh=1
    else
        echo "oshcc failed, measuring symrail only:" >&2
        cat "$tmp/oshcc.err" >&2
    fi
fi

r=0
while [ "$r" -lt "$ROUNDS" ]; do
    SYMRAIL_HEAP_SIZE=$heap "$build/symrun" -n 2 "$build/tests/perf/copy_bench" "$@" \
        >"$tmp/one" || { echo "copy_bench failed (symrail)" >&2; exit 1; }
    sed 's/^/symrail /' "$tmp/one" >>"$tmp/all"
    if [ "$have_osh" = 1 ]; then
        # Open MPI 4.1 reads SMA_SYMMETRIC_SIZE; SHMEM_SYMMETRIC_SIZE is ignored there.
        SMA_SYMMETRIC_SIZE=$heap SHMEM_SYMMETRIC_SIZE=$heap OMPI_MCA_osc='^rdma' oshrun --allow-run-as-root \
            --oversubscribe --mca osc '^rdma' -np 2 "$tmp/copy_bench_osh" "$@" \
            >"$tmp/one" 2>"$tmp/osh.err" || { cat "$tmp/osh.err" >&2; exit 1; }
        sed 's/^/oshmem /' "$tmp/one" >>"$tmp/all"
    fi
    r=$((r + 1))
done

python3 - "$tmp/all" <<'PY'
import sys, collections
best = {}
for line in open(sys.argv[1]):
    impl, op, mode, size, off, gbs = line.split()
    k = (impl, op, mode, int(size), int(off))
    best[k] = max(best.get(k, 0.0), float(gbs))
offs = sorted({k[4] for k in best})
impls = [i for i in ("symrail", "oshmem") if any(k[0] == i for k in best)]
worst_ratio = collections.defaultdict(lambda: 9.0)
worst_vs = 9.0
for mode in ("hot", "cold"):
    for op in ("put", "get"):
        print(f"\n{op} {mode}: GB/s per private-buffer offset (ratio to the best offset)")
        hdr = f"{'size':>8} " + "".join(f"{'sr+'+str(o):>15}" for o in offs)
        if "oshmem" in impls:
            hdr += "".join(f"{'osh+'+str(o):>15}" for o in offs) + f"{'sr/osh min':>11}"
        print(hdr)
        for size in sorted({k[3] for k in best if k[1] == op and k[2] == mode}):
            row = f"{size:>8} "
            vals = {}
            for impl in impls:
                v = [best.get((impl, op, mode, size, o), 0.0) for o in offs]
                vals[impl] = v
                top = max(v) or 1.0
                for x in v:
                    row += f"{x:>8.2f} ({x/top:.2f})"
                    worst_ratio[impl] = min(worst_ratio[impl], x / top)
            if "oshmem" in impls:
                m = min(a / b if b else 9.0 for a, b in zip(vals["symrail"], vals["oshmem"]))
                worst_vs = min(worst_vs, m)
                row += f"{m:>11.2f}"
            print(row)
print()
for impl in impls:
    print(f"{impl}: worst ratio to the best offset {worst_ratio[impl]:.2f} (target >= 0.9)")
if "oshmem" in impls:
    print(f"worst symrail/oshmem over all cells {worst_vs:.2f} (target >= 1.0)")
PY
