#!/bin/sh
# tunedeck-worker end to end: a 3-machine loopback trial through `tunedeck tune --launcher
# local`; the same trial as three per-host processes, while peers without the trial's secret
# are refused at one shard's port (the trial still runs to its end with its timings); --slowdown measurably slows its device
# (compared with its peers in the same run); job mode checkpoints on SIGTERM and resumes at
# another size from the saved step; bad input (a per-host schedule without its secret too) is
# refused. Every process started is stopped.
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

. "$(dirname "$0")/lib/procs_left.sh"
no_leftovers() {
    if [ "$(procs_left "$W")" -gt 0 ]; then
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
# Per host, the schedule carries the trial's secret, as tunedeck's launchers add it; a worker
# started by hand needs one of its own (section 4: refused without).
secret="$($PY -c 'import secrets; print(secrets.token_hex(32))')"
$PY - "$TMP/sched.json" "$secret" > "$TMP/sched-secret.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["ps_secret"] = sys.argv[2]
print(json.dumps(s))
PYEOF
start_host() {
    slow=""
    [ "$1" = loop-2 ] && slow="--slowdown 6"
    # shellcheck disable=SC2086
    TUNEDECK_MACHINE=$1 TUNEDECK_TRIAL=1 "$W" --port-base "$base" --connect-timeout 20 $slow \
        < "$TMP/sched-secret.json" > "$TMP/host-$1.out" 2> "$TMP/host-$1.err" &
    PIDS="$PIDS $!"
}
# loop-0's shard waits for its 3 workers; before the other two start, peers without the secret
# knock on its port: garbage, a worker of the protocol before the handshake, a well-formed
# hello whose proof is made with another key, and one that says nothing. Each must be dropped
# with its address and reason, and the trial must then run as if they had never come.
start_host loop-0
$PY - "$base" "$TMP/attacks-done" "$TMP/silent.result" > "$TMP/attack.out" 2>&1 <<'PYEOF' &
import hashlib, hmac, os, socket, struct, sys, time
port, done, silent_result = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def dial():
    for _ in range(400):  # the shard may not listen yet
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=60)
        except OSError:
            time.sleep(0.05)
    raise SystemExit("no shard listening on %d" % port)
def until_closed(s):
    try:
        while s.recv(4096):
            pass
    except ConnectionResetError:
        pass
    s.close()
def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        assert c, "closed before the challenge"
        b += c
    return b
s = dial(); s.sendall(os.urandom(80)); until_closed(s)
s = dial(); s.sendall(b"TDPS" + struct.pack("<HH", 1, 1) + bytes(56)); until_closed(s)
# TDPA v1 hello from rank 1 with our nonce, then a proof keyed with a wrong secret
nonce = os.urandom(32)
s = dial()
s.sendall(b"TDPA" + bytes([1, 1, 0, 0]) + struct.pack("<I", 1) + bytes(4) + nonce + bytes(32))
ch = recv_exact(s, 80)
assert ch[:4] == b"TDPA" and ch[5] == 2, ch[:8]
msg = b"tunedeck-ps-auth\0worker\0" + bytes([1]) + struct.pack("<II", 0, 1) + nonce + ch[16:48]
mac = hmac.new(os.urandom(32), msg, hashlib.sha256).digest()
s.sendall(b"TDPA" + bytes([1, 3, 0, 0]) + struct.pack("<I", 1) + bytes(4) + bytes(32) + mac)
until_closed(s)
quiet = dial()
open(done, "w").close()
quiet.settimeout(120)
try:
    r = quiet.recv(1)
    open(silent_result, "w").write("closed by the shard\n" if r == b"" else "got data\n")
except ConnectionResetError:
    open(silent_result, "w").write("closed by the shard\n")
except socket.timeout:
    open(silent_result, "w").write("never closed\n")
PYEOF
ATTACK=$!
PIDS="$PIDS $ATTACK"
i=0
while [ ! -e "$TMP/attacks-done" ]; do
    i=$((i + 1))
    [ $i -lt 300 ] || fail "the peers without the secret did not get through in 30 s: $(cat "$TMP/attack.out")"
    kill -0 "$ATTACK" 2>/dev/null || fail "the peers without the secret failed: $(cat "$TMP/attack.out")"
    sleep 0.1
done
start_host loop-1
start_host loop-2
for p in $PIDS; do
    wait "$p" || fail "per-host worker or peer $p exited non-zero: $(cat "$TMP"/host-loop-*.err "$TMP/attack.out")"
done
PIDS=""
for m in loop-0 loop-1 loop-2; do
    grep -q '"event":"done"' "$TMP/host-$m.out" || fail "per-host $m printed no done line"
done
for why in "not a tunedeck-worker handshake" "protocol without the handshake" \
    "wrong proof (the peer does not hold this job's secret)"; do
    grep -q "shard 0: refused 127\.0\.0\.1:[0-9]*: .*$why" "$TMP/host-loop-0.err" ||
        fail "no refusal '$why' in loop-0's log: $(cat "$TMP/host-loop-0.err")"
done
# the silent one: dropped when every worker had joined, or by its own 20 s if they were slower
grep -q "refused 127\.0\.0\.1:[0-9]*: \(every worker had joined before its handshake ended\|no complete handshake within 20 s\)" \
    "$TMP/host-loop-0.err" || fail "the silent peer was not dropped: $(cat "$TMP/host-loop-0.err")"
[ "$(grep -c 'refused' "$TMP/host-loop-0.err")" = 4 ] ||
    fail "expected 4 refusals: $(cat "$TMP/host-loop-0.err")"
grep -qx "closed by the shard" "$TMP/silent.result" || fail "the silent peer: $(cat "$TMP/silent.result")"
grep -q "$secret" "$TMP"/host-loop-*.out "$TMP"/host-loop-*.err && fail "the secret is in a log"
echo "per-host: 4 peers without the secret refused, each with its address and reason"
# The worker reads its schedule with read(2) into a buffer it grows by copy-and-wipe, so that
# no stale copy of the ps_secret stays on the heap: 300 kB of blank lines before the secret
# take that buffer (4 kB at first) through several growths; the secret at the end is still
# found, and a bad one there is still refused.
$PY - "$TMP/sched-secret.json" > "$TMP/padded.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
secret = s.pop("ps_secret")
print(json.dumps(s)[:-1] + "\n" * 300000 + ', "ps_secret": "%s"}' % secret)
PYEOF
[ "$(wc -c < "$TMP/padded.json")" -gt 300000 ] || fail "the padded schedule is short"
"$W" --all-local < "$TMP/padded.json" > "$TMP/padded.out" 2> "$TMP/padded.err" ||
    fail "a 300 kB schedule: $(cat "$TMP/padded.err")"
grep -q '"event":"done"' "$TMP/padded.out" || fail "a 300 kB schedule: no done line"
sed '$ s/"ps_secret": "[0-9a-f]*"/"ps_secret": "abc"/' "$TMP/padded.json" > "$TMP/padded-bad.json"
rc=0; "$W" --all-local < "$TMP/padded-bad.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "field 'ps_secret': expected 64 hex digits" "$TMP/bad.out" ||
    fail "a bad ps_secret after 300 kB: exit $rc: $(cat "$TMP/bad.out")"
no_leftovers "padded schedule"
echo "a 300 kB schedule: read whole, its ps_secret at the end taken (a bad one refused)"
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
# A stop whose checkpoint cannot be written is a failure, never exit 0: the live scheduler
# reads exit 0 after its SIGTERM as "checkpoint written" and resumes from that file next time
# (regression: the error went to stderr and the job exited 0).
# Its folder goes away once the job trains (the first progress line), before its stop.
mkdir -p "$TMP/gone-dir"
"$W" --job --gpus 1 --steps 3 --step-sleep 0.5 --progress-every 0 --checkpoint "$TMP/gone-dir/ck" \
    > "$TMP/ckfail.out" 2> "$TMP/ckfail.err" &
ckpid=$!
i=0
while ! grep -q '"step":1,' "$TMP/ckfail.out" && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
rm -r "$TMP/gone-dir"
rc=0; wait $ckpid || rc=$?
[ "$rc" = 1 ] && grep -q "gone-dir/ck.tmp: cannot create" "$TMP/ckfail.err" ||
    fail "a checkpoint that cannot be written: exit $rc: $(cat "$TMP/ckfail.err")"
no_leftovers "job whose checkpoint failed"
# One that cannot be written at all is refused before the job trains, not after it (the
# training was lost at the stop).
rc=0; "$W" --job --gpus 1 --steps 3 --checkpoint "$TMP/no-such-dir/ck" > "$TMP/ckfail.out" 2> "$TMP/ckfail.err" || rc=$?
[ "$rc" = 1 ] && grep -q -- "--checkpoint: $TMP/no-such-dir/ck: cannot be written there" "$TMP/ckfail.err" &&
    ! grep -q '"event":"progress"' "$TMP/ckfail.out" ||
    fail "a --checkpoint that cannot be written at all: exit $rc: $(cat "$TMP/ckfail.err")"
no_leftovers "job whose checkpoint cannot be written"

# ---- 4. bad input is refused with a reason ----
if echo '{"protocol": 1, "machines": 3' | "$W" --all-local > "$TMP/bad.out" 2>&1; then
    fail "malformed schedule accepted"
fi
grep -q "malformed JSON" "$TMP/bad.out" || fail "malformed schedule: no reason given"
# nothing on standard input (a launcher whose input never came) is said as such, not as
# malformed JSON
rc=0; printf ' \n' | "$W" --all-local > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "standard input: expected a protocol v1 schedule object, found nothing" "$TMP/bad.out" ||
    fail "an empty schedule: exit $rc: $(cat "$TMP/bad.out")"
# text after the schedule object (a second schedule, garbage) was dropped without a word
rc=0; { cat "$TMP/sched.json"; echo ' x'; } | "$W" --all-local > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "standard input: expected one protocol v1 schedule object, found more text after it" "$TMP/bad.out" ||
    fail "a schedule with text after it: exit $rc: $(cat "$TMP/bad.out")"
# one machine of a per-host trial cannot make the job's secret up: without one it refuses
rc=0; TUNEDECK_MACHINE=loop-0 "$W" --port-base "$base" < "$TMP/sched.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "per-host without ps_secret: exit $rc, expected 3: $(cat "$TMP/bad.out")"
grep -q "field 'ps_secret': expected the job's secret" "$TMP/bad.out" ||
    fail "per-host without ps_secret: no reason given: $(cat "$TMP/bad.out")"
sed 's/"ps_secret": "[0-9a-f]*"/"ps_secret": "abc"/' "$TMP/sched-secret.json" > "$TMP/short.json"
rc=0; TUNEDECK_MACHINE=loop-0 "$W" --port-base "$base" < "$TMP/short.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "field 'ps_secret': expected 64 hex digits" "$TMP/bad.out" ||
    fail "a 3-digit ps_secret: exit $rc: $(cat "$TMP/bad.out")"
# a machine the schedule does not have is named with where it came from (regression: a
# --machine typed by hand was reported as $TUNEDECK_MACHINE), bad input (exit 3; it was 1,
# "the work failed"); so is a schedule of several machines with none named
rc=0; TUNEDECK_MACHINE= "$W" --port-base "$base" < "$TMP/sched-secret.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "expected \$TUNEDECK_MACHINE (or --machine NAME) to say which machine this is" "$TMP/bad.out" ||
    fail "no machine named: exit $rc: $(cat "$TMP/bad.out")"
rc=0; TUNEDECK_MACHINE= "$W" --machine nosuch --port-base "$base" < "$TMP/sched-secret.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q -- "--machine: expected a machine of the schedule (loop-0, loop-1, loop-2), found 'nosuch'" "$TMP/bad.out" ||
    fail "--machine nosuch: exit $rc: $(cat "$TMP/bad.out")"
rc=0; TUNEDECK_MACHINE=nosuch "$W" --port-base "$base" < "$TMP/sched-secret.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "\$TUNEDECK_MACHINE: expected a machine of the schedule (loop-0, loop-1, loop-2), found 'nosuch'" "$TMP/bad.out" ||
    fail "TUNEDECK_MACHINE=nosuch: exit $rc: $(cat "$TMP/bad.out")"
# Machine i's shard listens on BASE + i: a schedule of 600 machines at --port-base 65000 needs
# ports past 65535. Refused before any shard listens, naming the flag, the count and the limit
# (it went on, and the shards past the limit failed only once the others had started).
$PY - "$TMP/sched-secret.json" > "$TMP/huge.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
for i in range(3, 600):
    s["machines"].append({"name": "loop-%d" % i, "host": "127.0.0.1", "type": "loop.small",
                          "worker": False, "ps": False, "devices": [{"id": "cpu", "inputs": 0}]})
print(json.dumps(s))
PYEOF
rc=0; TUNEDECK_MACHINE=loop-0 "$W" --port-base 65000 --connect-timeout 1 < "$TMP/huge.json" \
    > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -qF -- "--port-base 65000: the schedule's 600 machines need shard ports 65000 to 65599, past the limit 65535; expected a port base of at most 64936" "$TMP/bad.out" ||
    fail "--port-base past 65535: exit $rc, expected 3: $(cat "$TMP/bad.out")"
grep -q '"event":"iteration"' "$TMP/bad.out" && fail "--port-base past 65535: the trial ran"
rc=0; TUNEDECK_PS_PORT_BASE=65000 TUNEDECK_MACHINE=loop-1 "$W" --connect-timeout 1 \
    < "$TMP/huge.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -qF '$TUNEDECK_PS_PORT_BASE 65000: the schedule'"'"'s 600 machines' "$TMP/bad.out" ||
    fail "\$TUNEDECK_PS_PORT_BASE past 65535: exit $rc, expected 3: $(cat "$TMP/bad.out")"
# Machines of one type list the same devices (docs/worker.md quotes this message): the one that
# does not is named, with the machine that defined the type and what each lists.
sed 's/"devices": \[{"id": "cpu", "inputs": 64}\]}\]}/"devices": [{"id": "cpu", "inputs": 32}, {"id": "gpu0", "inputs": 32}]}]}/' \
    "$TMP/sched.json" > "$TMP/types.json"
rc=0; "$W" --all-local < "$TMP/types.json" > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -qF "standard input: machines[2]: field 'devices': expected machine 'loop-2' to list the devices of type 'loop.small' as machines[0] 'loop-0' does (cpu), in that order, found (cpu, gpu0)" "$TMP/bad.out" ||
    fail "a machine with other devices than its type: exit $rc, expected 3: $(cat "$TMP/bad.out")"
if "$W" --all-local --slowdown nosuch=2 < "$TMP/sched.json" > "$TMP/bad.out" 2>&1; then
    fail "unknown --slowdown machine accepted"
fi
grep -q "nosuch" "$TMP/bad.out" || fail "--slowdown: no reason given"
# A --resume file that is missing, a folder, corrupt or of another network is a bad input file:
# exit 3, as for every other input (a missing one exited 1, the code of a job that failed).
rc=0; "$W" --job --gpus 1 --resume "$TMP/no-such.ckpt" --steps 1 > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -qF "$TMP/no-such.ckpt: cannot open checkpoint: No such file" "$TMP/bad.out" ||
    fail "--resume of a missing file: exit $rc, expected 3: $(cat "$TMP/bad.out")"
rc=0; "$W" --job --gpus 1 --resume "$TMP" --steps 1 > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "--resume of a folder: exit $rc, expected 3: $(cat "$TMP/bad.out")"
rc=0; "$W" --job --gpus 1 --model-mb 2 --resume "$CK" --steps 1 > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "is not the one --model-mb 2 makes" "$TMP/bad.out" ||
    fail "--resume of another network: exit $rc, expected 3: $(cat "$TMP/bad.out")"
printf 'garbage' >> "$CK"
rc=0; "$W" --job --gpus 1 --resume "$CK" --steps 1 > "$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "corrupt checkpoint: exit $rc, expected 3: $(cat "$TMP/bad.out")"
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
