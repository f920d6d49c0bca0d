#!/bin/sh
# The live scheduler on Slurm when Slurm preempts its jobs (its siblings: slurm_live.sh,
# slurm_live_jobs.sh, slurm_live_outage.sh), against the private Slurm 22.05 of
# tests/slurm-harness.sh with preemption by partition: PreemptType=preempt/partition_prio,
# PreemptMode=SUSPEND,GANG (GANG: the suspending; partition t4 set to REQUEUE, then CANCEL,
# then SUSPEND), and a partition urgent over t4's nodes (n1, n2: gpu:t4:2 each, 4 CPUs) with a
# higher PriorityTier. (preempt/qos needs QOS records, which only slurmdbd keeps: without it,
# as here, sbatch takes any --qos unchecked and preempt/qos preempts nothing; docs/slurm.md.)
# tunedeck-worker in job mode is the job command (it checkpoints on SIGTERM, which Slurm sends
# first when it preempts, KillWait=5 s before the KILL).
#
# 1. REQUEUE: a job in urgent on solo's node preempts it; Slurm requeues solo's job (pending
#    again, Restarts=1): said once, not a death; its GPUs leave the model at once, the
#    requeued copy is cancelled, and the next decision starts solo on the other node,
#    resuming from the checkpoint the preemption's TERM wrote. The run's end does not wait
#    exit_grace_s: the exit line in the job's output file is the preempted instance's, the
#    run's own (the copy never runs the job command nor writes one).
# 2. CANCEL (t4's PreemptMode set to CANCEL): solo is preempted twice (PREEMPTED), once on
#    each node; with both held it waits queued, and when the first preemptor ends it starts
#    a third time from its checkpoint: two preemptions are no "second death".
# 3. SUSPEND (t4's PreemptMode set to SUSPEND): a CPU-only job of urgent that needs all four
#    CPUs of solo's node makes Slurm suspend solo's job (a GPU job would wait instead: Slurm
#    frees a suspended job's CPUs, not its GPUs); it ends 8 s later and Slurm resumes solo.
#    Said once with its end, no death, no preemption, no restart; the status lines show it
#    suspended, and the model's progress for it stands still while it is, then moves again.
#    Suspended a second time (5 s), the run is ended (Ctrl-C): its stop waits for the resume,
#    then the job checkpoints as usual.
# After each run: no Slurm job of ours (squeue) and no job process left. The trap stops every
# daemon and job it started.
set -u
suite=slurm_live_preempt scratch=slurm-live-preempt suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurmlive.sh"
slurmlive_start "PreemptType=preempt/partition_prio" "PreemptMode=SUSPEND,GANG" \
    "PartitionName=urgent Nodes=n[1-2] MaxTime=INFINITE State=UP PriorityTier=10"
scontrol update PartitionName=t4 PreemptMode=REQUEUE
printf 'name,time,application,num_replicas,batch_size\nsolo,0,cifar10,1,128\n' > "$T/solo.csv"

# preemptor NODE: a job of partition urgent on both GPUs of NODE for two minutes (not
# waited for: it starts once Slurm has preempted what holds them); prints its id.
preemptor() {
    sbatch --parsable -p urgent -w "$1" --gres=gpu:2 -J urgent -o /dev/null --wrap 'sleep 120'
}

# solo_node N RUN: the node solo's RUN-th run runs on, once its progress shows (up to 60 s).
solo_node() {
    wait_line "$T/out$1" "solo: run $2 on n[12] " 600
    sed -n "s/.* solo: run $2 on \(n[12]\) .*/\1/p" "$T/out$1" | head -1
}

# start_run N [S]: solo on partition t4 in the background, its output in T/outN, status lines
# every S s (none by default); fixed-2 keeps it at 2 GPUs, one node (doubling would grow it
# over both)
start_run() {
    : > "$T/out$1"
    "$bin" schedule --live --slurm --partition t4 --workload "$T/solo.csv" --job-command "$job" \
        --policy fixed-2 --interval 60 --time-scale 30 --duration 300 --status-every "${2:-0}" \
        --job-dir "$T/jobs$1" > "$T/out$1" 2> "$T/err$1" &
    LIVE_PID=$!
}

# Its progress a second on, so that the checkpoint the preemption writes is past step 0.
past_first_step() { sleep 1; }

echo "REQUEUE: preempted, requeued copy cancelled, resumed elsewhere from its checkpoint"
start_run 1
node=$(solo_node 1 1)
past_first_step
urgent1=""
[ -n "$node" ] && urgent1=$(preemptor "$node")
wait_line "$T/out1" "solo: run 2 on n[12] .* resumed at step" 600
requeued=$(sed -n 's/.* solo: Slurm job \([0-9]*\) requeued by Slurm.*/\1/p' "$T/out1" | head -1)
copy_state="$( [ -n "$requeued" ] && scontrol show job "$requeued" 2> /dev/null | grep -o 'JobState=[A-Z]*')"
kill -INT "$LIVE_PID"
scancel $urgent1
live_ended
if [ "$rc" -eq 130 ] && [ -n "$node" ] && [ "$copy_state" = JobState=CANCELLED ] &&
   python3 - "$T/out1" "$T/jobs1" "$node" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
node = sys.argv[3]
other = "n2" if node == "n1" else "n1"
# The exit line (the TERM's checkpoint) may reach the output after the requeue is first seen:
# then it is read when the run ends, and the next run resumes from it all the same.
# The copy's state when the round first sees the requeue is Slurm's of the moment: PENDING, or
# COMPLETING while the preempted instance is still ending (seen under load).
p = need(r"solo: Slurm job \d+ requeued by Slurm \(Restarts=1: preempted with PreemptMode=REQUEUE, "
         r"or its node failed; now [A-Z]+\): its requeued copy is cancelled, at step (\d+), "
         r"(?:checkpoint written at step (\d+)|no checkpoint yet): not a death; its 2 GPUs leave "
         r"the model until a decision places it again, (?:resuming from its checkpoint|starting "
         r"fresh)", "the requeue said")
if p.group(2):
    assert p.group(1) == p.group(2), p.group(0)
    saved = int(p.group(2))
else:
    late = need(r"solo: its preempted run ended having written its checkpoint at step (\d+): the "
                r"next run resumes from it", "its checkpoint read when the run ended", p.end())
    saved = int(late.group(1))
    assert saved >= int(p.group(1)), late.group(0)
assert len(re.findall("requeued by Slurm", out)) == 1, "said once"
need(r"%s: 2 of its 2 GPUs are held by other users' jobs" % node, "the preemptor's GPUs held")
need(r"decision t=\d+s: start solo 0 -> 2 GPUs on %s:2" % other, "placed on the other node", p.end())
m = need(r"solo: run 2 on %s \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)" % other,
         "resumed there", p.end())
resumed(m, saved, sys.argv[2], "solo")
assert "died unexpectedly" not in out, "a preemption is no death"
assert not re.search(r"decision t=\d+s: stop solo", out), "the model's side is no decision line"
assert "waits for its allocation: BeginTime" not in out, "the requeued copy is not a run waiting"
# the exit line in its output file is the preempted instance's, this run's own: read at once
assert "gave up waiting" not in out, "no exit_grace_s wait for a requeued job's end"
print(p.group(0)[:60] + "...; resumed on " + other)
PY
then pass "a requeued job is no death: its GPUs leave the model, its copy is cancelled, it resumes where the policy places it"
else fail "requeue (exit $rc, node '$node', requeued job '$requeued' $copy_state)"; fi
if [ -z "$queue" ] && [ "$left" -eq 0 ]; then pass "no Slurm job and no job process left"
else fail "left: queue '$queue', $left processes"; fi

echo "CANCEL: preempted twice, no second death"
scontrol update PartitionName=t4 PreemptMode=CANCEL
start_run 2
first=$(solo_node 2 1)
past_first_step
urgent1="" urgent2="" second=""
[ -n "$first" ] && urgent1=$(preemptor "$first")
[ -n "$first" ] && second=$(solo_node 2 2)
past_first_step
[ -n "$second" ] && urgent2=$(preemptor "$second")
# both nodes held: solo waits queued until the first preemptor ends
n=0
while [ $n -lt 300 ] && [ "$(grep -c 'preempted by Slurm (PreemptMode=CANCEL' "$T/out2")" -lt 2 ]; do
    sleep 0.1; n=$((n + 1))
done
[ -n "$urgent1" ] && scancel "$urgent1"
third=$(solo_node 2 3)
kill -INT "$LIVE_PID"
scancel $urgent2
live_ended
if [ "$rc" -eq 130 ] && [ -n "$first" ] && [ -n "$second" ] && [ "$third" = "$first" ] &&
   python3 - "$T/out2" "$T/jobs2" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
pre = re.findall(r"solo: Slurm job \d+ preempted by Slurm \(PreemptMode=CANCEL: it ended "
                 r"PREEMPTED\), at step (\d+), checkpoint written at step (\d+): not a death", out)
assert len(pre) == 2, pre
p2 = list(re.finditer(r"preempted by Slurm \(PreemptMode=CANCEL", out))[1]
m = need(r"solo: run 3 on n\d \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "the third run resumed", p2.end())
resumed(m, int(pre[1][1]), sys.argv[2], "solo")
assert "died unexpectedly" not in out and "left stopped" not in out, "no death, not failed"
print("preempted at steps %s and %s; run 3 resumed at %s" % (pre[0][0], pre[1][0], m.group(1)))
PY
then pass "two preemptions (PREEMPTED) are no second death: the job resumes a third time from its checkpoint"
else fail "cancel (exit $rc, nodes '$first' '$second' '$third')"; fi
if [ -z "$queue" ] && [ "$left" -eq 0 ]; then pass "no Slurm job and no job process left after the preemptions"
else fail "left after the preemptions: queue '$queue', $left processes"; fi

echo "SUSPEND: suspended by a higher tier's job, resumed when it ends; no progress meanwhile"
scontrol update PartitionName=t4 PreemptMode=SUSPEND
start_run 3 1
node=$(solo_node 3 1)
wait_line "$T/out3" "solo: Slurm job [0-9]* running on" 300
id=$(sed -n 's/.* solo: Slurm job \([0-9]*\) running on .*/\1/p' "$T/out3" | head -1)
past_first_step
# cpu_preemptor NODE S: a CPU-only job of urgent taking NODE's four CPUs for S seconds
cpu_preemptor() {
    sbatch --parsable -p urgent -w "$1" -c 4 -J urgent -o /dev/null --wrap "sleep $2"
}
urgent1="" urgent2=""
[ -n "$node" ] && urgent1=$(cpu_preemptor "$node" 8)
wait_line "$T/out3" "is suspended" 300
wait_line "$T/out3" "is resumed after" 300
sleep 3 # status lines after the resume
# suspended again, and the run ended meanwhile: the stop waits for the resume
[ -n "$node" ] && urgent2=$(cpu_preemptor "$node" 5)
n=0
while [ $n -lt 300 ] && [ "$(grep -c 'is suspended (preempted' "$T/out3")" -lt 2 ]; do
    sleep 0.1; n=$((n + 1))
done
kill -INT "$LIVE_PID"
live_ended
if [ "$rc" -eq 130 ] && [ -n "$id" ] && [ -n "$urgent2" ] && python3 - "$T/out3" "$id" <<'PY'
import re, sys
from outcheck import out, need
s = need(r"slurm: Slurm job %s \(tunedeck-live-solo\.[0-9a-f]{6}-1\) is suspended \(preempted with "
         r"PreemptMode=SUSPEND, or scontrol suspend\): Slurm keeps its GPUs while it is suspended "
         r"\(it frees only its CPUs\), so the scheduler keeps counting them, at its size, and counts "
         r"no progress for it until Slurm resumes it" % sys.argv[2], "the suspension said")
r = need(r"slurm: Slurm job %s \(tunedeck-live-solo\.[0-9a-f]{6}-1\) is resumed after (\d+) s "
         r"suspended: its progress counts again" % sys.argv[2], "its end said", s.end())
assert len(re.findall(r"is suspended \(preempted", out)) == 2, "said once a suspension"
assert "solo: run 2" not in out and "preempted by Slurm" not in out, "no restart, no preemption"
assert "died unexpectedly" not in out, "no death"
# the second suspension, the end of the run during it: no TERM until Slurm resumes the job
# (a TERM's scancel did not answer while it was suspended), then its checkpoint
s2 = need(r"is suspended \(preempted", "suspended again", r.end())
e = need(r"solo: end of the run: checkpoint and stop at step \d+", "the run's end", s2.end())
w = need(r"solo: its stop waits until it is resumed: a suspended job cannot write its checkpoint",
         "the stop waits", e.end())
r2 = need(r"is resumed after \d+ s suspended", "resumed the second time", w.end())
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "checkpointed at the end",
     r2.end())
assert "SIGKILL" not in out and "did not answer" not in out, "no KILL, no controller outage"

# The status lines: (position, model %, state). While suspended the model's progress for solo
# stands still; before and after it moves.
st = [(m.start(), float(m.group(1)), m.group(2)) for m in
      re.finditer(r"solo\s+cifar10\s+model\s+([\d.]+)% \| real (\w+)", out)]
susp = [p for (at, p, k) in st if k == "suspended" and s.start() < at < r.start()]
assert len(susp) >= 2, "shown suspended in the status lines: %s" % st
assert len(set(susp)) == 1, "no model progress while suspended: %s" % susp
before = [p for (at, p, k) in st if k == "running" and at < s.start()]
after = [p for (at, p, k) in st if k == "running" and r.end() < at < s2.start()]
assert before and before[0] < susp[0], "it progressed before: %s" % st
assert after and after[-1] > susp[0], "and progresses again once resumed: %s" % st
print("%s; model %.1f%% for %d status lines" % (r.group(0)[-60:], susp[0], len(susp)))
PY
then pass "a job Slurm suspends for a higher tier's job is said, kept, charged no progress, and goes on once resumed"
else fail "suspend (exit $rc, job '$id', preemptors '$urgent1' '$urgent2')"; fi
if [ -z "$queue" ] && [ "$left" -eq 0 ]; then pass "no Slurm job and no job process left after the suspension"
else fail "left after the suspension: queue '$queue', $left processes"; fi

slurmlive_done
