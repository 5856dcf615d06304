#!/usr/bin/env bash
# The echo service with messages that arrive in pieces, and perf's stream
# count and message sizes, between two daemons: first in hosted mode (two
# `nstack daemon --sctp-udp` on 127.0.0.1, no root), then, as root, over
# raw IP on two TAPs on a bridge in a namespace.
#
# Echo: `sctp send -m SIZE` sends SIZE bytes of a known pattern and checks
# every reply byte for byte. Sizes around the partial delivery point
# (sysctl sctp.pd_point_bytes, by default rcvbuf / 2 = 106496) up to the
# documented 256 KiB come back whole, also on another stream with a ppid,
# and four at once (pieces of several associations interleave on the
# one-to-many socket, and the replies overflow its send buffer); 256 KiB + 1
# is dropped, and the service goes on.
# perf: -n 10 against a server whose sctp.max_in_streams is 4 runs on the 4
# streams granted and says so; -m 262144 works with the defaults; -m 1048576
# works once the sending daemon's sctp.max_message_bytes allows it, and is
# refused up front, with the way out, when it does not.
# Usage: [PARTS="echo perf"] [MODES="hosted bridge"] test_echo_perf.sh [path/to/nstack]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] && NSTACK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$NSTACK" ] || fail "no nstack binary at $NSTACK"

SIZES="1 100000 106497 200000 262144"
PARTS=${PARTS:-echo perf}
MODES=${MODES:-hosted bridge}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mode() { case " $MODES " in *" $1 "*) return 0 ;; esac; return 1; }

# echo_checks NAME CTL HOST: the echo service on HOST port 7, from the
# daemon at CTL.
echo_checks() {
    local name=$1 ctl=$2 host=$3 m out bad=0
    for m in $SIZES; do
        out=$("$NSTACK" -C "$ctl" sctp send -W 1 -m "$m" "$host" 7 2>&1)
        if [ "$out" = "reply stream 0 ppid 0 len $m: same as sent" ]; then
            ok "$name: echo of $m bytes whole"
        else
            echo "FAIL: $name: echo of $m bytes: '$out'"
            bad=1
        fi
    done
    [ $bad -eq 0 ] || fail "$name: echo replies"

    out=$("$NSTACK" -C "$ctl" sctp send -W 1 -i 2 -P 42 -m 200000 "$host" 7 2>&1)
    [ "$out" = "reply stream 2 ppid 42 len 200000: same as sent" ] ||
        fail "$name: echo on stream 2 with ppid 42: '$out'"
    ok "$name: a message in pieces comes back on its stream with its ppid"

    # Four associations at once: 1 MiB of replies, more than the service
    # socket's send buffer takes at once (a reply waits, none is dropped).
    local i pids=()
    for i in 1 2 3 4; do
        "$NSTACK" -C "$ctl" sctp send -W 3 -m 262144 "$host" 7 >"$WORK/par$i.out" 2>&1 &
        pids+=($!)
    done
    for i in 1 2 3 4; do
        wait "${pids[$((i - 1))]}"
        out=$(cat "$WORK/par$i.out")
        [ "$out" = "reply stream 0 ppid 0 len 262144: same as sent" ] ||
            fail "$name: concurrent echo $i: '$out'"
    done
    ok "$name: four 256 KiB messages at once, each echoed whole"

    # Above the limit: dropped (no reply), and the service goes on.
    out=$("$NSTACK" -C "$ctl" sctp send -W 1 -m 262145 "$host" 7 2>&1) ||
        fail "$name: sctp send -m 262145: '$out'"
    [ -z "$out" ] || fail "$name: a message over 256 KiB was answered: '$out'"
    out=$("$NSTACK" -C "$ctl" sctp send -W 1 -m 150000 "$host" 7 2>&1)
    [ "$out" = "reply stream 0 ppid 0 len 150000: same as sent" ] ||
        fail "$name: echo after an oversized message: '$out'"
    ok "$name: 262145 bytes dropped, the next message echoed"
}

# perf_ok NAME OUT M: the run succeeded with every message accounted for.
perf_ok() {
    local rx tx row msz
    read -r rx tx < <(perf_counts "$2")
    [ "$rx" -gt 0 ] && [ "$rx" = "$tx" ] || { echo "$2"; fail "$1: $rx received of $tx sent"; }
    row=$(awk '/^bytes/ {getline; getline; print; exit}' <<<"$2")
    read -r _ _ msz _ <<<"$row"
    [ "$msz" = "$3" ] || { echo "$2"; fail "$1: message size column '$msz'"; }
    ok "$1: $rx messages received of $tx sent"
}

# perf_checks NAME CTL_A HOST_B CTL_B HOST_A: a is the server with
# max_in_streams 4 and default limits; b serves perf too and has
# sctp.max_message_bytes=1048576.
perf_checks() {
    local name=$1 ca=$2 hb=$3 cb=$4 ha=$5 out
    out=$("$NSTACK" -C "$cb" perf -H "$ha" -l 1 -m 1000 -n 10 2>&1) ||
        { echo "$out"; fail "$name: perf -n 10"; }
    [ "$(sed -n 2p <<<"$out")" = "Streams: 10 requested, 4 granted" ] ||
        { echo "$out"; fail "$name: perf -n 10: no 'Streams: 10 requested, 4 granted' line"; }
    perf_ok "$name: perf -n 10 (4 granted)" "$out" 1000

    out=$("$NSTACK" -C "$ca" perf -H "$hb" -l 2 -m 262144 2>&1) ||
        { echo "$out"; fail "$name: perf -m 262144"; }
    grep -qx "Streams: 1 requested, 1 granted" <<<"$out" || { echo "$out"; fail "$name: streams line"; }
    perf_ok "$name: perf -m 262144" "$out" 262144

    out=$("$NSTACK" -C "$cb" perf -H "$ha" -l 2 -m 1048576 2>&1) ||
        { echo "$out"; fail "$name: perf -m 1048576 with sctp.max_message_bytes=1048576"; }
    perf_ok "$name: perf -m 1048576" "$out" 1048576

    out=$("$NSTACK" -C "$ca" perf -H "$hb" -l 1 -m 1048576 2>&1)
    [ $? -eq 1 ] || { echo "$out"; fail "$name: perf -m 1048576 over the limit did not fail"; }
    [ "$out" = "nstack: perf: -m 1048576 exceeds sysctl sctp.max_message_bytes (262144) of this daemon; start it with --sysctl sctp.max_message_bytes=1048576" ] ||
        fail "$name: perf -m 1048576 over the limit: '$out'"
    ok "$name: perf -m 1048576 over the limit refused up front"
}

# ---- hosted mode ------------------------------------------------------------

hosted_init

if mode hosted; then
    start_hosted_pair --serve echo:7 --serve perf:5001 --sysctl sctp.max_in_streams=4 \
        --sysctl "sctp.encap_port=@PB@" -- --serve echo:7 --serve perf:5001 \
        --sysctl sctp.max_message_bytes=1048576 --sysctl "sctp.encap_port=@PA@"
    ok "hosted daemons on 127.0.0.1:$PA and :$PB"

    part echo && echo_checks hosted "$WORK/b.sock" 127.0.0.1
    part perf && perf_checks hosted "$WORK/a.sock" 127.0.0.1 "$WORK/b.sock" 127.0.0.1

    for p in "$A_PID" "$B_PID"; do
        kill -TERM "$p"
        wait "$p" || { cat "$WORK/a.log" "$WORK/b.log"; fail "hosted daemon exit status"; }
    done
    PIDS=()
    ok "hosted daemons stopped cleanly"
fi

# ---- raw IP on a bridge (root) ------------------------------------------------

if ! mode bridge; then
    echo "PASS"
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/net/tun ]; then
    echo "bridge part skipped: needs root and /dev/net/tun"
    echo "PASS"
    exit 0
fi
hosted_work=$WORK
setup_bridge_ns ep # a new $WORK; its trap (cleanup_bridge) takes over
[ "${KEEP_WORK:-0}" != 1 ] && rm -rf "$hosted_work"
start_bridge_daemon 0 a "$TA" 198.18.0.2 "$CA" --serve echo:7 --serve perf:5001 \
    --sysctl sctp.max_in_streams=4
start_bridge_daemon 1 b "$TB" 198.18.0.3 "$CB" --serve perf:5001 \
    --sysctl sctp.max_message_bytes=1048576

part echo && echo_checks bridge "$CB" 198.18.0.2
part perf && perf_checks bridge "$CA" 198.18.0.3 "$CB" 198.18.0.2

for i in 1 0; do
    kill -TERM "${PIDS[$i]}"
    wait "${PIDS[$i]}" || { cat "$WORK/a.log" "$WORK/b.log"; fail "bridge daemon $i exit status"; }
done
PIDS=()
ok "bridge daemons stopped cleanly"
echo "PASS"
