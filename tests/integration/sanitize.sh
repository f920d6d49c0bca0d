#!/bin/sh
# The unit tests and the headless commands under AddressSanitizer + UndefinedBehaviorSanitizer
# (a second build tree, build-san), then the headless commands under valgrind (the normal
# build). Zero errors and zero leaks, or it fails. Set SANITIZE_SKIP_VALGRIND=1 or
# SANITIZE_SKIP_ASAN=1 to run one half. `make test-san` runs it alone.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TUNEDECK_BUILD:-$root/build}"
san_build="$root/build-san"
work="$(mktemp -d /tmp/td-sanitize.XXXXXX)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
export TUNEDECK_STATE_DIR="$work/state"
failures=0
fail() { echo "sanitize: FAIL: $*"; failures=$((failures + 1)); }

# Writes the inputs the cases read: a cluster and job on this machine, a schedule, bad files.
make_inputs() {
    cat >"$work/cluster.json" <<'JSON'
{"name":"here","machine_types":{"t":{"bandwidth_gbps":1,"devices":[{"id":"cpu","kind":"cpu","threads":4}]}},
 "machines":[{"name":"n[1-2]","host":"localhost","type":"t"}],"trial":{"launch":"local"}}
JSON
    printf '{"name":"j","model_mb":10,"batch":64,"iterations":4,"warmup":1}\n' >"$work/job.json"
    cat >"$work/slowcluster.json" <<'JSON'
{"name":"slow","machine_types":{"t":{"bandwidth_gbps":1,"devices":[{"id":"cpu","kind":"cpu","threads":4}]}},
 "machines":[{"name":"s[0-1]","host":"slow-[0-1].invalid","type":"t"}],"ssh":{"connect_timeout_s":1},
 "trial":{"launch":"per-host","command":"true"}}
JSON
    printf '{"name":"j","model_mb":"ten","batch":64}\n' >"$work/badjob.json"
    printf '{"name":"x","machine_types":{"t":{"bandwidth_gbps":1,"devices":[]}},"machines":[]}\n' \
        >"$work/badcluster.json"
    printf '{"name": "x", "machines": [\n' >"$work/truncated.json"
    # A parameter-server trial of two forked machines for tunedeck-worker --all-local: what
    # each child inherits of the parent's bookkeeping is counted at its exit too.
    cat >"$work/worker.json" <<'JSON'
{"protocol": 1, "trial": 1, "iterations": 2, "warmup": 1,
 "job": {"name": "tiny", "model_mb": 0.05, "batch": 24},
 "machines": [
  {"name": "loop-0", "host": "127.0.0.1", "type": "loop.small", "worker": true, "ps": true,
   "devices": [{"id": "cpu", "inputs": 8}]},
  {"name": "loop-1", "host": "127.0.0.1", "type": "loop.small", "worker": true, "ps": false,
   "devices": [{"id": "cpu", "inputs": 16}]}]}
JSON
    # A trial that prints one of everything: good lines, garbage, an error event.
    cat >"$work/noisy.sh" <<'SH'
cat >/dev/null
echo 'not json at all'
echo '{"event":"iteration","iter":0,"time_s":1.5,"machines":[{"name":"n1","devices":[{"id":"cpu","time_s":1.2}]}]}'
echo '{"event":"iteration","iter":1,"time_s":"slow"}'
echo '{"event":"iteration","iter":2,"time_s":1.4,"comm_s":0.1,"machines":[{"name":"n9"}]}'
echo '{"event":"iteration","iter":3,"time_s":1.3}'
echo '{"event":"done","time_s":1.35}'
SH
}

# run NAME EXPECTED_RC STDIN_FILE CMD...: runs under $wrap; fails on a sanitizer or valgrind
# report or on an exit status other than the expected one (which catches their exit codes).
run() {
    name="$1" want="$2" input="$3"
    shift 3
    rc=0
    $wrap "$@" <"$input" >"$work/out" 2>"$work/err" || rc=$?
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|==[0-9]+== (Invalid|Conditional|Use of|Syscall param|[0-9,]+ bytes in)' "$work/err"; then
        fail "$label $name: report:"
        grep -E 'Sanitizer|runtime error|==[0-9]+==' "$work/err" | head -15
    elif [ "$rc" != "$want" ]; then
        fail "$label $name: exit $rc, expected $want: $(tail -3 "$work/err")"
    fi
}

cases() { # $1: tunedeck binary; $2: "full" (asan) or "short" (valgrind, ~20x slower)
    t="$1"
    run "tune sim A random" 0 /dev/null "$t" tune --sim A:googlenet --optimizer random --budget 3 --json
    run "sim-trial" 0 "$work/schedule.json" "$t" sim-trial B:googlenet --seed 3
    run "sim-trial malformed input" 3 "$work/truncated.json" "$t" sim-trial B:googlenet
    run "tune bad job" 3 /dev/null "$t" tune --cluster "$work/cluster.json" --job "$work/badjob.json"
    run "tune resume damaged journal" 0 /dev/null "$t" tune --resume "$(cat "$work/id")" --budget 3
    run "sessions" 0 /dev/null "$t" sessions
    run "worker all-local" 0 "$work/worker.json" "$(dirname "$t")/tunedeck-worker" --all-local
    run "worker malformed schedule" 3 "$work/truncated.json" "$(dirname "$t")/tunedeck-worker" --all-local
    # drains and holds, one between two decisions: the usable-GPU log and the GPUs ours hold
    run "schedule drain hold" 0 /dev/null "$t" schedule --workload "$root/tests/fixtures/workload-small.csv" \
        --policy doubling --nodes 2 --drain node01@900 --hold node00=1@330 --json
    [ "$2" = full ] || return 0
    run "tune sim B uniform-gpus" 0 /dev/null "$t" tune --sim B:alexnet --optimizer uniform-gpus --budget 2
    run "tune sim C G40" 0 /dev/null "$t" tune --sim G40:speechnet --optimizer uniform-devices --budget 2
    run "tune bad cluster" 3 /dev/null "$t" tune --cluster "$work/badcluster.json" --job "$work/job.json"
    run "tune truncated cluster" 3 /dev/null "$t" tune --cluster "$work/truncated.json" --job "$work/job.json"
    run "tune bad flag" 2 /dev/null "$t" tune --sim A:googlenet --budget lots
    run "tune bad sim" 2 /dev/null "$t" tune --sim Z:nothing
    run "tune unknown optimizer" 2 /dev/null "$t" tune --sim A:googlenet --optimizer nope
    run "tune local noisy trial" 0 /dev/null "$t" tune --cluster "$work/cluster.json" --job "$work/job.json" \
        --trial-cmd "sh $work/noisy.sh" --optimizer random --budget 2
    run "tune local sim-trial" 0 /dev/null "$t" tune --sim B:googlenet --launcher local \
        --trial-cmd "$t sim-trial B:googlenet" --optimizer random --budget 2
    run "tune resume unknown" 2 /dev/null "$t" tune --resume no-such-session
    # name lookups still running at the exit (lib/slowdns.sh: each takes 60 s; the hosts are
    # down at their 1 s deadline and the one trial unreachable): let go of, never a leak
    if sh "$root/tests/integration/lib/slowdns.sh" --probe; then
        run "tune lookups running at exit" 1 /dev/null sh "$root/tests/integration/lib/slowdns.sh" \
            "$work/dns" "$t" tune --cluster "$work/slowcluster.json" --job "$work/job.json" \
            --budget 1 --no-journal
    fi
    run "sessions --json" 0 /dev/null "$t" sessions --json
    run "help" 0 /dev/null "$t" --help
}

# Inputs that need a binary: a schedule, and a damaged journal to resume.
prepare() {
    make_inputs
    "$build/tunedeck" tune --sim B:googlenet --optimizer random --budget 1 --json --no-journal 2>/dev/null |
        python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["trials"][0]["schedule"]))' \
            >"$work/schedule.json"
    "$build/tunedeck" tune --sim A:googlenet --optimizer random --budget 2 --json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])' >"$work/id"
    j="$TUNEDECK_STATE_DIR/sessions/$(cat "$work/id").jsonl"
    sed -i '3s/.*/{"event":"started" garbage/' "$j"
    printf '{"event":"suggested","tri' >>"$j"
}

[ -x "$build/tunedeck" ] || make -s -C "$root" -j2 all
prepare

if [ -z "${SANITIZE_SKIP_ASAN:-}" ]; then
    label="asan"
    start=$(date +%s)
    # make test built it before the suites began (the compile is the Makefile's san-tree);
    # run alone, the suite builds it here.
    make -s -C "$root" san-tree
    export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    if ! TUNEDECK_BIN="$san_build/tunedeck" TUNEDECK_BUILD="$san_build" \
        "$san_build/unit-tests" --jobs 2 >"$work/unit.log" 2>&1 ||
        grep -qE 'Sanitizer|runtime error:' "$work/unit.log"; then
        fail "asan: unit tests:"
        grep -E 'Sanitizer|runtime error|FAIL|Synthesis' "$work/unit.log" | head -20
    fi
    wrap=""
    cases "$san_build/tunedeck" full
    unset ASAN_OPTIONS UBSAN_OPTIONS
    echo "sanitize: asan+ubsan: unit tests and headless commands done in $(($(date +%s) - start)) s"
fi

if [ -z "${SANITIZE_SKIP_VALGRIND:-}" ]; then
    if command -v valgrind >/dev/null 2>&1; then
        label="valgrind"
        start=$(date +%s)
        prepare
        wrap="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --track-origins=yes"
        cases "$build/tunedeck" short
        echo "sanitize: valgrind: headless commands done in $(($(date +%s) - start)) s"
    else
        echo "sanitize: valgrind skipped: not installed (make deps installs it)"
    fi
fi
[ "$failures" -eq 0 ] || { echo "sanitize: $failures failures"; exit 1; }
echo "sanitize: ok: zero sanitizer and valgrind errors"
