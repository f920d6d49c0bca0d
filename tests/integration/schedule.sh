#!/bin/sh
# tunedeck schedule end to end: a small real-format workload under several policies, the
# --json object, the --events stream, and clear errors on bad input. No processes linger:
# each command runs in the foreground and exits.
set -eu
bin="${TUNEDECK_BIN:?}"
here="$(cd "$(dirname "$0")" && pwd)"
fixture="$here/../fixtures/workload-small.csv"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() { echo "schedule.sh: $*" >&2; exit 1; }

for p in doubling tiresias optimus fixed-2; do
    "$bin" schedule --workload "$fixture" --policy "$p" --nodes 2 --json \
        --events "$tmp/$p.jsonl" >"$tmp/$p.json" 2>"$tmp/$p.err" || fail "$p exited non-zero: $(cat "$tmp/$p.err")"
    python3 - "$tmp/$p.json" "$tmp/$p.jsonl" "$p" <<'PY' || fail "$p: bad output"
import json, sys
out = json.load(open(sys.argv[1]))
keys = ["policy", "jobs", "avg_jct_s", "p50_jct_s", "p99_jct_s", "makespan_s", "gpu_utilization",
        "resizes_per_job", "gpu_s_lost_to_resizes", "decision_ms_median"]
assert sorted(out) == sorted(keys), out
assert out["policy"] == sys.argv[3] and out["jobs"] == 12, out
assert 0 < out["p50_jct_s"] <= out["p99_jct_s"] <= out["makespan_s"], out
assert 0 < out["gpu_utilization"] <= 1, out
events = [json.loads(l) for l in open(sys.argv[2])]
finished = {e["job"] for e in events if e["event"] == "finish"}
assert len(finished) == 12, finished
held, t = {}, -1
for e in events:
    assert e["time_s"] >= t, "events out of order"
    t = e["time_s"]
    if e["event"] in ("start", "resize"):
        assert sum(s["gpus"] for s in e["placement"]) == e["gpus"], e
        held[e["job"]] = e["gpus"]
    else:
        held.pop(e["job"], None)
    assert sum(held.values()) <= 8, "over capacity at %s" % t
PY
done

# Same seed, same decisions.
"$bin" schedule --workload "$fixture" --policy doubling --nodes 2 --events "$tmp/again.jsonl" >/dev/null
cmp -s "$tmp/doubling.jsonl" "$tmp/again.jsonl" || fail "two identical runs differ"

# A pinned job holds exactly its pin from start to finish.
"$bin" schedule --workload "$fixture" --policy doubling --nodes 2 --pin cifar10-0=3 \
    --events "$tmp/pin.jsonl" >/dev/null || fail "pinned run failed"
python3 - "$tmp/pin.jsonl" <<'PY' || fail "pin not respected"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
mine = [e for e in ev if e["job"] == "cifar10-0" and e["event"] in ("start", "resize")]
assert mine and all(e["gpus"] == 3 for e in mine), mine
PY

# The seed's Poisson arrivals.
"$bin" schedule --arrival-mean 500 --jobs 6 --policy precompute --nodes 1 --gpus-per-node 8 \
    --json >"$tmp/poisson.json" || fail "poisson run failed"
grep -q '"jobs":6' "$tmp/poisson.json" || fail "poisson: $(cat "$tmp/poisson.json")"

# A mixed cluster (4- and 8-GPU nodes, T4 and V100): every placement stays within each
# node's own GPUs, and pollux runs there like every policy.
mixed="$here/../../examples/sched-mixed-cluster.json"
"$bin" schedule --workload "$fixture" --policy pollux --cluster "$mixed" \
    --events "$tmp/mixed.jsonl" --json >"$tmp/mixed.json" || fail "mixed cluster run failed"
python3 - "$tmp/mixed.jsonl" <<'PY' || fail "mixed cluster: bad placements"
import json, sys
size = {"node%02d" % i: 4 if i < 8 else 8 for i in range(12)}
used, t = {}, None
for e in map(json.loads, open(sys.argv[1])):
    used.pop(e["job"], None)
    if e["event"] in ("start", "resize"):
        used[e["job"]] = {s["host"]: s["gpus"] for s in e["placement"]}
    per = {}
    for slots in used.values():
        for h, g in slots.items():
            per[h] = per.get(h, 0) + g
    assert all(per[h] <= size[h] for h in per), (e, per)
assert sum(1 for _ in open(sys.argv[1])) > 12
PY

expect_error() { # expect_error FRAGMENT ARGS...
    frag="$1"; shift
    if "$bin" schedule "$@" >"$tmp/out" 2>"$tmp/err"; then fail "accepted: $*"; fi
    grep -q -- "$frag" "$tmp/err" || fail "message for '$*' lacks '$frag': $(cat "$tmp/err")"
    [ ! -s "$tmp/out" ] || fail "stdout not empty on error: $*"
}
printf 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\nb,9,alexnet,1,64\n' >"$tmp/bad.csv"
expect_error "bad.csv:3: field 'application'" --workload "$tmp/bad.csv" --policy doubling
printf 'name,time,application,num_replicas,batch_size\na,10,cifar10,1,128\nb,9,cifar10,1,64\n' >"$tmp/uns.csv"
expect_error "sorted by time" --workload "$tmp/uns.csv" --policy tiresias
printf 'name,time,application,num_replicas,batch_size\na,-3,cifar10,1,128\n' >"$tmp/neg.csv"
expect_error "field 'time'" --workload "$tmp/neg.csv" --policy tiresias
: >"$tmp/empty.csv"
expect_error "empty file" --workload "$tmp/empty.csv" --policy tiresias
expect_error "expected 0..8 GPUs (the usable cluster), found 16" --workload "$fixture" \
    --policy doubling --nodes 2 --pin cifar10-0=16
expect_error "no job named 'nosuch'" --workload "$fixture" --policy doubling --pin nosuch=2
expect_error "unknown policy 'nosuch': expected one of" --workload "$fixture" --policy nosuch
expect_error "exactly one of" --policy doubling
printf '{"gpu_speeds": {"T4": 1}, "node_groups": [{"nodes": 2, "gpus_per_node": 4, "gpu": "A100"}]}' \
    >"$tmp/badcluster.json"
expect_error "node_groups\[0\].gpu: expected one of gpu_speeds (T4), found 'A100'" \
    --workload "$fixture" --policy doubling --cluster "$tmp/badcluster.json"
exit 0
