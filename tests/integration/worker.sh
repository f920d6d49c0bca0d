#!/bin/sh
# tunedeck-worker end to end: a 3-machine loopback trial through `tunedeck tune --launcher
# local`; the same trial as three per-host processes; --slowdown measurably slows its device
# (compared with its peers in the same run); job mode checkpoints on SIGTERM and resumes at
# another size from the saved step; bad input is refused. Every process started is stopped.
set -eu
: "${TUNEDECK_BUILD:?set TUNEDECK_BUILD to the build folder}"
BIN="${TUNEDECK_BIN:-$TUNEDECK_BUILD/tunedeck}"
WORKER="$TUNEDECK_BUILD/tunedeck-worker"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=/usr/bin/python3
TMP="$(mktemp -d /tmp/tunedeck-worker-test.XXXXXX)"
PIDS=""

cleanup() {
    trap "" HUP INT TERM # a second signal (Ctrl-C, then the runner's TERM) must not cut it short
    for p in $PIDS; do
        kill -KILL "$p" 2>/dev/null || true
    done
    # children of the worker processes share their parent's command line
    pkill -KILL -f "$TMP" 2>/dev/null || true
    # the shards' port span, leased below
    command -v port_lease_release >/dev/null 2>&1 && port_lease_release sshd
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up

fail() {
    echo "worker.sh: FAIL: $*" >&2
    exit 1
}

# A copy of the binary under $TMP, so that leftovers can be found by path.
cp "$WORKER" "$TMP/tunedeck-worker"
W="$TMP/tunedeck-worker"

no_leftovers() {
    sleep 0.2
    if pgrep -f "$W" >/dev/null; then
        pgrep -af "$W" >&2
        fail "$1: worker processes left behind"
    fi
}

# ---- 1. tune through the local launcher, 3 trials, real timings ----
# --no-prune: this checks that every trial runs the worker to its end; millisecond iterations
# on a loaded machine can be 2x apart, and the prune rule would stop one (seen in CI).
"$BIN" tune --cluster "$ROOT/examples/loopback-cluster.json" --job "$ROOT/examples/tiny-job.json" \
    --launcher local --trial-cmd "$W --all-local" --optimizer random --budget 3 --no-prune --json \
    > "$TMP/tune.json" || fail "tune exited non-zero"
$PY - "$TMP/tune.json" <<'PYEOF' || fail "tune result"
import json, sys
r = json.load(open(sys.argv[1]))
trials = r["trials"]
assert len(trials) == 3, trials
for t in trials:
    assert t["status"] == "ok", t
    assert t["time_s"] > 0, t
assert r["best_time_s"] > 0
print("tune: 3 trials ok, best %.4f s per iteration" % r["best_time_s"])
PYEOF
no_leftovers "tune"

# ---- 2. a fixed schedule: 3 equal workers, one slowed 6x, all-local and per-host ----
cat > "$TMP/sched.json" <<'JSON'
{"protocol": 1, "trial": 1, "iterations": 8, "warmup": 2,
 "job": {"name": "tiny", "model_mb": 2, "batch": 192},
 "machines": [
  {"name": "loop-0", "host": "127.0.0.1", "type": "loop.small", "worker": true, "ps": true,
   "devices": [{"id": "cpu", "inputs": 64}]},
  {"name": "loop-1", "host": "127.0.0.1", "type": "loop.small", "worker": true, "ps": false,
   "devices": [{"id": "cpu", "inputs": 64}]},
  {"name": "loop-2", "host": "127.0.0.1", "type": "loop.small", "worker": true, "ps": true,
   "devices": [{"id": "cpu", "inputs": 64}]}]}
JSON
check_slowdown() {
    $PY - "$1" "$2" <<'PYEOF'
import json, sys
dev, done, iters = {}, None, set()
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "iteration":
        iters.add(e["iter"])
        assert e["comm_s"] >= 0 and e["time_s"] > 0, e
        for m in e["machines"]:
            assert m["compute_s"] > 0, m
            for d in m["devices"]:
                dev.setdefault(m["name"], []).append(d["time_s"])
    elif e["event"] == "done":
        done = e["time_s"]
assert iters == set(range(8)), iters
assert done and done > 0, "no done line"
mean = {k: sum(v[2:]) / len(v[2:]) for k, v in dev.items()}
peers = (mean["loop-0"] + mean["loop-1"]) / 2
ratio = mean["loop-2"] / peers
print("%s: loop-2 (slowdown 6) device time %.4f s vs peers %.4f s: %.2fx"
      % (sys.argv[2], mean["loop-2"], peers, ratio))
assert ratio > 2.0, "slowdown not visible"
PYEOF
}
"$W" --all-local --slowdown loop-2=6 < "$TMP/sched.json" > "$TMP/local.out" || fail "all-local trial"
check_slowdown "$TMP/local.out" "all-local" || fail "all-local slowdown"
no_leftovers "all-local"

# The shards' ports: a span checked free and leased until the end (tests/port-lease.sh), as
# the sshd harness picks its own (suites side by side, and a pid-derived base could land in
# another run's span).
. "$ROOT/tests/port-lease.sh"
. "$ROOT/tests/sshd-harness.sh"
harness_pick_port || fail "no free port span"
base=$((H_PORT + 1))
for m in loop-0 loop-1 loop-2; do
    slow=""
    [ "$m" = loop-2 ] && slow="--slowdown 6"
    # shellcheck disable=SC2086
    TUNEDECK_MACHINE=$m TUNEDECK_TRIAL=1 "$W" --port-base "$base" --connect-timeout 20 $slow \
        < "$TMP/sched.json" > "$TMP/host-$m.out" &
    PIDS="$PIDS $!"
done
for p in $PIDS; do
    wait "$p" || fail "per-host worker $p exited non-zero"
done
PIDS=""
for m in loop-0 loop-1 loop-2; do
    grep -q '"event":"done"' "$TMP/host-$m.out" || fail "per-host $m printed no done line"
done
cat "$TMP"/host-loop-*.out | grep -v '"event":"done"' > "$TMP/hosts.out"
echo '{"event":"done","time_s":1}' >> "$TMP/hosts.out"
check_slowdown "$TMP/hosts.out" "per-host" || fail "per-host slowdown"
no_leftovers "per-host"

# ---- 3. job mode: SIGTERM -> checkpoint -> resume at another size ----
CK="$TMP/job.ckpt"
# In a process group of its own, stopped the way job control stops it: SIGTERM to the group.
# The output file exists before the job starts: the wait below must not read a missing file
# as zero progress lines and stop the job too early.
: > "$TMP/job1.out"
setsid "$W" --job --gpus 2 --checkpoint "$CK" --progress-every 0.2 > "$TMP/job1.out" \
    2> "$TMP/job1.err" &
JOB=$!
PIDS="$JOB"
i=0
while [ "$(grep -c progress "$TMP/job1.out" || true)" -lt 4 ]; do
    i=$((i + 1))
    [ $i -lt 150 ] || fail "job printed no progress in 15 s"
    sleep 0.1
done
pgid="$(ps -o pgid= -p "$JOB" | tr -d ' ')"
[ "$pgid" = "$JOB" ] || fail "the job is not its own process group ($pgid)"
kill -TERM "-$pgid"
rc=0
wait "$JOB" || rc=$?
PIDS=""
[ "$rc" -eq 0 ] || fail "job exited $rc on SIGTERM (expected 0)"
[ -s "$CK" ] || fail "no checkpoint written"
no_leftovers "job stop"
"$W" --job --gpus 3 --resume "$CK" --steps 10 --progress-every 0 > "$TMP/job2.out" 2> "$TMP/job2.err" ||
    fail "resumed job exited non-zero: $(cat "$TMP/job2.err")"
$PY - "$TMP/job1.out" "$TMP/job2.out" <<'PYEOF' || fail "resume"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert all(e["event"] == "progress" for e in a + b)
saved = a[-1]["step"]
assert b[0]["step"] == saved + 1, (saved, b[0])
assert b[-1]["step"] == saved + 10, b[-1]
assert b[0]["epoch"] > a[-1]["epoch"] > 0
# The loss continues from where it was, far below a fresh network's.
assert b[0]["loss"] < 0.9 * a[0]["loss"], (a[0]["loss"], b[0]["loss"])
assert b[-1]["examples_per_s"] > 0
print("job: stopped at step %d (loss %.3f, started at %.3f), resumed on 3 workers at step %d "
      "(loss %.3f) to %d" % (saved, a[-1]["loss"], a[0]["loss"], b[0]["step"], b[0]["loss"],
                             b[-1]["step"]))
PYEOF
grep -q "written by 2" "$TMP/job2.err" || fail "resume did not say the checkpoint's size"
no_leftovers "job resume"
# {gpu_ids} of one GPU is one worker, whichever GPU (regression: '3' ran 3, '0' was refused);
# a list of three is three.
for ids in 3:1 0:1 0,2,5:3; do
    rc=0; "$W" --job --gpu-ids "${ids%:*}" --steps 2 --resume '' --checkpoint "$TMP/ids.ckpt" \
        --progress-every 0 > "$TMP/ids.out" 2> "$TMP/ids.err" || rc=$?
    [ "$rc" = 0 ] || fail "--gpu-ids ${ids%:*}: exit $rc: $(cat "$TMP/ids.err")"
    grep -q "(${ids#*:} workers)" "$TMP/ids.err" ||
        fail "--gpu-ids ${ids%:*}: expected ${ids#*:} workers: $(cat "$TMP/ids.err")"
done
no_leftovers "gpu ids"
# --step-sleep paces the job (the live suites' stand-in jobs): 4 pauses of 0.25 s between 5
# steps take at least 1 s, where flat out 5 steps take milliseconds.
t0=$(date +%s%N)
"$W" --job --gpus 2 --steps 5 --step-sleep 0.25 --resume '' --checkpoint "$TMP/paced.ckpt" \
    --progress-every 0 > "$TMP/paced.out" 2> "$TMP/paced.err" || fail "--step-sleep: $(cat "$TMP/paced.err")"
paced_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$paced_ms" -ge 1000 ] || fail "--step-sleep 0.25: 5 steps took $paced_ms ms (expected >= 1000)"
grep -q '"step":5,' "$TMP/paced.out" || fail "--step-sleep: no step 5: $(cat "$TMP/paced.out")"
no_leftovers "paced job"

# ---- 4. bad input is refused with a reason ----
if echo '{"protocol": 1, "machines": 3' | "$W" --all-local > "$TMP/bad.out" 2>&1; then
    fail "malformed schedule accepted"
fi
grep -q "malformed JSON" "$TMP/bad.out" || fail "malformed schedule: no reason given"
if "$W" --all-local --slowdown nosuch=2 < "$TMP/sched.json" > "$TMP/bad.out" 2>&1; then
    fail "unknown --slowdown machine accepted"
fi
grep -q "nosuch" "$TMP/bad.out" || fail "--slowdown: no reason given"
printf 'garbage' >> "$CK"
if "$W" --job --gpus 1 --resume "$CK" --steps 1 > "$TMP/bad.out" 2>&1; then
    fail "corrupt checkpoint accepted"
fi
grep -q "checksum" "$TMP/bad.out" || fail "corrupt checkpoint: no reason given"
# A list flag names the element it refuses (--gpus 1,x once ran 2 workers); --gpus takes no
# list (it once read '3' from {gpu_ids} as 3 workers and refused '0'), nor both flags at once.
for bad in "--gpu-ids 1,x:element 2 of '1,x' is 'x'" "--gpu-ids 0,,1:element 2 of '0,,1' is ''" \
    "--gpu-ids 0,-1:element 2 of '0,-1' is '-1'" "--gpus 2 --hosts a,,b:--hosts: element 2 of 'a,,b' is ''" \
    "--gpus 0,1:GPU indices go to --gpu-ids" "--gpus 2 --gpu-ids 1:expected one of them" \
    "--gpus 1 --step-sleep -1:--step-sleep: expected a number from 0 to 60"; do
    flag="${bad%%:*}"
    rc=0; "$W" --job $flag --steps 1 --resume '' --checkpoint "$TMP/never.ckpt" \
        > "$TMP/bad.out" 2>&1 || rc=$?
    [ "$rc" = 2 ] || fail "$flag: exit $rc, expected 2: $(cat "$TMP/bad.out")"
    grep -q -- "${bad#*:}" "$TMP/bad.out" || fail "$flag: the bad element is not named: $(cat "$TMP/bad.out")"
    [ -e "$TMP/never.ckpt" ] && fail "$flag: the job ran"
done
no_leftovers "bad input"
echo "worker.sh: ok"
