#!/usr/bin/env bash
# Hosted mode: two `nstack daemon --sctp-udp` on 127.0.0.1 with their own
# UDP ports, SCTP over UDP encapsulation (RFC 6951) between them through
# the host's UDP sockets. No root, no TAP: run as root, the daemons drop to
# `nobody` (setpriv) to prove it. Checks: sctp send to the echo service
# (peer port from sysctl sctp.encap_port), nstack perf with 30-byte and
# 64 KiB messages (peer port from -H HOST:UDPPORT), sctp show during a
# run (association and learned UDP port), udp_host counters in stats, an
# association to an unused UDP port failing at once on the ICMP port
# unreachable (IP_RECVERR, RFC 6951 5.6), the
# default control socket path of an unprivileged daemon, a clean exit
# (ASan), and the capture through tshark (SCTP in UDP, CRC32c good).
# Usage: test_hosted.sh [path/to/nstack]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] && NSTACK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$NSTACK" ] || fail "no nstack binary at $NSTACK"

hosted_init

start_hosted_pair --serve echo:7 --serve perf:5001 --sysctl "sctp.encap_port=@PB@" \
    --pcap "$WORK/a.pcap" -- --serve echo:7 --serve perf:5001
ok "daemons on 127.0.0.1:$PA and :$PB"
if [ ${#RUNAS[@]} -gt 0 ]; then
    [ "$(stat -c %U "$WORK/a.sock")" = nobody ] || fail "daemon a does not run as nobody"
fi
a() { "$NSTACK" -C "$WORK/a.sock" "$@"; }
b() { "$NSTACK" -C "$WORK/b.sock" "$@"; }

[ "$(a sysctl -n sctp.udp_port)" = "$PA" ] || fail "sctp.udp_port is not $PA"
[ "$(a sysctl -n sctp.encap_port)" = "$PB" ] || fail "sctp.encap_port is not $PB"
[ "$(b sysctl -n sctp.encap_port)" = 9899 ] || fail "hosted default sctp.encap_port is not 9899"
a sysctl -w sctp.udp_port=1 >/dev/null 2>&1 && fail "sctp.udp_port changed in hosted mode"

# The echo service, peer port from sysctl sctp.encap_port.
out=$(a sctp send 127.0.0.1 7 hello hosted) || fail "sctp send: $out"
[ "$out" = "reply stream 0 ppid 0 len 12: hello hosted" ] || fail "echo reply: $out"
ok "sctp send to the echo service"

# perf, 30-byte messages, b -> a with the port in -H.
out=$(b perf -H "127.0.0.1:$PA" -l 2 -m 30) || { echo "$out"; fail "perf -m 30"; }
echo "$out"
# No interface of its own: the header names the host's route source.
grep -q "^SCTP STREAM TEST from 127.0.0.1 () port 0 AF_INET to 127.0.0.1 () port 5001 AF_INET$" <<<"$out" ||
    fail "perf -m 30: header"
read -r rx tx < <(perf_counts "$out")
line="$rx received of $tx sent"
[ "$rx" -gt 1000 ] && [ "$rx" = "$tx" ] || fail "perf -m 30: $line"
ok "perf -m 30: $rx messages"

# perf, 64 KiB messages, a -> b (port from the sysctl), with sctp show
# looked at while it runs.
a perf -H 127.0.0.1 -l 3 -m 65536 >"$WORK/perf64.out" 2>&1 &
perf_pid=$!
show=
for _ in $(seq 40); do
    sleep 0.1
    show=$(a sctp show)
    grep -q "ESTABLISHED 127.0.0.1:[0-9]* -> 127.0.0.1:5001" <<<"$show" && break
done
wait $perf_pid || { cat "$WORK/perf64.out"; fail "perf -m 65536"; }
cat "$WORK/perf64.out"
grep -q "ESTABLISHED 127.0.0.1:[0-9]* -> 127.0.0.1:5001" <<<"$show" ||
    { echo "$show"; fail "sctp show: no association to 5001"; }
grep -q "^  path 127.0.0.1 active confirmed primary .* udp $PB\$" <<<"$show" ||
    { echo "$show"; fail "sctp show: the path's UDP port is not $PB"; }
ok "sctp show: the association and its UDP port"
read -r rx tx < <(perf_counts "$(cat "$WORK/perf64.out")")
line="$rx received of $tx sent"
[ "$rx" -gt 10 ] && [ "$rx" = "$tx" ] || fail "perf -m 65536: $line"
ok "perf -m 65536: $rx messages"

# udp_host counters: datagrams both ways, no drop, no error.
stats=$(a stats udp_host) || fail "stats udp_host"
echo "$stats"
val() { echo "$stats" | awk -v k="$1" '$1 == k {print $2}'; }
[ "$(val rx_datagrams)" -gt 1000 ] || fail "udp_host rx_datagrams"
[ "$(val tx_datagrams)" -gt 1000 ] || fail "udp_host tx_datagrams"
for k in rx_short rx_trunc rx_nomem rx_errors tx_bad_dst tx_errors pcap_errors; do
    [ "$(val $k)" = 0 ] || fail "udp_host $k = $(val $k)"
done
sctp=$(a stats sctp)
for k in rx_bad_csum rx_malformed rx_ootb; do
    v=$(echo "$sctp" | awk -v k="$k" '$1 == k {print $2}')
    [ "$v" = 0 ] || fail "sctp $k = $v"
done
ok "udp_host counters"

# A UDP port where nobody listens: the kernel's ICMP port unreachable
# reaches the daemon through IP_RECVERR and ends the handshake at once
# (RFC 6951 5.6) instead of after INIT retransmissions.
PU=$((PB + 1))
if command -v ss >/dev/null; then
    while [ -n "$(ss -Hunl "sport = :$PU")" ]; do PU=$((PU + 1)); done
fi
t0=$(date +%s%N)
out=$(b perf -H "127.0.0.1:$PU" -l 1 2>&1)
rc=$?
t1=$(date +%s%N)
echo "$out"
[ $rc -ne 0 ] || fail "perf to an unused UDP port succeeded"
[ $(((t1 - t0) / 1000000)) -lt 2000 ] || fail "port unreachable took $(((t1 - t0) / 1000000)) ms"
stats=$(b stats udp_host) || fail "stats udp_host"
echo "$stats" | grep "icmp\|_errors\|retries"
[ "$(val icmp_port_unreach)" -ge 1 ] || fail "udp_host icmp_port_unreach $(val icmp_port_unreach)"
[ "$(val icmp_aborts)" -ge 1 ] || fail "udp_host icmp_aborts $(val icmp_aborts)"
for k in rx_errors tx_errors; do
    [ "$(val $k)" = 0 ] || fail "udp_host $k = $(val $k) after the port unreachable"
done
ok "perf to an unused UDP port: refused on the ICMP port unreachable in $(((t1 - t0) / 1000000)) ms"

# What a sent and received, for the capture check below (a exchanges
# nothing more from here on).
ast=$(a stats udp_host)
a_dgrams=$(($(echo "$ast" | awk '$1 == "tx_datagrams" {print $2}') + \
    $(echo "$ast" | awk '$1 == "rx_datagrams" {print $2}')))
a_gso=$(echo "$ast" | awk '$1 == "tx_gso_runs" {print $2}')
a_gro=$(echo "$ast" | awk '$1 == "rx_gro_buffers" {print $2}')

# Clean exits (ASan reports would make them fail).
for p in "$A_PID" "$B_PID"; do
    kill -TERM "$p"
    wait "$p" || { cat "$WORK/a.log" "$WORK/b.log"; fail "daemon exit status"; }
done
PIDS=()
ok "daemons stopped cleanly"

# The capture: SCTP inside UDP, nothing malformed, every CRC32c good.
if command -v tshark >/dev/null; then
    dec=(-d "udp.port==$PA,sctp" -d "udp.port==$PB,sctp")
    n=$(tshark -r "$WORK/a.pcap" "${dec[@]}" -Y sctp 2>/dev/null | wc -l)
    [ "$n" -gt 1000 ] || fail "capture: $n SCTP packets"
    bad=$(tshark -r "$WORK/a.pcap" "${dec[@]}" -o "sctp.checksum:CRC 32c" \
        -Y '_ws.malformed || _ws.expert.severity >= error || sctp.checksum.status == 0' | wc -l)
    [ "$bad" -eq 0 ] || fail "capture: $bad bad packets"
    types=$(tshark -r "$WORK/a.pcap" "${dec[@]}" -T fields -e sctp.chunk_type | head -4 |
        tr '\n,' '  ' | tr -s ' ')
    [ "$types" = "1 2 10 11 " ] || fail "capture: handshake chunks '$types'"
    ok "capture: $n SCTP-in-UDP packets, CRC32c good, INIT/INIT ACK/COOKIE ECHO/COOKIE ACK"
    # One record per datagram as on the wire, although a sent runs of them
    # as single UDP_SEGMENT sends and may have received coalesced buffers.
    read -r frames maxlen < <(tshark -r "$WORK/a.pcap" -T fields -e frame.len 2>/dev/null |
        awk '{n++; if ($1 > m) m = $1} END {print n + 0, m + 0}')
    echo "measure: capture: $frames records (udp_host datagrams $a_dgrams, tx_gso_runs $a_gso," \
        "rx_gro_buffers $a_gro), longest frame $maxlen bytes"
    [ "$a_gso" -gt 0 ] || fail "no UDP_SEGMENT run: the capture check proves nothing"
    [ "$frames" -eq "$a_dgrams" ] || fail "capture: $frames records for $a_dgrams datagrams"
    [ "$maxlen" -le 1514 ] || fail "capture: a $maxlen-byte frame (a whole GSO run?)"
    ok "capture: one record per datagram, none longer than the path MTU"
else
    echo "tshark missing: capture not checked"
fi

# An unprivileged daemon's default control socket, found by a client of
# the same user (XDG_RUNTIME_DIR pointed into $WORK).
if [ ${#RUNAS[@]} -gt 0 ] || [ "$(id -u)" -ne 0 ]; then
    mkdir -m 0700 "$WORK/xdg"
    [ ${#RUNAS[@]} -gt 0 ] && chown nobody "$WORK/xdg"
    env -u NSTACK_CTL XDG_RUNTIME_DIR="$WORK/xdg" "${RUNAS[@]}" "$NSTACK" daemon \
        --sctp-udp "127.0.0.1:$PA" >"$WORK/c.log" 2>&1 &
    c_pid=$!
    PIDS+=("$c_pid")
    for _ in $(seq 100); do [ -S "$WORK/xdg/nstack/udp-$PA.sock" ] && break; sleep 0.05; done
    [ -S "$WORK/xdg/nstack/udp-$PA.sock" ] || { cat "$WORK/c.log"; fail "default socket path"; }
    if ! ls /run/nstack/*.sock >/dev/null 2>&1; then
        v=$(env -u NSTACK_CTL XDG_RUNTIME_DIR="$WORK/xdg" "${RUNAS[@]}" "$NSTACK" sysctl -n \
            sctp.udp_port) || fail "client did not find the default socket"
        [ "$v" = "$PA" ] || fail "default socket: sctp.udp_port $v"
        ok "client found $WORK/xdg/nstack/udp-$PA.sock by itself"
    else
        ok "default socket $WORK/xdg/nstack/udp-$PA.sock (other daemons in /run/nstack)"
    fi
    kill -TERM "$c_pid"
    wait "$c_pid" || { cat "$WORK/c.log"; fail "daemon c exit status"; }
    PIDS=()
fi
echo "PASS"
