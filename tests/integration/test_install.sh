#!/usr/bin/env bash
# The library boundary as an embedder meets it: a release build installed
# into a temporary prefix must install only the public headers
# (include/nstack), export only ns_ functions from libnstack.so, and let a
# program written against <nstack/nstack.h> alone (examples/byo_transport.c:
# two SCTP sockets over a transport of its own) build and run with
# pkg-config, and with CMake's find_package(nstack) against both the shared
# and the static target. No root needed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/nstack-install.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
PREFIX="$WORK/prefix"

cmake -S "$top" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DNS_TESTS=OFF \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" >"$WORK/configure.log" 2>&1 ||
    { tail -20 "$WORK/configure.log"; fail "configure"; }
cmake --build "$WORK/build" -j "$(nproc)" --target nstack nstack_static nstack_shared \
    >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "build"; }
cmake --install "$WORK/build" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "install"; }

# Only the public headers, and only ns_ symbols.
extra=$(cd "$PREFIX/include" && find . -type f ! -path './nstack/*' | head)
[ -z "$extra" ] || fail "installed headers outside include/nstack: $extra"
inner=$(cd "$PREFIX/include/nstack" && ls | grep -vE '^(nstack|types|pkt|stack|dev|socket|udp_host)\.h$')
[ -z "$inner" ] || fail "unexpected headers in include/nstack: $inner"
lib=$(ls "$PREFIX"/lib*/libnstack.so | head -1)
[ -n "$lib" ] || fail "no libnstack.so installed"
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
n=$(echo "$syms" | wc -l)
bad=$(echo "$syms" | grep -v '^ns_' | head)
[ -z "$bad" ] || fail "libnstack.so exports non-ns_ symbols: $bad"
echo "measure: libnstack.so exports $n symbols, all ns_"
ok "install: public headers only, ns_ exports only"

# pkg-config: the example built against the installed files alone.
export PKG_CONFIG_PATH="$(dirname "$lib")/pkgconfig"
pkg-config --cflags --libs nstack >"$WORK/pc.txt" || fail "pkg-config nstack"
grep -q -- "-I$PREFIX/include" "$WORK/pc.txt" || fail "pkg-config cflags: $(cat "$WORK/pc.txt")"
grep -q "src" "$WORK/pc.txt" && fail "pkg-config puts internal paths on the compile line"
pkg-config --modversion nstack >/dev/null || fail "no version"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$WORK/byo_pc" "$top/examples/byo_transport.c" \
    $(pkg-config --cflags --libs nstack) -lpthread || fail "example with pkg-config"
LD_LIBRARY_PATH="$(dirname "$lib")" "$WORK/byo_pc" >"$WORK/byo_pc.out" 2>&1 ||
    { cat "$WORK/byo_pc.out"; fail "example (pkg-config build) run"; }
ok "pkg-config: examples/byo_transport.c builds on <nstack/nstack.h> alone and runs"

# find_package, shared and static.
mkdir -p "$WORK/embed"
cp "$top/examples/byo_transport.c" "$WORK/embed/"
cat >"$WORK/embed/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(embed C)
set(CMAKE_C_STANDARD 11)
find_package(nstack 0.1 REQUIRED)
find_package(Threads REQUIRED)
add_executable(byo_shared byo_transport.c)
target_link_libraries(byo_shared PRIVATE nstack::nstack Threads::Threads)
add_executable(byo_static byo_transport.c)
target_link_libraries(byo_static PRIVATE nstack::nstack_static)
EOF
cmake -S "$WORK/embed" -B "$WORK/embed/b" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$WORK/embed.log" 2>&1 &&
    cmake --build "$WORK/embed/b" >>"$WORK/embed.log" 2>&1 ||
    { tail -30 "$WORK/embed.log"; fail "find_package(nstack) build"; }
for t in byo_shared byo_static; do
    LD_LIBRARY_PATH="$(dirname "$lib")" "$WORK/embed/b/$t" >"$WORK/$t.out" 2>&1 ||
        { cat "$WORK/$t.out"; fail "$t run"; }
done
ok "find_package(nstack): nstack::nstack and nstack::nstack_static build and run the example"
echo "PASS"
