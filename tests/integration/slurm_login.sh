#!/bin/sh
# Tuning trials through a login node, against a real private Slurm 22.05
# (tests/slurm-harness.sh: n1,n2 with gpu:t4:2, n3,n4 with gpu:v100:4; partitions debug and
# t4) and a loopback sshd as the login node (tests/sshd-harness.sh): 3 trials through the
# login node's srun, a failing command with its own text, a Ctrl-C mid-trial, two pruned
# trials (each step's scancel seen on the login node), the login node's sshd stopped
# mid-trial and started again (~20 s: the next trial waits for it, its reconnects backing
# off, then the session goes on), a trial's step that the drop left running cancelled on the
# login node once it answers again (before the next trial starts), a session Ctrl-C'd while
# the login node is down (its allocation said, with the command, and the cut trial's step
# with it; the resume releases it), a Ctrl-C while salloc waits there for busy nodes (its
# queued job cancelled there) and a trial past its time limit (60 to 90 s: most of this
# suite's 2 min), with no Slurm command reachable here and no step, allocation or process
# left after each. The inventory, PyTorch ranks and the watch are in
# slurm.sh, trials as srun steps from here in slurm_steps.sh. The trap stops every daemon,
# job and process it started.
set -u
suite=slurm_login scratch=slurm-login suite_slurm=1 suite_sshd=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurm_login.sh"
# The run is signalled only while its command line is still this suite's (pid_kill_named,
# lib/procs_left.sh): one that ended may have left its number to another suite's process.
suite_stop() { [ -n "${TUNE_PID:-}" ] && pid_kill_named TERM "$TUNE_PID" "--cluster $T/"; }
slurm_suite_start
slurm_login_start
printf '{"name": "tdtest", "backend": "slurm", "login": "%s", "partition": "t4",
 "ssh": {"user": "root", "port": %s, "identity": "%s/id_ed25519",
         "known_hosts": "%s/known_hosts", "connect_timeout_s": 5},
 "trial": {"command": "true"}}\n' "$login" "$H_PORT" "$T/h" "$T/h" > "$T/inv-login-t4.json"
printf '{"name": "tiny", "model_mb": 10, "batch": 64, "iterations": 4, "warmup": 1}\n' > "$T/job.json"
trial="python3 $root/tests/fixtures/trial.py"
# Markers of this run's processes end in x after the PID: pgrep -f "login-123x" cannot
# match a run beside it with PID 1234 (console_slurm.sh's "clogin-1234x").

echo "trials through the login node"
# The inventory names the loopback sshd as its login node: salloc, every trial's srun (the
# schedule on its standard input, the protocol back on its output), the scancel of a stopped
# trial's steps and the allocation's release all run there, over one SSH session whose host
# key is checked against the test's known_hosts. Here, Slurm's commands are stand-ins that
# leave a mark, so a command run here instead shows.
slurm_standins
login_tune() { # OUT ERR TUNE-ARGS...: tune through the login node, no Slurm here
    out="$1" err="$2"; shift 2
    env -u SLURM_CONF PATH="$T/here:$PATH" "$bin" tune --cluster "$T/inv-login-t4.json" \
        --job "$T/job.json" --launcher slurm --optimizer random --json "$@" > "$out" 2> "$err"
}
login_tune "$T/l1.json" "$T/l1.err" --trial-cmd "$trial" --budget 3
check "3 trials through the login node's srun, each ok with a measured time" \
    python3 - "$T/l1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["trials"]) == 3, r["trials"]
assert all(t["status"] == "ok" and t["time_s"] > 0.05 for t in r["trials"]), r["trials"]
PY
n=0
while [ $n -lt 50 ] && [ -n "$(squeue -h)" ]; do sleep 0.2; n=$((n + 1)); done
check "its allocation is released through the login node; no Slurm command ran here" \
    sh -c "[ -z \"\$(squeue -h)\" ] && [ ! -e '$T/here/ran' ]"

login_tune "$T/l2.json" "$T/l2.err" --budget 1 \
    --trial-cmd "echo 'no dataset at /data/tdtest' >&2; exit 3"
check "a trial command that fails there is a failed trial with its own error text" \
    python3 - "$T/l2.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
assert "no dataset at /data/tdtest" in t["reason"] and "exit" in t["reason"], t["reason"]
PY

# Nodes of two GPU counts (partition debug): one heterogeneous step through the login node's
# srun, whose components each read the schedule from a file the login node's shell holds as
# fd 3 (on a pipe, only the first component would read it: trial.py fails on no input).
sed 's/"partition": "t4"/"partition": "debug"/' "$T/inv-login-t4.json" > "$T/inv-login-debug.json"
env -u SLURM_CONF PATH="$T/here:$PATH" "$bin" tune --cluster "$T/inv-login-debug.json" \
    --job "$T/job.json" --launcher slurm --optimizer uniform-devices --json --budget 1 \
    --trial-cmd "$trial" > "$T/l-het.json" 2> "$T/l-het.err"
check "nodes of two GPU counts: one step through the login node, every task read the schedule" \
    python3 - "$T/l-het.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert sorted(m["name"] for m in t["schedule"]["machines"] if m["worker"]) == \
    ["n1", "n2", "n3", "n4"], t
assert t["status"] == "ok" and t["time_s"] > 0.05, t
PY

# Ctrl-C mid-trial (a background job of sh starts with SIGINT ignored: env gives it back).
env -u SLURM_CONF PATH="$T/here:$PATH" env --default-signal=INT "$bin" tune \
    --cluster "$T/inv-login-t4.json" --job "$T/job.json" --launcher slurm --optimizer random \
    --trial-cmd "$trial 30 login-$$x" --budget 2 --json > "$T/l3.json" 2> "$T/l3.err" &
TUNE_PID=$!
n=0 # the step shows in squeue before its task has started the trial: wait for the trial
while [ $n -lt 150 ] && ! pgrep -f "^python3 [^ ]*trial.py 30 login-$$x" > /dev/null; do
    sleep 0.2; n=$((n + 1))
done
running=$(pgrep -f "^python3 [^ ]*trial.py 30 login-$$x" | wc -l)
squeue -h -s -o %j | grep -q tunedeck-trial || running=0
kill -INT "$TUNE_PID"
wait "$TUNE_PID"
rc=$?
TUNE_PID=""
n=0
while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f "login-$$x" > /dev/null; }; do
    sleep 0.2; n=$((n + 1))
done
left=$(pgrep -f "login-$$x" | wc -l)
check "a session stopped by Ctrl-C mid-trial ($running trial processes then; exit $rc) leaves no step, no allocation and no process ($left)" \
    sh -c "[ $running -ge 1 ] && [ $rc -eq 130 ] && [ -z \"\$(squeue -h)\" ] &&
           [ -z \"\$(squeue -h -s)\" ] && [ $left -eq 0 ] && [ ! -e '$T/here/ran' ]"
check "the Ctrl-C'd session prints its summary: the trial interrupted, the command to resume" \
    python3 - "$T/l3.json" "$T/l3.err" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["interrupted"] == "SIGINT" and r["trials_done"] == 0, r
assert [t["status"] for t in r["trials"]] == ["interrupted"], r["trials"]
assert r["resume"] == "tunedeck tune --resume %s --json" % r["session"], r
assert "to go on: " + r["resume"] in open(sys.argv[2]).read()
PY

# Pruning through the login node: a 20-iteration job's first trial is a 5-iteration probe
# (core/opt/prune.h); the second reports 10 times its time per iteration and is pruned in
# warm-up after 2, 5 s apart. Each stop is scancel of its step there, then TERM to srun.
printf '{"name": "tiny20", "model_mb": 10, "batch": 64, "iterations": 20, "warmup": 3}\n' \
    > "$T/job20.json"
cat > "$T/slow.sh" <<'SH'
cat > /dev/null
t=1 pause=0.3
if [ "$TUNEDECK_TRIAL" = 2 ]; then t=10 pause=5; fi
i=0
while [ $i -lt 20 ]; do
    printf '{"event":"iteration","iter":%d,"time_s":%s}\n' $i $t
    sleep $pause
    i=$((i + 1))
done
SH
rm -f "$T/scancel-login"
env -u SLURM_CONF PATH="$T/here:$PATH" "$bin" tune --cluster "$T/inv-login-t4.json" \
    --job "$T/job20.json" --launcher slurm --optimizer random --json \
    --trial-cmd "sh $T/slow.sh prune-$$x" --budget 2 > "$T/l4.json" 2> "$T/l4.err"
check "the probe and a trial 10 times slower are pruned through the login node, with why" \
    python3 - "$T/l4.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert len(t) == 2 and all(x["status"] == "pruned" for x in t), t
assert "probe: stopped after 5 of 20 iterations" in t[0]["reason"], t[0]
assert "pruned after 2 of 20 iterations" in t[1]["reason"], t[1]
assert "fastest 10 s > 5 x best 1 s" in t[1]["reason"], t[1]
PY
settle "prune-$$x"
check "each pruned trial's step was cancelled by scancel on the login node, then the allocation; no step, allocation or process is left ($left); no Slurm command ran here" \
    python3 - "$T/scancel-login" "$left" "$T/here/ran" <<'PY'
import os, re, subprocess, sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
steps = [l for l in lines if re.fullmatch(r"[0-9]+\.[0-9]+( [0-9]+\.[0-9]+)*", l)]
job = [l for l in lines if re.fullmatch(r"[0-9]+", l)]
assert len(steps) == 2 and len(job) == 1 and lines[-1] == job[0], lines
assert all(s.split(".")[0] == job[0] for s in steps), lines
assert sys.argv[2] == "0", sys.argv[2]
assert not subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout
assert not subprocess.run(["squeue", "-h", "-s"], capture_output=True, text=True).stdout
assert not os.path.exists(sys.argv[3])
PY

# The login node's sshd goes away mid-trial and comes back. The trial under way fails with
# the dropped connection's words (its srun there runs on to its step's end: nothing of it is
# left at the end); the next trial waits for the login node instead of failing "unreachable" too, each
# reconnect said once as it fails, the back-off spacing them (the delays it plans grow); once
# sshd answers again the session goes on and ends with its budget of measured trials, the
# one measured before the outage kept. Three refused attempts (~3.5 s) before sshd starts
# again: with no back-off the four planned delays would all be alike (0.25 to 0.5 s), with it
# the last is 2 to 4 s.
echo "the login node's sshd stopped mid-trial, then started again"
# timeout: a session that would wait for the login node forever ends (TERM), a bound for
# failure only
env -u SLURM_CONF PATH="$T/here:$PATH" TUNEDECK_STATE_DIR="$T/state6" timeout 180 "$bin" tune \
    --cluster "$T/inv-login-t4.json" --job "$T/job.json" --launcher slurm --optimizer random \
    --no-prune --json --trial-cmd "$trial 1 outage-$$x" --budget 4 > "$T/l6.json" 2> "$T/l6.err" &
TUNE_PID=$!
wait_until 60 sh -c "grep -qs '\"event\":\"started\",\"trial\":2,' $T/state6/sessions/*.jsonl"
wait_until 30 pgrep -f "^python3 [^ ]*trial.py 1 outage-$$x" > /dev/null
before=$(grep -hs '"event":"finished","trial":1,' "$T"/state6/sessions/*.jsonl)
harness_stop 1
wait_until 30 sh -c "[ \$(grep -c 'down (retry in' '$T/l6.err') -ge 4 ]"
harness_start 1 || fail "the login node's sshd did not start again"
wait "$TUNE_PID"
rc=$?
TUNE_PID=""
check "the login node's outage is said once per failed attempt, each with ssh's words: the dropped connection, then Connection refused; the planned delays grow; the end of it is said" \
    python3 - "$T/l6.err" "$login" "$H_PORT" <<'PY'
import re, sys
err, login, port = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
down = re.findall(r"tunedeck tune: login node %s: down \(retry in ([0-9.]+) s\): ssh to %s "
                  r"failed: (.*); new trials wait for it\n" % (login, login), err)
assert len(down) >= 4, err
assert down[0][1].startswith("connection closed: "), down[0]
refused = "connect to %s port %s: Connection refused" % (login, port)
assert all(why == refused for _, why in down[1:]), down
delays = [float(s) for s, _ in down]
assert all(b >= a for a, b in zip(delays, delays[1:])), delays
assert delays[3] >= 3 * delays[0], delays
assert err.count("login node %s answers again: new trials go on\n" % login) == 1, err
PY
check "the session went on once the login node answered again: its budget of trials, each measured but the one the drop cut, the one measured before kept (exit $rc)" \
    python3 - "$T/l6.json" "$before" "$rc" "$login" <<'PY'
import json, sys
r, before, login = json.load(open(sys.argv[1])), json.loads(sys.argv[2]), sys.argv[4]
assert sys.argv[3] == "0", sys.argv[3]
t = r["trials"]
assert len(t) == 4 and [x["status"] for x in t] == ["ok", "unreachable", "ok", "ok"], t
assert t[1]["reason"].startswith("ssh failed: ssh to %s failed: connection closed" % login), t[1]
assert all(x["time_s"] > 0.05 for x in t if x["status"] == "ok"), t
assert before["status"] == "ok" and abs(t[0]["time_s"] - before["time_s"]) < 1e-9, (before, t[0])
PY
settle "outage-$$x"
check "no step, allocation or process is left ($left); no Slurm command ran here" \
    sh -c "[ $left -eq 0 ] && [ -z \"\$(squeue -h)\" ] && [ ! -e '$T/here/ran' ]"

# The step of a trial the login node's drop cut runs on there (its srun client too, nobody
# reading it), holding the allocation's GPUs: the next trial's step would wait behind it, or
# share its nodes. Trial 2 runs long (20 s between iterations) and is cut; once the login
# node answers again its step is cancelled there before trial 3 starts, and that is said
# (before, nothing cancelled it: trial 3 waited for it to end by itself). Each trial
# writes the steps running as it starts.
echo "the step of a trial cut by the login node's drop is cancelled once it answers again"
cat > "$T/cut.sh" <<SH
squeue -h -s -o '%i %j' > "$T/steps-at-start-\$TUNEDECK_TRIAL"
pause=0.2
[ "\$TUNEDECK_TRIAL" = 2 ] && pause=20
exec python3 $root/tests/fixtures/trial.py \$pause "\$@"
SH
rm -f "$T/scancel-login" "$T"/steps-at-start-*
env -u SLURM_CONF PATH="$T/here:$PATH" TUNEDECK_STATE_DIR="$T/state9" timeout 300 "$bin" tune \
    --cluster "$T/inv-login-t4.json" --job "$T/job.json" --launcher slurm --optimizer random \
    --no-prune --json --trial-cmd "sh $T/cut.sh cut-$$x" --budget 3 > "$T/l9.json" 2> "$T/l9.err" &
TUNE_PID=$!
wait_until 60 pgrep -f "^python3 [^ ]*trial.py 20 cut-$$x" > /dev/null
cut=$(squeue -h -s -o '%i %j' | sed -n 's/^\([0-9]*\.[0-9]*\) tunedeck-trial$/\1/p')
harness_stop 1
wait_until 30 grep -q 'down (retry in' "$T/l9.err"
ran_on=$(squeue -h -s -o %i | grep -cx "$cut")
harness_start 1 || fail "the login node's sshd did not start again"
wait "$TUNE_PID"
rc=$?
TUNE_PID=""
check "trial 2's step ($cut, running on after the drop: $ran_on) is cancelled by scancel on the login node once it answers, before trial 3 starts, and that is said (exit $rc)" \
    python3 - "$T/l9.json" "$T/l9.err" "$T/scancel-login" "$T/steps-at-start-3" "$cut" \
        "$ran_on" "$login" "$rc" <<'PY'
import json, sys
r, err = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
cut, ran_on, login, rc = sys.argv[5:9]
assert rc == "0" and ran_on == "1" and cut, (rc, ran_on, cut)
lines = open(sys.argv[3]).read().split("\n")[:-1]
assert lines[0] == cut and lines[-1] == cut.split(".")[0], lines
running = open(sys.argv[4]).read().split("\n")
assert not [l for l in running if l.split(" ")[0] == cut], running
t = r["trials"]
assert [x["status"] for x in t] == ["ok", "unreachable", "ok"], t
assert ("; its step %s may still run: cancelled once the login node answers again" % cut) in \
    t[1]["reason"], t[1]["reason"]
assert ("tunedeck tune: login node %s: cancelled step %s left running by trial 2 when its "
        "connection dropped\n" % (login, cut)) in err, err
assert err.index("answers again: new trials go on") < err.index("cancelled step"), err
PY
settle "cut-$$x"
check "no step, allocation or process is left ($left); no Slurm command ran here" \
    sh -c "[ $left -eq 0 ] && [ -z \"\$(squeue -h)\" ] && [ ! -e '$T/here/ran' ]"

# A session that ends while the login node is down (Ctrl-C during the wait for it) cannot
# release its allocation at once: its scancel runs on the login node. Its close waits for the
# login node (30 s at most), saying so; a second Ctrl-C ends that wait. It then says on stderr
# that the allocation is left, naming the job and the command that releases it (before, it
# said nothing, and the allocation held n1 and n2 until its time limit); the journal keeps the
# allocation, and the resume, once the login node answers, releases it before its own salloc
# (which it would otherwise find busy).
echo "a session ended while the login node is down, then resumed"
env -u SLURM_CONF PATH="$T/here:$PATH" TUNEDECK_STATE_DIR="$T/state7" env --default-signal=INT \
    "$bin" tune --cluster "$T/inv-login-t4.json" --job "$T/job.json" --launcher slurm \
    --optimizer random --no-prune --json --trial-cmd "$trial 1 leak-$$x" --budget 3 \
    > "$T/l7.json" 2> "$T/l7.err" &
TUNE_PID=$!
wait_until 60 sh -c "grep -qs '\"event\":\"finished\",\"trial\":1,' $T/state7/sessions/*.jsonl"
wait_until 30 pgrep -f "^python3 [^ ]*trial.py 1 leak-$$x" > /dev/null # trial 2's: it is cut
harness_stop 1
wait_until 30 grep -q 'down (retry in' "$T/l7.err"
kill -INT "$TUNE_PID"
# its close waits for the login node (30 s at most); one more Ctrl-C ends the wait
wait_until 60 grep -q 'waiting up to 30 s to release allocation' "$T/l7.err"
kill -INT "$TUNE_PID"
wait "$TUNE_PID"
rc=$?
job=$(squeue -h -o '%i|%j' | sed -n "s/^\([0-9]*\)|tunedeck-tune-$TUNE_PID\$/\1/p")
TUNE_PID_WAS=$TUNE_PID
TUNE_PID=""
check "the allocation the login node's outage kept it from releasing (job '$job', exit $rc) is said on stderr, with the command that releases it" \
    python3 - "$T/l7.err" "$job" "$TUNE_PID_WAS" "$login" "$rc" <<'PY'
import sys
err, job, pid, login, rc = open(sys.argv[1]).read(), *sys.argv[2:]
assert rc == "130" and job, (rc, job)
said = ("tunedeck tune: the session's allocation, Slurm job %s (tunedeck-tune-%s), was not "
        "released: " % (job, pid))
assert said in err, err
line = err[err.index(said):].split("\n")[0]
assert ("it holds the inventory's nodes until its time limit: release it with `scancel %s` on %s"
        % (job, login)) in line, line
assert "`tunedeck tune --resume " in line, line
assert line.startswith(said + "the wait for %s was interrupted (ssh to %s failed: " % (login, login)), line
assert err.count("tunedeck tune: login node %s: down; waiting up to 30 s to release allocation %s "
                 % (login, job)) == 1, err
assert "still stopping" not in err, err
PY
check "the step of the trial the outage cut, which no scancel reached, is said with the allocation whose release ends it" \
    python3 - "$T/l7.err" "$job" "$login" <<'PY'
import re, sys
err, job, login = open(sys.argv[1]).read(), *sys.argv[2:]
said = re.findall(r"tunedeck tune: login node %s: step %s\.[0-9]+ left running by trial 2 when "
                  r"its connection dropped could not be cancelled \(the login node does not "
                  r"answer\); the release of the session's allocation, Slurm job %s, ends it\n"
                  % (re.escape(login), job, job), err)
assert len(said) == 1, err
PY
check "the journal keeps the allocation, and the trial measured before the outage" \
    python3 - "$job" "$TUNE_PID_WAS" "$login" "$T"/state7/sessions/*.jsonl <<'PY'
import json, sys
job, pid, login = sys.argv[1:4]
ev = [json.loads(l) for l in open(sys.argv[4])]
alloc = [e for e in ev if e["event"] == "slurm_allocation"]
assert len(alloc) == 1 and alloc[0]["job"] == job, alloc
assert alloc[0]["name"] == "tunedeck-tune-" + pid and alloc[0]["where"] == login, alloc
assert not [e for e in ev if e["event"] == "slurm_allocation_released"], ev
ok = [e for e in ev if e["event"] == "finished" and e["status"] == "ok"]
assert ok and ok[0]["trial"] == 1, ev
PY
harness_start 1 || fail "the login node's sshd did not start again"
sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$T/l7.json")
env -u SLURM_CONF PATH="$T/here:$PATH" TUNEDECK_STATE_DIR="$T/state7" "$bin" tune \
    --resume "$sid" --json > "$T/l8.json" 2> "$T/l8.err"
rc=$?
settle "leak-$$x"
check "the resume releases the allocation left (scancel there) before its own, runs the session to its budget and releases its own: no allocation, step or process left ($left; exit $rc)" \
    python3 - "$T/l8.err" "$T/l8.json" "$job" "$login" "$rc" "$left" "$T/here/ran" \
        "$T"/state7/sessions/*.jsonl <<'PY'
import json, os, subprocess, sys
err = open(sys.argv[1]).read()
job, login, rc, left = sys.argv[3:7]
assert rc == "0" and left == "0", (rc, left, err)
r = json.load(open(sys.argv[2]))
assert ("tunedeck tune: the allocation an earlier run of this session left, Slurm job %s "
        "(tunedeck-tune-" % job) in err, err
assert "), is released (scancel on %s)\n" % login in err, err
assert len(r["trials"]) == 3 and r["trials"][0]["status"] == "ok", r["trials"]
ev = [json.loads(l) for l in open(sys.argv[8])]
rel = [e for e in ev if e["event"] == "slurm_allocation_released"]
alloc = [e for e in ev if e["event"] == "slurm_allocation"]
assert len(alloc) == 2 and [e["job"] for e in rel] == [job, alloc[1]["job"]], (alloc, rel)
assert rel[0]["result"] == "released", rel
assert not subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout
assert not subprocess.run(["squeue", "-h", "-s"], capture_output=True, text=True).stdout
assert not os.path.exists(sys.argv[7])
PY
# What the old code left would hold the nodes for the checks below.
[ -n "$job" ] && squeue -h -j "$job" 2>/dev/null | grep -q . && scancel "$job"
settle "leak-$$x"

# The budget spent while the login node is down (its last trial cut by the outage): the close
# waits for the login node, saying so once, and releases the allocation once it answers
# again: exit 0, no job left, the release journaled (before, the release failed at once: exit
# 4, the allocation held n1 and n2 until a resume or the operator released it).
echo "a session ended while the login node is down, which comes back within the wait"
end_down() { # N INVENTORY MARK: a 2-trial session, the login node stopped in its second trial
    env -u SLURM_CONF PATH="$T/here:$PATH" TUNEDECK_STATE_DIR="$T/state$1" timeout 180 \
        "$bin" tune --cluster "$2" --job "$T/job.json" --launcher slurm --optimizer random \
        --no-prune --json --trial-cmd "$trial 3 $3" --budget 2 > "$T/l$1.json" 2> "$T/l$1.err" &
    TUNE_PID=$!
    wait_until 60 sh -c "grep -qs '\"event\":\"started\",\"trial\":2,' $T/state$1/sessions/*.jsonl"
    wait_until 30 pgrep -f "^python3 [^ ]*trial.py 3 $3" > /dev/null
    harness_stop 1
}
end_down 11 "$T/inv-login-t4.json" "back-$$x"
wait_until 60 grep -q 'waiting up to' "$T/l11.err"
harness_start 1 || fail "the login node's sshd did not start again"
wait "$TUNE_PID"
rc=$?
job=$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "slurm_allocation" in l][0]["job"])' "$T"/state11/sessions/*.jsonl)
TUNE_PID=""
settle "back-$$x"
check "the close waited for the login node, said once, and released the allocation (job '$job') once it answered: exit $rc, no job left ($left), the release journaled" \
    python3 - "$T/l11.err" "$job" "$login" "$rc" "$left" "$T"/state11/sessions/*.jsonl <<'PY'
import json, subprocess, sys
err, job, login, rc, left = open(sys.argv[1]).read(), *sys.argv[2:6]
assert rc == "0" and left == "0", (rc, left, err)
wait = "tunedeck tune: login node %s: down; waiting up to 30 s to release allocation %s (ssh to %s failed: " % (login, job, login)
assert err.count(wait) == 1, err
assert err.count("tunedeck tune: login node %s answers again: allocation %s released\n" % (login, job)) == 1, err
assert "was not released" not in err, err
ev = [json.loads(l) for l in open(sys.argv[6])]
rel = [e for e in ev if e["event"] == "slurm_allocation_released"]
assert [(e["job"], e["result"]) for e in rel] == [(job, "released")], rel
assert not subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout
PY
# What the old code left would hold the nodes for the checks below.
[ -n "$job" ] && squeue -h -j "$job" 2>/dev/null | grep -q . && scancel "$job"
settle "back-$$x"

# The same past the wait's bound (the inventory's "slurm": {"release_wait_s": 2}): the
# allocation is said as left, with the command that releases it, exit 4, and the journal
# keeps it for the resume.
echo "a session ended while the login node is down past the wait's bound"
sed 's/"trial": {"command": "true"}}/"trial": {"command": "true"}, "slurm": {"release_wait_s": 2}}/' \
    "$T/inv-login-t4.json" > "$T/inv-login-wait2.json"
end_down 12 "$T/inv-login-wait2.json" "past-$$x"
wait "$TUNE_PID"
rc=$?
job=$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "slurm_allocation" in l][0]["job"])' "$T"/state12/sessions/*.jsonl)
TUNE_PID=""
check "past the bound the allocation (job '$job') is said as left with the command that releases it; exit $rc; the journal keeps it" \
    python3 - "$T/l12.err" "$job" "$login" "$rc" "$T"/state12/sessions/*.jsonl <<'PY'
import json, sys
err, job, login, rc = open(sys.argv[1]).read(), *sys.argv[2:5]
assert rc == "4", (rc, err)
assert err.count("tunedeck tune: login node %s: down; waiting up to 2 s to release allocation %s " % (login, job)) == 1, err
said = ("the session's allocation, Slurm job %s (tunedeck-tune-" % job)
line = err[err.index(said):].split("\n")[0]
assert "was not released: %s did not answer within 2 s (ssh to %s failed: " % (login, login) in line, line
assert "release it with `scancel %s` on %s" % (job, login) in line, line
ev = [json.loads(l) for l in open(sys.argv[5])]
assert [e["job"] for e in ev if e["event"] == "slurm_allocation"] == [job], ev
assert not [e for e in ev if e["event"] == "slurm_allocation_released"], ev
PY
harness_start 1 || fail "the login node's sshd did not start again"
[ -n "$job" ] && scancel "$job"
settle "past-$$x"

# Ctrl-C while salloc waits on the login node for busy nodes (a job of the test's holds n1):
# salloc there is sshd's session with no pty, which a closed channel does not reach, and
# sshd refuses a "signal" request for this root login: the stop is a scancel there of the job
# salloc said it queued, and salloc, its job revoked, ends at once. tune says so, exit 130.
# Before, the stop did not reach the login node: tune waited for salloc's --immediate (295 s
# here; 60 s is a bound for failure only, then it is KILLed and its job cancelled from here).
echo "Ctrl-C while salloc waits on the login node"
sed 's/"trial": {"command": "true"}}/"trial": {"command": "true"}, "slurm": {"command_timeout_s": 300}}/' \
    "$T/inv-login-t4.json" > "$T/inv-login-300s.json"
salloc --no-shell -J busy -p t4 -N 1 -w n1 --exclusive --gres=gpu:2 --immediate=20 2> "$T/busy.err"
busy=$(squeue -h -n busy -o %i)
env -u SLURM_CONF PATH="$T/here:$PATH" TUNEDECK_STATE_DIR="$T/state13" env --default-signal=INT \
    "$bin" tune --cluster "$T/inv-login-300s.json" --job "$T/job.json" --launcher slurm \
    --optimizer random --trial-cmd "$trial" --budget 1 > /dev/null 2> "$T/l13.err" &
TUNE_PID=$!
wait_until 30 sh -c "squeue -h -t PD -o %j | grep -qx tunedeck-tune-$TUNE_PID"
queued=$(squeue -h -t PD -o '%i %j' | sed -n "s/^\([0-9]*\) tunedeck-tune-$TUNE_PID\$/\1/p")
kill -INT "$TUNE_PID"
ended() { ! ps -o stat= -p "$1" | grep -qv '^Z'; } # gone, or a zombie not yet waited for
wait_until 60 ended "$TUNE_PID"
prompt=1
ended "$TUNE_PID" || { prompt=0; kill -KILL "$TUNE_PID"; }
wait "$TUNE_PID"
rc=$?
TUNE_PID_WAS=$TUNE_PID
TUNE_PID=""
[ "$prompt" = 0 ] && [ -n "$queued" ] && scancel "$queued"
# its scancel on the login node: the job goes (COMPLETING a moment)
wait_until 10 sh -c "! squeue -h -o '%j %T' | grep tunedeck-tune | grep -qv COMPLETING"
wait_until 10 sh -c "! pgrep -f job-name=tunedeck-tune-$TUNE_PID_WAS > /dev/null"
left=$(pgrep -f "job-name=tunedeck-tune-$TUNE_PID_WAS" | wc -l)
check "Ctrl-C while salloc waits on the login node (job '$queued'): tune ends (within the bound: $prompt; exit $rc), says so, the job gone, no salloc left there ($left), no Slurm command run here" \
    python3 - "$T/l13.err" "$queued" "$rc" "$left" "$prompt" "$T/here/ran" <<'PY'
import os, subprocess, sys
err, job, rc, left, prompt = open(sys.argv[1]).read(), *sys.argv[2:6]
assert prompt == "1" and rc == "130" and job and left == "0", (prompt, rc, job, left, err)
assert ("the session's allocation: stopped while salloc waited for it (job %s, which it had "
        "queued, is cancelled)" % job) in err, err
q = subprocess.run(["squeue", "-h", "-o", "%j %T"], capture_output=True, text=True).stdout
assert not [l for l in q.split("\n") if "tunedeck-tune" in l and "COMPLETING" not in l], q
assert not os.path.exists(sys.argv[6])
PY
[ -n "$busy" ] && scancel "$busy"
settle "tunedeck-tune-$TUNE_PID_WAS"

# A trial past its time limit through the login node: Slurm's unit is the minute, so a 60 s
# --trial-timeout is --time=1 on the login node's srun, and slurmctld ends the step 60 to
# 90 s in; srun there says why (its stepd's line), and that is the failed trial's reason.
rm -f "$T/scancel-login"
start=$(date +%s)
login_tune "$T/l5.json" "$T/l5.err" --trial-cmd "$trial 40 limit-$$x" --trial-timeout 60 \
    --budget 1 --no-prune
took=$(( $(date +%s) - start ))
check "a trial past its time limit is a failed trial with Slurm's reason, through the login node (${took} s)" \
    python3 - "$T/l5.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed" and "DUE TO TIME LIMIT" in t["reason"], t
assert t["reason"].startswith("slurm: STEP"), t
PY
settle "limit-$$x"
check "Slurm ended the step; the allocation is cancelled by scancel on the login node; no step, allocation or process is left ($left); no Slurm command ran here" \
    python3 - "$T/scancel-login" "$left" "$T/here/ran" <<'PY'
import os, re, subprocess, sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
assert lines and re.fullmatch(r"[0-9]+", lines[-1]), lines
assert all(l.split(".")[0] == lines[-1] for l in " ".join(lines).split()), lines
assert sys.argv[2] == "0", sys.argv[2]
assert not subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout
assert not subprocess.run(["squeue", "-h", "-s"], capture_output=True, text=True).stdout
assert not os.path.exists(sys.argv[3])
PY

slurm_nothing_left

[ "$fails" -eq 0 ] && echo "slurm_login: all passed" || echo "slurm_login: $fails failed"
[ "$fails" -eq 0 ]
