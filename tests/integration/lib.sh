# Shared by the integration drivers: run one case, check its exit status and
# output, and count results.  Each case prints "PASS: name" or "FAIL: name: why".
: "${top_builddir:?top_builddir must be set (run through make check)}"
SYMRUN=${SYMRUN:-$top_builddir/symrun}
# Jobs of a parallel `make check` run side by side: bound, each would put
# its rank 0 on the first CPU.  Binding has its own test
# (tests/launcher/test_bind.sh); a caller's explicit value is kept.
SYMRUN_BIND_TO=${SYMRUN_BIND_TO-none}
export SYMRUN_BIND_TO
T=$top_builddir/tests/integration
npass=0
nfail=0
outdir=$(mktemp -d "${TMPDIR:-/tmp}/symrail-test.XXXXXX")
trap 'rm -rf "$outdir"' EXIT

# Shared-memory objects of the job that symrun (pid $1) ran: symrun names
# its jobs symrun-<pid>, and `env VAR=x symrun` keeps the pid.
shm_left() {
    ls /dev/shm 2>/dev/null | grep -c "^symrail-symrun-$1-" || true
}

# T_CASES=REGEX runs only the cases whose names match (extended regex), to
# look at one again; a count_case after a case left out is left out too.
t_left_out() {
    [ -n "${T_CASES:-}" ] && ! printf '%s\n' "$1" | grep -Eq -- "$T_CASES"
}

# run_case NAME WANT_RC GREP_PATTERN_OR_EMPTY CMD...
run_case() {
    name=$1 want=$2 pattern=$3
    shift 3
    t_skipped=0
    if t_left_out "$name"; then
        t_skipped=1
        return 0
    fi
    "$@" >"$outdir/out" 2>&1 &
    pid=$!
    wait $pid
    rc=$?
    left=$(shm_left $pid)
    why=
    if [ "$want" = nonzero ]; then
        [ "$rc" -ne 0 ] || why="exit status 0, expected failure"
    elif [ "$rc" -ne "$want" ]; then
        why="exit status $rc, expected $want"
    fi
    if [ -z "$why" ] && [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$outdir/out"; then
        why="output lacks /$pattern/"
    fi
    if [ -z "$why" ] && [ "$left" -gt 0 ]; then
        why="left $left shared-memory objects in /dev/shm"
    fi
    if [ -z "$why" ]; then
        echo "PASS: $name"
        npass=$((npass + 1))
    else
        echo "FAIL: $name: $why"
        sed 's/^/    | /' "$outdir/out" | tail -n 30
        nfail=$((nfail + 1))
    fi
}

# count_case NAME N PATTERN: the output of the last case has N lines that
# match PATTERN.
count_case() {
    [ "${t_skipped:-0}" = 0 ] || return 0
    got=$(grep -Ec -- "$3" "$outdir/out" || true)
    if [ "$got" -eq "$2" ]; then
        echo "PASS: $1"
        npass=$((npass + 1))
    else
        echo "FAIL: $1: $got lines match /$3/, expected $2"
        nfail=$((nfail + 1))
    fi
}

finish() {
    echo "$npass passed, $nfail failed"
    [ "$nfail" -eq 0 ]
}
