#!/usr/bin/env bash
# Two nstack daemons talking SCTP over two TAPs on a bridge in a namespace:
# the echo and discard services with `nstack sctp send`, `nstack perf`
# (SCTP_STREAM) at 30 and 65536 bytes, perf to a closed port and to an
# address nobody has, and a capture of it that tshark finds clean with the
# whole handshake in it.
. "$(dirname "$0")/lib.sh"
need_root
setup_bridge_ns sd
start_bridge_daemon 0 a "$TA" 198.18.0.2 "$CA" --pcap "$WORK/a.pcap"
start_bridge_daemon 1 b "$TB" 198.18.0.3 "$CB" --serve discard:9 --serve echo:7 --serve perf:5001
A=198.18.0.2
B=198.18.0.3

out=$("$NSTACK" -C "$CA" sctp send -i 0 -P 42 "$B" 7 hello over sctp) || { echo "$out"; fail "sctp send to echo"; }
echo "$out"
[ "$out" = "reply stream 0 ppid 42 len 15: hello over sctp" ] || fail "echo reply '$out'"
ok "echo: the message came back on its stream with its ppid"

out=$("$NSTACK" -C "$CA" sctp send -W 0.5 "$B" 9 into the void) || { echo "$out"; fail "sctp send to discard"; }
[ -z "$out" ] || fail "discard answered: '$out'"
ok "discard: accepted, no reply"

for m in 30 65536; do
    out=$("$NSTACK" -C "$CA" perf -H "$B" -l "${SECS:-5}" -m $m -D 1) || { echo "$out"; fail "perf -m $m"; }
    echo "$out"
    echo "$out" | grep -q "^SCTP STREAM TEST from $A () port 0 AF_INET to $B () port 5001 AF_INET$" ||
        fail "perf header"
    echo "$out" | grep -q "^Interim result:" || fail "no interim lines with -D 1"
    row=$(echo "$out" | awk '/^bytes/ {getline; getline; print; exit}')
    read -r rcv snd msz el tput lu ru lsd rsd <<<"$row"
    [ "$msz" = "$m" ] || fail "message size column '$msz'"
    awk -v t="$tput" -v e="$el" 'BEGIN { exit !(t > 0 && e > 0) }' || fail "throughput '$tput' elapsed '$el'"
    echo "$out" | grep -Eq "^[0-9]+ messages/s: [1-9][0-9]* messages received of [0-9]+ sent$" ||
        fail "messages/s line"
    ok "perf -m $m: $tput 10^6bits/s"
done

out=$("$NSTACK" -C "$CA" perf -H "$B" -l 1 -m 1000 -n 4 -u) || { echo "$out"; fail "perf -n 4 -u"; }
echo "$out" | grep -Eq "^[0-9]+ messages/s: ([1-9][0-9]*) messages received of \1 sent$" ||
    { echo "$out"; fail "perf -n 4 -u: every message accounted for"; }
ok "perf over 4 streams, unordered: every message accounted for"

out=$("$NSTACK" -C "$CA" perf -H "$B" -p 5002 -l 1 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "perf to a closed port succeeded"
[ "$out" = "nstack: perf: connect $B port 5002: Connection refused" ] || fail "closed port message '$out'"
ok "perf to a closed port: $out"

out=$("$NSTACK" -C "$CA" perf -H 198.18.0.99 -l 1 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "perf to nobody succeeded"
[ "$out" = "nstack: perf: connect 198.18.0.99 port 5001: No route to host" ] || fail "unreachable message '$out'"
ok "perf to an address nobody has: $out"

# ^C (SIGINT to the client) ends the test early with the table.
"$NSTACK" -C "$CA" perf -H "$B" -l 30 -m 1000 >"$WORK/intr.out" 2>&1 &
cpid=$!
sleep 1.5
kill -INT $cpid
wait $cpid || { cat "$WORK/intr.out"; fail "interrupted perf failed"; }
grep -q "messages received" "$WORK/intr.out" || { cat "$WORK/intr.out"; fail "no table after ^C"; }
ok "^C ends perf with the table"

for i in 1 0; do
    kill -TERM "${PIDS[$i]}"
    wait "${PIDS[$i]}" || fail "daemon $i exit status"
done
PIDS=()
tshark_clean "$WORK/a.pcap" || fail "tshark found malformed packets or bad checksums"
for c in 1 2 10 11; do
    n=$(tshark -r "$WORK/a.pcap" -Y "sctp.chunk_type == $c" 2>/dev/null | wc -l)
    [ "$n" -gt 0 ] || fail "no chunk of type $c (INIT=1 INIT_ACK=2 COOKIE_ECHO=10 COOKIE_ACK=11)"
done
ok "capture clean ($(tshark -r "$WORK/a.pcap" 2>/dev/null | wc -l) frames) with INIT, INIT_ACK, COOKIE_ECHO, COOKIE_ACK"
echo "PASS"
