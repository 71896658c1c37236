#!/bin/sh
# Threads on private contexts over shared memory and over TCP (tests/perf/thread_bench.c).
#   tests/perf/thread_bench.sh BUILDDIR [--quick]
set -eu
build=${1:?usage: thread_bench.sh BUILDDIR [--quick]}
shift
for tl in shm tcp; do
    echo "== $tl"
    SYMRAIL_TRANSPORTS=$tl "$build/symrun" -n 2 --timeout 600 "$build/tests/perf/thread_bench" "$@"
done
