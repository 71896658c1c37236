#!/bin/sh
# Threads and contexts (SYMRAIL_THREAD_MULTIPLE) over shared memory and TCP:
# threads on private contexts and on the default one, ctx_destroy with
# transfers in flight, 10 000 contexts.  `make check-tsan` runs the same
# under ThreadSanitizer (T_THREADS_QUICK=1: fewer threads, it is slow).
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
if [ -n "${T_THREADS_QUICK:-}" ]; then
    sizes="2"; threads="4"
else
    sizes="2 4"; threads="4 8"
fi
for tl in shm tcp; do
    for n in $sizes; do
        for t in $threads; do
            for mode in private shared; do
                run_case "$tl: $t threads per PE on $mode contexts (-n $n)" 0 \
                    "^ok: $t threads per PE" \
                    env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 300 \
                    "$T/t_threads" $mode "$t"
            done
        done
        run_case "$tl: notify from many threads to many, 4 slots (-n $n)" 0 \
            '^ok: notify from' env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=4 \
            "$SYMRUN" -n "$n" --timeout 300 "$T/t_threads" notify "${threads##* }"
        run_case "$tl: ctx_destroy completes; 10000 contexts leak nothing (-n $n)" 0 \
            '^ok: ctx_destroy completes' \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 300 "$T/t_threads" destroy
    done
done
# A small window keeps the batch in flight across many pumps of both threads;
# then a thread frees a batch that its owner's progress pumps.
for tl in shm tcp; do
    run_case "$tl: one batch pumped by two threads at once (-n 2)" 0 \
        '^ok: batch: [0-9]+ rounds of [0-9]+ tasks pumped by two threads' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_SLICE_SIZE=4K SYMRAIL_BATCH_WINDOW=64K \
        "$SYMRUN" -n 2 --timeout 300 "$T/t_batch" threads
    count_case "$tl: a batch freed by another thread the moment it is done (-n 2)" 1 \
        '^ok: batch: [0-9]+ rounds of a batch freed by another thread'
done
# Shared memory completes every operation within its call: only a network
# transport can leave one outstanding.
for n in $sizes; do
    run_case "tcp: quiet on one context does not wait for another's (-n $n)" 0 \
        '^ok: quiet on context A returned' \
        env SYMRAIL_TRANSPORTS=tcp SYMRAIL_TCP_LANES=2 SYMRAIL_TEST_HOLD_LANE=1:2000 \
        "$SYMRUN" -n "$n" --timeout 120 "$T/t_threads" isolation
done
finish
