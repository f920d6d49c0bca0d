#!/bin/sh
# Time from a live-scheduler decision to the new run of the job training, through Slurm
# against over SSH, in the same run on this machine: the same schedule
# (tests/fixtures/slurm-live-workload.csv, doubling, time x30: starts, a shrink 2 -> 1 GPU
# and a grow back, each through a checkpoint) on the private Slurm of tests/slurm-harness.sh
# (partition t4: n1, n2 with 2 GPUs each) and on two loopback sshd hosts with 2 GPUs each
# (tests/sshd-harness.sh), BENCH_SLURM_LIVE_REPS times each (default 2). Per start or resize
# decision: the wall time from the decision's log line to the first progress line of the
# job's new run (for a resize: the checkpoint, the stop, and the start at the new size;
# on Slurm the sbatch, the controller's grant and the batch script's start). The logs'
# resolution is 0.01 s; the driver reads a Slurm job's output file every 0.2 s.
# Argument: the JSON result file. Prints the ratio slurm / ssh.
set -u
out="${1:-/dev/null}"
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${TUNEDECK_BUILD:-$here/build}"
bin="$build/tunedeck"
reps="${BENCH_SLURM_LIVE_REPS:-2}"
command -v slurmctld > /dev/null || { echo "bench slurm_live: slurm-wlm not installed; skipped"; exit 0; }
command -v sshd > /dev/null || [ -x /usr/sbin/sshd ] || { echo "bench slurm_live: no sshd; skipped"; exit 0; }
T="$(mktemp -d /tmp/tunedeck-bench-slurm-live.XXXXXX)"
[ -d "$T" ] || exit 1
. "$here/tests/port-lease.sh"
HARNESS_SRC="$here/tests/sshd-harness.sh"
. "$here/tests/slurm-harness.sh"
. "$here/tests/sshd-harness.sh"
. "$here/tests/live-inventory.sh"
mark="bsl$$"
cleanup() {
    slurm_stop_all
    harness_stop_all
    for p in $(pgrep -f "ckpt-$mark" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    [ -n "${KEEP:-}" ] || rm -rf "$T" 2> /dev/null || { sleep 1; rm -rf "$T"; }
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
unset SSH_AUTH_SOCK SLURM_JOB_ID

slurm_init "$T/s"
slurm_start || { echo "bench slurm_live: the Slurm harness did not start" >&2; exit 1; }
harness_init "$T/h"
harness_start 1 && harness_start 2 || { echo "bench slurm_live: sshd did not start" >&2; exit 1; }
harness_inventory "$T/inv.json" 1 2
live_inventory "$T/inv.json" "$build/tunedeck-worker" "$mark"
job="$(python3 -c "import json; print(json.load(open('$T/inv.json'))['job_command'])")"
workload="$here/tests/fixtures/slurm-live-workload.csv"
common="--workload $workload --policy doubling --interval 60 --time-scale 30 --duration 15 --status-every 0"

i=0
while [ "$i" -lt "$reps" ]; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # $common is a list of words on purpose
    "$bin" schedule --live --slurm --partition t4 --job-command "$job" $common \
        --job-dir "$T/jobs-slurm-$i" > "$T/slurm-$i.out" 2>&1
    # shellcheck disable=SC2086
    "$bin" schedule --live --cluster "$T/inv.json" $common --job-dir "$T/jobs-ssh-$i" \
        > "$T/ssh-$i.out" 2>&1
done

python3 - "$out" "$T" "$reps" <<'EOF'
import glob, json, re, statistics, sys
out, T, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
line = re.compile(r"^\[\s*([\d.]+)s\] (.*)$")
def delays(path):
    pending, got = {}, []  # job -> (wall of its decision, kind)
    for l in open(path):
        m = line.match(l.rstrip("\n"))
        if not m:
            continue
        t, text = float(m.group(1)), m.group(2)
        d = re.match(r"decision t=\d+s: (start|resize) (\S+) ", text)
        if d:
            pending[d.group(2)] = (t, d.group(1))
            continue
        r = re.match(r"(\S+): run \d+ on \S+ \(\d+ GPUs?\) (first step|resumed at step)", text)
        if r and r.group(1) in pending:
            t0, kind = pending.pop(r.group(1))
            got.append((kind, t - t0))
    return got
res = {}
for backend in ("slurm", "ssh"):
    all_ = [d for f in sorted(glob.glob("%s/%s-*.out" % (T, backend))) for d in delays(f)]
    if not all_:
        sys.exit("bench slurm_live: no decision reached a running job on %s (see the logs)" % backend)
    res[backend] = {
        "decisions": len(all_),
        "median_s": statistics.median(d for _, d in all_),
        "start_median_s": statistics.median([d for k, d in all_ if k == "start"] or [0]),
        "resize_median_s": statistics.median([d for k, d in all_ if k == "resize"] or [0]),
    }
calls = [re.search(r"slurm: (\d+) controller calls \((\d+) scontrol rounds\)", open(f).read())
         for f in sorted(glob.glob("%s/slurm-*.out" % T))]
wall = [re.search(r"live run over after ([\d.]+) s wall", open(f).read())
        for f in sorted(glob.glob("%s/slurm-*.out" % T))]
s, h = res["slurm"], res["ssh"]
r = {"reps": reps, "slurm": s, "ssh": h, "ratio": s["median_s"] / max(h["median_s"], 0.01),
     "slurm_calls": [int(c.group(1)) for c in calls if c],
     "slurm_rounds": [int(c.group(2)) for c in calls if c],
     "slurm_wall_s": [float(w.group(1)) for w in wall if w]}
print("live scheduler, decision -> new run training (median over %d decisions each, %d runs):"
      % (s["decisions"], reps))
print("  starts:  slurm %.2f s, ssh %.2f s" % (s["start_median_s"], h["start_median_s"]))
print("  resizes: slurm %.2f s, ssh %.2f s (checkpoint, stop, start at the new size)"
      % (s["resize_median_s"], h["resize_median_s"]))
print("  all:     slurm %.2f s, ssh %.2f s  -> Slurm takes %.1fx as long" %
      (s["median_s"], h["median_s"], r["ratio"]))
print("  slurm controller calls per run: %s in %s s (scontrol rounds %s)" %
      (r["slurm_calls"], r["slurm_wall_s"], r["slurm_rounds"]))
json.dump(r, open(out, "w"), indent=1)
EOF
