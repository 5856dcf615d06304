#!/usr/bin/env bash
# SCTP_STREAM between two nstack daemons over TAP + bridge in a namespace
# (`nstack perf`, netperf's test): message sizes 30, 1000 and 65536 bytes,
# REPS runs of SECS seconds each; median and spread (min-max) of messages/s,
# Mbit/s and service demand (send and receive, us/KB). Next to it the raw
# frame rate of the same TAP -> bridge -> TAP path (bench_tap_raw, 64- and
# 1500-byte frames, and 1500-byte frames 44 to a USO frame) and the fraction
# of that byte rate SCTP reaches; then the SCTP runs again with the
# receive-queue ablation lock (--rcvq-lock) and as SCTP over UDP (RFC 6951)
# on TAPs with segmentation offload (tap:NAME,offload, dev/vnet.h), the
# variants taking turns rep by rep (each rep restarts the daemons).
# Each daemon is pinned to a CPU of its own (PIN=1, the default: taskset -c
# 0 and -c 1), so a daemon's stack thread and its application thread hand
# work to each other on one CPU; unpinned (PIN=0) the scheduler moves the
# four threads around and 64 KiB results spread far wider (bench/README.md).
# The raw test runs unpinned: pinning its writer and reader apart made it
# slower.
# Prints Markdown.
# Usage: bench/sctp_stream.sh [BUILD_DIR]   (env: REPS=5 SECS=5 SIZES="30 1000 65536" PIN=1)
set -uo pipefail
BUILD=${1:-build}
NSTACK=$BUILD/nstack
RAW=$BUILD/bench_tap_raw
REPS=${REPS:-5}
SECS=${SECS:-5}
SIZES=${SIZES:-30 1000 65536}
PIN=${PIN:-1}
PIN_A=()
PIN_B=()
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    PIN_A=(taskset -c 0)
    PIN_B=(taskset -c 1)
fi
[ "$(id -u)" -eq 0 ] || { echo "sctp_stream: needs root (namespaces, TAP)"; exit 77; }
[ -x "$NSTACK" ] && [ -x "$RAW" ] || { echo "sctp_stream: build $NSTACK and $RAW first"; exit 1; }
. "$(dirname "$0")/bridge.sh"
bench_bridge_setup ss

start_daemons() { # DEVOPT extra daemon args
    local opt=$1
    shift
    ip netns exec "$NS" "${PIN_A[@]}" "$NSTACK" daemon --dev "tap:$TA$opt" --addr 198.18.0.2/24 \
        --ctl "$WORK/a.sock" "$@" 2>"$WORK/a.log" &
    PIDS+=($!)
    ip netns exec "$NS" "${PIN_B[@]}" "$NSTACK" daemon --dev "tap:$TB$opt" --addr 198.18.0.3/24 \
        --ctl "$WORK/b.sock" --serve perf:5001 "$@" 2>"$WORK/b.log" &
    PIDS+=($!)
    for s in a b; do
        for _ in $(seq 100); do [ -S "$WORK/$s.sock" ] && break; sleep 0.05; done
        [ -S "$WORK/$s.sock" ] || { cat "$WORK/$s.log"; exit 1; }
    done
}

# stats: "median min max" of the numbers on stdin
stats() { sort -g | awk '{v[NR]=$1} END {if (!NR) {print "- - -"; exit}
    m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%s %s %s\n", m, v[1], v[NR]}'; }
fmt() { # median min max decimals -> "median (min-max)"
    awk -v m="$1" -v a="$2" -v b="$3" -v d="$4" 'BEGIN {
        f = "%." d "f"; printf(f " (" f "-" f ")", m, a, b) }'; }

declare -A MBIT RATE
# collect LABEL: one run of every size, rows appended per size
collect() {
    local label=$1
    for m in $SIZES; do
        out=$("$NSTACK" -C "$WORK/a.sock" perf -H 198.18.0.3 -l "$SECS" -m "$m" 2>&1) || {
            echo "perf -m $m failed: $out" >&2; continue; }
        row=$(echo "$out" | awk '/^bytes/ {getline; getline; print; exit}')
        rate=$(echo "$out" | awk '/messages\/s:/ {print $1}')
        echo "$row $rate" >>"$WORK/rows.$label.$m"
    done
}
# report LABEL: one table row per size
report() {
    local label=$1
    for m in $SIZES; do
        local f="$WORK/rows.$label.$m"
        touch "$f"
        read -r r_med r_min r_max < <(awk '{print $10}' "$f" | stats)
        read -r t_med t_min t_max < <(awk '{print $5}' "$f" | stats)
        read -r s_med s_min s_max < <(awk '{print $8}' "$f" | stats)
        read -r d_med d_min d_max < <(awk '{print $9}' "$f" | stats)
        MBIT[$label/$m]=$t_med
        RATE[$label/$m]=$r_med
        printf "| %s | %s | %s | %s | %s | %s | %s |\n" "$label" "$m" "$(wc -l <"$f")" \
            "$(fmt "$r_med" "$r_min" "$r_max" 0)" "$(fmt "$t_med" "$t_min" "$t_max" 2)" \
            "$(fmt "$s_med" "$s_min" "$s_max" 1)" "$(fmt "$d_med" "$d_min" "$d_max" 1)"
    done
}
# The variants take turns, first one then the other leading, so a drift
# of the shared machine over the run does not favour either.
run_variant() { # LABEL
    rm -f "$WORK"/*.sock
    case $1 in
    rcvq-lock) start_daemons "" --rcvq-lock ;;
    udp-offload) start_daemons ,offload --sctp-encap 9899 ;;
    *) start_daemons "" ;;
    esac
    collect "$1"
    stop_daemons
}

echo "Command: REPS=$REPS SECS=$SECS PIN=$PIN bench/sctp_stream.sh $BUILD ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs; daemons pinned: ${PIN_A[*]:-no})"
echo
echo "### Raw TAP -> bridge -> TAP (bench_tap_raw, $SECS s)"
echo
echo "| frame bytes | frames/s | Mbit/s (frame bytes) |"
echo "|---|---|---|"
declare -A RAWMBIT RAWFPS
for f in 64 1500 1500x44; do
    r=$(ip netns exec "$NS" "$RAW" "$TA" "$TB" $f "$SECS")
    fps=$(echo "$r" | awk '{print $10}')
    mb=$(echo "$r" | awk '{print $12}')
    RAWMBIT[$f]=$mb
    RAWFPS[$f]=$fps
    echo "| $f | $fps | $mb |"
done
echo
echo "### SCTP_STREAM (nstack perf), median (min-max) of $REPS runs"
echo
echo "| variant | msg bytes | runs | msgs/s | 10^6bits/s | SD send us/KB | SD recv us/KB |"
echo "|---|---|---|---|---|---|---|"
VARIANTS=(default rcvq-lock udp-offload)
for rep in $(seq "$REPS"); do
    # Rotate who goes first.
    for i in "${!VARIANTS[@]}"; do
        run_variant "${VARIANTS[$(((i + rep - 1) % ${#VARIANTS[@]}))]}"
    done
done
for v in "${VARIANTS[@]}"; do report "$v"; done
echo
if [ -n "${MBIT[default/65536]:-}" ]; then
    awk -v s="${MBIT[default/65536]}" -v r="${RAWMBIT[1500]}" 'BEGIN {
        printf "SCTP payload at 64 KiB messages: %.2f Mbit/s = %.1f%% of the raw 1500-byte frame rate (%.2f Mbit/s).\n", s, (r > 0 ? 100 * s / r : 0), r }'
fi
if [ -n "${MBIT[udp-offload/65536]:-}" ]; then
    awk -v s="${MBIT[udp-offload/65536]}" -v r="${RAWMBIT[1500]}" -v u="${RAWMBIT[1500x44]}" 'BEGIN {
        printf "SCTP over UDP on offload TAPs at 64 KiB messages: %.2f Mbit/s = %.1f%% of the raw 1500-byte frame rate, %.1f%% of the raw rate with USO frames (%.2f Mbit/s).\n", s, (r > 0 ? 100 * s / r : 0), (u > 0 ? 100 * s / u : 0), u }'
fi
if [ -n "${RATE[default/30]:-}" ]; then
    awk -v s="${RATE[default/30]}" -v r="${RAWFPS[64]}" 'BEGIN {
        printf "SCTP at 30-byte messages: %.0f msgs/s; the raw path carries %.0f 64-byte frames/s.\n", s, r }'
fi
