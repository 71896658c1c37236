#!/bin/sh
# A private Slurm cluster on this machine, for `make check-slurm`: its own
# munged (own key and socket), a slurmctld and one slurmd per host, with a
# slurm.conf generated in a temporary directory on free ports.  Nothing of
# the machine's own Slurm or munge setup is read or touched.
#
#   HOSTS=1: one node, tb1, on 127.0.0.1.
#   HOSTS=2: two namespace-hosts h1 and h2 on a bridge (tests/multihost/
#            netns.sh), each slurmd in its host's network and UTS namespace.
#
# Sourced by the check-slurm drivers (they call slurm_bed_start and, from
# their EXIT trap, slurm_bed_stop), or run by hand:
#   sh tests/slurm/cluster.sh start 1|2     prints the directory and SLURM_CONF
#   sh tests/slurm/cluster.sh stop DIR
# Every daemon and srun the bed starts carries SR_SLURM_BED=DIR in its
# environment, and so do the tasks under them; a slurmstepd (which outlives
# its slurmd) keeps DIR's slurmd log open.  Stopping ends the daemons by
# their recorded PIDs, then kills whatever still has the mark or a file of
# DIR open, removes the namespaces and DIR.  A start that fails, or skips,
# undoes what it did.

SLURM_SBIN=${SLURM_SBIN:-/usr/sbin}
BED=
BED_HOSTS=

bed_log() {
    echo "slurm bed: $*" >&2
}

# bed_skip REASON: the caller's skip (exit 77 with the reason) if it has one.
bed_skip() {
    if command -v skip >/dev/null 2>&1; then
        skip "$@"
    fi
    echo "SKIP: $*"
    exit 77
}

# A TCP port nobody listens on in the initial namespace.
bed_free_port() {
    used=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
    while :; do
        p=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 30000 ))
        echo "$used" | grep -qx "$p" || { echo "$p"; return; }
    done
}

# PIDs of the bed's processes: those with its mark in their environment,
# and those with a file of its directory open.  (slurmstepd writes its
# title over its environment, but keeps the slurmd log open.)
bed_marked() {
    dir=${1:-$BED}
    [ -n "$dir" ] || return 0
    {
        grep -lzxF "SR_SLURM_BED=$dir" /proc/[0-9]*/environ 2>/dev/null
        find /proc/[0-9]*/fd -maxdepth 1 -lname "$dir/*" 2>/dev/null
    } | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | sort -u | grep -vx "$$"
}

# Runs "$@" with this bed's mark and configuration.  (Not for daemons: a
# function run in the background is a subshell, and $! its pid.)
bed_env() {
    env SR_SLURM_BED="$BED" SLURM_CONF="$BED/slurm.conf" "$@"
}

bed_check_tools() {
    [ "$(id -u)" = 0 ] || bed_skip "the Slurm bed runs its daemons as root (SlurmUser=root)"
    for t in slurmctld slurmd munged mungekey; do
        [ -x "$SLURM_SBIN/$t" ] ||
            bed_skip "$SLURM_SBIN/$t not found (apt-get install slurm-wlm munge)"
    done
    for t in srun sinfo setpriv unshare nsenter ss od; do
        command -v $t >/dev/null 2>&1 ||
            bed_skip "$t not found (apt-get install slurm-wlm util-linux iproute2)"
    done
    id munge >/dev/null 2>&1 || bed_skip "no user munge (apt-get install munge)"
}

# bed_conf CTLADDR NODELINES...: writes slurm.conf.
bed_conf() {
    ctl=$1
    shift
    ctlport=$(bed_free_port)
    dport=$ctlport
    while [ "$dport" = "$ctlport" ]; do dport=$(bed_free_port); done
    command -v slurm_conf_base >/dev/null 2>&1 || . "${top_srcdir:-.}/tests/slurm/slurm_conf.sh"
    {
        cat <<EOF
ClusterName=symrailbed
SlurmctldHost=tbctl($ctl)
SlurmctldPort=$ctlport
SlurmdPort=$dport
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$BED/munge/munge.socket.2
SlurmctldLogFile=$BED/log/slurmctld.log
SlurmdLogFile=$BED/log/slurmd.%n.log
EOF
        slurm_conf_base "$BED"
    } >"$BED/slurm.conf" || return 1
    for l in "$@"; do
        echo "$l" >>"$BED/slurm.conf"
    done
    echo "PartitionName=bed Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$BED/slurm.conf"
}

bed_start_munge() {
    # munged wants its key in a directory only it can enter, and the socket
    # in one everybody can search.
    mkdir -p "$BED/munge" "$BED/mungekey"
    chown munge:munge "$BED/munge" "$BED/mungekey"
    chmod 0755 "$BED/munge"
    chmod 0700 "$BED/mungekey"
    setpriv --reuid=munge --regid=munge --clear-groups \
        mungekey --create --keyfile="$BED/mungekey/munge.key" >"$BED/log/mungekey.log" 2>&1 ||
        { bed_log "mungekey failed: $(cat "$BED/log/mungekey.log")"; return 1; }
    env SR_SLURM_BED="$BED" setpriv --reuid=munge --regid=munge --clear-groups \
        "$SLURM_SBIN/munged" -F --socket="$BED/munge/munge.socket.2" \
        --key-file="$BED/mungekey/munge.key" --pid-file="$BED/munge/munged.pid" \
        --log-file="$BED/munge/munged.log" --seed-file="$BED/munge/munged.seed" \
        </dev/null >"$BED/log/munged.out" 2>&1 &
    echo "munged $!" >>"$BED/pids"
    i=0
    until [ -S "$BED/munge/munge.socket.2" ]; do
        i=$((i + 1))
        if [ $i -gt 100 ] || ! kill -0 $! 2>/dev/null; then
            bed_log "munged did not start: $(cat "$BED/log/munged.out" "$BED/munge/munged.log" 2>/dev/null | tail -n 5)"
            return 1
        fi
        sleep 0.1
    done
}

# bed_start_slurmd NODE [NETNS]
bed_start_slurmd() {
    mkdir -p "$BED/spool/$1" "$BED/tmp/$1"
    if [ -n "${2:-}" ]; then
        # Not `ip netns exec`: it remounts /sys, and slurmd then finds no
        # /sys/fs/cgroup and exits.
        env SR_SLURM_BED="$BED" nsenter --net="/run/netns/$2" unshare --uts \
            sh -c "hostname $1 && exec $SLURM_SBIN/slurmd -D -N $1 -f $BED/slurm.conf" \
            </dev/null >"$BED/log/slurmd.$1.out" 2>&1 &
    else
        env SR_SLURM_BED="$BED" "$SLURM_SBIN/slurmd" -D -N "$1" -f "$BED/slurm.conf" \
            </dev/null >"$BED/log/slurmd.$1.out" 2>&1 &
    fi
    echo "slurmd.$1 $!" >>"$BED/pids"
}

# bed_wait_idle N: until N nodes are idle (they register in about 0.5 s).
bed_wait_idle() {
    i=0
    while :; do
        idle=$(bed_env timeout 10 sinfo -h -N -o '%t' 2>/dev/null | grep -c '^idle' || true)
        [ "$idle" -ge "$1" ] && return 0
        i=$((i + 1))
        if [ $i -gt 150 ]; then
            bed_log "only $idle of $1 nodes became idle in 30 s:"
            bed_env sinfo -N 2>&1 | sed 's/^/    /' >&2
            tail -n 5 "$BED"/log/*.log "$BED"/log/*.out 2>/dev/null | sed 's/^/    /' >&2
            return 1
        fi
        while read -r what pid; do
            kill -0 "$pid" 2>/dev/null && continue
            bed_log "$what (pid $pid) exited: $(tail -n 5 "$BED/log/$what.out" "$BED/log/$what.log" 2>/dev/null)"
            # slurmd 22.05 will not run without a cgroup filesystem, whatever
            # its plugins.
            if grep -qs 'No filesystem mounted on /sys/fs/cgroup' "$BED/log/$what.out" "$BED/log/$what.log"; then
                slurm_bed_stop
                bed_skip "slurmd needs /sys/fs/cgroup, and none is mounted here"
            fi
            return 1
        done <"$BED/pids"
        sleep 0.2
    done
}

# bed_srun SRUN-ARGS...: one step in the bed, bounded: srun ends the
# others when a task fails, 30 s after the first task exits at the latest.
bed_srun() {
    bed_env timeout 180 srun --mpi=pmix --kill-on-bad-exit=1 --wait=30 "$@"
}

# bed_gone: after slurm_bed_stop, the reasons (if any) that something the
# bed started is still there.  Needs the BED and pids slurm_bed_stop saw.
bed_gone() {
    for p in $BED_PIDS; do
        kill -0 "$p" 2>/dev/null && echo "pid $p ($(cat "/proc/$p/comm" 2>/dev/null)) is still running"
    done
    for p in $(bed_marked "$BED_LAST"); do
        echo "pid $p ($(cat "/proc/$p/comm" 2>/dev/null)) of the bed is still running"
    done
    [ -e "$BED_LAST" ] && echo "$BED_LAST is still there"
    for n in $BED_NETNS; do
        [ -e "/run/netns/$n" ] && echo "network namespace $n is still there"
    done
    for n in $BED_LINKS; do
        ip link show "$n" >/dev/null 2>&1 && echo "link $n is still there"
    done
    return 0
}

# slurm_bed_start HOSTS: starts the bed; sets BED and exports SLURM_CONF.
# Returns non-zero (having undone everything) when a daemon fails; calls
# bed_skip where the bed cannot be had here.
slurm_bed_start() {
    BED_HOSTS=$1
    bed_check_tools
    BED=$(mktemp -d "${TMPDIR:-/tmp}/symrail-slurm.XXXXXX") || return 1
    chmod 0755 "$BED"
    mkdir -p "$BED/log" "$BED/state" "$BED/run"
    : >"$BED/pids"
    if [ "$BED_HOSTS" = 2 ]; then
        # Sourced here so that the namespace names are this process's.
        SR_MH_NET=${SR_SLURM_NET:-10.98.0}
        . "${top_srcdir:-.}/tests/multihost/netns.sh"
        echo "$NS_H1 $NS_H2 $NS_BR" >"$BED/netns"
        netns_setup "$BED/log/netns.err" || { bed_log "setting up the namespace hosts failed"; slurm_bed_stop; return 1; }
        bed_conf "$NET.254" \
            "NodeName=h1 NodeAddr=$NET.1 NodeHostname=h1 CPUs=2" \
            "NodeName=h2 NodeAddr=$NET.2 NodeHostname=h2 CPUs=2"
    else
        bed_conf 127.0.0.1 "NodeName=tb1 NodeAddr=127.0.0.1 CPUs=4"
    fi
    bed_start_munge || { slurm_bed_stop; return 1; }
    # The controller gets its own host name, so that the configuration does
    # not depend on this machine's.
    env SR_SLURM_BED="$BED" unshare --uts sh -c "hostname tbctl && exec $SLURM_SBIN/slurmctld -D -i -f $BED/slurm.conf" \
        </dev/null >"$BED/log/slurmctld.out" 2>&1 &
    echo "slurmctld $!" >>"$BED/pids"
    if [ "$BED_HOSTS" = 2 ]; then
        bed_start_slurmd h1 "$NS_H1"
        bed_start_slurmd h2 "$NS_H2"
    else
        bed_start_slurmd tb1
    fi
    bed_wait_idle "$BED_HOSTS" || { slurm_bed_stop; return 1; }
    # srun lists its plugins only with a configuration to read.
    if ! bed_env timeout 20 srun --mpi=list 2>&1 | grep -q pmix; then
        slurm_bed_stop
        bed_skip "this srun has no PMIx plugin (mpi_pmix)"
    fi
    SLURM_CONF=$BED/slurm.conf
    export SLURM_CONF
}

# slurm_bed_stop [DIR]: stops everything the bed started, whatever state it
# is in, and removes its directory.
slurm_bed_stop() {
    [ -n "${1:-}" ] && BED=$1
    [ -n "$BED" ] && [ -d "$BED" ] || return 0
    BED_LAST=$BED
    BED_PIDS=
    BED_NETNS=
    BED_LINKS=
    if [ -f "$BED/pids" ]; then
        # Daemons first (slurmd ends its steps' processes on SIGTERM), then
        # whatever still has the mark.
        pids=$(awk '{ print $2 }' "$BED/pids")
        BED_PIDS=$pids
        kill $pids 2>/dev/null
        i=0
        while [ $i -lt 50 ]; do
            alive=
            for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
            [ -z "$alive" ] && break
            sleep 0.1
            i=$((i + 1))
        done
    fi
    left=$(bed_marked)
    [ -n "$left" ] && kill -9 $left 2>/dev/null
    # Reap our own children among them, so that none stays a zombie; a bare
    # wait would also wait for the driver's other children (a hung case).
    for p in ${pids:-} $left; do wait "$p" 2>/dev/null; done
    if [ -f "$BED/netns" ]; then
        read -r NS_H1 NS_H2 NS_BR <"$BED/netns"
        command -v netns_cleanup >/dev/null 2>&1 || . "${top_srcdir:-.}/tests/multihost/netns.sh"
        read -r NS_H1 NS_H2 NS_BR <"$BED/netns"
        BED_NETNS="$NS_H1 $NS_H2"
        BED_LINKS="${NS_H1}v ${NS_H2}v $NS_BR"
        netns_cleanup
    fi
    rm -rf "$BED"
    BED=
}

case ${0##*/} in
cluster.sh)
    top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
    case ${1:-} in
    start)
        skip() {
            echo "SKIP: $*"
            exit 77
        }
        # Undone if the start fails or skips; once up, the bed lives on
        # until `stop`.
        trap 'slurm_bed_stop' EXIT
        slurm_bed_start "${2:-1}" || exit 1
        trap - EXIT
        echo "BED=$BED"
        echo "SLURM_CONF=$SLURM_CONF"
        echo "stop with: sh $0 stop $BED"
        ;;
    stop)
        [ -n "${2:-}" ] || { echo "usage: $0 stop DIR" >&2; exit 2; }
        slurm_bed_stop "$2" ;;
    *)
        echo "usage: $0 start [1|2] | stop DIR" >&2
        exit 2 ;;
    esac ;;
esac
