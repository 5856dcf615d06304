#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 machine: a minimal
# bookworm (debootstrap --variant=minbase, plus `make`, which the newcomer
# needs to type them) in a chroot, with this tree copied in as a fresh
# checkout would have it.
#   1. `make demo` first: it must install its own packages, build only what
#      it runs, open with the demo (not the compiler's output), and run to
#      the end (namespaces and TAPs inside the chroot).
#   2. In a second fresh chroot, what `make check` does before its tests:
#      its package step, then configuring each of its builds (ASan, TSan,
#      libFuzzer: every find_package must resolve) and building and running
#      one unit test; and, statically, that every build step of `make check`
#      and `make demo` comes after an install step (`make -n`).
# The base system and the downloaded packages are cached outside the repo
# (NSTACK_FRESH_CACHE, default /var/cache/nstack/fresh) so a rerun needs no
# download. Skips (77) when the Debian mirror cannot be reached.
. "$(dirname "$0")/lib.sh"
need_root
top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${NSTACK_FRESH_CACHE:-/var/cache/nstack/fresh}
BASE="$CACHE/bookworm-minbase.tar"
MIRROR=${NSTACK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
command -v debootstrap >/dev/null || { echo "SKIP: debootstrap missing"; exit 77; }
mkdir -p "$CACHE/archives/partial"
ROOTS=()
WORK=$(mktemp -d /var/tmp/nstack-fresh.XXXXXX)

umount_root() {
    local r=$1 m
    # Innermost first.
    for m in $(awk -v r="$r/" 'index($2 "/", r) == 1 {print $2}' /proc/mounts | sort -r); do
        umount -l "$m" 2>/dev/null
    done
}
# Removes a root only once nothing is mounted below it (never through a
# bind mount of /dev or /sys).
remove_root() {
    umount_root "$1"
    if awk -v r="$1/" 'index($2 "/", r) == 1 {found = 1} END {exit !found}' /proc/mounts; then
        echo "warning: $1 still has mounts; left in place"
        return
    fi
    rm -rf --one-file-system "$1"
}
cleanup() {
    for r in "${ROOTS[@]}"; do
        # Namespaces a failed demo may have left inside the chroot.
        for n in $(chroot "$r" ip netns list 2>/dev/null | awk '{print $1}'); do
            chroot "$r" ip netns del "$n" 2>/dev/null
        done
        remove_root "$r"
    done
    awk -v r="$WORK/" 'index($2 "/", r) == 1 {found = 1} END {exit !found}' /proc/mounts ||
        rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT

if [ ! -f "$BASE" ]; then
    echo "building the cached base system ($BASE)"
    tmp="$WORK/base"
    if ! debootstrap --variant=minbase --cache-dir="$CACHE/archives" bookworm "$tmp" "$MIRROR" \
        >"$WORK/debootstrap.log" 2>&1; then
        tail -5 "$WORK/debootstrap.log"
        echo "SKIP: debootstrap from $MIRROR failed (no mirror reachable?)"
        exit 77
    fi
    tar -C "$tmp" -cf "$BASE.tmp" . && mv "$BASE.tmp" "$BASE"
    rm -rf "$tmp"
fi

# A fresh root with the tree in /root/nstack (the files git has, as they
# are in the working tree: what a clone of this commit would hold).
new_root() { # NAME: sets R
    local r="$WORK/$1"
    R=$r
    mkdir -p "$r"
    tar -C "$r" -xf "$BASE"
    ROOTS+=("$r")
    cp /etc/resolv.conf "$r/etc/resolv.conf"
    # A mount point of its own: `ip netns exec` remounts / as a slave.
    mount --bind "$r" "$r"
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs tmpfs "$r/run"
    mount -t tmpfs tmpfs "$r/tmp"
    mount --bind "$CACHE/archives" "$r/var/cache/apt/archives"
    # Keep what apt downloads (the base image deletes nothing, but be sure).
    echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$r/etc/apt/apt.conf.d/01keep"
    mkdir -p "$r/root/nstack"
    (cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2>/dev/null) |
        tar -C "$r/root/nstack" -xf -
    in_root "$r" apt-get update -qq >/dev/null 2>&1 || fail "apt-get update in the chroot"
    in_root "$r" apt-get install -y -qq make >/dev/null 2>&1 || fail "apt-get install make in the chroot"
}
in_root() {
    local r=$1
    shift
    chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

# ---- 1. make demo on a fresh machine ----
new_root demo
R1=$R
for p in cmake gcc libssl-dev libcmocka-dev; do
    in_root "$R1" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" &&
        fail "the fresh root already has $p"
done
t0=$(date +%s)
in_root "$R1" sh -c 'cd /root/nstack && make demo' >"$WORK/demo.out" 2>&1
rc=$?
echo "measure: make demo in a fresh chroot: exit $rc in $(($(date +%s) - t0)) s"
sed 's/^/  | /' "$WORK/demo.out" | head -30
[ $rc -eq 0 ] || { tail -40 "$WORK/demo.out"; fail "make demo failed on a fresh machine"; }
# Its first screen is the demo: a package line, one build line, then the
# demo itself; no compiler or CMake output.
head -12 "$WORK/demo.out" >"$WORK/demo.head"
grep -Eq "Building C object|^(/usr/bin/)?(cc|gcc) |warning:|error:|^-- |^\[ *[0-9]+%\]" "$WORK/demo.head" &&
    fail "make demo's first screen shows build output"
grep -q "^nstack demo: building nstack" "$WORK/demo.head" || fail "no build progress line"
grep -q "== mode: TAP" "$WORK/demo.head" || fail "the demo does not start on the first screen"
grep -q "bytes from 198.18.0.1" "$WORK/demo.out" || fail "demo: no ping reply"
grep -Eq "^[0-9]+ messages/s: [1-9][0-9]* messages received of [0-9]+ sent$" "$WORK/demo.out" ||
    fail "demo: no SCTP_STREAM result"
[ -d "$R1/root/nstack/build/CMakeFiles" ] || fail "no build directory"
ls "$R1"/root/nstack/build/test_* >/dev/null 2>&1 && fail "make demo built the tests"
in_root "$R1" dpkg-query -W -f='${Status}' libcmocka-dev 2>/dev/null | grep -q "install ok" &&
    fail "make demo installed the test packages"
ok "make demo works first on a fresh machine, opens with the demo, builds no tests"
remove_root "$R1"
ROOTS=()

# ---- 2. make check's install step on a fresh machine ----
new_root check
R2=$R
t0=$(date +%s)
in_root "$R2" sh -c 'cd /root/nstack && make deps' >"$WORK/deps.out" 2>&1 ||
    { tail -20 "$WORK/deps.out"; fail "make deps failed on a fresh machine"; }
echo "measure: make check's packages on a fresh chroot: $(($(date +%s) - t0)) s"
in_root "$R2" sh -c 'cd /root/nstack &&
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNS_TESTS=ON -DNS_SANITIZE=address,undefined &&
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DNS_TESTS=ON -DNS_SANITIZE=thread &&
    CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DNS_FUZZ=ON -DNS_TESTS=OFF \
        -DNS_SANITIZE=address,undefined &&
    grep -q "^USRSCTP_FOUND:INTERNAL=1" build-asan/CMakeCache.txt &&
    cmake --build build-asan -j 2 --target test_crc32c && ./build-asan/test_crc32c' \
    >"$WORK/configure.out" 2>&1 || { tail -30 "$WORK/configure.out"; fail "configuring make check's builds"; }
ok "on a fresh machine make check's install step gives every build what it needs"

# ---- 3. every build step of both README targets comes after its install step ----
for target in demo check; do
    plan=$(cd "$top" && make -n "$target" 2>/dev/null)
    first_deps=$(echo "$plan" | grep -n "install-deps.sh" | head -1 | cut -d: -f1)
    first_build=$(echo "$plan" | grep -nE "cmake|scripts/demo.sh|scripts/check.sh" | head -1 | cut -d: -f1)
    [ -n "$first_deps" ] || fail "make $target runs no install step"
    [ "$first_deps" -lt "${first_build:-999999}" ] || fail "make $target builds before it installs"
done
ok "make demo and make check install their packages before they build"
