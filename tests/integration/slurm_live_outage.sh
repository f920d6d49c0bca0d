#!/bin/sh
# The live scheduler on Slurm while slurmctld goes away (its siblings: slurm_live.sh,
# slurm_live_jobs.sh), against the private Slurm 22.05 of tests/slurm-harness.sh, with
# tunedeck-worker in job mode as the job command. The harness's slurm.conf says
# MessageTimeout=5 here: a Slurm command gives up on a controller that is away after ~4 s
# (sbatch, the rounds' scontrol; scancel after ~8 s) instead of ~9 s (~18 s) at the default
# 10, so each outage is met and said sooner and the runs can be shorter.
#
# 1. slurmctld stopped for 10 s under a running job: said once, the rounds back off, the
#    job runs on and is checkpointed at the end.
# 2. slurmctld stopped across a start: the sbatch is retried when it answers again; the
#    driver does not wait on it (the status lines and the other job's steps go on).
# 3. slurmctld stopped across a shrink: the scancel --signal=TERM is retried, the job
#    checkpoints and is resubmitted from its checkpoint; the driver does not wait on it.
# After each run: no Slurm job (squeue) and no job process left. The trap stops every
# daemon and job it started.
set -u
suite=slurm_live_outage scratch=slurm-live-outage suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurmlive.sh"
slurmlive_start MessageTimeout=5
live_inventory

echo "a controller that goes away"
# Time x1: no decision falls in this outage (the next section puts a start in one).
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 1 --duration 24 --status-every 0 --job-dir "$T/jobs1" \
    > "$T/out1" 2> "$T/err1" &
LIVE_PID=$!
wait_line "$T/out1" "solo: Slurm job [0-9]* running on" 100
slurm_ctld_stop
sleep 10
slurm_ctld_start
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && python3 - "$T/out1" <<'PY'
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
    --interval 10 --time-scale 1 --duration 32 --status-every 0.5 --job-dir "$T/jobs2" \
    > "$T/out2" 2> "$T/err2" &
LIVE_PID=$!
wait_line "$T/out2" "solo: Slurm job [0-9]* running on" 100
slurm_ctld_stop
wait_line "$T/out2" "late: no Slurm job yet waits for its allocation: the controller (sbatch is retried)" 350
sleep 1
slurm_ctld_start
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out2" <<'PY'
import re, sys
from outcheck import out, need
lost = need(r"slurm: the controller did not answer", "the outage said")
assert out.count("the controller did not answer") == 1, "said once"
need(r"decision t=10s: start late 0 -> \d GPUs?", "the start decision")
started = need(r"late: started on \S+ with \d GPUs? \(no Slurm job yet", "late's sbatch under way")
wait = need(r"late: no Slurm job yet waits for its allocation: the controller \(sbatch is retried\)",
            "late waits for the controller", lost.end())
# while the sbatch had no answer, the driver went on: status lines, solo's steps read
steps = [int(m.group(1)) for m in
         re.finditer(r"^\[ *[\d.]+s\]   solo .* real running \d GPUs? step (\d+)",
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
    --job-command "$job" --policy doubling --interval 60 --time-scale 30 --duration 34 \
    --status-every 1 --job-dir "$T/jobs3" > "$T/out3" 2> "$T/err3" &
LIVE_PID=$!
wait_line "$T/out3" "new: Slurm job [0-9]* running on" 200
slurm_ctld_stop
wait_line "$T/out3" "new: .* waits for its allocation: the controller (scancel is retried)" 350
sleep 1
slurm_ctld_start
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out3" "$T/jobs3" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
shrink = need(r"decision t=240s: resize new 2 -> 1 GPU", "the shrink decision")
# said once, by whichever call meets the outage first (a round, or the TERM's scancel: the
# driver waits on neither)
lost = need(r"slurm: the controller did not answer", "the outage said")
assert out.count("the controller did not answer") == 1, "said once"
wait = need(r"new: Slurm job \d+ waits for its allocation: the controller \(scancel is retried\)",
            "new waits for the controller", lost.end())
back = need(r"slurm: the controller answers again", "the return said", wait.end())
lines = re.findall(r"^\[ *[\d.]+s\]   big ", out[shrink.end():wait.start()], re.M)
assert len(lines) >= 3, ("the driver waited on scancel", len(lines))
# the TERM's retry may get through before the next round says the controller is back: the
# checkpoint comes after the failed scancel, not necessarily after that line
s = need(r"new: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "new checkpointed",
         wait.end())
m = need(r"new: run 2 on n2 \(\d GPUs?\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "new resumed", s.end())
resumed(m, int(s.group(1)), sys.argv[2], "new")
rows = {l.split()[0]: l.split() for l in out.splitlines() if re.match(r"^(big|new) ", l)}
assert rows["new"][-2:] == ["exited", "0"] and rows["new"][6] == "no", rows["new"]
print("new's TERM retried after the outage: checkpoint at step %s, resumed at %s; %d status "
      "lines while it had no answer" % (s.group(1), m.group(1), len(lines)))
PY
then pass "a resize inside an outage: the TERM is retried, the job checkpoints and resumes, nothing left"
else fail "resize inside an outage (exit $rc, queue '$queue', $left processes)"; fi

slurmlive_done
