#!/bin/sh
# Tuning trials as srun steps of one allocation, against a real private Slurm 22.05
# (tests/slurm-harness.sh: n1,n2 with gpu:t4:2 and 4 CPUs, n3,n4 with gpu:v100:4 and 8 CPUs;
# partitions debug and t4): a 3-trial session through srun steps of one heterogeneous
# allocation, a session inside an existing allocation (SLURM_JOB_ID; one that cannot hold the
# session, stale or of other nodes, is refused before any trial; a busy partition, and a
# SIGTERM while salloc waits for it), and a step Slurm kills
# at its time limit (60 to 90 s: most of this suite's 1.5 min); no job is left after them.
# The inventory and the watch are in slurm.sh, trials through a login node in
# slurm_login.sh. The trap stops every daemon and job it started.
set -u
suite=slurm_steps scratch=slurm-steps suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"
slurm_suite_start
printf '{"name": "tdtest", "backend": "slurm", "partition": "debug",\n "trial": {"command": "true"}}\n' \
    > "$T/inv.json"

echo "trials as srun steps"
printf '{"name": "tiny", "model_mb": 10, "batch": 64, "iterations": 4, "warmup": 1}\n' > "$T/job.json"
trial="python3 $root/tests/fixtures/trial.py"
# Every node: two GPU counts, so the allocation is a heterogeneous job (backfill starts it).
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher slurm --trial-cmd "$trial" \
    --budget 3 --optimizer random --json > "$T/t1.json" 2> "$T/t1.err"
check "tune --launcher slurm: 3 trials through srun steps, merged protocol timings" \
    python3 - "$T/t1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["trials"]) == 3 and all(t["status"] == "ok" for t in r["trials"]), r["trials"]
assert r["best_time_s"] > 0.05
PY
check "the session's allocation is gone at the end" sh -c "[ -z \"\$(squeue -h)\" ]"

# What a step's tasks print besides the protocol, and srun's own lines (which name the node
# and task), go to the trial log beside the journal, tagged "slurm" and a task's lines with
# its number ("task 1: ..."); the failure says where.
# Before, only the failed trial's one-line reason was kept.
printf '{"name": "tdtest", "backend": "slurm", "partition": "t4",\n "trial": {"command": "true"}}\n' \
    > "$T/inv-t4-only.json"
"$bin" tune --cluster "$T/inv-t4-only.json" --job "$T/job.json" --launcher slurm \
    --trial-cmd 'cat >/dev/null; echo "loading on $TUNEDECK_MACHINE" >&2; echo stray; exit 3' \
    --budget 1 --optimizer random --json > "$T/t-log.json" 2> "$T/t-log.err"
check "a failed step's stderr, stray stdout and srun's words are in the trial log" \
    python3 - "$T/t-log.json" "$T/t-log.err" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
t, log = r["trials"][0], r["trial_log"]
assert t["status"] == "failed" and t["log_lines"] >= 2, t
err = open(sys.argv[2]).read()
assert log and log in err and "what the trials printed besides the protocol" in err, err
text = open(log).read()
nodes = [m["name"] for m in t["schedule"]["machines"] if m["worker"] or m["ps"]]
for n in nodes:  # each task's line with its task's number (srun --label)
    assert re.search(r"Z trial 1 slurm stderr: task \d+: loading on %s\n" % n, text), text
assert re.search(r"Z trial 1 slurm stdout: task \d+: stray\n", text), text
assert re.search(r"Z trial 1 slurm stderr: srun: error: n[12]: task \d+: Exited with exit code 3", text), text
assert "Z trial 1 ended: failed: " in text, text
PY
n=0
while [ $n -lt 50 ] && [ -n "$(squeue -h)" ]; do sleep 0.2; n=$((n + 1)); done

printf '{"name": "t4s", "backend": "slurm", "partition": "t4"}\n' > "$T/inv-t4.json"
salloc --no-shell -J outer -p t4 -N 2 --exclusive --gres=gpu:2 --immediate=20 2> "$T/outer.err"
outer=$(squeue -h -n outer -o %i)
allocs=$(grep -c '_slurm_rpc_allocate_resources' "$S/log/slurmctld.log")
SLURM_JOB_ID="$outer" "$bin" tune --cluster "$T/inv-t4.json" --job "$T/job.json" --launcher slurm \
    --trial-cmd "$trial" --budget 1 --optimizer random --json > "$T/t2.json" 2> "$T/t2.err"
check "inside an allocation (SLURM_JOB_ID): no new allocation, the trial runs, the job is left running" \
    sh -c "python3 -c \"import json; r=json.load(open('$T/t2.json')); assert r['trials'][0]['status'] == 'ok', r\" &&
           [ \"\$(squeue -h -j '$outer' -o %T)\" = RUNNING ] &&
           [ \"\$(grep -c _slurm_rpc_allocate_resources '$S/log/slurmctld.log')\" = '$allocs' ]"
scancel "$outer"

# A SLURM_JOB_ID that cannot hold the session: one left in the shell after its allocation
# ended, and an allocation of n1 alone for partition t4 (n1, n2). Each failed every trial of
# the budget with srun's error before; now refused at the start, exit 3, no trial run.
salloc --no-shell -J part -p t4 -N 1 -w n1 --exclusive --gres=gpu:2 --immediate=20 2> "$T/part.err"
part=$(squeue -h -n part -o %i)
for case in "99999:Slurm has no such job" "$part:its allocation holds n1, not n2"; do
    SLURM_JOB_ID="${case%%:*}" "$bin" tune --cluster "$T/inv-t4.json" --job "$T/job.json" \
        --launcher slurm --trial-cmd "$trial" --budget 2 --optimizer random --json \
        > "$T/t-bad.json" 2> "$T/t-bad.err"
    rc=$?
    check "SLURM_JOB_ID=${case%%:*}: refused before any trial, exit 3, '${case#*:}'" \
        sh -c "[ $rc = 3 ] && grep -q 'SLURM_JOB_ID=${case%%:*}: ${case#*:}' '$T/t-bad.err' &&
               [ ! -s '$T/t-bad.json' ] || { cat '$T/t-bad.err' '$T/t-bad.json'; exit 1; }"
done
check "the allocation tunedeck was refused is left running" \
    sh -c "[ \"\$(squeue -h -j '$part' -o %T)\" = RUNNING ]"

# The same job keeps n1 busy: a session's own allocation (n1, n2) cannot start. salloc waits
# 4 s (half the timeout, under 10 s; 5 s less above), says so and revokes its job; before, tunedeck's 8 s timeout cut it ("is slurmctld
# up?", exit 2) and its job stayed queued, to start and hold n1 and n2 once n1 was free.
printf '{"name": "t4s", "backend": "slurm", "partition": "t4", "slurm": {"command_timeout_s": 8}}\n' \
    > "$T/inv-t4-8s.json"
"$bin" tune --cluster "$T/inv-t4-8s.json" --job "$T/job.json" --launcher slurm \
    --trial-cmd "$trial" --budget 1 --optimizer random --json > "$T/t-busy.json" 2> "$T/t-busy.err"
rc=$?
check "a busy partition: exit 4, said so, and no job of the session's is left queued" \
    sh -c "[ $rc = 4 ] && grep -q 'Slurm did not start it within 4 s' '$T/t-busy.err' &&
           [ -z \"\$(squeue -h -o %j | grep tunedeck-tune)\" ] ||
           { echo rc=$rc; cat '$T/t-busy.err'; squeue; exit 1; }"

# SIGTERM (or Ctrl-C) while salloc waits: salloc gets SIGINT at once and revokes its queued
# job, which is cancelled all the same; tune says so and ends (143). Before, the signal took
# effect only once salloc answered (its --immediate, 55 s here, said nothing meanwhile); and
# before that, tunedeck ended at once and salloc, in a process group of its own, was granted
# an allocation that nobody released. n1 is freed only after tune has ended.
printf '{"name": "t4s", "backend": "slurm", "partition": "t4", "slurm": {"command_timeout_s": 60}}\n' \
    > "$T/inv-t4-60s.json"
"$bin" tune --cluster "$T/inv-t4-60s.json" --job "$T/job.json" --launcher slurm \
    --trial-cmd "$trial" --budget 1 --optimizer random --no-journal > /dev/null 2> "$T/t-term.err" &
tune=$!
n=0 # until its salloc has queued its job
while [ $n -lt 100 ] && [ -z "$(squeue -h -t PD -o %j | grep tunedeck-tune)" ]; do
    sleep 0.2; n=$((n + 1))
done
pid_kill_named TERM "$tune" "--cluster $T/" # still this tune (one that ended: its number another's)
wait "$tune"
rc=$?
n=0 # its scancel: the job goes (COMPLETING a moment)
while [ $n -lt 50 ] && [ -n "$(squeue -h -o '%j %T' | grep tunedeck-tune | grep -v COMPLETING)" ]; do
    sleep 0.2; n=$((n + 1))
done
check "SIGTERM while salloc waits: exit 143 at once, said so, and its queued job is gone" \
    sh -c "[ $rc = 143 ] && grep -q 'stopped while salloc waited for it (job [0-9]*, which it had queued, is cancelled)' '$T/t-term.err' &&
           [ -z \"\$(squeue -h -o '%j %T' | grep tunedeck-tune | grep -v COMPLETING)\" ] ||
           { echo rc=$rc; cat '$T/t-term.err'; squeue; exit 1; }"
scancel "$part"

# srun --label: each task's lines carry its number. Task 1 fails with its own words; task 0,
# stopped by srun (--kill-on-bad-exit), says something else on its way out, after srun's word
# of the failure: the reason is task 1's words, however the lines came (before --label, the
# first task line after srun's word was taken, and that could be task 0's).
words="cat > /dev/null; if [ \"\$SLURM_PROCID\" = 1 ]; then sleep 1; echo 'no dataset at /data/tdtest' >&2; exit 3; fi
trap 'echo \"saving a checkpoint on SIGTERM\" >&2; exit 143' TERM; sleep 30 & wait"
"$bin" tune --cluster "$T/inv-t4.json" --job "$T/job.json" --launcher slurm --trial-cmd "$words" \
    --budget 1 --optimizer uniform-devices --no-journal --no-prune --json > "$T/t-words.json" \
    2> "$T/t-words.err"
check "a failed task's words are its own, not those another task said after srun's word" \
    python3 - "$T/t-words.json" <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert sorted(m["name"] for m in t["schedule"]["machines"] if m["worker"]) == ["n1", "n2"], t
assert t["status"] == "failed", t
# srun's last line may be of task 0, which it stopped: then task 1's failure is said with
# its words
assert re.search(r"; task 1 (\(n2, exit code 3\) )?said: no dataset at /data/tdtest",
                 t["reason"]), t["reason"]
assert "task 1: Exited with exit code 3" in t["reason"] or "(n2, exit code 3)" in t["reason"], t
assert "checkpoint" not in t["reason"], t["reason"]
PY
# Nodes of two GPU counts (n1,n2: 2; n3,n4: 4) are one heterogeneous step, a component
# each; srun numbers the tasks through the step, but its word of a failure numbers the task
# within its component. Task 0 of the second component (n3) fails with its own words while
# task 0 of the first (n1) keeps talking on stderr: the reason is n3's words, with its node,
# and the trial log's "task N:" lines are each of their own node. Before, each component was
# an srun of its own, both labeled a task 0, and the reason quoted n1 ("task 0 ... said:
# warming up the GPUs"; srun did not stop the other component either).
hetwords="cat > /dev/null; case \$SLURMD_NODENAME in
n3) sleep 1; echo 'no dataset at /data/tdtest' >&2; exit 3 ;;
n1) trap 'echo \"saving a checkpoint\" >&2; exit 143' TERM; i=0
    while [ \$i -lt 6 ]; do echo 'warming up the GPUs' >&2; sleep 1; i=\$((i + 1)); done ;;
*) trap 'exit 143' TERM; sleep 6 & wait ;;
esac"
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher slurm --trial-cmd "$hetwords" \
    --budget 1 --optimizer uniform-devices --no-prune --json > "$T/t-het.json" 2> "$T/t-het.err"
check "a heterogeneous step: the failed task's own words, with its node, and the log's tasks" \
    python3 - "$T/t-het.json" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
t = r["trials"][0]
assert sorted(m["name"] for m in t["schedule"]["machines"] if m["worker"]) == \
    ["n1", "n2", "n3", "n4"], t
assert t["status"] == "failed", t
m = re.search(r"; task (\d+) \(n3(, exit code 3)?\) said: no dataset at /data/tdtest", t["reason"])
assert m, t["reason"]
assert "warming" not in t["reason"] and "checkpoint" not in t["reason"], t["reason"]
log = open(r["trial_log"]).read()
tasks = {n: re.search(r"slurm stderr: task (\d+) runs on %s\n" % n, log) for n in
         ("n1", "n2", "n3", "n4")}
assert all(tasks.values()), log
tasks = {n: x.group(1) for n, x in tasks.items()}
assert len(set(tasks.values())) == 4 and tasks["n3"] == m.group(1), (tasks, t["reason"])
assert "slurm stderr: task %s: no dataset at /data/tdtest\n" % tasks["n3"] in log, log
assert "slurm stderr: task %s: warming up the GPUs\n" % tasks["n1"] in log, log
assert not re.search(r"task (?!%s:)\d+: warming" % tasks["n1"], log), log
PY
# Protocol lines longer than slurmstepd's 1,024-byte messages, from two tasks at once: srun
# labels each piece, and the pieces are joined per task (without labels, two tasks' pieces
# could interleave into one line).
cat > "$T/long.py" <<'PY'
import os, sys
sys.stdin.read()
pad = " " * (2500 + 7 * int(os.environ["SLURM_PROCID"]))
print('{"event": "done",%s"time_s": 0.5}' % pad, flush=True)
PY
long="python3 $T/long.py"
"$bin" tune --cluster "$T/inv-t4.json" --job "$T/job.json" --launcher slurm --trial-cmd "$long" \
    --budget 1 --optimizer uniform-devices --no-journal --no-prune --json > "$T/t-long.json" \
    2> "$T/t-long.err"
check "protocol lines of 2.5 KB from two tasks at once are read whole" \
    python3 - "$T/t-long.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "ok" and abs(t["time_s"] - 0.5) < 1e-9, t
assert "bad line" not in (t.get("reason") or ""), t
PY

# Slurm's unit is the minute: a 60 s trial timeout becomes --time=1, and slurmctld kills the
# step 60 to 90 s in; tunedeck's own backstop is two minutes later.
start=$(date +%s)
"$bin" tune --cluster "$T/inv-t4.json" --job "$T/job.json" --launcher slurm \
    --trial-cmd "$trial 40" --trial-timeout 60 --budget 1 --optimizer random --json \
    > "$T/t3.json" 2> "$T/t3.err"
took=$(( $(date +%s) - start ))
check "a step Slurm kills at its time limit is a failed trial with Slurm's reason (${took} s)" \
    python3 - "$T/t3.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed" and "DUE TO TIME LIMIT" in t["reason"], t
assert t["reason"].startswith("slurm: STEP"), t
PY
n=0
while [ $n -lt 50 ] && [ -n "$(squeue -h)" ]; do sleep 0.2; n=$((n + 1)); done
check "no job is left after the sessions" sh -c "[ -z \"\$(squeue -h)\" ]"

slurm_nothing_left

[ "$fails" -eq 0 ] && echo "slurm_steps: all passed" || echo "slurm_steps: $fails failed"
[ "$fails" -eq 0 ]
