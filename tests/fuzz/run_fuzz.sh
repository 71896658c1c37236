#!/bin/sh
# libFuzzer on the TCP transport's frame and handshake decoders.
#   tests/fuzz/run_fuzz.sh [SECONDS]     (default 30)
# Builds fuzz_frame.c and src/tl/tcp/frame.c (with src/util/crypto.c) with clang
# (-fsanitize=fuzzer,address,undefined), seeds a corpus from fuzz_replay's
# seeds, and fuzzes for SECONDS.  FUZZ_CORPUS=DIR keeps the corpus between
# runs.  Exits 77 when clang or its libFuzzer runtime is missing, non-zero
# on a finding (the crashing input is kept and named).
secs=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null 2>&1 || {
    echo "SKIP: clang not found (apt-get install clang)"
    exit 77
}
work=$(mktemp -d "${TMPDIR:-/tmp}/symrail-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
corpus=${FUZZ_CORPUS:-$work/corpus}
mkdir -p "$corpus" "$work/inc"
: >"$work/inc/config.h"  # frame.c needs no configuration
# symrail_version.h is generated into the build tree.
flags="-g -O1 -I$work/inc -I$top/src -I${top_builddir:-$top}/include -I$top/include"
if ! "$CLANG" $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "$here/fuzz_frame.c" "$top/src/tl/tcp/frame.c" "$top/src/util/crypto.c" -lcrypto \
    -o "$work/fuzz_frame" 2>"$work/cc.err"; then
    if grep -q -i 'fuzzer' "$work/cc.err"; then
        echo "SKIP: $CLANG has no libFuzzer runtime: $(head -n 3 "$work/cc.err")"
        exit 77
    fi
    cat "$work/cc.err"
    exit 1
fi
"$CLANG" $flags "$here/fuzz_replay.c" "$here/fuzz_frame.c" "$top/src/tl/tcp/frame.c" \
    "$top/src/util/crypto.c" -lcrypto -o "$work/fuzz_replay" && "$work/fuzz_replay" --write-seeds "$corpus" || exit 1
cd "$work" || exit 1
"$work/fuzz_frame" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$work/" "$corpus" 2>"$work/fuzz.log"
rc=$?
grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss' "$work/fuzz.log"
if [ $rc -ne 0 ]; then
    tail -n 40 "$work/fuzz.log"
    for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
        [ -f "$f" ] || continue
        cp "$f" "${TMPDIR:-/tmp}/" && echo "finding kept as ${TMPDIR:-/tmp}/$(basename "$f")"
    done
    echo "FAIL: the frame fuzzer found a problem (replay with fuzz_replay FILE)"
    exit 1
fi
echo "PASS: $secs s of libFuzzer on the frame decoders, no finding; corpus $(ls "$corpus" | wc -l) inputs"
