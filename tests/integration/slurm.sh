#!/bin/sh
# Slurm as a backend, against a real private Slurm 22.05 (tests/slurm-harness.sh: n1,n2 with
# gpu:t4:2 and 4 CPUs, n3,n4 with gpu:v100:4 and 8 CPUs; partitions debug and t4): the
# inventory read from the controller, here and through a login node over SSH
# (tests/sshd-harness.sh), the watch's back-off, tuning trials as srun steps of one
# allocation. The trap stops every daemon and job it started.
set -u
suite=slurm scratch=slurm suite_slurm=1 suite_sshd=1
. "$(dirname "$0")/lib/suite.sh"
suite_stop() { [ -n "${TUNE_PID:-}" ] && kill "$TUNE_PID" 2>/dev/null; }
slurm_suite_start

echo "inventory"
"$bin" hosts --slurm --json > "$T/h1.json" 2> "$T/h1.err"
rc=$?
check "hosts --slurm lists the four nodes, idle, with their GPUs and partitions (exit $rc)" \
    python3 - "$T/h1.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "0", sys.argv[2]
n = {x["name"]: x for x in d["nodes"]}
assert sorted(n) == ["n1", "n2", "n3", "n4"], n
assert all(x["state"] == "idle" for x in n.values()), n
assert n["n1"]["gpus"] == 2 and n["n1"]["gpu_type"] == "t4" and n["n1"]["cpus"] == 4
assert n["n3"]["gpus"] == 4 and n["n3"]["memory_mb"] == 4000 and n["n3"]["features"] == "v100"
assert sorted(n["n1"]["partitions"].split(",")) == ["debug", "t4"], n["n1"]
assert n["n1"]["machine_type"] != n["n3"]["machine_type"]
PY
"$bin" hosts --slurm --partition t4 > "$T/h2.out" 2>&1
check "--partition t4 lists n1 and n2 only" \
    sh -c "grep -q '^n1 ' '$T/h2.out' && grep -q '^n2 ' '$T/h2.out' && ! grep -q '^n3 ' '$T/h2.out'"

scontrol update nodename=n4 state=drain reason="tunedeck test: fan"
sbatch -o /dev/null -J hold -w n3 --gres=gpu:v100:1 -n 1 --wrap 'sleep 300' > /dev/null
n=0
while [ $n -lt 50 ] && ! squeue -h -t R -n hold | grep -q .; do sleep 0.1; n=$((n + 1)); done
"$bin" hosts --slurm > "$T/h3.out" 2>&1
rc=$?
check "a drained node and a busy one show as such, with the reason; exit 1 (got $rc)" \
    sh -c "[ $rc -eq 1 ] && grep -q '^n4 .*drain .*tunedeck test: fan' '$T/h3.out' && grep -q '^n3 .*mixed' '$T/h3.out'"

printf '{"name": "tdtest", "backend": "slurm", "partition": "debug",\n "trial": {"command": "true"}}\n' \
    > "$T/inv.json"
"$bin" hosts --cluster "$T/inv.json" --json > "$T/h4.json" 2> "$T/h4.err"
check "an inventory with \"backend\": \"slurm\" reads the controller too" \
    python3 -c "import json; d=json.load(open('$T/h4.json')); assert len(d['nodes']) == 4 and d['partition'] == 'debug', d"

echo "login node over ssh"
harness_init "$T/h"
harness_start 1
# A login node finds its cluster through /etc/slurm; here wrappers first on the login
# node's PATH (the harness's bin folder) point the real commands at the harness's config.
# scancel writes its arguments to T/scancel-login first: what was cancelled on the login node.
for c in sinfo squeue scontrol salloc sbatch scancel srun; do
    { echo '#!/bin/sh'
      [ "$c" = scancel ] && echo "echo \"\$*\" >> '$T/scancel-login'"
      echo "SLURM_CONF='$SLURM_CONF' exec /usr/bin/$c \"\$@\""
    } > "$T/h/bin/$c"
    chmod 755 "$T/h/bin/$c"
done
login="$(harness_addr 1)"
printf '{"name": "tdtest", "backend": "slurm", "login": "%s",
 "ssh": {"user": "root", "port": %s, "identity": "%s/id_ed25519",
         "known_hosts": "%s/known_hosts", "connect_timeout_s": 5},
 "trial": {"command": "true"}}\n' "$login" "$H_PORT" "$T/h" "$T/h" > "$T/inv-login.json"
( unset SLURM_CONF
  "$bin" hosts --cluster "$T/inv-login.json" --json > "$T/h5.json" 2> "$T/h5.err" )
check "the same through the login node named by the inventory (one SSH session)" \
    python3 -c "import json; d=json.load(open('$T/h5.json')); assert d['where'] == '$login' and len(d['nodes']) == 4, d"
sed 's/"login": "[^"]*"/"login": "127.0.0.99"/' "$T/inv-login.json" > "$T/inv-bad.json"
"$bin" hosts --cluster "$T/inv-bad.json" > "$T/h6.out" 2>&1
rc=$?
check "an unreachable login node is an error that names it (exit $rc)" \
    sh -c "[ $rc -ne 0 ] && grep -q '127.0.0.99' '$T/h6.out'"

scancel -n hold
scontrol update nodename=n4 state=resume

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

echo "PyTorch ranks per device through srun"
# trial.ranks "per-device" on the t4 partition: each srun task starts its node's ranks
# (cpu, gpu0, gpu1: gloo on CPU here) with MASTER_ADDR the NodeAddr of rank 0's node.
PY=/usr/bin/python3
printf '{"name": "t4r", "backend": "slurm", "partition": "t4",
 "trial": {"ranks": "per-device", "master_port": %d}}\n' $((20000 + $$ % 20000)) > "$T/inv-ranks.json"
printf '{"name": "mlp", "model_mb": 0.1, "batch": 32, "iterations": 4, "warmup": 1}\n' > "$T/mlp.json"
ddp="OMP_NUM_THREADS=1 $PY $root/examples/pytorch_ddp.py --tag slurm-$$"
"$bin" tune --cluster "$T/inv-ranks.json" --job "$T/mlp.json" --launcher slurm --trial-cmd "$ddp" \
    --budget 1 --optimizer uniform-devices --trial-timeout 120 --no-journal --no-prune --json \
    > "$T/t4.json" 2> "$T/t4.err"
check "a PyTorch DDP trial with 6 ranks over 2 Slurm nodes (one per device) measures its iterations" \
    python3 - "$T/t4.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "ok" and t["time_s"] > 0, t
ranks = [m["name"] for m in t["schedule"]["machines"] if m["worker"]
         for d in m["devices"] if d["inputs"] > 0]
assert len(ranks) == 6 and sorted(set(ranks)) == ["n1", "n2"], ranks
PY
"$bin" tune --cluster "$T/inv-ranks.json" --job "$T/mlp.json" --launcher slurm \
    --trial-cmd "$ddp --crash-rank 1" --budget 1 --optimizer uniform-devices --trial-timeout 120 \
    --no-journal --json > "$T/t5.json" 2> "$T/t5.err"
check "a rank that crashes fails the trial with the rank's own error text" \
    python3 - "$T/t5.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
assert "rank 1 on n1" in t["reason"] and "crashing on purpose" in t["reason"], t["reason"]
PY
n=0
while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f -- "--tag slurm-$$" > /dev/null; }; do
    sleep 0.2; n=$((n + 1))
done
ranks_left=$(pgrep -f -- "--tag slurm-$$" | wc -l)
check "no rank and no job left ($ranks_left ranks)" sh -c "[ -z \"\$(squeue -h)\" ] && [ $ranks_left -eq 0 ]"

echo "trials through the login node"
# The inventory names the loopback sshd as its login node: salloc, every trial's srun (the
# schedule on its standard input, the protocol back on its output), the scancel of a stopped
# trial's steps and the allocation's release all run there, over one SSH session whose host
# key is checked against the test's known_hosts. Here, Slurm's commands are stand-ins that
# leave a mark, so a command run here instead shows.
sed 's/"backend": "slurm",/"backend": "slurm", "partition": "t4",/' "$T/inv-login.json" \
    > "$T/inv-login-t4.json"
mkdir -p "$T/here"
for c in sinfo squeue scontrol salloc scancel srun; do
    printf '#!/bin/sh\necho %s >> %s/here/ran\nexit 1\n' "$c" "$T" > "$T/here/$c"
    chmod 755 "$T/here/$c"
done
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

# Ctrl-C mid-trial (a background job of sh starts with SIGINT ignored: env gives it back).
env -u SLURM_CONF PATH="$T/here:$PATH" env --default-signal=INT "$bin" tune \
    --cluster "$T/inv-login-t4.json" --job "$T/job.json" --launcher slurm --optimizer random \
    --trial-cmd "$trial 30 login-$$" --budget 2 --json > "$T/l3.json" 2> "$T/l3.err" &
TUNE_PID=$!
n=0 # the step shows in squeue before its task has started the trial: wait for the trial
while [ $n -lt 150 ] && ! pgrep -f "^python3 [^ ]*trial.py 30 login-$$" > /dev/null; do
    sleep 0.2; n=$((n + 1))
done
running=$(pgrep -f "^python3 [^ ]*trial.py 30 login-$$" | wc -l)
squeue -h -s -o %j | grep -q tunedeck-trial || running=0
kill -INT "$TUNE_PID"
wait "$TUNE_PID"
rc=$?
TUNE_PID=""
n=0
while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f "login-$$" > /dev/null; }; do
    sleep 0.2; n=$((n + 1))
done
left=$(pgrep -f "login-$$" | wc -l)
check "a session stopped by Ctrl-C mid-trial ($running trial processes then; exit $rc) leaves no step, no allocation and no process ($left)" \
    sh -c "[ $running -ge 1 ] && [ $rc -eq 130 ] && [ -z \"\$(squeue -h)\" ] &&
           [ -z \"\$(squeue -h -s)\" ] && [ $left -eq 0 ] && [ ! -e '$T/here/ran' ]"

# settle MARK: waits (10 s at most) until no job, no step and no process with MARK in its
# command line is left (the trial's, and the srun client on the login node: it carries the
# trial command); sets left to the processes still there.
settle() {
    n=0
    while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || [ -n "$(squeue -h -s)" ] ||
                             pgrep -f "$1" > /dev/null; }; do
        sleep 0.2; n=$((n + 1))
    done
    left=$(pgrep -f "$1" | wc -l)
}
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
    --trial-cmd "sh $T/slow.sh prune-$$" --budget 2 > "$T/l4.json" 2> "$T/l4.err"
check "the probe and a trial 10 times slower are pruned through the login node, with why" \
    python3 - "$T/l4.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert len(t) == 2 and all(x["status"] == "pruned" for x in t), t
assert "probe: stopped after 5 of 20 iterations" in t[0]["reason"], t[0]
assert "pruned after 2 of 20 iterations" in t[1]["reason"], t[1]
assert "fastest 10 s > 5 x best 1 s" in t[1]["reason"], t[1]
PY
settle "prune-$$"
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

# A trial past its time limit through the login node: Slurm's unit is the minute, so a 60 s
# --trial-timeout is --time=1 on the login node's srun, and slurmctld ends the step 60 to
# 90 s in; srun there says why (its stepd's line), and that is the failed trial's reason.
rm -f "$T/scancel-login"
start=$(date +%s)
login_tune "$T/l5.json" "$T/l5.err" --trial-cmd "$trial 40 limit-$$" --trial-timeout 60 \
    --budget 1 --no-prune
took=$(( $(date +%s) - start ))
check "a trial past its time limit is a failed trial with Slurm's reason, through the login node (${took} s)" \
    python3 - "$T/l5.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed" and "DUE TO TIME LIMIT" in t["reason"], t
assert t["reason"].startswith("slurm: STEP"), t
PY
settle "limit-$$"
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

echo "watch"
"$bin" hosts --slurm --watch --watch-for 9 --max-interval 8 > "$T/w1.out" 2>&1
calls=$(sed -n 's/^watched: \([0-9]*\) controller calls/\1/p' "$T/w1.out")
check "a quiet cluster watched for 9 s: never more than a call a second, fewer with back-off ($calls calls)" \
    sh -c "[ -n '$calls' ] && [ '$calls' -le 10 ] && [ '$calls' -ge 2 ]"

"$bin" hosts --slurm --watch --watch-for 40 --max-interval 4 > "$T/w2.out" 2>&1 &
WATCH_PID=$!
sleep 3
slurm_ctld_stop
sleep 14 # longer than sinfo's own retries, so a round fails
slurm_ctld_start
wait "$WATCH_PID"
rc=$?
check "a controller that goes away: the watch says so, keeps polling, and shows the cluster again (exit $rc)" \
    sh -c "grep -q 'the controller did not answer' '$T/w2.out' &&
           [ \$(grep -c '^n1 ' '$T/w2.out') -ge 2 ] && [ $rc -eq 0 ]"

slurm_nothing_left

[ "$fails" -eq 0 ] && echo "slurm: all passed" || echo "slurm: $fails failed"
[ "$fails" -eq 0 ]
