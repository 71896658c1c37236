#!/bin/sh
# shellcheck disable=SC2154 # outdir, T, npass, nfail: lib.sh
# Resources stay flat over repeated init/finalize in one process and over a
# long run of operations, on shared memory and on TCP (t_leaks.c says what
# is measured and which slack is allowed, and why).
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
# A sanitizer's quarantine and shadow memory grow resident memory and
# mappings on their own: there only descriptors and threads are held exact
# (and the leak checker reports what is not freed).
if [ "${SR_SANITIZERS:-no}" != no ]; then
    echo "note: under --enable-sanitizers=$SR_SANITIZERS memory and mappings are not bounded"
    export T_SLACK_KB=100000000 T_SLACK_MAPS=100000000
fi
# A small heap: its pages are not what is measured, and a PE maps its peers'.
export SYMRAIL_HEAP_SIZE=32M
for tl in shm tcp; do
    run_case "leaks: 50 init/finalize cycles, $tl" 0 '^ok: 50 init/finalize cycles' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 300 "$T/t_leaks" cycles 50
    count_case "leaks: both PEs of the cycles stayed flat, $tl" 2 '^ok: 50 init/finalize'
    grep '^leaks:' "$outdir/out" | sed 's/^/    /'
    run_case "leaks: 20000 rounds of operations, $tl" 0 '^ok: 20000 rounds' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 300 "$T/t_leaks" ops 20000
    grep '^leaks:' "$outdir/out" | sed 's/^/    /'
done
finish
