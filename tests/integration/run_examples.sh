#!/bin/sh
# The examples people copy from must keep working.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
E=$top_builddir/examples
run_case "hello -n 4" 0 'hello from PE 3 of 4' "$SYMRUN" -n 4 --timeout 60 "$E/hello"
run_case "ring -n 4" 0 'ring: all data verified' "$SYMRUN" -n 4 --timeout 60 "$E/ring"
run_case "ring -n 3, 12345 bytes" 0 'ring: all data verified' \
    "$SYMRUN" -n 3 --timeout 60 "$E/ring" 12345
for n in 1 3 4; do
    last=$((n - 1)); prev=$(( (n + last - 1) % n ))
    run_case "shmem_hello -n $n" 0 "hello from PE $last of $n: PE $prev says hi" \
        "$SYMRUN" -n "$n" --timeout 60 "$E/shmem_hello"
done
run_case "notify -n 2" 0 'blocks 48..63 ready from PE 0' "$SYMRUN" -n 2 --timeout 60 "$E/notify"
finish
