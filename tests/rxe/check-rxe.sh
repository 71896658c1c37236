#!/bin/sh
# The verbs tests on real verbs: Soft-RoCE in a qemu guest booted for the
# purpose (tests/rxe/run-in-vm.sh).  Skips (77) only where qemu or a kernel
# with rdma_rxe is not installed.
: "${top_builddir:?top_builddir must be set (run through make check-rxe)}"
: "${top_srcdir:?}"
cd "$top_builddir" || exit 1
# Source and build trees may live below /tmp, which the guest keeps private.
SYMRAIL_RXE_SHARE="$top_srcdir:$top_builddir" exec sh "$top_srcdir/tests/rxe/run-in-vm.sh" --devices 2 --mem 3072 --timeout 1500 \
    --env top_builddir="$top_builddir" --env top_srcdir="$top_srcdir" \
    --env SYMRUN="$top_builddir/symrun" \
    -- sh "$top_srcdir/tests/rxe/verbs_suite.sh"
