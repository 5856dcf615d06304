#!/usr/bin/env bash
# Two builds side by side: SCTP_STREAM (`nstack perf`) between two daemons
# over TAP + bridge, the builds taking turns run by run (A first in odd
# pairs, B first in even ones) so a drift of a shared machine favours
# neither. Prints one line per run: build, message size, msgs/s, Mbit/s,
# send and receive service demand (us/KB).
# Usage: bench/sctp_ab.sh BUILD_A BUILD_B   (env: PAIRS=5 SECS=4 SIZES="30 65536"
#        DAEMON_ARGS_A= DAEMON_ARGS_B=, e.g. DAEMON_ARGS_B=--rcvq-lock with A = B)
set -uo pipefail
A=${1:?usage: bench/sctp_ab.sh BUILD_A BUILD_B}
B=${2:?usage: bench/sctp_ab.sh BUILD_A BUILD_B}
PAIRS=${PAIRS:-5}
SECS=${SECS:-4}
SIZES=${SIZES:-30 65536}
[ "$(id -u)" -eq 0 ] || { echo "sctp_ab: needs root (namespaces, TAP)"; exit 77; }
for b in "$A" "$B"; do [ -x "$b/nstack" ] || { echo "sctp_ab: no $b/nstack"; exit 1; }; done
. "$(dirname "$0")/bridge.sh"
bench_bridge_setup ab

run() { # BUILD SIZE DAEMON_ARGS...
    local build=$1 size=$2
    shift 2
    # shellcheck disable=SC2068
    ip netns exec "$NS" "$build/nstack" daemon --dev "tap:$TA" --addr 198.18.0.2/24 \
        --ctl "$WORK/a.sock" $@ 2>"$WORK/a.log" &
    PIDS+=($!)
    # shellcheck disable=SC2068
    ip netns exec "$NS" "$build/nstack" daemon --dev "tap:$TB" --addr 198.18.0.3/24 \
        --ctl "$WORK/b.sock" --serve perf:5001 $@ 2>"$WORK/b.log" &
    PIDS+=($!)
    for s in a b; do
        for _ in $(seq 100); do [ -S "$WORK/$s.sock" ] && break; sleep 0.05; done
    done
    out=$("$build/nstack" -C "$WORK/a.sock" perf -H 198.18.0.3 -l "$SECS" -m "$size" 2>&1)
    stop_daemons
    row=$(echo "$out" | awk '/^bytes/ {getline; getline; print; exit}')
    rate=$(echo "$out" | awk '/messages\/s:/ {print $1}')
    echo "$build $size ${rate:-failed} $(echo "$row" | awk '{print $5, $8, $9}')"
}

echo "build size msgs/s Mbit/s sd_send sd_recv"
for i in $(seq "$PAIRS"); do
    for m in $SIZES; do
        if [ $((i % 2)) -eq 1 ]; then
            run "$A" "$m" ${DAEMON_ARGS_A:-}
            run "$B" "$m" ${DAEMON_ARGS_B:-}
        else
            run "$B" "$m" ${DAEMON_ARGS_B:-}
            run "$A" "$m" ${DAEMON_ARGS_A:-}
        fi
    done
done
