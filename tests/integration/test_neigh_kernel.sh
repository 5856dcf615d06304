#!/usr/bin/env bash
# The neighbour engine against the Linux kernel, with real ARP on the wire:
# both sides resolve each other; STALE -> DELAY -> PROBE -> REACHABLE with the
# kernel answering; an address nobody owns fails after exactly 3 broadcast
# requests about 1 s apart; with the kernel's ARP off, unicast probes to the
# cached MAC and then FAILED. Timings are read back from a pcap of the run.
. "$(dirname "$0")/lib.sh"
need_root
setup_tap_ns nsnk
start_daemon --pcap "$WORK/neigh.pcap" \
    --sysctl neigh.default.base_reachable_time_ms=1000 \
    --sysctl neigh.default.delay_first_probe_time_ms=500
KMAC=$(ns cat "/sys/class/net/$TAP/address")
MYMAC=$(nst -j addr | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])') \
    || fail "addr -j"

state_of() { # ADDR -> state from nstack neigh show
    nst neigh show to "$1" | awk '{print $NF}'
}

# 1. nstack resolves the kernel.
nst ping -c 1 "$KERNEL_IP" >/dev/null || fail "ping kernel"
line=$(nst neigh show to "$KERNEL_IP")
[ "$line" = "$KERNEL_IP dev $TAP lladdr $KMAC REACHABLE" ] || fail "entry after resolution: '$line'"
ok "nstack resolved the kernel: $line"

# 2. The kernel resolves nstack.
ns ip neigh flush dev "$TAP"
ns ping -c 1 -W 2 "$NSTACK_IP" >/dev/null || fail "kernel ping"
kline=$(ns ip neigh show "$NSTACK_IP" dev "$TAP")
echo "$kline" | grep -q "lladdr $MYMAC" || fail "kernel entry: '$kline'"
ok "the kernel resolved nstack: $kline"

# 3. REACHABLE ages to STALE (reachable time 0.5-1.5 s), sending moves it to
#    DELAY, then PROBE (unicast), and the kernel's reply makes it REACHABLE.
sleep 1.8
[ "$(state_of $KERNEL_IP)" = STALE ] || fail "expected STALE, got $(state_of $KERNEL_IP)"
t_stale_ping=$(date +%s.%N)
nst ping -c 1 "$KERNEL_IP" >/dev/null || fail "ping in STALE"
st=$(state_of $KERNEL_IP)
[ "$st" = DELAY ] || fail "expected DELAY after sending to STALE, got $st"
sleep 0.9
st=$(state_of $KERNEL_IP)
[ "$st" = REACHABLE ] || fail "expected REACHABLE after the unicast probe, got $st"
ok "STALE -> DELAY -> PROBE -> REACHABLE"

# 4. Nobody owns 198.18.0.99: 3 broadcast requests ~1 s apart, then FAILED
#    and iputils' Destination Host Unreachable.
out=$(nst ping -c 1 -W 6 198.18.0.99)
rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "ping to nobody should exit 1, got $rc"
echo "$out" | grep -q "^From $NSTACK_IP icmp_seq=1 Destination Host Unreachable$" || fail "unreachable line"
echo "$out" | grep -q "1 packets transmitted, 0 received, +1 errors, 100% packet loss" || fail "stats line"
[ "$(nst neigh show to 198.18.0.99)" = "198.18.0.99 dev $TAP FAILED" ] || fail "FAILED entry: $(nst neigh show to 198.18.0.99)"
nst -j stats | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)["arp_cache"]
assert s["res_failed"] >= 1, s
' || fail "res_failed counter"
ok "failure path"

# 5. The kernel stops answering ARP: PROBE sends ucast_probes unicast
#    requests to the cached MAC, then FAILED.
ns ip link set "$TAP" arp off
sleep 1.8 # REACHABLE -> STALE
nst ping -c 1 -W 1 "$KERNEL_IP" >/dev/null
sleep 4.5 # DELAY 0.5 s + 3 probes 1 s apart + the last timeout
st=$(state_of $KERNEL_IP)
[ "$st" = FAILED ] || fail "expected FAILED with the kernel's ARP off, got $st"
ok "PROBE -> FAILED when the kernel stops answering"

stop_daemon || fail "daemon exit"

# Timings from the capture.
tshark -r "$WORK/neigh.pcap" -Y arp -T fields -e frame.time_relative -e eth.dst -e arp.opcode \
    -e arp.src.proto_ipv4 -e arp.dst.proto_ipv4 >"$WORK/arp.tsv" 2>/dev/null || fail "tshark"
/usr/bin/python3 - "$WORK/arp.tsv" "$NSTACK_IP" "$KMAC" <<'PY' || fail "pcap timing checks"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
me, kmac = sys.argv[2], sys.argv[3]
ours = [(float(t), dst, int(op), spa, tpa) for t, dst, op, spa, tpa in rows if spa == me and int(op) == 1]
# Failure path: exactly 3 broadcast requests for .99, about 1 s apart.
nobody = [r for r in ours if r[4] == "198.18.0.99"]
assert len(nobody) == 3, f"expected 3 requests for .99, saw {len(nobody)}"
assert all(r[1] == "ff:ff:ff:ff:ff:ff" for r in nobody), "requests for .99 must be broadcast"
gaps = [b[0] - a[0] for a, b in zip(nobody, nobody[1:])]
assert all(0.9 <= g <= 1.2 for g in gaps), f"retransmit gaps {gaps}"
# Probe paths: unicast requests to the kernel's MAC.
uni = [r for r in ours if r[1] == kmac and r[4] == "198.18.0.1"]
assert len(uni) >= 1 + 3, f"expected 1 probe (step 3) + 3 probes (step 5), saw {len(uni)}"
last3 = uni[-3:]
g = [b[0] - a[0] for a, b in zip(last3, last3[1:])]
assert all(0.9 <= x <= 1.2 for x in g), f"unicast probe gaps {g}"
print(f"ok: pcap: 3 broadcast requests for .99 with gaps {[round(x, 3) for x in gaps]} s; "
      f"{len(uni)} unicast probes, last gaps {[round(x, 3) for x in g]} s")
PY
tshark_clean "$WORK/neigh.pcap" || fail "capture not clean"
echo "PASS"
