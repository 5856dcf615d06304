#!/usr/bin/env bash
# Stopping a daemon in the middle of a transfer (hosted mode, two daemons
# on 127.0.0.1). On SIGTERM the daemon shuts its associations down
# gracefully (RFC 9260 9.2: the SHUTDOWN acknowledges what was received,
# the peer's SHUTDOWN ACK still finds the daemon) and only then exits, so
# the peer sees a SHUTDOWN COMPLETE, not an ICMP port unreachable or
# nothing at all. A peer that does not answer (SIGSTOPped) gets an ABORT
# after --stop-timeout; a second signal stops at once.
# Usage: test_daemon_stop.sh [path/to/nstack]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] && NSTACK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$NSTACK" ] || fail "no nstack binary at $NSTACK"
hosted_init

b() { "$NSTACK" -C "$WORK/b.sock" "$@"; }
ctr() { b stats "$1" | awk -v k="$2" '$1 == k {print $2}'; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# The receiver (a) and the sender (b), on two free-looking ports.
for attempt in 1 2 3 4 5; do
    PA=$((20000 + RANDOM % 20000))
    PB=$((PA + 1))
    start_hosted b "$PB" --sysctl "sctp.encap_port=$PA" && break
done
B_PID=$STARTED_PID
start_a() { # extra daemon args
    start_hosted a "$PA" --serve discard:9 --serve perf:5001 "$@" || fail "daemon a: port $PA taken"
    A_PID=$STARTED_PID
}
# Sends to a for up to 20 s in the background; sets PERF_PID.
start_perf() {
    b perf -H "127.0.0.1:$PA" -l 20 -m 1000 >"$WORK/perf.out" 2>&1 &
    PERF_PID=$!
    for _ in $(seq 100); do
        grep -q "^SCTP STREAM TEST" "$WORK/perf.out" && return 0
        sleep 0.05
    done
    cat "$WORK/perf.out"
    fail "perf did not start"
}
# stop_a SIGNAL...: signals a (one per argument, 50 ms apart) and waits for
# its exit; sets STOP_MS and STOP_RC.
stop_a() {
    local t0
    t0=$(date +%s%N)
    for sig in "$@"; do
        kill "-$sig" "$A_PID"
        sleep 0.05
    done
    wait "$A_PID"
    STOP_RC=$?
    STOP_MS=$(ms_since "$t0")
}

# 1. Graceful: the transfer is cut, the association ends in a shutdown.
start_a
start_perf
sleep 1
sh0=$(ctr sctp shutdowns) ab0=$(ctr sctp aborts_rx) ic0=$(ctr udp_host icmp_port_unreach)
stop_a TERM
wait "$PERF_PID"
echo "measure: SIGTERM mid-transfer: daemon exited $STOP_RC after $STOP_MS ms"
[ "$STOP_RC" -eq 0 ] || fail "exit status $STOP_RC"
sleep 0.2
sh1=$(ctr sctp shutdowns) ab1=$(ctr sctp aborts_rx) ic1=$(ctr udp_host icmp_port_unreach)
echo "measure: peer: shutdowns +$((sh1 - sh0)) aborts_rx +$((ab1 - ab0)) icmp_port_unreach +$((ic1 - ic0))"
[ $((sh1 - sh0)) -eq 1 ] || fail "the peer saw no completed shutdown"
[ $((ab1 - ab0)) -eq 0 ] || fail "the peer was aborted"
[ $((ic1 - ic0)) -eq 0 ] || fail "the peer's SHUTDOWN ACK met a closed port"
[ "$(b -j sctp)" = "" ] || [ "$(b -j sctp)" = "[]" ] || fail "peer still has associations: $(b sctp)"
grep -q "aborted at stop" "$WORK/a.log" && fail "a aborted instead of shutting down"
ok "SIGTERM mid-transfer: graceful shutdown, the peer is told, no ICMP"

# 2. The peer does not answer: ABORT after --stop-timeout.
start_a --stop-timeout 1
start_perf
sleep 0.5
kill -STOP "$B_PID"
stop_a TERM
kill -CONT "$B_PID"
wait "$PERF_PID"
echo "measure: silent peer, --stop-timeout 1: daemon exited $STOP_RC after $STOP_MS ms"
[ "$STOP_RC" -eq 0 ] || fail "exit status $STOP_RC"
[ "$STOP_MS" -ge 900 ] && [ "$STOP_MS" -lt 4000 ] || fail "stop took $STOP_MS ms for a 1 s timeout"
grep -q "1 association(s) aborted at stop (--stop-timeout)" "$WORK/a.log" || fail "no abort line"
sleep 0.3
[ "$(ctr sctp aborts_rx)" -ge 1 ] || fail "the peer got no ABORT"
ok "silent peer: ABORT after the stop timeout"

# 3. A second signal cuts the wait short.
start_a --stop-timeout 30
start_perf
sleep 0.5
kill -STOP "$B_PID"
stop_a TERM INT
kill -CONT "$B_PID"
wait "$PERF_PID"
echo "measure: second signal: daemon exited $STOP_RC after $STOP_MS ms"
[ "$STOP_MS" -lt 3000 ] || fail "a second signal did not stop at once ($STOP_MS ms)"
grep -q "aborted at stop (second signal)" "$WORK/a.log" || fail "no second-signal line"
ok "a second signal stops at once"
