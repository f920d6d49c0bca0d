#!/bin/sh
# The console on a real private Slurm 22.05 (tests/slurm-harness.sh: n1,n2 gpu:t4:2, n3,n4
# gpu:v100:4), in a real tmux: a tuning session through srun steps lives through slurmctld
# going away: the screen says so, no new trial starts while it is away, every measured trial
# stays (screen and journal), and the session goes on when it is back. About 1.5 min, most
# of it the minute Slurm holds the GPUs of a step that ended while slurmctld was away. The
# console's other Slurm checks are console_slurm.sh. The trap stops every daemon, job and
# terminal it started.
set -u
suite=console_slurm_outage scratch=cslurm-outage suite_slurm=1 suite_tmux=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurm_login.sh"
. "$here/integration/lib/console_slurm.sh"

slurm_init "$T/s"
slurm_start || fail "the Slurm harness did not start"

# ---- tuning through srun steps while slurmctld goes away and comes back ----
printf '{"name": "t4s", "backend": "slurm", "partition": "t4"}\n' > "$T/inv-t4.json"
printf '{"name": "tiny", "model_mb": 10, "batch": 64, "iterations": 4, "warmup": 1}\n' > "$T/job.json"
console "$ENVS XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --cluster $T/inv-t4.json --job $T/job.json --trial-cmd 'python3 $root/tests/fixtures/trial.py 0.5' --optimizer random --budget 10"
wait_for '^[^ ]+ +2  ok ' 40
slurm_ctld_stop
wait_for 'waiting for slurmctld' 40
tmx send-keys -t c 3
wait_for 'controller \(here\): NOT ANSWERING for [0-9]+ s, new trials wait'
wait_for 'Slurm nodes in t4: 2 .* as last seen'
tmx send-keys -t c 1
wait_for 'slurm: the controller does not answer'
journal="$(ls "$T"/state/sessions/*.jsonl | tail -1)"
before="$T/before.txt"
sleep 3 # a trial started before the outage was seen ends now (ok, or failed with the reason)
python3 -c 'import json, sys
ok = {l["trial"]: l["time_s"] for l in map(json.loads, open(sys.argv[1]))
      if l.get("event") == "finished" and l["status"] == "ok"}
assert ok, "no measured trial before the outage"
print(json.dumps(ok))' "$journal" > "$before" || fail "no measured trial in the journal before the outage"
started="$(grep -c '"event":"started"' "$journal")"
sleep 4
[ "$(grep -c '"event":"started"' "$journal")" = "$started" ] || fail "a trial started while slurmctld was away"
slurm_ctld_start
wait_for 'slurm: the controller answers again' 40
wait_for 'slurm: trials go on'
# Most of this suite's time: a step that ended while slurmctld was away holds its GPUs in
# slurmctld's books until its slurmstepd retries the completion message, a minute after
# the first try failed, and the next trial's step waits for them. The ten trials are read
# from the journal (5 polls a second) before the screen (20 captures a second).
ten_finished() { [ "$(grep -c '"event":"finished"' "$journal")" -ge 10 ]; }
wait_until 150 ten_finished
wait_for '10/10 \| best [0-9.]+ s \| done' 90
python3 - "$journal" "$before" <<'PY' || fail "the journal lost a trial or a reason"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
fin = {l["trial"]: l for l in lines if l.get("event") == "finished"}
assert sorted(fin) == list(range(1, 11)), sorted(fin)
for trial, time_s in json.load(open(sys.argv[2])).items():
    f = fin[int(trial)]
    assert f["status"] == "ok" and f["time_s"] == time_s, (trial, time_s, f)
failed = [f for f in fin.values() if f["status"] != "ok"]
for f in failed:
    assert "controller did not answer" in f["reason"] or f["reason"].startswith("slurm:"), f
assert len(failed) <= 2, failed
assert sum(f["status"] == "ok" for f in fin.values()) >= 8, fin
for f in failed:
    print("       trial %d failed: %s" % (f["trial"], f["reason"]))
PY
for n in $(python3 -c 'import json, sys; print(*json.load(open(sys.argv[1])))' "$before"); do
    grep -qE "^[^ ]+ +$n  ok " "$T/screen.txt" || fail "trial $n is not on the screen as measured"
done
tmx send-keys -t c q
wait_for 'EXITED rc=0' 30
# after an outage the allocation can stay "completing" a while (slurmctld hears late of the
# steps that ended while it was away)
n=0
while [ $n -lt 60 ] && [ -n "$(squeue -h)" ]; do sleep 1; n=$((n + 1)); done
[ -z "$(squeue -h)" ] || fail "a job is left: $(squeue -h)"
echo "  ok   slurmctld away mid-session: said, trials held, every measured trial kept, session done"
echo "console_slurm_outage.sh: ok"
