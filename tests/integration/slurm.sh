#!/bin/sh
# Slurm as a backend, against a real private Slurm 22.05 (tests/slurm-harness.sh: n1,n2 with
# gpu:t4:2 and 4 CPUs, n3,n4 with gpu:v100:4 and 8 CPUs; partitions debug and t4): the
# inventory read from the controller, here and through a login node over SSH
# (tests/sshd-harness.sh), PyTorch ranks per device through srun, the watch's back-off and
# a controller that goes away mid-watch, and last, on a second harness with n1 and n2 at
# NodeAddr ::1 (SLURM_IPV6=1), PyTorch ranks meeting at that address. Tuning trials as srun
# steps are in slurm_steps.sh, trials through the login node in slurm_login.sh. About 2 min.
# The trap stops every daemon and job it started.
set -u
suite=slurm scratch=slurm suite_slurm=1 suite_sshd=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurm_login.sh"
# The watch is signalled only while its environment is still this suite's (pid_kill_env,
# lib/procs_left.sh; its command line names nothing of the suite's): one that ended may have
# left its number to another suite's process.
suite_stop() { [ -n "${WATCH_PID:-}" ] && pid_kill_env TERM "$WATCH_PID" "TUNEDECK_STATE_DIR=$T/state"; }
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
# An idle node has no reason: its row must not end in the padding of that column.
"$bin" hosts --cluster "$T/inv.json" > "$T/h3c.out" 2>&1
check "no row of hosts --slurm's or a Slurm inventory's table ends in blanks" \
    sh -c "! grep -n '[[:blank:]]\$' '$T/h2.out' '$T/h3.out' '$T/h3c.out' && grep -q '^n1 ' '$T/h3c.out'"

echo "login node over ssh"
slurm_login_start
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

echo "PyTorch ranks per device through srun"
# trial.ranks "per-device" on the t4 partition: each srun task starts its node's ranks
# (cpu, gpu0, gpu1: gloo on CPU here) with MASTER_ADDR the NodeAddr of rank 0's node.
PY=/usr/bin/python3
printf '{"name": "t4r", "backend": "slurm", "partition": "t4",
 "trial": {"ranks": "per-device", "master_port": %d}}\n' $((S_CTLD_PORT + 5)) > "$T/inv-ranks.json"
printf '{"name": "mlp", "model_mb": 0.1, "batch": 32, "iterations": 4, "warmup": 1,
 "sync": "allreduce"}\n' > "$T/mlp.json"
ddp="OMP_NUM_THREADS=1 $PY $root/examples/pytorch_ddp.py --tag slurm-$$x"
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
# Rank 1 raises at step 2, after the rendezvous: every peer then fails in that step's
# all_reduce ("Connection closed by peer"), n1's beside it and n2's, whose lines srun may
# forward before n1's. The reason is rank 1's alone, its node's notice first: nothing of
# the peers' lost connections is taken for the cause, whichever node's lines came first.
# n1's notice names the rank that ended first on n1 (rankfan.h): rank 1, or a peer beside it
# whose all_reduce failed while rank 1 was still on its way out (seen once in CI: rank 2,
# "exited with status 1"). n1's notice leads either way, the cause's host (rankcause.h).
"$bin" tune --cluster "$T/inv-ranks.json" --job "$T/mlp.json" --launcher slurm \
    --trial-cmd "$ddp --crash-rank 1 --crash-step 2" --budget 1 --optimizer uniform-devices \
    --trial-timeout 120 --no-journal --json > "$T/t5.json" 2> "$T/t5.err"
check "a rank that crashes mid-step fails the trial with its own words, not a peer's lost connection" \
    python3 - "$T/t5.json" <<'PY'
import json, re, sys
# the crashed rank's own status: 1 from the helper's sys.exit, or 134 when gloo aborts in its
# process group's teardown at interpreter exit (seen once on Slurm); its words name it either way
# n2's notice, after it, may name a rank the step's TERM ended, "143 (SIGTERM)": slurmstepd
# signals the step's processes one by one, and the rank can end before its fan-out hears the
# TERM whose trap leaves such ranks out (seen once in CI)
CRASHED = r"(?:1|134 \(SIGABRT\))"
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
N1_FIRST = (r"rank (?:1 \(n1 gpu0\) exited with status " + CRASHED +
            r"|[02] \(n1 \w+\) exited with status \d+(?: \(SIG[A-Z]+\))?)")
assert re.match(r"the command exited: " + N1_FIRST +
                r"(; rank \d \(n2 \w+\) "
                r"exited with status \d+( \(SIG[A-Z]+\))?)? "
                r"\(error event: rank 1 on n1: RuntimeError: crashing on "
                r"purpose \(--crash-rank 1 at step 2\)\)", t["reason"]), t["reason"]
assert "by peer" not in t["reason"], t["reason"]
print("    " + t["reason"])
PY
# The OOM killer's way: rank 3 (n2's first) gets SIGKILL, saying nothing; its peers' error
# events come first, and n1's fan-out, whose ranks lost it, often ends first. n2's notice,
# labeled by srun, names it (as over SSH: pytorch.sh), whichever node's came first.
"$bin" tune --cluster "$T/inv-ranks.json" --job "$T/mlp.json" --launcher slurm \
    --trial-cmd "$ddp --kill-rank 3" --budget 1 --optimizer uniform-devices --trial-timeout 120 \
    --no-journal --json > "$T/t6.json" 2> "$T/t6.err"
check "a rank killed without a word is named in the Slurm trial's reason" \
    python3 - "$T/t6.json" <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
assert re.search(r"rank 3 \(n2 \w+\) exited with status 137 \(SIGKILL\)", t["reason"]), t["reason"]
print("    " + t["reason"])
PY
# Nodes of two GPU counts: n2 (2 GPUs) and n3 (4), n1 and n4 drained so the inventory holds
# just these two. One heterogeneous step, a component per GPU count; RANK, LOCAL_RANK and the
# rendezvous come from the schedule (rankfan), not from Slurm's SLURM_PROCID (which numbers
# the tasks, one per node, through the whole step). Each rank writes its environment first.
echo "PyTorch ranks over nodes of two GPU counts (one heterogeneous step)"
scontrol update nodename=n1,n4 state=drain reason="tunedeck test: mixed"
printf '{"name": "mixr", "backend": "slurm", "partition": "debug",
 "trial": {"ranks": "per-device", "master_port": %d}}\n' $((S_CTLD_PORT + 6)) > "$T/inv-mix.json"
# Each rank also keeps its protocol lines (tee) for the timing check, and rank 0 reports
# its final loss and weights (--report) for the gradient check below.
mkdir -p "$T/mixenv" "$T/mixout"
envdump="env | grep -E '^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|TUNEDECK_MACHINE|TUNEDECK_DEVICE|SLURM_PROCID|SLURM_LOCALID)=' > $T/mixenv/\$\$;"
"$bin" tune --cluster "$T/inv-mix.json" --job "$T/mlp.json" --launcher slurm \
    --trial-cmd "$envdump $ddp --report $T/mixreport.txt | tee $T/mixout/\$\$" --budget 1 \
    --optimizer uniform-gpus --trial-timeout 120 --no-journal --no-prune --json \
    > "$T/mix.json" 2> "$T/mix.err"
n2addr=$(scontrol show node n2 | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
check "a PyTorch DDP trial over n2 (2 GPUs) and n3 (4 GPUs): distinct ranks, one rendezvous at n2, timings" \
    python3 - "$T/mix.json" "$T/mixenv" "$T/mixout" "$n2addr" $((S_CTLD_PORT + 6)) <<'PY'
import json, os, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "ok" and t["time_s"] > 0, t
want = []
for m in t["schedule"]["machines"]:
    mine = [d for d in m["devices"] if m["worker"] and d["inputs"] > 0]
    want += [(m["name"], d["id"], i, len(mine)) for i, d in enumerate(mine)]
assert sorted(set(w[0] for w in want)) == ["n2", "n3"], want
envs = []
for f in os.listdir(sys.argv[2]):
    envs.append(dict(l.rstrip("\n").split("=", 1) for l in open(os.path.join(sys.argv[2], f))))
assert len(envs) == len(want), (len(envs), want)
envs.sort(key=lambda e: int(e["RANK"]))
assert [int(e["RANK"]) for e in envs] == list(range(len(want))), envs
for e, (node, dev, local, lw) in zip(envs, want):
    assert e["WORLD_SIZE"] == str(len(want)) and e["TUNEDECK_MACHINE"] == node, (e, node)
    assert (e["TUNEDECK_DEVICE"], e["LOCAL_RANK"], e["LOCAL_WORLD_SIZE"]) == (dev, str(local), str(lw)), e
# rank 0 is n2's first: its NodeAddr, and the inventory's port + trial % 100, for every rank
port = int(sys.argv[5]) + t["trial"] % 100
assert {(e["MASTER_ADDR"], e["MASTER_PORT"]) for e in envs} == {(sys.argv[4], str(port))}, envs
# every rank's done line, the components' both: the trial's time is the slowest rank's
done, inputs = [], {}
for f in os.listdir(sys.argv[3]):
    for l in open(os.path.join(sys.argv[3], f)):
        ev = json.loads(l) if l.startswith("{") else {}
        if ev.get("event") == "done":
            done.append(ev["time_s"])
        for m in ev.get("machines", []) if ev.get("event") == "iteration" else []:
            for d in m["devices"]:
                inputs[(m["name"], d["id"])] = d["inputs"]
assert len(done) == len(want), done
assert abs(t["time_s"] - max(done)) <= 1e-6 * max(done), (t["time_s"], done)
# each rank trained on its device's inputs by the schedule (6, 6, 5, 5, 5, 5 of 32)
sched = {(m["name"], d["id"]): d["inputs"] for m in t["schedule"]["machines"] for d in m["devices"]
         if d["inputs"] > 0}
assert inputs == sched, (inputs, sched)
print("    %d ranks; (node, SLURM_PROCID, SLURM_LOCALID): %s; time %.4f s = slowest of %s" % (
      len(envs), sorted({(e["TUNEDECK_MACHINE"], e.get("SLURM_PROCID"), e.get("SLURM_LOCALID"))
                         for e in envs}), t["time_s"], sorted(round(x, 4) for x in done)))
PY
# The same steps in one process with the whole global batch (the schedule, no RANK): the
# ranks' shares, weighted by local_batch / global_batch and summed across the two
# components, give its loss and weights (float64; as pytorch.sh checks over sshd).
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["trials"][0]["schedule"]))' \
    "$T/mix.json" > "$T/mixsched.json" 2> /dev/null
"$PY" "$root/examples/pytorch_ddp.py" --schedule "$T/mixsched.json" --report "$T/mixsingle.txt" \
    --tag "slurm-$$x" > "$T/mixsingle.out" 2>&1
check "the 6 ranks' uneven local batches over the two components train exactly as one process" \
    python3 - "$T/mixsingle.txt" "$T/mixreport.txt" <<'PY'
import sys
a = open(sys.argv[1]).read().split()
b = open(sys.argv[2]).read().split()
la, na, lb, nb = float(a[1]), float(a[3]), float(b[1]), float(b[3])
assert abs(la - lb) <= 1e-9 * abs(la) and abs(na - nb) <= 1e-9 * abs(na), (a, b)
print("    loss %s vs %s, weight norm %s vs %s" % (a[1], b[1], a[3], b[3]))
PY
# rank 3 is n3's second: the second component's rank fails at step 2, its words are the
# reason; its peers, n3's and n2's, fail in that step's all_reduce ("Connection closed by
# peer"), and n2's fan-out's notice follows n3's whichever srun forwarded first. n3's names
# rank 3, or a peer beside it that ended first there (as n1's above).
"$bin" tune --cluster "$T/inv-mix.json" --job "$T/mlp.json" --launcher slurm \
    --trial-cmd "$ddp --crash-rank 3 --crash-step 2" --budget 1 --optimizer uniform-gpus \
    --trial-timeout 120 --no-journal --json > "$T/mix2.json" 2> "$T/mix2.err"
check "a rank of the second component that crashes mid-step fails the trial with its own words" \
    python3 - "$T/mix2.json" <<'PY'
import json, re, sys
# the crashed rank's own status: 1 from the helper's sys.exit, or 134 when gloo aborts in its
# process group's teardown at interpreter exit (seen once on Slurm); its words name it either way
# n2's notice, after it, may name a rank the step's TERM ended, "143 (SIGTERM)": slurmstepd
# signals the step's processes one by one, and the rank can end before its fan-out hears the
# TERM whose trap leaves such ranks out (seen once in CI)
CRASHED = r"(?:1|134 \(SIGABRT\))"
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
N3_FIRST = (r"rank (?:3 \(n3 gpu1\) exited with status " + CRASHED +
            r"|[0-9] \(n3 \w+\) exited with status \d+(?: \(SIG[A-Z]+\))?)")
assert re.match(r"the command exited: " + N3_FIRST +
                r"(; rank \d \(n2 \w+\) "
                r"exited with status \d+( \(SIG[A-Z]+\))?)? "
                r"\(error event: rank 3 on n3: RuntimeError: crashing on "
                r"purpose \(--crash-rank 3 at step 2\)\)", t["reason"]), t["reason"]
assert "by peer" not in t["reason"], t["reason"]
print("    " + t["reason"])
PY
scontrol update nodename=n1,n4 state=resume

n=0
while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f -- "--tag slurm-$$x" > /dev/null; }; do
    sleep 0.2; n=$((n + 1))
done
ranks_left=$(pgrep -f -- "--tag slurm-$$x" | wc -l)
check "no rank and no job left ($ranks_left ranks)" sh -c "[ -z \"\$(squeue -h)\" ] && [ $ranks_left -eq 0 ]"

echo "watch"
"$bin" hosts --slurm --watch --watch-for 9 --max-interval 8 > "$T/w1.out" 2>&1
calls=$(sed -n 's/^watched: \([0-9]*\) controller calls\{0,1\}/\1/p' "$T/w1.out")
check "a quiet cluster watched for 9 s: never more than a call a second, fewer with back-off ($calls calls)" \
    sh -c "[ -n '$calls' ] && [ '$calls' -le 10 ] && [ '$calls' -ge 2 ]"

# Slurm prints a job's name as its owner gave it, newlines too: another user's held job whose
# name holds a row of its own (a job 999 of root's, ended). The watch read that row as a
# second job; a name's bare first line failed every round ('expected 8 fields').
if [ "$(id -u)" = 0 ]; then
    forged="$(sbatch --parsable --uid=nobody -H -p t4 -o /dev/null --wrap 'sleep 60' \
        -J "$(printf 'x\n999|root|COMPLETED|1|N/A|n1|None|forged')")"
    "$bin" hosts --slurm --watch --watch-for 3 > "$T/w0.out" 2>&1
    check "another user's job name with a newline and a row of its own: one job read, none forged" \
        sh -c "grep -q 'nodes, 1 job ' '$T/w0.out' && ! grep -q 'did not answer' '$T/w0.out'"
    scancel "$forged"
fi

# The watch's table once, the controller stopped until a round fails (sinfo's own retries
# take some 10 s), started again until the table shows again; then TERM, which ends the
# watch after its round with that round's status (0: the controller answered). --watch-for
# only bounds a failure.
: > "$T/w2.out" # there before the first look at it
"$bin" hosts --slurm --watch --watch-for 300 --max-interval 4 > "$T/w2.out" 2>&1 &
WATCH_PID=$!
shown_again() { sed -n '/the controller did not answer/,$p' "$T/w2.out" | grep -q '^n1 '; }
wait_until 30 grep -q '^n1 ' "$T/w2.out"
slurm_ctld_stop
wait_until 120 grep -q 'the controller did not answer' "$T/w2.out"
slurm_ctld_start
wait_until 120 shown_again
kill -TERM "$WATCH_PID"
wait "$WATCH_PID"
rc=$?
WATCH_PID=""
# the table after the outage's line, not merely twice (it may show twice before the outage)
if grep -q '^n1 ' "$T/w2.out" && shown_again && [ "$rc" -eq 0 ]
then pass "a controller that goes away: the watch says so, keeps polling, and shows the cluster again (exit $rc)"
else fail "a controller that goes away: the watch says so, keeps polling, and shows the cluster again (exit $rc)"; fi

echo "IPv6 node addresses"
# A harness of its own (about 2 s to start) with n1 and n2 at NodeAddr=::1 and
# CommunicationParameters=EnableIPv6 (slurm-harness.sh, SLURM_IPV6=1), the first stopped
# before. The address comes as sinfo prints it, bare, into the inventory's host and every
# rank's MASTER_ADDR: torch's gloo rendezvous takes ::1 (not [::1]).
S_V4="$S"
slurm_stop_all
v4_left=0
for f in "$S_V4"/slurmctld.pid "$S_V4"/slurmd-n*.pid; do
    [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && v4_left=$((v4_left + 1))
done
check "the first harness is stopped before the IPv6 one starts ($v4_left daemons left)" \
    [ "$v4_left" -eq 0 ]
SLURM_IPV6=1
slurm_suite_start "$T/s6"
SLURM_IPV6=0
sinfo -h -N -p t4 -o '%N|%o' | sort -u > "$T/v6-sinfo.out"
check "sinfo's %o prints n1's and n2's NodeAddr bare: ::1" \
    sh -c "[ \"\$(cat '$T/v6-sinfo.out')\" = \"\$(printf 'n1|::1\nn2|::1')\" ]"
printf '{"name": "t4v6", "backend": "slurm", "partition": "t4",
 "trial": {"ranks": "per-device", "master_port": %d}}\n' $((S_CTLD_PORT + 5)) > "$T/inv-v6.json"
mkdir -p "$T/v6env"
"$bin" tune --cluster "$T/inv-v6.json" --job "$T/mlp.json" --launcher slurm \
    --trial-cmd "env > $T/v6env/\$\$; $ddp" --budget 1 --optimizer uniform-devices \
    --trial-timeout 120 --no-journal --no-prune --json > "$T/v6.json" 2> "$T/v6.err"
check "6 PyTorch ranks over 2 nodes at NodeAddr ::1 meet at MASTER_ADDR ::1 and measure" \
    python3 - "$T/v6.json" "$T/v6env" $((S_CTLD_PORT + 5)) <<'PY'
import json, os, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "ok" and t["time_s"] > 0, t
envs = []
for f in os.listdir(sys.argv[2]):
    e = dict(l.split("=", 1) for l in open(os.path.join(sys.argv[2], f)).read().splitlines()
             if l.startswith(("RANK=", "MASTER_ADDR=", "MASTER_PORT=", "TUNEDECK_MACHINE=")))
    if "RANK" in e:
        envs.append(e)
assert sorted(int(e["RANK"]) for e in envs) == list(range(6)), envs
assert {e["TUNEDECK_MACHINE"] for e in envs} == {"n1", "n2"}, envs
port = int(sys.argv[3]) + t["trial"] % 100
assert {(e["MASTER_ADDR"], e["MASTER_PORT"]) for e in envs} == {("::1", str(port))}, envs
PY

slurm_nothing_left

[ "$fails" -eq 0 ] && echo "slurm: all passed" || echo "slurm: $fails failed"
[ "$fails" -eq 0 ]
