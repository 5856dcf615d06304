#!/usr/bin/env bash
# SCTP over nstack's own UDP (RFC 6951): two nstack daemons on two TAPs on a
# bridge in a namespace, a with `--sctp-encap 9899`, b with `--sctp-encap
# 9900`. a reaches b's echo service with `sctp send B:9900` and runs
# `nstack perf -H B:9900` at 30 and 65536 bytes (sctp show: the path's UDP
# port); an association to b's unused 9899 fails at once on the ICMP port
# unreachable (RFC 6951 5.6); b reaches a through its sysctl
# sctp.encap_port. tshark then finds a's capture to be SCTP inside UDP only
# (ports 9899/9900, nothing as IP protocol 132), with every CRC32c, UDP and
# IPv4 checksum good and the whole handshake in it.
. "$(dirname "$0")/lib.sh"
need_root
setup_bridge_ns ud
start_bridge_daemon 0 a "$TA" 198.18.0.2 "$CA" --sctp-encap 9899 --pcap "$WORK/a.pcap" --serve echo:7
start_bridge_daemon 1 b "$TB" 198.18.0.3 "$CB" --sctp-encap 9900 --sysctl sctp.encap_port=9899 \
    --serve echo:7 --serve perf:5001
A=198.18.0.2
B=198.18.0.3
a() { "$NSTACK" -C "$CA" "$@"; }
b() { "$NSTACK" -C "$CB" "$@"; }
[ "$(a sysctl -n sctp.udp_port)" = 9899 ] || fail "a: sctp.udp_port"
[ "$(b sysctl -n sctp.udp_port)" = 9900 ] || fail "b: sctp.udp_port"
[ "$(b sysctl -n sctp.encap_port)" = 9899 ] || fail "b: sctp.encap_port"

out=$(a sctp send -P 42 "$B:9900" 7 hello over udp) || { echo "$out"; fail "sctp send to echo"; }
[ "$out" = "reply stream 0 ppid 42 len 14: hello over udp" ] || fail "echo reply '$out'"
ok "echo over UDP 9899 -> 9900"

out=$(b sctp send "$A" 7 and back) || { echo "$out"; fail "b: sctp send to a's echo"; }
[ "$out" = "reply stream 0 ppid 0 len 8: and back" ] || fail "echo reply from a '$out'"
ok "echo the other way, port from b's sysctl sctp.encap_port"

for m in 30 65536; do
    a perf -H "$B:9900" -l "${SECS:-2}" -m $m >"$WORK/perf$m.out" 2>&1 &
    ppid=$!
    show=
    for _ in $(seq 30); do
        sleep 0.1
        show=$(a sctp show)
        echo "$show" | grep -q "ESTABLISHED $A:[0-9]* -> $B:5001" && break
    done
    wait $ppid || { cat "$WORK/perf$m.out"; fail "perf -m $m"; }
    out=$(cat "$WORK/perf$m.out")
    echo "$out"
    echo "$show" | grep -q "^  path $B active confirmed primary .* udp 9900$" ||
        { echo "$show"; fail "sctp show: no path over UDP 9900"; }
    echo "$out" | grep -Eq "^[0-9]+ messages/s: ([1-9][0-9]*) messages received of \1 sent$" ||
        fail "perf -m $m: every message accounted for"
    ok "perf -m $m over UDP"
done

# b has nothing on 9899: its UDP answers port unreachable, which ends the
# handshake at once (RFC 6951 5.6) instead of after INIT retransmissions.
t0=$(date +%s%N)
out=$(a perf -H "$B:9899" -l 1 2>&1)
rc=$?
t1=$(date +%s%N)
[ $rc -ne 0 ] || fail "perf to an unused UDP port succeeded"
echo "$out"
[ $(((t1 - t0) / 1000000)) -lt 2000 ] || fail "port unreachable took $(((t1 - t0) / 1000000)) ms"
n=$(a stats sctp_udp | awk '$1 == "icmp_port_unreach" {print $2}')
[ "$n" -ge 1 ] || fail "icmp_port_unreach $n"
ok "perf to an unused UDP port: refused on the ICMP port unreachable ($out)"

st=$(a stats sctp_udp)
echo "$st"
for k in tx_errors tx_no_port bind_errors; do
    v=$(echo "$st" | awk -v k="$k" '$1 == k {print $2}')
    [ "$v" = 0 ] || fail "sctp_udp $k = $v"
done
[ "$(a stats sctp_glue | awk '$1 == "tx_packets" {print $2}')" = 0 ] || fail "raw IP packets sent"

for i in 1 0; do
    kill -TERM "${PIDS[$i]}"
    wait "${PIDS[$i]}" || fail "daemon $i exit status"
done
PIDS=()

command -v tshark >/dev/null || fail "tshark missing"
dec=(-d udp.port==9899,sctp -d udp.port==9900,sctp)
opts=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o "sctp.checksum:CRC 32c")
n=$(tshark -r "$WORK/a.pcap" "${dec[@]}" -Y "udp && sctp" 2>/dev/null | wc -l)
[ "$n" -gt 1000 ] || fail "only $n SCTP-in-UDP packets"
raw=$(tshark -r "$WORK/a.pcap" -Y "ip.proto == 132" 2>/dev/null | wc -l)
[ "$raw" -eq 0 ] || fail "$raw packets as IP protocol 132"
bad=$(tshark -r "$WORK/a.pcap" "${dec[@]}" "${opts[@]}" \
    -Y '(_ws.malformed || _ws.expert.severity >= error || sctp.checksum.status == 0 ||
        udp.checksum.status == 0 || ip.checksum.status == 0) && !icmp' 2>/dev/null | wc -l)
[ "$bad" -eq 0 ] || { tshark -r "$WORK/a.pcap" "${dec[@]}" "${opts[@]}" -Y \
    '_ws.malformed || _ws.expert.severity >= error' | head; fail "$bad bad packets"; }
for c in 1 2 10 11; do
    k=$(tshark -r "$WORK/a.pcap" "${dec[@]}" -Y "udp && sctp.chunk_type == $c" 2>/dev/null | wc -l)
    [ "$k" -gt 0 ] || fail "no chunk of type $c (INIT=1 INIT_ACK=2 COOKIE_ECHO=10 COOKIE_ACK=11)"
done
u=$(tshark -r "$WORK/a.pcap" -Y "icmp.type == 3 && icmp.code == 3 && udp.dstport == 9899" 2>/dev/null |
    wc -l)
[ "$u" -ge 1 ] || fail "no ICMP port unreachable quoting UDP 9899 in the capture"
ok "capture: $n SCTP-in-UDP packets, checksums good (CRC32c, UDP, IPv4), handshake, the ICMP"
echo "PASS"
