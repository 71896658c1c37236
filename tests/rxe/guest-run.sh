# Guest half of run-in-vm.sh.  run-in-vm.sh appends this file to a generated
# header that defines RXE_CTL, RXE_DEVICES, RXE_NICS, RXE_HOSTNAME, RXE_CWD,
# RXE_PATH, RXE_HOME and the functions rxe_env (the --env exports) and
# rxe_cmd (the command); the guest's
# /init (guest-init) has already mounted things and inserted the modules, and
# runs the result with the host's /bin/sh, chrooted into the host's root.
# Mounts and links made here exist only in the guest.  Every program started
# costs a 9p round trip or several, so this keeps their number small.
#
# The status file ends up holding the command's exit status, or
# "setup: <reason>" when the guest could not get that far.
exec 8>"$RXE_CTL/status"

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
unset symrail_ctl symrail_rxe symrail_9p

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

# A working directory (or shared one) below /tmp or /run: bind the host's one
# over the tmpfs.
share() {
    case $1 in
        /tmp | /tmp/* | /run | /run/*)
            mountpoint -q "$1" 2>/dev/null && return 0
            mkdir -p "$1" && mount --bind "/dev/.host$1" "$1" ||
                setup_fail "cannot make $1 visible in the guest"
            ;;
    esac
}
old_ifs=$IFS
IFS=:
for d in $RXE_SHARE; do
    IFS=$old_ifs
    [ -n "$d" ] && share "$d"
done
IFS=$old_ifs
share "$RXE_CWD"

# ---- network and Soft-RoCE ---------------------------------------------------
# rxeI on veth vrxeIa (10.77.I.1/24, peer vrxeIb), I < RXE_DEVICES; then one
# rxe device on each virtio NIC ethJ (its address the Jth of RXE_NICS),
# numbered on from RXE_DEVICES.
[ "$RXE_HOSTNAME" = symrail-rxe ] || echo "$RXE_HOSTNAME" > /proc/sys/kernel/hostname
if [ -n "$RXE_NICS" ]; then
    modprobe virtio_net || setup_fail "cannot load virtio_net"
fi
{
    echo "link set lo up"
    i=0
    while [ "$i" -lt "$RXE_DEVICES" ]; do
        echo "link add vrxe${i}a type veth peer name vrxe${i}b"
        echo "addr add 10.77.$i.1/24 dev vrxe${i}a"
        echo "link set vrxe${i}a up"
        echo "link set vrxe${i}b up"
        i=$((i + 1))
    done
    j=0
    for a in $RXE_NICS; do
        echo "addr add $a dev eth$j"
        echo "link set eth$j up"
        j=$((j + 1))
    done
} | ip -batch - || setup_fail "cannot set up lo, the veth pairs and the NICs"
i=0 ndev=$RXE_DEVICES
while [ "$i" -lt "$RXE_DEVICES" ]; do
    rdma link add "rxe$i" type rxe netdev "vrxe${i}a" ||
        setup_fail "rdma link add rxe$i on vrxe${i}a failed"
    i=$((i + 1))
done
j=0
for a in $RXE_NICS; do
    rdma link add "rxe$i" type rxe netdev "eth$j" ||
        setup_fail "rdma link add rxe$i on eth$j failed"
    i=$((i + 1)) j=$((j + 1)) ndev=$((ndev + 1))
done
# Wait (briefly) until every port is ACTIVE and its GID index 1 is the
# IPv4-mapped address ::ffff:A.B.C.D (index 0 is the MAC-based link-local).
tries=0
while [ "$ndev" -gt 0 ]; do
    ready=1 i=0
    while [ "$i" -lt "$ndev" ]; do
        p=/sys/class/infiniband/rxe$i/ports/1
        st='' gid=''
        read -r st < "$p/state" 2>/dev/null
        read -r gid < "$p/gids/1" 2>/dev/null
        case $st in *ACTIVE*) ;; *) ready=0 ;; esac
        case $gid in 0000:0000:0000:0000:0000:ffff:*) ;; *) ready=0 ;; esac
        i=$((i + 1))
    done
    [ "$ready" = 1 ] && break
    tries=$((tries + 1))
    [ "$tries" -lt 200 ] || setup_fail "rxe ports not ACTIVE with an IPv4 GID after 10 s"
    sleep 0.05
done

# shellcheck disable=SC3045 # dash and bash have ulimit -l
ulimit -l unlimited || setup_fail "cannot lift the locked-memory limit"

# ---- the command ------------------------------------------------------------
cd "$RXE_CWD" || setup_fail "cannot enter $RXE_CWD"
PATH=$RXE_PATH
HOME=$RXE_HOME
export PATH HOME
rxe_env
(rxe_cmd) 8>&-
rc=$?
echo "$rc" >&8
exec 8>&-
# Let the serial port drain before the machine powers off (stty sets the
# attributes with TCSADRAIN, which waits for queued output).
stty -F /dev/ttyS1 raw 2>/dev/null
exit "$rc"
