#!/usr/bin/env bash
# Runs every test: unit and simulation tests (ctest, ASan+UBSan build),
# integration tests against the Linux kernel (root, network namespaces),
# and each libFuzzer target over its committed corpus and regressions, then
# briefly. Ends with "N passed, N failed, N skipped".
set -uo pipefail
asan=${1:-build-asan}
fuzz=${2:-build-fuzz}
tsan=${3:-build-tsan}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
FUZZ_BRIEF=${FUZZ_BRIEF:-10}
passed=0 failed=0 skipped=0
failures=()
logdir=$(mktemp -d /tmp/nstack-check.XXXXXX)

record() { # name status(0 pass, 77 skip, else fail)
    case "$2" in
    0) passed=$((passed + 1)); echo "PASS $1" ;;
    77) skipped=$((skipped + 1)); echo "SKIP $1" ;;
    *) failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1 (log: $logdir/$(echo "$1" | tr / _).log)" ;;
    esac
}

echo "== static checks: layers, format"
scripts/check-layers.sh >"$logdir/layers.log" 2>&1
record "static/layers" $?
[ -s "$logdir/layers.log" ] && tail -3 "$logdir/layers.log"
if command -v clang-format >/dev/null; then
    git ls-files -co --exclude-standard '*.c' '*.h' | xargs clang-format --dry-run --Werror \
        >"$logdir/format.log" 2>&1
    rc=$?
    record "static/format" $rc
    [ $rc -ne 0 ] && head -20 "$logdir/format.log"
else
    record "static/format" 77
fi

echo "== unit and simulation tests ($asan)"
ctest_log="$logdir/ctest.log"
ctest --test-dir "$asan" -j 2 --output-on-failure --timeout 300 >"$ctest_log" 2>&1
ran=0
while read -r name status; do
    ran=1
    case "$status" in
    Passed) record "$name" 0 ;;
    Skipped) record "$name" 77 ;;
    *) record "$name" 1 ;;
    esac
done < <(sed -n 's/^ *[0-9]*\/[0-9]* *Test *#[0-9]*: \([^ ]*\) [.*]*\** *\([A-Za-z]*\).*/\1 \2/p' "$ctest_log")
[ $ran -eq 1 ] || record "ctest" 1
grep -q "tests failed" "$ctest_log" && ! grep -q " 0 tests failed" "$ctest_log" && \
    sed -n '/The following tests FAILED/,$p' "$ctest_log"

echo "== threaded tests under ThreadSanitizer ($tsan)"
for t in ${TSAN_TESTS:-}; do
    log="$logdir/tsan_$t.log"
    if [ -x "$tsan/$t" ]; then
        TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" timeout 600 "$tsan/$t" >"$log" 2>&1
        record "tsan/$t" $?
    else
        record "tsan/$t" 1
    fi
done

echo "== integration tests"
export NSTACK="$top/$asan/nstack"
for t in tests/integration/test_*.sh; do
    [ -f "$t" ] || continue
    name="integration/$(basename "$t" .sh)"
    log="$logdir/$(echo "$name" | tr / _).log"
    timeout 900 bash "$t" >"$log" 2>&1
    rc=$?
    record "$name" $rc
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && tail -30 "$log"
done

echo "== fuzz targets ($fuzz): corpus replay, then ${FUZZ_BRIEF}s each"
for f in "$fuzz"/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    log="$logdir/fuzz_$name.log"
    dirs=()
    [ -d "fuzz/corpus/$name" ] && dirs+=("fuzz/corpus/$name")
    [ -d "fuzz/regressions/$name" ] && dirs+=("fuzz/regressions/$name")
    rc=0
    if [ ${#dirs[@]} -gt 0 ]; then
        files=$(find "${dirs[@]}" -type f | sort)
        # shellcheck disable=SC2086
        [ -n "$files" ] && { "$f" $files >"$log" 2>&1 || rc=1; }
    fi
    record "fuzz/$name/replay" $rc
    work=$(mktemp -d)
    [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/"
    "$f" -max_total_time="$FUZZ_BRIEF" -rss_limit_mb=2048 -artifact_prefix="$logdir/$name-" "$work" \
        >>"$log" 2>&1
    record "fuzz/$name/run" $?
    rm -rf "$work"
done

echo
if [ ${#failures[@]} -gt 0 ]; then
    echo "failed: ${failures[*]}"
    echo "logs: $logdir"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
