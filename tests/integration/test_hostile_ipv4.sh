#!/usr/bin/env bash
# A hostile IPv4 peer (scapy, tests/integration/hostile/ipv4_attacks.py)
# against the daemon on a TAP: a flood of never-completed fragments against a
# 1 MiB reassembly cap, overlapping, duplicate, tiny and past-65535 fragments,
# and broken headers. Each must be a counted drop; reassembly memory stays
# under the cap and drains after ipfrag_time; the daemon stays up, keeps its
# memory and still answers the kernel's pings, fragmented ones included.
# docs/hostile.md records a run.
# ASan's quarantine of freed blocks (256 MiB by default) would count 20000
# freed fragments as RSS growth; 1 MiB keeps the checks and makes RSS honest.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
case "$ASAN_OPTIONS" in *quarantine_size_mb*) ;; *) ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=1" ;; esac
. "$(dirname "$0")/lib.sh"
need_root
HOSTILE="$(cd "$(dirname "$0")" && pwd)/hostile"
PY=/usr/bin/python3
$PY -c 'import scapy' 2>/dev/null || { echo "SKIP: python3-scapy missing"; exit 77; }
setup_tap_ns hzip
CAP=1048576
start_daemon --pcap "$WORK/ip.pcap" \
    --sysctl ipv4.ipfrag_high_thresh=$CAP --sysctl ipv4.ipfrag_time_ms=2000
MYMAC=$(nst -j addr | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])') \
    || fail "addr -j"
KMAC=$(ns cat "/sys/class/net/$TAP/address")

ctr() { # GROUP NAME -> value
    nst -j stats "$1" | $PY -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]][sys.argv[2]])' "$1" "$2"
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$DAEMON_PID/status"; }
alive() { kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$WORK/daemon.log"; fail "daemon died ($1)"; }; }
attack() {
    ns $PY "$HOSTILE/ipv4_attacks.py" "$@" --iface "$TAP" --dst "$NSTACK_IP" --dst-mac "$MYMAC" \
        --src-mac "$KMAC" || fail "ipv4_attacks.py $*"
}
report() { echo "measure: $*"; }
kping() { # ping from the kernel, ARGS...
    ns ping -c 3 -i 0.2 -W 2 "$@" "$NSTACK_IP" >"$WORK/kping.out" 2>&1 ||
        { cat "$WORK/kping.out"; fail "kernel ping $* failed"; }
    grep -q "3 packets transmitted, 3 received" "$WORK/kping.out" || fail "kernel ping $*"
}
# The stack's counter deltas around one attack: snap NAME..., then delta NAME.
declare -A SNAP
snap() { for k in "$@"; do SNAP[$k]=$(ctr "${k%%.*}" "${k#*.}"); done; }
delta() { echo $(($(ctr "${1%%.*}" "${1#*.}") - SNAP[$1])); }

kping -s 56
rss0=$(rss_kb)

# 1. Fragment flood: 20000 first fragments (1000 bytes of payload), never
#    completed, from 65534 possible sources and random IDs.
snap ip.reasm_mem_drops ip.reasm_timeouts ip.reasm_reqds
# Sample the gauge while the flood runs (bounded, and it stops by itself
# once cleanup has removed the control socket).
(for _ in $(seq 300); do
    [ -S "$CTL" ] || break
    nst -j stats gauges 2>/dev/null
    echo
    sleep 0.2
done) >"$WORK/gauges.jsonl" &
SAMPLER=$!
attack fragflood --count 20000 --size 1000 --seed 5
sleep 0.2
kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null
alive fragflood
mem=$(ctr gauges ip_reasm_mem_bytes)
dg=$(ctr gauges ip_reasm_datagrams)
maxmem=$($PY -c '
import json, sys
m = 0
for l in open(sys.argv[1]):
    l = l.strip()
    if l:
        m = max(m, json.loads(l)["gauges"]["ip_reasm_mem_bytes"])
print(m)' "$WORK/gauges.jsonl")
samples=$(grep -c gauges "$WORK/gauges.jsonl")
md=$(delta ip.reasm_mem_drops)
rq=$(delta ip.reasm_reqds)
report "fragflood: reasm_reqds +$rq, reasm_mem_drops +$md, after: ip_reasm_mem_bytes $mem" \
    "ip_reasm_datagrams $dg; max of $samples samples during the flood $maxmem"
[ "$rq" -eq 20000 ] || fail "reasm_reqds moved by $rq, expected 20000"
[ "$mem" -gt 0 ] && [ "$mem" -le $CAP ] || fail "reassembly memory $mem not in (0, $CAP]"
[ "$maxmem" -le $CAP ] || fail "reassembly memory reached $maxmem during the flood"
[ "$md" -gt 0 ] || fail "reasm_mem_drops did not move"
[ $((md + dg)) -eq 20000 ] || fail "evicted $md + held $dg != 20000 datagrams"
ok "reassembly memory bounded: $mem <= $CAP bytes, $dg datagrams held, $md evicted"
sleep 2.3 # ipfrag_time 2 s
mem=$(ctr gauges ip_reasm_mem_bytes)
dg2=$(ctr gauges ip_reasm_datagrams)
to=$(delta ip.reasm_timeouts)
report "after ipfrag_time: ip_reasm_mem_bytes $mem ip_reasm_datagrams $dg2 reasm_timeouts +$to"
[ "$mem" -eq 0 ] && [ "$dg2" -eq 0 ] || fail "reassembly not drained: $mem bytes, $dg2 datagrams"
[ "$to" -eq "$dg" ] || fail "reasm_timeouts moved by $to, expected $dg"
ok "reassembly drained after ipfrag_time, $to timeouts"
kping -s 56
kping -s 4000
ok "the kernel's pings (56 and 4000 bytes) still answered"
rss1=$(rss_kb)
grow=$((rss1 - rss0))
report "rss before $rss0 kB after $rss1 kB growth $grow kB"
# Bound: the 1 MiB cap plus the 1 MiB quarantine and allocator slack stay
# under 8 MiB; keeping the evicted fragments (20000 x ~2 KiB = ~40 MiB) or
# any per-fragment leak would be far above it.
[ "$grow" -lt 8192 ] || fail "RSS grew by $grow kB"
ok "RSS growth $grow kB"

one() { # MODE COUNTERS... : send MODE, print the deltas
    local mode=$1
    shift
    # Leftovers of the previous attack time out (reasm_fails) first.
    for _ in $(seq 40); do [ "$(ctr gauges ip_reasm_datagrams)" -eq 0 ] && break; sleep 0.1; done
    snap "$@" icmp.out_echo_reps ip.reasm_oks
    attack "$mode"
    sleep 0.3
    alive "$mode"
    local out="$mode:"
    for k in "$@" icmp.out_echo_reps ip.reasm_oks; do out="$out $k +$(delta "$k")"; done
    report "$out"
}

# 2. Overlap and duplicate: the datagram is dropped, no echo reply.
one overlap ip.reasm_overlaps
[ "$(delta ip.reasm_overlaps)" -eq 1 ] && [ "$(delta icmp.out_echo_reps)" -eq 0 ] &&
    [ "$(delta ip.reasm_oks)" -eq 0 ] || fail "overlap"
one duplicate ip.reasm_overlaps
[ "$(delta ip.reasm_overlaps)" -eq 1 ] && [ "$(delta icmp.out_echo_reps)" -eq 0 ] &&
    [ "$(delta ip.reasm_oks)" -eq 0 ] || fail "duplicate"
ok "overlapping and duplicate fragments drop the datagram, no reply"

# 3. Tiny fragments: a non-final one that is not a multiple of 8 bytes is
#    dropped; 8-byte ones rewriting an earlier one (RFC 1858) drop the
#    datagram; honest 8-byte ones are legal (RFC 791) and answered.
one tinyodd ip.reasm_fails
[ "$(delta ip.reasm_fails)" -eq 1 ] || fail "tinyodd"
one tiny1858 ip.reasm_overlaps
[ "$(delta ip.reasm_overlaps)" -eq 1 ] && [ "$(delta icmp.out_echo_reps)" -eq 0 ] || fail "tiny1858"
one tiny8 ip.reasm_fails
[ "$(delta ip.reasm_oks)" -eq 1 ] && [ "$(delta icmp.out_echo_reps)" -eq 1 ] || fail "tiny8"
ok "tiny fragments"

# 4. Past 65535 bytes (ping of death): both fragments dropped and counted.
one beyond ip.reasm_fails
[ "$(delta ip.reasm_fails)" -eq 2 ] || fail "beyond"
ok "fragments ending past 65535 dropped"

# 5. Broken headers, 10 rounds of 7 kinds.
snap ip.in_receives ip.in_hdr_errors ip.in_csum_errors ip.in_truncated icmp.in_msgs
ns $PY "$HOSTILE/ipv4_attacks.py" badhdr --count 10 --iface "$TAP" --dst "$NSTACK_IP" \
    --dst-mac "$MYMAC" --src-mac "$KMAC" || fail badhdr
sleep 0.3
alive badhdr
report "badhdr: in_receives +$(delta ip.in_receives) in_hdr_errors +$(delta ip.in_hdr_errors)" \
    "in_csum_errors +$(delta ip.in_csum_errors) in_truncated +$(delta ip.in_truncated)" \
    "icmp.in_msgs +$(delta icmp.in_msgs)"
[ "$(delta ip.in_receives)" -eq 70 ] || fail "in_receives"
[ "$(delta ip.in_hdr_errors)" -eq 60 ] || fail "in_hdr_errors"
[ "$(delta ip.in_csum_errors)" -eq 10 ] || fail "in_csum_errors"
[ "$(delta ip.in_truncated)" -eq 10 ] || fail "in_truncated"
[ "$(delta icmp.in_msgs)" -eq 0 ] || fail "a broken header reached ICMP"
ok "broken headers counted"

kping -s 4000
ok "final fragmented ping"
nst -j stats gauges ip icmp >"$WORK/stats.json"
cat "$WORK/stats.json"; echo
stop_daemon || fail "daemon exit status (ASan report?): $(tail -20 "$WORK/daemon.log")"
tshark_clean "$WORK/ip.pcap" "eth.src == $MYMAC" || fail "daemon's frames not clean"
nsent=$(tshark -r "$WORK/ip.pcap" -Y "eth.src == $MYMAC" 2>/dev/null | wc -l)
report "pcap: $nsent frames from the daemon, all clean"
echo "PASS"
