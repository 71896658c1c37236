# Guest half of run-in-vm.sh.  run-in-vm.sh appends this file to a generated
# header that defines RXE_CTL, RXE_DEVICES, RXE_CWD, RXE_PATH, RXE_HOME and
# the functions rxe_env (the --env exports) and rxe_cmd (the command), and the
# guest's /init runs the result with the host's /bin/sh, chrooted into the
# host's root filesystem (9p).  Mounts made here exist only in the guest.
#
# The status file is opened first: once tmpfs covers /tmp the host temp
# directory may no longer be reachable by name, the open descriptor still is.
# It ends up holding the command's exit status, or "setup: <reason>".
exec 8>"$RXE_CTL/status"

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
unset symrail_ctl

# Output goes to the second serial port, which the host prints; the first one
# carries the kernel console into a log file.  Raw mode: no \n -> \r\n.
if stty -F /dev/ttyS1 raw -echo 2>/dev/null; then
    exec >/dev/ttyS1 2>&1
fi
exec </dev/null

setup_fail() {
    echo "run-in-vm (guest): $*" >&2
    echo "setup: $*" >&8
    exit 1
}

# ---- the usual small mounts a system manager would make ---------------------
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm || setup_fail "cannot mount /dev/shm"
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts 2>/dev/null
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr

# Private /tmp and /run.  Keep the host's versions reachable under /dev/.host so
# that a working directory below /tmp or /run can be bound back into place.
mkdir -p /dev/.host/tmp /dev/.host/run
mount --bind /tmp /dev/.host/tmp && mount --bind /run /dev/.host/run ||
    setup_fail "cannot bind the host /tmp and /run"
mount -t tmpfs -o mode=1777 tmpfs /tmp || setup_fail "cannot mount tmpfs on /tmp"
mount -t tmpfs -o mode=755 tmpfs /run || setup_fail "cannot mount tmpfs on /run"
case $RXE_CWD in
    /tmp | /tmp/* | /run | /run/*)
        top=${RXE_CWD#/}; top=/${top%%/*}; rest=${RXE_CWD#"$top"}
        mkdir -p "$RXE_CWD" && mount --bind "/dev/.host$top$rest" "$RXE_CWD" ||
            setup_fail "cannot make $RXE_CWD visible"
        ;;
esac

hostname symrail-rxe 2>/dev/null || echo symrail-rxe > /proc/sys/kernel/hostname
ip link set lo up || setup_fail "cannot bring lo up"

# ---- Soft-RoCE: rxeI on veth vrxeIa (10.77.I.1/24), peer vrxeIb -------------
if [ "$RXE_DEVICES" -gt 0 ]; then
    modprobe -a rdma_rxe veth || setup_fail "modprobe rdma_rxe veth failed"
    i=0
    while [ "$i" -lt "$RXE_DEVICES" ]; do
        ip link add "vrxe${i}a" type veth peer name "vrxe${i}b" &&
            ip addr add "10.77.$i.1/24" dev "vrxe${i}a" &&
            ip link set "vrxe${i}a" up && ip link set "vrxe${i}b" up &&
            rdma link add "rxe$i" type rxe netdev "vrxe${i}a" ||
            setup_fail "cannot create rxe$i on vrxe${i}a"
        i=$((i + 1))
    done
    # Wait (briefly) until every port is ACTIVE and has its IPv4 GID (index 1).
    tries=0
    while :; do
        ready=1 i=0
        while [ "$i" -lt "$RXE_DEVICES" ]; do
            p=/sys/class/infiniband/rxe$i/ports/1
            case $(cat "$p/state" 2>/dev/null) in *ACTIVE*) ;; *) ready=0 ;; esac
            case $(cat "$p/gids/1" 2>/dev/null) in *ffff:0a4d:*) ;; *) ready=0 ;; esac
            i=$((i + 1))
        done
        [ "$ready" = 1 ] && break
        tries=$((tries + 1))
        [ "$tries" -lt 200 ] || setup_fail "rxe ports did not become ACTIVE with an IPv4 GID"
        sleep 0.05
    done
fi

ulimit -l unlimited || setup_fail "cannot lift the locked-memory limit"

# ---- the command ------------------------------------------------------------
cd "$RXE_CWD" || setup_fail "cannot enter $RXE_CWD"
PATH=$RXE_PATH
HOME=$RXE_HOME
export PATH HOME
rxe_env
(rxe_cmd)
rc=$?
echo "$rc" >&8
exec 8>&-
# Let the serial port drain before the machine powers off (tcsetattr with
# TCSADRAIN waits for queued output).
stty -F /dev/ttyS1 raw 2>/dev/null
exit "$rc"
