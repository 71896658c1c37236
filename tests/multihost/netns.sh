# Two "hosts" on this machine, for the multi-host test bed and the TCP
# benchmark (sourced by them): network namespaces NS_H1 and NS_H2 with
# addresses $NET.1 and $NET.2, each on a veth whose other end sits in a
# bridge of the initial namespace ($NET.254).  netns_setup calls `skip`
# (the caller's: exit 77 with a reason) where namespaces cannot be made;
# netns_cleanup removes everything netns_setup made, whatever state it is in.
NET=${SR_MH_NET:-10.99.0}
NS_PREFIX=srm$$
NS_H1=${NS_PREFIX}a
NS_H2=${NS_PREFIX}b
NS_BR=${NS_PREFIX}br

netns_cleanup() {
    for h in "$NS_H1" "$NS_H2"; do
        # Processes left in a namespace would keep it, and its addresses, alive.
        pids=$(ip netns pids "$h" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ip netns del "$h" 2>/dev/null
        ip link del "${h}v" 2>/dev/null
    done
    ip link del "$NS_BR" 2>/dev/null
}

# netns_setup ERRFILE
netns_setup() {
    [ "$(id -u)" = 0 ] || skip "network namespaces need root"
    for tool in ip unshare hostname timeout; do
        command -v $tool >/dev/null 2>&1 ||
            skip "$tool not found (apt-get install iproute2 util-linux coreutils)"
    done
    ip -4 addr show | grep -q "inet $NET\." && skip "$NET.0/24 is in use here (set SR_MH_NET)"
    ip netns add "$NS_H1" 2>"$1" || skip "cannot create network namespaces here: $(cat "$1")"
    ip netns add "$NS_H2" || return 1
    ip link add "$NS_BR" type bridge 2>"$1" || skip "cannot create a bridge here: $(cat "$1")"
    ip addr add "$NET.254/24" dev "$NS_BR" && ip link set "$NS_BR" up || return 1
    i=1
    for h in "$NS_H1" "$NS_H2"; do
        ip link add "${h}v" type veth peer name "${h}n" &&
            ip link set "${h}n" netns "$h" &&
            ip link set "${h}v" master "$NS_BR" &&
            ip link set "${h}v" up &&
            ip netns exec "$h" ip addr add "$NET.$i/24" dev "${h}n" &&
            ip netns exec "$h" ip link set "${h}n" up &&
            ip netns exec "$h" ip link set lo up || return 1
        i=$((i + 1))
    done
}
