#!/usr/bin/env bash
# A hostile SCTP peer (scapy, tests/integration/hostile/sctp_attacks.py)
# against the daemon on a TAP (RFC 9260): two floods of 5000 INITs from
# random addresses, forged and expired COOKIE ECHOs, wrong verification tags,
# out-of-the-blue packets, lying SACKs, DATA outside the window, broken chunk
# lengths, unknown chunk and parameter types, INIT field rules, a fragment
# hole, a peer with a zero window. The script
# checks every answer on the wire and the counters; this wrapper sets the
# daemon up, bounds its memory, checks what it sent with tshark and that an
# honest association still works at the end. docs/hostile.md records a run.
# ASan's quarantine of freed blocks (256 MiB by default) would count the
# flood's freed frames as RSS growth; 1 MiB keeps the checks and makes RSS
# honest.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
case "$ASAN_OPTIONS" in *quarantine_size_mb*) ;; *) ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=1" ;; esac
. "$(dirname "$0")/lib.sh"
need_root
HOSTILE="$(cd "$(dirname "$0")" && pwd)/hostile"
PY=/usr/bin/python3
$PY -c 'import scapy.layers.sctp' 2>/dev/null || { echo "SKIP: python3-scapy missing"; exit 77; }
setup_tap_ns hzsc
# The flood's sources are off-link (198.18.1.0-198.19.255.254): the INIT
# ACKs go to the gateway, the kernel side, which does not forward them.
# Cookies live 1 s so that an expired one takes 1.3 s to make; RTO at most
# 2 s so that the zero-window phase sees a few probes.
start_daemon --pcap "$WORK/sctp.pcap" --gw "$KERNEL_IP" --serve discard:5001 --serve echo:7 \
    --sysctl sctp.valid_cookie_life_ms=1000 --sysctl sctp.rto_max_ms=2000
MYMAC=$(nst -j addr | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])') \
    || fail "addr -j"
KMAC=$(ns cat "/sys/class/net/$TAP/address")
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$DAEMON_PID/status"; }
alive() { kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$WORK/daemon.log"; fail "daemon died ($1)"; }; }
report() { echo "measure: $*"; }
attacks() {
    ns $PY "$HOSTILE/sctp_attacks.py" --iface "$TAP" --dst "$NSTACK_IP" --dst-mac "$MYMAC" \
        --kernel-mac "$KMAC" --nstack "$NSTACK" --ctl "$CTL" --pid "$DAEMON_PID" "$@"
}

# Let the daemon resolve its gateway before the flood (the kernel answers).
ns ping -c 1 -W 2 "$NSTACK_IP" >/dev/null || fail "kernel ping"
rss0=$(rss_kb)
attacks --rss-file "$WORK/flood_rss" --seed "${SEED:-1}" ${PHASES:+--phases "$PHASES"} || fail "sctp_attacks.py"
alive attacks
rss1=$(rss_kb)
grow=$((rss1 - rss0))
report "rss before $rss0 kB after all attacks $rss1 kB growth $grow kB" \
    "(flood alone +$(cat "$WORK/flood_rss") kB)"
# Bound: nothing is kept per INIT (the floods would cost 10000 x ~2 KiB =
# ~20 MiB if one buffer or TCB per INIT stayed); a reader that never reads
# may make the daemon hold its socket queue and send buffer (2 x 208 KiB);
# ASan's 1 MiB quarantine plus allocator slack stay under 8 MiB.
[ "$grow" -lt 8192 ] || fail "RSS grew by $grow kB"
ok "RSS growth $grow kB"

# A last honest association: kernel ping, then a fresh handshake by the
# script's peer, DATA and SACKs, and an ABORT.
ns ping -c 1 -W 2 "$NSTACK_IP" >/dev/null || fail "final kernel ping"
ns $PY - "$HOSTILE" "$TAP" "$NSTACK_IP" "$MYMAC" "$KMAC" "$NSTACK" "$CTL" "$DAEMON_PID" <<'EOF' || fail "final association"
import sys
sys.path.insert(0, sys.argv[1])
import sctp_attacks as s
import argparse
s.ARGS = argparse.Namespace(nstack=sys.argv[6], ctl=sys.argv[7], pid=int(sys.argv[8]), max_seconds=30)
w = s.Wire(sys.argv[2], sys.argv[4], sys.argv[5], sys.argv[3])
p = s.Peer(w, "198.18.0.19", 5001)
p.connect()
for k in range(5):
    p.exchange(b"final %d" % k)
info = p.sctp_info()
assert info["state"] == "ESTABLISHED", info
print(f"measure: final association {info['id']} ESTABLISHED, rx_data {info['counters']['rx_data']}")
p.abort()
EOF
ok "an honest association still works"
nst -j stats sctp >"$WORK/stats.json"
cat "$WORK/stats.json"; echo
left=$(nst -j sctp | $PY -c 'import json,sys; t=sys.stdin.read().strip(); print(len(json.loads(t)) if t else 0)')
report "associations left in the daemon: $left"
stop_daemon || fail "daemon exit status (ASan report?): $(tail -20 "$WORK/daemon.log")"
tshark_clean "$WORK/sctp.pcap" "eth.src == $MYMAC" || fail "daemon's frames not clean"
# One pass over the daemon's frames: CRC32c status, INIT ACKs carrying a
# State Cookie to the flood's sources (198.18.1.0 and up).
tshark -r "$WORK/sctp.pcap" -o "sctp.checksum:CRC 32c" -Y "eth.src == $MYMAC" -T fields \
    -e ip.dst -e sctp.chunk_type -e sctp.parameter_type -e sctp.checksum.status \
    >"$WORK/sent.tsv" 2>/dev/null || fail "tshark fields"
read -r nsent nia nbad < <($PY -c '
import ipaddress, sys
n = ia = bad = 0
flood = ipaddress.ip_address("198.18.1.0")
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t") + [""] * 4
    n += 1
    if f[0] and ipaddress.ip_address(f[0]) >= flood and f[1].split(",")[0] == "2" \
            and any(int(x, 0) == 7 for x in f[2].split(",") if x):
        ia += 1
    if f[3] and f[3] != "1":
        bad += 1
print(n, ia, bad)' "$WORK/sent.tsv")
report "pcap: $nsent frames from the daemon, all clean; $nia INIT ACKs with a State Cookie to flood sources; bad CRC32c $nbad"
# Two floods of 5000 INITs, each answered.
[ "$nia" -eq 10000 ] || fail "expected 10000 INIT ACKs with cookies to flood sources in the pcap, saw $nia"
[ "$nbad" -eq 0 ] || fail "daemon sent bad checksums"
echo "PASS"
