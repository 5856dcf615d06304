#!/usr/bin/env bash
# Bulk SCTP over UDP encapsulation (RFC 6951) on 127.0.0.1, side by side in
# one run: usrsctp's tsctp against itself, nstack -> usrsctp, usrsctp ->
# nstack and nstack -> nstack (hosted daemons, `nstack daemon --sctp-udp`),
# with 30- and 1400-byte messages, REPS runs of SECS seconds each; median
# and spread (min-max) of messages/s and Mbit/s (payload). Prints Markdown.
#
# Who measures:
#   usrsctp -> usrsctp  the tsctp server (receiver): messages and time from
#                       its first to its last message
#   nstack -> usrsctp   the tsctp server (receiver), nstack sending with
#                       `nstack perf -k` (no report protocol: tsctp is a sink)
#   usrsctp -> nstack   the tsctp client (sender: nstack's discard service
#                       reports nothing); its time ends at its last send,
#                       before the data in flight (at most nstack's receive
#                       window) is acknowledged
#   nstack -> nstack    `nstack perf` against `--serve perf` (receiver's report)
# tsctp as packaged turns every usrsctp debug category on and prints a line
# per packet; BUILD/libtsctp_quiet.so (tests/interop/tsctp_quiet.c) is
# preloaded to turn that off (without it the tsctp rows measure printf).
# Usage: bench/usrsctp_stream.sh [BUILD_DIR]   (env: REPS=5 SECS=5 SIZES="30 1400")
set -uo pipefail
BUILD=${1:-build}
NSTACK=$BUILD/nstack
TSCTP=${TSCTP:-/usr/lib/usrsctp/tsctp}
QUIET=$BUILD/libtsctp_quiet.so
REPS=${REPS:-5}
SECS=${SECS:-5}
SIZES=${SIZES:-30 1400}
[ -x "$TSCTP" ] || { echo "usrsctp_stream: no $TSCTP (libusrsctp-examples)"; exit 77; }
[ -x "$NSTACK" ] || { echo "usrsctp_stream: build $NSTACK first"; exit 1; }
PRE=()
QUIET_NOTE="preloaded $QUIET (tsctp's debug output off)"
if [ -f "$QUIET" ]; then
    PRE=(env "LD_PRELOAD=$(cd "$(dirname "$QUIET")" && pwd)/$(basename "$QUIET")")
else
    QUIET_NOTE="WITHOUT $QUIET: tsctp prints usrsctp's debug output (to /dev/null)"
fi
WORK=$(mktemp -d /tmp/nstack-usrsctpstream.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

USED=" "
free_port() {
    local p
    for _ in $(seq 200); do
        p=$((20000 + RANDOM % 30000))
        case "$USED" in *" $p "*) continue ;; esac
        ss -Hlun "sport = :$p" 2>/dev/null | grep -q . && continue
        USED="$USED$p "
        echo "$p"
        return
    done
    echo "usrsctp_stream: no free UDP port" >&2
    exit 1
}
# Ports: tsctp servers (uu, nu), tsctp clients (uu, un), nstack daemons.
T_UU_S=$(free_port); T_UU_C=$(free_port); T_NU_S=$(free_port); T_UN_C=$(free_port)
N_NU=$(free_port); N_UN=$(free_port); N_NN_S=$(free_port); N_NN_C=$(free_port)

daemon() { # NAME UDPPORT PEERPORT [args]
    local name=$1 port=$2 peer=$3
    shift 3
    "$NSTACK" daemon --sctp-udp "127.0.0.1:$port" --sysctl "sctp.encap_port=$peer" \
        --ctl "$WORK/$name.sock" "$@" >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do [ -S "$WORK/$name.sock" ] && return; sleep 0.05; done
    cat "$WORK/$name.log" >&2
    exit 1
}
"${PRE[@]}" "$TSCTP" -E "$T_UU_S" -U "$T_UU_C" -p 5101 >"$WORK/tsrv_uu.log" 2>&1 &
PIDS+=($!)
"${PRE[@]}" "$TSCTP" -E "$T_NU_S" -U "$N_NU" -p 5102 >"$WORK/tsrv_nu.log" 2>&1 &
PIDS+=($!)
daemon nu "$N_NU" "$T_NU_S"
daemon un "$N_UN" "$T_UN_C" --serve discard:5001
daemon nns "$N_NN_S" "$N_NN_C" --serve perf:5001
daemon nnc "$N_NN_C" "$N_NN_S"
sleep 0.3

# The last "LEN, msgs, calls, bytes, secs, B/s, notifications" line of a
# tsctp server log, once there are more than N of them.
server_line() { # LOG N LEN
    for _ in $(seq 100); do
        [ "$(grep -c "^$3, " "$1")" -gt "$2" ] && break
        sleep 0.1
    done
    grep "^$3, " "$1" | tail -1
}
# One run; prints "msgs_per_s mbit_per_s" (payload), or nothing on failure.
run_uu() { # LEN
    local before out
    before=$(grep -c "^$1, " "$WORK/tsrv_uu.log")
    "${PRE[@]}" timeout $((SECS + 30)) "$TSCTP" -E "$T_UU_C" -U "$T_UU_S" -p 5101 -l "$1" -T "$SECS" \
        127.0.0.1 >/dev/null 2>&1 || return
    out=$(server_line "$WORK/tsrv_uu.log" "$before" "$1")
    echo "$out" | awk -F', ' '$5 > 0 {printf "%.0f %.2f\n", $2 / $5, $4 * 8 / $5 / 1e6}'
}
run_nu() {
    local before out
    before=$(grep -c "^$1, " "$WORK/tsrv_nu.log")
    "$NSTACK" -C "$WORK/nu.sock" perf -H 127.0.0.1 -p 5102 -l "$SECS" -m "$1" -k >"$WORK/perf.out" 2>&1 ||
        { cat "$WORK/perf.out" >&2; return; }
    out=$(server_line "$WORK/tsrv_nu.log" "$before" "$1")
    echo "$out" | awk -F', ' '$5 > 0 {printf "%.0f %.2f\n", $2 / $5, $4 * 8 / $5 / 1e6}'
}
run_un() {
    "${PRE[@]}" timeout $((SECS + 30)) "$TSCTP" -E "$T_UN_C" -U "$N_UN" -p 5001 -l "$1" -T "$SECS" \
        127.0.0.1 2>/dev/null | awk -v l="$1" '/^Sending of [0-9]+ messages of length/ && $9 > 0 {
            printf "%.0f %.2f\n", $3 / $9, $3 * l * 8 / $9 / 1e6 }'
}
run_nn() {
    "$NSTACK" -C "$WORK/nnc.sock" perf -H 127.0.0.1 -p 5001 -l "$SECS" -m "$1" >"$WORK/perf.out" 2>&1 ||
        { cat "$WORK/perf.out" >&2; return; }
    local mbit rate
    mbit=$(awk '/^bytes/ {getline; getline; print $5; exit}' "$WORK/perf.out")
    rate=$(awk '/messages\/s:/ {print $1}' "$WORK/perf.out")
    [ -n "$rate" ] && echo "$rate $mbit"
}

stats() { sort -g | awk '{v[NR]=$1} END {if (!NR) {print "- - -"; exit}
    m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%s %s %s\n", m, v[1], v[NR]}'; }
fmt() { awk -v m="$1" -v a="$2" -v b="$3" -v d="$4" 'BEGIN {
    if (m == "-") { print "-"; exit } f = "%." d "f"; printf(f " (" f "-" f ")", m, a, b) }'; }

echo "Command: REPS=$REPS SECS=$SECS bench/usrsctp_stream.sh $BUILD ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs; $QUIET_NOTE)"
echo
echo "| sender -> receiver | msg bytes | runs | msgs/s | Mbit/s (payload) | measured by |"
echo "|---|---|---|---|---|---|"
declare -A RATE
for m in $SIZES; do
    for pair in uu nu un nn; do
        : >"$WORK/rows"
        for _ in $(seq "$REPS"); do
            "run_$pair" "$m" >>"$WORK/rows"
        done
        read -r r_med r_min r_max < <(awk '{print $1}' "$WORK/rows" | stats)
        read -r t_med t_min t_max < <(awk '{print $2}' "$WORK/rows" | stats)
        RATE[$pair/$m]=$r_med
        case $pair in
        uu) label="usrsctp -> usrsctp"; by="tsctp server (receiver)" ;;
        nu) label="nstack -> usrsctp"; by="tsctp server (receiver)" ;;
        un) label="usrsctp -> nstack"; by="tsctp client (sender)" ;;
        nn) label="nstack -> nstack"; by="nstack perf report (receiver)" ;;
        esac
        printf "| %s | %s | %s | %s | %s | %s |\n" "$label" "$m" "$(wc -l <"$WORK/rows")" \
            "$(fmt "$r_med" "$r_min" "$r_max" 0)" "$(fmt "$t_med" "$t_min" "$t_max" 2)" "$by"
    done
done
echo
for m in $SIZES; do
    awk -v n="${RATE[nn/$m]}" -v u="${RATE[uu/$m]}" -v m="$m" 'BEGIN {
        if (n == "-" || u == "-" || u == 0) exit
        printf "%s-byte messages: nstack -> nstack / usrsctp -> usrsctp = %.2fx (messages/s medians)\n", m, n / u }'
done
