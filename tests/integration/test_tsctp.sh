#!/usr/bin/env bash
# usrsctp's tsctp (libusrsctp-examples) as the peer of a hosted nstack
# daemon (`nstack daemon --sctp-udp`), SCTP over UDP encapsulation on
# 127.0.0.1, no root needed:
#   tsctp client -> nstack --serve discard: ordered and unordered, 30- and
#     1400-byte messages; the daemon's capture must be clean (tshark), hold
#     every DATA TSN tsctp sent once or more, and nstack's last SACK must
#     acknowledge the last of them (every message reached nstack);
#   nstack perf -k -> tsctp server: tsctp's own count of the messages it
#     received must equal what perf says it sent and had acknowledged.
# tsctp as packaged turns every usrsctp debug category on; when the test
# build has tests/interop/tsctp_quiet.c as libtsctp_quiet.so it is
# preloaded to keep tsctp quiet (the checks hold either way).
. "$(dirname "$0")/lib.sh"
TSCTP=${TSCTP:-/usr/lib/usrsctp/tsctp}
[ -x "$TSCTP" ] || { echo "SKIP: no $TSCTP (libusrsctp-examples)"; exit 77; }
command -v tshark >/dev/null || { echo "SKIP: no tshark"; exit 77; }
QUIET=$(dirname "$NSTACK")/libtsctp_quiet.so
PRELOAD=()
[ -f "$QUIET" ] && PRELOAD=(env "LD_PRELOAD=$QUIET")
WORK=$(mktemp -d /tmp/nstack-it.XXXXXX)
PIDS=()
cleanup_ts() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    [ "${KEEP_WORK:-0}" != 1 ] && rm -rf "$WORK"
    exit $rc
}
trap cleanup_ts EXIT INT TERM

# A UDP port nobody has bound (usrsctp binds its port on every address).
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((20000 + RANDOM % 30000))
        ss -Hlun "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
    done
    fail "no free UDP port"
}
wait_sock() { # PATH PID LOG
    for _ in $(seq 100); do
        [ -S "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || { cat "$3"; fail "daemon exited"; }
        sleep 0.05
    done
    fail "no control socket $1"
}
NSP=$(free_port)  # nstack's UDP port
TSP=$(free_port)  # tsctp's UDP port
[ "$NSP" != "$TSP" ] || TSP=$((NSP + 1))
CTL="$WORK/ctl.sock"
"$NSTACK" daemon --sctp-udp "127.0.0.1:$NSP" --sysctl "sctp.encap_port=$TSP" --serve discard:5001 \
    --ctl "$CTL" --pcap "$WORK/nstack.pcap" >"$WORK/daemon.log" 2>&1 &
DPID=$!
PIDS+=("$DPID")
wait_sock "$CTL" $DPID "$WORK/daemon.log"
ok "hosted daemon on udp 127.0.0.1:$NSP, tsctp on $TSP"

# ---- tsctp client -> nstack discard --------------------------------------
# run_client LABEL N LEN [tsctp flags]: every run on its own SCTP source
# port (-L 127.0.0.1, kernel-free ports are usrsctp's own), checked in the
# capture afterwards by that port.
CLIENT_RUNS=()
run_client() {
    local label=$1 n=$2 len=$3
    shift 3
    local out
    out=$("${PRELOAD[@]}" timeout 120 "$TSCTP" -E "$TSP" -U "$NSP" -p 5001 -l "$len" -n "$n" "$@" \
        127.0.0.1 2>&1 | grep -v '^\[S\]')
    echo "$out" | grep -q "^Sending of $n messages of length $len took" ||
        { echo "$out" | tail -5; fail "tsctp client $label"; }
    ok "tsctp client $label: $(echo "$out" | grep -m1 '^Sending')"
    CLIENT_RUNS+=("$label $n")
}
run_client "ordered 1400 B" 10000 1400
run_client "unordered 1400 B" 10000 1400 -u
run_client "ordered 30 B" 20000 30
kill -TERM $DPID
wait $DPID || fail "daemon exit status"
PIDS=()

P=(-o "sctp.checksum:CRC 32c" -d "udp.port==$NSP,sctp" -d "udp.port==$TSP,sctp")
bad=$(tshark -r "$WORK/nstack.pcap" "${P[@]}" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
[ "$bad" -eq 0 ] || { tshark -r "$WORK/nstack.pcap" "${P[@]}" -Y '_ws.malformed || _ws.expert.severity >= error' | head; fail "tshark: $bad bad packets"; }
# One line per packet, tab-separated: source and destination SCTP ports,
# chunk types, DATA TSNs, SACK cumulative TSN acks.
tshark -r "$WORK/nstack.pcap" "${P[@]}" -Y sctp -T fields -E aggregator=, \
    -e sctp.srcport -e sctp.dstport -e sctp.chunk_type -e sctp.data_tsn_raw \
    -e sctp.sack_cumulative_tsn_ack_raw 2>/dev/null >"$WORK/chunks.txt"
# tsctp's SCTP ports in the order of their INITs (chunk type 1 toward 5001).
mapfile -t PORTS < <(awk -F'\t' '$2 == 5001 && $3 ~ /(^|,)1(,|$)/ && !seen[$1]++ {print $1}' "$WORK/chunks.txt")
[ "${#PORTS[@]}" -eq "${#CLIENT_RUNS[@]}" ] ||
    fail "${#PORTS[@]} associations in the capture, expected ${#CLIENT_RUNS[@]}"
for i in "${!CLIENT_RUNS[@]}"; do
    read -r l1 l2 l3 n <<<"${CLIENT_RUNS[$i]}"
    port=${PORTS[$i]}
    # Handshake and shutdown in order, no ABORT.
    seq=$(awk -F'\t' -v p="$port" '($1 == p || $2 == p) {n = split($3, t, ","); for (k = 1; k <= n; k++)
        if (t[k] ~ /^(1|2|10|11|6|7|8|14)$/ && t[k] != last) { printf "%s ", t[k]; last = t[k] } }' \
        "$WORK/chunks.txt")
    [ "$seq" = "1 2 10 11 7 8 14 " ] || fail "$l1 $l2 $l3: handshake/shutdown chunk sequence '$seq'"
    # DATA TSNs from tsctp relative to the first one (mod 2^32, so a run
    # across the wrap counts too): distinct ones, the highest, and the
    # highest cumulative TSN ack nstack sent, likewise relative.
    read -r distinct last cum < <(awk -F'\t' -v p="$port" '
        function rel(x) { return (x - base + 4294967296) % 4294967296 }
        $1 == p && $4 != "" { n = split($4, t, ","); for (k = 1; k <= n; k++) {
            if (base == "") base = t[k]
            r = rel(t[k]); if (!s[r]++) d++; if (r > max) max = r } }
        $2 == p && $5 != "" && base != "" { n = split($5, t, ","); for (k = 1; k <= n; k++) {
            r = rel(t[k]); if (r < 2147483648 && r > cum) cum = r } }
        END { printf "%d %.0f %.0f\n", d, max, cum }' "$WORK/chunks.txt")
    [ "$distinct" -eq "$n" ] || fail "$l1 $l2 $l3: $distinct distinct DATA TSNs, expected $n"
    [ "$last" -eq $((n - 1)) ] || fail "$l1 $l2 $l3: TSNs span $((last + 1)) for $n messages"
    [ "$cum" -eq "$last" ] || fail "$l1 $l2 $l3: nstack's highest cumulative TSN ack is TSN+$cum, last TSN+$last"
    ok "$l1 $l2 $l3: $n consecutive DATA TSNs in the capture, all acknowledged by nstack, handshake and shutdown in order"
done

# ---- nstack perf -k -> tsctp server -----------------------------------------
"${PRELOAD[@]}" "$TSCTP" -E "$TSP" -U "$NSP" -p 5101 >"$WORK/tsctp_srv.log" 2>&1 &
TPID=$!
PIDS+=("$TPID")
"$NSTACK" daemon --sctp-udp "127.0.0.1:$NSP" --sysctl "sctp.encap_port=$TSP" --ctl "$CTL" \
    --pcap "$WORK/perf.pcap" >"$WORK/daemon2.log" 2>&1 &
DPID=$!
PIDS+=("$DPID")
wait_sock "$CTL" $DPID "$WORK/daemon2.log"
sleep 0.3 # tsctp's listener
for m in 1400 30; do
    out=$("$NSTACK" -C "$CTL" perf -H 127.0.0.1 -p 5101 -l 2 -m $m -k 2>&1) || { echo "$out"; fail "perf -k -m $m"; }
    sent=$(echo "$out" | sed -n 's/^[0-9]* messages\/s: \([0-9]*\) messages sent and acknowledged.*/\1/p')
    if [ -z "$sent" ] || [ "$sent" -eq 0 ]; then
        echo "$out"
        fail "perf -k -m $m: no message count"
    fi
    for _ in $(seq 50); do
        [ "$(grep -c "^$m, " "$WORK/tsctp_srv.log")" -ge 1 ] && break
        sleep 0.1
    done
    got=$(grep "^$m, " "$WORK/tsctp_srv.log" | tail -1 | awk -F', ' '{print $2}')
    [ "$got" = "$sent" ] || { grep -v '^\[S\]' "$WORK/tsctp_srv.log" | tail -3; fail "perf -k -m $m: tsctp received '$got', perf sent $sent"; }
    ok "nstack perf -k -m $m -> tsctp: $sent messages sent, tsctp counted $got ($(echo "$out" | awk '/^[0-9]+ messages\/s/ {print $1}') msgs/s)"
done
kill -TERM $DPID
wait $DPID || fail "daemon exit status"
P=(-o "sctp.checksum:CRC 32c" -d "udp.port==$NSP,sctp" -d "udp.port==$TSP,sctp")
bad=$(tshark -r "$WORK/perf.pcap" "${P[@]}" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
[ "$bad" -eq 0 ] || fail "tshark: $bad bad packets in the perf capture"
n6=$(tshark -r "$WORK/perf.pcap" "${P[@]}" -Y 'sctp.chunk_type == 6' 2>/dev/null | wc -l)
[ "$n6" -eq 0 ] || fail "ABORT in the perf capture"
ok "perf capture clean, no ABORT"
echo "PASS"
