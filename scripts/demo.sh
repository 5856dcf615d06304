#!/usr/bin/env bash
# `make demo`: nstack on a real link against the Linux kernel (as root), or
# two stacks over an in-process memlink (without root).
set -uo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
NSTACK="$top/$build/nstack"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

# Build the nstack binary alone (no tests: the demo needs none), with the
# compiler's output in a log that is shown only if the build fails.
log="$top/$build/demo-build.log"
mkdir -p "$top/$build"
printf 'nstack demo: building nstack (release; compiler output in %s) ... ' "$build/demo-build.log"
t0=$(date +%s)
if ! { cmake -S "$top" -B "$top/$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$top/$build" -j "$(nproc)" --target nstack; } >"$log" 2>&1; then
    echo "failed"
    tail -40 "$log"
    echo "nstack demo: the build failed; the whole log is $log"
    exit 1
fi
echo "done in $(($(date +%s) - t0)) s"

if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/net/tun ]; then
    say "mode: memlink (not root: two stacks in one process, no TAP)"
    exec "$NSTACK" simdemo
fi

NS="nsdemo$$"
TAP="tdemo$$"
WORK=$(mktemp -d /tmp/nstack-demo.XXXXXX)
CTL="$WORK/ctl.sock"
PID=
SCTP_PIDS=()
cleanup() {
    for p in "$PID" "${SCTP_PIDS[@]}"; do
        [ -n "$p" ] && kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    ip netns del "$NS" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo; echo "interrupted: tearing down"; exit 130' INT TERM

say "mode: TAP in network namespace $NS (root): kernel 198.18.0.1 <-> nstack 198.18.0.2"
run ip netns add "$NS"
run ip netns exec "$NS" ip tuntap add dev "$TAP" mode tap
run ip -n "$NS" addr add 198.18.0.1/24 dev "$TAP"
run ip -n "$NS" link set "$TAP" up
printf '$ %s\n' "ip netns exec $NS nstack daemon --dev tap:$TAP --addr 198.18.0.2/24 --ctl $CTL &"
ip netns exec "$NS" "$NSTACK" daemon --dev "tap:$TAP" --addr 198.18.0.2/24 --ctl "$CTL" &
PID=$!
for _ in $(seq 100); do [ -S "$CTL" ] && break; sleep 0.05; done
[ -S "$CTL" ] || { echo "daemon did not start"; exit 1; }
export NSTACK_CTL="$CTL"

say "nstack pings the kernel (first packet resolves ARP from the output path)"
run "$NSTACK" ping -c 3 -i 0.2 198.18.0.1
say "the kernel pings nstack"
run ip netns exec "$NS" ping -c 3 -i 0.2 198.18.0.2
say "neighbour tables"
run "$NSTACK" neigh show
run ip -n "$NS" neigh show dev "$TAP"
say "first-ping latency after deleting the entry (the 2011 Linux change)"
for probe in 1 0; do
    "$NSTACK" sysctl -w neigh.immediate_probe=$probe >/dev/null
    "$NSTACK" neigh del 198.18.0.1 dev "$TAP" 2>/dev/null
    printf '$ nstack sysctl -w neigh.immediate_probe=%s; nstack neigh del 198.18.0.1 dev %s; nstack ping -c 3 -i 0.2 198.18.0.1\n' "$probe" "$TAP"
    "$NSTACK" ping -c 3 -i 0.2 198.18.0.1 | grep -E "bytes from|rtt"
done
"$NSTACK" sysctl -w neigh.immediate_probe=1 >/dev/null
say "a destination nobody owns: 3 broadcast requests 1 s apart, then unreachable"
run "$NSTACK" ping -c 1 -W 5 198.18.0.99
run "$NSTACK" neigh show
say "SCTP: two nstack daemons on a bridge, an SCTP_STREAM run (netperf's table)"
BR="bdemo$$"; TA="tdemoa$$"; TB="tdemob$$"
ip -n "$NS" link add "$BR" type bridge && ip -n "$NS" link set "$BR" up
for t in "$TA" "$TB"; do
    ip netns exec "$NS" ip tuntap add dev "$t" mode tap
    ip -n "$NS" link set "$t" master "$BR"
    ip -n "$NS" link set "$t" up
done
printf '$ %s\n' "nstack daemon --dev tap:$TB --addr 198.18.1.3/24 --serve perf:5001 --serve echo:7 &"
ip netns exec "$NS" "$NSTACK" daemon --dev "tap:$TB" --addr 198.18.1.3/24 --ctl "$WORK/b.sock" \
    --serve perf:5001 --serve echo:7 2>/dev/null &
SCTP_PIDS+=($!)
printf '$ %s\n' "nstack daemon --dev tap:$TA --addr 198.18.1.2/24 &"
ip netns exec "$NS" "$NSTACK" daemon --dev "tap:$TA" --addr 198.18.1.2/24 --ctl "$WORK/a.sock" 2>/dev/null &
SCTP_PIDS+=($!)
for _ in $(seq 100); do [ -S "$WORK/a.sock" ] && [ -S "$WORK/b.sock" ] && break; sleep 0.05; done
run "$NSTACK" -C "$WORK/a.sock" sctp send 198.18.1.3 7 "hello over SCTP"
run "$NSTACK" -C "$WORK/a.sock" perf -H 198.18.1.3 -l 3 -m 30
run "$NSTACK" -C "$WORK/a.sock" perf -H 198.18.1.3 -l 3 -m 65536

say "counters"
run "$NSTACK" stats | head -40
say "done: tearing down $NS"
