#!/bin/sh
# The live scheduler on Slurm (`schedule --live --slurm`), against the private Slurm 22.05 of
# tests/slurm-harness.sh (n1,n2: gpu:t4:2; n3,n4: gpu:v100:4), with tunedeck-worker in job
# mode as the job command (it checkpoints on SIGTERM and resumes at any size). Time runs 30x.
#
# 1. Partition t4 (4 GPUs), tests/fixtures/slurm-live-workload.csv, doubling: at t=240 s
#    `new` shrinks 2 -> 1 GPU (scancel --signal=TERM, checkpoint, resubmission with {resume})
#    while `third` starts beside it on n2, and at t=360 s `new` grows back to 2. Each resumed
#    run continues from its checkpoint's step; the GPUs are the ones Slurm granted, read back
#    from scontrol (two jobs on n2 hold different indices).
# 2. Every node, tests/fixtures/schedlive-workload.csv: j0 grows 4 -> 8 GPUs over n1, n2, n3
#    (a heterogeneous job: the nodes hold 2, 2 and 4 of it); a job scancelled behind the
#    scheduler's back is a death with Slurm's reason and is resubmitted; SIGINT ends the run
#    with every job checkpointed.
# 3. An inventory with "backend": "slurm" given to --cluster; another user's running job is
#    listed with the GPU Slurm gave it (for the console's grid).
# 4. slurmctld stopped for 10 s under a running job: said once, the rounds back off, the
#    job runs on and is checkpointed at the end.
# 5. slurmctld stopped across a start: the sbatch is retried when it answers again; the
#    driver does not wait on it (the status lines and the other job's steps go on).
# 6. slurmctld stopped across a shrink: the scancel --signal=TERM is retried, the job
#    checkpoints and is resubmitted from its checkpoint; the driver does not wait on it.
# 7. An sbatch whose answer is lost after Slurm took the job (a stand-in sbatch wraps the
#    real one and keeps its answer past tunedeck's timeout): the job is adopted by name; and
#    one Slurm takes only after the look-up found none: the retry's second job is cancelled.
# 8. A node drained in Slurm under a run; 9. n3 added to partition t4 mid-run (the next
#    decision places there) and taken out again (its run checkpoints); 10. another user's job
#    holding a GPU, and a batch job an earlier live run left; 11. another user's pending
#    job (sbatch --uid=nobody) that Slurm would start before a resubmission of ours: the
#    GPU it would take is held back and `new` does not grow into a wait.
# After each run: no Slurm job (squeue) and no job process left. The trap stops every
# daemon and job it started.
set -u
suite=slurm_live scratch=slurm-live suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"
mark="sll$$"
LIVE_PID=""
suite_stop() { [ -n "$LIVE_PID" ] && kill -KILL "$LIVE_PID" 2>/dev/null; }
suite_reap() { for p in $(pgrep -f "ckpt-$mark" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done; }
slurm_suite_start
job="$build/tunedeck-worker --job --gpus {gpus} --hosts {hosts} --checkpoint ckpt-$mark \
--resume {resume} --model-mb 0.02 --batch 64 --progress-every 0.25"

# Waits up to 10 s for the queue to empty and the jobs' processes to end.
settle() {
    n=0
    while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f "ckpt-$mark" > /dev/null; }; do
        sleep 0.2; n=$((n + 1))
    done
}

# wait_line FILE PATTERN TENTHS: waits up to TENTHS tenths of a second for a line in FILE.
wait_line() {
    n=0
    while [ $n -lt "$3" ] && ! grep -q "$2" "$1" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
}

# live_ended: waits for the background run, settles; sets rc, queue and left.
live_ended() {
    wait "$LIVE_PID"
    rc=$?
    LIVE_PID=""
    settle
    queue="$(squeue -h)"
    left=$(pgrep -f "ckpt-$mark" | wc -l)
}

echo "shrink and grow through checkpoint and resubmission"
"$bin" schedule --live --slurm --partition t4 --workload "$root/tests/fixtures/slurm-live-workload.csv" \
    --job-command "$job" --policy doubling --interval 60 --time-scale 30 --duration 15 \
    --status-every 0 --job-dir "$T/jobs" > "$T/out1" 2> "$T/err1"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && python3 - "$T/out1" <<'PY'
import re, sys
from outcheck import out, need
need(r"slurm: 2 nodes from the controller", "the t4 partition's nodes")
need(r"decision t=240s: resize new 2 -> 1 GPUs on n2:1", "the shrink decision")
s1 = need(r"new: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "new checkpointed")
saved1 = int(s1.group(1))
m = need(r"new: run 2 on n2 \(1 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "new resumed at 1 GPU", s1.end())
assert int(m.group(1)) == saved1 + 1 == int(m.group(2)) + 1, (m.group(0), saved1)
# placement read back from scontrol: new and third share n2 on different GPU indices
g_new = need(r"new: Slurm job \d+ running on n2:(\d) \(the GPUs", "new's granted GPU", s1.end())
g_third = need(r"third: Slurm job \d+ running on n2:(\d) \(the GPUs", "third's granted GPU")
assert g_new.group(1) != g_third.group(1), (g_new.group(0), g_third.group(0))
need(r"decision t=360s: resize new 1 -> 2 GPUs on n2:2", "the grow decision")
s2 = need(r"new: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "new checkpointed again",
          m.end())
m2 = need(r"new: run 3 on n2 \(2 GPUs\) resumed at step (\d+)", "new resumed at 2 GPUs", s2.end())
assert int(m2.group(1)) == int(s2.group(1)) + 1, (m2.group(0), s2.group(0))
need(r"new: Slurm job \d+ running on n2:0\+1 \(the GPUs", "both of n2's GPUs granted", s2.end())
rows = {l.split()[0]: l.split() for l in out.splitlines() if re.match(r"^(big|new|third) ", l)}
assert set(rows) == {"big", "new", "third"}, rows
assert int(rows["new"][4]) == 2, rows["new"]  # two resizes
for r in rows.values():
    assert r[-2:] == ["exited", "0"], r
calls = need(r"slurm: (\d+) controller calls \((\d+) scontrol rounds\)", "call count")
wall = float(need(r"live run over after ([\d.]+) s wall", "wall").group(1))
assert int(calls.group(2)) <= wall + 2, (calls.group(0), wall)  # a round a second at most
print("new: 2 -> 1 GPU at step %d, 1 -> 2 at step %s; GPUs n2:%s and n2:%s; %s" %
      (saved1, s2.group(1), g_new.group(1), g_third.group(1), calls.group(0)))
PY
then pass "a job shrinks and grows through checkpoint and resubmission, on the GPUs Slurm granted"
else fail "shrink and grow (exit $rc)"; fi
if [ -z "$queue" ] && [ "$left" -eq 0 ]; then pass "no Slurm job and no job process left"
else fail "left: queue '$queue', $left processes"; fi

echo "a heterogeneous grow, a death, Ctrl-C"
"$bin" schedule --live --slurm --workload "$root/tests/fixtures/schedlive-workload.csv" \
    --job-command "$job" --policy doubling --interval 60 --time-scale 30 --duration 60 \
    --status-every 0 --job-dir "$T/jobs2" > "$T/out2" 2> "$T/err2" &
LIVE_PID=$!
wait_line "$T/out2" "j0: Slurm job [0-9]* running on n1:0+1,n2:0+1,n3:" 150
victim=$(squeue -h -o '%i %j' | awk '$2 ~ /^tunedeck-live-j2[.]/ {print $1}' | head -1)
[ -n "$victim" ] && scancel "$victim"
wait_line "$T/out2" "j2: run 2 " 100
sleep 0.5
kill -INT "$LIVE_PID"
live_ended
if [ "$rc" -eq 130 ] && [ -n "$victim" ] && python3 - "$T/out2" <<'PY'
import re, sys
from outcheck import out, need
need(r"decision t=180s: resize j0 4 -> 8 GPUs on n1:2,n2:2,n3:4", "the grow decision")
saved = int(need(r"j0: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "j0 checkpoint").group(1))
m = need(r"j0: run 2 on n1 \(8 GPUs\) resumed at step (\d+)", "j0 resumed at 8 GPUs")
assert int(m.group(1)) == saved + 1, (m.group(0), saved)
need(r"j0: Slurm job \d+ running on n1:0\+1,n2:0\+1,n3:0\+1\+2\+3 \(the GPUs", "the heterogeneous job's GPUs")
need(r"j2: died unexpectedly at step \d+ \(slurm: CANCELLED[^)]*\)\): restarting", "the death, Slurm's reason")
need(r"j2: run 2 on n\d", "j2 resubmitted")
need(r"live run over after [\d.]+ s wall, \d+ s simulated \(interrupted\)", "interrupted")
for j in ("j0", "j2"):
    end = need(r"%s: end of the run: checkpoint and stop" % j, j + " stopped at the end")
    assert re.compile(r"%s: stopped at step \d+ \(epoch [\d.]+\), checkpoint written" % j).search(
        out, end.end()), j + " checkpointed at the end"
print("j0 grew to 8 GPUs over three nodes at step %d" % saved)
PY
then pass "a grow over nodes of different sizes, a death with Slurm's reason, Ctrl-C checkpoints all"
else fail "heterogeneous grow, death, Ctrl-C (exit $rc, victim '$victim')"; fi
if [ -z "$queue" ] && [ "$left" -eq 0 ]; then pass "no Slurm job and no job process left after Ctrl-C"
else fail "left after Ctrl-C: queue '$queue', $left processes"; fi

echo "an inventory with \"backend\": \"slurm\", another user's job on the grid"
python3 - "$T/inv.json" "$job" <<'PY'
import json, sys
json.dump({"name": "tdtest", "backend": "slurm", "partition": "t4", "job_command": sys.argv[2]},
          open(sys.argv[1], "w"))
PY
printf 'name,time,application,num_replicas,batch_size\nsolo,0,cifar10,1,128\n' > "$T/solo.csv"
other=$(other_job n2)
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 4 --status-every 1 --job-dir "$T/jobs3" \
    > "$T/out3" 2> "$T/err3"
rc=$?
scancel "$other"
settle
queue="$(squeue -h)"
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && python3 - "$T/out3" "$other" <<'PY'
import re, sys
out, other = open(sys.argv[1]).read(), sys.argv[2]
assert "slurm: 2 nodes from the controller" in out, "the t4 partition from the inventory"
assert re.search(r"solo: Slurm job \d+ running on n1:0\+1 \(the GPUs", out), "solo on n1"
m = re.search(r"other job %s \(root, other\) on n2:(\d)$" % other, out, re.M)
assert m, "the other user's job and its GPU"
assert re.search(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", out)
print("solo on n1:0+1 beside job %s on n2:%s" % (other, m.group(1)))
PY
then pass "an inventory that says \"backend\": \"slurm\"; other jobs are listed with their GPUs"
else fail "slurm inventory (exit $rc, queue '$queue')"; fi

echo "a controller that goes away"
# Time x1: no decision falls in this outage (the next section puts a start in one).
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 1 --duration 28 --status-every 0 --job-dir "$T/jobs4" \
    > "$T/out4" 2> "$T/err4" &
LIVE_PID=$!
wait_line "$T/out4" "solo: Slurm job [0-9]* running on" 100
slurm_ctld_stop
sleep 10
slurm_ctld_start
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && python3 - "$T/out4" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
a = out.find("the controller did not answer")
b = out.find("the controller answers again")
assert 0 <= a < b, "the outage and the return are said"
assert out.count("the controller did not answer") == 1, "said once"
assert re.search(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", out[b:]), \
    "checkpointed at the end, after the controller came back"
rounds = re.search(r"slurm: (\d+) controller calls \((\d+) scontrol rounds\)", out)
print("an outage said once, the job kept running; %s" % rounds.group(0))
PY
then pass "a controller that goes away: said once, rounds back off, the job is stopped with its checkpoint after"
else fail "controller outage (exit $rc, queue '$queue')"; fi

echo "a start inside an outage"
# slurmctld stops under a running job and comes back once the start of a second job (t=10 s)
# has met it: late's sbatch is not answered, the job waits for the controller, and is
# submitted when it answers again.
printf 'name,time,application,num_replicas,batch_size\nsolo,0,cifar10,1,128\nlate,8,cifar10,1,128\n' > "$T/late.csv"
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/late.csv" --policy doubling \
    --interval 10 --time-scale 1 --duration 40 --status-every 1 --job-dir "$T/jobs5" \
    > "$T/out5" 2> "$T/err5" &
LIVE_PID=$!
wait_line "$T/out5" "solo: Slurm job [0-9]* running on" 100
slurm_ctld_stop
wait_line "$T/out5" "late: no Slurm job yet waits for its allocation: the controller (sbatch is retried)" 350
sleep 1
slurm_ctld_start
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out5" <<'PY'
import re, sys
from outcheck import out, need
lost = need(r"slurm: the controller did not answer", "the outage said")
assert out.count("the controller did not answer") == 1, "said once"
need(r"decision t=10s: start late 0 -> \d GPUs", "the start decision")
started = need(r"late: started on \S+ with \d GPUs \(no Slurm job yet", "late's sbatch under way")
wait = need(r"late: no Slurm job yet waits for its allocation: the controller \(sbatch is retried\)",
            "late waits for the controller", lost.end())
# while the sbatch had no answer, the driver went on: status lines, solo's steps read
steps = [int(m.group(1)) for m in
         re.finditer(r"^\[ *[\d.]+s\]   solo .* real running \d GPUs step (\d+)",
                     out[started.end():wait.start()], re.M)]
assert len(steps) >= 3 and steps[-1] > steps[0], ("the driver waited on sbatch", steps)
back = need(r"slurm: the controller answers again", "the return said", lost.end())
after = max(wait.end(), back.end())
need(r"late: Slurm job \d+ running on n\d:", "late submitted and running after", after)
for j in ("solo", "late"):
    need(r"%s: stopped at step \d+ \(epoch [\d.]+\), checkpoint written" % j, j + " checkpointed",
         after)
rows = {l.split()[0]: l.split() for l in out.splitlines() if re.match(r"^(solo|late) ", l)}
assert rows["late"][-2:] == ["exited", "0"] and rows["late"][6] == "no", rows["late"]
print("late's sbatch retried: %s; %d status lines while it had no answer (solo's step %d -> %d)" %
      (need(r"late: Slurm job \d+ running on \S+", "").group(0), len(steps), steps[0], steps[-1]))
PY
then pass "a start inside an outage waits for the controller, is submitted when it answers, nothing left"
else fail "start inside an outage (exit $rc, queue '$queue', $left processes)"; fi

echo "a resize inside an outage"
# slurmctld stops once new runs, before the t=240 s shrink: its scancel --signal=TERM is not
# answered, new waits for the controller, and once it answers the TERM goes, new checkpoints
# and is resubmitted from its checkpoint.
"$bin" schedule --live --slurm --partition t4 --workload "$root/tests/fixtures/slurm-live-workload.csv" \
    --job-command "$job" --policy doubling --interval 60 --time-scale 30 --duration 38 \
    --status-every 1 --job-dir "$T/jobs6" > "$T/out6" 2> "$T/err6" &
LIVE_PID=$!
wait_line "$T/out6" "new: Slurm job [0-9]* running on" 200
slurm_ctld_stop
wait_line "$T/out6" "new: .* waits for its allocation: the controller (scancel is retried)" 350
sleep 1
slurm_ctld_start
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out6" <<'PY'
import re, sys
from outcheck import out, need
shrink = need(r"decision t=240s: resize new 2 -> 1 GPUs", "the shrink decision")
# said once, by whichever call meets the outage first (a round, or the TERM's scancel: the
# driver waits on neither)
lost = need(r"slurm: the controller did not answer", "the outage said")
assert out.count("the controller did not answer") == 1, "said once"
wait = need(r"new: Slurm job \d+ waits for its allocation: the controller \(scancel is retried\)",
            "new waits for the controller", lost.end())
back = need(r"slurm: the controller answers again", "the return said", wait.end())
lines = re.findall(r"^\[ *[\d.]+s\]   big ", out[shrink.end():wait.start()], re.M)
assert len(lines) >= 3, ("the driver waited on scancel", len(lines))
s = need(r"new: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "new checkpointed",
         back.end())
m = need(r"new: run 2 on n2 \(\d GPUs\) resumed at step (\d+)", "new resumed", s.end())
assert int(m.group(1)) == int(s.group(1)) + 1, (m.group(0), s.group(0))
rows = {l.split()[0]: l.split() for l in out.splitlines() if re.match(r"^(big|new) ", l)}
assert rows["new"][-2:] == ["exited", "0"] and rows["new"][6] == "no", rows["new"]
print("new's TERM retried after the outage: checkpoint at step %s, resumed at %s; %d status "
      "lines while it had no answer" % (s.group(1), m.group(1), len(lines)))
PY
then pass "a resize inside an outage: the TERM is retried, the job checkpoints and resumes, nothing left"
else fail "resize inside an outage (exit $rc, queue '$queue', $left processes)"; fi

echo "an sbatch whose answer is lost"
# A stand-in sbatch first on tunedeck's PATH hands the request to the real one, then keeps
# the answer past tunedeck's 30 s timeout: Slurm has the job, tunedeck no job id. The retry
# looks the submission up by its name (squeue) and adopts the job: one job, never two.
real_sbatch=$(command -v sbatch)
mkdir -p "$T/lost"
printf '#!/bin/sh\nid=$("%s" "$@") || exit $?\necho "$id" >> "%s/lost/ids"\nexec sleep 60\n' \
    "$real_sbatch" "$T" > "$T/lost/sbatch"
chmod +x "$T/lost/sbatch"
PATH="$T/lost:$PATH" "$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" \
    --policy doubling --interval 60 --time-scale 1 --duration 42 --status-every 0 \
    --job-dir "$T/jobs9" > "$T/out9" 2> "$T/err9"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out9" "$T/lost/ids" <<'PY'
import re, sys
from outcheck import out, need
ids = open(sys.argv[2]).read().split()
assert len(ids) == 1, ("one sbatch reached Slurm", ids)
lost = need(r"slurm: the controller did not answer \(sbatch: no answer within 30 s", "the timeout")
adopt = need(r"slurm: tunedeck-live-solo\.[0-9a-f]{6}-1's sbatch got no answer, but Slurm holds "
             r"its job: Slurm job (\d+) adopted, not submitted again", "the adoption", lost.end())
assert adopt.group(1) == ids[0].split(";")[0], (adopt.group(0), ids)
need(r"slurm: the controller answers again", "the look-up answered", lost.end())
need(r"solo: Slurm job %s running on n\d:" % adopt.group(1), "the adopted job followed", adopt.end())
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "checkpointed at the end",
     adopt.end())
print(adopt.group(0))
PY
then pass "an sbatch answered after the timeout: its job is found by name and adopted, never submitted twice, nothing left"
else fail "lost sbatch answer (exit $rc, queue '$queue', $left processes)"; fi

echo "an sbatch Slurm takes only after the look-up found none"
# The first stand-in sbatch hangs past the 30 s timeout and leaves, in a session of its own,
# the real sbatch waiting for the look-up: the stand-in squeue answers (nothing found), then
# lets it go and waits until Slurm has the job. The retry makes a second job under the same
# name; the next job round finds the one the run does not follow and cancels it, said once.
real_squeue=$(command -v squeue)
mkdir -p "$T/dbl"
cat > "$T/dbl/sbatch" <<STANDIN
#!/bin/sh
if [ ! -f "$T/dbl/first" ]; then
    : > "$T/dbl/first"
    setsid sh -c 'n=0; while [ ! -f "$T/dbl/looked" ] && [ \$n -lt 600 ]; do sleep 0.1; n=\$((n + 1)); done
        [ -f "$T/dbl/looked" ] && "$real_sbatch" "\$@" >> "$T/dbl/late-ids"; : > "$T/dbl/taken"' sbatch "\$@" < /dev/null > /dev/null 2>&1 &
    exec sleep 60
fi
id=\$("$real_sbatch" "\$@") || exit \$?
echo "\$id" >> "$T/dbl/ids"
echo "\$id"
STANDIN
cat > "$T/dbl/squeue" <<STANDIN
#!/bin/sh
"$real_squeue" "\$@"
rc=\$?
if [ ! -f "$T/dbl/looked" ]; then
    : > "$T/dbl/looked"
    n=0; while [ ! -f "$T/dbl/taken" ] && [ \$n -lt 100 ]; do sleep 0.1; n=\$((n + 1)); done
fi
exit \$rc
STANDIN
chmod +x "$T/dbl/sbatch" "$T/dbl/squeue"
PATH="$T/dbl:$PATH" "$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" \
    --policy doubling --interval 60 --time-scale 1 --duration 40 --status-every 0 \
    --job-dir "$T/jobs10" > "$T/out10" 2> "$T/err10"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] &&
   python3 - "$T/out10" "$T/dbl/late-ids" "$T/dbl/ids" <<'PY'
import re, sys
from outcheck import out, need
late = open(sys.argv[2]).read().split()
ids = open(sys.argv[3]).read().split()
assert len(late) == 1 and len(ids) == 1, ("two jobs reached Slurm", late, ids)
late, kept = late[0].split(";")[0], ids[0].split(";")[0]
lost = need(r"slurm: the controller did not answer \(sbatch: no answer within 30 s", "the timeout")
need(r"solo: Slurm job %s running on n\d:" % kept, "the retry's job followed", lost.end())
dbl = need(r"slurm: tunedeck-live-solo\.[0-9a-f]{6}-1 has a second job, Slurm job %s \(its sbatch "
           r"got no answer, the look-up by name found none, and Slurm took it after all\): "
           r"cancelled; Slurm job %s is the run's" % (late, kept), "the double cancelled", lost.end())
assert len(re.findall("has a second job", out)) == 1, "said once"
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "checkpointed at the end",
     dbl.end())
print(dbl.group(0))
PY
then pass "an sbatch Slurm took after its look-up found none: the second job is cancelled, said once, nothing left"
else fail "a second job for one submission (exit $rc, queue '$queue', $left processes)"; fi

echo "a node drained in Slurm under a running job"
# solo runs on n1 (t4 partition: n1, n2 with 2 GPUs; fixed-2 keeps it at 2 GPUs, so only the
# drain moves it); the operator drains n1 in Slurm. The node round (every 10 s) sees it, the
# model drains n1, the next decision moves solo: its TERM checkpoints it, it is resubmitted
# on n2 from that checkpoint, and nothing of ours is left on n1. Resumed in Slurm, n1 is
# usable again.
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy fixed-2 \
    --interval 30 --time-scale 10 --duration 45 --status-every 0 --job-dir "$T/jobs7" \
    > "$T/out7" 2> "$T/err7" &
LIVE_PID=$!
wait_line "$T/out7" "solo: Slurm job [0-9]* running on n1:" 150
wait_line "$T/out7" "solo: run 1 on n1 .* first step" 100
scontrol update NodeName=n1 State=DRAIN Reason="tdtest drain"
wait_line "$T/out7" "solo: Slurm job [0-9]* running on n2:" 250
sleep 1
on_n1="$(squeue -h -w n1 -o %j | grep '^tunedeck-live-solo[.]')"
scontrol update NodeName=n1 State=RESUME
wait_line "$T/out7" "n1 is usable again" 150
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && [ -z "$on_n1" ] && python3 - "$T/out7" <<'PY'
import re, sys
from outcheck import out, need
d = need(r"^\[.*\] n1 is drain\w* in Slurm \(reason: tdtest drain\): its runs move$",
         "the drain read back and said")
assert out.count("n1 is drain") == 1, "said once"
mv = need(r"decision t=\d+s: resize solo 2 -> 2 GPUs on n2:2", "solo moved off n1", d.end())
s = need(r"solo: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "solo checkpointed",
         mv.end())
m = need(r"solo: run 2 on n2 \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "solo resumed on n2", s.end())
assert int(m.group(1)) == int(s.group(1)) + 1 == int(m.group(2)) + 1, (m.group(0), s.group(0))
need(r"solo: Slurm job \d+ running on n2:0\+1 \(the GPUs", "solo granted n2's GPUs", m.end())
need(r"n1 is usable again \(\w+ in Slurm\)", "the resume read back", m.end())
print("n1 drained in Slurm: solo checkpointed at step %s, resumed on n2 at %s" %
      (s.group(1), m.group(1)))
PY
then pass "a node drained in Slurm: its run checkpoints and resumes elsewhere, nothing left there; usable again after"
else fail "drain in Slurm (exit $rc, queue '$queue', $left processes, on n1 '$on_n1')"; fi
scontrol update NodeName=n1 State=RESUME 2> /dev/null

echo "a node added to the partition, then taken out of it"
# Three jobs of 2 GPUs (fixed-2) on partition t4 (n1, n2: 2 GPUs each): a and b run, c waits.
# The operator adds n3 (4 v100 GPUs) to t4: the node round (the whole partition, every
# 10 s) finds it, the model adds it, said once, and the next decision starts c there. Taken
# out of t4 again, n3 is drained in the model: c checkpoints and waits.
printf 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\nb,0,cifar10,1,128\nc,0,cifar10,1,128\n' \
    > "$T/three.csv"
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/three.csv" --policy fixed-2 \
    --interval 30 --time-scale 10 --duration 45 --status-every 0 --job-dir "$T/jobs9" \
    > "$T/out9" 2> "$T/err9" &
LIVE_PID=$!
wait_line "$T/out9" "b: Slurm job [0-9]* running on" 150
scontrol update PartitionName=t4 Nodes=n[1-3]
wait_line "$T/out9" "c: run 1 on n3 .* first step" 300
scontrol update PartitionName=t4 Nodes=n[1-2]
wait_line "$T/out9" "c: stopped at step" 300
live_ended
scontrol update PartitionName=t4 Nodes=n[1-2] 2> /dev/null
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out9" <<'PY'
import re, sys
from outcheck import out, need
need(r"decision t=0s: start a 0 -> 2 GPUs on n\d:2", "a placed on t4")
need(r"decision t=0s: start b 0 -> 2 GPUs on n\d:2", "b placed on t4")
assert not re.search(r"decision t=0s: start c", out), "c waits: t4 is full"
j = need(r"^\[.*\] n3 joined \(4 v100 GPUs, idle in Slurm\): the scheduler may place there$",
         "n3 read from the partition and added once")
assert out.count("n3 joined") == 1, "said once"
d = need(r"decision t=\d+s: start c 0 -> 2 GPUs on n3:2", "c placed on n3", j.end())
need(r"c: Slurm job \d+ running on n3:\d\+\d \(the GPUs", "c runs on n3 in Slurm", d.end())
g = need(r"n3 is no longer in partition t4 \(sinfo\): its runs move", "n3 taken out", d.end())
need(r"c: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "c checkpointed", g.end())
assert not re.search(r"start c .* on n3", out[g.end():]), "nothing placed on n3 after"
print("n3 joined t4: c started there; taken out: c checkpointed")
PY
then pass "a node added to the partition is used; taken out of it, its run checkpoints"
else fail "node added to the partition (exit $rc, queue '$queue', $left processes)"; fi

echo "another user's job holds a GPU: ours goes elsewhere"
# other holds one of n1's two GPUs: without the hold the model would place solo's 2 GPUs on
# n1, where Slurm would leave it pending (Resources); the scheduler sees 1 free there and
# places it on n2.
# A batch job an earlier live run left (tunedeck killed with SIGKILL) runs beside it: said
# once with the scancel that ends it, and left alone.
other=$(other_job n1)
stale=$(sbatch --parsable -J tunedeck-live-stale -o /dev/null --wrap 'sleep 120')
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 5 --status-every 0 --job-dir "$T/jobs8" \
    > "$T/out8" 2> "$T/err8"
rc=$?
stale_left="$(squeue -h -j "$stale" -o %T)"
scancel "$other" "$stale"
settle
if [ "$stale_left" = RUNNING ] && [ "$(grep -c "earlier live run" "$T/out8")" -eq 1 ] &&
    grep -q "1 batch job of an earlier live run (tunedeck-live-\*) is still in Slurm: left alone, another tunedeck may own it; \`scancel $stale\` ends it" "$T/out8"
then pass "an earlier run's batch job is said once, with its scancel, and left running"
else fail "leftover batch job (state '$stale_left'): $(grep "earlier" "$T/out8")"; fi
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out8" <<'PY'
import re, sys
from outcheck import out, need
h = need(r"n1: 1 of its 2 GPUs are held by other users' jobs", "the hold read and said")
d = need(r"decision t=0s: start solo 0 -> 2 GPUs on n2:2", "solo placed on n2", h.end())
need(r"solo: Slurm job \d+ running on n2:0\+1 \(the GPUs", "solo runs on n2", d.end())
assert "waits for its allocation" not in out, "solo never pends"
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "solo checkpointed")
print("n1 half held by job %s: solo started on n2:0+1" % "other")
PY
then pass "GPUs another user's job holds are out of the scheduler's capacity: the run goes where it can start"
else fail "foreign hold (exit $rc, queue '$queue', $left processes)"; fi

# pending_section N PARTITION GRES: section 11 (N 11) or 12 (N 12) with theirs submitted
# as `-p PARTITION --gres=GRES`; its output in T/outN.
pending_section() {
    printf 'name,time,application,num_replicas,batch_size\nnew,120,cifar10,2,256\nthird,200,ncf,1,32768\n' > "$T/pend.csv"
    blocker=$(sbatch --parsable -p t4 -w n1 --gres=gpu:2 -J blocker -o /dev/null --wrap 'sleep 120')
    n=0
    while [ $n -lt 50 ] && ! squeue -h -t R -j "$blocker" | grep -q .; do sleep 0.1; n=$((n + 1)); done
    : > "$T/out$1" # emptied before the run starts: wait_line must not read an older one
    "$bin" schedule --live --slurm --partition t4 --workload "$T/pend.csv" --job-command "$job" \
        --policy doubling --interval 60 --time-scale 30 --duration 15 --status-every 0 \
        --job-dir "$T/jobs$1" > "$T/out$1" 2> "$T/err$1" &
    LIVE_PID=$!
    # third runs at t=240 s: 8 s of wall time at x30, 16 s at x15, later under load. theirs goes
    # in only once it runs: submitted while new still held n2's two GPUs (the wait cut short at
    # 15 s, x15), it was older than the shrink's resubmissions and Slurm started it on the
    # emptied n2 (a shrink resubmits too), or it pended before the shrink and nothing was idle
    # to hold back.
    wait_line "$T/out$1" "third: Slurm job .* running" 400
    theirs="" theirs_state="third never ran"
    if grep -q "third: Slurm job .* running" "$T/out$1"; then
        theirs=$(sbatch --parsable --uid=nobody --chdir=/ -p "$2" -N1 --gres="$3" -J theirs -o /dev/null --wrap 'sleep 120')
        theirs_state="$(sleep 1; squeue -h -j "$theirs" -o %T)"
    fi
    # What Slurm says of theirs while the run goes (its reason, its planned nodes): on failure.
    (while [ -n "$theirs" ] && kill -0 "$LIVE_PID" 2> /dev/null; do
        echo "$(date +%T.%N | cut -c1-12) $(scontrol show job "$theirs" 2> /dev/null |
            grep -oE '(JobState|Reason|SchedNodeList|ReqNodeList|ExcNodeList|TresPerNode)=[^ ]*' |
            tr '\n' ' ')"
        sleep 0.5
    done > "$T/theirs$1") &
    watch_pid=$!
    wait "$LIVE_PID"
    rc=$?
    LIVE_PID=""
    wait "$watch_pid"
    scancel "$blocker" $theirs
    settle
    queue="$(squeue -h)"
    left=$(pgrep -f "ckpt-$mark" | wc -l)
    if [ "$rc" -eq 0 ] && [ "$theirs_state" = PENDING ] && [ -z "$queue" ] &&
        [ "$left" -eq 0 ] && python3 - "$T/out$1" <<'PY2'
import re, sys
from outcheck import out, need
t = need(r"third: Slurm job \d+ running on n2", "third runs beside new on n2")
need(r"decision t=3\d\ds: finish third", "third finishes", t.end())
assert not re.search(r"resize new 1 -> 2", out), "new grew into the pending job's GPU"
assert not re.search(r"new: .* waits for its allocation", out[t.end():]), "new waited in the queue"
kept = re.findall(r"other users' pending jobs hold back .*", out)
assert kept == ["other users' pending jobs hold back 1 idle GPU on 1 node (n2:1): Slurm "
                "would start them before a resized job of ours, so the scheduler does not "
                "grow into them"], kept
print("n2's freed GPU held back for the pending job; new kept 1 GPU and never waited")
PY2
    then pass "$4"
    else fail "$5 (exit $rc, theirs '$theirs_state', queue '$queue', $left processes): $(cat "$T/theirs$1")"; fi
}

echo "another user's pending job: no growth into a wait"
# The t4 partition with a job not ours holding n1's two GPUs; slurm-live-workload.csv without
# big: new runs on n2 (2 GPUs), shrinks to 1 beside third at t=240 s. Once both run,
# a job of another user (nobody: submitted by root with --uid; it only ever pends here,
# nobody cannot read the harness's spool) asks for 2 GPUs on one node: only n2 has room, it pends (Resources).
# When third finishes, n2's freed GPU is one that job takes first: were new grown 1 -> 2
# at t=360 s (checkpoint, end, resubmit), Slurm would start the older pending job on n2 and
# leave new waiting. The GPU is held back (said once) and new keeps its one.
pending_section 11 t4 gpu:2 \
    "another user's pending job keeps the GPU it takes first out of growth: no resize into a wait" \
    "pending job of another user"

echo "another user's pending job in an overlapping partition"
# The same with theirs in partition debug (n[1-4]), asking for t4 GPUs (only n1, n2 have
# them): not in our partition t4, no plan (no time limits) and no -w, so only debug's node
# list (sinfo -a -h -o '%R|%N', read because such a job is pending) says it may take n2's GPUs.
pending_section 12 debug gpu:t4:2 \
    "a pending job of a partition sharing our nodes keeps its GPU out of growth too" \
    "pending job of another user in partition debug"

echo "refusals"
"$bin" schedule --live --slurm --login login1 --workload "$root/tests/fixtures/slurm-live-workload.csv" \
    --job-command "$job" > "$T/b1" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q "run tunedeck on the login node login1" "$T/b1"; then
    pass "a login node is refused with advice (exit $rc)"
else fail "--login: exit $rc: $(cat "$T/b1")"; fi
"$bin" schedule --live --slurm --workload "$root/tests/fixtures/slurm-live-workload.csv" \
    --job-command "train --gpus {gpus} --devices {gpu_ids}" > "$T/b2" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q "CUDA_VISIBLE_DEVICES, which Slurm sets" "$T/b2"; then
    pass "{gpu_ids} is refused: Slurm picks the GPUs (exit $rc)"
else fail "{gpu_ids}: exit $rc: $(cat "$T/b2")"; fi
"$bin" schedule --live --slurm --workload "$root/tests/fixtures/slurm-live-workload.csv" > "$T/b3" 2>&1
rc=$?
if [ "$rc" -eq 3 ] && grep -q "job_command" "$T/b3"; then pass "no job command: refused (exit $rc)"
else fail "no job command: exit $rc: $(cat "$T/b3")"; fi

if [ "$fails" -ne 0 ]; then
    echo "slurm_live: $fails failed"
    for f in "$T"/out[1-9] "$T"/out1[0-9] "$T"/err[1-9] "$T"/err1[0-9]; do [ -s "$f" ] && { echo "--- $f"; tail -c 5000 "$f"; }; done
    exit 1
fi
echo "slurm_live: all passed"
