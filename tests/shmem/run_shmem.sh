#!/bin/sh
# OpenSHMEM setup, memory, RMA, ordering and contexts under symrun -n 1..4 on
# shared memory and TCP (t_sh_rma), and bad input (t_sh_bad): each case
# ends the whole job with a message naming the call and its argument.
. "${top_srcdir:-.}/tests/integration/lib.sh"
S=$top_builddir/tests/shmem

[ -x "$SYMRUN" ] || { echo "SKIP: $SYMRUN not built"; exit 77; }
for tl in shm tcp; do
    for n in 1 2 3 4; do
        run_case "$tl: setup, memory, RMA of every type, contexts, init again (-n $n)" 0 \
            "^ok: shmem setup, memory, RMA of 24 types, contexts, init again \($n PEs\)" \
            env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 120 "$S/t_sh_rma"
    done
done

# bad_cases LABEL "PE COUNTS": each line of stdin, a case and the message
# (an extended regular expression) that must end the job, on shm and TCP.
bad_cases() {
    while read -r what msg; do
        for tl in shm tcp; do
            for n in $2; do
                run_case "$tl: $1 '$what' ends the job (-n $n)" nonzero "$msg" \
                    env SYMRAIL_TRANSPORTS=$tl "$SYMRUN" -n "$n" --timeout 60 "$S/t_sh_bad" "$what"
            done
        done
    done
}
bad_cases "bad input" "1 3" <<'CASES'
pe shmem_long_put: pe [0-9]+ is out of range
negpe shmem_int_g: pe -1 is out of range
dest shmem_long_put: dest 0x[0-9a-f]+ is (not|neither) in the symmetric heap
source shmem_getmem: source 0x[0-9a-f]+ is (not|neither) in the symmetric heap
past_end shmem_putmem: dest 0x[0-9a-f]+ \+ [0-9]+ bytes runs past the end
stride shmem_long_iput: dst -1 is negative
bstride shmem_ctx_double_ibget: sst -2 is negative
ctx_invalid shmem_ctx_long_p: ctx is SHMEM_CTX_INVALID
ctx_destroyed shmem_ctx_putmem: ctx 0x[0-9a-f]+ is not a live context
nostore shmem_ctx_long_put: ctx was created with SYMRAIL_CTX_NOSTORE
destroy_default shmem_ctx_destroy: ctx is SHMEM_CTX_DEFAULT
options shmem_ctx_create: options 0x100000 has bits
free shmem_free: ptr 0x[0-9a-f]+ is not the start of a live symmetric allocation
align shmem_align: alignment 3 is not a power of two
hints shmem_malloc_with_hints: hints 0x100000
ptr_pe shmem_ptr: pe [0-9]+ is out of range
nelems shmem_long_get: nelems [0-9]+ of 8 bytes overflows
before_init shmem_long_p: called before
CASES
# Accesses that stay in the heap but run past the allocation they start in
# (or lie in a free range): -n 2 and 3, the target another PE, or itself.
bad_cases "past its allocation" "2 3" <<'CASES'
over_put shmem_putmem: dest 0x[0-9a-f]+ \+ 100 bytes runs 76 bytes past the end of its symmetric allocation \[0x[0-9a-f]+, 0x[0-9a-f]+\) of 1024 bytes
over_get shmem_getmem: source 0x[0-9a-f]+ \+ 100 bytes runs 76 bytes past the end of its symmetric allocation
over_nbi shmem_ctx_putmem_nbi: dest 0x[0-9a-f]+ \+ 8 bytes runs 4 bytes past the end of its symmetric allocation
over_iput shmem_long_iput: dest 0x[0-9a-f]+ \+ [0-9]+ bytes runs [0-9]+ bytes past the end of its symmetric allocation
over_iget shmem_long_iget: source 0x[0-9a-f]+ \+ 16 bytes runs 8 bytes past the end of its symmetric allocation
over_signal shmem_putmem_signal: dest 0x[0-9a-f]+ \+ 32 bytes runs 8 bytes past the end of its symmetric allocation
over_amo shmem_long_atomic_inc: dest 0x[0-9a-f]+ is not in a live symmetric allocation
over_sig_addr shmem_signal_wait_until: sig_addr 0x[0-9a-f]+ is not in a live symmetric allocation
over_native symrail_put: dst 0x[0-9a-f]+ \+ 100 bytes runs 76 bytes past the end of its symmetric allocation
CASES
# Team collectives that differ between PEs (another call, size or root on
# the last PE): the job ends naming both PEs and both calls, not by timeout.
# Over TCP a size that changes nothing but the bytes stalls nothing: the
# senders compare before they send with SYMRAIL_COLL_CHECK=1.
mm='collectives do not match on team 0x[0-9a-f]+ \(collective #[0-9]+ of the team\): PE [0-9]+ \(member [0-9]+\) called'
while read -r what msg; do
    for tl in shm tcp; do
        chk=0
        case $tl:$what in tcp:mm_size|tcp:mm_fcollect) chk=1 ;; esac
        for n in 2 3 4; do
            run_case "$tl: collectives that differ '$what' end the job (-n $n)" nonzero "$mm $msg" \
                env SYMRAIL_TRANSPORTS=$tl SYMRAIL_COLL_CHECK=$chk SYMRAIL_OP_TIMEOUT=30s \
                "$SYMRUN" -n "$n" --timeout 60 "$S/t_sh_bad" "$what"
        done
    done
done <<'CASES'
mm_kind shmem_[a-z_]+ \([^)]*\), PE [0-9]+ \(member [0-9]+\) called shmem_[a-z_]+
mm_size shmem_broadcastmem \(root 0, [0-9]+ bytes\), PE [0-9]+ \(member [0-9]+\) called shmem_broadcastmem \(root 0, [0-9]+ bytes\)
mm_root shmem_long_broadcast \(root [01], 32 bytes\), PE [0-9]+ \(member [0-9]+\) called shmem_long_broadcast \(root [01], 32 bytes\)
mm_fcollect shmem_long_fcollect \([0-9]+ bytes\), PE [0-9]+ \(member [0-9]+\) called shmem_long_fcollect
mm_sync shmem_[a-z_]+ \([^)]*\), PE [0-9]+ \(member [0-9]+\) called shmem_[a-z_]+
CASES
for n in 1 3; do
    run_case "bad input: a PE outside a team context's team ends the job (-n $n)" nonzero \
        "shmem_ctx_int_p: pe $n is not in the context's team \\(PEs 0\\.\\.$((n - 1))\\)" \
        env T_SH_BAD_TEAM_PE=1 "$SYMRUN" -n "$n" --timeout 60 "$S/t_sh_rma"
done
run_case "bad input: a context used after its team was destroyed ends the job" nonzero \
    "shmem_ctx_int_p: the context's team was destroyed \\(shmem_team_destroy\\) before the context" \
    env T_SH_BAD_TEAM_GONE=1 "$SYMRUN" -n 2 --timeout 60 "$S/t_sh_rma"

# OpenSHMEM's environment variables stand for symrail's.
run_case "SHMEM_VERSION prints the version" 0 '^symrail [0-9.]+ \(OpenSHMEM 1\.6\)' \
    env SHMEM_VERSION=1 "$SYMRUN" -n 2 --timeout 60 "$S/t_sh_rma"
run_case "SHMEM_INFO and SHMEM_SYMMETRIC_SIZE" 0 'SYMRAIL_HEAP_SIZE .*set to 48M' \
    env SHMEM_INFO=1 SHMEM_SYMMETRIC_SIZE=48M "$SYMRUN" -n 2 --timeout 60 "$S/t_sh_rma"
# 8K cannot hold the library's reserved part: the refusal names the size it got.
run_case "SHMEM_SYMMETRIC_SIZE sizes the heap" nonzero 'SYMRAIL_HEAP_SIZE=8192 leaves too little room' \
    env SHMEM_SYMMETRIC_SIZE=8K "$SYMRUN" -n 1 --timeout 60 "$S/t_sh_rma"
run_case "SYMRAIL_HEAP_SIZE wins over SHMEM_SYMMETRIC_SIZE" 0 'SYMRAIL_HEAP_SIZE .*set to 32M' \
    env SHMEM_INFO=1 SHMEM_SYMMETRIC_SIZE=48M SYMRAIL_HEAP_SIZE=32M "$SYMRUN" -n 1 --timeout 60 "$S/t_sh_rma"
run_case "SHMEM_DEBUG turns on debug messages" 0 ' debug: ' \
    env SHMEM_DEBUG=1 "$SYMRUN" -n 2 --timeout 60 "$S/t_sh_rma"
finish
