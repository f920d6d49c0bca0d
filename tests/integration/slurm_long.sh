#!/bin/sh
# The Slurm harness's opt-in long node list (tests/slurm-harness.sh, SLURM_EXTRA_NODES),
# which bench/slurm_scale.sh watches: off by default (the 4 nodes every other suite uses),
# and with it a partition "wide" of 1,024 nodes that sinfo, squeue and tunedeck read whole,
# where jobs still run on the four real nodes; the extra nodes as powered-down cloud nodes
# (the default) and as down nodes. About 30 s. The trap stops every daemon it started.
set -u
suite=slurm_long scratch=slurm-long suite_slurm=1
. "$(dirname "$0")/lib/suite.sh"

echo "default harness"
unset SLURM_EXTRA_NODES
slurm_init "$T/plain"
check "without SLURM_EXTRA_NODES: the four nodes, no extra node, no partition wide" \
    sh -c "! grep -q 'NodeName=x\|PartitionName=wide' '$T/plain/slurm.conf' &&
           [ \$(grep -c '^NodeName=n' '$T/plain/slurm.conf') -eq 2 ]"

echo "1,024 nodes"
SLURM_EXTRA_NODES=1020
export SLURM_EXTRA_NODES
slurm_init "$T/s"
ports=$(sed -n 's/.*Port=\[*\([0-9-]*\)\]*.*/\1/p' "$S/slurm.conf" | tr '\n' ' ')
check "the extra nodes' port is none of the real nodes' nor the controller's ($ports)" \
    python3 - "$S/slurm.conf" <<'PY'
import re, sys
conf = open(sys.argv[1]).read()
ctld = int(re.search(r"^SlurmctldPort=(\d+)", conf, re.M).group(1))
real = set()
for a, b in re.findall(r"^NodeName=n\S+ .*Port=\[(\d+)-(\d+)\]", conf, re.M):
    real |= set(range(int(a), int(b) + 1))
extra = int(re.search(r"^NodeName=x\[1-1020\] .*Port=(\d+) ", conf, re.M).group(1))
assert len(real) == 4 and ctld not in real and extra not in real and extra != ctld, (real, ctld, extra)
PY
if ! slurm_start; then
    echo "slurm_long: the harness did not start with 1,024 nodes" >&2
    exit 1
fi
check "sinfo lists 1,024 nodes in wide: n1..n4 idle, x1..x1020 idle~ (powered-down cloud nodes)" \
    sh -c "[ \$(sinfo -h -N -p wide -o %N | sort -u | wc -l) -eq 1024 ] &&
           [ \$(sinfo -h -N -p wide -o '%N %T' | sort -u | grep -c '^n[1-4] idle\$') -eq 4 ] &&
           [ \$(sinfo -h -N -p wide -o '%N %T' | sort -u | grep -c '^x[0-9]* idle~\$') -eq 1020 ]"

"$bin" hosts --slurm --partition wide --json > "$T/h.json" 2> "$T/h.err"
rc=$?
check "hosts --slurm --partition wide reads the 1,024 nodes (exit $rc)" \
    python3 - "$T/h.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "0", sys.argv[2]
n = {x["name"]: x for x in d["nodes"]}
assert len(n) == 1024, len(n)
assert all(n["n%d" % i]["state"] == "idle" for i in range(1, 5))
assert all(n["x%d" % i]["slurm_state"] == "idle~" and n["x%d" % i]["gpus"] == 8 for i in range(1, 1021))
PY

job=$(sbatch --parsable -p wide -o /dev/null -J long -n 1 --wrap 'sleep 30')
n=0
while [ $n -lt 100 ] && [ "$(squeue -h -j "$job" -o %T)" != RUNNING ]; do sleep 0.1; n=$((n + 1)); done
where=$(squeue -h -j "$job" -o %N)
check "a job in wide runs on a real node ($where)" sh -c "echo '$where' | grep -q '^n[1-4]\$'"

"$bin" hosts --slurm --partition wide --watch --watch-for 1 > "$T/w.out" 2>&1
read_bytes=$(sed -n 's/^read: \([0-9]*\) bytes of answers$/\1/p' "$T/w.out")
# the watch's squeue rows end in its own mark, 16 hex digits (slurm_queue.h): one as long here
answer=$(( $(sinfo -N -h -p wide -o '%N|%c|%m|%G|%T|%f|%P|%C|%o|%E' | wc -c) +
           $(squeue -h -p wide -o '%i|%u|%T|%D|%b|%N|%r|%j|0123456789abcdef' | wc -c) ))
check "one watch round: 1,024 nodes and the job, two calls, the bytes of both answers (${read_bytes:-none} vs $answer)" \
    sh -c "grep -q '1024 nodes, 1 job ' '$T/w.out' && grep -q '^watched: 2 controller calls$' '$T/w.out' &&
           [ '${read_bytes:-0}' -eq '$answer' ]"
scancel "$job"

echo "64 nodes, the extra ones down"
slurm_stop_all
SLURM_EXTRA_NODES=60 SLURM_EXTRA_STATE=DOWN
export SLURM_EXTRA_STATE
slurm_init "$T/down"
if ! slurm_start; then
    echo "slurm_long: the harness did not start with 60 down nodes" >&2
    exit 1
fi
"$bin" hosts --slurm --partition wide --json > "$T/d.json" 2> "$T/d.err"
rc=$?
check "hosts --slurm --partition wide: 64 nodes, x1..x60 down, and exits 1 for them (exit $rc)" \
    python3 - "$T/d.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "1", sys.argv[2]
n = {x["name"]: x for x in d["nodes"]}
assert len(n) == 64, len(n)
assert all(n["n%d" % i]["state"] == "idle" for i in range(1, 5))
assert all(n["x%d" % i]["state"] == "down" for i in range(1, 61))
PY
job=$(sbatch --parsable -p wide -o /dev/null -J long -N 5 --wrap 'sleep 30')
sleep 1
why=$(squeue -h -j "$job" -o '%T %r')
check "a job that needs a down node waits ($why)" sh -c "echo '$why' | grep -q '^PENDING'"
scancel "$job"

slurm_nothing_left

[ "$fails" -eq 0 ] && echo "slurm_long: all passed" || echo "slurm_long: $fails failed"
[ "$fails" -eq 0 ]
