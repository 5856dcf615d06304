#!/usr/bin/env bash
# nstack against the Linux kernel over a TAP: ping both ways (56 and 4000
# bytes, the latter fragmented both ways), 1000 kernel pings with no loss,
# UDP both ways with socat, and a pcap of it all that tshark finds clean.
. "$(dirname "$0")/lib.sh"
need_root
setup_tap_ns nskp
start_daemon --pcap "$WORK/run.pcap" --serve udp-echo:7

out=$(nst ping -c 3 -i 0.2 "$KERNEL_IP") || { echo "$out"; fail "nstack ping kernel"; }
echo "$out"
echo "$out" | grep -q "^PING $KERNEL_IP ($KERNEL_IP) 56(84) bytes of data.$" || fail "ping header"
echo "$out" | grep -Eq "^64 bytes from $KERNEL_IP: icmp_seq=1 ttl=64 time=[0-9.]+ ms$" || fail "reply line"
echo "$out" | grep -q "3 packets transmitted, 3 received, 0% packet loss" || fail "ping stats"
ok "nstack pings the kernel"

out=$(nst ping -c 3 -i 0.2 -s 4000 "$KERNEL_IP") || { echo "$out"; fail "nstack ping -s 4000"; }
echo "$out" | grep -Eq "^4008 bytes from $KERNEL_IP: icmp_seq=1 ttl=64" || { echo "$out"; fail "big reply"; }
ok "nstack pings the kernel with 4000 bytes (fragmented both ways)"

out=$(ns ping -c 1000 -i 0.002 -q -W 2 "$NSTACK_IP") || { echo "$out"; fail "kernel ping 56"; }
echo "$out" | grep -q "1000 packets transmitted, 1000 received, 0% packet loss" || { echo "$out"; fail "kernel ping loss"; }
ok "kernel pings nstack 1000 times, 56 bytes, no loss"

out=$(ns ping -c 1000 -i 0.002 -q -W 2 -s 4000 "$NSTACK_IP") || { echo "$out"; fail "kernel ping 4000"; }
echo "$out" | grep -q "1000 packets transmitted, 1000 received, 0% packet loss" || { echo "$out"; fail "kernel ping 4000 loss"; }
ok "kernel pings nstack 1000 times, 4000 bytes, no loss"

# UDP: kernel -> nstack echo service and back.
reply=$(echo "hello nstack" | ns socat -T 2 - "UDP4:$NSTACK_IP:7") || fail "socat to echo"
[ "$reply" = "hello nstack" ] || fail "udp echo reply '$reply'"
ok "kernel -> nstack UDP echo"

# UDP: nstack -> kernel.
ns socat -u UDP4-RECV:5555,bind=$KERNEL_IP "OPEN:$WORK/udp.out,creat,append" &
socat_pid=$!
sleep 0.3
nst udp send "$KERNEL_IP" 5555 "datagram from nstack" || fail "udp send"
sleep 0.3
kill $socat_pid 2>/dev/null
grep -q "datagram from nstack" "$WORK/udp.out" || fail "kernel did not receive the datagram"
ok "nstack -> kernel UDP"

# UDP: kernel -> nstack receiver.
( sleep 0.5; echo "to the receiver" | ns socat -u - "UDP4:$NSTACK_IP:6666" ) &
out=$(nst udp recv 6666 -c 1 -W 5) || { echo "$out"; fail "udp recv"; }
echo "$out" | grep -q "to the receiver" || { echo "$out"; fail "udp recv content"; }
ok "kernel -> nstack UDP receive"

nst stats >"$WORK/stats.txt" || fail "stats"
stop_daemon || fail "daemon exit status"
tshark_clean "$WORK/run.pcap" || fail "tshark found malformed packets or bad checksums"
n=$(tshark -r "$WORK/run.pcap" -Y "ip.flags.mf == 1" 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || fail "no fragments in the capture"
ok "capture clean ($(tshark -r "$WORK/run.pcap" 2>/dev/null | wc -l) frames, $n first/middle fragments)"
echo "PASS"
