#!/bin/sh
# The scheduler's live mode on real hosts: `tunedeck schedule --live` over 3 loopback sshd hosts
# (tests/sshd-harness.sh) with 2 GPUs per node from the inventory and tunedeck-worker in job
# mode as the job command. Time runs 30x, so within ~5 s the doubling policy starts j0 and j1,
# finishes j1 (ncf), then resizes j0 from 2 to 4 GPUs while j2 arrives. Checks: the jobs
# start, j0 is checkpointed, stopped and restarted at 4 GPUs resuming at its saved step + 1;
# j0 killed behind the scheduler's back is reported and restarted from that checkpoint;
# every job is stopped at the end with a checkpoint, and no job process is left (pgrep).
# A second run (doubling-explore, 2 hosts) moves j0 from h1 to h2 through its checkpoint and
# starts j0 on h1 only after the preempted j2 has left it. A third (--real-progress) ends a
# job when the real one has trained its epochs. First, a --job-dir others can write on the
# way (through a link too), a job folder open to its group or one another user owns refuses
# the run before any job starts (exit 3).
set -u
suite=schedlive scratch=schedlive suite_sshd=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/live-inventory.sh"
mark="sl$$x"  # x: pid 12's mark is not part of pid 123's
# Every signal to a pid it kept goes through pid_kill_named or group_kill_marked
# (lib/procs_left.sh): each live run's command line names its --cluster file in $T, each job's
# its ckpt-$mark; a run or job that has ended may have left its number to another suite's.
suite_stop() { [ -n "${LIVE_PID:-}" ] && pid_kill_named KILL "$LIVE_PID" "--cluster $T/"; }
suite_reap() { for p in $(pgrep -f "ckpt-$mark" 2>/dev/null); do pid_kill_named KILL "$p" "ckpt-$mark"; done; }

harness_init "$T/h"
for i in 1 2 3; do harness_start "$i"; done
harness_inventory "$T/inv.json" 1 2 3
harness_inventory "$T/inv2.json" 1 2
for inv in "$T/inv.json" "$T/inv2.json"; do live_inventory "$inv" "$build/tunedeck-worker" "$mark"; done
# real progress needs a job that trains its epochs in seconds: flat out
harness_inventory "$T/inv3.json" 1 2
live_inventory "$T/inv3.json" "$build/tunedeck-worker" "$mark" 0

echo "job folders others can write"
# --job-dir is checked on every host before any job starts, as Slurm's folders are: a folder
# on the way that others can write (or one behind a link), a job's own folder open to its
# group, or one owned by another user refuses the run (exit 3), naming the host, the folder,
# its mode or owner and the fix; no job starts. A sticky folder (like /tmp) above the jobs
# will do: the second run below has its jobs under one.
mkdir -p "$T/open/sub" "$T/gw/jobs/j0" "$T/real" "$T/sticky" "$T/theirs"
chmod 777 "$T/open" "$T/real"; chmod 775 "$T/gw/jobs/j0"; chmod 1777 "$T/sticky"
ln -s "$T/real" "$T/via-link"
folder_refused() { # folder_refused WHAT JOB_DIR PATTERN
    "$bin" schedule --live --cluster "$T/inv2.json" --workload "$root/tests/fixtures/schedlive-workload.csv" \
        --time-scale 30 --duration 3 --status-every 0 --job-dir "$2" > "$T/fo" 2> "$T/fe"
    frc=$?
    if [ "$frc" -eq 3 ] && grep -q "^tunedeck schedule --live: h1: $3" "$T/fe" && ! grep -q "started on" "$T/fo"
    then pass "$1: refused before any job starts (exit 3)"
    else fail "$1: exit $frc, $(cat "$T/fe") $(grep -c "started on" "$T/fo") jobs started"; fi
}
folder_refused "a world-writable folder above --job-dir" "$T/open/sub/jobs" \
    "the folder $T/open on the way to --job-dir $T/open/sub/jobs is world-writable (mode 0777); .*: chmod go-w $T/open "
folder_refused "a group-writable job folder" "$T/gw/jobs" \
    "the job folder $T/gw/jobs/j0 is group-writable (mode 0775); expected no group/other write: chmod go-w $T/gw/jobs/j0 "
folder_refused "a world-writable folder behind a link on the way" "$T/via-link/jobs" \
    "the folder $T/real on the way to --job-dir $T/via-link/jobs is world-writable (mode 0777)"
if [ "$(id -u)" = 0 ] && chown nobody "$T/theirs" 2>/dev/null; then
    folder_refused "a folder another user owns" "$T/theirs" \
        "the --job-dir folder $T/theirs belongs to uid $(id -u nobody), not to you (uid 0) or root: refused"
fi

echo "a job name too long for its folder"
# a workload takes names of 511 bytes, a folder 255: a longer name failed only at mkdir, when
# its job first started, mid-run. Refused before any job starts (exit 3), naming the job.
long=$(printf '%0300d' 0 | tr 0 a)
{ echo "name,time,application,num_replicas,batch_size"; echo "j0,0,cifar10,1,128"; echo "$long,0,ncf,1,32768"; } > "$T/long-name.csv"
"$bin" schedule --live --cluster "$T/inv2.json" --workload "$T/long-name.csv" \
    --time-scale 30 --duration 3 --status-every 0 --job-dir "$T/long-jobs" > "$T/fo" 2> "$T/fe"
frc=$?
if [ "$frc" -eq 3 ] && grep -qF "$T/long-name.csv: job 'aaaa" "$T/fe" &&
    grep -qF "live mode needs a name of at most 255 bytes (it names the job's folder), found 300 bytes" "$T/fe" &&
    ! grep -q "started on" "$T/fo"
then pass "a job name over 255 bytes: refused before any job starts (exit 3)"
else fail "a job name over 255 bytes: exit $frc, $(cat "$T/fe") $(grep -c "started on" "$T/fo") jobs started"; fi

echo "live scheduling"
# j1's folder was left open by an earlier run with a symlink planted at its hostfile's name:
# the driver tightens the folder to 0700 and replaces the link; the file it points at stays.
# j2's has a symlink to a folder there, which mv alone would move the hostfile into.
mkdir -p "$T/jobs/j1" "$T/jobs/j2" "$T/victim-dir" && chmod 755 "$T/jobs" "$T/jobs/j1" "$T/jobs/j2"
echo untouched > "$T/victim"
ln -s "$T/victim" "$T/jobs/j1/tunedeck-hostfile"
ln -s "$T/victim-dir" "$T/jobs/j2/tunedeck-hostfile"
"$bin" schedule --live --cluster "$T/inv.json" --workload "$root/tests/fixtures/schedlive-workload.csv" \
    --policy doubling --interval 60 --time-scale 30 --duration 14 --status-every 2 \
    --job-dir "$T/jobs" --events "$T/events.jsonl" > "$T/out" 2> "$T/err" &
LIVE_PID=$!
# Behind the scheduler's back: once j0 runs resized (it has a checkpoint then), kill its
# process group; the driver must notice, report it and restart it from that checkpoint.
n=0
while [ $n -lt 100 ] && ! grep -q "j0: run 2 .* resumed at step" "$T/out" 2>/dev/null; do
    sleep 0.1; n=$((n + 1))
done
sleep 0.5
running=$(pgrep -f "ckpt-$mark" | wc -l)
for p in $(pgrep -f "ckpt-$mark"); do
    case "$(readlink /proc/"$p"/cwd 2>/dev/null)" in
    */jobs/j0) pg=$(ps -o pgid= -p "$p" | tr -d ' '); break ;;
    esac
done
[ -n "${pg:-}" ] && group_kill_marked "$pg" "ckpt-$mark"
echo "killed j0 group ${pg:-none}" >> "$T/kill.log"
wait "$LIVE_PID"
rc=$?
LIVE_PID=""
left=$(procs_left "ckpt-$mark")

if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then pass "schedule --live ran to its end (exit $rc)"; else fail "schedule --live exit $rc"; fi
check "schedule --live's closing table: no row ends in blanks" \
    sh -c '! grep -n "[[:blank:]]\$" "$1" && grep -q "^job  *model " "$1"' _ "$T/out"
if python3 - "$T/out" "$T/events.jsonl" <<'PY'
import json, re, sys
from outcheck import out, need
# every job started on real processes, with progress lines
for j in ("j0", "j1", "j2"):
    need(r"%s: started on h\d with \d GPUs?" % j, j + " started")
    need(r"%s: run 1 on h\d \(\d GPUs?\) first step (\d+)" % j, j + " progress")
need(r"decision t=\d+s: finish j1", "the model finishes j1")
need(r"j1: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "j1 stopped on finish")
# the resize of j0: checkpoint, stop, restart at 4 GPUs from the saved step
need(r"decision t=120s: resize j0 2 -> 4 GPUs on h\d:2,h\d:2", "j0 resize decision")
saved = int(need(r"j0: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "j0 checkpoint").group(1))
need(r"j0: started on h\d with 4 GPUs .* resuming from its checkpoint", "j0 restarted at 4 GPUs")
m = need(r"j0: run 2 on h\d \(4 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "j0 resumed")
assert int(m.group(1)) == saved + 1 == int(m.group(2)) + 1, (m.group(0), saved)
# the killed job was reported and restarted from the resize's checkpoint
need(r"j0: died unexpectedly after step \d+ \(its last progress line; (killed by SIGKILL|exited \d+).*\): "
     r"restarting "
     r"from its checkpoint", "j0 death reported")
m = need(r"j0: run 3 on h\d \(4 GPUs\) resumed at step (\d+)", "j0 restarted after its death")
assert int(m.group(1)) == saved + 1, (m.group(0), saved)
# the end: everyone checkpointed and stopped
need(r"live run over after", "summary")
rows = {l.split()[0]: l.split() for l in out.splitlines()
        if re.match(r"^j\d ", l)}
assert set(rows) == {"j0", "j1", "j2"}, rows
assert int(rows["j0"][4]) >= 1, rows["j0"]       # resizes
assert int(rows["j0"][7]) > saved, rows["j0"]     # steps went on after the resume
assert int(rows["j0"][5]) == 1 and rows["j0"][6] == "no", rows["j0"]  # one death, recovered
for r in rows.values():
    assert r[-2:] == ["exited", "0"], r           # last run stopped with a checkpoint
ev = [json.loads(l) for l in open(sys.argv[2])]
kinds = [(e["event"], e["job"]) for e in ev if "gpus_from" in e]
assert ("resize", "j0") in kinds and ("finish", "j1") in kinds, kinds
prog = [e for e in ev if e["event"] == "progress"]
assert prog and all("model_progress" in e for e in prog), prog[:2]
print("j0 saved at step %d, resumed at %d on 4 GPUs; %d decisions" % (saved, saved + 1, len(kinds)))
PY
then pass "jobs start, j0 resizes through its checkpoint, a killed job restarts, all stop"
else fail "live run (see output)"; fi
if [ "$running" -ge 3 ] && [ "$left" -eq 0 ]; then pass "no job process left ($running were running, $left left)"
else fail "processes: $running running, $left left"; fi
modes="$(stat -c %a "$T/jobs/j0" "$T/jobs/j1" "$T/jobs/j2" | tr '\n' ' ')"
if [ "$modes" = "700 700 700 " ]; then pass "every job folder is private (0700), the one made before too"
else fail "job folder modes: $modes (expected 700 each)"; fi
if [ "$(cat "$T/victim")" = untouched ] && [ ! -L "$T/jobs/j1/tunedeck-hostfile" ] &&
    grep -q ':[0-9][0-9]*$' "$T/jobs/j1/tunedeck-hostfile" &&
    [ -z "$(ls "$T"/jobs/j*/tunedeck-hostfile.* 2>/dev/null)" ]; then
    pass "the hostfile replaced the planted symlink, not written through it; no temporary left"
else fail "hostfile: victim '$(cat "$T/victim")', $(ls -l "$T/jobs/j1/" | tr '\n' ' ')"; fi
if [ -z "$(ls -A "$T/victim-dir")" ] && [ ! -L "$T/jobs/j2/tunedeck-hostfile" ] &&
    grep -q ':[0-9][0-9]*$' "$T/jobs/j2/tunedeck-hostfile"; then
    pass "the hostfile replaced a planted symlink to a folder, not moved into that folder"
else fail "hostfile: victim folder holds '$(ls -A "$T/victim-dir" | tr '\n' ' ')', $(ls -l "$T/jobs/j2/" | tr '\n' ' ')"; fi

echo "moves between hosts"
# doubling-explore on 2 nodes: j0 moves from h1 (1 GPU) to h2 (2 GPUs) at 180 s, and at 360 s
# j2 is preempted on h1 while j0 grows onto h1 and h2: j0 may start on h1 only once j2 left.
"$bin" schedule --live --cluster "$T/inv2.json" --workload "$root/tests/fixtures/schedlive-workload.csv" \
    --policy doubling-explore --interval 60 --time-scale 30 --duration 16 --status-every 0 \
    --job-dir "$T/sticky/jobs2" > "$T/out2" 2> "$T/err2" &
LIVE_PID=$!
wait "$LIVE_PID"
rc=$?
LIVE_PID=""
left=$(procs_left "ckpt-$mark")
if [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && python3 - "$T/out2" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
def at(pat, what):
    m = re.search(pat, out, re.M)
    assert m, "missing: %s (%s)" % (what, pat)
    return m
at(r"decision t=180s: resize j0 1 -> 2 GPUs on h2:2", "j0 move decision")
saved = int(at(r"j0: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "j0 checkpoint on h1").group(1))
m = at(r"j0: run 2 on h2 \(2 GPUs\) resumed at step (\d+)", "j0 resumed on h2")
assert int(m.group(1)) == saved + 1, (m.group(0), saved)
at(r"decision t=360s: stop j2", "j2 preempted")
stop = at(r"j2: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "j2 checkpointed")
start = at(r"j0: started on h1 with 4 GPUs", "j0 grows onto h1")
assert stop.start() < start.start(), "j0 started on h1 before j2 had left it"
print("j0 moved h1 -> h2 at step %d; grew onto h1 after j2 left" % saved)
PY
then pass "a job moves to another host through its checkpoint; a start waits for the preempted job"
else fail "moves between hosts (exit $rc, $left left)"; fi

echo "real progress"
# --real-progress at real time (x1): the model alone needs ~3900 s for bert's 2 epochs; the
# real job's epochs (from its progress lines) finish it within seconds, and the run ends.
"$bin" schedule --live --cluster "$T/inv3.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 40 --status-every 0 --real-progress \
    --job-dir "$T/jobs3" > "$T/out3" 2> "$T/err3"
rc=$?
left=$(procs_left "ckpt-$mark")
if [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && python3 - "$T/out3" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
fin = re.search(r"decision t=(\d+)s: finish b0", out)
assert fin and int(fin.group(1)) < 40, "no early finish"
# its stop is said once, as the model's finish (regression: the run's end said it first,
# "b0: end of the run: checkpoint and stop", and the finish decision a second time after)
asks = re.findall(r"b0: (?:end of the run: )?checkpoint and stop.*", out)
assert asks == [a for a in asks if "the model says it is done" in a] and len(asks) == 1, asks
stop = re.search(r"b0: stopped at step \d+ \(epoch ([\d.]+)\), checkpoint written", out)
assert stop and float(stop.group(1)) >= 2, "stopped before 2 real epochs"
over = re.search(r"live run over after ([\d.]+) s wall", out)
assert over and float(over.group(1)) < 40, "did not end when the job was done"
print("b0 finished by its real progress at t=%ss (epoch %s)" % (fin.group(1), stop.group(1)))
PY
then pass "with --real-progress a job finishes when the real one reaches its epochs"
else fail "real progress (exit $rc, $left left)"; fi

echo "progress without epoch"
# A job whose progress lines carry only step and loss: --real-progress says once that it has
# no epoch (not a refused report per line), and the figures it never gave read "-", not -1.
# Its loss is negative (-3.2, as a negative log-likelihood may be): shown, not taken for none.
python3 - "$T/inv2.json" "$root/tests/fixtures/job.sh" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = "exec sh %s {gpus} {hosts} {resume} ckpt-%s noepoch -3.2" % (sys.argv[2], sys.argv[3])
json.dump(inv, open(sys.argv[1].replace(".json", "-noepoch.json"), "w"))
PY
"$bin" schedule --live --cluster "$T/inv2-noepoch.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 2 --status-every 1 --real-progress \
    --checkpoint-file "ckpt-$mark" \
    --job-dir "$T/jobs4" --events "$T/events4.jsonl" > "$T/out4" 2> "$T/err4"
rc=$?
left=$(procs_left "ckpt-$mark")
if [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && python3 - "$T/out4" "$T/events4.jsonl" <<'PY'
import json, re, sys
out = open(sys.argv[1]).read()
assert out.count('b0: its progress lines have no "epoch"') == 1, "said not once"
assert "expected epochs" not in out and not re.search(r"-1\.0|-1 ex/s|epoch -1", out), "-1 shown"
assert re.search(r"real running \d GPUs? step \d+ epoch - loss -3.2000 - ex/s", out), "status line"
assert re.search(r"b0: stopped at step \d+, checkpoint written \(loss -3.2000\)", out), "stop line"
assert re.search(r"^b0 .* \d+ +- +-3.2000 +-  exited 0$", out, re.M), "table row"
ev = [json.loads(l) for l in open(sys.argv[2]) if '"progress"' in l]
assert ev and all("epoch" not in e and "examples_per_s" not in e and e["loss"] == -3.2 for e in ev), ev
PY
then pass "a job without epochs: said once, its absent figures read '-', its negative loss shown"
else fail "progress without epoch (exit $rc, $left left)"; fi

# --events on a full disk: the run's events were cut and the run ended 0 with nothing said.
"$bin" schedule --live --cluster "$T/inv2-noepoch.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 1 --status-every 1 --real-progress \
    --checkpoint-file "ckpt-$mark" --job-dir "$T/jobs10" --events /dev/full > "$T/out10" 2> "$T/err10"
rc=$?
left=$(procs_left "ckpt-$mark")
if [ "$rc" -eq 1 ] && [ "$left" -eq 0 ] &&
    grep -q -- "--events: write to '/dev/full' failed: No space left on device" "$T/err10"; then
    pass "--events on a full disk: said, exit 1, every job stopped"
else fail "--events /dev/full (exit $rc, $left left): $(tail -3 "$T/err10")"; fi

echo "a job with no progress line yet"
# A job still starting (importing torch, meeting its peers) when the status lines come and the
# run ends: it has no step, epoch or rate yet. They read "-", and its stop is "before its first
# progress line", never "step -1" nor "epoch 0.00 ... 0 ex/s" (regression).
python3 - "$T/inv2.json" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = ("exec sh -c 'trap \"exit 0\" TERM; while :; do sleep 0.1; done' ckpt-%s"
                      % sys.argv[2])
json.dump(inv, open(sys.argv[1].replace(".json", "-quiet.json"), "w"))
PY
"$bin" schedule --live --cluster "$T/inv2-quiet.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 2 --status-every 0.5 \
    --checkpoint-file "ckpt-$mark" --job-dir "$T/jobs7" > "$T/out7" 2> "$T/err7"
rc=$?
left=$(procs_left "ckpt-$mark")
if [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && python3 - "$T/out7" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
assert re.search(r"b0 +bert +model +[\d.]+% \| real running \d GPUs? step - epoch - loss - - ex/s",
                 out), "status line"
assert "b0: end of the run: checkpoint and stop before its first progress line" in out, "stop"
assert "b0: stopped before its first progress line, checkpoint written" in out, "stopped"
assert not re.search(r"step -1|epoch 0\.00|\b0 ex/s", out), "an unknown figure shown as a number"
PY
then pass "a job with no progress line yet: its step, epoch and rate read '-', its stop says so"
else fail "no progress line yet (exit $rc, $left left)"; cat "$T/out7"; fi

echo "a diverged loss"
# A job whose loss is Python's bare NaN (json.dumps of a diverged float) on every line: the
# line is a protocol line refused by its field, and the driver says so once per run.
python3 - "$T/inv2.json" "$root/tests/fixtures/job.sh" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = "exec sh %s {gpus} {hosts} {resume} ckpt-%s noepoch NaN" % (sys.argv[2], sys.argv[3])
json.dump(inv, open(sys.argv[1].replace(".json", "-nan.json"), "w"))
PY
"$bin" schedule --live --cluster "$T/inv2-nan.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 2 --status-every 0 \
    --checkpoint-file "ckpt-$mark" --job-dir "$T/jobs5" > "$T/out5" 2> "$T/err5"
rc=$?
left=$(procs_left "ckpt-$mark")
said="b0: a line it printed was refused: progress: field 'loss': expected a number in [-1e+300, 1e+300], found NaN (training diverged?)"
if [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && [ "$(grep -cF "$said" "$T/out5")" -eq 1 ]
then pass "a job's NaN loss is said once, naming the field"
else fail "a diverged loss (exit $rc, $left left): $(grep -F 'refused' "$T/out5" | head -3)"; fi

echo "a NUL byte in a progress line"
# The NUL ended the line as a C string, the rest (a second event here) dropped unseen: the line
# is a refused protocol line naming the byte, said once per run.
python3 - "$T/inv2.json" "$root/tests/fixtures/job.sh" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = "exec sh %s {gpus} {hosts} {resume} ckpt-%s nul" % (sys.argv[2], sys.argv[3])
json.dump(inv, open(sys.argv[1].replace(".json", "-nul.json"), "w"))
PY
"$bin" schedule --live --cluster "$T/inv2-nul.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 2 --status-every 0 \
    --checkpoint-file "ckpt-$mark" --job-dir "$T/jobs5n" > "$T/out5n" 2> "$T/err5n"
rc=$?
left=$(procs_left "ckpt-$mark")
said="b0: a line it printed was refused: event line: expected JSON text, found a NUL byte at byte "
if [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && [ "$(grep -cF "$said" "$T/out5n")" -eq 1 ]
then pass "a progress line with a NUL byte is refused naming the byte, said once"
else fail "a NUL byte in a progress line (exit $rc, $left left): $(grep -F 'refused' "$T/out5n" | head -3) $(tail -3 "$T/err5n")"; fi

echo "a job that fails says why"
# A training script that raises: the death and the failure name its last stderr line, not
# only "exited 1", its colour codes made visible rather than sent to the terminal. Its second
# death leaves no job to run: the run ends then (exit 1), not at its --duration of 30 s.
python3 - "$T/inv2.json" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
# its last line coloured, as rich prints it: the colour codes are shown, not sent
inv["job_command"] = ("echo loading; echo 'Traceback ...' >&2; "
                      "printf '\\033[31mValueError: cannot resume at world %%s\\033[0m\\n' {gpus} >&2; "
                      "exit 1 # ckpt-%s" % sys.argv[2])
json.dump(inv, open(sys.argv[1].replace(".json", "-fails.json"), "w"))
PY
"$bin" schedule --live --cluster "$T/inv2-fails.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 30 --status-every 0 \
    --checkpoint-file "ckpt-$mark" --job-dir "$T/jobs5" > "$T/out5" 2> "$T/err5"
rc=$?
if [ "$rc" -eq 1 ] && python3 - "$T/out5" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
why = re.escape("exited 1: ^[[31mValueError: cannot resume at world 4^[[0m")
assert "\x1b" not in out, "a job's escape sequence reached the terminal"
assert re.search(r"b0: died unexpectedly before its first progress line \(%s\): restarting"
                 % why, out), "first death"
assert re.search(r"^b0 .*yes +- +- +- +-  %s$" % why, out, re.M), "the table's row"
assert "every job has ended (0 completed, 1 failed): the run is over" in out, "no early end"
over = re.search(r"live run over after ([\d.]+) s wall", out)
assert over and float(over.group(1)) < 15, "waited for --duration"
PY
then pass "a failing job's death names its last stderr line; the run ends with it (exit 1)"
else fail "failing job (exit $rc)"; fi

echo "a job that ends by itself ends the run"
# One progress line, then exit 0 (a script run with --steps N): not a death; with no other
# job to run, the run ends at once with exit 0 rather than at --duration.
python3 - "$T/inv2.json" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
# braces are the template's placeholders: printf writes them from octal
inv["job_command"] = ("printf '\\173\"event\": \"progress\", \"step\": 10, \"loss\": 0.7\\175\\n'; "
                      "exit 0 # ckpt-%s" % sys.argv[2])
json.dump(inv, open(sys.argv[1].replace(".json", "-ends.json"), "w"))
PY
"$bin" schedule --live --cluster "$T/inv2-ends.json" --workload "$root/tests/fixtures/schedlive-real.csv" \
    --policy doubling --interval 2 --time-scale 1 --duration 30 --status-every 0 \
    --checkpoint-file "ckpt-$mark" --job-dir "$T/jobs6" > "$T/out6" 2> "$T/err6"
rc=$?
if [ "$rc" -eq 0 ] && python3 - "$T/out6" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
assert "b0: ended by itself at step 10" in out, "not ended by itself"
assert re.search(r"b0: ended by itself at step 10: done, its \d+ GPUs? go back to the "
                 r"scheduler for other jobs$", out, re.M), "its GPUs not given back"
assert "every job has ended (1 completed, 0 failed): the run is over" in out, "no early end"
over = re.search(r"live run over after ([\d.]+) s wall", out)
assert over and float(over.group(1)) < 15, "waited for --duration"
PY
then pass "a job that ended by itself ends the run at once (exit 0)"
else fail "job ending by itself (exit $rc)"; fi

echo "bad input"
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/nope.csv" > "$T/b1" 2>&1
if [ $? -eq 3 ] && grep -q "nope.csv" "$T/b1"; then pass "a missing workload is named"; else fail "missing workload: $(cat "$T/b1")"; fi
python3 -c "
import json,sys; inv=json.load(open('$T/inv.json')); del inv['job_command']; json.dump(inv, open('$T/nojob.json','w'))"
"$bin" schedule --live --cluster "$T/nojob.json" --workload "$root/tests/fixtures/schedlive-workload.csv" > "$T/b2" 2>&1
if [ $? -eq 3 ] && grep -qF "$T/nojob.json: field 'job_command'" "$T/b2"; then pass "an inventory without job_command is refused"; else fail "no job_command: $(cat "$T/b2")"; fi
# A script whose own flag is not --checkpoint (regression: the inventory's name, not its file,
# no field named, exit 2): the file and the field, what is expected, the way round it.
python3 -c "
import json,sys; inv=json.load(open('$T/inv.json')); inv['job_command']='python3 train.py --save ckpt.pt --resume {resume}'; json.dump(inv, open('$T/nockpt.json','w'))"
"$bin" schedule --live --cluster "$T/nockpt.json" --workload "$root/tests/fixtures/schedlive-workload.csv" > "$T/b4" 2>&1
if [ $? -eq 3 ] && grep -qF "$T/nockpt.json: field 'job_command': expected '--checkpoint FILE' in it" "$T/b4" &&
    grep -qF -- "--checkpoint-file" "$T/b4"
then pass "a job_command without --checkpoint FILE is refused naming the file and field"
else fail "no --checkpoint: $(cat "$T/b4")"; fi
"$bin" schedule --live --cluster "$T/inv.json" --job-command 'python3 train.py --save ckpt.pt' \
    --workload "$root/tests/fixtures/schedlive-workload.csv" > "$T/b4" 2>&1
if [ $? -eq 3 ] && grep -qF -- "--job-command: expected '--checkpoint FILE' in it" "$T/b4"
then pass "so is a --job-command without it, naming the flag rather than the inventory"
else fail "--job-command without --checkpoint: $(cat "$T/b4")"; fi
TUNEDECK_SSH_CONFIG="$T/no-such-ssh-config" "$bin" schedule --live --cluster "$T/inv.json" \
    --workload "$root/tests/fixtures/schedlive-workload.csv" --duration 5 > "$T/b3" 2>&1
if [ $? -eq 3 ] && grep -q "no-such-ssh-config (TUNEDECK_SSH_CONFIG): cannot read it" "$T/b3"
then pass "schedule --live reads TUNEDECK_SSH_CONFIG, as tune and hosts do"; else fail "TUNEDECK_SSH_CONFIG: $(cat "$T/b3")"; fi

echo "a host that goes down mid-run"
# The sshd of the host j2 runs on stops, its connections with it: the host is drained in the
# model at once (its runs move), j2 is not restarted there (which died again and left it
# failed, its GPUs held on the dead host in the model) but where the next decision places
# it; the sshd back, the pool reconnects and the host is usable again. Only sshd died: j2's
# run goes on there, in the job folder every loopback host shares (as on NFS). The fence
# keeps the new run off that folder while the old one lives (they ran side by side, both
# writing the checkpoint), and the old one is stopped, by its mark, once its host answers.
# Each run polled here writes a file of its own: the first look comes before the shell's
# redirect has emptied the file, so a reused one still held the last run's lines (under load
# "j0: run 1 on h1" matched there, and CI failed).
wait_out() { # PATTERN TENTHS: polls $T/$live_out (out8 by default) for the extended regex
    _wo=0 _wf="$T/${live_out:-out8}"
    while [ "$_wo" -lt "$2" ] && ! grep -Eq -- "$1" "$_wf" 2>/dev/null; do
        sleep 0.1; _wo=$((_wo + 1))
    done
    grep -Eq -- "$1" "$_wf"
}
# The old run must outlive its sshd here, as a job that never looks at its output does:
# tunedeck-worker ends once its output is closed (its progress line meets EPIPE: "schedule
# --live killed outright" below), so its lines pass through a relay that ignores SIGPIPE and
# a failed write (and the group's TERM: it ends when the worker's output does).
python3 - "$T/inv.json" "$T/inv8.json" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] += (" | (trap '' PIPE TERM; while IFS= read -r l; do "
                       "printf '%s\\n' \"$l\" 2>/dev/null; done)")
json.dump(inv, open(sys.argv[2], "w"))
PY
"$bin" schedule --live --cluster "$T/inv8.json" --workload "$root/tests/fixtures/schedlive-workload.csv" \
    --policy doubling --interval 60 --time-scale 30 --duration 120 --status-every 0 \
    --job-dir "$T/jobs8" > "$T/out8" 2> "$T/err8" &
LIVE_PID=$!
down=""
if wait_out "j2: run 1 on h[1-3] " 300; then
    down=$(sed -n 's/.*j2: run 1 on h\([1-3]\) .*/\1/p' "$T/out8" | head -1)
    harness_stop "$down"
    if wait_out "h$down is down over SSH \(.*\): its runs move" 150 &&
        wait_out "j2: its run ended (after step [0-9]+ \\(its last progress line; |before its first progress line \\().* with h$down, which the scheduler no longer uses: it restarts" 150
    then pass "a host that goes down is drained and its job restarts elsewhere"
    else fail "host h$down down: $(tail -n 12 "$T/out8")"; fi
    # the old run still lives (only its sshd died), holding j2's folder
    stale=$(pgrep -f "ckpt-$mark" | while read -r p; do
        case "$(readlink /proc/"$p"/cwd 2>/dev/null)" in */jobs8/j2) echo "$p" ;; esac; done | head -n 1)
    if [ -n "$stale" ] && wait_out "j2: another run of it still holds its folder" 300 &&
        ! grep -q "j2: run 2 on" "$T/out8"
    then pass "the new run of j2 waits while the one left on h$down holds its folder (pid $stale)"
    else fail "fence: stale '$stale': $(tail -n 8 "$T/out8")"; fi
    harness_start "$down"
    # the pool's reconnect back-off is capped at 30 s; back from down, its job folders are
    # checked again before any job goes there
    if wait_out "h$down is usable again \(it answers over SSH again and its job folders are checked\)" 600
    then pass "the host is usable again once it answers"
    else fail "h$down back: $(tail -n 8 "$T/out8")"; fi
    # The old run's process is stopped once it is a zombie or gone (running_pid, as the stop
    # itself reads it), not once kill -0 fails: orphaned when its shell died with sshd, it
    # waits as a zombie for this machine's init to reap it (CI failed so, the stop said).
    if wait_out "j2: its run left on h$down when its end was not seen \(process group [0-9]+\): stopped" 300 &&
        wait_out "j2: run 2 on h[1-3] .* resumed at step|j2: run 2 on h[1-3] .* first step" 300 &&
        { [ -z "$stale" ] || ! running_pid "$stale"; }
    then pass "once h$down answers its old run of j2 is stopped by its mark, and j2 runs again"
    else fail "stale run on h$down: $(grep "j2:\|h$down" "$T/out8" | tail -n 12)"; fi
else
    fail "j2 did not start: $(tail -n 8 "$T/out8")"
fi
pid_kill_named TERM "$LIVE_PID" "--cluster $T/"
wait "$LIVE_PID"
rc=$?
LIVE_PID=""
if [ "$rc" -eq 143 ] && ! grep -q "second death\|j2 .* yes " "$T/out8"
then pass "no death was counted against j2 (exit $rc)"
else fail "after the host came back: exit $rc: $(tail -n 6 "$T/out8")"; fi

# A host down at the start is drained there and usable once it answers (the watch keeps
# reconnecting it); the first look at the hosts does not undrain it (it did, at once: the
# backend's first reading had it usable). Its job folders were not checked before the run, so
# they are checked once it answers: h4's ls (a stand-in first on its PATH) shows --job-dir
# world-writable, and h4 takes no job; back from down with the real ls, it is checked afresh
# and usable.
# A job arriving late (j3, at 220 s wall) keeps the run going while h4 is stopped, started and
# reconnected under load: with only the fixture's jobs it ended at 79 s, all done, before h4
# answered (CI, load average 13).
# Each wait for h4 allows 3 minutes: on an idle machine h4 is checked 1.4 s after its sshd
# starts, but under load 16 (four suites beside three other test runs) neither wait's 60 s
# was enough ("h4 refused", "h4 up"; the run's own log had nothing of h4 in that time). The
# watch's reconnect back-off reaches 30 s (hostpool.c) after connects that time out.
live_out=out9
harness_inventory "$T/inv4.json" 1 2 4
live_inventory "$T/inv4.json" "$build/tunedeck-worker" "$mark"
{ cat "$root/tests/fixtures/schedlive-workload.csv"; echo "j3,6600,ncf,1,32768"; } > "$T/late.csv"
"$bin" schedule --live --cluster "$T/inv4.json" --workload "$T/late.csv" \
    --policy doubling --interval 60 --time-scale 30 --duration 900 --status-every 0 \
    --job-dir "$T/jobs9" > "$T/out9" 2> "$T/err9" &
LIVE_PID=$!
if wait_out "j[01]: run 1 on h[12] " 300 && grep -q "^h4: down (.*): drained" "$T/out9" &&
    ! grep -q "h4 is usable again" "$T/out9"
then pass "a host down at the start stays drained"
else fail "h4 down at the start: $(head -n 8 "$T/out9")"; fi
mkdir -p "$T/h/host-bin4"
cat > "$T/h/host-bin4/ls" <<EOF
#!/bin/sh
out="\$(/bin/ls "\$@")" || exit
case "\$*" in *" $T/jobs9") printf '%s\n' "\$out" | sed 's/^d[^ ]*/drwxrwxrwx/' ;; *) printf '%s\n' "\$out" ;; esac
EOF
chmod 755 "$T/h/host-bin4/ls"
harness_start 4
if wait_out "h4: the --job-dir folder $T/jobs9 is world-writable \(mode 0777\).*chmod go-w $T/jobs9 .*: no job goes there" 1800 &&
    sleep 1 && ! grep -q "h4 is usable again" "$T/out9"
then pass "a host that answers after the start is checked first: refused, it takes no job"
else fail "h4 refused: $(tail -n 8 "$T/out9")"; fi
rm "$T/h/host-bin4/ls"
harness_stop 4
harness_start 4
if wait_out "h4 is usable again \(it answers over SSH again and its job folders are checked\)" 1800
then pass "a host down at the start is usable once it answers and its folders pass"
else fail "h4 up: $(tail -n 8 "$T/out9")"; fi
pid_kill_named TERM "$LIVE_PID" "--cluster $T/"
wait "$LIVE_PID"
LIVE_PID=""
harness_stop 4
suite_reap

echo "schedule --live killed outright"
# SIGKILL of schedule --live: no stop ever reaches its jobs, but their SSH channels close with
# it. tunedeck-worker's progress line then meets a closed pipe: the job checkpoints and ends
# as on SIGTERM, its fence let go, so a new run of the workload starts it at once
# (regression: the jobs trained on for ever, and a new run's jobs waited on their fences,
# exit 75, for as long as the old ones lived).
live_out=out10
"$bin" schedule --live --cluster "$T/inv2.json" --workload "$root/tests/fixtures/schedlive-workload.csv" \
    --policy doubling --interval 60 --time-scale 30 --duration 300 --status-every 0 \
    --job-dir "$T/jobs10" --events "$T/events10.jsonl" > "$T/out10" 2> "$T/err10" &
LIVE_PID=$!
if wait_out "j0: run 1 on h[12] .*first step" 600 && wait_out "j1: run 1 on h[12] .*first step" 600; then
    pid_kill_named KILL "$LIVE_PID" "--cluster $T/"; wait "$LIVE_PID" 2>/dev/null; LIVE_PID=""
    left=$(procs_left "ckpt-$mark")
    if [ "$left" -eq 0 ] && [ -s "$T/jobs10/j0/ckpt-$mark" ]
    then pass "a killed live run's jobs stop on their own, j0 with its checkpoint"
    else fail "killed live run: $left job processes left, j0's folder: $(ls -A "$T/jobs10/j0" | tr '\n' ' ')"; fi
    # --events holds what was decided up to the kill, in whole lines (regression: fully
    # buffered, the file of a run killed in its first 4 KiB was empty)
    if python3 - "$T/events10.jsonl" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "a torn last line"
ev = [json.loads(l) for l in text.splitlines()]
assert any("j0" in json.dumps(e) for e in ev), ev
PY
    then pass "a killed live run's --events file holds its decisions, whole lines"
    else fail "killed live run's --events: '$(head -c 300 "$T/events10.jsonl")'"; fi
else
    fail "killed live run: j0 and j1 never ran: $(tail -n 8 "$T/out10")"
fi
suite_reap

echo "a job on an IPv6 host"
# Its hostfile line was "::1:2": the host ::1 with 2 slots, or ::1:2 with none said. Now
# "[::1]:N", which tunedeck_trial.host_ranks reads. sshd 4 listens on ::1 as well.
if ip -6 addr show lo 2> /dev/null | grep -q 'inet6 ::1/'; then
    harness_start 4 "ListenAddress [::1]:$H_PORT"
    echo "[::1]:$H_PORT $(cut -d' ' -f1,2 "$H/host4.pub")" >> "$H/known_hosts"
    python3 - "$T/inv2.json" "$T/inv6.json" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["machines"] = [{"name": "v6", "host": "[::1]", "type": "g"}]
json.dump(inv, open(sys.argv[2], "w"))
PY
    printf 'name,time,application,num_replicas,batch_size\nj0,0,cifar10,2,128\n' > "$T/v6.csv"
    "$bin" schedule --live --cluster "$T/inv6.json" --workload "$T/v6.csv" --time-scale 30 \
        --duration 6 --status-every 0 --job-dir "$T/jobs11" > "$T/out11" 2> "$T/err11"
    rc=$?
    hf=$(cat "$T/jobs11/j0/tunedeck-hostfile" 2> /dev/null)
    if { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && grep -q "j0: started on v6" "$T/out11" &&
        printf '%s\n' "$hf" | grep -qx '\[::1\]:[12]' &&
        PYTHONPATH="$root/tools/python" python3 -c 'import sys, tunedeck_trial
assert tunedeck_trial.host_ranks(0, sys.argv[1])[0] in (1, 2)' "$T/jobs11/j0/tunedeck-hostfile"
    then pass "a job on host [::1]: its hostfile line is '$hf', which host_ranks reads"
    else fail "IPv6 host: exit $rc, hostfile '$hf': $(tail -n 5 "$T/out11") $(cat "$T/err11")"; fi
    harness_stop 4
    suite_reap
else
    echo "  skip: this machine has no IPv6 loopback (::1)"
fi

if [ "$fails" -ne 0 ]; then
    echo "schedlive: $fails failed"
    for f in "$T"/out "$T"/err "$T"/out2 "$T"/err2 "$T"/out3 "$T"/err3 "$T"/out4 "$T"/err4 "$T"/out5 "$T"/err5 "$T"/out6 "$T"/err6 "$T"/out7 "$T"/err7 "$T"/out8 "$T"/err8 "$T"/out9 "$T"/err9 "$T"/out10 "$T"/err10 "$T"/out11 "$T"/err11 "$T"/b1 "$T"/b2 "$T"/b3 "$T"/b4; do [ -s "$f" ] && { echo "--- $f"; tail -c 4000 "$f"; }; done
    exit 1
fi
echo "schedlive: all passed"
