# shellcheck shell=sh disable=SC2154 # outdir, T, npass, nfail: lib.sh
# Sourced after lib.sh: a process of another job, under the same launcher on
# the same host, against a running job's TCP transport (no SYMRAIL_JOB_SECRET).
#
# other_job LABEL "VICTIM LAUNCH WORDS" "ATTACKER LAUNCH WORDS": the victim
# job (2 PEs, t_tcp_rogue victim, over TCP) writes PE 0's address to a file;
# a second job (1 PE) reads it and tries to connect with the key the victim
# would have derived without the launcher's job key, and with its own job's
# key.  The victim must refuse both, log each, and finish with its data and
# guard region intact; each victim PE must say its key came through PMIx.
other_job() {
    label=$1 vlaunch=$2 alaunch=$3
    odir=$outdir/other-job
    rm -rf "$odir"
    mkdir -p "$odir"
    # A subshell, not env: a launch word may be a shell function (bed_srun).
    # shellcheck disable=SC2086 # the launch words are split on purpose
    (unset SYMRAIL_JOB_SECRET
     export SYMRAIL_TRANSPORTS=tcp SYMRAIL_LOG=info SYMRAIL_TCP_ADDR_FILE="$odir/addr" \
         T_ROGUE_DIR="$odir"
     $vlaunch "$T/t_tcp_rogue" victim) >"$odir/victim.out" 2>&1 &
    ovpid=$!
    i=0
    while [ ! -f "$odir/ready" ] && [ $i -lt 600 ] && kill -0 $ovpid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    arc=none
    if [ -f "$odir/ready" ] && [ -f "$odir/addr.0" ]; then
        # shellcheck disable=SC2086
        (unset SYMRAIL_JOB_SECRET SYMRAIL_TCP_ADDR_FILE
         export SYMRAIL_TRANSPORTS=tcp
         $alaunch "$T/t_tcp_rogue" otherjob "$(head -n 1 "$odir/addr.0")" \
             "$(cat "$odir/job")" "$(cat "$odir/launcher_key")") >"$odir/attack.out" 2>&1
        arc=$?
    fi
    touch "$odir/stop"
    wait $ovpid
    vrc=$?
    why=
    [ -f "$odir/ready" ] || why="the victim job never got ready"
    [ -z "$why" ] && [ "$vrc" -ne 0 ] && why="the victim job exited with status $vrc"
    [ -z "$why" ] && ! grep -q '^ok: the victim kept working and its guard region is intact' \
        "$odir/victim.out" && why="the victim did not report an intact guard region"
    other_job_result "$label: the victim job runs on, data and guard intact" "$why"
    got=$(grep -c 'info: tcp: job key random, drawn by PE 0 and handed out by the launcher' \
        "$odir/victim.out" || true)
    why=
    [ "$got" -eq 2 ] || why="$got of 2 PEs say their key came through PMIx"
    grep -q 'SYMRAIL_JOB_SECRET is not set' "$odir/victim.out" &&
        why="${why:+$why; }a PE still warns of a derived key"
    other_job_result "$label: every PE's TCP key came through PMIx, no warning" "$why"
    why=
    if [ "$arc" != 0 ]; then
        why="the other job got status $arc: $(tail -n 3 "$odir/attack.out" 2>/dev/null)"
    elif ! grep -q '^ok: a process of another job was refused with both keys' \
        "$odir/attack.out"; then
        why="the other job did not report both refusals"
    fi
    other_job_result "$label: another job's process is refused with the derived key and its own" \
        "$why"
    got=$(grep -Ec 'connection from [0-9.:]+ \(claims PE 1\) failed authentication: wrong job key' \
        "$odir/victim.out" || true)
    why=
    [ "$got" -eq 2 ] || why="the victim logged $got refusals, expected 2"
    other_job_result "$label: the victim logs each refusal" "$why"
}

other_job_result() {
    if [ -z "$2" ]; then
        echo "PASS: $1"
        npass=$((npass + 1))
    else
        echo "FAIL: $1: $2"
        sed 's/^/    | victim: /' "$odir/victim.out" | tail -n 20
        sed 's/^/    | other job: /' "$odir/attack.out" 2>/dev/null | tail -n 10
        nfail=$((nfail + 1))
    fi
}
