# A Slurm cluster of the two Soft-RoCE guests of run-two-vms.sh, sourced by
# the two-guest suite in both guests: slurmctld and slurmd "ga" in guest a,
# slurmd "gb" in guest b, talking over rail 0 (TG_A, TG_B).  auth/none:
# the guests are a closed wire, and a munged per guest would need one key
# in both and costs a daemon more per guest under emulation.  State, spool
# and TmpFS are below the guest's private /tmp; the logs go to TG_DIR, which
# both guests and the host see, so that guest a can show b's on failure.
: "${TG_ROLE:?run inside run-two-vms.sh}" "${TG_DIR:?}" "${top_srcdir:?}" "${TG_A:?}" "${TG_B:?}"
SLURM_SBIN=${SLURM_SBIN:-/usr/sbin}
TG_BED=/tmp/tg-slurm
SLURM_CONF=$TG_BED/slurm.conf
export SLURM_CONF
. "$top_srcdir/tests/slurm/slurm_conf.sh"

tg_log() {
    echo "two-guest bed ($TG_ROLE): $*" >&2
}

# The same file in both guests: nothing in it depends on the guest.
tg_conf() {
    {
        cat <<EOF
ClusterName=symrailtg
SlurmctldHost=ga($TG_A)
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/none
CredType=cred/none
MessageTimeout=30
SlurmctldLogFile=$TG_DIR/slurmctld.log
SlurmdLogFile=$TG_DIR/slurmd.%n.log
NodeName=ga NodeAddr=$TG_A NodeHostname=ga CPUs=4
NodeName=gb NodeAddr=$TG_B NodeHostname=gb CPUs=4
PartitionName=tg Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
        slurm_conf_base "$TG_BED"
    } >"$SLURM_CONF"
}

# tg_bed_start: this guest's daemons.  The guest powers off when the suite
# ends, which ends them.
tg_bed_start() {
    for t in slurmctld slurmd; do
        [ -x "$SLURM_SBIN/$t" ] || { echo "SKIP: $SLURM_SBIN/$t not found (apt-get install slurm-wlm)"; exit 77; }
    done
    command -v srun >/dev/null || { echo "SKIP: srun not found (apt-get install slurm-wlm)"; exit 77; }
    node=g$TG_ROLE
    mkdir -p "$TG_BED/state" "$TG_BED/run" "$TG_BED/spool/$node" "$TG_BED/tmp/$node" || return 1
    # slurmd 22.05 will not start without a cgroup filesystem, whatever its
    # plugins; on a cgroup2 root it wants systemd's dbus.  A v1 layout (a
    # tmpfs with controllers below) needs neither.
    if ! mountpoint -q /sys/fs/cgroup; then
        mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup || { tg_log "cannot mount /sys/fs/cgroup"; return 1; }
        for c in freezer cpuset memory devices; do
            mkdir -p "/sys/fs/cgroup/$c" && mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c" ||
                { tg_log "cannot mount the cgroup v1 controller $c"; return 1; }
        done
        mkdir -p /sys/fs/cgroup/systemd &&
            mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd ||
            { tg_log "cannot mount the cgroup v1 hierarchy name=systemd"; return 1; }
    fi
    tg_conf || return 1
    if [ "$TG_ROLE" = a ]; then
        "$SLURM_SBIN/slurmctld" -D -i -f "$SLURM_CONF" </dev/null >"$TG_DIR/slurmctld.out" 2>&1 &
        tg_ctld=$!
    fi
    "$SLURM_SBIN/slurmd" -D -N "$node" -f "$SLURM_CONF" </dev/null >"$TG_DIR/slurmd.$node.out" 2>&1 &
    tg_slurmd=$!
}

tg_bed_logs() {
    for f in "$TG_DIR"/slurmctld.log "$TG_DIR"/slurmctld.out "$TG_DIR"/slurmd.*; do
        [ -s "$f" ] || continue
        echo "    --- ${f##*/}"
        tail -n 8 "$f" | sed 's/^/    | /'
    done
}

# tg_bed_wait: until both nodes are idle (a only).
tg_bed_wait() {
    i=0
    while :; do
        idle=$(timeout 20 sinfo -h -N -o '%t' 2>/dev/null | grep -c '^idle' || true)
        [ "$idle" -ge 2 ] && return 0
        i=$((i + 1))
        if [ $i -gt 120 ] || ! kill -0 "$tg_ctld" 2>/dev/null || ! kill -0 "$tg_slurmd" 2>/dev/null; then
            tg_log "only $idle of 2 nodes became idle:"
            sinfo -N 2>&1 | sed 's/^/    /' >&2
            tg_bed_logs >&2
            return 1
        fi
        sleep 0.5
    done
}

# One step across the guests: $TG_SRUN SRUN-ARGS... (also under env).
TG_SRUN=$top_srcdir/tests/rxe/tg_srun.sh
tg_srun() {
    "$TG_SRUN" "$@"
}
