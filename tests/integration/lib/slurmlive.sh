# What the live scheduler's Slurm suites share (slurm_live.sh, slurm_live_outage.sh,
# slurm_live_jobs.sh, slurm_live_preempt.sh, slurm_live_limits.sh): sourced after
# lib/suite.sh (with suite_slurm=1); not a suite. Sets mark (this run's marker: the jobs'
# checkpoint name, so pgrep finds their processes and no other run's) and job
# (tunedeck-worker in job mode as
# the job command: it checkpoints on SIGTERM and resumes at any size), and LIVE_PID, the run in the background that suite_stop
# kills (and LAG_PID, slurm_live.sh's lib/lagmirror.py); suite_reap kills what the jobs leave.
#   slurmlive_start [LINE]...  the harness's four nodes in T/s, with LINEs added to its
#                              slurm.conf, started; exit 1 when they do not start
#   live_inventory             T/inv.json ("backend": "slurm", partition t4, the job command)
#                              and T/solo.csv (one job, solo)
#   quick_inventory NAME BLOCK T/NAME.json: T/inv.json with BLOCK (JSON) as its "slurm" block,
#                              for the sections that only wait an interval out
#   settle, wait_line, live_ended   (below)
#   slurmlive_done             the result line (and each run's output on a failure); exits
# The Python checks import lib/slurmlive.py (on PYTHONPATH as lib/outcheck.py is).
mark="sll$$x" # the x ends the number: pgrep -f "ckpt-sll123" would find run 1234's jobs too
LIVE_PID="" LAG_PID=""
# Each only while its command line still names a file in $T (each run's --job-dir, the
# mirror's folder; pid_kill_named, lib/procs_left.sh): one that ended may have left its number
# to another suite's process.
suite_stop() {
    [ -n "$LIVE_PID" ] && pid_kill_named KILL "$LIVE_PID" "$T/"
    [ -n "$LAG_PID" ] && pid_kill_named KILL "$LAG_PID" "$T/"
}
suite_reap() { for p in $(pgrep -f "ckpt-$mark" 2>/dev/null); do pid_kill_named KILL "$p" "ckpt-$mark"; done; }
job="$build/tunedeck-worker --job --gpus {gpus} --hosts {hosts} --checkpoint ckpt-$mark \
--resume {resume} --model-mb 0.02 --batch 64 --progress-every 0.25 --step-sleep 0.01"

slurmlive_start() {
    slurm_init "$T/s"
    for line in "$@"; do echo "$line" >> "$SLURM_CONF"; done
    if ! slurm_start; then
        echo "$suite: the harness did not start" >&2
        exit 1
    fi
}

live_inventory() {
    python3 - "$T/inv.json" "$job" <<'PY'
import json, sys
json.dump({"name": "tdtest", "backend": "slurm", "partition": "t4", "job_command": sys.argv[2]},
          open(sys.argv[1], "w"))
PY
    printf 'name,time,application,num_replicas,batch_size\nsolo,0,cifar10,1,128\n' > "$T/solo.csv"
}

quick_inventory() {
    python3 - "$T/inv.json" "$T/$1.json" "$2" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["slurm"] = json.loads(sys.argv[3])
json.dump(inv, open(sys.argv[2], "w"))
PY
}

# Waits up to 10 s for the queue to empty and the jobs' processes to end.
settle() {
    n=0
    while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f "ckpt-$mark" > /dev/null; }; do
        sleep 0.2; n=$((n + 1))
    done
}

# wait_line FILE PATTERN TENTHS: waits up to TENTHS tenths of a second for a line in FILE.
wait_line() {
    n=0
    while [ $n -lt "$3" ] && ! grep -q "$2" "$1" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
}

# live_ended: waits for the background run, settles; sets rc, queue and left.
live_ended() {
    wait "$LIVE_PID"
    rc=$?
    LIVE_PID=""
    settle
    queue="$(squeue -h)"
    left=$(pgrep -f "ckpt-$mark" | wc -l)
}

slurmlive_done() {
    if [ "$fails" -ne 0 ]; then
        echo "$suite: $fails failed"
        for f in "$T"/out[0-9]* "$T"/err[0-9]*; do [ -s "$f" ] && { echo "--- $f"; tail -c 5000 "$f"; }; done
        exit 1
    fi
    echo "$suite: all passed"
    exit 0
}
