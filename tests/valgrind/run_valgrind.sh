#!/bin/sh
# Memcheck over a representative subset: the unit tests of util and core,
# and 2-PE jobs under symrun over shm and over TCP (RMA and atomics, notify,
# globals as symmetric memory, segments and batches) with valgrind on every
# PE.  A definite leak or any memory error fails the case.  Suppressions
# (tests/valgrind/valgrind.supp) cover third-party code only.  The probe
# cases show that the same command line fails on a real leak and a real
# invalid read in one PE.
#   VG_PROBE=leak|read: run only the probe with that bug as an ordinary case
#   (the script must then fail).
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind is not installed"; exit 77; }
VG="$top_builddir/libtool --mode=execute valgrind -q --error-exitcode=1 --leak-check=full
    --errors-for-leak-kinds=definite --show-leak-kinds=definite --track-fds=no
    --suppressions=$top_srcdir/tests/valgrind/valgrind.supp --num-callers=30"
U=$top_builddir/tests/unit
P=$top_builddir/tests/valgrind/t_vg_probe
# Valgrind runs a PE some 20-50 times slower: small heaps, a generous bound.
SYMRAIL_HEAP_SIZE="${SYMRAIL_HEAP_SIZE:-32M}"
export SYMRAIL_HEAP_SIZE
TO=600

if [ -n "${VG_PROBE:-}" ]; then
    # shellcheck disable=SC2086
    run_case "probe with a $VG_PROBE bug, as a clean case" 0 '^probe ' \
        "$SYMRUN" -n 2 --timeout $TO $VG "$P" "$VG_PROBE"
    finish
    exit
fi

for u in test_util test_strlist test_env test_slice test_heap_alloc test_credits \
    test_core_rma test_core_ctx; do
    # shellcheck disable=SC2086
    run_case "valgrind: unit $u" 0 '' $VG "$U/$u"
done
for tl in shm tcp; do
    # Over TCP alone symrail_ptr gives no pointer to a peer.
    noptr=; [ $tl = shm ] || noptr=T_NO_PTR=1
    for t in t_rma t_atomic t_notify; do
        # shellcheck disable=SC2086
        run_case "valgrind: $t over $tl (-n 2)" 0 '^ok: ' \
            env SYMRAIL_TRANSPORTS=$tl $noptr "$SYMRUN" -n 2 --timeout $TO $VG "$T/$t"
    done
    # shellcheck disable=SC2086
    run_case "valgrind: globals as symmetric memory over $tl (-n 2)" 0 \
        '^ok: data: globals and statics symmetric' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_SLICE_SIZE=16K $noptr \
        "$SYMRUN" -n 2 --timeout $TO $VG "$T/t_data"
    # shellcheck disable=SC2086
    run_case "valgrind: segments and batches over $tl (-n 2)" 0 \
        '^ok: seg: segments, paged batches' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_SLICE_SIZE=16K \
        "$SYMRUN" -n 2 --timeout $TO $VG "$T/t_seg"
done

# The probe: clean it passes, and each bug fails both the case and the
# whole script run for it.
# shellcheck disable=SC2086
run_case "valgrind: the probe without a bug is clean" 0 '^probe clean done' \
    "$SYMRUN" -n 2 --timeout $TO $VG "$P"
for bug in leak read; do
    case $bug in
        leak) what='definitely lost' ;;
        read) what='Invalid read of size 1' ;;
    esac
    # shellcheck disable=SC2086
    run_case "valgrind: a $bug in one PE fails the job" nonzero "$what" \
        "$SYMRUN" -n 2 --timeout $TO $VG "$P" $bug
    run_case "valgrind: a $bug in one PE fails this script" nonzero "^FAIL: probe with a $bug bug" \
        env VG_PROBE=$bug sh "$0"
done
finish
