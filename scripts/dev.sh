#!/bin/sh
# One entry point for a fresh Debian 12 machine (run as root or with sudo):
#   scripts/dev.sh demo    install what is missing, build, run the KV-cache demo on 4 PEs
#   scripts/dev.sh ring    install what is missing, build, run the ring demo on 4 PEs
#   scripts/dev.sh check   install what is missing, build, run every test (the unit
#                          tests and main integration drivers in a sanitizer build, the verbs
#                          tests in a Soft-RoCE qemu guest, the multi-host and
#                          Slurm tests in network namespaces included)
#   scripts/dev.sh deps    only install the Debian packages
# BUILD_DIR (default: build) holds the out-of-tree build.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
BUILD_DIR=${BUILD_DIR:-$top/build}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

PACKAGES="build-essential autoconf automake libtool pkg-config libpmix-dev libibverbs-dev
rdma-core ibverbs-providers libhwloc-dev libcmocka-dev libssl-dev openmpi-bin procps
libopenmpi-dev gnuplot-nox valgrind"
# The verbs tests boot a qemu guest with Soft-RoCE (tests/rxe/run-in-vm.sh);
# the multi-host tests use network namespaces; the Slurm tests start their own
# munged, slurmctld and slurmds (tests/slurm/cluster.sh); the frame fuzzer
# needs clang; the Python binding's tests register numpy arrays and torch tensors.
RXE_PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static kmod ibverbs-utils perftest
iproute2 slurm-wlm munge util-linux clang libclang-rt-14-dev python3 python3-numpy python3-torch"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

deps() {
    missing=
    # The verbs tests boot Debian 12's 6.1 kernel; SYMRAIL_RXE_KERNEL=6.12
    # asks for its 6.12 one, whose rxe runs the send work off the doorbell,
    # as hardware does (for latency measurements): install it then.
    case ${SYMRAIL_RXE_KERNEL:-} in
    6.12*)
        if [ -n "${WITH_RXE:-}" ] && apt-cache show linux-image-6.12-amd64 >/dev/null 2>&1; then
            RXE_PACKAGES="$RXE_PACKAGES linux-image-6.12-amd64"
        fi ;;
    esac
    for p in $PACKAGES ${WITH_RXE:+$RXE_PACKAGES}; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "installing:$missing"
        as_root apt-get update -qq
        # shellcheck disable=SC2086
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    fi
}

build() {
    [ -x configure ] && [ configure -nt configure.ac ] || ./autogen.sh
    mkdir -p "$BUILD_DIR"
    cd "$BUILD_DIR"
    [ -f Makefile ] || "$top/configure" --enable-silent-rules
    make -j"$JOBS"
}

# Counts the checks in every test log: the PASS:/FAIL: lines of the driver
# scripts and cmocka's per-test lines; a test that died without saying
# counts as one failure.
summarize() {
    pass=0 fail=0 skip=0
    for trs in $(find "$BUILD_DIR/tests" -name '*.trs' | sort); do
        log=${trs%.trs}.log
        res=$(sed -n 's/^:test-result: //p' "$trs")
        p=$(grep -Ec '^(PASS: |\[       OK \])' "$log" || true)
        # cmocka names a failed test twice (when it fails, and in the list
        # at the end): each name counts once.
        f1=$(grep -c '^FAIL: ' "$log" || true)
        f2=$(grep -E '^\[  FAILED  \] [^0-9]' "$log" | sort -u | wc -l)
        f=$((f1 + f2))
        case $res in
            SKIP) skip=$((skip + 1)); echo "SKIP: ${log#"$BUILD_DIR"/}: $(grep -m1 -i skip "$log" || true)" ;;
            PASS) pass=$((pass + p)); fail=$((fail + f)); [ "$p" -gt 0 ] || pass=$((pass + 1)) ;;
            *)    pass=$((pass + p)); [ "$f" -gt 0 ] || f=1; fail=$((fail + f))
                  echo "FAILED: ${log#"$BUILD_DIR"/}" ;;
        esac
    done
    # A make target that failed without a failing test log (a build that
    # broke, a suite that never ran) is a failure too.
    if [ "${1:-0}" -ne 0 ] && [ "$fail" -eq 0 ]; then
        echo "FAILED: a make target ended with status $1 and no failing test log (see above)"
        fail=1
    fi
    echo "$pass passed, $fail failed, $skip skipped"
    [ "$fail" -eq 0 ]
}

case ${1:-} in
    deps)
        deps ;;
    demo)
        deps
        build
        ./symrun -n 4 ./examples/kv_transfer --verify --layers 16 \
            --block-bytes 4K,16K,64K --blocks-per-request 8,32 ;;
    ring)
        deps
        build
        ./symrun -n 4 ./examples/ring ;;
    check)
        WITH_RXE=1
        deps
        build
        rc=0
        # The unit tests and the integration drivers of each layer under
        # AddressSanitizer and UndefinedBehaviorSanitizer, the rest in the
        # plain build (Makefile.am: CI_ASAN_DRIVERS).
        make -j"$JOBS" check-plain || rc=$?
        make -j"$JOBS" check-asan ASAN_CI=1 || rc=$?
        make check-rxe || rc=$?
        make check-multihost || rc=$?
        make check-slurm || rc=$?
        make check-fuzz || rc=$?
        make check-tsan || rc=$?
        make check-valgrind || rc=$?
        if [ "$rc" -ne 0 ]; then
            for log in $(grep -l -E '^:test-result: (FAIL|ERROR)' $(find tests -name '*.trs') | sed 's/\.trs$/.log/'); do
                echo "==== $log"; tail -n 60 "$log"
            done
        fi
        summarize "$rc" ;;
    *)
        echo "usage: $0 demo|ring|check|deps" >&2
        exit 2 ;;
esac
