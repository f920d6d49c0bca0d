#!/bin/sh
# Session journal end to end: resume equals an uninterrupted run trial by trial, a killed
# session resumes with its running trial interrupted, torn and corrupted journals, a full
# disk, file modes. Needs TUNEDECK_BIN; python3 compares the JSON.
set -eu
bin="${TUNEDECK_BIN:?}"
work="$(mktemp -d /tmp/td-journal-it.XXXXXX)"
. "$(dirname "$0")/lib/procs_left.sh"
tune_pid=""
cleanup() {
    trap "" HUP INT TERM # a second signal (Ctrl-C, then the runner's TERM) must not cut it short
    # the session, while its command line is still this run's (pid_kill_named: one that ended
    # may have left its number to another suite's process)
    [ -n "$tune_pid" ] && pid_kill_named KILL "$tune_pid" "$work/trial.sh" || true
    # A trial the killed session left running: its process group, by the id it wrote, while
    # it is still a trial of this run's (sh $work/trial.sh)
    for f in "$work"/trial*.pid; do
        [ -e "$f" ] && group_kill_marked "$(cat "$f")" "$work/trial.sh"
    done
    # trial 2's daemon, while it is still this run's sleep (its session is its own)
    d="$(cat "$work/daemon.pid" 2>/dev/null || true)"
    [ -n "$d" ] && pid_kill_named KILL "$d" "sleep 1000" || true
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
export TUNEDECK_STATE_DIR="$work/state"
fail() { echo "journal: FAIL: $*" >&2; exit 1; }

# The trials of two --json results must agree in schedule, status and time.
same_trials() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["trials"]; b = json.load(open(sys.argv[2]))["trials"]
assert len(a) == len(b), (len(a), len(b))
for x, y in zip(a, b):
    for k in ("trial", "status", "time_s", "schedule", "predicted_s", "predicted_p90_s"):
        assert x.get(k) == y.get(k), (x["trial"], k, x.get(k), y.get(k))
PY
}
session_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$1"; }

# 1. 6 trials at once == 3 trials + resume to 6, for random, the uniform baselines, bespoke.
for opt in random uniform-devices uniform-gpus bespoke; do
    "$bin" tune --sim B:googlenet --optimizer "$opt" --seed 5 --budget 6 --json >"$work/six.json" 2>/dev/null
    "$bin" tune --sim B:googlenet --optimizer "$opt" --seed 5 --budget 3 --json >"$work/three.json" 2>/dev/null
    id="$(session_of "$work/three.json")"
    "$bin" tune --resume "$id" --budget 6 --json >"$work/resumed.json" 2>"$work/err" ||
        fail "$opt: resume failed: $(cat "$work/err")"
    same_trials "$work/six.json" "$work/resumed.json" || fail "$opt: resumed run differs"
done

# 1b. Pruning and the stop rule resume with the same decisions: pruned trials replayed as
# pruned, the trials after them pruned alike; --no-prune and --stop-when-converged come back
# from the journal's setup line.
"$bin" tune --sim B:googlenet --optimizer random --seed 1 --budget 12 --json >"$work/p10.json" 2>/dev/null
"$bin" tune --sim B:googlenet --optimizer random --seed 1 --budget 7 --json >"$work/p5.json" 2>/dev/null
"$bin" tune --resume "$(session_of "$work/p5.json")" --budget 12 --json >"$work/p5r.json" 2>"$work/err" ||
    fail "prune resume: $(cat "$work/err")"
same_trials "$work/p10.json" "$work/p5r.json" || fail "pruned session resumed differently"
python3 - "$work/p5.json" "$work/p10.json" <<'PY' || fail "no pruned trial on both sides of the resume"
import json, sys
a = [t["status"] for t in json.load(open(sys.argv[1]))["trials"]]
b = [t["status"] for t in json.load(open(sys.argv[2]))["trials"]][7:]
assert "pruned" in a and "pruned" in b, (a, b)
PY
"$bin" tune --sim B:googlenet --optimizer random --seed 1 --budget 3 --no-prune --json >"$work/np.json" 2>/dev/null
"$bin" tune --resume "$(session_of "$work/np.json")" --budget 10 --json >"$work/npr.json" 2>/dev/null
grep -q '"status":"pruned"' "$work/npr.json" && fail "--no-prune was lost on resume"
"$bin" tune --sim B:googlenet --seed 3 --budget 40 --stop-when-converged --json >"$work/c40.json" 2>/dev/null
"$bin" tune --sim B:googlenet --seed 3 --budget 4 --stop-when-converged --json >"$work/c4.json" 2>/dev/null
"$bin" tune --resume "$(session_of "$work/c4.json")" --budget 40 --json >"$work/c4r.json" 2>"$work/err"
grep -q "converged" "$work/err" || fail "the resumed session did not stop by the rule: $(cat "$work/err")"
same_trials "$work/c40.json" "$work/c4r.json" || fail "stop rule decided differently after resume"

# A session whose first trial was the default probe (pruned) lists every trial, no problem.
"$bin" tune --sim B:googlenet --seed 5 --budget 3 --json >"$work/probe.json" 2>/dev/null
grep -q '"status":"pruned"' "$work/probe.json" || fail "the first trial was no probe"
"$bin" sessions | grep "$(session_of "$work/probe.json")" >"$work/probe.row"
grep -q ' 3/3 ' "$work/probe.row" || fail "sessions does not count the pruned trial: $(cat "$work/probe.row")"
grep -q 'skipped' "$work/probe.row" && fail "sessions calls a pruned trial a skipped line: $(cat "$work/probe.row")"
# --json: `budget` the journal's, `resume_budget` the one a resume goes on with.
"$bin" sessions --json >"$work/probe-list.json"
/usr/bin/python3 - "$work/probe-list.json" "$(session_of "$work/probe.json")" <<'PY' ||
import json, sys
row = next(r for r in json.load(open(sys.argv[1])) if r["id"] == sys.argv[2])
assert row["budget"] == 3 and row["resume_budget"] == 3, row
PY
    fail "sessions --json: budget and resume_budget: $(cat "$work/probe-list.json")"

# A journal with no session line is listed as one resume refuses, not as resumable; a budget
# no resume would read is not printed (1e999 once showed as -9223372036854775808).
: >"$TUNEDECK_STATE_DIR/sessions/zz-empty.jsonl"
printf '{"event":"session","id":"zz-huge","budget":1e999}\n' >"$TUNEDECK_STATE_DIR/sessions/zz-huge.jsonl"
chmod 600 "$TUNEDECK_STATE_DIR"/sessions/zz-*.jsonl
"$bin" sessions >"$work/list"
grep -q '^zz-empty .*not resumable: journal .*/zz-empty.jsonl: expected a "session" line first' "$work/list" ||
    fail "an empty journal is not said to be unresumable: $(grep zz-empty "$work/list")"
grep -q '^zz-huge .* 0/0 ' "$work/list" || fail "budget 1e999 listed as: $(grep zz-huge "$work/list")"
# --json: no resume budget for a journal a resume refuses, nor for one that cannot be read (a
# link to nothing; made after the chmod, which refuses a dangling link).
ln -s "$work/nowhere" "$TUNEDECK_STATE_DIR/sessions/zz-gone.jsonl"
"$bin" sessions --json >"$work/zz.json" || fail "sessions --json with an unreadable journal failed"
/usr/bin/python3 - "$work/zz.json" <<'PY' || fail "sessions --json, zz-*: $(grep -A12 '"zz-' "$work/zz.json")"
import json, sys
rows = {r["id"]: r for r in json.load(open(sys.argv[1]))}
assert rows["zz-gone"]["state"].startswith("unreadable: "), rows["zz-gone"]
for k in ("zz-gone", "zz-empty", "zz-huge"):
    assert rows[k]["resume_budget"] is None, rows[k]
PY
rm -f "$TUNEDECK_STATE_DIR"/sessions/zz-*.jsonl
# A journal's file name may be any bytes but '/', and its strings any bytes: --json printed
# them raw, so one byte that is not UTF-8 made the whole output invalid for a strict reader.
# Shown as the table shows them (\xHH, docs/journal.md).
printf '{"event":"session","id":"zz","budget":2,"optimizer":"r\376x"}\n' >"$TUNEDECK_STATE_DIR/sessions/zz-$(printf '\377')bad.jsonl"
chmod 600 "$TUNEDECK_STATE_DIR"/sessions/zz-*.jsonl
"$bin" sessions --json >"$work/bad-utf8.json" || fail "sessions --json with a non-UTF-8 name failed"
/usr/bin/python3 - "$work/bad-utf8.json" <<'PY' || fail "sessions --json with a non-UTF-8 name: $(cat -v "$work/bad-utf8.json")"
import json, sys
rows = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
row = [r for r in rows if r["id"].startswith("zz-")][0]
assert row["id"] == "zz-\\xFFbad", row
assert row["journal"].endswith("/zz-\\xFFbad.jsonl"), row
assert row["optimizer"] == "r\\xFEx", row
PY
rm -f "$TUNEDECK_STATE_DIR"/sessions/zz-*.jsonl
# A session line without a field resume needs (it was listed as resumable, then refused): the
# list says not resumable with resume's own reason, file and field, and --resume says the same.
lacking="$TUNEDECK_STATE_DIR/sessions/zz-lacking.jsonl"
sed '1s/"optimizer":"[^"]*",//' "$TUNEDECK_STATE_DIR/sessions/$(session_of "$work/probe.json").jsonl" >"$lacking"
chmod 600 "$lacking"
why="$lacking:1: session: field 'optimizer' is missing"
"$bin" sessions | grep '^zz-lacking ' >"$work/row"
grep -qF "not resumable: $why" "$work/row" || fail "a journal without its optimizer listed as: $(cat "$work/row")"
"$bin" sessions --json | grep -qF "\"state\":	\"not resumable: $why\"" ||
    fail "sessions --json: $("$bin" sessions --json | grep zz-lacking -A12)"
rc=0; "$bin" tune --resume zz-lacking --budget 9 >/dev/null 2>"$work/err" || rc=$?
[ "$rc" = 3 ] && grep -qF -- "--resume: $why" "$work/err" ||
    fail "--resume on a journal without its optimizer: exit $rc: $(cat "$work/err")"
rm -f "$lacking"
# A session line with a key twice is damaged like a cut one: skipped, so resume refuses the
# journal, and says which line and which key (it said only that the header was missing).
twice="$TUNEDECK_STATE_DIR/sessions/zz-twice.jsonl"
sed '1s/"budget":/"budget":1,"budget":/' "$TUNEDECK_STATE_DIR/sessions/$(session_of "$work/probe.json").jsonl" >"$twice"
chmod 600 "$twice"
why="$twice:1: corrupted line skipped: key \"budget\" appears twice; expected each key once per object"
rc=0; "$bin" tune --resume zz-twice --budget 9 >/dev/null 2>"$work/err" || rc=$?
[ "$rc" = 3 ] && grep -qF -- "expected a \"session\" line first, found another event; $why" "$work/err" ||
    fail "--resume on a journal whose session line has a key twice: exit $rc: $(cat "$work/err")"
"$bin" sessions | grep '^zz-twice ' | grep -qF "$why" ||
    fail "a journal whose session line has a key twice listed as: $("$bin" sessions | grep zz-twice)"
rm -f "$twice"

# 2. Modes: 0700 folder, 0600 files.
[ "$(stat -c %a "$TUNEDECK_STATE_DIR/sessions")" = 700 ] || fail "sessions folder is not 0700"
for f in "$TUNEDECK_STATE_DIR"/sessions/*.jsonl; do
    [ "$(stat -c %a "$f")" = 600 ] || fail "$f is not 0600"
done

# 2b. Power loss: every line is fsync'd, and so is the name. A new journal (and the folders made
# for it) is synced into its folder before the first trial starts: a file fsync'd into a
# folder whose entry never reached the disk is lost whole (regression: the folder was never
# synced). Traced with strace, where ptrace is allowed.
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
    fresh="$work/fresh/state"
    TUNEDECK_STATE_DIR="$fresh" strace -f -qq -e trace=mkdir,openat,fsync,write -o "$work/strace" \
        "$bin" tune --sim B:googlenet --optimizer random --budget 1 >/dev/null 2>&1 ||
        fail "tune under strace: $(tail -5 "$work/strace")"
    python3 - "$work/strace" "$fresh" <<'PY' || fail "the journal's name is not made durable"
import re, sys
trace, fresh = open(sys.argv[1]).read().splitlines(), sys.argv[2]
sessions = fresh + "/sessions"
dirs = {}        # fd -> folder opened O_DIRECTORY, while open
synced = []      # (line, folder)
created = started = None
made = {}        # folder -> the line its mkdir succeeded on
for n, l in enumerate(trace):
    m = re.search(r'mkdir\("([^"]+)", \w+\) = 0', l)
    if m: made[m.group(1)] = n
    m = re.search(r'openat\(AT_FDCWD, "([^"]+)", [^)]*O_DIRECTORY[^)]*\) = (\d+)', l)
    if m: dirs[m.group(2)] = m.group(1)
    m = re.search(r'fsync\((\d+)\) += 0', l)
    if m and m.group(1) in dirs: synced.append((n, dirs[m.group(1)]))
    if created is None and re.search(r'openat\(AT_FDCWD, "%s/[^"]+\.jsonl", [^)]*O_CREAT' % re.escape(sessions), l):
        created = n
    if started is None and '\\"event\\":\\"started\\"' in l:
        started = n
assert created is not None and started is not None, (created, started)
assert any(created < n < started and d == sessions for n, d in synced), \
    "no fsync of %s between the journal's creation (line %d) and trial 1's start (line %d)" % (sessions, created + 1, started + 1)
for d in (fresh, sessions):   # each folder made for it is synced into its parent
    parent = d.rsplit("/", 1)[0]
    assert d in made, (d, "not made")
    assert any(made[d] < n < started and p == parent for n, p in synced), "mkdir %s: its parent %s never synced" % (d, parent)
PY
else
    echo "journal: strace cannot trace here: the fsync checks (2b) skipped"
fi

# 3. SIGKILL mid-trial: trial 2 hangs; resume marks it interrupted and goes on.
cat >"$work/trial.sh" <<SH
#!/bin/sh
ps -o pgid= -p \$\$ | tr -d ' ' >"$work/trial\$TUNEDECK_TRIAL.pid" # its process group
if [ "\$TUNEDECK_TRIAL" = 2 ] && [ ! -e "$work/resumed" ]; then
    # a daemon in a session of its own, TERM ignored: outside the group a stop reaches
    setsid sh -c 'trap "" TERM; echo \$\$ >"$work/daemon.tmp"; mv "$work/daemon.tmp" "$work/daemon.pid"
        exec sleep 1000' </dev/null >/dev/null 2>&1 &
    sleep 60
fi
exec "$bin" sim-trial B:googlenet --seed 3
SH
"$bin" tune --sim B:googlenet --launcher local --trial-cmd "sh $work/trial.sh" --optimizer random \
    --budget 3 --json >"$work/killed.json" 2>"$work/killed.err" &
tune_pid=$!
i=0
target=""
until [ -n "$target" ] && grep -q '"started","trial":2' "$target"; do
    target="$(grep -l '"launcher":"local"' "$TUNEDECK_STATE_DIR"/sessions/*.jsonl 2>/dev/null | head -1 || true)"
    i=$((i + 1)); [ $i -lt 200 ] || { fail "trial 2 never started"; break; }
    sleep 0.05
done
# trial 2's script has written its pid (its group is killed below by it): a loaded machine can
# take longer than the 0.2 s this waited, leaving trial 2's sleep 60 behind
i=0
until { [ -s "$work/trial2.pid" ] && [ -s "$work/daemon.pid" ]; } || [ $i -ge 200 ]; do sleep 0.05; i=$((i + 1)); done
# A resume while it runs: refused at once, naming the journal and its process; nothing written.
before="$(md5sum <"$target")"
rc=0
"$bin" tune --resume "$(basename "$target" .jsonl)" >/dev/null 2>"$work/busy.err" || rc=$?
[ $rc = 1 ] || fail "a resume of a running session exited $rc, expected 1: $(cat "$work/busy.err")"
grep -qF "session $(basename "$target" .jsonl) is still running (journal $target is locked by pid $tune_pid)" \
    "$work/busy.err" || fail "unclear refusal of a running session's resume: $(cat "$work/busy.err")"
[ "$(md5sum <"$target")" = "$before" ] || fail "a refused resume wrote to the running session's journal"
sleep 0.2
pid_kill_named KILL "$tune_pid" "$work/trial.sh"; wait "$tune_pid" 2>/dev/null || true; tune_pid=""
# Trial 2, which prints nothing, stops on its own once its tunedeck is gone: the keeper of its
# group reads the end of tunedeck's lifeline (regression: its sleep 60 ran on, beside the
# resumed session's trials, until it ended or the next line it printed met a closed pipe).
g="$(cat "$work/trial2.pid")"
n=0
while pgrep -g "$g" >/dev/null 2>&1 && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
if pgrep -g "$g" -f "$work/trial.sh" >/dev/null 2>&1 || pgrep -g "$g" -x sleep >/dev/null 2>&1; then
    group_kill_marked "$g" "$work/trial.sh"
    fail "trial 2's process group $g still runs 30 s after its tunedeck was killed"
fi
# ... and so does its daemon, which left the group: its keeper adopted it (a child subreaper)
# and stops what is below it too (regression: the daemon ran on, reparented to init).
d="$(cat "$work/daemon.pid" 2>/dev/null || true)"
[ -n "$d" ] || fail "trial 2's daemon never started"
n=0
while kill -0 "$d" 2>/dev/null && [ "$(ps -o stat= -p "$d" | cut -c1)" != Z ] && [ $n -lt 300 ]; do
    sleep 0.1; n=$((n + 1))
done
if kill -0 "$d" 2>/dev/null && [ "$(ps -o stat= -p "$d" | cut -c1)" != Z ]; then
    pid_kill_named KILL "$d" "sleep 1000" || :
    fail "trial 2's setsid daemon $d still runs 30 s after its tunedeck was killed"
fi
id="$(basename "$target" .jsonl)"
"$bin" sessions | grep "$id" | grep -q "interrupted" || fail "sessions does not show $id interrupted"
touch "$work/resumed"
"$bin" tune --resume "$id" --json >"$work/after.json" 2>"$work/err" || fail "resume after kill: $(cat "$work/err")"
python3 - "$work/after.json" <<'PY' || fail "resumed session after SIGKILL is wrong"
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert [x["status"] for x in t] == ["pruned", "interrupted", "ok"], [x["status"] for x in t]
assert "interrupted" in t[1]["reason"]
PY

# 4. A torn last line (power loss) and a corrupted middle line.
"$bin" tune --sim A:googlenet --optimizer random --budget 4 --json >"$work/four.json" 2>/dev/null
id="$(session_of "$work/four.json")"
j="$TUNEDECK_STATE_DIR/sessions/$id.jsonl"
grep -v '"event":"ended"' "$j" >"$work/cut"; cat "$work/cut" >"$j"
printf '{"event":"suggested","trial":5,"sched' >>"$j"
# Corrupt trial 2's outcome line in the middle.
line="$(grep -n '"event":"finished","trial":2' "$j" | cut -d: -f1)"
sed -i "${line}s/.*/{\"event\":\"finished\",\"trial\":2,garbage/" "$j"
# `sessions` names the first line a resume skips, and why, without writing to the journal
# (it said only "has skipped lines": a resume, which writes, was the one way to learn which).
cp "$j" "$work/damaged.before"
"$bin" sessions | grep "^$id " | grep -qF "(has skipped lines; the first: line $line: corrupted line skipped: " ||
    fail "sessions does not name the first skipped line $line: $("$bin" sessions | grep "^$id ")"
"$bin" sessions --json | grep -qF "\"first_problem\":	\"$j:$line: corrupted line skipped: " ||
    fail "sessions --json has no first_problem: $("$bin" sessions --json | grep -A14 "$id")"
cmp -s "$j" "$work/damaged.before" || fail "sessions changed a damaged journal"
"$bin" tune --resume "$id" --budget 5 --json >"$work/repaired.json" 2>"$work/err" || fail "resume of a damaged journal: $(cat "$work/err")"
grep -q "torn last line" "$work/err" || fail "torn line not reported: $(cat "$work/err")"
grep -q ":$line: corrupted line skipped" "$work/err" || fail "corrupted line $line not reported by number: $(cat "$work/err")"
python3 - "$work/repaired.json" "$j" <<'PY' || fail "damaged journal resume is wrong"
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert [x["status"] for x in t] == ["pruned", "interrupted", "ok", "ok", "ok"], [x["status"] for x in t]
# the session went on past trial 2: its outcome line was damaged, the session did not end there
assert "lost to a damaged journal line" in t[1]["reason"], t[1]
for n, line in enumerate(open(sys.argv[2]), 1):   # every line whole except the one we broke
    if "garbage" not in line:
        json.loads(line)
PY

# 4b. Trial 2's suggested line damaged: trials 3 and 4 keep their measurements (numbered 2
# and 3 now), new trials go on after the file's numbers, and a second resume loses nothing.
"$bin" tune --sim A:googlenet --optimizer random --budget 4 --json >"$work/gap.json" 2>/dev/null
id="$(session_of "$work/gap.json")"
j="$TUNEDECK_STATE_DIR/sessions/$id.jsonl"
line="$(grep -n '"event":"suggested","trial":2' "$j" | cut -d: -f1)"
sed -i "${line}s/.*/{\"event\":\"suggested\",\"trial\":2,garbage/" "$j"
# The budget check counts the 3 trials the replay keeps, not the 1 before the gap.
cp "$j" "$work/gap.before"
"$bin" tune --resume "$id" --budget 2 --json >/dev/null 2>"$work/err" && fail "--budget 2 accepted on 3 trials kept after a gap"
grep -q "already has 3 trials" "$work/err" || fail "gap: unclear budget refusal: $(cat "$work/err")"
cmp -s "$j" "$work/gap.before" || fail "a refused --budget changed the journal"
"$bin" tune --resume "$id" --budget 5 --json >"$work/gap5.json" 2>"$work/err" || fail "resume after a lost suggestion: $(cat "$work/err")"
grep -q "kept as trial 2" "$work/err" || fail "the gap is not reported: $(cat "$work/err")"
"$bin" tune --resume "$id" --budget 6 --json >"$work/gap6.json" 2>"$work/err" || fail "second resume after a lost suggestion: $(cat "$work/err")"
python3 - "$work/gap.json" "$work/gap5.json" "$work/gap6.json" "$j" <<'PY' || fail "trials after a lost suggestion were not kept"
import json, sys
before, five, six = (json.load(open(f))["trials"] for f in sys.argv[1:4])
for t in (five, six):   # the original trials 3 and 4, measured once, never run again
    assert [x["time_s"] for x in t[1:3]] == [x["time_s"] for x in before[2:4]], (t, before)
assert len(five) == 5 and len(six) == 6, (len(five), len(six))
assert [x["time_s"] for x in six[:5]] == [x["time_s"] for x in five], (six, five)
nums = [json.loads(l)["trial"] for l in open(sys.argv[4]) if '"suggested"' in l and "garbage" not in l]
assert nums == [1, 3, 4, 5, 6, 7], nums   # the file's numbers keep growing
PY

# 4c. Trial 3's outcome line with a key twice (its time pasted again and edited): the line is
# skipped and reported like a corrupted one, never read from one copy; trial 3 is replayed
# as interrupted and the other trials keep their measurements.
"$bin" tune --sim A:googlenet --optimizer random --budget 4 --no-prune --json >"$work/dup.json" 2>/dev/null
id="$(session_of "$work/dup.json")"
j="$TUNEDECK_STATE_DIR/sessions/$id.jsonl"
line="$(grep -n '"event":"finished","trial":3' "$j" | cut -d: -f1)"
sed -i "${line}s/\"time_s\":/\"time_s\":0.001,\"time_s\":/" "$j"
"$bin" tune --resume "$id" --budget 4 --json >"$work/dup4.json" 2>"$work/err" || fail "resume with a key twice: $(cat "$work/err")"
grep -qF ":$line: corrupted line skipped: key \"time_s\" appears twice" "$work/err" ||
    fail "a key twice on line $line not reported: $(cat "$work/err")"
python3 - "$work/dup.json" "$work/dup4.json" <<'PY' || fail "a line with a key twice cost other trials"
import json, sys
before, after = (json.load(open(f))["trials"] for f in sys.argv[1:3])
assert [x["status"] for x in after] == ["ok", "ok", "interrupted", "ok"], [x["status"] for x in after]
for i in (0, 1, 3):
    assert after[i]["time_s"] == before[i]["time_s"], (i, after[i], before[i])
assert after[2]["time_s"] != 0.001
PY

# 5. A full disk under the journal: say so, stop launching, leave whole lines only.
full_disk_check() { # $1: journal file, $2: stderr
    grep -q "write failed" "$2" || fail "full disk not reported: $(cat "$2")"
    grep -q "no more trials are launched" "$2" || fail "full disk did not stop launching"
    [ "$(cat "$3")" = 1 ] || fail "a session whose journal failed exited $(cat "$3"), expected 1"
    python3 - "$1" <<'PY' || fail "journal on a full disk is not whole lines"
import json, sys
data = open(sys.argv[1]).read()
assert data.endswith("\n")
n = [json.loads(l)["event"] for l in data.splitlines()]
assert n[0] == "session" and len(n) < 60, n
PY
}
mkdir -p "$work/small"
if unshare -m sh -c "mount -t tmpfs -o size=16k tmpfs '$work/small'" 2>/dev/null; then
    how="a 16 KiB tmpfs"
    unshare -m sh -c "mount -t tmpfs -o size=16k tmpfs '$work/small' &&
        TUNEDECK_STATE_DIR='$work/small' '$bin' tune --sim A:googlenet --optimizer random --budget 50 \
            >'$work/full.out' 2>'$work/full.err'; echo \$? >'$work/full.rc';
        cp '$work'/small/sessions/*.jsonl '$work/full.jsonl'"
else
    how="a 16 KiB file size limit (RLIMIT_FSIZE)"
    (ulimit -f 32; TUNEDECK_STATE_DIR="$work/small" "$bin" tune --sim A:googlenet --optimizer random \
        --budget 50 >"$work/full.out" 2>"$work/full.err"; echo $? >"$work/full.rc") || true
    cp "$work"/small/sessions/*.jsonl "$work/full.jsonl"
fi
full_disk_check "$work/full.jsonl" "$work/full.err" "$work/full.rc"
# The session's own rlimit path as well, whatever the mount said.
rm -rf "$work/small2"
(ulimit -f 32; TUNEDECK_STATE_DIR="$work/small2" "$bin" tune --sim A:googlenet --optimizer random \
    --budget 50 --json >"$work/full2.out" 2>"$work/full2.err"; echo $? >"$work/full2.rc") || true
full_disk_check "$work"/small2/sessions/*.jsonl "$work/full2.err" "$work/full2.rc"
# Stopped early with trials that succeeded: exit 1 (above), what was measured still printed,
# and --json says why it stopped.
python3 - "$work/full2.out" <<'PY' || fail "a session stopped early: --json lacks stopped_early or its trials"
import json, sys
r = json.load(open(sys.argv[1]))
assert "no more trials are launched" in r["stopped_early"], r["stopped_early"]
assert r["best_time_s"] is not None and 0 < len(r["trials"]) < 50, r
PY
echo "journal: full disk made with $how and with RLIMIT_FSIZE"
# The very first (session) line cannot be written: no empty journal is left behind, one that
# --resume would refuse. stderr goes through a pipe, out of the file size limit's reach.
rm -rf "$work/small3"
(ulimit -f 0; TUNEDECK_STATE_DIR="$work/small3" "$bin" tune --sim A:googlenet --optimizer random \
    --budget 3 2>&1 && echo "rc=0" || echo "rc=$?") | cat >"$work/full3.err"
grep -q "write failed: .*; the file was removed" "$work/full3.err" ||
    fail "a journal whose session line failed: not said: $(cat "$work/full3.err")"
grep -qx "rc=1" "$work/full3.err" || fail "a journal whose session line failed: expected exit 1"
[ -d "$work/small3/sessions" ] && [ -z "$(ls -A "$work/small3/sessions")" ] ||
    fail "a journal whose session line failed was left behind: $(ls -la "$work/small3/sessions" 2>&1)"

# 6. --resume refuses setup flags and unknown ids with clear errors.
"$bin" tune --resume "$id" --sim A:googlenet 2>"$work/err" && fail "--resume with --sim accepted"
grep -q "comes from the session's journal" "$work/err" || fail "unclear --resume error"
"$bin" tune --resume nosuchsession 2>"$work/err" && fail "unknown session accepted"
grep -q "^tunedeck tune: --resume: no session 'nosuchsession' (\`tunedeck sessions\` lists them; no .*/nosuchsession.jsonl)$" "$work/err" ||
    fail "unclear unknown-session error: $(cat "$work/err")"
# The start of an id is no id (two sessions may begin alike), but the sessions it begins are
# named: it said only "no session", and the operator could not tell a typo from a prefix.
mkdir -p -m 700 "$work/twins/sessions"
for t in twin-a1 twin-a2 solo-b1; do
    cp "$TUNEDECK_STATE_DIR/sessions/$id.jsonl" "$work/twins/sessions/$t.jsonl"
done
rc=0; TUNEDECK_STATE_DIR="$work/twins" "$bin" tune --resume twin-a 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q "no session 'twin-a' (.*; ids are taken whole: 2 sessions begin so: twin-a1, twin-a2)$" \
    "$work/err" || fail "a prefix of two sessions: exit $rc: $(cat "$work/err")"
rc=0; TUNEDECK_STATE_DIR="$work/twins" "$bin" --resume solo </dev/null 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q "no session 'solo' (.*; ids are taken whole: did you mean solo-b1?)$" \
    "$work/err" || fail "a prefix of one session: exit $rc: $(cat "$work/err")"
for t in twin-a1 twin-a2 solo-b1; do
    cmp -s "$TUNEDECK_STATE_DIR/sessions/$id.jsonl" "$work/twins/sessions/$t.jsonl" ||
        fail "a refused prefix changed $t"
done
# a path is a file: one that is not there is said as such
"$bin" tune --resume "$work/gone.jsonl" 2>"$work/err" && fail "a missing journal file accepted"
grep -q "journal $work/gone.jsonl: cannot open: No such file or directory" "$work/err" ||
    fail "a missing journal file: $(cat "$work/err")"
# A journal's own bad setting is bad input (exit 3) named by file and field, not by a flag
# that was never given; the journal is left as it was.
"$bin" tune --sim B:googlenet --budget 2 --json >"$work/bad.json" 2>/dev/null
bad="$TUNEDECK_STATE_DIR/sessions/$(session_of "$work/bad.json").jsonl"
cp "$bad" "$work/good.jsonl"
for edit in 's/"optimizer":"bespoke"/"optimizer":"nope"/:optimizer' \
    's/"sim":"B:googlenet"/"sim":"Q:googlenet"/:sim' 's/"launcher":"sim"/"launcher":"nope"/:launcher' \
    's/"budget":2,/"budget":"2",/:budget'; do
    field="${edit##*:}"
    sed "1${edit%:*}" "$work/good.jsonl" >"$bad"
    cp "$bad" "$work/bad.before"
    # the console's resume gave 2 (a usage error) for a bad journal; it is bad input there too
    for cmd in "tune --resume" "--resume"; do
        rc=0; "$bin" $cmd "$bad" 2>"$work/err" >/dev/null </dev/null || rc=$?
        [ "$rc" = 3 ] ||
            fail "$cmd: journal with a bad '$field': exit $rc, expected 3: $(cat "$work/err")"
        grep -q "$bad.*field '$field'" "$work/err" ||
            fail "$cmd: a bad '$field' not named by journal and field: $(cat "$work/err")"
        cmp -s "$bad" "$work/bad.before" || fail "$cmd: a refused resume changed the journal"
    done
done
# A journal that can be read but not written here (a read-only mount; for a user, a file
# without write permission) is refused before anything runs, said so, exit 1 (the journal
# could not be written): it was exit 2, a usage error, saying only "cannot open".
ro="$work/ro"
mkdir -m 700 "$ro"
cp "$work/good.jsonl" "$ro/ro.jsonl"
chmod 600 "$ro/ro.jsonl"
ro_run= # how to run a command with $ro read-only
if [ "$(id -u)" != 0 ]; then
    chmod 400 "$ro/ro.jsonl"
    ro_run=plain
elif unshare -m true 2>/dev/null; then
    ro_run=mount
fi
for cmd in "tune --resume" "--resume"; do
    rc=0
    case "$ro_run" in
    plain) "$bin" $cmd "$ro/ro.jsonl" 2>"$work/err" >/dev/null </dev/null || rc=$? ;;
    mount) unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift &&
               exec "$@"' sh "$ro" "$bin" $cmd "$ro/ro.jsonl" 2>"$work/err" >/dev/null </dev/null ||
               rc=$? ;;
    *) echo "  skipped: a read-only journal needs a non-root user or unshare -m"; break ;;
    esac
    [ "$rc" = 1 ] || fail "$cmd of a read-only journal: exit $rc, expected 1: $(cat "$work/err")"
    grep -q "journal $ro/ro.jsonl: cannot open to append (a resume writes to it; it can only be read here): " \
        "$work/err" || fail "$cmd of a read-only journal: unclear: $(cat "$work/err")"
    cmp -s "$ro/ro.jsonl" "$work/good.jsonl" || fail "$cmd: a read-only journal changed"
done
# A budget below the trials already run (4/2 once) is a usage error naming both numbers;
# the journal is left as it was, and the console refuses it the same way.
cp "$work/good.jsonl" "$bad"
for cmd in "tune --resume" "--resume"; do
    rc=0; "$bin" $cmd "$bad" --budget 1 2>"$work/err" >/dev/null || rc=$?
    [ "$rc" = 2 ] || fail "$cmd --budget 1 on 2 trials: exit $rc, expected 2: $(cat "$work/err")"
    grep -q -- "--budget 1: the session already has 2 trials" "$work/err" ||
        fail "$cmd: a budget below the trials run is not named: $(cat "$work/err")"
    cmp -s "$bad" "$work/good.jsonl" || fail "$cmd: a refused budget changed the journal"
done
# A sessions folder that cannot be read is an error naming it, not "no sessions" and exit 0
# (the operator took the journals for gone); a folder not made yet still has none.
printf 'x\n' >"$work/a-file"
rc=0
TUNEDECK_STATE_DIR="$work/a-file" "$bin" sessions >"$work/out" 2>"$work/err" || rc=$?
[ $rc -eq 1 ] && grep -q "$work/a-file/sessions: cannot list the session journals: Not a directory" \
    "$work/err" || fail "sessions on an unreadable folder: exit $rc: $(cat "$work/out" "$work/err")"
TUNEDECK_STATE_DIR="$work/not-made-yet" "$bin" sessions | grep -q "^no sessions in " ||
    fail "sessions before any session no longer says none"
# A budget line whose budget is no budget (1e300, 2.5: a damaged or edited line) was passed over
# in silence or cut to an integer; it is said like any skipped line, with its line number.
"$bin" tune --sim B:googlenet --optimizer random --budget 2 --json >"$work/bud.json" 2>/dev/null ||
    fail "tune for the budget lines failed"
bud_id="$(session_of "$work/bud.json")"
bud_j="$TUNEDECK_STATE_DIR/sessions/$bud_id.jsonl"
bud_n=$(($(wc -l <"$bud_j") + 1))
printf '{"event":"budget","wall_s":1,"budget":1e300}\n{"event":"budget","wall_s":1,"budget":2.5}\n' \
    >>"$bud_j"
"$bin" tune --resume "$bud_id" >/dev/null 2>"$work/err" || fail "resume with bad budget lines failed"
grep -q "$bud_j:$bud_n: budget: field 'budget': expected an integer in \[1, 100000\], found 1e+300 (budget not used)" \
    "$work/err" || fail "a budget of 1e300 is not said: $(cat "$work/err")"
grep -q "$bud_j:$((bud_n + 1)): budget: field 'budget': expected an integer, found a fraction (budget not used)" \
    "$work/err" || fail "a budget of 2.5 is not said: $(cat "$work/err")"
echo "journal: ok"
