#!/bin/sh
# The live scheduler on Slurm when a submission is over one of the cluster's limits (its
# siblings: slurm_live.sh, slurm_live_jobs.sh, slurm_live_outage.sh), against the private
# Slurm 22.05 of tests/slurm-harness.sh with EnforcePartLimits=ALL and partition t4 (n1, n2:
# gpu:t4:2) limited to one node a job (scontrol update MaxNodes=1), tunedeck-worker in job
# mode as the job command.
#
# 1. A grow Slurm refuses for its size: doubling grows solo 2 -> 4 GPUs (two nodes), sbatch
#    answers "Node count specification invalid"; the job goes on at 2 GPUs from its
#    checkpoint, its ceiling (2 GPUs: what one node holds, the limit counting nodes) is said,
#    journaled in --events and shown on the status lines, no later decision asks for more,
#    and its progress goes on.
# 1b. A first start over the node limit (fixed-4: 4 GPUs on two nodes) is refused once: the
#    ceiling of one node fewer (2 GPUs) runs, where one GPU fewer (3, still two nodes) was
#    refused a second time.
# 1c. The operator raises MaxNodes while a ceiling holds (ceiling_retry_s 3 in the inventory):
#    once lifted, doubling grows the job to 4 GPUs on both nodes.
# 2. A submission turned away by a count of jobs (job_submit/throttle's jobs_per_user_per_hour,
#    the one count limit that needs no slurmdbd): the job waits 10 s and, the limit lifted,
#    runs, never failed.
# 3. The grow of 1 without EnforcePartLimits: Slurm takes the job and holds it pending
#    (PartitionNodeLimit); tunedeck cancels it and goes on as for a refusal.
# After each run: no Slurm job (squeue) and no job process left. The trap stops every daemon
# and job it started.
set -u
suite=slurm_live_limits scratch=slurm-live-limits suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurmlive.sh"
slurmlive_start EnforcePartLimits=ALL
scontrol update PartitionName=t4 MaxNodes=1 || { echo "$suite: MaxNodes=1 not set" >&2; exit 1; }
live_inventory

echo "a grow refused for its size"
# x30: the resize 2 -> 4 at t=120 s comes 4 s in; the decisions of the 12 s after it would
# try the grow again (the old code failed the job at the first refusal).
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 16 --status-every 1 --job-dir "$T/jobs1" \
    --events "$T/events1" > "$T/out1" 2> "$T/err1"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out1" "$T/events1" "$T/jobs1" <<'PY'
import json, re, sys
from outcheck import out, need
from slurmlive import resumed
grow = need(r"decision t=120s: resize solo 2 -> 4 GPUs on n1:2,n2:2", "the grow decision")
stop = need(r"solo: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "checkpointed",
            grow.end())
said = need(r"solo: the cluster refused it at 4 GPUs \(sbatch exited with status 1: sbatch: error: "
            r"Batch job submission failed: Node count specification invalid\): its ceiling is now "
            r"2 GPUs \(what 1 node holds: the limit counts nodes\), which no decision goes past "
            r"for 300 s \(then it may be tried larger again\); it goes on at the 2 GPUs it had, "
            r"from its checkpoint$", "the refusal and the ceiling, in Slurm's words", stop.end())
need(r"solo: under its ceiling of 2 GPUs: resize 4 -> 2 GPUs on n1:2$", "the fall back",
     said.end())
m = need(r"solo: run 2 on n1 \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "resumed at its size", said.end())
resumed(m, int(stop.group(1)), sys.argv[3], "solo")
# the poller's running line and the rank's first line race: either may come first
run = need(r"solo: Slurm job \d+ running on n1:0\+1", "running again", said.end())
after = max(run.end(), m.end())
assert out.count("refused it at") == 1, "the grow was tried again"
assert not re.search(r"decision t=\d+s: resize solo 2 -> 4", out[said.end():]), "grew again"
assert "left failed" not in out and "died" not in out, "failed or died"
steps = [int(s) for s in re.findall(
    r"^\[ *[\d.]+s\]   solo .* real running 2 GPUs \(ceiling 2 GPUs on 1 node, retry in "
    r"\d+(?:s|m\d\ds)\) step (\d+)", out[after:],
    re.M)]
assert len(steps) >= 4 and steps[-1] > steps[0] > int(m.group(1)), ("progress goes on", steps)
end = need(r"solo: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "the end",
           after)
assert int(end.group(1)) > steps[-1] - 1, (end.group(0), steps)
rows = [l.split() for l in out.splitlines() if l.startswith("solo ")]
assert rows and rows[-1][6] == "no" and rows[-1][-2:] == ["exited", "0"], rows
ev = [json.loads(l) for l in open(sys.argv[2])]
back = [e for e in ev if e.get("event") == "resize" and e.get("ceiling_gpus") == 2]
assert len(back) == 1 and back[0]["gpus_from"] == 4 and back[0]["gpus"] == 2, back
assert back[0]["placement"] == [{"host": "n1", "gpus": 2}], back
assert not [e for e in ev if e.get("event") in ("start", "resize") and e["gpus"] > 2
            and e["time_s"] > back[0]["time_s"]], "a decision over the ceiling"
prog = [e for e in ev if e.get("event") == "progress" and e.get("ceiling_gpus") == 2]
assert prog and prog[-1]["step"] > prog[0]["step"], prog
print("%s; resumed at %s; steps %d -> %d under it, checkpoint at %s at the end" %
      (said.group(0)[:60] + "...", m.group(1), steps[0], steps[-1], end.group(1)))
PY
then pass "a grow Slurm refuses for its size: the job goes on at its size from its checkpoint under a ceiling, never grown again, journaled, nothing left"
else fail "grow refused (exit $rc, queue '$queue', $left processes)"; fi

echo "a first start over a node limit costs one refusal"
# fixed-4 asks 4 GPUs, two nodes, from the start: refused, the ceiling is what one node holds
# (2 GPUs) and the next decision (2 s later at x30) starts it there. One GPU fewer (3) would
# still need two nodes: a second refusal (the old ceiling's).
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy fixed-4 \
    --interval 60 --time-scale 30 --duration 9 --status-every 0 --job-dir "$T/jobs1b" \
    > "$T/out1b" 2> "$T/err1b"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out1b" <<'PY'
from outcheck import out, need
said = need(r"solo: the cluster refused it at 4 GPUs \(sbatch exited with status 1: .*Node count "
            r"specification invalid\): its ceiling is now 2 GPUs \(what 1 node holds: the limit "
            r"counts nodes\), which no decision goes past for 300 s \(then it may be tried larger "
            r"again\); the next decision places it within it$", "the node ceiling")
need(r"solo: Slurm job \d+ running on n[12]:0\+1", "running at 2 GPUs", said.end())
assert out.count("refused it at") == 1, "refused again (at 3 GPUs?)"
assert "left failed" not in out and "died" not in out, "failed or died"
print(said.group(0)[:90] + "...")
PY
then pass "a first start over a partition's MaxNodes: one refusal, then it runs at what one node fewer holds"
else fail "node ceiling (exit $rc, queue '$queue', $left processes)"; fi

echo "a ceiling lifted after its back-off once the operator raised the limit"
# ceiling_retry_s 3: the grow refused at ~4 s holds 3 s; MaxNodes is raised meanwhile, and the
# first decision after the lift grows solo to both nodes.
quick_inventory retry '{"ceiling_retry_s": 3}'
"$bin" schedule --live --cluster "$T/retry.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 17 --status-every 0 --job-dir "$T/jobs1c" \
    > "$T/out1c" 2> "$T/err1c" &
LIVE_PID=$!
wait_line "$T/out1c" "its ceiling is now 2 GPUs" 150
scontrol update PartitionName=t4 MaxNodes=2
live_ended
scontrol update PartitionName=t4 MaxNodes=1 || { echo "$suite: MaxNodes=1 not set again" >&2; exit 1; }
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out1c" <<'PY'
from outcheck import out, need
said = need(r"^\[ *([\d.]+)s\] solo: the cluster refused it at 4 GPUs .*its ceiling is now 2 GPUs "
            r".*which no decision goes past for 3 s", "the ceiling, for 3 s")
lift = need(r"^\[ *([\d.]+)s\] solo: its ceiling of 2 GPUs is lifted \(3 s passed\): decisions may "
            r"give it more again, as the cluster's limit may have been raised \(a refusal sets it "
            r"again, for 6 s\)$", "lifted", said.end())
assert float(lift.group(1)) - float(said.group(1)) >= 3, (said.group(0), lift.group(0))
need(r"decision t=\d+s: resize solo 2 -> 4 GPUs on n1:2,n2:2$", "grown again", lift.end())
run = need(r"solo: Slurm job \d+ running on n1:0\+1,n2:0\+1", "running on both nodes", lift.end())
assert out.count("refused it at") == 1, "refused again"
assert "left failed" not in out and "died" not in out, "failed or died"
print(lift.group(0)[:90] + "...")
PY
then pass "a ceiling is lifted after its back-off: with MaxNodes raised meanwhile the job grows to both nodes, nothing left"
else fail "ceiling lifted (exit $rc, queue '$queue', $left processes)"; fi

echo "a submission turned away by a count of jobs"
# job_submit/throttle (SchedulerParameters jobs_per_user_per_hour=1), loaded by scontrol
# reconfigure, counts the hour's submissions from then on: one filler job takes the hour's one,
# so solo's first sbatch is turned away with the plugin's words and slurmctld's "Job violates
# accounting/QOS policy". Once tunedeck has said when it tries again, the plugin is taken out
# (reconfigure: a count that clears, as other jobs end or the hour passes), and the retry 10 s
# after the refusal runs the job. Real words, no stand-in: the QOS count limits need slurmdbd.
sed -i 's/^SchedulerParameters=bf_interval=1$/SchedulerParameters=bf_interval=1,jobs_per_user_per_hour=1/' "$SLURM_CONF"
echo "JobSubmitPlugins=throttle" >> "$SLURM_CONF"
scontrol reconfigure || { echo "$suite: throttle not loaded" >&2; exit 1; }
printf '#!/bin/sh\ntrue\n' > "$T/filler.sh"
sbatch --parsable --partition=debug --nodelist=n3 --output=/dev/null "$T/filler.sh" > /dev/null ||
    { echo "$suite: the filler job was refused" >&2; exit 1; }
settle
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 1 --duration 18 --status-every 0 --job-dir "$T/jobs2" \
    > "$T/out2" 2> "$T/err2" &
LIVE_PID=$!
wait_line "$T/out2" "tried again in 10 s" 100
sed -i '/^JobSubmitPlugins=throttle$/d' "$SLURM_CONF"
scontrol reconfigure
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out2" <<'PY'
from outcheck import out, need
said = need(r"^\[ *([\d.]+)s\] solo: could not start on n1: sbatch exited with status 1: sbatch: "
            r"error: Reached jobs per hour limit; sbatch: error: Batch job submission failed: Job "
            r"violates accounting/QOS policy \(job submit limit, user's size and/or time limits\): "
            r"a limit on how many jobs the cluster takes, which clears as other jobs end: tried "
            r"again in 10 s$", "the count of jobs, waited out, in Slurm's words")
run = need(r"^\[ *([\d.]+)s\] solo: Slurm job \d+ running on n1:", "it runs after", said.end())
assert float(run.group(1)) - float(said.group(1)) >= 10, (said.group(0), run.group(0))
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "checkpointed at the end",
     run.end())
assert out.count("could not start") == 1, "tried again before its back-off"
assert "left failed" not in out and "died" not in out and "ceiling" not in out, \
    "failed, died or capped"
print(said.group(0)[:100] + "...")
PY
then pass "a count of jobs turns a submission away (job_submit/throttle): the job waits 10 s and runs, never failed, nothing left"
else fail "count of jobs (exit $rc, queue '$queue', $left processes)"; fi

echo "a grow Slurm takes but holds pending on its partition's limit"
# Without EnforcePartLimits slurmctld takes the grown job and leaves it pending for ever
# (PartitionNodeLimit): tunedeck cancels it and goes on as for a refusal. (reconfigure reads
# t4 from slurm.conf again: its MaxNodes is set anew.)
sed -i '/^EnforcePartLimits=ALL$/d' "$SLURM_CONF"
scontrol reconfigure && scontrol update PartitionName=t4 MaxNodes=1 ||
    { echo "$suite: EnforcePartLimits not lifted" >&2; exit 1; }
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 14 --status-every 1 --job-dir "$T/jobs3" \
    > "$T/out3" 2> "$T/err3"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out3" "$T/jobs3" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
grow = need(r"decision t=120s: resize solo 2 -> 4 GPUs on n1:2,n2:2", "the grow decision")
stop = need(r"solo: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "checkpointed",
            grow.end())
held = need(r"solo: Slurm job (\d+) waits on PartitionNodeLimit, a limit on its size: cancelled$",
            "the pending job cancelled", stop.end())
said = need(r"solo: the cluster refused it at 4 GPUs \(Slurm job %s waits on PartitionNodeLimit, a "
            r"limit on its size\): its ceiling is now 2 GPUs \(what 1 node holds: the limit counts "
            r"nodes\), which no decision goes past for 300 s \(then it may be tried larger "
            r"again\); it goes on at the 2 GPUs it had, from its checkpoint$" % held.group(1),
            "the ceiling", held.end())
m = need(r"solo: run 2 on n1 \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "resumed at its size", said.end())
resumed(m, int(stop.group(1)), sys.argv[2], "solo")
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "the end", m.end())
assert out.count("a limit on its size: cancelled") == 1, "the grow was tried again"
assert "left failed" not in out and "died" not in out, "failed or died"
print(held.group(0))
PY
then pass "a grow held pending on its partition's limit (no EnforcePartLimits) is cancelled: the job goes on at its size under a ceiling, nothing left"
else fail "grow held pending (exit $rc, queue '$queue', $left processes)"; fi

slurmlive_done
