#!/bin/sh
# Two qemu Soft-RoCE guests, a and b, joined by qemu network backends on the
# loopback interface (-netdev dgram: UDP on 127.0.0.1, nothing beyond what
# qemu itself needs), so that RDMA packets travel between two kernels.
#
#   tests/rxe/run-two-vms.sh [options] -- CMD [ARGS...]
#
#   --rails N      virtio NICs (rails) per guest, 1 or 2 (default 2): rail R
#                  is ethR with rxeR on it, NET.R.1/24 in a, NET.R.2/24 in b
#   --mem MiB      memory per guest (default 1024)
#   --smp N        CPUs per guest (default 1: the two guests share the host)
#   --timeout S    end both guests after S seconds, exit 124 (default 600)
#   --env VAR=val  export VAR in both guests (repeatable)
#
# Both guests run CMD (through tests/rxe/run-in-vm.sh, whose initramfs and
# kernel cache they share), with TG_ROLE=a or b, TG_A and TG_B (the guests'
# rail-0 addresses), TG_NET, TG_RAILS and TG_DIR (a directory both guests
# and this script see, for meeting each other) in the environment.  Guest
# a's output and exit status are this script's; b's output follows, each
# line prefixed "b| ".  b is ended when a's command ends: a server in b can
# simply run until then.  Exit 77 ("SKIP: ...") where a guest cannot be had
# here (no qemu, no kernel with rdma_rxe), 124 on timeout.
#
# SYMRAIL_RXE_NET (default 10.79) picks the two /24 subnets; the UDP ports
# are free ones, picked per run.
set -u

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
me=run-two-vms
PATH=$PATH:/usr/sbin:/sbin

die() { echo "$me: $*" >&2; exit 2; }
is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }

rails=2 mem=1024 smp=1 tmo=600
set_env='' # the --env options, handed on as they came
while [ $# -gt 0 ]; do
    case $1 in
        --rails | --mem | --smp | --timeout)
            [ $# -ge 2 ] || die "$1 needs a value"
            is_uint "$2" || die "$1 wants a number, not '$2'"
            case $1 in
                --rails) rails=$2 ;;
                --mem) mem=$2 ;;
                --smp) smp=$2 ;;
                --timeout) tmo=$2 ;;
            esac
            shift 2
            ;;
        --env)
            [ $# -ge 2 ] || die "--env needs a value"
            case $2 in *"
"*) die "--env: no newlines" ;; esac
            set_env="$set_env
$2"
            shift 2
            ;;
        -h | --help) sed -n '6,24s/^# \{0,1\}//p' "$here/run-two-vms.sh"; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || die "no command (see --help)"
case $rails in 1 | 2) ;; *) die "--rails: 1 or 2" ;; esac
net=${SYMRAIL_RXE_NET:-10.79}
case $net in
    [0-9]*.[0-9]* ) ;;
    *) die "SYMRAIL_RXE_NET wants the first two octets, not '$net'" ;;
esac

# A UDP port on 127.0.0.1 that nobody has bound, and that this run has not
# picked already.
picked=''
free_port() {
    _used=$(ss -Huan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
    while :; do
        _p=$(($(od -An -N2 -tu2 /dev/urandom) % 20000 + 40000))
        case " $picked " in *" $_p "*) continue ;; esac
        printf '%s\n' "$_used" | grep -qx "$_p" && continue
        picked="$picked $_p"
        echo "$_p"
        return
    done
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/symrail-2vm.XXXXXX") || exit 1
case $dir in
    *[!A-Za-z0-9/._-]*) rmdir "$dir"; dir=$(mktemp -d /tmp/symrail-2vm.XXXXXX) || exit 1 ;;
esac
chmod 0755 "$dir"
pa='' pb=''
# shellcheck disable=SC2317 # (run from the traps)
cleanup() {
    trap '' INT TERM HUP
    # run-in-vm.sh ends its qemu (and its directory) on TERM.
    for p in $pa $pb; do kill -TERM "$p" 2>/dev/null; done
    for p in $pa $pb; do wait "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

nics_a='' nics_b=''
r=0
while [ "$r" -lt "$rails" ]; do
    port_a=$(free_port) port_b=$(free_port)
    dg="dgram,local.type=inet,local.host=127.0.0.1"
    nics_a="$nics_a --nic $net.$r.1/24=$dg,local.port=$port_a,remote.type=inet,remote.host=127.0.0.1,remote.port=$port_b"
    nics_b="$nics_b --nic $net.$r.2/24=$dg,local.port=$port_b,remote.type=inet,remote.host=127.0.0.1,remote.port=$port_a"
    r=$((r + 1))
done

# guest ROLE NICS...: one run-in-vm.sh; its output goes to $dir/ROLE.out
# for b, straight through for a.
guest() {
    _role=$1
    shift
    set -- --hostname "g$_role" --mem "$mem" --smp "$smp" --timeout "$tmo" \
        --env "TG_ROLE=$_role" --env "TG_A=$net.0.1" --env "TG_B=$net.0.2" \
        --env "TG_NET=$net" --env "TG_RAILS=$rails" --env "TG_DIR=$dir" "$@"
    _old_ifs=$IFS
    IFS='
'
    for e in $set_env; do
        IFS=$_old_ifs
        set -- --env "$e" "$@"
    done
    IFS=$_old_ifs
    # exec: the background job's pid must be run-in-vm.sh's, which ends its
    # qemu on TERM; a subshell that got the TERM would leave it running.
    SYMRAIL_RXE_SHARE="${SYMRAIL_RXE_SHARE:+$SYMRAIL_RXE_SHARE:}$dir" exec "$here/run-in-vm.sh" "$@"
}

# shellcheck disable=SC2086 # the --nic words
guest b $nics_b -- "$@" > "$dir/b.out" 2>&1 < /dev/null &
pb=$!
# shellcheck disable=SC2086
guest a $nics_a -- "$@" < /dev/null &
pa=$!
wait "$pa"
rc=$?
pa=''
if [ -s "$dir/b.out" ] && kill -0 "$pb" 2>/dev/null; then
    # b's server may still be writing its last lines.
    sleep 1
fi
kill -TERM "$pb" 2>/dev/null
wait "$pb" 2>/dev/null
rcb=$?
pb=''
if [ -s "$dir/b.out" ]; then
    sed 's/^/b| /' "$dir/b.out"
fi
if [ "$rcb" = 77 ] && [ "$rc" != 77 ]; then
    echo "$me: guest b skipped: $(grep -m 1 '^SKIP' "$dir/b.out")" >&2
fi
exit "$rc"
