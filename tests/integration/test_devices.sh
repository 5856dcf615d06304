#!/usr/bin/env bash
# Kernel devices inside a network namespace made for this test: runs the
# test_devices unit binary there with a veth pair, so the afpacket device is
# exercised end to end (veth A <-> veth B) in addition to the TAP tests.
# Needs root; exits 77 (skipped) without it. Everything is removed on exit,
# also on failure: the namespace (and with it the veth pair and any TAP).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${NSTACK:+$(dirname "$NSTACK")}
build=${build:-$top/build-asan}
bin=$build/test_devices
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root"
    exit 77
fi
if [ ! -x "$bin" ]; then
    echo "FAIL: $bin not built"
    exit 1
fi
log=$(mktemp /tmp/nsdev.XXXXXX)
ns=nsdev$$
va=nsva$$
vb=nsvb$$
cleanup() {
    ip netns del "$ns" 2>/dev/null || true
    rm -f "$log"
}
trap cleanup EXIT INT TERM
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add "$va" type veth peer name "$vb"
# No addresses: the devices move raw Ethernet frames only.
rc=0
ip netns exec "$ns" env NS_TEST_VETH_A="$va" NS_TEST_VETH_B="$vb" "$bin" >"$log" 2>&1 || rc=$?
cat "$log"
# Every test must have run for real: none skipped.
if [ $rc -ne 0 ] || ! grep -q '^\[  PASSED  \] 7 test(s)\.' "$log" || grep -q SKIPPED "$log"; then
    echo "FAIL: test_devices in namespace $ns (exit $rc)"
    exit 1
fi
echo "PASS: devices in namespace $ns"
