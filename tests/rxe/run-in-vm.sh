#!/bin/sh
# Run a command inside a throw-away qemu guest that has Soft-RoCE (rdma_rxe)
# devices, for testing the verbs transport on machines without RDMA hardware
# or an RDMA-capable host kernel.
#
#   tests/rxe/run-in-vm.sh [options] -- CMD [ARGS...]
#   tests/rxe/run-in-vm.sh --install
#
#   --devices N    rxe devices rxe0..rxeN-1 (default 1), rxeI on its own veth
#                  pair vrxeIa/vrxeIb with 10.77.I.1/24 on vrxeIa
#   --mem MiB      guest memory (default 2048); registered memory is pinned,
#                  so every PE's heap must fit in here
#   --smp N        guest CPUs (default 2)
#   --timeout S    kill the guest after S seconds and exit 124 (default 600)
#   --env VAR=val  export VAR in the guest before CMD (repeatable)
#   --kernel VER   guest kernel: a version or its prefix (6.12, 6.1), or
#                  latest (the default; SYMRAIL_RXE_KERNEL; see below)
#   --nic CIDR=NETDEV  a virtio NIC ethI (I counts from 0) with address CIDR
#                  and an rxe device on it (rxeI, after the --devices ones),
#                  joined to the qemu network
#                  backend NETDEV (qemu -netdev options without the id, e.g.
#                  dgram,local.type=inet,...); repeatable; with it, --devices
#                  is 0 unless given (see run-two-vms.sh)
#   --hostname H   the guest's host name (default symrail-rxe)
#   --install      install the Debian packages this needs with apt-get
#                  (same as SYMRAIL_RXE_INSTALL=1); alone, only installs
#
# The guest is a Debian kernel booted straight into a tiny busybox initramfs
# that mounts the host's root filesystem over 9p and chroots into it, so CMD
# runs with the host's binaries, in the caller's working directory (same
# absolute path) and with the caller's PATH, as root, with `ulimit -l
# unlimited`.  /tmp, /run and /dev/shm are private tmpfs mounts in the guest.
# CMD's stdout and stderr come out on this script's stdout; its exit status is
# this script's.  Exit 77 ("SKIP: ...") when something needed is not
# installed, 124 on timeout, 1 when the guest fails before reporting a status.
#
# In the guest: rxeI is on veth vrxeIa, 10.77.I.1/24; GID index 1 is the
# IPv4-mapped ::ffff:10.77.I.1 (index 0 the link-local one).  Each device
# works in loopback (both ends on the same rxeI); traffic from one rxe device
# to another in the same guest does not (QP modify to RTR fails on 6.1 and
# on 6.12), so a multi-rail test uses every device in loopback.
#
# The kernel is one of the /boot/vmlinuz-* whose /lib/modules has rdma_rxe:
# --kernel (or SYMRAIL_RXE_KERNEL) names it by version or version prefix
# ("6.12", "6.1.0-57-amd64"), "latest" the newest; the default, "stock",
# is Debian 12's own 6.1 where it is installed (what the suite is proven
# on), else the newest.
# On 6.1 rxe runs a user QP's whole send path (requester, loopback responder,
# completer) inside the ibv_post_send doorbell; 6.12's rxe_post_send only
# schedules that work on a workqueue, so a post returns as with hardware,
# which latency measurements notice.  --install with --kernel 6.12 adds Debian 12's 6.12 kernel
# (linux-image-6.12-amd64) where the archive has it.
# The initramfs and an uncompressed copy of the kernel (which boots much
# faster under emulation) are cached in
# ${SYMRAIL_RXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/symrail-rxe}/<kernel>/.
#
# Other knobs: SYMRAIL_RXE_ACCEL (qemu -accel value, default
# tcg,thread=multi: guests hang at boot under KVM on some hosts),
# SYMRAIL_RXE_KEEP_LOG=FILE (copy the guest kernel log there),
# SYMRAIL_RXE_9P (9p cache mode in the guest, default cache=loose).
set -u

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
me=run-in-vm
caller_path=$PATH
PATH=$PATH:/usr/sbin:/sbin
PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static kmod rdma-core ibverbs-providers ibverbs-utils perftest iproute2"

usage() {
    sed -n '6,26s/^# \{0,1\}//p' "$here/run-in-vm.sh"
}
die() { echo "$me: $*" >&2; exit 2; }
skip() { echo "SKIP: $*"; exit 77; }
is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
# Quote one word for sh.
q() {
    _q=$(printf '%sx' "$1" | sed "s/'/'\\\\''/g")
    printf "'%s'" "${_q%x}"
}

devices='' mem=2048 smp=2 tmo=600 install=${SYMRAIL_RXE_INSTALL:-0}
kernel_choice=${SYMRAIL_RXE_KERNEL:-stock}
env_lines=
nics=0 nic_addrs='' nic_opts='' hostname=symrail-rxe
while [ $# -gt 0 ]; do
    case $1 in
        --devices | --mem | --smp | --timeout | --env | --kernel | --nic | --hostname)
            [ $# -ge 2 ] || die "$1 needs a value"
            opt=$1 val=$2
            shift 2
            ;;
        --devices=* | --mem=* | --smp=* | --timeout=* | --env=* | --kernel=* | --nic=* | --hostname=*)
            opt=${1%%=*} val=${1#*=}
            shift
            ;;
        --install) install=1; shift; continue ;;
        -h | --help) usage; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
    case $opt in
        --kernel)
            case $val in
                '' | *[!A-Za-z0-9.+_~-]*) die "--kernel: bad version '$val'" ;;
            esac
            kernel_choice=$val
            ;;
        --nic)
            cidr=${val%%=*} nd=${val#*=}
            case $cidr in
                *[!0-9./]* | *.*.*.*.* | */*/*) die "--nic wants IPV4/PREFIX=NETDEV, not '$val'" ;;
                [0-9]*.[0-9]*.[0-9]*.[0-9]*/[0-9]*) ;;
                *) die "--nic wants IPV4/PREFIX=NETDEV, not '$val'" ;;
            esac
            case $nd in
                '' | *[!A-Za-z0-9.,=:_/-]*) die "--nic: bad netdev options '$nd'" ;;
            esac
            [ "$nics" -lt 8 ] || die "--nic: at most 8"
            # The MAC comes from the address: unique on a wire of guests.
            ip4=${cidr%/*}
            # shellcheck disable=SC2086
            mac=$(IFS=.; set -- $ip4; printf '52:54:%02x:%02x:%02x:%02x' "$1" "$2" "$3" "$4")
            nic_addrs="$nic_addrs $cidr"
            nic_opts="$nic_opts -netdev $nd,id=nic$nics -device virtio-net-pci,netdev=nic$nics,mac=$mac"
            nics=$((nics + 1))
            ;;
        --hostname)
            case $val in
                '' | *[!A-Za-z0-9-]*) die "--hostname: bad name '$val'" ;;
            esac
            hostname=$val
            ;;
        --env)
            case $val in
                [A-Za-z_]*=*) ;;
                *) die "--env wants VAR=value, not '$val'" ;;
            esac
            name=${val%%=*}
            case $name in *[!A-Za-z0-9_]*) die "--env: bad variable name '$name'" ;; esac
            env_lines="$env_lines    export $(q "$val")
"
            ;;
        *)
            is_uint "$val" || die "$opt wants a number, not '$val'"
            case $opt in
                --devices) devices=$val ;;
                --mem) mem=$val ;;
                --smp) smp=$val ;;
                --timeout) tmo=$val ;;
            esac
            ;;
    esac
done
[ "$install" = 1 ] || [ $# -gt 0 ] || { usage >&2; exit 2; }
if [ -z "$devices" ]; then
    if [ "$nics" -gt 0 ]; then devices=0; else devices=1; fi
fi
[ "$devices" -le 64 ] || die "--devices: at most 64"
[ "$mem" -ge 256 ] || die "--mem: at least 256 MiB"
[ "$smp" -ge 1 ] || die "--smp: at least 1"
[ "$tmo" -ge 1 ] || die "--timeout: at least 1 second"

# ---- what is needed, and installing it -----------------------------------------

# Installed kernels whose modules include rdma_rxe, oldest first.
rxe_kernels() {
    for k in /boot/vmlinuz-*; do
        [ -r "$k" ] || continue
        v=${k#/boot/vmlinuz-}
        [ -d "/lib/modules/$v" ] || continue
        if find "/lib/modules/$v/kernel/drivers/infiniband" -name 'rdma_rxe.ko*' 2>/dev/null | grep -q .; then
            echo "$v"
        fi
    done | sort -V
}

# The kernel that $kernel_choice names: a version or a prefix of one ending
# at a component ("6.12" matches 6.12.117+deb12-amd64, not 6.1.0-57), or
# "latest" (the newest).  Prints nothing when none matches.
find_kernel() {
    _all=$(rxe_kernels)
    case $kernel_choice in
        latest) printf '%s\n' "$_all" | tail -n 1; return ;;
        stock)
            _v=$(printf '%s\n' "$_all" | grep -E '^6[.]1[.-]' | tail -n 1)
            [ -n "$_v" ] || _v=$(printf '%s\n' "$_all" | tail -n 1)
            [ -z "$_v" ] || echo "$_v"
            return ;;
    esac
    printf '%s\n' "$_all" | while read -r _v; do
        case $_v in
            "$kernel_choice" | "$kernel_choice".* | "$kernel_choice"-* | "$kernel_choice"+*) echo "$_v" ;;
        esac
    done | tail -n 1
}

find_busybox() {
    for b in /bin/busybox /usr/bin/busybox; do
        [ -x "$b" ] || continue
        # A dynamically linked busybox cannot run alone in the initramfs.
        if LC_ALL=C ldd "$b" 2>&1 | grep -q 'not a dynamic'; then
            echo "$b"
            return
        fi
    done
}

have_rxe_provider() {
    for d in /usr/lib/*/libibverbs /usr/lib64/libibverbs /usr/lib/libibverbs; do
        for f in "$d"/librxe-rdmav*.so; do
            [ -e "$f" ] && return 0
        done
    done
    return 1
}

# Prints the first missing piece, nothing when all is there.
missing() {
    command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 is not installed"; return; }
    if [ -z "$(find_kernel)" ]; then
        case $kernel_choice in
            latest | stock) echo "no kernel in /boot with the rdma_rxe module" ;;
            *) echo "no kernel $kernel_choice in /boot with the rdma_rxe module (there are: $(rxe_kernels | tr '\n' ' ' | sed 's/ $//'))" ;;
        esac
        return
    fi
    [ -n "$(find_busybox)" ] || { echo "no statically linked busybox (busybox-static)"; return; }
    for t in modinfo modprobe ip rdma; do
        command -v "$t" >/dev/null || { echo "$t is not installed"; return; }
    done
    have_rxe_provider || { echo "the rxe verbs provider (ibverbs-providers) is not installed"; return; }
}

# A newer kernel than Debian 12's default one, where the archive has it.
kernel_packages() {
    case $kernel_choice in 6.12*) ;; *) return 0 ;; esac
    command -v apt-cache >/dev/null || return 0
    apt-cache show linux-image-6.12-amd64 >/dev/null 2>&1 && echo linux-image-6.12-amd64
}

# Debian packages of $PACKAGES that are not installed.
packages_missing() {
    for p in $PACKAGES $(kernel_packages); do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || printf '%s ' "$p"
    done
}

what=$(missing)
# --install alone: make sure every package is there (the self-test needs the
# ibverbs utilities and perftest, which running commands does not).
if [ -z "$what" ] && [ "$install" = 1 ] && [ $# -eq 0 ] && command -v dpkg-query >/dev/null; then
    p=$(packages_missing)
    [ -z "$p" ] || what="not installed: ${p% }"
fi
if [ -n "$what" ] || { [ "$install" = 1 ] && [ $# -eq 0 ]; }; then
    [ "$install" = 1 ] || skip "$what (tests/rxe/run-in-vm.sh --install adds it)"
    if [ -n "$what" ]; then
        command -v apt-get >/dev/null || skip "$what, and there is no apt-get to install it"
        sudo=
        if [ "$(id -u)" != 0 ]; then
            command -v sudo >/dev/null || skip "$what, and installing needs root"
            sudo=sudo
        fi
        $sudo apt-get update -qq >&2 || { echo "$me: apt-get update failed" >&2; exit 1; }
        pkgs="$PACKAGES $(kernel_packages)"
        echo "$me: $what; installing $pkgs" >&2
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $pkgs >&2 ||
            { echo "$me: apt-get install failed" >&2; exit 1; }
        what=$(missing)
        [ -z "$what" ] || { echo "$me: still missing after installing: $what" >&2; exit 1; }
    fi
    [ $# -gt 0 ] || exit 0
fi

kver=$(find_kernel)
busybox=$(find_busybox)
vmlinuz=/boot/vmlinuz-$kver

# ---- the cached initramfs and uncompressed kernel -------------------------------

cache_base=${SYMRAIL_RXE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/symrail-rxe}
cache=$cache_base/$kver
cache_format="symrail-rxe cache 4"   # change when what build_cache makes changes

# Modules (dependencies first) for the roots given, one "name path" a line;
# built-in ones are left out (modprobe --show-depends says "builtin").  Two
# sets: virtio-pci and 9p, to reach the host root; Soft-RoCE, with veth, the
# crc32 that rxe asks the crypto API for, and rdma_ucm for rdma_cm users.
BOOT_MODULES="virtio_pci 9pnet_virtio 9p"
RXE_MODULES="rdma_rxe rdma_ucm veth crc32_generic"
resolve_modules() {
    _deps=$(for root in "$@"; do
        modprobe -S "$kver" --show-depends "$root" || exit 1
    done) || return 1
    printf '%s\n' "$_deps" | awk '$1 == "insmod" && !seen[$2]++ {
        name = $2; sub(/.*\//, "", name); sub(/\.ko.*/, "", name); print name, $2 }'
}

# Copy module $2 to $3 uncompressed (busybox insmod may not decompress).
copy_module() {
    case $1 in
        *.ko) cp "$1" "$2" ;;
        *.ko.xz) xz -dc "$1" > "$2" ;;
        *.ko.zst) zstd -qdc "$1" > "$2" ;;
        *.ko.gz) gzip -dc "$1" > "$2" ;;
        *) return 1 ;;
    esac
}

# Decompress the vmlinux inside a bzImage.  qemu boots an ELF kernel that has
# a PVH entry note directly, which skips the firmware and the in-guest
# decompression: about 3 s instead of 9 s to the command under TCG.
extract_vmlinux() { # image out
    command -v grep >/dev/null && echo x | grep -qP x 2>/dev/null || return 1
    for c in 'xz \xfd7zXZ\x00' 'gzip \x1f\x8b\x08' 'zstd \x28\xb5\x2f\xfd' 'lz4 \x02\x21\x4c\x18'; do
        tool=${c%% *} magic=${c#* }
        command -v "$tool" >/dev/null || continue
        for off in $(LC_ALL=C grep -aboP "$magic" "$1" 2>/dev/null | head -n 3 | cut -d: -f1); do
            tail -c +$((off + 1)) "$1" | "$tool" -dc > "$2" 2>/dev/null
            # An ELF image with the PVH note (Xen note type 18).
            if [ "$(head -c 4 "$2" | tr -d '\177')" = ELF ] &&
                LC_ALL=C grep -qaP '\x04\x00\x00\x00[\x04\x08]\x00\x00\x00\x12\x00\x00\x00Xen\x00' "$2"; then
                return 0
            fi
        done
    done
    rm -f "$2"
    return 1
}

# Drop a module's appended signature: checking it costs about as much as the
# rest of the insmod under emulation.  An unsigned module still loads (the
# kernel notes a taint) unless signatures are enforced.
strip_signature() {
    [ "$(tail -c 28 "$1")" = "~Module signature appended~" ] || return 0
    # shellcheck disable=SC2046
    set -- "$1" $(tail -c 40 "$1" | head -c 12 | od -An -tu1)
    [ $# = 13 ] || return 0
    _keep=$(($(wc -c < "$1") - 40 - (${10} << 24 | ${11} << 16 | ${12} << 8 | ${13})))
    head -c "$_keep" "$1" > "$1.unsigned" && mv -f "$1.unsigned" "$1"
}

build_cache() {
    mkdir -p "$cache" || { echo "$me: cannot create $cache" >&2; exit 1; }
    b=$(mktemp -d "$cache/.build.XXXXXX") || exit 1
    r=$b/root
    mkdir -p "$r/bin" "$r/lib/modules" "$r/proc" "$r/sys" "$r/dev" "$r/host"
    cp "$busybox" "$r/bin/busybox" && cp "$here/guest-init" "$r/init" && chmod 755 "$r/init" ||
        { rm -rf "$b"; echo "$me: cannot build the initramfs" >&2; exit 1; }
    for set in boot rxe; do
        if [ $set = boot ]; then roots=$BOOT_MODULES; else roots=$RXE_MODULES; fi
        # shellcheck disable=SC2086
        list=$(resolve_modules $roots) && : > "$r/lib/modules/$set" &&
            echo "$list" | while read -r name path; do
                [ -n "$name" ] || continue
                [ -e "$r/lib/modules/$name.ko" ] && continue
                copy_module "$path" "$r/lib/modules/$name.ko" &&
                    { [ "${SYMRAIL_RXE_KEEP_SIGNATURES:-0}" = 1 ] || strip_signature "$r/lib/modules/$name.ko"; } &&
                    echo "$name" >> "$r/lib/modules/$set" || exit 1
            done || { rm -rf "$b"; echo "$me: cannot put the $set modules of $kver into the initramfs" >&2; exit 1; }
    done
    # The kernel's module autoloader runs /sbin/modprobe in the initramfs root.
    mkdir -p "$r/sbin"
    printf '#!/bin/busybox sh\nexec /bin/busybox chroot /host modprobe "$@"\n' > "$r/sbin/modprobe"
    chmod 755 "$r/sbin/modprobe"
    (cd "$r" && find . | "$busybox" cpio -o -H newc 2>/dev/null) > "$b/initrd.cpio" ||
        { rm -rf "$b"; echo "$me: cpio failed" >&2; exit 1; }
    if ! extract_vmlinux "$vmlinuz" "$b/vmlinux"; then
        : > "$b/no-vmlinux" # boot the bzImage itself (slower)
    fi
    cp "$here/guest-init" "$b/init"
    # Rename into place; a concurrent build of the same files is harmless.
    rm -f "$cache/vmlinux" "$cache/no-vmlinux"
    for f in vmlinux no-vmlinux initrd.cpio init; do
        [ -e "$b/$f" ] && mv -f "$b/$f" "$cache/$f"
    done
    echo "$cache_format" > "$cache/stamp"
    rm -rf "$b"
}

# shellcheck disable=SC3013 # -nt: dash, bash and busybox have it
if [ ! -s "$cache/initrd.cpio" ] || [ "$(cat "$cache/stamp" 2>/dev/null)" != "$cache_format" ] ||
    { [ ! -s "$cache/vmlinux" ] && [ ! -e "$cache/no-vmlinux" ]; } ||
    ! cmp -s "$cache/init" "$here/guest-init" ||
    [ "$vmlinuz" -nt "$cache/stamp" ]; then
    build_cache
fi
kernel=$cache/vmlinux
[ -s "$kernel" ] || kernel=$vmlinuz

# ---- the run --------------------------------------------------------------------

cwd=$(pwd -P) || exit 1

ctl='' pid=''
# shellcheck disable=SC2317 # (run from the traps)
cleanup() {
    trap '' INT TERM HUP
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null # timeout(1) passes it on to qemu
        wait "$pid" 2>/dev/null
    fi
    [ -n "$ctl" ] || return 0
    # Should timeout(1) have gone without its child, end qemu itself.
    if [ -s "$ctl/qemu.pid" ]; then
        qp=$(cat "$ctl/qemu.pid")
        if [ "$(cat "/proc/$qp/comm" 2>/dev/null)" = qemu-system-x86 ]; then
            kill -KILL "$qp" 2>/dev/null
        fi
    fi
    if [ -n "${SYMRAIL_RXE_KEEP_LOG:-}" ] && [ -f "$ctl/console.log" ]; then
        cp "$ctl/console.log" "$SYMRAIL_RXE_KEEP_LOG"
    fi
    rm -rf "$ctl"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

ctl=$(mktemp -d "${TMPDIR:-/tmp}/symrail-rxe.XXXXXX" 2>/dev/null) || ctl=
case $ctl in
    '' | *[!A-Za-z0-9/._-]*) # must survive the kernel command line and qemu options
        [ -n "$ctl" ] && rmdir "$ctl"
        ctl=$(mktemp -d /tmp/symrail-rxe.XXXXXX) || exit 1
        ;;
esac

{
    echo "# generated by run-in-vm.sh"
    echo "RXE_CTL=$(q "$ctl")"
    echo "RXE_DEVICES=$devices"
    echo "RXE_NICS=$(q "${nic_addrs# }")"
    echo "RXE_HOSTNAME=$(q "$hostname")"
    echo "RXE_CWD=$(q "$cwd")"
    echo "RXE_SHARE=$(q "${SYMRAIL_RXE_SHARE:-}")"
    echo "RXE_PATH=$(q "$caller_path")"
    echo "RXE_HOME=$(q "${HOME:-/root}")"
    echo "rxe_env() {"
    printf '%s' "$env_lines"
    echo "    :"
    echo "}"
    printf 'rxe_cmd() {\n   '
    for a in "$@"; do printf ' %s' "$(q "$a")"; done
    printf '\n}\n'
    cat "$here/guest-run.sh"
} > "$ctl/guest.sh" || exit 1

kargs="console=ttyS0 quiet panic=-1 mitigations=off tsc=reliable no_timer_check"
kargs="$kargs audit=0 cryptomgr.notests random.trust_cpu=on noreplace-smp pci=noaer"
kargs="$kargs symrail_ctl=$ctl symrail_rxe=$((devices + nics))${SYMRAIL_RXE_9P:+ symrail_9p=$SYMRAIL_RXE_9P}"

# passthrough: files the guest creates get the guest's owner, which needs a
# root qemu; "none" is the same without that (an unprivileged qemu).
if [ "$(id -u)" = 0 ]; then sm=passthrough; else sm=none; fi

# shellcheck disable=SC2086 # $nic_opts: words checked above
timeout -k 5 "$tmo" qemu-system-x86_64 \
    -M q35 -accel "${SYMRAIL_RXE_ACCEL:-tcg,thread=multi}" -cpu max \
    -m "$mem" -smp "$smp" \
    -nodefaults -no-user-config -display none -no-reboot \
    -kernel "$kernel" -initrd "$cache/initrd.cpio" -append "$kargs" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=$sm,multidevs=remap \
    -chardev "file,id=con,path=$ctl/console.log" -serial chardev:con \
    -chardev stdio,id=out,signal=off -serial chardev:out \
    $nic_opts \
    -pidfile "$ctl/qemu.pid" < /dev/null &
pid=$!
wait "$pid"
rc=$?
pid=

if [ "$rc" = 124 ]; then
    echo "$me: TIMEOUT: the guest ran longer than ${tmo}s and was killed" >&2
    exit 124
fi
status=$(cat "$ctl/status" 2>/dev/null)
case $status in
    '' | *[!0-9]*)
        case $status in
            setup:*) echo "$me: guest setup failed:${status#setup:}" >&2 ;;
            *)
                echo "$me: the guest ended without an exit status (qemu exit $rc); kernel log:" >&2
                # From the first sign of trouble if there is one, else the end.
                log=$(tr -d '\r' < "$ctl/console.log" 2>/dev/null)
                n=$(printf '%s\n' "$log" | grep -n -m 1 -E 'BUG:|Oops|Kernel panic|sysrq: Trigger|Out of memory|rxe guest init:' | cut -d: -f1)
                if [ -n "$n" ]; then
                    printf '%s\n' "$log" | sed -n "$n,$((n + 19))p"
                else
                    printf '%s\n' "$log" | tail -n 20
                fi | sed 's/^/  /' >&2
                ;;
        esac
        exit 1
        ;;
esac
exit "$status"
