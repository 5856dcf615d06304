# Sourced by the bench scripts that run two daemons over TAP + bridge:
# bench_bridge_setup TAG makes namespace, bridge and two TAPs (NS, BR, TA,
# TB; WORK a scratch directory), stop_daemons ends the daemons in PIDS,
# and everything goes again on exit, also on failure.
bench_bridge_setup() { # TAG
    NS="ns$1$$"
    BR="b$1$$"
    TA="t$1a$$"
    TB="t$1b$$"
    WORK=$(mktemp -d "/tmp/nstack-$1.XXXXXX")
    PIDS=()
    trap bench_bridge_cleanup EXIT INT TERM
    ip netns add "$NS"
    ip -n "$NS" link set lo up
    ip -n "$NS" link add "$BR" type bridge
    ip -n "$NS" link set "$BR" up
    local t
    for t in "$TA" "$TB"; do
        ip netns exec "$NS" ip tuntap add dev "$t" mode tap
        ip -n "$NS" link set "$t" master "$BR"
        ip -n "$NS" link set "$t" up
    done
}

stop_daemons() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    PIDS=()
    rm -f "$WORK"/*.sock
}

bench_bridge_cleanup() {
    stop_daemons
    ip netns pids "$NS" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    rm -rf "$WORK"
}
