#!/bin/sh
# Fault injection against real sshd instances (tests/sshd-harness.sh) and the reference
# workload (tunedeck-worker, per-host launcher, 3 hosts):
#   1. the headless tune is SIGKILLed mid-trial and resumed: no finished trial is lost, the
#      running one is interrupted, and its remote processes are stopped by the resume;
#   2. one host's sshd is killed mid-trial: the trial fails naming that host, the session
#      goes on with its next trials;
#   3. packets delayed and dropped (tc, in a private network namespace): streams survive;
#   4. the journal's disk is full during a remote (per-host) session.
# Every sshd and trial process started here is stopped by the trap (by pid, by the process
# groups the journals recorded, and by the marker in the trial wrapper's name).
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
build="${TUNEDECK_BUILD:-$root/build}"
bin="${TUNEDECK_BIN:-$build/tunedeck}"
rexec="$build/tunedeck-rexec"
worker="$build/tunedeck-worker"

if [ "${1:-}" = --netns-part ]; then
    T="$2"
else
    T="$(mktemp -d /tmp/tunedeck-faults.XXXXXX)"
fi
MARK="tdfault$$"
HARNESS_SRC="$here/sshd-harness.sh"
. "$here/sshd-harness.sh"
TUNE_PID=""
cleanup() {
    [ -n "$TUNE_PID" ] && kill -KILL "$TUNE_PID" 2>/dev/null
    harness_stop_all
    # The groups the journals recorded, then anything still carrying this run's marker.
    for g in $(cat "$T"/state*/sessions/*.jsonl 2>/dev/null |
        sed -n 's/.*"event":"remote_process".*"pgid":\([0-9][0-9]*\).*/\1/p'); do
        [ "$g" -gt 1 ] && kill -KILL -- "-$g" 2>/dev/null
    done
    for p in $(pgrep -f "$MARK" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    [ "${1:-}" = --netns-part ] || rm -rf "$T"
}
trap 'cleanup "${1:-}"' EXIT INT TERM
unset SSH_AUTH_SOCK

fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); }
skip() { echo "  skipped: $1"; }
check() { # check NAME COMMAND...: passes when the command succeeds
    name="$1"; shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

if [ ! -x "$worker" ]; then
    echo "faults: skipped: $worker is not built"
    exit 0
fi

# The trial: tunedeck-worker on every host, started by a wrapper whose name carries this
# run's marker (pgrep finds it on every host). With $T/slow-N present, trial N runs with a
# slowdown (seconds long, to be killed in the middle), and also starts a helper that never
# writes to its output (a data loader, say): such a process outlives a dropped connection,
# and only an explicit stop ends it.
setup_trial() {
    ln -sf "$(command -v sleep)" "$T/helper-$MARK"
    cat > "$T/trial-$MARK.sh" <<EOF
#!/bin/sh
slow=""
if [ -e "$T/slow-\$TUNEDECK_TRIAL" ]; then
    slow="--slowdown 40"
    "$T/helper-$MARK" 300 </dev/null >/dev/null 2>&1 &
fi
"$worker" --port-base \$((${PORT_BASE:-0} + 0)) --connect-timeout 10 \$slow "\$@"
EOF
    chmod 755 "$T/trial-$MARK.sh"
}
trial_cmd() { echo "sh $T/trial-$MARK.sh"; }

# wait_for FILE PATTERN N SECONDS: until FILE has at least N lines matching PATTERN.
wait_for() {
    n=0
    while [ "$n" -lt $(($4 * 20)) ]; do
        [ "$(cat $1 2>/dev/null | grep -c -- "$2")" -ge "$3" ] && return 0
        sleep 0.05; n=$((n + 1))
    done
    return 1
}
journal_of() { ls "$1"/sessions/*.jsonl 2>/dev/null | head -n 1; }
# The process groups the journal recorded for a trial: "machine pgid" lines.
groups_of() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "remote_process" and e.get("trial") == int(sys.argv[2]):
        print(e["machine"], e["pgid"])
EOF
}
# alive_on MACHINE PGID: the group still has a process, asked on that host over SSH.
alive_on() {
    "$rexec" --cluster "$T/inv.json" --only "$1" -- pgrep -g "$2" > "$T/alive" 2>&1
    grep -q "^$1 out: [0-9]" "$T/alive"
}
# The marker's processes on every host (asked on each host; the pattern does not match itself).
marker_left() {
    pat="$(echo "$MARK" | sed 's/^\(.\)/[\1]/')"
    "$rexec" --cluster "$T/inv.json" -- pgrep -f "$pat" 2>/dev/null | grep -c ' out: [0-9]'
}

if [ "${1:-}" = --netns-part ]; then
    . "$here/integration/faults-netem.sh"
    exit $?
fi

harness_init "$T/h"
for i in 1 2 3; do harness_start "$i"; done
HARNESS_TIMEOUT_S=2 harness_inventory "$T/inv.json" 1 2 3
PORT_BASE=$((H_PORT + 1))
setup_trial
job="$root/examples/tiny-job.json"

echo "1. SIGKILL of tune --launcher per-host mid-trial, then --resume"
export TUNEDECK_STATE_DIR="$T/state1"
touch "$T/slow-2"
"$bin" tune --cluster "$T/inv.json" --job "$job" --launcher per-host --trial-cmd "$(trial_cmd)" \
    --budget 4 --optimizer uniform-devices --seed 3 --json > "$T/k1.json" 2> "$T/k1.err" &
TUNE_PID=$!
wait_for "$T/state1/sessions/*.jsonl" '"event":"remote_process","trial":2' 3 20
sleep 0.5
j1="$(journal_of "$T/state1")"
kill -KILL "$TUNE_PID"; wait "$TUNE_PID" 2>/dev/null; TUNE_PID=""
rm -f "$T/slow-2"
cp "$j1" "$T/before.jsonl"
groups_of "$T/before.jsonl" 2 > "$T/groups2"
check "trial 2 was running on 3 hosts when tune was killed" \
    sh -c "[ \$(wc -l < '$T/groups2') -eq 3 ] && ! grep -q '\"finished\",\"trial\":2' '$T/before.jsonl'"
sleep 0.3
before_alive=0
while read -r m g; do alive_on "$m" "$g" && before_alive=$((before_alive + 1)); done < "$T/groups2"
check "the killed trial left processes behind ($before_alive of 3 groups alive)" [ "$before_alive" -ge 1 ]
id="$(basename "$j1" .jsonl)"
"$bin" tune --resume "$id" --json > "$T/r1.json" 2> "$T/r1.err"
check "tune --resume after SIGKILL keeps every finished trial and interrupts the running one" \
    python3 - "$T/before.jsonl" "$T/r1.json" "$j1" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
done = {e["trial"]: e for e in ev if e["event"] == "finished"}
assert 1 in done and done[1]["status"] == "ok", done
r = {t["trial"]: t for t in json.load(open(sys.argv[2]))["trials"]}
for n, e in done.items():  # nothing finished is lost, nothing changed
    assert r[n]["status"] == e["status"] and r[n]["time_s"] == e["time_s"], (n, r[n], e)
assert r[2]["status"] == "interrupted" and "interrupted" in r[2]["reason"], r[2]
assert len(r) == 4 and all(r[n]["status"] == "ok" for n in (3, 4)), r
after = [json.loads(l) for l in open(sys.argv[3])]
fin = {e["trial"]: e for e in after if e["event"] == "finished"}
assert all(fin[n] == e for n, e in done.items())  # the journal's lines too
assert fin[2]["status"] == "interrupted", fin[2]
EOF
check "resume stopped the interrupted trial's process groups and journaled it" \
    sh -c "grep -q 'interrupted trial 2: process group [0-9]* on h[123]: stopped' '$T/r1.err' &&
           grep -q '\"event\":\"remote_process_stop\",\"trial\":2' '$j1'"
left=0
while read -r m g; do alive_on "$m" "$g" && left=$((left + 1)); done < "$T/groups2"
marker=$(marker_left)
check "no process of the killed trial is left on any host ($left groups, $marker marked)" \
    sh -c "[ $left -eq 0 ] && [ $marker -eq 0 ]"

echo "2. one host's sshd killed mid-trial"
export TUNEDECK_STATE_DIR="$T/state2"
touch "$T/slow-1"
"$bin" tune --cluster "$T/inv.json" --job "$job" --launcher per-host --trial-cmd "$(trial_cmd)" \
    --budget 3 --optimizer uniform-devices --seed 3 --json > "$T/s2.json" 2> "$T/s2.err" &
TUNE_PID=$!
wait_for "$T/state2/sessions/*.jsonl" '"event":"remote_process","trial":1' 3 20
sleep 0.3
j2="$(journal_of "$T/state2")"
harness_stop 2 # the listener and every connection it serves
wait_for "$j2" '"event":"finished","trial":1' 1 15
rm -f "$T/slow-1"
harness_start 2 # the host comes back; later trials may find it again
wait "$TUNE_PID"; rc=$?; TUNE_PID=""

check "the trial fails with a reason naming the host whose sshd died" python3 - "$T/s2.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert t[0]["status"] in ("unreachable", "failed") and "h2" in t[0]["reason"], t[0]
EOF
check "the session goes on with its next trials, and ends (exit $rc)" python3 - "$T/s2.json" "$j2" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert len(t) == 3, t
for x in t[1:]:
    assert x["status"] == "ok" or (x["status"] == "unreachable" and "h2" in x["reason"]), x
assert any(json.loads(l)["event"] == "ended" for l in open(sys.argv[2]))
EOF
check "what the dead connection left running on h2 is stopped at the end of the session" \
    grep -q 'leftover of trial 1: process group [0-9]* on h2: stopped' "$T/s2.err"
marker=$(marker_left)
check "no trial process is left on any host ($marker)" [ "$marker" -eq 0 ]

if [ "$fails" -ne 0 ]; then
    echo "faults: $fails failed"
    for f in "$T"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -c 2000 "$f"; }; done
    exit 1
fi
echo "faults: all passed"
