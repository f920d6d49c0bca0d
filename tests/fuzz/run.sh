#!/bin/sh
# Builds the libFuzzer targets and runs each for a bounded time over its seed corpus.
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]   (run from anywhere)
# New inputs found go to BUILD_DIR/corpus/<parser>/ (kept between runs, never committed);
# a crash leaves its input in BUILD_DIR/crashes/ and fails the run. Exit 77: no libFuzzer.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1"
seconds="$2"
shift 2
cc="${FUZZ_CC:-clang}"
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: skipped: $cc is not installed (make deps installs clang)"
    exit 77
fi
probe="$(mktemp -d)"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}\n' \
    >"$probe/p.c"
if ! "$cc" -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
    rm -rf "$probe"
    echo "fuzz: skipped: $cc has no libFuzzer (-fsanitize=fuzzer)"
    exit 77
fi
rm -rf "$probe"
cd "$root"
make -s -f tests/fuzz/fuzz.mk -j2 FUZZ_BUILD="$build" FUZZ_CC="$cc"
targets="$*"
[ -n "$targets" ] || targets="$(cd tests/fuzz && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')"
mkdir -p "$build/crashes"
failed=""
for t in $targets; do
    mkdir -p "$build/corpus/$t"
    log="$build/fuzz_$t.log"
    # -timeout: one input taking this long is a hang; -rss_limit_mb bounds memory blow-ups.
    if "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/crashes/$t-" \
        "$build/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
        runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
        cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)"
        echo "fuzz $t: ok ($runs inputs in ${seconds}s, $cov)"
    else
        echo "fuzz $t: FAILED; input in $build/crashes/, log $log:"
        grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==' "$log" | head -8
        failed="$failed $t"
    fi
done
[ -z "$failed" ] || { echo "fuzz: crashes in:$failed"; exit 1; }
