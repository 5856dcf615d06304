#!/usr/bin/env bash
# Installs the Debian packages a target needs, when missing.
#   scripts/install-deps.sh build   the library and the nstack binary (make, make demo)
#   scripts/install-deps.sh check   everything make check, make fuzz and make bench use
# Quiet when nothing is missing; as root it runs apt-get, otherwise it says
# what to install and fails.
set -euo pipefail
group=${1:-check}
build=(make gcc libc6-dev cmake pkg-config libssl-dev iproute2 iputils-ping)
check=("${build[@]}" clang libclang-rt-14-dev clang-format libcmocka-dev tshark python3-scapy
       socat libusrsctp-dev libusrsctp-examples valgrind debootstrap)
case "$group" in
build) pkgs=("${build[@]}") ;;
check) pkgs=("${check[@]}") ;;
*) echo "usage: $0 build|check" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
log=$(mktemp /tmp/nstack-apt.XXXXXX)
if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "apt-get failed (full log: $log)" >&2
    exit 1
fi
rm -f "$log"
