#!/bin/sh
# Controller load of watching a Slurm cluster, in the same run on the private Slurm of
# tests/slurm-harness.sh: a naive poller (`squeue` + `sinfo` + `scontrol show job` once a
# second) against `tunedeck hosts --slurm --watch` (back-off from 2 s), each for
# BENCH_SLURM_S seconds (default 60), while a churn submits a short job every 15 s so the
# cluster changes as a busy one does. Load is counted twice: the commands each poller ran,
# and the RPCs slurmctld itself served (sdiag's statistics by message type, the query types
# only: *_INFO but not its own REQUEST_STATS_INFO), over the same span with the churn alone
# subtracted. Argument: the JSON result file. Prints ratios (naive / ours: above 1 is fewer).
set -u
out="${1:-/dev/null}"
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${TUNEDECK_BUILD:-$here/build}"
bin="$build/tunedeck"
span="${BENCH_SLURM_S:-60}"
command -v slurmctld > /dev/null || { echo "bench slurm: slurm-wlm not installed; skipped"; exit 0; }
T="$(mktemp -d /tmp/tunedeck-bench-slurm.XXXXXX)"
[ -d "$T" ] || exit 1
. "$here/tests/port-lease.sh"
. "$here/tests/slurm-harness.sh"
CHURN=""
cleanup() {
    [ -n "$CHURN" ] && kill "$CHURN" 2>/dev/null
    slurm_stop_all
    rm -rf "$T" 2> /dev/null || { sleep 1; rm -rf "$T"; } # a slurmd may still be writing
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
slurm_init "$T/s"
slurm_start || { echo "bench slurm: the harness did not start" >&2; exit 1; }

# RPCs of the query types slurmctld has served since its last reset.
queries() {
    sdiag | awk '/by message type/ {on = 1; next} /by user/ {on = 0}
        on && /_INFO/ && !/REQUEST_STATS_INFO/ {
            for (i = 1; i <= NF; i++) if ($i ~ /^count:/) { sub("count:", "", $i); n += $i } }
        END { print n + 0 }'
}

churn() {
    while :; do
        sbatch -o /dev/null -J churn -n 1 --wrap 'sleep 5' > /dev/null 2>&1
        sleep 15
    done
}

naive() { # on every second's tick: the three commands a simple dashboard runs
    end=$(( $(date +%s) + span ))
    calls=0
    while [ "$(date +%s)" -lt "$end" ]; do
        tick=$(date +%s)
        squeue > /dev/null 2>&1
        sinfo > /dev/null 2>&1
        scontrol show job > /dev/null 2>&1
        calls=$((calls + 3))
        while [ "$(date +%s)" -eq "$tick" ]; do sleep 0.05; done
    done
    echo "$calls"
}

churn &
CHURN=$!

sdiag -r > /dev/null
sleep "$span"
base=$(queries)

sdiag -r > /dev/null
naive_calls=$(naive)
naive_rpc=$(( $(queries) - base ))

sdiag -r > /dev/null
"$bin" hosts --slurm --watch --watch-for "$span" > "$T/watch.out" 2>&1
ours_calls=$(sed -n 's/^watched: \([0-9]*\) controller calls/\1/p' "$T/watch.out")
ours_rpc=$(( $(queries) - base ))

python3 - "$out" "$span" "$naive_calls" "$ours_calls" "$naive_rpc" "$ours_rpc" "$base" <<'EOF'
import json, sys
out, span = sys.argv[1], float(sys.argv[2])
nc, oc, nr, orr, base = (int(x) for x in sys.argv[3:8])
per_min = lambda x: x * 60.0 / span
nr, orr = max(nr, 0), max(orr, 1)
r = {"span_s": span, "nodes": 4,
     "naive_calls_per_min": per_min(nc), "ours_calls_per_min": per_min(oc),
     "calls_ratio": nc / max(oc, 1),
     "naive_rpcs_per_min": per_min(nr), "ours_rpcs_per_min": per_min(orr),
     "rpcs_ratio": nr / orr, "churn_only_rpcs": base}
print("slurm watch, %.0f s each, 4 nodes, a short job every 15 s:" % span)
print("  commands/min: naive %.0f, tunedeck %.1f  -> %.1fx fewer" %
      (r["naive_calls_per_min"], r["ours_calls_per_min"], r["calls_ratio"]))
print("  slurmctld query RPCs/min: naive %.0f, tunedeck %.1f  -> %.1fx fewer (churn alone: %d)" %
      (r["naive_rpcs_per_min"], r["ours_rpcs_per_min"], r["rpcs_ratio"], base))
json.dump(r, open(out, "w"), indent=1)
EOF
