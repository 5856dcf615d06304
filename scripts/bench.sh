#!/usr/bin/env bash
# `make bench`: every benchmark, results as Markdown on stdout.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "## ARP first-packet latency"
bench/arp_latency.sh "$build/nstack" "${ARP_REPS:-200}" "${ARP_INTERVAL:-0.05}"
echo
echo "## SCTP_STREAM between two daemons (TAP + bridge)"
REPS=${SCTP_REPS:-5} SECS=${SCTP_SECS:-5} bench/sctp_stream.sh "$build"
echo
echo "## SCTP over UDP encapsulation on loopback: nstack and usrsctp (tsctp)"
REPS=${USRSCTP_REPS:-5} SECS=${USRSCTP_SECS:-5} bench/usrsctp_stream.sh "$build"
