#!/usr/bin/env bash
# The 2011 "neigh: reduce arp latency" experiment, both ways over one TAP:
#  (1) nstack resolving the kernel:  nstack neigh del K; nstack ping -c 3 K
#      with neigh.immediate_probe=1 and =0
#  (2) the kernel resolving nstack:  ip neigh flush; ping -c 3 N
#  (3) the kernel resolving the kernel over a veth pair (reference)
# Penalty = first RTT - median of the later RTTs. Prints a Markdown table.
# Usage: bench/arp_latency.sh [NSTACK_BINARY] [REPS] [INTERVAL]
set -uo pipefail
NSTACK=${1:-build/nstack}
REPS=${2:-200}
IVL=${3:-0.05}
[ "$(id -u)" -eq 0 ] || { echo "arp_latency: needs root (namespaces, TAP)"; exit 77; }
NS="nsal$$"; TAP="tal$$"; NSA="nsala$$"; NSB="nsalb$$"
WORK=$(mktemp -d /tmp/nstack-arplat.XXXXXX)
CTL="$WORK/ctl.sock"
PID=
cleanup() {
    [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    ip netns del "$NS" 2>/dev/null; ip netns del "$NSA" 2>/dev/null; ip netns del "$NSB" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

ip netns add "$NS"
ip netns exec "$NS" ip tuntap add dev "$TAP" mode tap
ip -n "$NS" addr add 198.18.0.1/24 dev "$TAP"
ip -n "$NS" link set "$TAP" up
ip netns exec "$NS" "$NSTACK" daemon --dev "tap:$TAP" --addr 198.18.0.2/24 --ctl "$CTL" \
    2>"$WORK/daemon.log" &
PID=$!
for _ in $(seq 100); do [ -S "$CTL" ] && break; sleep 0.05; done
[ -S "$CTL" ] || { cat "$WORK/daemon.log"; exit 1; }

ip netns add "$NSA"; ip netns add "$NSB"
ip -n "$NSA" link add vla type veth peer name vlb netns "$NSB"
ip -n "$NSA" addr add 198.18.1.1/24 dev vla; ip -n "$NSB" addr add 198.18.1.2/24 dev vlb
ip -n "$NSA" link set vla up; ip -n "$NSB" link set vlb up

rtts() { sed -n 's/.*icmp_seq=\([0-9]*\) .*time=\([0-9.]*\) ms.*/\1 \2/p' | awk '{printf "%s ", $2} END {print ""}'; }

run_nstack() { # immediate_probe -> lines of RTTs
    "$NSTACK" -C "$CTL" sysctl -w neigh.immediate_probe="$1" >/dev/null
    for _ in $(seq "$REPS"); do
        "$NSTACK" -C "$CTL" neigh del 198.18.0.1 dev "$TAP" >/dev/null 2>&1
        "$NSTACK" -C "$CTL" ping -c 3 -i "$IVL" 198.18.0.1 | rtts
    done
}
run_kernel_tap() {
    for _ in $(seq "$REPS"); do
        ip -n "$NS" neigh flush dev "$TAP"
        ip netns exec "$NS" ping -c 3 -i "$IVL" 198.18.0.2 | rtts
    done
}
run_kernel_veth() {
    for _ in $(seq "$REPS"); do
        ip -n "$NSA" neigh flush dev vla
        ip netns exec "$NSA" ping -c 3 -i "$IVL" 198.18.1.2 | rtts
    done
}

run_nstack 1 >"$WORK/nstack_on"
run_kernel_tap >"$WORK/kernel_tap"
run_nstack 0 >"$WORK/nstack_off"
run_kernel_veth >"$WORK/kernel_veth"
"$NSTACK" -C "$CTL" sysctl -w neigh.immediate_probe=1 >/dev/null

echo "Command: bench/arp_latency.sh $NSTACK $REPS $IVL   ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r))"
echo
/usr/bin/python3 "$(dirname "$0")/arp_latency_table.py" \
    "(1) nstack resolves the kernel over TAP, immediate_probe=1" "$WORK/nstack_on" \
    "(1) nstack resolves the kernel over TAP, immediate_probe=0" "$WORK/nstack_off" \
    "(2) the kernel resolves nstack over TAP" "$WORK/kernel_tap" \
    "(3) the kernel resolves the kernel over veth" "$WORK/kernel_veth"
