#!/bin/sh
# The verbs tests across two guest kernels: two Soft-RoCE guests joined on
# two rails (tests/rxe/run-two-vms.sh), one Slurm job over both
# (tests/rxe/two_guest_suite.sh).  Skips (77) where qemu, a kernel with
# rdma_rxe or Slurm is not installed.  The whole of it must fit in 10
# minutes on 2 cores: the guests are ended after 600 s (a failure).
: "${top_builddir:?top_builddir must be set (run through make check-rxe)}"
: "${top_srcdir:?}"
cd "$top_builddir" || exit 1
# Source and build trees may live below /tmp, which the guests keep private.
SYMRAIL_RXE_SHARE="$top_srcdir:$top_builddir" exec sh "$top_srcdir/tests/rxe/run-two-vms.sh" \
    --rails 2 --mem "${SYMRAIL_RXE_2VM_MEM:-1024}" --timeout "${SYMRAIL_RXE_2VM_TIMEOUT:-600}" \
    --env top_builddir="$top_builddir" --env top_srcdir="$top_srcdir" \
    ${T_CASES:+--env T_CASES="$T_CASES"} ${TG_RAIL_DOWN_RUNS:+--env TG_RAIL_DOWN_RUNS="$TG_RAIL_DOWN_RUNS"} \
    ${TG_RAIL_DOWN_AFTER:+--env TG_RAIL_DOWN_AFTER="$TG_RAIL_DOWN_AFTER"} \
    -- sh "$top_srcdir/tests/rxe/two_guest_suite.sh"
