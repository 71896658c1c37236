#!/bin/sh
# barrier_all with more PEs than cores, shm against TCP, alternated:
#   tests/perf/barrier_bench.sh BUILDDIR [PES] [ROUNDS]
set -eu
build=${1:?usage: barrier_bench.sh BUILDDIR [PES] [ROUNDS]}
pes=${2:-32}
rounds=${3:-3}
echo "barrier_all, $pes PEs on $(nproc) cores, $rounds rounds alternated (us per barrier)"
printf '%-6s %10s %10s %8s\n' round shm tcp shm/tcp
for r in $(seq "$rounds"); do
    s=$(SYMRAIL_HEAP_SIZE=16M "$build/symrun" -n "$pes" "$build/tests/perf/barrier_bench" |
        sed -n 's/.*: \([0-9.]*\) us.*/\1/p')
    t=$(SYMRAIL_HEAP_SIZE=16M SYMRAIL_TRANSPORTS=tcp "$build/symrun" -n "$pes" \
        "$build/tests/perf/barrier_bench" 100 | sed -n 's/.*: \([0-9.]*\) us.*/\1/p')
    printf '%-6s %10s %10s %8s\n' "$r" "$s" "$t" "$(echo "$s $t" | awk '{ printf "%.2f", $1 / $2 }')"
done
