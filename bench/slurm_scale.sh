#!/bin/sh
# Controller load of watching a long Slurm partition (issue 12): for a 64-node and a
# 1,024-node partition, a naive poller (`squeue` + `sinfo` + `scontrol show job` on every
# second's tick) against `tunedeck hosts --slurm --partition wide --watch` (rounds of one
# `squeue`, with the `sinfo` node table when it is 10 s old or the queue shows nodes changing,
# at least 2 s apart, backing off to 30 s while nothing changes).
#
# The partition is the harness's opt-in "wide" one (tests/slurm-harness.sh,
# SLURM_EXTRA_NODES): n1..n4 with their slurmd plus powered-down cloud nodes with none, so
# sinfo answers with every node as a real 1,024-node controller would, on a 2-core machine,
# and their state never changes under the watch (down nodes turn down* 30 s in). Each poller
# gets its own window of the same length with the same churn, restarted at the window's
# start (a 5-second job into "wide" at once and every 15 s after), so both see the same
# changes at the same offsets. Load is counted as the commands each ran, the query RPCs
# slurmctld served (sdiag by message type: *_INFO except its own REQUEST_STATS_INFO, reset
# before each window, with the churn alone, measured first, subtracted) and the time
# slurmctld spent serving them (sdiag's total_time), plus the bytes each read per round and
# its own CPU time.
#
#   sh bench/slurm_scale.sh [RESULT.json] [--quick]
#   BENCH_SLURM_SCALE_S=S     each poller's window (default 30; --quick or BENCH_QUICK=1: 12)
#   BENCH_SLURM_SCALE_NODES   the partition sizes (default "64 1024"; at least 5 each)
# Prints ratios (naive / tunedeck: above 1 is less load from tunedeck).
set -u
out=/dev/null
quick="${BENCH_QUICK:-0}"
for a in "$@"; do
    case "$a" in
    --quick) quick=1 ;;
    *) out="$a" ;;
    esac
done
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${TUNEDECK_BUILD:-$here/build}"
bin="$build/tunedeck"
if [ "$quick" = 1 ]; then span="${BENCH_SLURM_SCALE_S:-12}"; else span="${BENCH_SLURM_SCALE_S:-30}"; fi
sizes="${BENCH_SLURM_SCALE_NODES:-64 1024}"
churn_span=10
command -v slurmctld > /dev/null || { echo "bench slurm_scale: slurm-wlm not installed; skipped"; exit 0; }
[ -x "$bin" ] || { echo "bench slurm_scale: no $bin (make all first)" >&2; exit 1; }
T="$(mktemp -d /tmp/tunedeck-bench-slurm-scale.XXXXXX)"
[ -d "$T" ] || exit 1
. "$here/tests/port-lease.sh"
. "$here/tests/slurm-harness.sh"
CHURN=""
stop_churn() {
    [ -n "$CHURN" ] && kill "$CHURN" 2>/dev/null && wait "$CHURN" 2>/dev/null
    CHURN=""
    scancel --user=root --full 2>/dev/null
}
cleanup() {
    stop_churn
    slurm_stop_all
    rm -rf "$T" 2> /dev/null || { sleep 1; rm -rf "$T"; } # a slurmd may still be writing
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up

# Query RPCs and the microseconds slurmctld spent on them since its last reset, then the
# node-table requests alone (REQUEST_NODE_INFO, the one whose cost grows with the node
# list): "COUNT US NODE_COUNT NODE_US".
queries() {
    sdiag | awk '/by message type/ {on = 1; next} /by user/ {on = 0}
        on && /_INFO/ && !/REQUEST_STATS_INFO/ {
            c = 0; t = 0
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^count:/) { sub("count:", "", $i); c = $i }
                if ($i ~ /^total_time:/) { sub("total_time:", "", $i); t = $i }
            }
            n += c; us += t
            if ($1 == "REQUEST_NODE_INFO") { nn += c; nus += t } }
        END { printf "%d %d %d %d\n", n, us, nn, nus }'
}

# slurmctld's CPU time so far, in clock ticks (user + system, /proc): what the controller
# spent, waiting on locks or the loaded machine not included, unlike sdiag's times.
ctld_ticks() {
    awk '{ print $14 + $15 }' "/proc/$(cat "$S/slurmctld.pid")/stat"
}

churn() {
    while :; do
        sbatch -p wide -o /dev/null -J churn -n 1 --wrap 'sleep 5' > /dev/null 2>&1
        sleep 15
    done
}

start_churn() {
    stop_churn
    churn &
    CHURN=$!
}

# CPU seconds (user + system) of a shell's waited-for children, from its `times` output.
children_cpu() {
    sed -n 2p "$1" | awk '{ t = 0
        for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
        printf "%.3f\n", t }'
}

naive() { # on every second's tick: the three commands a simple dashboard runs
    end=$(( $(date +%s) + span ))
    calls=0 bytes=0 rounds=0
    while [ "$(date +%s)" -lt "$end" ]; do
        b1=$(squeue -p wide 2>/dev/null | wc -c)
        b2=$(sinfo -p wide 2>/dev/null | wc -c)
        b3=$(scontrol show job 2>/dev/null | wc -c)
        calls=$((calls + 3)) bytes=$((bytes + b1 + b2 + b3)) rounds=$((rounds + 1))
        sleep "$(date +%N | awk '{ printf "%.3f", 1.001 - $1 / 1e9 }')" # to the next tick
    done
    # this subshell's children: the commands, and the loop's own date/awk/sleep/wc too
    times > "$T/naive.times"
    echo "$calls $bytes $rounds $(children_cpu "$T/naive.times")"
}

[ "$out" = /dev/null ] || mkdir -p "$(dirname "$out")"
results="$T/results.txt"
: > "$results"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for nodes in $sizes; do
    extra=$((nodes - 4))
    [ "$extra" -ge 1 ] || { echo "bench slurm_scale: $nodes nodes: at least 5" >&2; exit 1; }
    slurm_stop_all
    SLURM_EXTRA_NODES=$extra
    export SLURM_EXTRA_NODES
    slurm_init "$T/s$nodes"
    t0=$(date +%s.%N)
    slurm_start || { echo "bench slurm_scale: the harness did not start with $nodes nodes" >&2; exit 1; }
    start_s=$(echo "$(date +%s.%N) - $t0" | bc)
    listed=$(sinfo -h -N -p wide -o '%N' | sort -u | wc -l)
    [ "$listed" -eq "$nodes" ] ||
        { echo "bench slurm_scale: sinfo lists $listed nodes in wide, not $nodes" >&2; exit 1; }

    start_churn
    sdiag -r > /dev/null
    k0=$(ctld_ticks)
    sleep "$churn_span"
    base_ticks=$(( $(ctld_ticks) - k0 ))
    set -- $(queries)
    base_rpc=$1 base_us=$2

    start_churn
    sdiag -r > /dev/null
    k0=$(ctld_ticks)
    set -- $(naive)
    naive_ticks=$(( $(ctld_ticks) - k0 ))
    naive_calls=$1 naive_bytes=$2 naive_rounds=$3 naive_cpu=$4
    set -- $(queries)
    naive_rpc=$1 naive_us=$2 naive_node_rpc=$3 naive_node_us=$4

    start_churn
    sdiag -r > /dev/null
    k0=$(ctld_ticks)
    /usr/bin/time -f '%U %S' -o "$T/time.out" \
        "$bin" hosts --slurm --partition wide --watch --watch-for "$span" > "$T/watch.out" 2>&1
    ours_ticks=$(( $(ctld_ticks) - k0 ))
    set -- $(queries)
    ours_rpc=$1 ours_us=$2 ours_node_rpc=$3 ours_node_us=$4
    ours_calls=$(sed -n 's/^watched: \([0-9]*\) controller calls$/\1/p' "$T/watch.out")
    # a tunedeck from before the node table's own rhythm prints no rounds: two calls a round
    ours_rounds=$(sed -n 's/^rounds: \([0-9]*\) .*/\1/p' "$T/watch.out")
    ours_rounds=${ours_rounds:-$(( ${ours_calls:-0} / 2 ))}
    ours_bytes=$(sed -n 's/^read: \([0-9]*\) bytes of answers$/\1/p' "$T/watch.out")
    ours_cpu=$(awk '{ print $1 + $2 }' "$T/time.out")
    ours_nodes=$(sed -n 's/^\[[0-9:]*\] \([0-9]*\) nodes,.*/\1/p' "$T/watch.out" | tail -1)
    stop_churn
    [ -n "$ours_calls" ] && [ "${ours_nodes:-0}" -eq "$nodes" ] || {
        echo "bench slurm_scale: the watch did not see $nodes nodes:" >&2
        tail -5 "$T/watch.out" >&2
        exit 1
    }
    echo "$nodes $start_s $base_rpc $base_us $naive_calls $naive_bytes $naive_rounds $naive_cpu" \
        "$naive_rpc $naive_us $ours_calls $ours_bytes $ours_cpu $ours_rpc $ours_us" \
        "$naive_node_rpc $naive_node_us $ours_node_rpc $ours_node_us" \
        "$base_ticks $naive_ticks $ours_ticks $(getconf CLK_TCK) $ours_rounds" >> "$results"
done

python3 - "$out" "$span" "$churn_span" "$results" "$(nproc)" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
import json, sys
out, span, churn_span, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
cores, load0, load1 = int(sys.argv[5]), sys.argv[6], sys.argv[7]
per_min = lambda x, s=span: x * 60.0 / s
rows = []
print("slurm watch at scale: each poller %.0f s on its own (the churn alone %.0f s first), "
      "a 5-second job into the partition at once and every 15 s; %d cores, load average %s "
      "at the start, %s at the end" % (span, churn_span, cores, load0, load1))
if span < 30:
    print("  (a short window: tunedeck's first rounds, 2 s apart before any back-off, weigh more)")
for line in open(path):
    f = line.split()
    nodes, start_s = int(f[0]), float(f[1])
    base_rpc, base_us, nc, nb, nr = (int(x) for x in f[2:7])
    ncpu = float(f[7])
    nrpc, nus, oc, ob = (int(x) for x in f[8:12])
    ocpu = float(f[12])
    orpc, ous = int(f[13]), int(f[14])
    nnode, nnode_us, onode, onode_us = (int(x) for x in f[15:19])
    bt, nt, ot, hz = (int(x) for x in f[19:23])
    # slurmctld's CPU beyond what it spends with the churn alone (backfill, the jobs): in
    # the JSON only, since /proc's 10 ms ticks are too coarse for 30 s windows
    b_cpu = bt / hz * span / churn_span
    ncpu_ctld, ocpu_ctld = max(nt / hz - b_cpu, 0), max(ot / hz - b_cpu, 0)
    # the churn's own queries, scaled to each window, are not the pollers'
    b_rpc, b_us = base_rpc * span / churn_span, base_us * span / churn_span
    nrpc, nus = max(nrpc - b_rpc, 0), max(nus - b_us, 0)
    orpc, ous = max(orpc - b_rpc, 1), max(ous - b_us, 1)
    o_rounds = max(int(f[23]), 1)
    r = {"nodes": nodes, "span_s": span, "harness_start_s": start_s,
         "churn_only_rpcs_per_min": per_min(base_rpc, churn_span),
         "naive_calls_per_min": per_min(nc), "ours_calls_per_min": per_min(oc),
         "calls_ratio": nc / max(oc, 1),
         "naive_rpcs_per_min": per_min(nrpc), "ours_rpcs_per_min": per_min(orpc),
         "rpcs_ratio": nrpc / orpc,
         "naive_ctld_ms_per_min": per_min(nus) / 1000, "ours_ctld_ms_per_min": per_min(ous) / 1000,
         "ctld_time_ratio": nus / ous,
         "ctld_cpu_s_per_min_churn_only": per_min(bt / hz, churn_span),
         "naive_ctld_cpu_s_per_min": per_min(ncpu_ctld), "ours_ctld_cpu_s_per_min": per_min(ocpu_ctld),
         "naive_node_table_rpcs_per_min": per_min(nnode), "ours_node_table_rpcs_per_min": per_min(onode),
         "naive_node_table_ms_each": nnode_us / max(nnode, 1) / 1000,
         "ours_node_table_ms_each": onode_us / max(onode, 1) / 1000,
         "naive_rounds": nr, "ours_rounds": o_rounds,
         "naive_bytes_per_round": nb / max(nr, 1), "ours_bytes_per_round": ob / o_rounds,
         "naive_bytes_per_min": per_min(nb), "ours_bytes_per_min": per_min(ob),
         "naive_client_cpu_s_per_min": per_min(ncpu), "ours_client_cpu_s_per_min": per_min(ocpu)}
    rows.append(r)
    print("%5d nodes (harness up in %.1f s):" % (nodes, start_s))
    print("  commands/min:             naive %6.0f  tunedeck %6.1f  -> %5.1fx fewer" %
          (r["naive_calls_per_min"], r["ours_calls_per_min"], r["calls_ratio"]))
    print("  slurmctld query RPCs/min: naive %6.0f  tunedeck %6.1f  -> %5.1fx fewer (churn alone: %.0f/min)" %
          (r["naive_rpcs_per_min"], r["ours_rpcs_per_min"], r["rpcs_ratio"], r["churn_only_rpcs_per_min"]))
    print("  slurmctld ms serving/min: naive %6.1f  tunedeck %6.1f  -> %5.1fx less" %
          (r["naive_ctld_ms_per_min"], r["ours_ctld_ms_per_min"], r["ctld_time_ratio"]))
    print("  of which node tables:     naive %6.0f  tunedeck %6.1f  -> %5.1fx fewer (%.2f and %.2f ms each)" %
          (r["naive_node_table_rpcs_per_min"], r["ours_node_table_rpcs_per_min"],
           nnode / max(onode, 1), r["naive_node_table_ms_each"], r["ours_node_table_ms_each"]))
    print("  bytes read per round:     naive %6.0f  tunedeck %6.0f  (%d and %d rounds; per min %.0f vs %.0f)" %
          (r["naive_bytes_per_round"], r["ours_bytes_per_round"], nr, o_rounds,
           r["naive_bytes_per_min"], r["ours_bytes_per_min"]))
    print("  poller CPU s/min:         naive %6.2f  tunedeck %6.2f" %
          (r["naive_client_cpu_s_per_min"], r["ours_client_cpu_s_per_min"]))
json.dump({"bench": "slurm_scale", "span_s": span, "churn_only_span_s": churn_span,
           "cores": cores, "loadavg_start": load0, "loadavg_end": load1,
           "partitions": rows}, open(out, "w"), indent=1)
EOF
