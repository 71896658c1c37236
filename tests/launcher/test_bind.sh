#!/bin/bash
#
# symrun's CPU binding, seen from the ranks: each rank reads its own
# Cpus_allowed_list from /proc/self/status.  Checks that --bind-to core
# gives every rank CPUs of its own among the launcher's (taskset ones too),
# that --bind-to none and oversubscribed jobs leave the ranks on the
# launcher's CPUs, that --bind-to wins over SYMRUN_BIND_TO, and that the
# library counts the CPUs of all PEs of the node together when it decides
# whether waits must yield.
#
# Environment: SYMRUN (default ./symrun), top_builddir (for examples/hello;
# default .).  Prints "PASS: name" or "FAIL: name: why" per check; exits 0
# only if all pass, 77 with the reason when it cannot run here.

if [ -z "${BASH_VERSION:-}" ]; then
    if command -v bash >/dev/null 2>&1; then
        exec bash "$0" "$@"
    fi
    echo "SKIP: bash is needed"
    exit 77
fi

set -u
export LC_ALL=C
# The suite runs with SYMRUN_BIND_TO=none; the default is what is tested.
unset SYMRUN_BIND_TO

SYMRUN=${SYMRUN:-./symrun}
HELLO=${top_builddir:-.}/examples/hello
if [ ! -x "$SYMRUN" ]; then
    echo "SKIP: symrun not built at '$SYMRUN' (PMIx missing?)"
    exit 77
fi
if [ ! -r /proc/self/status ] || ! grep -q '^Cpus_allowed_list:' /proc/self/status; then
    echo "SKIP: no Cpus_allowed_list in /proc/self/status"
    exit 77
fi
if ! command -v taskset >/dev/null 2>&1; then
    echo "SKIP: taskset (util-linux) is needed"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/symrun-bind.XXXXXX") || exit 99
NPASS=0
NFAIL=0
trap 'if [ "$NFAIL" -eq 0 ]; then rm -rf "$WORK"; else echo "# outputs kept in $WORK"; fi' EXIT

pass() { echo "PASS: $1"; NPASS=$((NPASS + 1)); }
fail() { echo "FAIL: $1: $2"; NFAIL=$((NFAIL + 1)); }

# A list such as "0-2,5" as one CPU a line.
expand() {
    local part a b
    local IFS=,
    for part in $1; do
        a=${part%-*} b=${part#*-}
        seq "$a" "$b"
    done
}

# The CPUs this shell may run on: what symrun started from here sees.
mine() { awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status; }

MINE=$(mine)
NCPU=$(expand "$MINE" | wc -l)
if [ "$NCPU" -lt 2 ]; then
    echo "SKIP: these checks need 2 CPUs to run on, this process has $NCPU ($MINE)"
    exit 77
fi
CPUS=($(expand "$MINE"))
FIRST=${CPUS[0]}
LAST=${CPUS[$((NCPU - 1))]}

# ranks NAME [PREFIX...] -- SYMRUN_ARGS...: runs symrun, each rank printing
# its CPU list; RC, and LIST[r] for each rank r.
ranks() {
    local name=$1 line r
    shift
    local pre=()
    while [ "$1" != -- ]; do pre+=("$1"); shift; done
    shift
    OUT=$WORK/$name.out ERR=$WORK/$name.err
    "${pre[@]}" "$SYMRUN" --prefix-output "$@" \
        awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    LIST=()
    while read -r line; do
        r=${line%%]*} r=${r#[}
        LIST[$r]=${line#*] }
    done <"$OUT"
}

# Every rank of n has CPUs among $2's, none shared with another rank.
check_bound() {
    local name=$1 n=$2 allowed=$3 r c why= seen=" "
    [ "$RC" -eq 0 ] || why="exit status $RC: $(head -c 300 "$ERR")"
    for ((r = 0; r < n; r++)); do
        [ -z "$why" ] || break
        [ -n "${LIST[$r]:-}" ] || { why="rank $r printed no CPU list"; break; }
        for c in $(expand "${LIST[$r]}"); do
            expand "$allowed" | grep -qx "$c" || why="rank $r on CPU $c, not in $allowed"
            case $seen in *" $c "*) why="CPU $c given to two ranks" ;; esac
            seen="$seen$c "
        done
    done
    if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why (ranks: ${LIST[*]:-})"; fi
}

# Every rank of n runs on exactly $3.
check_all() {
    local name=$1 n=$2 want=$3 r why=
    [ "$RC" -eq 0 ] || why="exit status $RC: $(head -c 300 "$ERR")"
    for ((r = 0; r < n; r++)); do
        [ -z "$why" ] || break
        [ "${LIST[$r]:-}" = "$want" ] || why="rank $r on '${LIST[$r]:-}', expected '$want'"
    done
    if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
}

check_quiet() {
    if [ -s "$ERR" ]; then fail "$1" "unexpected message: $(head -c 300 "$ERR")"; else pass "$1"; fi
}

ranks core_n2 -- --bind-to core -n 2
check_bound "core: 2 ranks, a CPU each among $MINE" 2 "$MINE"
check_quiet "core: 2 ranks, no warning"

ranks core_all -- --bind-to core -n "$NCPU"
check_bound "core: $NCPU ranks on $NCPU CPUs" "$NCPU" "$MINE"

ranks default -- -n 2
check_bound "default: 2 ranks bound" 2 "$MINE"

ranks none -- --bind-to none -n 2
check_all "none: ranks on the launcher's CPUs" 2 "$MINE"

ranks env_none env SYMRUN_BIND_TO=none -- -n 2
check_all "SYMRUN_BIND_TO=none" 2 "$MINE"

ranks env_overridden env SYMRUN_BIND_TO=none -- --bind-to core -n 2
check_bound "--bind-to core wins over SYMRUN_BIND_TO=none" 2 "$MINE"

ranks over -- -n $((NCPU + 1))
check_all "default, $((NCPU + 1)) ranks on $NCPU CPUs: not bound" $((NCPU + 1)) "$MINE"
check_quiet "default oversubscribed: no warning"

ranks over_core -- --bind-to core -n $((NCPU + 1))
check_all "core, oversubscribed: not bound" $((NCPU + 1)) "$MINE"
if grep -q 'warning: --bind-to core: .*not binding' "$ERR"; then
    pass "core, oversubscribed: warns"
else
    fail "core, oversubscribed: warns" "stderr: $(head -c 300 "$ERR")"
fi

# The launcher's own mask is respected: taskset narrows it.
ranks ts_one taskset -c "$LAST" -- -n 1
check_all "taskset -c $LAST, 1 rank: on $LAST" 1 "$LAST"

ranks ts_two taskset -c "$FIRST,$LAST" -- --bind-to core -n 2
check_bound "taskset -c $FIRST,$LAST, 2 ranks: one each" 2 "$FIRST,$LAST"
if [ "${LIST[0]:-}" != "${LIST[1]:-}" ] && [ -n "${LIST[0]:-}" ]; then
    pass "taskset -c $FIRST,$LAST: single CPUs apart"
else
    fail "taskset -c $FIRST,$LAST: single CPUs apart" "ranks: ${LIST[*]:-}"
fi

ranks ts_over taskset -c "$LAST" -- -n 2
check_all "taskset -c $LAST, 2 ranks: both on $LAST" 2 "$LAST"

# Bad values are refused before anything runs.
"$SYMRUN" --bind-to socket -n 1 true >"$WORK/bad.out" 2>"$WORK/bad.err"
RC=$?
if [ "$RC" -eq 2 ] && grep -q "invalid value 'socket'" "$WORK/bad.err"; then
    pass "--bind-to socket refused"
else
    fail "--bind-to socket refused" "exit status $RC: $(head -c 300 "$WORK/bad.err")"
fi
SYMRUN_BIND_TO=all "$SYMRUN" -n 1 true >"$WORK/bad.out" 2>"$WORK/bad.err"
RC=$?
if [ "$RC" -eq 2 ] && grep -q "SYMRUN_BIND_TO: invalid value 'all'" "$WORK/bad.err"; then
    pass "SYMRUN_BIND_TO=all refused"
else
    fail "SYMRUN_BIND_TO=all refused" "exit status $RC: $(head -c 300 "$WORK/bad.err")"
fi

# The library: bound a CPU each, two PEs do not share one (each sees only
# its own); two PEs on one CPU do.
lib_case() {
    local name=$1 want=$2
    shift 2
    "$@" >"$WORK/lib.out" 2>&1 </dev/null
    RC=$?
    if [ "$RC" -eq 0 ] && grep -qE "$want" "$WORK/lib.out"; then
        pass "$name"
    else
        fail "$name" "exit status $RC, no /$want/: $(grep -m2 'PEs on this node' "$WORK/lib.out")"
    fi
}
if [ -x "$HELLO" ]; then
    lib_case "library, bound: 2 PEs on 2 CPUs poll" "PEs on this node: 2, CPUs they may run on: 2; waits poll" \
        env SYMRAIL_LOG=info taskset -c "$FIRST,$LAST" "$SYMRUN" --bind-to core -n 2 "$HELLO"
    lib_case "library, unbound: 2 PEs on 2 CPUs poll" "PEs on this node: 2, CPUs they may run on: 2; waits poll" \
        env SYMRAIL_LOG=info taskset -c "$FIRST,$LAST" "$SYMRUN" --bind-to none -n 2 "$HELLO"
    lib_case "library: 2 PEs on 1 CPU yield" "PEs on this node: 2, CPUs they may run on: 1; waits yield" \
        env SYMRAIL_LOG=info taskset -c "$LAST" "$SYMRUN" -n 2 "$HELLO"
else
    echo "# examples/hello not built: library checks left out"
fi

echo "# $NPASS passed, $NFAIL failed"
[ "$NFAIL" -eq 0 ]
