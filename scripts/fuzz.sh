#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each, growing its corpus in a
# scratch copy; crashes land in fuzz/artifacts/ (copy them to
# fuzz/regressions/<target>/ once fixed so `make check` replays them).
set -uo pipefail
build=${1:-build-fuzz}
secs=${2:-60}
cd "$(dirname "$0")/.."
mkdir -p fuzz/artifacts
status=0
for f in "$build"/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    work="fuzz/artifacts/corpus-$name"
    mkdir -p "$work"
    [ -d "fuzz/corpus/$name" ] && cp -rn "fuzz/corpus/$name/." "$work/"
    echo "== $name for ${secs}s"
    "$f" -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 \
        -artifact_prefix="fuzz/artifacts/$name-" "$work" 2>&1 | grep -E "^(#[0-9]+ *DONE|stat::|==|SUMMARY)|cov:" | tail -4
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
exit $status
