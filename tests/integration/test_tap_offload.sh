#!/usr/bin/env bash
# TAP with segmentation offload (`--dev tap:NAME,offload`, dev/vnet.h): three
# daemons on one bridge in a namespace, all speaking SCTP over UDP 9899.
# a and b take USO frames, c is a plain TAP. a -> b: runs of datagrams go as
# one frame and arrive as one (split by b); a -> c: the kernel cuts a's USO
# frames for c and finishes the UDP checksums from the partial sums a wrote,
# which c's UDP then verifies (no checksum errors allowed); c -> a: plain
# frames into an offload TAP. Every `nstack perf` message is accounted for,
# each way. The namespace's kernel, on the bridge, pings a and sends UDP to
# a's udp-echo: the kernel leaves UDP checksums partial for an offload TAP
# and a must finish them. tshark then checks c's capture, which holds the
# datagrams the kernel cut out of a's USO frames: no malformed packet, UDP
# (finished by the kernel from a's partial sums), CRC32c and IPv4 checksums
# good.
. "$(dirname "$0")/lib.sh"
need_root
# USO on TAPs came with Linux 6.2; older kernels refuse tap:NAME,offload.
IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
if [ "$kmaj" -lt 6 ] || { [ "$kmaj" -eq 6 ] && [ "${kmin%%[!0-9]*}" -lt 2 ]; }; then
    echo "SKIP: Linux $(uname -r) has no UDP segmentation offload for TAP (6.2+)"
    exit 77
fi
setup_bridge_ns of
TC="tofc$$"
TC=${TC:0:15}
ip netns exec "$NS" ip tuntap add dev "$TC" mode tap || fail "tuntap add $TC"
ip -n "$NS" link set "$TC" master "$BR" || fail "enslave $TC"
ip -n "$NS" link set "$TC" up
ip -n "$NS" addr add 198.18.0.1/24 dev "$BR" || fail "bridge address"
CC="$WORK/c.sock"
SVC=(--sctp-encap 9899 --serve echo:7 --serve perf:5001)
start_bridge_daemon 0 a "$TA,offload" 198.18.0.2 "$CA" "${SVC[@]}" --serve udp-echo:7
start_bridge_daemon 1 b "$TB,offload" 198.18.0.3 "$CB" "${SVC[@]}"
start_bridge_daemon 2 c "$TC" 198.18.0.4 "$CC" "${SVC[@]}" --pcap "$WORK/c.pcap"
A=198.18.0.2
B=198.18.0.3
C=198.18.0.4
a() { "$NSTACK" -C "$CA" "$@"; }
b() { "$NSTACK" -C "$CB" "$@"; }
c() { "$NSTACK" -C "$CC" "$@"; }
ctr() { # CLIENT GROUP KEY
    "$1" stats "$2" | awk -v k="$3" '$1 == k {print $2}'
}

out=$(a sctp send "$B" 7 hello offload) || { echo "$out"; fail "a -> b echo"; }
[ "$out" = "reply stream 0 ppid 0 len 13: hello offload" ] || fail "echo reply '$out'"
ok "echo a -> b"

perf_ok() { # CLIENT HOST SIZE [SECS]
    local out
    out=$("$1" perf -H "$2" -l "${4:-${SECS:-2}}" -m "$3" 2>&1) || { echo "$out"; fail "$1 perf -m $3 to $2"; }
    echo "$out" | tail -3
    echo "$out" | grep -Eq "^[0-9]+ messages/s: ([1-9][0-9]*) messages received of \1 sent$" ||
        fail "$1 perf -m $3 to $2: every message accounted for"
}
for m in 30 65536; do
    perf_ok a "$B" $m
    ok "perf a -> b -m $m"
done
g=$(ctr a dev tx_gso_frames)
s=$(ctr a dev tx_gso_segs)
r=$(ctr b dev rx_gso_segs)
[ "$g" -gt 100 ] || fail "a sent only $g USO frames"
[ "$r" -gt 1000 ] || fail "b split only $r datagrams out of USO frames"
ok "a sent $s datagrams in $g USO frames; b took $r datagrams out of them"
[ "$(ctr b dev rx_drop_gso)" = 0 ] || fail "b dropped USO frames"

c_csum0=$(ctr c udp in_csum_errors)
perf_ok a "$C" 65536 1
c_csum=$(ctr c udp in_csum_errors)
c_rx=$(ctr c udp in_datagrams)
[ "$c_csum" = "$c_csum0" ] || fail "c: $((c_csum - c_csum0)) UDP checksum errors on datagrams the kernel cut"
[ "$(ctr c dev rx_gso_frames)" = 0 ] || fail "c, a plain TAP, got USO frames"
ok "perf a -> c (plain TAP): the kernel cut a's USO frames, $c_rx datagrams, every UDP checksum good"
perf_ok c "$A" 30 1
ok "perf c -> a: plain frames into an offload TAP"

ns ping -c 3 -i 0.2 -W 2 "$A" >/dev/null || fail "kernel ping a"
out=$(a ping -c 2 -i 0.2 198.18.0.1) || { echo "$out"; fail "a ping the kernel"; }
ok "ping both ways between a and the namespace's kernel"

done0=$(ctr a dev rx_csum_done)
got=$(ns /usr/bin/python3 - "$A" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.bind(("198.18.0.1", 0))
for i in range(5):
    msg = b"partial checksum %d " % i + bytes(range(256)) * 4
    s.sendto(msg, (sys.argv[1], 7))
    r, _ = s.recvfrom(4096)
    assert r == msg, "echo differs"
print("5")
EOF
) || { a stats udp dev; fail "kernel UDP to a's udp-echo"; }
[ "$got" = 5 ] || fail "udp echo: $got"
done1=$(ctr a dev rx_csum_done)
[ "$(ctr a udp in_csum_errors)" = 0 ] || fail "a: UDP checksum errors"
ok "kernel UDP -> a's udp-echo: 5 echoes ($((done1 - done0)) partial checksums finished by a)"

for i in 2 1 0; do
    kill -TERM "${PIDS[$i]}"
    wait "${PIDS[$i]}" || fail "daemon $i exit status"
done
PIDS=()

command -v tshark >/dev/null || fail "tshark missing"
dec=(-d udp.port==9899,sctp)
opts=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o "sctp.checksum:CRC 32c")
n=$(tshark -r "$WORK/c.pcap" "${dec[@]}" -Y "udp && sctp" 2>/dev/null | wc -l)
[ "$n" -gt 1000 ] || fail "only $n SCTP-in-UDP packets"
bad=$(tshark -r "$WORK/c.pcap" "${dec[@]}" "${opts[@]}" \
    -Y '_ws.malformed || _ws.expert.severity >= error || sctp.checksum.status == 0 ||
        udp.checksum.status == 0 || ip.checksum.status == 0' 2>/dev/null | wc -l)
[ "$bad" -eq 0 ] || { tshark -r "$WORK/c.pcap" "${dec[@]}" "${opts[@]}" -Y \
    '_ws.malformed || _ws.expert.severity >= error' | head; fail "$bad bad packets"; }
ok "capture: $n SCTP-in-UDP packets, no malformed packet, checksums good"
echo "PASS"
