#!/bin/sh
# Names through the launcher's PMIx publish/lookup (src/boot/boot_name.c and
# symrun's data store, launcher/symrun_pubsub.c): 1, 2 and 3 PEs under
# symrun, a publisher that leaves without finalizing, and a singleton (no
# launcher: every call is unsupported).
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for n in 1 2 3; do
    run_case "names: t_names under symrun -n $n" 0 "^ok: names done \\($n PEs\\)" \
        "$SYMRUN" -n "$n" --timeout 120 "$T/t_names"
done
for n in 2 3; do
    run_case "names: a publisher that exits without finalizing loses its names (-n $n)" 0 \
        "^ok: a publisher's names end with it" \
        env T_NAMES_EXIT=1 "$SYMRUN" -n "$n" --timeout 120 "$T/t_names"
done
run_case "names: a waiting lookup is answered when the name is published" 0 \
    '^ok: a waiting lookup is answered [0-9]+ ms after the publish' \
    "$SYMRUN" -n 2 --timeout 120 "$T/t_names"
run_case "names: a singleton has no names" 0 '^ok: singleton: names unsupported' \
    env -i PATH="$PATH" timeout 60 "$T/t_names"
count_case "names: a singleton says once that it has no names" 1 'info: names: no launcher'
finish
