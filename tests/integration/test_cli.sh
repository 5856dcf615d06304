#!/usr/bin/env bash
# The nstack CLI and daemon against the Linux kernel: a namespace with a TAP
# (kernel side 198.18.0.1/24), `nstack daemon` on it as 198.18.0.2, and every
# command's output format and exit status as docs/cli.md specifies them:
# ping (iputils format, ^C), neigh (ip neigh format, -j, -s, add/del/flush),
# sysctl, stats, addr, udp send/recv against socat, the udp-echo service,
# error messages, stale and live control sockets, SIGTERM.
# Needs root; exits 77 (skipped) otherwise.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
NSTACK=${NSTACK:-$top/build-asan/nstack}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
PY=/usr/bin/python3
KIP=198.18.0.1
MYIP=198.18.0.2

if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/net/tun ]; then
    echo "SKIP: needs root and /dev/net/tun"
    exit 77
fi
for tool in ip socat; do
    command -v $tool >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done
[ -x "$NSTACK" ] || { echo "FAIL: no nstack binary at $NSTACK"; exit 1; }

NS=nstcli$$
TAP=tapc$$
WORK=$(mktemp -d /tmp/nstack-cli.XXXXXX)
CTL=$WORK/ctl.sock
DPID=
PIDS=()

cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
        kill -TERM "$DPID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$DPID" 2>/dev/null
    fi
    ip netns del "$NS" 2>/dev/null
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
    echo "FAIL: $*"
    [ -f "$WORK/daemon.log" ] && { echo "--- daemon log"; cat "$WORK/daemon.log"; }
    exit 1
}
ok() { echo "ok: $*"; }
ns() { ip netns exec "$NS" "$@"; }
nst() { "$NSTACK" -C "$CTL" "$@"; }
# expect STATUS "STDERR" CMD...: exact exit status and stderr, empty stdout.
expect() {
    local want_rc=$1 want_err=$2 out err rc
    shift 2
    out=$("$@" 2>"$WORK/err")
    rc=$?
    err=$(cat "$WORK/err")
    [ "$rc" -eq "$want_rc" ] || fail "$* exited $rc, want $want_rc (stderr: $err)"
    [ "$err" = "$want_err" ] || fail "$*: stderr '$err', want '$want_err'"
    [ -z "$out" ] || fail "$*: unexpected stdout '$out'"
}

# Background jobs run `ip netns exec` itself (it execs the program), never a
# shell function, so that $! is the program's PID and signals reach it.
start_daemon() { # extra args...
    ip netns exec "$NS" "$NSTACK" daemon --dev "tap:$TAP" --addr "$MYIP/24" --ctl "$CTL" "$@" \
        >"$WORK/daemon.log" 2>&1 &
    DPID=$!
    # Ready when it prints its start line (the socket may be a stale one).
    for _ in $(seq 100); do
        grep -q " ctl $CTL\$" "$WORK/daemon.log" 2>/dev/null && [ -S "$CTL" ] && return 0
        kill -0 "$DPID" 2>/dev/null || fail "daemon exited"
        sleep 0.05
    done
    fail "daemon did not start on $CTL"
}

ip netns add "$NS" || fail "ip netns add $NS"
ns ip link set lo up
ns ip tuntap add dev "$TAP" mode tap || fail "tuntap add"
ip -n "$NS" addr add "$KIP/24" dev "$TAP"
ip -n "$NS" link set "$TAP" up
KMAC=$(ns cat "/sys/class/net/$TAP/address")

# --- local errors: no daemon needed ---------------------------------------
expect 1 "nstack: no daemon at $WORK/none.sock (connect: No such file or directory)" \
    "$NSTACK" -C "$WORK/none.sock" stats
expect 2 "nstack: unknown command 'frob' (try: ping, neigh, stats, sysctl, addr, udp)" \
    "$NSTACK" -C "$WORK/none.sock" frob
out=$("$NSTACK" --help) || fail "--help exit status"
echo "$out" | grep -q "^Usage: nstack \[-C PATH\] \[-j\] \[-s\] COMMAND" || fail "--help text"
out=$("$NSTACK" ping --help) || fail "ping --help exit status"
echo "$out" | grep -q "^Usage: nstack ping \[-c N\]" || fail "ping --help text"
"$NSTACK" daemon --help | grep -q "^Usage: nstack daemon --dev" || fail "daemon --help"
expect 2 "nstack: bad address '198.18.0.300/24'" \
    "$NSTACK" daemon --dev "tap:$TAP" --addr 198.18.0.300/24 --ctl "$CTL"
expect 1 "nstack: unknown device 'bogus:x': use tap:NAME or afpacket:IFNAME" \
    "$NSTACK" daemon --dev bogus:x --addr "$MYIP/24" --ctl "$CTL"
expect 1 "nstack: tap: unknown option 'bogus' (known: offload)" \
    "$NSTACK" daemon --dev "tap:$TAP,bogus" --addr "$MYIP/24" --ctl "$CTL"
[ ! -e "$CTL" ] || fail "a failed daemon left its socket behind"
if command -v setpriv >/dev/null; then
    chmod 777 "$WORK"
    expect 1 "nstack: daemon must run as root to open tap:nstnoroot$$" \
        setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$NSTACK" daemon --dev "tap:nstnoroot$$" --addr "$MYIP/24" --ctl "$WORK/nobody.sock"
    chmod 700 "$WORK"
fi
ok "local errors: no daemon, unknown command, help, bad address, device, not root"

# --- the daemon ------------------------------------------------------------
start_daemon --serve udp-echo:7
line=$(head -1 "$WORK/daemon.log")
echo "$line" | grep -Eq "^nstack: $TAP $MYIP/24 mac 02(:[0-9a-f]{2}){5} mtu 1500 ctl $CTL$" ||
    fail "start line: '$line'"
ok "daemon started: $line"
expect 1 "nstack: another daemon is running on $CTL" \
    "$NSTACK" daemon --dev "tap:$TAP" --addr "$MYIP/24" --ctl "$CTL"

# --- ping ------------------------------------------------------------------
out=$(nst ping -c 3 -i 0.2 "$KIP")
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "ping exit $rc"
mapfile -t L <<<"$out"
[ ${#L[@]} -eq 8 ] || fail "ping: ${#L[@]} lines, want 8"
[ "${L[0]}" = "PING $KIP ($KIP) 56(84) bytes of data." ] || fail "ping header '${L[0]}'"
for i in 1 2 3; do
    echo "${L[$i]}" | grep -Eq "^64 bytes from $KIP: icmp_seq=$i ttl=64 time=[0-9]+(\.[0-9]{1,3})? ms$" ||
        fail "reply line $i: '${L[$i]}'"
done
[ -z "${L[4]}" ] || fail "no blank line before the statistics"
[ "${L[5]}" = "--- $KIP ping statistics ---" ] || fail "stats header '${L[5]}'"
echo "${L[6]}" | grep -Eq "^3 packets transmitted, 3 received, 0% packet loss, time (3|4)[0-9]{2}ms$" ||
    fail "stats line '${L[6]}'"
echo "${L[7]}" | grep -Eq "^rtt min/avg/max/mdev = [0-9]+\.[0-9]{3}/[0-9]+\.[0-9]{3}/[0-9]+\.[0-9]{3}/[0-9]+\.[0-9]{3} ms$" ||
    fail "rtt line '${L[7]}'"
ok "nstack ping -c 3: iputils format, exit 0"

line=$(nst neigh show)
[ "$line" = "$KIP dev $TAP lladdr $KMAC REACHABLE" ] || fail "neigh show: '$line'"
nst -s neigh show | grep -Eq "^$KIP dev $TAP lladdr $KMAC ref [0-9]+ used [0-9]+/[0-9]+/[0-9]+ probes [0-9]+ REACHABLE$" ||
    fail "neigh -s show: '$(nst -s neigh show)'"
nst -j neigh show | $PY -m json.tool >/dev/null || fail "neigh -j is not JSON: $(nst -j neigh show)"
nst -j neigh show | $PY -c '
import json, sys
e = json.load(sys.stdin)
assert e == [{"dst": sys.argv[1], "dev": sys.argv[2], "lladdr": sys.argv[3], "state": ["REACHABLE"]}], e
' "$KIP" "$TAP" "$KMAC" || fail "neigh -j content"
nst -j -s neigh show | $PY -c '
import json, sys
e = json.load(sys.stdin)[0]
assert all(isinstance(e[k], int) for k in ("used", "confirmed", "updated", "probes")), e
' || fail "neigh -j -s content"
ok "neigh show: $line (text, -s, -j)"

out=$(ns ping -c 3 -i 0.2 "$MYIP") || { echo "$out"; fail "kernel ping"; }
echo "$out" | grep -q "3 packets transmitted, 3 received, 0% packet loss" || fail "kernel ping loss"
ok "the kernel pings nstack"

# ^C during an endless ping: the statistics block, exit 0. (The client
# itself is signalled, not a subshell: bash starts background jobs with
# SIGINT ignored, which the client overrides by blocking it for signalfd.)
"$NSTACK" -C "$CTL" ping -i 0.2 "$KIP" >"$WORK/ping.out" 2>&1 &
cpid=$!
PIDS+=("$cpid")
sleep 1.1
kill -INT "$cpid"
wait "$cpid"
rc=$?
[ $rc -eq 0 ] || { cat "$WORK/ping.out"; fail "interrupted ping exit $rc"; }
grep -Eq "^[0-9]+ packets transmitted, [0-9]+ received, .*time [0-9]+ms$" "$WORK/ping.out" ||
    { cat "$WORK/ping.out"; fail "no statistics after ^C"; }
grep -q "^--- $KIP ping statistics ---$" "$WORK/ping.out" || fail "no statistics header after ^C"
ok "ping interrupted with SIGINT prints the statistics"

expect 2 "nstack: bad address '1.2.3.400'" nst ping 1.2.3.400
expect 2 "nstack: ping: invalid count '0' (1 or more)" nst ping -c 0 "$KIP"
out=$(nst ping -c 1 -W 5 198.18.0.99)
rc=$?
[ $rc -eq 1 ] || fail "ping to nobody exit $rc"
echo "$out" | grep -qx "From $MYIP icmp_seq=1 Destination Host Unreachable" || fail "unreachable: $out"
echo "$out" | grep -Eq "^1 packets transmitted, 0 received, \+1 errors, 100% packet loss, time [0-9]+ms$" ||
    fail "unreachable stats: $out"
[ "$(nst neigh show to 198.18.0.99)" = "198.18.0.99 dev $TAP FAILED" ] || fail "FAILED entry"
ok "ping errors: bad address, bad count, host unreachable (exit 1)"

# --- neigh edits -----------------------------------------------------------
expect 0 "" nst neigh add 198.18.0.50 lladdr 02:00:00:00:00:50 dev "$TAP" nud permanent
[ "$(nst neigh show to 198.18.0.50)" = "198.18.0.50 dev $TAP lladdr 02:00:00:00:00:50 PERMANENT" ] ||
    fail "added entry: '$(nst neigh show to 198.18.0.50)'"
expect 2 "nstack: neigh add 198.18.0.50: entry exists (use: nstack neigh replace)" \
    nst neigh add 198.18.0.50 lladdr 02:00:00:00:00:51 dev "$TAP"
expect 0 "" nst neigh del 198.18.0.50 dev "$TAP"
[ -z "$(nst neigh show to 198.18.0.50)" ] || fail "deleted entry still shown"
expect 2 "nstack: neigh del 198.18.0.50: no such entry" nst neigh del 198.18.0.50 dev "$TAP"
expect 0 "" nst neigh add 198.18.0.51 lladdr 02:00:00:00:00:51 dev "$TAP"
expect 0 "" nst neigh flush dev "$TAP"
[ "$(nst neigh show nud all)" = "198.18.0.51 dev $TAP lladdr 02:00:00:00:00:51 PERMANENT" ] ||
    fail "after flush: '$(nst neigh show nud all)'"
expect 1 "nstack: neigh show: cannot find device \"nope0\"" nst neigh show dev nope0
ok "neigh add/del/flush"

# --- sysctl ----------------------------------------------------------------
[ "$(nst sysctl -w neigh.default.retrans_time_ms=500)" = "neigh.default.retrans_time_ms = 500" ] ||
    fail "sysctl -w"
[ "$(nst sysctl neigh.default.retrans_time_ms)" = "neigh.default.retrans_time_ms = 500" ] ||
    fail "sysctl read back"
expect 1 "nstack: sysctl: cannot stat nope.key: No such key" nst sysctl nope.key
expect 1 "nstack: sysctl: ipv4.ip_default_ttl: value 0 out of range [1, 255]" \
    nst sysctl -w ipv4.ip_default_ttl=0
n=$(nst sysctl -a | grep -c " = ")
[ "$n" -ge 20 ] || fail "sysctl -a lists $n keys"
nst -j sysctl -a | $PY -m json.tool >/dev/null || fail "sysctl -j -a is not JSON"
ok "sysctl -w/read/-a/errors"

# --- stats, addr -----------------------------------------------------------
out=$(nst stats) || fail "stats"
for g in eth arp arp_cache ip icmp udp dev daemon cmd; do
    echo "$out" | grep -qx "$g:" || fail "stats: no group $g"
done
echo "$out" | grep -Eq "^    rx_frames +[1-9][0-9]*$" || fail "stats: rx_frames"
nst -j stats | $PY -c '
import json, sys
s = json.load(sys.stdin)
assert s["icmp"]["in_echo_reps"] >= 3, s["icmp"]
assert s["arp_cache"]["res_failed"] >= 1, s["arp_cache"]
assert s["dev"]["rx_frames"] >= 1, s["dev"]
' || fail "stats -j"
out=$(NSTACK_CTL=$CTL "$NSTACK" addr) || fail "addr via NSTACK_CTL"
[ "$(echo "$out" | head -1)" = "1: $TAP: <BROADCAST,UP,LOWER_UP> mtu 1500 state UP" ] ||
    fail "addr line 1: $out"
echo "$out" | grep -qx "    inet $MYIP/24 brd 198.18.0.255 scope global $TAP" || fail "addr inet: $out"
MYMAC=$(nst -j addr | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])') ||
    fail "addr -j"
[ "$(ns ip neigh show "$MYIP" dev "$TAP" | awk '{print $3}')" = "$MYMAC" ] ||
    fail "kernel's entry for us is not $MYMAC"
ok "stats (text, -j), addr (text, -j, NSTACK_CTL)"

# --- udp -------------------------------------------------------------------
ip netns exec "$NS" socat -u UDP4-RECV:5555,bind=$KIP "OPEN:$WORK/udp1.out,creat,append" &
PIDS+=($!)
ip netns exec "$NS" socat -u UDP4-RECV:5556,bind=$KIP "OPEN:$WORK/udp2.out,creat,append" &
PIDS+=($!)
sleep 0.3
expect 0 "" nst udp send "$KIP" 5555 hello from nstack
printf 'line one\nline two\n' | nst udp send -p 4444 "$KIP" 5556 || fail "udp send from stdin"
sleep 0.3
[ "$(cat "$WORK/udp1.out")" = "hello from nstack" ] || fail "socat got '$(cat "$WORK/udp1.out")'"
[ "$(printf 'line one\nline two\n')" = "$(cat "$WORK/udp2.out")" ] || fail "stdin datagram"
ok "udp send to socat (argv and stdin)"

(sleep 0.5; printf 'to nstack\n' | ns socat -u - "UDP4:$MYIP:6666,sourceport=6001") &
PIDS+=($!)
out=$(nst udp recv 6666 -c 1 -W 5) || fail "udp recv exit $?"
[ "$out" = "from $KIP:6001 len 10: to nstack\\n" ] || fail "udp recv: '$out'"
expect 1 "nstack: udp recv: timeout after 0 datagrams" nst udp recv 6667 -W 0.3
reply=$(echo "echo me" | ns socat -T 2 - "UDP4:$MYIP:7") || fail "socat to the echo service"
[ "$reply" = "echo me" ] || fail "echo reply '$reply'"
ok "socat to udp recv; udp recv timeout; udp-echo service"

# --- bad control traffic ---------------------------------------------------
$PY - "$CTL" <<'PYEOF' || fail "bad control frames"
import socket, struct, sys
def exchange(data):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(data)
    buf = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    frames = []
    while buf:
        t, n = buf[0], struct.unpack(">I", buf[1:5])[0]
        frames.append((t, buf[5:5 + n]))
        buf = buf[5 + n:]
    return frames
# An unknown frame type, then an oversized length: an error and status 2.
for junk in (b"\x7f", b"\x02" + struct.pack(">I", 65537)):
    f = exchange(junk)
    assert f[0][0] == 0x12 and f[0][1].startswith(b"nstack: daemon: bad control message ("), f
    assert f[-1] == (0x13, b"\x02"), f
# A well-formed request still works.
req = b"\x01\x00addr\x00"  # version 1, no flags, argv ["addr"]
f = exchange(b"\x01" + struct.pack(">I", len(req)) + req)
assert f[-1] == (0x13, b"\x00"), f
PYEOF
n=$(nst -j stats daemon | $PY -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["bad_frames"])')
[ "$n" -eq 2 ] || fail "daemon bad_frames = $n, want 2"
ok "bad control frames: error, status 2, counted; the daemon keeps serving"

# --- shutdown --------------------------------------------------------------
kill -TERM "$DPID"
wait "$DPID"
rc=$?
DPID=
[ $rc -eq 0 ] || fail "daemon exit status $rc after SIGTERM"
[ ! -e "$CTL" ] || fail "socket left behind after SIGTERM"
ok "SIGTERM: exit 0, socket removed"

# A stale socket (its daemon died) is replaced.
$PY -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$CTL"
[ -S "$CTL" ] || fail "could not make a stale socket"
start_daemon
nst addr >/dev/null || fail "daemon on a replaced stale socket"
kill -TERM "$DPID"
wait "$DPID" || fail "second daemon exit status"
DPID=
[ ! -e "$CTL" ] || fail "socket left behind"
ok "stale socket replaced"

# The default socket: /run/nstack/NAME.sock, found by a client without -C
# when it is the only one there (other daemons may be running: then only the
# path is checked).
ip netns exec "$NS" env -u NSTACK_CTL "$NSTACK" daemon --dev "tap:$TAP" --addr "$MYIP/24" \
    >"$WORK/daemon.log" 2>&1 &
DPID=$!
DEF=/run/nstack/$TAP.sock
for _ in $(seq 100); do
    grep -q " ctl $DEF\$" "$WORK/daemon.log" 2>/dev/null && break
    kill -0 "$DPID" 2>/dev/null || fail "daemon without --ctl exited"
    sleep 0.05
done
[ -S "$DEF" ] || fail "no socket at $DEF"
[ "$(stat -c %a /run/nstack)" = 755 ] || fail "/run/nstack mode $(stat -c %a /run/nstack)"
if [ "$(ls /run/nstack/*.sock | wc -l)" -eq 1 ]; then
    env -u NSTACK_CTL "$NSTACK" addr | grep -q "^1: $TAP: " || fail "client without -C"
fi
expect 0 "" env -u NSTACK_CTL "$NSTACK" -C "$DEF" neigh flush
kill -TERM "$DPID"
wait "$DPID" || fail "default-socket daemon exit status"
DPID=
[ ! -e "$DEF" ] || fail "$DEF left behind"
ok "default socket $DEF"
echo "PASS"
