#!/bin/sh
# Runs every benchmark: each built bench/<name>.c binary, then each bench/<name>.sh script.
# Argument: the absolute build folder. Benchmarks print ratios measured in the same run.
set -eu
build="$1"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$build/bench-results"
for b in "$build"/bench/*; do
    [ -x "$b" ] && [ -f "$b" ] || continue
    case "$b" in *.o|*.d) continue ;; esac
    echo "== bench $(basename "$b")"
    TUNEDECK_BUILD="$build" "$b" --out "$build/bench-results/$(basename "$b").json"
done
for s in "$here"/*.sh; do
    [ "$(basename "$s")" = run.sh ] && continue
    [ -e "$s" ] || continue
    echo "== bench $(basename "$s" .sh)"
    TUNEDECK_BUILD="$build" sh "$s" "$build/bench-results/$(basename "$s" .sh).json"
done
