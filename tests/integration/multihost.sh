#!/bin/sh
# Live jobs across several hosts (docs/scheduler-live.md): over 2 loopback sshd hosts at their
# own addresses, a job started per host ("job_launch": "per-host") whose ranks meet at
# {master_addr}:{master_port} (tests/fixtures/rendezvous_job.py, a TCP rendezvous like
# torch.distributed's env://). The doubling policy grows it from 1 host to 2 and shrinks it
# back when a second job arrives; every run resumes from the last checkpoint. Then two jobs
# packed on one 2-GPU host each see only their own GPU index in CUDA_VISIBLE_DEVICES. A rank
# killed ends its job's other ranks; and a job that shrinks when one host's sshd dies waits on
# the fence while the old run's rank left on that host lives.
set -u
suite=multihost scratch=multihost suite_sshd=1
. "$(dirname "$0")/lib/suite.sh"
mark="mh$$x"  # x: pid 12's mark is not part of pid 123's
# A kept pid is signalled only while its command line is still the run's or the job's
# (pid_kill_named, lib/procs_left.sh): one that ended may have left its number to another's.
suite_stop() { [ -n "${LIVE_PID:-}" ] && pid_kill_named KILL "$LIVE_PID" "--cluster $T/"; }
suite_reap() { for p in $(pgrep -f "ckpt-$mark" 2>/dev/null); do pid_kill_named KILL "$p" "ckpt-$mark"; done; }

harness_init "$T/h"
for i in 1 2; do harness_start "$i"; done
harness_inventory "$T/two.json" 1 2
harness_inventory "$T/one.json" 1
# The rendezvous ports are in this run's port span (tests/sshd-harness.sh checked it free),
# so suites side by side never meet: H_PORT+8 for two.json's job, +12 and +13 for one.json's.
python3 - "$T" "$root/tests/fixtures/rendezvous_job.py" "$mark" "$H_PORT" <<'PY'
import json, sys
t, job, mark = sys.argv[1:4]
port = int(sys.argv[4])
cmd = ("python3 %s {master_addr} {master_port} {nnodes} {node_rank} --checkpoint ckpt-%s {resume}"
       % (job, mark))
two = json.load(open(t + "/two.json"))
two["job_command"] = cmd
two["job_launch"] = "per-host"
two["job_master_port"] = port + 8
json.dump(two, open(t + "/two.json", "w"))
one = json.load(open(t + "/one.json"))
one["machine_types"]["g"]["devices"].append({"id": "gpu1", "kind": "gpu", "model": "A100"})
one["job_command"] = cmd
one["job_master_port"] = port + 12
json.dump(one, open(t + "/one.json", "w"))
PY
printf 'name,time,application,num_replicas,batch_size\nr0,0,cifar10,1,128\nr1,150,cifar10,1,128\n' > "$T/grow.csv"
printf 'name,time,application,num_replicas,batch_size\np0,0,cifar10,1,128\np1,0,cifar10,1,128\n' > "$T/pack.csv"

echo "a job across two hosts"
"$bin" schedule --live --cluster "$T/two.json" --workload "$T/grow.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 12 --status-every 0 --job-dir "$T/jobs" \
    > "$T/out" 2> "$T/err"
rc=$?
left=$(procs_left "ckpt-$mark")
if [ "$rc" -eq 0 ] && python3 - "$T/out" "$T/jobs/r0/ranks.log" <<'PY'
import re, sys
from outcheck import out, need
need(r"decision t=\d+s: resize r0 1 -> 2 GPUs on h\d:1,h\d:1", "r0 grows onto both hosts")
need(r"r0: started on h\d with 2 GPUs \(GPUs h\d:0,h\d:0, one process group per host\)", "per-host start")
grow = need(r"r0: run 2 on h\d \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)", "resumed at 2")
assert int(grow.group(1)) == int(grow.group(2)) + 1, grow.group(0)
need(r"decision t=\d+s: resize r0 2 -> 1 GPU on h\d:1", "r0 shrinks back")
back = need(r"r0: run 3 on h\d \(1 GPU\) resumed at step (\d+) \(checkpoint at step (\d+)\)", "resumed at 1")
assert int(back.group(1)) == int(back.group(2)) + 1 > int(grow.group(1)), back.group(0)
runs = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[2])]
pair = [r for r in runs if r["rank"].endswith("/2")]
assert sorted(r["rank"] for r in pair) == ["0/2", "1/2"], runs
assert pair[0]["start"] == pair[1]["start"] == grow.group(1), pair  # rank 1 got rank 0's step
assert pair[0]["hostfile"] == "127.0.0.11:1,127.0.0.12:1", pair
# each rank's own mark (the two hosts are one machine here): one rank's stop never reaches the
# other's processes; a run's every rank carries one
assert all(re.fullmatch(r"[0-9a-f]{32}", r["mark"]) for r in runs), runs
assert pair[0]["mark"] != pair[1]["mark"], pair
print("r0: 1 -> 2 hosts at step %s (both ranks met), back to 1 at step %s"
      % (grow.group(1), back.group(1)))
PY
then pass "ranks on two hosts meet at {master_addr}:{master_port}; 1 -> 2 hosts -> 1 through checkpoints; each rank a run mark of its own"
else fail "a job across two hosts (exit $rc; see $T/out)"; KEEP=1; fi
if [ "$left" -eq 0 ]; then pass "no job process left"; else fail "$left job processes left"; fi

echo "two jobs packed on one node"
"$bin" schedule --live --cluster "$T/one.json" --workload "$T/pack.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 3 --status-every 0 --job-dir "$T/pack" \
    > "$T/out2" 2> "$T/err2"
rc=$?
left=$(procs_left "ckpt-$mark")
c0=$(sed -n 's/.* cuda=\([^ ]*\) .*/\1/p' "$T/pack/p0/ranks.log" 2>/dev/null | sort -u)
c1=$(sed -n 's/.* cuda=\([^ ]*\) .*/\1/p' "$T/pack/p1/ranks.log" 2>/dev/null | sort -u)
if [ "$rc" -eq 0 ] && [ -n "$c0" ] && [ -n "$c1" ] && [ "$c0" != "$c1" ] &&
    grep -q "p0: started on h1 with 1 GPU (GPUs h1:$c0)" "$T/out2" &&
    grep -q "p1: started on h1 with 1 GPU (GPUs h1:$c1)" "$T/out2"; then
    pass "each job sees only its own GPU (p0: $c0, p1: $c1)"
else fail "packed jobs' GPUs: p0 '$c0', p1 '$c1' (exit $rc)"; KEEP=1; fi
if [ "$left" -eq 0 ]; then pass "no job process left"; else fail "$left job processes left"; fi

echo "a rank dies"
# d0 takes both hosts from the start; its node-1 rank is killed behind the driver's back:
# the other host's run gets SIGTERM, the job counts one death and restarts on both hosts.
printf 'name,time,application,num_replicas,batch_size\nd0,0,cifar10,2,256\n' > "$T/die.csv"
"$bin" schedule --live --cluster "$T/two.json" --workload "$T/die.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 8 --status-every 0 --job-dir "$T/die" \
    > "$T/out3" 2> "$T/err3" &
LIVE_PID=$!
n=0
while [ $n -lt 100 ] && ! grep -q 'rank=1/2' "$T/die/d0/ranks.log" 2>/dev/null; do
    sleep 0.1; n=$((n + 1))
done
victim=$(sed -n 's/^pid=\([0-9]*\) rank=1\/2 .*/\1/p' "$T/die/d0/ranks.log" 2>/dev/null | head -1)
[ -n "$victim" ] && pid_kill_named KILL "$victim" "ckpt-$mark"
wait "$LIVE_PID"
rc=$?
LIVE_PID=""
left=$(procs_left "ckpt-$mark")
met=$(grep -c 'rank=1/2' "$T/die/d0/ranks.log" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ -n "$victim" ] && [ "$met" -ge 2 ] &&
    grep -Eq 'd0: died unexpectedly (after step [0-9]+ \(its last progress line; |before its first progress line \()node 1 on 127\.0\.0\.[0-9]+: (killed by SIGKILL|exited [0-9]+).*\): restarting' "$T/out3" &&
    grep -q 'd0: started on h[12] with 2 GPUs' "$T/out3" && python3 - "$T/out3" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
death = re.search(r"d0: died unexpectedly after step (\d+) \(its last progress line; .*\n(?:.*\n)*?.*d0: run \d+ on h\d \(2 GPUs\) "
                  r"(?:resumed at step (\d+) \(checkpoint at step (\d+)\)|first step)", out)
assert death, "no restart after the death"
if death.group(2):  # rank 0 checkpointed when the others were stopped: resume from there
    assert int(death.group(2)) == int(death.group(3)) + 1 == int(death.group(1)) + 1, death.group(0)
PY
then
    pass "a dead rank ends its job's other runs; the job restarts on both hosts (ranks met $met times)"
else fail "a rank dies (exit $rc, victim '$victim', met $met; see $T/out3)"; KEEP=1; fi
if [ "$left" -eq 0 ]; then pass "no job process left"; else fail "$left job processes left"; fi

echo "an old rank beyond a run that shrank"
# s0 takes both hosts; then h2's sshd stops, its connections with it. Only sshd died: the old
# run's rank 1 goes on there, in the job folder both loopback hosts share (as on NFS), and
# holds .tunedeck-run-1.lock. s0 restarts on h1 alone, a one-host run whose own rank-0 lock
# is free: rank 0 finds the old rank 1's lock held and the run waits on the fence (before,
# it ran beside the old rank 1, both writing the checkpoint). Once h2 answers again, the old
# rank is stopped by its mark and s0 runs.
after() { # FIRST THEN: whether $T/out4 has a line matching THEN after one matching FIRST
    awk -v a="$1" -v b="$2" '!seen && $0 ~ a { seen = 1; next } seen && $0 ~ b { found = 1 }
        END { exit !found }' "$T/out4" 2>/dev/null
}
wait_out() { # FIRST THEN TENTHS: polls for that, up to TENTHS tenths of a second
    _wo=0
    while [ "$_wo" -lt "$3" ] && ! after "$1" "$2"; do
        sleep 0.1; _wo=$((_wo + 1))
    done
    after "$1" "$2"
}
printf 'name,time,application,num_replicas,batch_size\ns0,0,cifar10,2,256\n' > "$T/shrink.csv"
"$bin" schedule --live --cluster "$T/two.json" --workload "$T/shrink.csv" --policy doubling \
    --interval 60 --time-scale 30 --duration 120 --status-every 0 --job-dir "$T/shrink" \
    > "$T/out4" 2> "$T/err4" &
LIVE_PID=$!
n=0
while [ $n -lt 600 ] && ! grep -q 'rank=1/2' "$T/shrink/s0/ranks.log" 2>/dev/null; do
    sleep 0.1; n=$((n + 1))
done
old1=$(sed -n 's/^pid=\([0-9]*\) rank=1\/2 .*/\1/p' "$T/shrink/s0/ranks.log" 2>/dev/null | head -1)
if [ -n "$old1" ]; then
    harness_stop 2
    if wait_out "h2 is down over SSH" "s0: another run of it still holds its folder" 600 &&
        ! after "h2 is down over SSH" "s0: run [0-9]+ on" && kill -0 "$old1" 2>/dev/null
    then pass "a one-host run of s0 waits while the old run's rank 1 (pid $old1) holds its folder"
    else fail "fence beyond the run's ranks: $(grep "s0:\|h2" "$T/out4" | tail -n 12)"; KEEP=1; fi
    harness_start 2
    # the pool's reconnect back-off is capped at 30 s
    if wait_out "h2 is down over SSH" "s0: its run left on h2 when its end was not seen [(]process group [0-9]+[)]: stopped" 900 &&
        wait_out "s0: its run left on h2" "s0: run [0-9]+ on h[12] .*(resumed at step|first step)" 600 &&
        ! running_pid "$old1"
    then pass "once h2 answers, the old rank 1 is stopped by its mark and s0 runs again"
    else fail "old rank 1 on h2: $(grep "s0:\|h2" "$T/out4" | tail -n 12)"; KEEP=1; fi
else
    fail "s0 did not start on both hosts: $(tail -n 8 "$T/out4")"; KEEP=1
fi
pid_kill_named TERM "$LIVE_PID" "--cluster $T/"
wait "$LIVE_PID"
rc=$?
LIVE_PID=""
left=$(procs_left "ckpt-$mark")
if [ "$rc" -eq 143 ] && ! grep -q "second death\|died unexpectedly" "$T/out4"
then pass "no death was counted against s0 (exit $rc)"
else fail "s0 at the end: exit $rc: $(tail -n 6 "$T/out4")"; KEEP=1; fi
if [ "$left" -eq 0 ]; then pass "no job process left"; else fail "$left job processes left"; fi

echo "bad input"
python3 - "$T/two.json" "$T/bad.json" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1])); inv["job_launch"] = "everywhere"
json.dump(inv, open(sys.argv[2], "w"))
PY
"$bin" schedule --live --cluster "$T/bad.json" --workload "$T/grow.csv" > "$T/b1" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q "bad.json: field 'job_launch': expected \"first-host\" or \"per-host\"" "$T/b1"; then
    pass "an unknown job_launch is refused, naming the file and field"
else fail "bad job_launch (exit $rc): $(cat "$T/b1")"; fi

[ "$fails" -eq 0 ]
