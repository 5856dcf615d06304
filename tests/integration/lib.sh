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

# Two TAPs on one bridge in a fresh namespace, for two daemons (a on TA,
# b on TB): sets NS BR TA TB WORK CA CB and PIDS, and on exit stops the
# daemons and removes it all. TAG: two letters, so names stay unique and
# within IFNAMSIZ.
setup_bridge_ns() {
    NS="ns$1$$"
    BR="b$1$$"
    TA="t${1}a$$"
    TB="t${1}b$$"
    TA=${TA:0:15}
    TB=${TB:0:15}
    WORK=$(mktemp -d /tmp/nstack-it.XXXXXX)
    CA="$WORK/a.sock"
    CB="$WORK/b.sock"
    PIDS=()
    trap cleanup_bridge EXIT INT TERM
    ip netns add "$NS" || fail "ip netns add $NS"
    ip -n "$NS" link set lo up
    ip -n "$NS" link add "$BR" type bridge || fail "bridge"
    ip -n "$NS" link set "$BR" up
    local t
    for t in "$TA" "$TB"; do
        ip netns exec "$NS" ip tuntap add dev "$t" mode tap || fail "tuntap add $t"
        ip -n "$NS" link set "$t" master "$BR" || fail "enslave $t"
        ip -n "$NS" link set "$t" up
    done
}

cleanup_bridge() {
    local rc=$? p
    for p in "${PIDS[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    ip netns pids "$NS" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    [ "${KEEP_WORK:-0}" != 1 ] && rm -rf "$WORK"
    exit $rc
}

# start_bridge_daemon IDX NAME TAP ADDR CTL [args...]: a daemon on TAP as
# ADDR/24 with control socket CTL, its pid in PIDS[IDX] (a restarted
# daemon takes its old index); returns once CTL exists.
start_bridge_daemon() {
    local idx=$1 name=$2 tap=$3 addr=$4 ctl=$5
    shift 5
    rm -f "$ctl"
    ip netns exec "$NS" "$NSTACK" daemon --dev "tap:$tap" --addr "$addr/24" --ctl "$ctl" "$@" \
        >>"$WORK/$name.log" 2>&1 &
    PIDS[$idx]=$!
    for _ in $(seq 100); do
        [ -S "$ctl" ] && return 0
        kill -0 "${PIDS[$idx]}" 2>/dev/null || { cat "$WORK/$name.log"; fail "daemon $name exited"; }
        sleep 0.05
    done
    fail "daemon $name did not create $ctl"
}

# ---- Hosted mode (nstack daemon --sctp-udp) on 127.0.0.1 ----

# hosted_init: $WORK, a cleanup trap that stops every daemon started with
# start_hosted, and RUNAS (drop to nobody when run as root, to prove that
# no privilege is needed).
hosted_init() {
    WORK=$(mktemp -d /tmp/nstack-hosted.XXXXXX)
    chmod 0777 "$WORK"
    PIDS=()
    trap cleanup_hosted EXIT INT TERM
    RUNAS=()
    if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
        RUNAS=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
        if "${RUNAS[@]}" test -x "$NSTACK"; then
            echo "daemons run as nobody"
        else
            echo "nobody cannot run $NSTACK: daemons run as $(id -un)"
            RUNAS=()
        fi
    fi
}

cleanup_hosted() {
    local rc=$?
    for p in "${PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null || continue
        kill -TERM "$p" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    [ "${KEEP_WORK:-0}" != 1 ] && rm -rf "$WORK"
    exit $rc
}

# start_hosted NAME PORT [daemon args...]: a hosted daemon on
# 127.0.0.1:PORT with its control socket in $WORK; sets STARTED_PID.
# Returns 2 if the port is taken.
start_hosted() {
    local name=$1 port=$2
    shift 2
    "${RUNAS[@]}" "$NSTACK" daemon --sctp-udp "127.0.0.1:$port" --ctl "$WORK/$name.sock" \
        "$@" >"$WORK/$name.log" 2>&1 &
    STARTED_PID=$!
    PIDS+=("$STARTED_PID")
    for _ in $(seq 100); do
        [ -S "$WORK/$name.sock" ] && return 0
        if ! kill -0 "$STARTED_PID" 2>/dev/null; then
            grep -q "in use" "$WORK/$name.log" && return 2
            cat "$WORK/$name.log"
            fail "daemon $name exited"
        fi
        sleep 0.05
    done
    cat "$WORK/$name.log"
    fail "daemon $name did not create its socket"
}

# start_hosted_pair [a's args...] -- [b's args...]: daemons a and b on a
# free-looking pair of UDP ports PA and PB = PA + 1, tried again when the
# kernel says one is taken. In the arguments @PA@ and @PB@ stand for the
# ports. Sets PA, PB, A_PID, B_PID.
start_hosted_pair() {
    local args_a=() args_b=() side=a arg r=1 attempt
    for arg in "$@"; do
        if [ "$arg" = "--" ] && [ $side = a ]; then side=b; continue; fi
        if [ $side = a ]; then args_a+=("$arg"); else args_b+=("$arg"); fi
    done
    for attempt in 1 2 3 4 5; do
        PA=$((20000 + RANDOM % 20000))
        PB=$((PA + 1))
        start_hosted a "$PA" "${args_a[@]//@PB@/$PB}"
        r=$?
        [ $r -eq 0 ] || continue
        A_PID=$STARTED_PID
        start_hosted b "$PB" "${args_b[@]//@PA@/$PA}"
        r=$?
        [ $r -eq 0 ] && { B_PID=$STARTED_PID; return 0; }
        kill -TERM "$A_PID"
        wait "$A_PID" 2>/dev/null
    done
    fail "no free UDP port pair"
}

# perf_counts OUT: "RX TX" from perf's "N messages/s: RX messages received
# of TX sent" line (fails the test without one).
perf_counts() {
    local line
    line=$(grep -E "^[0-9]+ messages/s: [0-9]+ messages received of [0-9]+ sent$" <<<"$1") ||
        { echo "$1"; fail "perf: no message line"; }
    sed 's/.*: \([0-9]*\) messages received of \([0-9]*\) sent/\1 \2/' <<<"$line"
}
