#!/bin/sh
# The live scheduler on Slurm (`schedule --live --slurm`), against the private Slurm 22.05 of
# tests/slurm-harness.sh (n1,n2: gpu:t4:2; n3,n4: gpu:v100:4), with tunedeck-worker in job
# mode as the job command (it checkpoints on SIGTERM and resumes at any size): resizes,
# nodes, the inventory. Its siblings, each with a harness of its own: slurm_live_outage.sh
# (slurmctld stopped under a run) and slurm_live_jobs.sh (jobs the run did not submit or
# does not follow: a lost sbatch answer, another user's jobs, an earlier run's job).
#
# 1. Partition t4 (4 GPUs), tests/fixtures/slurm-live-workload.csv, doubling, time x30: at
#    t=240 s `new` shrinks 2 -> 1 GPU (scancel --signal=TERM, checkpoint, resubmission with
#    {resume}) while `third` starts beside it on n2, and at t=360 s `new` grows back to 2.
#    Each resumed run continues from its checkpoint's step; the GPUs are the ones Slurm
#    granted, read back from scontrol (two jobs on n2 hold different indices).
# 2. Every node, tests/fixtures/schedlive-workload.csv: j0 grows 4 -> 8 GPUs over n1, n2, n3
#    (a heterogeneous job: the nodes hold 2, 2 and 4 of it); a job scancelled behind the
#    scheduler's back is a death with Slurm's reason and is resubmitted; SIGINT ends the run
#    with every job checkpointed.
# 3. An inventory with "backend": "slurm" given to --cluster; another user's running job is
#    listed with the GPU Slurm gave it (for the console's grid).
# 4. A node drained in Slurm under a run: its run checkpoints and resumes elsewhere.
# 5. n3 added to partition t4 mid-run (the next decision places there) and taken out again
#    (its run checkpoints).
# 6. A job's exit line that reaches its output after Slurm says it ended (a shared file
#    system's lag, stood in): waited for, so a death restarts from the checkpoint it tells.
# 7. Refusals: --login, {gpu_ids}, no job command.
# After each run: no Slurm job (squeue) and no job process left. The trap stops every
# daemon and job it started.
set -u
suite=slurm_live scratch=slurm-live suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurmlive.sh"
slurmlive_start

echo "shrink and grow through checkpoint and resubmission"
"$bin" schedule --live --slurm --partition t4 --workload "$root/tests/fixtures/slurm-live-workload.csv" \
    --job-command "$job" --policy doubling --interval 60 --time-scale 30 --duration 15 \
    --status-every 0 --job-dir "$T/jobs" > "$T/out1" 2> "$T/err1"
rc=$?
settle
queue="$(squeue -h)"
left=$(pgrep -f "ckpt-$mark" | wc -l)
if [ "$rc" -eq 0 ] && python3 - "$T/out1" "$T/jobs" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
need(r"slurm: 2 nodes from the controller", "the t4 partition's nodes")
need(r"decision t=240s: resize new 2 -> 1 GPU on n2:1", "the shrink decision")
s1 = need(r"new: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "new checkpointed")
saved1 = int(s1.group(1))
m = need(r"new: run 2 on n2 \(1 GPU\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "new resumed at 1 GPU", s1.end())
resumed(m, saved1, sys.argv[2], "new")
# placement read back from scontrol: new and third share n2 on different GPU indices
g_new = need(r"new: Slurm job \d+ running on n2:(\d) \(the GPUs", "new's granted GPU", s1.end())
g_third = need(r"third: Slurm job \d+ running on n2:(\d) \(the GPUs", "third's granted GPU")
assert g_new.group(1) != g_third.group(1), (g_new.group(0), g_third.group(0))
need(r"decision t=360s: resize new 1 -> 2 GPUs on n2:2", "the grow decision")
s2 = need(r"new: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "new checkpointed again",
          m.end())
m2 = need(r"new: run 3 on n2 \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
          "new resumed at 2 GPUs", s2.end())
resumed(m2, int(s2.group(1)), sys.argv[2], "new")
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
if [ "$rc" -eq 130 ] && [ -n "$victim" ] && python3 - "$T/out2" "$T/jobs2" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
need(r"decision t=180s: resize j0 4 -> 8 GPUs on n1:2,n2:2,n3:4", "the grow decision")
saved = int(need(r"j0: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "j0 checkpoint").group(1))
m = need(r"j0: run 2 on n1 \(8 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "j0 resumed at 8 GPUs")
resumed(m, saved, sys.argv[2], "j0")
need(r"j0: Slurm job \d+ running on n1:0\+1,n2:0\+1,n3:0\+1\+2\+3 \(the GPUs", "the heterogeneous job's GPUs")
need(r"j2: died unexpectedly after step \d+ \(its last progress line; slurm: CANCELLED[^)]*\)\): restarting", "the death, Slurm's reason")
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
live_inventory
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

echo "a node drained in Slurm under a running job"
# solo runs on n1 (t4 partition: n1, n2 with 2 GPUs; fixed-2 keeps it at 2 GPUs, so only the
# drain moves it); the operator drains n1 in Slurm. The node round (every 2 s here, the
# inventory's node_round_s; 10 s by default) sees it, the model drains n1, the next decision
# moves solo: its TERM checkpoints it, it is resubmitted on n2 from that checkpoint, and
# nothing of ours is left on n1. Resumed in Slurm, n1 is usable again. Two node rounds are
# waited out: the run is 16 s shorter than with 10 s rounds, the same time left after them.
quick_inventory inv-nodes '{"node_round_s": 2}'
"$bin" schedule --live --cluster "$T/inv-nodes.json" --workload "$T/solo.csv" --policy fixed-2 \
    --interval 30 --time-scale 10 --duration 19 --status-every 0 --job-dir "$T/jobs4" \
    > "$T/out4" 2> "$T/err4" &
LIVE_PID=$!
wait_line "$T/out4" "solo: Slurm job [0-9]* running on n1:" 150
wait_line "$T/out4" "solo: run 1 on n1 .* first step" 100
scontrol update NodeName=n1 State=DRAIN Reason="tdtest drain"
wait_line "$T/out4" "solo: Slurm job [0-9]* running on n2:" 250
sleep 1
on_n1="$(squeue -h -w n1 -o %j | grep '^tunedeck-live-solo[.]')"
scontrol update NodeName=n1 State=RESUME
wait_line "$T/out4" "n1 is usable again" 150
live_ended
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && [ -z "$on_n1" ] && python3 - "$T/out4" "$T/jobs4" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
d = need(r"^\[.*\] n1 is drain\w* in Slurm \(reason: tdtest drain\): its runs move$",
         "the drain read back and said")
assert out.count("n1 is drain") == 1, "said once"
mv = need(r"decision t=\d+s: resize solo 2 -> 2 GPUs on n2:2", "solo moved off n1", d.end())
s = need(r"solo: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written", "solo checkpointed",
         mv.end())
m = need(r"solo: run 2 on n2 \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "solo resumed on n2", s.end())
resumed(m, int(s.group(1)), sys.argv[2], "solo")
# from the stop on: the job round may see the new job running before its first line is read
need(r"solo: Slurm job \d+ running on n2:0\+1 \(the GPUs", "solo granted n2's GPUs", s.end())
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
# 2 s here) finds it, the model adds it, said once, and the next decision starts c there. Taken
# out of t4 again, n3 is drained in the model: c checkpoints and waits. Two node rounds
# waited out, as above: 16 s shorter than with 10 s rounds.
printf 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\nb,0,cifar10,1,128\nc,0,cifar10,1,128\n' \
    > "$T/three.csv"
"$bin" schedule --live --cluster "$T/inv-nodes.json" --workload "$T/three.csv" --policy fixed-2 \
    --interval 30 --time-scale 10 --duration 19 --status-every 0 --job-dir "$T/jobs5" \
    > "$T/out5" 2> "$T/err5" &
LIVE_PID=$!
wait_line "$T/out5" "b: Slurm job [0-9]* running on" 150
scontrol update PartitionName=t4 Nodes=n[1-3]
wait_line "$T/out5" "c: run 1 on n3 .* first step" 300
scontrol update PartitionName=t4 Nodes=n[1-2]
wait_line "$T/out5" "c: stopped at step" 300
live_ended
scontrol update PartitionName=t4 Nodes=n[1-2] 2> /dev/null
if [ "$rc" -eq 0 ] && [ -z "$queue" ] && [ "$left" -eq 0 ] && python3 - "$T/out5" <<'PY'
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

echo "an exit line that reaches the output after Slurm says the job ended"
# On a shared file system (NFS, Lustre) the batch script's last write, its exit line, can
# reach the login node after slurmctld has the job's end. Stood in deterministically: a
# stand-in sbatch sends the job's output to T/lag/node, lib/lagmirror.py copies it to where
# tunedeck reads it but holds the exit line back, and a stand-in scontrol releases it only
# on its third call after two of its answers said the job ended (rounds run one at a time and
# each answer is followed before the next round but one starts: tunedeck has concluded, or
# held, by then). solo is cancelled by someone else (plain scancel: its TERM checkpoints
# and the script exits 0): a death, restarted from that checkpoint, which only the late
# line tells. Concluded at Slurm's word it restarts fresh ("no checkpoint yet").
# exit_grace_s 120: the line is always awaited, however slow the machine.
quick_inventory inv-lag '{"exit_grace_s": 120}'
lag="$T/lag"
mkdir -p "$lag/node"
: > "$lag/jobs"
real_sbatch=$(command -v sbatch) real_scontrol=$(command -v scontrol)
cat > "$lag/sbatch" <<STANDIN
#!/bin/sh
dir="" out=""
for a; do
    shift
    case \$a in
    --output=*) out=\${a##*/}; set -- "\$@" "--output=$lag/node/\$out" ;;
    --chdir=*) dir=\${a#--chdir=}; set -- "\$@" "\$a" ;;
    *) set -- "\$@" "\$a" ;;
    esac
done
id=\$("$real_sbatch" "\$@") || exit \$?
echo "\${id%%;*} \$dir \$out" >> "$lag/jobs"
echo "\$id"
STANDIN
cat > "$lag/scontrol" <<STANDIN
#!/bin/sh
for j in \$(cut -d' ' -f1 "$lag/jobs"); do
    [ "\$(cat "$lag/ended-\$j" 2> /dev/null | wc -l)" -ge 2 ] && : > "$lag/release-\$j"
done
"$real_scontrol" "\$@" > "$lag/answer.\$\$"
rc=\$?
cat "$lag/answer.\$\$"
for j in \$(cut -d' ' -f1 "$lag/jobs"); do
    awk -v id="JobId=\$j" '\$1 == id { f = 1 } f && /JobState=/ { if (\$1 ~ /^JobState=(COMPLETED|CANCELLED|FAILED|TIMEOUT|PREEMPTED|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)\$/) print; f = 0 }' \
        "$lag/answer.\$\$" >> "$lag/ended-\$j"
done
rm -f "$lag/answer.\$\$"
exit \$rc
STANDIN
chmod +x "$lag/sbatch" "$lag/scontrol"
python3 "$here/integration/lib/lagmirror.py" "$lag" &
LAG_PID=$!
PATH="$lag:$PATH" "$bin" schedule --live --cluster "$T/inv-lag.json" --workload "$T/solo.csv" \
    --policy fixed-2 --interval 60 --time-scale 1 --duration 60 --status-every 0 \
    --job-dir "$T/jobs6" > "$T/out6" 2> "$T/err6" &
LIVE_PID=$!
wait_line "$T/out6" "solo: run 1 on n[0-9] .* first step" 200
wait_line "$T/out6" "solo: Slurm job [0-9]* running on n" 100
victim=$(squeue -h -o '%i %j' | awk '$2 ~ /^tunedeck-live-solo[.]/ {print $1}' | head -1)
[ -n "$victim" ] && scancel "$victim"
wait_line "$T/out6" "solo: run 2 on n[0-9] .* resumed at step" 300
kill -INT "$LIVE_PID"
live_ended
: > "$lag/stop"
wait "$LAG_PID"
LAG_PID=""
released=$(ls "$lag" | grep -c '^release-')
if [ "$rc" -eq 130 ] && [ -n "$victim" ] && [ -z "$queue" ] && [ "$left" -eq 0 ] &&
   [ -f "$lag/release-$victim" ] && python3 - "$T/out6" "$T/jobs6" "$victim" <<'PY'
import re, sys
from outcheck import out, need
from slurmlive import resumed
d = need(r"solo: died unexpectedly after step (\d+) \(its last progress line; slurm: CANCELLED[^)]*\)\): restarting from "
         r"its checkpoint", "the death, restarted from the checkpoint its late exit line tells")
m = need(r"solo: run 2 on n\d \(2 GPUs\) resumed at step (\d+) \(checkpoint at step (\d+)\)",
         "solo resumed", d.end())
resumed(m, int(d.group(1)), sys.argv[2], "solo")
assert "gave up waiting" not in out, "the exit line was waited for"
print("Slurm job %s cancelled at step %s; its exit line read after Slurm's end; resumed at %s" %
      (sys.argv[3], d.group(1), m.group(1)))
PY
then pass "an exit line that comes after Slurm's end is waited for: the death restarts from the checkpoint it tells"
else fail "late exit line (exit $rc, victim '$victim', released $released, queue '$queue', $left processes)"; fi

echo "refusals"
"$bin" schedule --live --slurm --login login1 --workload "$root/tests/fixtures/slurm-live-workload.csv" \
    --job-command "$job" > "$T/b1" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q "run tunedeck on the login node login1 .*serves hosts, watching and tuning sessions" "$T/b1"; then
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

slurmlive_done
