#!/usr/bin/env bash
# Kill and restart (RFC 9260 8.4, 5.2): daemon A streams SCTP messages to
# daemon B (`nstack perf`, SCTP_STREAM) while B is killed with SIGKILL and
# restarted on the same TAP (same MAC) and address. B's new incarnation
# has no TCB: A's retransmissions are out of the blue there and draw an
# ABORT with the T bit, which ends A's association (COMM_LOST); perf on A
# reports the failure and A stays up. Numbered messages to B's echo service
# before and after (each `sctp send` a new association) come back exactly
# once each, unchanged; a new perf run forms a new association. Both
# daemons are alive at the end, A's capture is tshark-clean and holds the
# ABORT.
. "$(dirname "$0")/lib.sh"
need_root
ok() { echo "ok [${SECONDS}s]: $*"; }
PY=${PY:-python3}
setup_bridge_ns rs
A=198.18.0.2
B=198.18.0.3
start_b() {
    start_bridge_daemon 1 b "$TB" "$B" "$CB" --serve discard:9 --serve echo:7 --serve perf:5001
}
start_bridge_daemon 0 a "$TA" "$A" "$CA" --pcap "$WORK/a.pcap"
start_b

ctr() { # CTL GROUP NAME... -> values, one line
    local ctl=$1
    shift
    "$NSTACK" -C "$ctl" -j stats "$1" | $PY -c '
import json, sys
g = json.load(sys.stdin)[sys.argv[1]]
print(" ".join(str(g[n]) for n in sys.argv[2:]))' "$@"
}
alive() {
    kill -0 "${PIDS[0]}" 2>/dev/null || { cat "$WORK/a.log"; fail "daemon A died ($1)"; }
    kill -0 "${PIDS[1]}" 2>/dev/null || { cat "$WORK/b.log"; fail "daemon B died ($1)"; }
}
# echo_round FIRST LAST: numbered messages to B's echo service; each must
# come back once (one reply line in the half second `sctp send` waits),
# unchanged, with its number as ppid (offset past the IANA-assigned ppids,
# which tshark would decode).
echo_round() {
    for i in $(seq "$1" "$2"); do
        msg="restart-test message $i"
        ppid=$((3000000 + i))
        out=$("$NSTACK" -C "$CA" sctp send -W 0.5 -P $ppid "$B" 7 "$msg") || { echo "$out"; fail "echo $i"; }
        [ "$out" = "reply stream 0 ppid $ppid len ${#msg}: $msg" ] || fail "echo $i: '$out'"
    done
}

echo_round 1 4
ok "before: 4 numbered messages echoed once each"

# A streams to B's perf service; B dies under it and comes back.
"$NSTACK" -C "$CA" perf -H "$B" -l 20 -m 1000 >"$WORK/perf1.out" 2>&1 &
perf=$!
sleep 1
lost0=$(ctr "$CA" sctp comm_lost)
kill -KILL "${PIDS[1]}"
wait "${PIDS[1]}" 2>/dev/null
t_kill=$(date +%s.%N)
sleep 1 # A retransmits into the void meanwhile
start_b
ok "B killed with SIGKILL and restarted on the same TAP and address"

# perf must end early (its association failed), well before its 20 s.
for _ in $(seq 150); do kill -0 $perf 2>/dev/null || break; sleep 0.1; done
if kill -0 $perf 2>/dev/null; then
    cat "$WORK/perf1.out"
    fail "perf still running 15 s after B's restart: A's association did not fail"
fi
wait $perf
prc=$?
t_end=$(date +%s.%N)
cat "$WORK/perf1.out"
[ $prc -ne 0 ] || fail "perf reported success across B's restart"
took=$(awk -v a="$t_kill" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }')
alive "after the restart"

read -r lost1 aborts_rx <<<"$(ctr "$CA" sctp comm_lost aborts_rx)"
read -r rx_ootb ootb <<<"$(ctr "$CB" sctp rx_ootb tx_ootb_abort)"
echo "A: comm_lost $lost0 -> $lost1, aborts_rx $aborts_rx; B (new): rx_ootb $rx_ootb tx_ootb_abort $ootb"
[ "$lost1" -gt "$lost0" ] || fail "A's association did not end with COMM_LOST"
[ "$aborts_rx" -ge 1 ] || fail "A saw no ABORT"
[ "$ootb" -ge 1 ] || fail "B's new incarnation sent no OOTB ABORT"
ok "A's association ended by B's OOTB ABORT (T bit) ${took}s after the kill; perf exit $prc"

# A keeps no live association to B:5001 from the old incarnation.
"$NSTACK" -C "$CA" sctp show >"$WORK/show.out" || fail "sctp show"
if grep -E "^assoc [0-9]+ (ESTABLISHED|SHUTDOWN)[^ ]* .* -> $B:5001$" "$WORK/show.out"; then
    fail "A still has a live association to B:5001"
fi

echo_round 5 12
ok "after: 8 more numbered messages echoed once each (new associations)"

out=$("$NSTACK" -C "$CA" perf -H "$B" -l 1 -m 1000) || { echo "$out"; fail "perf after restart"; }
echo "$out" | grep -Eq "^[0-9]+ messages/s: ([1-9][0-9]*) messages received of [0-9]+ sent$" ||
    { echo "$out"; fail "perf after restart: no messages"; }
ok "perf after the restart: a new association carries data"

alive "at the end"
for i in 1 0; do
    kill -TERM "${PIDS[$i]}"
    wait "${PIDS[$i]}" || fail "daemon $i exit status"
done
PIDS=()
tshark_clean "$WORK/a.pcap" || fail "tshark found malformed packets or bad checksums"
n=$(tshark -r "$WORK/a.pcap" -Y "sctp.chunk_type == 6 && sctp.abort_t_bit == 1 && ip.src == $B" \
    2>/dev/null | wc -l)
[ "$n" -ge 1 ] || fail "no ABORT with the T bit from B in A's capture"
ok "capture clean ($(tshark -r "$WORK/a.pcap" 2>/dev/null | wc -l) frames), $n ABORT(T) from B"
echo "PASS"
