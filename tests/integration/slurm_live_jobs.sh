#!/bin/sh
# The live scheduler on Slurm with jobs it did not submit or does not follow (its siblings:
# slurm_live.sh, slurm_live_outage.sh), against the private Slurm 22.05 of
# tests/slurm-harness.sh (n1,n2: gpu:t4:2; n3,n4: gpu:v100:4), with tunedeck-worker in job
# mode as the job command.
#
# 1. An sbatch whose answer is lost after Slurm took the job (a stand-in sbatch wraps the
#    real one and keeps its answer past tunedeck's timeout): the job is adopted by name;
# 2. and one Slurm takes only after the look-up found none: the retry's second job is
#    cancelled.
# 3. Another user's job holding a GPU, and a batch job an earlier live run left.
# 4. Another user's pending job (sbatch --uid=nobody) that Slurm would start before a
#    resubmission of ours: the GPU it would take is held back and `new` does not grow into
#    a wait; 5. the same with that job in partition debug, which overlaps ours.
# 6, 7. An sbatch Slurm refuses for good (a partition it does not have, a job no node can
#    hold): the job fails at once with Slurm's words, no death; 8. one a busy controller
#    turns away for now (a stand-in sbatch): tried once more, the job runs.
# 9. A job's progress line with a NUL byte: refused naming the byte, said once.
# 10. Another user's job renamed to forge a failed record of ours in scontrol's answer: our
#     jobs are read by id, the run goes on, nothing of ours is taken as failed.
# After each run: no Slurm job (squeue) and no job process left. The trap stops every
# daemon and job it started.
set -u
suite=slurm_live_jobs scratch=slurm-live-jobs suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurmlive.sh"
slurmlive_start
live_inventory
# The lost answers' runs wait out tunedeck's timeout on an sbatch: 10 s instead of the
# default 30 (every command's: the harness's controller answers a round in well under a
# second); their --duration is as much shorter, the same 12 and 10 s left after it.
quick_inventory inv-timeout '{"command_timeout_s": 10}'

echo "an sbatch whose answer is lost"
# A stand-in sbatch first on tunedeck's PATH hands the request to the real one, then keeps
# the answer past tunedeck's 10 s timeout: Slurm has the job, tunedeck no job id. The retry
# looks the submission up by its name (squeue) and adopts the job: one job, never two.
real_sbatch=$(command -v sbatch)
mkdir -p "$T/lost"
printf '#!/bin/sh\nid=$("%s" "$@") || exit $?\necho "$id" >> "%s/lost/ids"\nexec sleep 60\n' \
    "$real_sbatch" "$T" > "$T/lost/sbatch"
chmod +x "$T/lost/sbatch"
PATH="$T/lost:$PATH" "$bin" schedule --live --cluster "$T/inv-timeout.json" --workload "$T/solo.csv" \
    --policy doubling --interval 60 --time-scale 1 --duration 22 --status-every 0 \
    --job-dir "$T/jobs1" > "$T/out1" 2> "$T/err1"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out1" "$T/lost/ids" <<'PY'
import re, sys
from outcheck import out, need
ids = open(sys.argv[2]).read().split()
assert len(ids) == 1, ("one sbatch reached Slurm", ids)
lost = need(r"slurm: the controller did not answer \(sbatch: no answer within 10 s", "the timeout")
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
# The first stand-in sbatch hangs past the 10 s timeout and leaves, in a session of its own,
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
PATH="$T/dbl:$PATH" "$bin" schedule --live --cluster "$T/inv-timeout.json" --workload "$T/solo.csv" \
    --policy doubling --interval 60 --time-scale 1 --duration 20 --status-every 0 \
    --job-dir "$T/jobs2" > "$T/out2" 2> "$T/err2"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] &&
   python3 - "$T/out2" "$T/dbl/late-ids" "$T/dbl/ids" <<'PY'
import re, sys
from outcheck import out, need
late = open(sys.argv[2]).read().split()
ids = open(sys.argv[3]).read().split()
assert len(late) == 1 and len(ids) == 1, ("two jobs reached Slurm", late, ids)
late, kept = late[0].split(";")[0], ids[0].split(";")[0]
lost = need(r"slurm: the controller did not answer \(sbatch: no answer within 10 s", "the timeout")
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

echo "another user's job holds a GPU: ours goes elsewhere"
# other holds one of n1's two GPUs: without the hold the model would place solo's 2 GPUs on
# n1, where Slurm would leave it pending (Resources); the scheduler sees 1 free there and
# places it on n2.
# A batch job an earlier live run left (tunedeck killed with SIGKILL) runs beside it: said
# once with the scancel that ends it, and left alone.
other=$(other_job n1)
stale=$(sbatch --parsable -J tunedeck-live-stale -o /dev/null --wrap 'sleep 120')
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 5 --status-every 0 --job-dir "$T/jobs3" \
    > "$T/out3" 2> "$T/err3"
rc=$?
stale_left="$(squeue -h -j "$stale" -o %T)"
scancel "$other" "$stale"
settle
if [ "$stale_left" = RUNNING ] && [ "$(grep -c "earlier live run" "$T/out3")" -eq 1 ] &&
    grep -q "1 batch job of an earlier live run (tunedeck-live-\*) is still in Slurm: left alone, another tunedeck may own it; \`scancel $stale\` ends it" "$T/out3"
then pass "an earlier run's batch job is said once, with its scancel, and left running"
else fail "leftover batch job (state '$stale_left'): $(grep "earlier" "$T/out3")"; fi
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out3" <<'PY'
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

# pending_section N PARTITION GRES: section 4 (N 4) or 5 (N 5) with theirs submitted
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
pending_section 4 t4 gpu:2 \
    "another user's pending job keeps the GPU it takes first out of growth: no resize into a wait" \
    "pending job of another user"

echo "another user's pending job in an overlapping partition"
# The same with theirs in partition debug (n[1-4]), asking for t4 GPUs (only n1, n2 have
# them): not in our partition t4, no plan (no time limits) and no -w, so only debug's node
# list (sinfo -a -h -o '%R|%N', read because such a job is pending) says it may take n2's GPUs.
pending_section 5 debug gpu:t4:2 \
    "a pending job of a partition sharing our nodes keeps its GPU out of growth too" \
    "pending job of another user in partition debug"

# refused_section N ENV INVENTORY WORDS TITLE: the run with ENV (an SBATCH_* input variable,
# which sbatch takes where its command line does not say) in tunedeck's environment, so
# that Slurm refuses the job's sbatch in WORDS: the job is left failed at once, by Slurm's
# words, with one sbatch and no death; the run ends by itself (exit 1: a job failed).
refused_section() {
    env "$2" "$bin" schedule --live --cluster "$3" --workload "$T/solo.csv" --policy doubling \
        --interval 60 --time-scale 1 --duration 30 --status-every 0 --job-dir "$T/jobs$1" \
        > "$T/out$1" 2> "$T/err$1"
    rc=$?
    settle
    queue="$(squeue -h)"
    left=$(pgrep -f "ckpt-$mark" | wc -l)
    if [ "$rc" -eq 1 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out$1" "$4" <<'PY'
import re, sys
from outcheck import out, need
words = sys.argv[2]
# sbatch's own line before slurmctld's words, when it prints one ("invalid partition
# specified: nope"), is kept with them
said = need(r"solo: could not start on n\d: sbatch exited with status 1: (?:sbatch: error: [^;\n]*; )?"
            r"sbatch: error: Batch job submission failed: %s: refused for good \(trying again "
            r"cannot change it\), left failed$" % re.escape(words),
            "the refusal for good, in Slurm's words")
need(r"every job has ended \(0 completed, 1 failed\)", "the run over at once", said.end())
assert "died" not in out, "a refused start is no death"
assert out.count("could not start") == 1, "one sbatch, not tried again"
print(said.group(0))
PY
    then pass "$5"
    else fail "$5 (exit $rc, queue '$queue', $left processes)"; fi
}

echo "an sbatch Slurm refuses for good"
# Regression: Slurm's refusal ended the run "not started" and the driver took it for the
# job's death: submitted again fresh, then "second death in a row, left stopped".
# A partition Slurm does not have (the inventory names none, so SBATCH_PARTITION is sbatch's),
python3 - "$T/inv.json" "$T/inv-nopart.json" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
del inv["partition"]
json.dump(inv, open(sys.argv[2], "w"))
PY
refused_section 6 SBATCH_PARTITION=nope "$T/inv-nopart.json" "Invalid partition name specified" \
    "a partition Slurm does not have: the job fails at once with Slurm's words, no death, one sbatch"
# and a job larger than any node (more memory per node than any has: no GPU count can be
# asked beyond what the scheduler saw, and this is the same refusal Slurm gives to that).
refused_section 7 SBATCH_MEM_PER_NODE=999999 "$T/inv.json" \
    "Requested node configuration is not available" \
    "a job no node can hold: the job fails at once with Slurm's words, no death, one sbatch"

echo "an sbatch the controller turns away for now"
# A stand-in sbatch answers the first submission as a busy slurmctld does once sbatch's own
# retries are spent, then hands the next to the real one: the start is tried once more at
# the next tick and the job runs, with no death.
mkdir -p "$T/busy"
printf '#!/bin/sh\nif [ ! -f "%s/busy/once" ]; then : > "%s/busy/once"; echo "sbatch: error: Batch job submission failed: Resource temporarily unavailable" >&2; exit 1; fi\nexec "%s" "$@"\n' \
    "$T" "$T" "$real_sbatch" > "$T/busy/sbatch"
chmod +x "$T/busy/sbatch"
PATH="$T/busy:$PATH" "$bin" schedule --live --cluster "$T/inv.json" --workload "$T/solo.csv" \
    --policy doubling --interval 60 --time-scale 1 --duration 10 --status-every 0 \
    --job-dir "$T/jobs8" > "$T/out8" 2> "$T/err8"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out8" <<'PY'
from outcheck import out, need
once = need(r"solo: could not start on n\d: sbatch exited with status 1: sbatch: error: Batch job "
            r"submission failed: Resource temporarily unavailable: tried once more at the next "
            r"tick$", "the refusal that may pass")
run = need(r"solo: Slurm job \d+ running on n\d:", "the second sbatch's job runs", once.end())
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "checkpointed at the end",
     run.end())
assert "died" not in out and "left failed" not in out, "no death, not failed"
print(once.group(0))
PY
then pass "a busy controller's refusal: the start is tried once more at the next tick and the job runs, no death"
else fail "busy controller's refusal (exit $rc, queue '$queue', $left processes)"; fi

echo "a NUL byte in a job's progress line"
# The job's output file is read with its bytes' count, as over SSH (schedlive.sh): a line with
# a NUL byte is a refused protocol line naming the byte (the NUL ended it as a C string, the
# event after it dropped unseen), said once per run.
python3 - "$T/inv.json" "$root/tests/fixtures/job.sh" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = "exec sh %s {gpus} {hosts} {resume} ckpt-%s nul" % (sys.argv[2], sys.argv[3])
json.dump(inv, open(sys.argv[1].replace(".json", "-nul.json"), "w"))
PY
"$bin" schedule --live --cluster "$T/inv-nul.json" --workload "$T/solo.csv" --policy doubling \
    --interval 60 --time-scale 1 --duration 6 --status-every 0 --checkpoint-file "ckpt-$mark" \
    --job-dir "$T/jobs9" \
    > "$T/out9" 2> "$T/err9"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
said="solo: a line it printed was refused: event line: expected JSON text, found a NUL byte at byte [0-9]+$"
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && [ "$(grep -cE "$said" "$T/out9")" -eq 1 ]
then pass "a progress line with a NUL byte is refused naming the byte, said once"
else fail "a NUL byte in a Slurm job's progress line (exit $rc, queue '$queue', $left processes): $(grep -F 'refused' "$T/out9" | head -3)"; fi

echo "another user's job name forges a record of ours"
# Slurm prints a job's name as its owner gave it, newlines too: nobody's held job, renamed
# once solo runs (scontrol update JobName=, as its owner may), writes a record "JobId=SOLO ...
# JobState=FAILED" into every scontrol answer and leaves its own without JobState. The rounds
# go on: solo is read by id (its record all ours) and never taken as failed, late, started
# after the forgery, is seen running, and the end's checkpoints are confirmed by rounds as
# always. (The old round refused such an answer whole: the controller counted as not
# answering for as long as the job was listed, and no decision was acted on.)
printf 'name,time,application,num_replicas,batch_size\nsolo,0,cifar10,1,128\nlate,150,ncf,1,32768\n' > "$T/forge.csv"
forger=$(sbatch --parsable --uid=nobody --chdir=/ -H -p t4 -J forger -o /dev/null --wrap 'sleep 120')
: > "$T/out10"
"$bin" schedule --live --cluster "$T/inv.json" --workload "$T/forge.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 12 --status-every 0 --job-dir "$T/jobs10" \
    > "$T/out10" 2> "$T/err10" &
LIVE_PID=$!
wait_line "$T/out10" "solo: Slurm job .* running" 300
solo_id=$(sed -n 's/.*solo: Slurm job \([0-9]*\) running.*/\1/p' "$T/out10" | head -1)
[ -n "$solo_id" ] && scontrol update JobId="$forger" JobName="$(printf 'a\nJobId=%s JobName=x\n   UserId=root(0) GroupId=root(0)\n   JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0' "$solo_id")"
forged="$(scontrol show -d job | grep -c "^JobId=$solo_id ")"
wait "$LIVE_PID"
rc=$?
LIVE_PID=""
scancel "$forger"
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && [ "$forged" = 2 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] &&
    python3 - "$T/out10" "$solo_id" <<'PY'
import re, sys
from outcheck import out, need
solo = sys.argv[2]
doubt = need(r"slurm: scontrol show -d job: [^\n]*; while its answer holds such records, our jobs "
             r"are read one by one", "the forgery caught, said")
assert len(re.findall("our jobs are read one by one", out)) == 1, "said once"
need(r"late: Slurm job \d+ running on n\d:", "late, started after it, seen running", doubt.end())
need(r"solo: stopped at step \d+ \(epoch [\d.]+\), checkpoint written", "solo checkpointed at the end",
     doubt.end())
assert "did not answer" not in out, "no round lost to it"
assert "died" not in out and "left failed" not in out, "nothing of ours failed"
print(doubt.group(0)[:160])
PY
then pass "a job name forging a failed record of ours: our jobs read by id, the run goes on, nothing failed"
else fail "forged record of ours (exit $rc, listed twice: '$forged', queue '$queue', $left processes)"; fi

slurmlive_done
