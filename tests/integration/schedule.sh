#!/bin/sh
# tunedeck schedule end to end: a small real-format workload under several policies, the
# --json object, the --events stream, and clear errors on bad input. No processes linger:
# each command runs in the foreground and exits.
set -eu
bin="${TUNEDECK_BIN:?}"
here="$(cd "$(dirname "$0")" && pwd)"
fixture="$here/../fixtures/workload-small.csv"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
. "$here/lib/procs_left.sh"

fail() { echo "schedule.sh: $*" >&2; exit 1; }

for p in doubling tiresias optimus fixed-2; do
    "$bin" schedule --workload "$fixture" --policy "$p" --nodes 2 --json \
        --events "$tmp/$p.jsonl" >"$tmp/$p.json" 2>"$tmp/$p.err" || fail "$p exited non-zero: $(cat "$tmp/$p.err")"
    python3 - "$tmp/$p.json" "$tmp/$p.jsonl" "$p" <<'PY' || fail "$p: bad output"
import json, sys
out = json.load(open(sys.argv[1]))
keys = ["policy", "jobs", "avg_jct_s", "p50_jct_s", "p99_jct_s", "makespan_s", "gpu_utilization",
        "resizes_per_job", "gpu_s_lost_to_resizes", "gpu_s_lost_to_starts", "decision_ms_median"]
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

# Fewer GPUs usable than the jobs ask for (a drained node, GPUs held by others, from the
# start or mid-run): every policy finishes, nothing runs on the drained node, and a job
# asking 8 GPUs of 4 usable runs on 4. Under `timeout`, so a scheduler that never finishes
# fails here instead of hanging the suite (doubling-explore and tiresias did).
for p in $("$bin" schedule --help | sed -n 's/^policies: \([^(]*\).*/\1/p' | tr -d ,); do
    for drain in "--drain node01" "--drain node01@900 --hold node00=1@3000"; do
        # shellcheck disable=SC2086 # $drain is two or four words
        timeout 120 "$bin" schedule --workload "$fixture" --policy "$p" --nodes 2 $drain \
            --events "$tmp/drain.jsonl" --json >"$tmp/drain.json" 2>"$tmp/drain.err" ||
            fail "$p with $drain: exit $? $(cat "$tmp/drain.err")"
        python3 - "$tmp/drain.jsonl" "$drain" "$tmp/drain.json" <<'PY' || fail "$p with $drain: bad events"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert len({e["job"] for e in ev if e["event"] == "finish"}) == 12, "unfinished"
at = 900 if "@" in sys.argv[2] else 0
on = [e for e in ev if e["time_s"] >= at and e["event"] in ("start", "resize")
      and any(s["host"] == "node01" for s in e["placement"])]
assert not on, on[:1]
# The utilization divides the GPU-seconds the events hold by the usable ones: 4 GPUs with
# node01 drained from the start; else 8 until 900 s, 4 until 3000 s, then 3 (the changes
# fall on decisions, every 60 s).
held, busy, t = {}, 0.0, 0.0
for e in ev:
    busy += sum(held.values()) * (e["time_s"] - t)
    t = e["time_s"]
    held[e["job"]] = e["gpus"]
end = t
steps = [(0, 4)] if at == 0 else [(0, 8), (900, 4), (3000, 3)]
usable = sum(n * (min(end, (steps + [(end, 0)])[i + 1][0]) - s0)
             for i, (s0, n) in enumerate(steps) if s0 < end)
util = json.load(open(sys.argv[3]))["gpu_utilization"]
assert abs(util - busy / usable) <= 1e-6 * util + 1e-9, (util, busy / usable)
assert 0 < util <= 1, util
PY
    done
done
printf 'name,time,application,num_replicas,batch_size\nbig,0,cifar10,8,2048\n' >"$tmp/big.csv"
timeout 60 "$bin" schedule --workload "$tmp/big.csv" --policy tiresias --nodes 2 --drain node01 \
    --events "$tmp/big.jsonl" >/dev/null || fail "a job asking 8 of 4 usable GPUs: exit $?"
grep -q '"event":"start","job":"big".*"gpus":4,' "$tmp/big.jsonl" ||
    fail "a job asking 8 of 4 usable GPUs: $(head -1 "$tmp/big.jsonl")"

# A run in which no job can ever run again (every node drained mid-run) stops with exit 1,
# naming the waiting jobs and why, and keeps the events up to there.
rc=0
timeout 60 "$bin" schedule --workload "$fixture" --policy doubling --nodes 2 --drain node00@600 \
    --drain node01@600 --events "$tmp/stuck.jsonl" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "a stuck run: exit $rc, expected 1"
grep -q "stuck at t=.*cifar10-.* (cifar10): no GPU is usable.*0 of 8 GPUs usable (drained: node00, node01)" \
    "$tmp/err" || fail "a stuck run's message: $(cat "$tmp/err")"
grep -q '"event":"stop"' "$tmp/stuck.jsonl" || fail "a stuck run kept no events"

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
# A pin of 0 was accepted and did nothing; a second pin of a job silently replaced the first.
expect_error "--pin: expected an integer in \[1, " --workload "$fixture" --policy doubling \
    --pin cifar10-0=0
expect_error "job 'cifar10-0' pinned twice (cifar10-0=2, then cifar10-0=4)" \
    --workload "$fixture" --policy doubling --pin cifar10-0=2 --pin cifar10-0=4
expect_error "unknown policy 'nosuch': expected one of" --workload "$fixture" --policy nosuch
expect_error "exactly one of" --policy doubling
expect_error "--drain 'n9': expected a node of the cluster (node00..node01), found 'n9'" \
    --workload "$fixture" --policy doubling --nodes 2 --drain n9
# The message names the argument: with several --drain and --hold, which one was wrong.
expect_error "--hold 'node01=5': expected an integer in \[0, 4\], found '5'" --workload "$fixture" \
    --policy doubling --nodes 2 --hold node00=1 --hold node01=5
expect_error "--drain 'node01@-5': expected a number in \[0, 1e+09\], found '-5'" \
    --workload "$fixture" --policy doubling --nodes 2 --drain node00 --drain node01@-5
# Two changes of one node at one time: one silently replaced the other, in qsort's order.
expect_error "--hold 'node00=3': the node is changed twice at 0 s (--hold 'node00=2', then this one)" \
    --workload "$fixture" --policy doubling --nodes 2 --hold node00=2 --hold node00=3
expect_error "--hold 'node01=1@600': the node is changed twice at 600 s (--drain 'node01@600'" \
    --workload "$fixture" --policy doubling --nodes 2 --drain node01@600 --hold node01=1@600
# --seed draws only the Poisson arrivals: with a workload it was taken and changed nothing.
expect_error "--seed: expected --arrival-mean with it" --workload "$fixture" --policy doubling \
    --seed 7
printf '{"gpu_speeds": {"T4": 1}, "node_groups": [{"nodes": 2, "gpus_per_node": 4, "gpu": "A100"}]}' \
    >"$tmp/badcluster.json"
expect_error "node_groups\[0\].gpu: expected one of gpu_speeds (T4), found 'A100'" \
    --workload "$fixture" --policy doubling --cluster "$tmp/badcluster.json"
# A run that reaches the simulated-time limit with jobs still running (a GPU speed of 1e-300:
# they progress, so they are not stuck) printed its summary as a whole run's, exit 0:
# "1 jobs, average JCT 0 s, makespan 0 s". Now exit 1, no summary, the events kept.
printf '{"gpu_speeds": {"T4": 1e-300}, "node_groups": [{"nodes": 1, "gpus_per_node": 4, "gpu": "T4"}]}' \
    >"$tmp/slow.json"
printf 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\n' >"$tmp/one.csv"
rc=0
"$bin" schedule --workload "$tmp/one.csv" --cluster "$tmp/slow.json" --interval 1e7 \
    --events "$tmp/slow.jsonl" --json >"$tmp/slow.out" 2>"$tmp/slow.err" || rc=$?
[ $rc -eq 1 ] && grep -q "stopped at the simulated-time limit (t=1000000000 s, .*0 of 1 job finished" \
    "$tmp/slow.err" || fail "a run at the time limit: exit $rc: $(cat "$tmp/slow.err")"
[ ! -s "$tmp/slow.out" ] || fail "a run at the time limit printed a summary: $(cat "$tmp/slow.out")"
grep -q '"event":"start"' "$tmp/slow.jsonl" || fail "a run at the time limit kept no events"
# One job is "1 job" ("1 jobs" was printed), two are "2 jobs".
"$bin" schedule --workload "$tmp/one.csv" >"$tmp/one.out" || fail "a one-job run failed"
grep -q "^policy doubling: 1 job, average JCT" "$tmp/one.out" || fail "one job: $(cat "$tmp/one.out")"
"$bin" schedule --arrival-mean 100 --jobs 2 >"$tmp/two.out" || fail "a two-job run failed"
grep -q "^policy doubling: 2 jobs, average JCT" "$tmp/two.out" || fail "two jobs: $(cat "$tmp/two.out")"
# --events that cannot be written: a folder is refused before the run, with the reason; a
# write that fails at the end (a full disk: /dev/full) still prints the run's summary (it was
# measured; it was thrown away, exit 2) and exits 1 saying why.
rc=0
"$bin" schedule --workload "$fixture" --policy doubling --nodes 2 --events "$tmp" \
    >"$tmp/ev.out" 2>"$tmp/ev.err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--events: cannot write '$tmp': Is a directory" "$tmp/ev.err" ||
    fail "--events FOLDER: exit $rc: $(cat "$tmp/ev.err")"
[ -s "$tmp/ev.out" ] && fail "--events FOLDER ran the simulation: $(cat "$tmp/ev.out")"
if [ -w /dev/full ]; then
    rc=0
    "$bin" schedule --workload "$fixture" --policy doubling --nodes 2 --json --events /dev/full \
        >"$tmp/ev.out" 2>"$tmp/ev.err" || rc=$?
    [ $rc -eq 1 ] && grep -q -- "--events: write to '/dev/full' failed: No space left on device" \
        "$tmp/ev.err" || fail "--events /dev/full: exit $rc: $(cat "$tmp/ev.err")"
    /usr/bin/python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["jobs"] > 0' \
        "$tmp/ev.out" || fail "--events /dev/full lost the summary: $(cat "$tmp/ev.out")"
fi

# SIGTERM (or Ctrl-C) mid-run: the events decided so far are written, valid JSON lines, the
# message says where the run stopped, and tunedeck ends by the signal (143). It used to end
# at once, leaving the --events file it had emptied before the run empty. The signal is sent
# once the run has used 3 s of CPU (a 200,000-job trace runs for minutes; its setup for well
# under a second), so it lands mid-run however loaded the machine is.
"$bin" schedule --arrival-mean 4 --jobs 200000 --nodes 4096 --json --events "$tmp/int.jsonl" \
    >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
# the run, while its command line is still this one's (pid_kill_named): the trap may come after
# it ended, its number since another suite's process's
trap 'pid_kill_named TERM "$pid" "$tmp/int.jsonl" || :; rm -rf "$tmp"' EXIT
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo -1; }
ticks=$(getconf CLK_TCK)
while :; do
    t=$(cpu_ticks)
    [ "$t" -ge 0 ] || fail "the 200,000-job run ended before it was signalled"
    [ "$t" -lt $((3 * ticks)) ] || break
    sleep 0.2
done
pid_kill_named TERM "$pid" "$tmp/int.jsonl"
rc=0
wait "$pid" || rc=$?
trap 'rm -rf "$tmp"' EXIT
[ $rc -eq 143 ] || fail "interrupted run: exit $rc, expected 143: $(cat "$tmp/int.err")"
grep -q "interrupted at t=[0-9]* s, [0-9]* of 200000 jobs finished, no summary; the events so far are in $tmp/int.jsonl" \
    "$tmp/int.err" || fail "interrupted run: message: $(cat "$tmp/int.err")"
[ ! -s "$tmp/int.out" ] || fail "interrupted run printed a summary: $(cat "$tmp/int.out")"
/usr/bin/python3 - "$tmp/int.jsonl" <<'PY' || fail "interrupted run: events lost or broken"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
assert any(e["event"] == "finish" for e in events), len(events)
PY
exit 0
