#!/usr/bin/env bash
# A hostile ARP peer (scapy, tests/integration/hostile/arp_attacks.py) against
# the daemon on a TAP: a request flood from random senders against a small
# table, unsolicited replies, a spoofed reply within locktime, a gratuitous ARP
# against a PERMANENT entry and malformed frames. Each must be a counted drop
# or a bounded change; the daemon must stay up, keep its memory and still
# resolve and ping the kernel. docs/hostile.md records a run.
# ASan keeps freed blocks in a quarantine (256 MiB by default): 5000 received
# frames would show up as RSS growth without any leak. A 1 MiB quarantine
# keeps the use-after-free checks and makes RSS measure what is retained.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
case "$ASAN_OPTIONS" in *quarantine_size_mb*) ;; *) ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=1" ;; esac
. "$(dirname "$0")/lib.sh"
need_root
HOSTILE="$(cd "$(dirname "$0")" && pwd)/hostile"
PY=/usr/bin/python3
/usr/bin/python3 -c 'import scapy' 2>/dev/null || { echo "SKIP: python3-scapy missing"; exit 77; }
setup_tap_ns hzarp
start_daemon --pcap "$WORK/arp.pcap" \
    --sysctl neigh.default.gc_thresh3=256 --sysctl neigh.default.gc_thresh2=128 \
    --sysctl neigh.default.gc_thresh1=64 --sysctl neigh.default.locktime_ms=5000
MYMAC=$(nst -j addr | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])') \
    || fail "addr -j"
KMAC=$(ns cat "/sys/class/net/$TAP/address")

ctr() { # GROUP NAME -> value
    nst -j stats "$1" | $PY -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]][sys.argv[2]])' "$1" "$2"
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$DAEMON_PID/status"; }
neigh_count() { nst -j neigh show | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
alive() { kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$WORK/daemon.log"; fail "daemon died ($1)"; }; }
attack() { ns $PY "$HOSTILE/arp_attacks.py" "$@" --iface "$TAP" || fail "arp_attacks.py $*"; }
report() { echo "measure: $*"; }

# 0. Warm up (first resolution, first commands), then the baseline RSS.
nst ping -c 1 "$KERNEL_IP" >/dev/null || fail "first ping"
rss0=$(rss_kb)

# 1. Request flood: 5000 requests for our address from random senders.
attack flood --count 5000 --target "$NSTACK_IP" --seed 7
sleep 0.5
alive flood
n=$(neigh_count)
gauge=$(ctr gauges arp_cache_entries)
fulls=$(ctr arp_cache table_fulls)
fgc=$(ctr arp_cache forced_gc_runs)
rxreq=$(ctr arp rx_requests)
txrep=$(ctr arp tx_replies)
allocs=$(ctr arp_cache allocs)
report "flood: neigh show $n entries, gauge $gauge, table_fulls $fulls, forced_gc_runs $fgc," \
    "rx_requests $rxreq, tx_replies $txrep, allocs $allocs"
[ "$n" -le 256 ] || fail "table has $n entries, above gc_thresh3 256"
[ "$gauge" -le 256 ] || fail "gauge arp_cache_entries $gauge above 256"
[ "$n" -eq "$gauge" ] || fail "neigh show ($n) and the gauge ($gauge) disagree"
[ "$rxreq" -ge 5000 ] || fail "rx_requests $rxreq < 5000"
[ $((fulls + fgc)) -gt 0 ] || fail "neither table_fulls nor forced_gc_runs moved"
[ "$fulls" -gt 0 ] || fail "table_fulls did not move"
ok "flood: table bounded at $n <= 256 entries"
# Forget the kernel so that the ping has to resolve it in the full table.
nst neigh del "$KERNEL_IP" dev "$TAP" || fail "neigh del kernel"
nst ping -c 3 "$KERNEL_IP" >"$WORK/ping.out" || { cat "$WORK/ping.out"; fail "ping after flood"; }
cat "$WORK/ping.out"
grep -q "3 packets transmitted, 3 received" "$WORK/ping.out" || fail "ping stats after flood"
ok "still resolves and pings the kernel after the flood"
rss1=$(rss_kb)
grow=$((rss1 - rss0))
report "rss before $rss0 kB after $rss1 kB growth $grow kB"
# Bound: 256 entries of a few hundred bytes plus the 1 MiB quarantine and
# allocator slack stay under 8 MiB; keeping one ~2 KiB buffer per flood frame
# (a leak, or an unbounded table or queue) would be about 10 MiB and fail.
[ "$grow" -lt 8192 ] || fail "RSS grew by $grow kB"
ok "RSS growth $grow kB"

# 2. Replies nobody asked for: no entry, ignored_unsolicited counted.
u0=$(ctr arp ignored_unsolicited)
attack unsolicited --count 20 --sender-base 198.18.0.100 --target "$NSTACK_IP" --dst-mac "$MYMAC"
sleep 0.3
u1=$(ctr arp ignored_unsolicited)
report "unsolicited: ignored_unsolicited $u0 -> $u1"
[ $((u1 - u0)) -eq 20 ] || fail "ignored_unsolicited moved by $((u1 - u0)), expected 20"
for ip in 198.18.0.100 198.18.0.110 198.18.0.119; do
    [ -z "$(nst neigh show to $ip)" ] || fail "entry created for unsolicited $ip: $(nst neigh show to $ip)"
done
ok "unsolicited replies create no entry"

# 3. Spoofed reply within locktime (5 s): the kernel's entry keeps its MAC.
nst neigh del "$KERNEL_IP" dev "$TAP" >/dev/null 2>&1
nst ping -c 1 "$KERNEL_IP" >/dev/null || fail "ping to resolve the kernel"
line=$(nst neigh show to "$KERNEL_IP")
echo "$line" | grep -q "lladdr $KMAC " || fail "kernel entry: '$line'"
l0=$(ctr arp ignored_locktime)
attack spoof --spa "$KERNEL_IP" --mac 02:66:66:66:66:66 --target "$NSTACK_IP" --dst-mac "$MYMAC"
sleep 0.3
l1=$(ctr arp ignored_locktime)
line2=$(nst neigh show to "$KERNEL_IP")
report "spoof: ignored_locktime $l0 -> $l1; entry '$line2'"
echo "$line2" | grep -q "lladdr $KMAC " || fail "spoofed reply changed the entry: '$line2'"
[ $((l1 - l0)) -eq 1 ] || fail "ignored_locktime moved by $((l1 - l0))"
ok "spoofed reply within locktime ignored"

# 4. Gratuitous ARP against a PERMANENT entry.
nst neigh add 198.18.0.50 lladdr 02:00:00:00:00:50 dev "$TAP" nud permanent || fail "neigh add"
p0=$(ctr arp ignored_permanent)
attack garp --spa 198.18.0.50 --mac 02:66:66:66:66:50
sleep 0.3
p1=$(ctr arp ignored_permanent)
line=$(nst neigh show to 198.18.0.50)
report "garp: ignored_permanent $p0 -> $p1; entry '$line'"
[ "$line" = "198.18.0.50 dev $TAP lladdr 02:00:00:00:00:50 PERMANENT" ] || fail "permanent entry: '$line'"
[ $((p1 - p0)) -eq 1 ] || fail "ignored_permanent moved by $((p1 - p0))"
ok "gratuitous ARP for a PERMANENT entry ignored"

# 5. Malformed frames, 10 rounds of 8 kinds.
s0=$(ctr arp drop_short); f0=$(ctr arp drop_bad_format); o0=$(ctr arp drop_bad_op); r0=$(ctr arp rx)
attack malformed --count 10 --spa 198.18.0.77 --target "$NSTACK_IP"
sleep 0.3
alive malformed
s1=$(ctr arp drop_short); f1=$(ctr arp drop_bad_format); o1=$(ctr arp drop_bad_op); r1=$(ctr arp rx)
report "malformed: rx +$((r1 - r0)) drop_short +$((s1 - s0)) drop_bad_format +$((f1 - f0)) drop_bad_op +$((o1 - o0))"
[ $((r1 - r0)) -eq 80 ] || fail "arp rx moved by $((r1 - r0)), expected 80"
[ $((s1 - s0)) -eq 20 ] || fail "drop_short moved by $((s1 - s0)), expected 20"
[ $((f1 - f0)) -eq 40 ] || fail "drop_bad_format moved by $((f1 - f0)), expected 40"
[ $((o1 - o0)) -eq 20 ] || fail "drop_bad_op moved by $((o1 - o0)), expected 20"
[ -z "$(nst neigh show to 198.18.0.77)" ] || fail "malformed frames created an entry"
ok "malformed ARP counted and dropped"

nst ping -c 3 "$KERNEL_IP" >/dev/null || fail "final ping"
ok "final ping to the kernel"
nst -j stats gauges arp arp_cache >"$WORK/stats.json"
cat "$WORK/stats.json"; echo
stop_daemon || fail "daemon exit status (ASan report?): $(tail -20 "$WORK/daemon.log")"

# The capture: whatever the daemon itself sent must be well formed.
tshark_clean "$WORK/arp.pcap" "eth.src == $MYMAC" || fail "daemon's frames not clean"
nsent=$(tshark -r "$WORK/arp.pcap" -Y "eth.src == $MYMAC && arp.opcode == 2" 2>/dev/null | wc -l)
report "pcap: $nsent ARP replies from the daemon"
[ "$nsent" -le $((txrep + 10)) ] || fail "pcap has $nsent replies, counters said $txrep"
echo "PASS"
