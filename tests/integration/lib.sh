# Shared helpers for the integration tests: a namespace holding a TAP whose
# kernel side is 198.18.0.1/24, with an nstack daemon on it as 198.18.0.2.
# Every test names its namespace and TAP uniquely and removes them on exit.
set -uo pipefail
NSTACK=${NSTACK:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build-asan/nstack}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
KERNEL_IP=198.18.0.1
NSTACK_IP=198.18.0.2

need_root() {
    if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/net/tun ]; then
        echo "SKIP: needs root and /dev/net/tun"
        exit 77
    fi
}

fail() {
    echo "FAIL: $*"
    exit 1
}
ok() { echo "ok: $*"; }

# setup_tap_ns PREFIX: creates namespace $NS with tap $TAP (kernel side up,
# 198.18.0.1/24) and remembers both for cleanup.
setup_tap_ns() {
    NS="$1$$"
    TAP="t$1$$"
    TAP=${TAP:0:15}
    WORK=$(mktemp -d /tmp/nstack-it.XXXXXX)
    CTL="$WORK/ctl.sock"
    DAEMON_PID=
    trap cleanup EXIT INT TERM
    ip netns add "$NS" || fail "ip netns add $NS"
    ip netns exec "$NS" ip link set lo up
    ip netns exec "$NS" ip tuntap add dev "$TAP" mode tap || fail "tuntap add"
    ip -n "$NS" addr add "$KERNEL_IP/24" dev "$TAP"
    ip -n "$NS" link set "$TAP" up
}

cleanup() {
    local rc=$?
    if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        kill -TERM "$DAEMON_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$DAEMON_PID" 2>/dev/null
    fi
    # Whatever the test started inside the namespace (socat, ping) goes too.
    if [ -n "${NS:-}" ]; then
        ip netns pids "$NS" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$NS" 2>/dev/null
    fi
    [ -n "${WORK:-}" ] && [ "${KEEP_WORK:-0}" != 1 ] && rm -rf "$WORK"
    exit $rc
}

# start_daemon [extra daemon args...]
start_daemon() {
    ip netns exec "$NS" "$NSTACK" daemon --dev "tap:$TAP" --addr "$NSTACK_IP/24" --ctl "$CTL" \
        "$@" >"$WORK/daemon.log" 2>&1 &
    DAEMON_PID=$!
    for _ in $(seq 100); do
        [ -S "$CTL" ] && return 0
        kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$WORK/daemon.log"; fail "daemon exited"; }
        sleep 0.05
    done
    cat "$WORK/daemon.log"
    fail "daemon did not create $CTL"
}

stop_daemon() {
    kill -TERM "$DAEMON_PID"
    wait "$DAEMON_PID"
    local rc=$?
    DAEMON_PID=
    return $rc
}

ns() { ip netns exec "$NS" "$@"; }
nst() { "$NSTACK" -C "$CTL" "$@"; }

# tshark_clean FILE [FILTER]: no malformed packet and no bad checksum in a
# capture (only among the packets matching the display filter FILTER, e.g.
# the daemon's own frames when a test sends malformed ones on purpose).
tshark_clean() {
    local f=$1 bad sel='_ws.malformed || _ws.expert.severity >= error'
    [ -n "${2:-}" ] && sel="($2) && ($sel)"
    command -v tshark >/dev/null || { echo "tshark missing"; return 1; }
    # ICMP checksums are always verified by this tshark; IP, UDP and SCTP
    # ones only when asked.
    local opts=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o "sctp.checksum:CRC 32c")
    tshark -r "$f" "${opts[@]}" >/dev/null || { echo "tshark cannot read $f"; return 1; }
    bad=$(tshark -r "$f" "${opts[@]}" -Y "$sel" | wc -l)
    [ "$bad" -eq 0 ] || { tshark -r "$f" "${opts[@]}" -Y "$sel" | head; return 1; }
}
