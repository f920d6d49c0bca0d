#!/bin/sh
# A short bounded fuzz pass over every parser (tests/fuzz/): FUZZ_SECONDS each (default 3);
# `make fuzz` runs the long one. Skips with a message when clang's libFuzzer is missing.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
build="${TUNEDECK_BUILD:-$here/../../build}/fuzz"
rc=0
sh "$here/../fuzz/run.sh" "$build" "${FUZZ_SECONDS:-3}" || rc=$?
[ "$rc" -eq 77 ] && exit 0
exit "$rc"
