#!/bin/sh
# Notifications of up to 4096 bytes, status, tags, reserved tags, over
# shared memory and over TCP, with 2 and 3 PEs.
. "${top_srcdir:-.}/tests/integration/lib.sh"

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for tl in shm tcp; do
    for n in 2 3; do
        run_case "notify sizes, tags, status, reserved tags ($tl, -n $n)" 0 \
            '^ok: notify: a handler of a reserved tag answers' \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 120 "$T/t_notify_tag"
        run_case "notify with 2 slots per sender, 4096-byte messages ($tl, -n $n)" 0 \
            '^ok: notify: .* verified byte for byte' \
            env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=2 \
            "$SYMRUN" -n "$n" --timeout 120 "$T/t_notify_tag" sizes
        run_case "senders to a receiver that does not consume stall ($tl, -n $n)" 0 \
            '^ok: PE 0 held [0-9]+ messages \(at most 4 slots' \
            env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=4 \
            "$SYMRUN" -n "$n" --timeout 120 "$T/t_notify_tag" many
    done
    run_case "a reserved tag is refused naming it ($tl)" 0 \
        'symrail_notify_send: tag 0xffff0000 is reserved for the library' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 120 "$T/t_notify_tag"
    run_case "trysend: OK sends the rest later, AGAIN sends nothing ($tl)" 0 \
        '^ok: notify: trysend' \
        env SYMRAIL_TRANSPORTS=$tl SYMRAIL_NOTIFY_SLOTS=2 \
        "$SYMRUN" -n 2 --timeout 60 "$T/t_notify_tag" trysend
    run_case "wait_tag on a sender that left ends in an error ($tl)" 0 \
        'ok: wait_tag on a departed sender fails with: peer process is gone' \
        env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n 2 --timeout 60 "$T/t_notify_tag" peergone
done
finish
