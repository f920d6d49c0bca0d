#!/bin/sh
# PyTorch end to end (examples/pytorch_ddp.py, tools/python/tunedeck_trial.py): uneven local
# batches over 3 ranks give the single-process loss and weights to 1e-9; a 3-trial tuning
# session over 2 loopback sshd hosts (tests/sshd-harness.sh) with one rank per device
# (trial.ranks "per-device", env:// rendezvous), and one with rank 0 on host [::1] (MASTER_ADDR
# bare ::1) where this machine has IPv6 loopback; a rank that crashes fails the trial with its
# own error text, one killed without a word (SIGKILL) leads the reason before its peers'
# lost-connection errors, and one that crashes mid-training leads it though a peer's host ended
# first; with a third host, the hosts after the leading one are named in the order their
# notices came; a live run by hand that ends at --total-steps with a progress line for its last
# step, resumed at 3 ranks; docs/pytorch.md's own-script snippet, run as written, stops with
# its step, resumes and refuses another model's checkpoint in one line; a live schedule where
# the job grows from 1 to 2 ranks and shrinks back, its loss going on from each checkpoint
# (--loss-progress). One thread per rank and a tiny model keep it short on 2 cores. Every
# process started here is stopped by the trap: sshd by pid, ranks and live jobs by the run's
# mark on their command lines.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
build="${TUNEDECK_BUILD:-$root/build}"
bin="${TUNEDECK_BIN:-$build/tunedeck}"
T="$(mktemp -d /tmp/tunedeck-pytorch.XXXXXX)"
. "$here/port-lease.sh"
HARNESS_SRC="$here/sshd-harness.sh"
. "$here/sshd-harness.sh"
mark="tdpt$$x"  # x: pid 12's mark is not part of pid 123's
stop_ranks() { # ranks carry --tag MARK, live jobs ckpt-MARK
    for p in $(pgrep -f -- "$mark" 2>/dev/null); do pid_kill_named KILL "$p" "$mark"; done
}
holder=
cleanup() {
    trap "" HUP INT TERM # a second signal (Ctrl-C, then the runner's TERM) must not cut it short
    [ -n "$holder" ] && kill "$holder" 2>/dev/null
    harness_stop_all
    stop_ranks
    [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
unset SSH_AUTH_SOCK
export TUNEDECK_STATE_DIR="$T/state" OMP_NUM_THREADS=1
# the Python checks' shared part (lib/outcheck.py), as lib/suite.sh puts it
export PYTHONPATH="$here/integration/lib${PYTHONPATH:+:$PYTHONPATH}"

. "$here/integration/lib/procs_left.sh"
fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); }

# The Python that has torch: the one on PATH, else Debian's (the sshd hosts use /usr/bin).
PY=python3
python3 -c 'import torch' 2>/dev/null || PY=/usr/bin/python3
if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "pytorch: torch is not importable (make deps installs python3-torch)"
    exit 1
fi
ex="$root/examples/pytorch_ddp.py"
helper="$root/tools/python/tunedeck_trial.py"

echo "trial helper"
cat > "$T/sched.json" <<'EOF'
{"protocol": 1, "trial": 1, "iterations": 6, "warmup": 1,
 "job": {"name": "mlp", "model_mb": 0.1, "batch": 32},
 "machines": [
  {"name": "h1", "worker": true, "ps": true,
   "devices": [{"id": "cpu", "inputs": 5}, {"id": "gpu0", "inputs": 17}]},
  {"name": "h2", "worker": true, "ps": false,
   "devices": [{"id": "cpu", "inputs": 0}, {"id": "gpu0", "inputs": 10}]}]}
EOF
RANK=1 WORLD_SIZE=3 TUNEDECK_MACHINE=h1 TUNEDECK_DEVICE=gpu0 python3 "$helper" "$T/sched.json" \
    > "$T/helper1.out" 2>&1
RANK=1 WORLD_SIZE=4 python3 "$helper" "$T/sched.json" > "$T/helper2.out" 2>&1
rc2=$?
TUNEDECK_MACHINE=h2 python3 "$helper" < "$T/sched.json" > "$T/helper3.out" 2>&1
if grep -qx "rank 1/3 machine 'h1' device 'gpu0' local batch 17 of 32, role worker" "$T/helper1.out" &&
    [ "$rc2" -eq 1 ] &&
    grep -qF '"message": "WORLD_SIZE=4 but the schedule has 3 ranks"' "$T/helper2.out" &&
    grep -qx "rank 0/1 machine 'h2' device '' local batch 10 of 32, role worker" "$T/helper3.out"
then pass "the helper knows each process's rank, device and local batch, and refuses a wrong world"
else fail "trial helper"; cat "$T"/helper*.out; fi
if python3 "$here/tools/python/test_tunedeck_trial.py" > "$T/helper-unit.out" 2>&1
then pass "the helper's unit tests (tests/tools/python): batch shares, lines, errors"
else fail "the helper's unit tests"; tail -30 "$T/helper-unit.out"; fi
# The README's command where the python3 first on PATH has no torch (a pyenv one ahead of
# Debian's; here a venv of Debian's without its packages): the trial's reason names that
# interpreter and where Debian's torch is, not only "No module named 'torch'".
if /usr/bin/python3 -m venv --without-pip "$T/notorch" >"$T/venv.out" 2>&1; then
    (cd "$root" && PATH="$T/notorch/bin:$PATH" "$bin" tune --cluster examples/pytorch-cluster.json \
        --job examples/pytorch-job.json --budget 1 --no-journal --json >"$T/nt.json" 2>"$T/nt.err")
    if "$PY" - "$T/nt.json" "$T/notorch/bin/python3" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
for words in ("No module named 'torch' in %s;" % sys.argv[2],
              "Debian's python3-torch is for /usr/bin/python3"):
    assert words in t["reason"], (words, t["reason"])
EOF
    then pass "without torch in the python3 on PATH, the trial says which interpreter and where torch is"
    else fail "the trial without torch: $(cat "$T/nt.json" "$T/nt.err" | tail -5)"; fi
else fail "python3 -m venv: $(tail -2 "$T/venv.out")"; fi

# The harness's keys and port span first: every port this suite uses is in its span (H_PORT
# to H_PORT+16, leased by the harness): the rendezvous ports are H_PORT+13 (gradient
# equivalence), +10 to +12 (the trials: master_port +9 plus the trial number, at most 3;
# +14 gave trial 3 the port H_PORT+17, outside the span), +14 (the IPv6 trial: master_port
# +13 plus trial 1), +15 (the live job) and +16 (the doc's own script).
harness_init "$T/h" || exit 1

echo "gradient equivalence"
# The single process and the 3 ranks are independent: they start side by side, so the
# section waits for one torch import rather than two in a row.
"$PY" "$ex" --schedule "$T/sched.json" --report "$T/single.txt" --tag "$mark" > "$T/single.out" 2>&1 &
port=$((H_PORT + 13))
for r in 0 1 2; do
    case $r in 0) m=h1 d=cpu l=0 ;; 1) m=h1 d=gpu0 l=1 ;; 2) m=h2 d=gpu0 l=0 ;; esac
    RANK=$r WORLD_SIZE=3 LOCAL_RANK=$l MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        TUNEDECK_MACHINE=$m TUNEDECK_DEVICE=$d \
        "$PY" "$ex" --schedule "$T/sched.json" --report "$T/multi.txt" --tag "$mark" \
        > "$T/rank$r.out" 2>&1 &
done
wait
if "$PY" - "$T/single.txt" "$T/multi.txt" "$T/rank1.out" <<'EOF'
import json, sys
a = open(sys.argv[1]).read().split()
b = open(sys.argv[2]).read().split()
la, na, lb, nb = float(a[1]), float(a[3]), float(b[1]), float(b[3])
assert abs(la - lb) <= 1e-9 * abs(la) and abs(na - nb) <= 1e-9 * abs(na), (a, b)
# the rank reported its own device and local batch
it = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")]
dev = it[0]["machines"][0]["devices"][0]
assert it[0]["machines"][0]["name"] == "h1" and dev == dict(dev, id="gpu0", inputs=17), it[0]
print("    loss %s vs %s, weight norm %s vs %s" % (a[1], b[1], a[3], b[3]))
EOF
then pass "3 ranks with local batches 5/17/10 train exactly as one process with 32"
else fail "gradient equivalence"; for f in "$T"/single.out "$T"/rank*.out; do tail -5 "$f"; done; fi

echo "live: a run that ends by itself"
# --total-steps ends the run; its last step has a progress line as a SIGTERM's stop step has
# (the scheduler takes the run's end from it): it had only the first step's, the next due
# --progress-every seconds later. A resume at 3 ranks splits the same batch 22/21/21.
mkdir -p "$T/byhand"
(cd "$T/byhand" && "$PY" "$ex" --live --world 1 --resume job.ckpt --checkpoint job.ckpt \
    --batch 64 --total-steps 3 --progress-every 1000 --tag "$mark" > a.out 2> a.err &&
 "$PY" "$ex" --live --world 3 --resume job.ckpt --checkpoint job.ckpt \
    --batch 64 --total-steps 5 --progress-every 1000 --tag "$mark" > b.out 2> b.err)
if "$PY" - "$T/byhand" <<'EOF'
import json, os, sys
os.chdir(sys.argv[1])
steps = lambda f: [json.loads(l)["step"] for l in open(f) if l.startswith("{")]
assert steps("a.out") == [1, 3] and steps("b.out") == [4, 5], (steps("a.out"), steps("b.out"))
err = open("b.err").read()
assert "local batches [22, 21, 21], from step 3" in err and "checkpoint at step 5" in err, err
EOF
then pass "a run's first and last steps have progress lines; resumed at 3 ranks, it splits the batch 22/21/21"
else fail "live by hand"; tail -n 3 "$T"/byhand/*; fi

echo "the doc's own script"
# docs/pytorch.md's "Your own script" as written, its placeholders filled with a linear
# model, run as the live scheduler runs a per-host job: a tunedeck-hostfile in its folder,
# a process group of its own that gets SIGTERM. It stops at one step, writes that step in its
# checkpoint and exits 0; resumed at 2 ranks it goes on from the next step; resumed from
# another model's checkpoint it dies with the one-line CheckpointError the doc quotes (the
# snippet loaded the state after load_checkpoint: a bare, multi-line RuntimeError).
own="$T/own"
mkdir -p "$own"
"$PY" - "$root/docs/pytorch.md" > "$own/train-$mark.py" <<'EOF'
import re, sys
part = open(sys.argv[1], encoding="utf-8").read().split("### Your own script", 1)[1]
print('''import argparse, time
def parse_args():
    p = argparse.ArgumentParser()
    for name in ("--master-addr", "--resume", "--checkpoint"):
        p.add_argument(name, default="")
    p.add_argument("--master-port", type=int)
    p.add_argument("--node-rank", type=int)
    return p.parse_args()
def make_model():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 1)
def train_step(flag):
    model.zero_grad()
    loss = model(torch.ones(2, 4)).pow(2).mean()
    loss.backward()
    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()] + [flag])
    dist.all_reduce(flat)
    flag.copy_(flat[-1:])
    time.sleep(0.01)
    return float(loss)
first_step_of_this_run, every_few_seconds = True, False''')
print(re.search(r"^```python\n(.*?)^```", part, re.S | re.M).group(1))
EOF
own_run() { # NAME SLOTS RESUME [stop]: as the scheduler starts it; stopped at its first line
    printf '127.0.0.1:%s\n' "$2" > "$own/tunedeck-hostfile"
    (cd "$own" && PYTHONPATH="$root/tools/python" exec setsid "$PY" "train-$mark.py" \
        --master-addr 127.0.0.1 --master-port $((H_PORT + 16)) --node-rank 0 --resume "$3" \
        --checkpoint ckpt.pt) > "$own/$1.out" 2> "$own/$1.err" &
    pid=$!
    if [ $# -eq 4 ]; then
        i=0
        until grep -qs progress "$own/$1.out" || [ $i -ge 1200 ]; do sleep 0.1; i=$((i + 1)); done
        kill -TERM -"$pid" 2>/dev/null
    fi
    wait "$pid"
    echo "$?" > "$own/$1.rc"
}
own_run first 1 '' stop && cp "$own/ckpt.pt" "$own/first.ckpt"
own_run second 2 ckpt.pt stop
(cd "$own" && PYTHONPATH="$root/tools/python" "$PY" -c 'import torch, tunedeck_trial
tunedeck_trial.save_checkpoint("other.ckpt", 3, lambda f: torch.save(
    {"model": torch.nn.Linear(5, 1).state_dict()}, f))')
own_run other 1 other.ckpt
if "$PY" - "$own" <<'EOF'
import json, os, sys
d = sys.argv[1]
def run(name):
    rc = int(open(os.path.join(d, name + ".rc")).read())
    steps = [json.loads(l)["step"] for l in open(os.path.join(d, name + ".out"))]
    return rc, steps, open(os.path.join(d, name + ".err")).read().splitlines()
def ck_step(name):
    return int(open(os.path.join(d, name), "rb").readline().split()[2][len(b"step="):])
rc, steps, err = run("first")
assert rc == 0 and steps[0] == 1 and ck_step("first.ckpt") == steps[-1], (rc, steps[-3:], err[-3:])
rc, steps2, err = run("second")
assert rc == 0 and steps2[0] == steps[-1] + 1 and ck_step("ckpt.pt") == steps2[-1], \
    (rc, steps[-1], steps2[:1], steps2[-1:], err[-3:])
assert not os.path.exists(os.path.join(d, "ckpt.pt.tmp"))
rc, steps, err = run("other")
want = ("tunedeck_trial.CheckpointError: checkpoint other.ckpt: cannot be loaded: RuntimeError: "
        "Error(s) in loading state_dict for Linear: size mismatch for weight")
assert rc == 1 and not steps and err[-1].startswith(want), (rc, steps, err[-3:])
print("    stopped at step %d, resumed at 2 ranks from %d; another model's: %s..."
      % (steps2[0] - 1, steps2[0], err[-1][:60]))
EOF
then pass "the doc's own script stops with its step, resumes at 2 ranks, refuses another model's checkpoint in one line"
else fail "the doc's own script"; tail -n 3 "$own"/*.err; fi

echo "tuning over sshd"
for i in 1 2; do harness_start "$i"; done
harness_inventory "$T/inv.json" 1 2
# The rendezvous port is in this run's leased span, so suites side by side never meet.
"$PY" - "$T/inv.json" "$H_PORT" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["trial"] = {"launch": "per-host", "ranks": "per-device",
                "master_port": int(sys.argv[2]) + 9}
json.dump(inv, open(sys.argv[1], "w"))
EOF
cat > "$T/job.json" <<'EOF'
{"name": "mlp", "model_mb": 0.1, "batch": 32, "iterations": 4, "warmup": 1, "sync": "allreduce"}
EOF
trial="OMP_NUM_THREADS=1 python3 $ex --tag $mark"
# Millisecond iterations on a loaded machine are mostly noise: every trial runs to its end
# here (--no-prune), because this checks the ranks, not the pruning (cli.sh, remote.sh do).
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --trial-cmd "$trial" --budget 3 \
    --optimizer random --seed 5 --trial-timeout 120 --no-journal --no-prune --json > "$T/t1.json" 2> "$T/t1.err"
left=$(procs_left "--tag $mark")
if "$PY" - "$T/t1.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["trials"]) == 3, r["trials"]
for t in r["trials"]:
    assert t["status"] == "ok" and t["time_s"] > 0, t
    assert not any(m["ps"] for m in t["schedule"]["machines"]), "an allreduce schedule has no PS"
    ranks = sum(1 for m in t["schedule"]["machines"] if m["worker"]
                for d in m["devices"] if d["inputs"] > 0)
    print("    trial %d: %d ranks, %.4f s per iteration" % (t["trial"], ranks, t["time_s"]))
EOF
then pass "3 trials of the PyTorch job, one rank per device over 2 sshd hosts"
else fail "tuning over sshd"; tail -20 "$T/t1.err"; fi
if [ "$left" -eq 0 ]; then pass "no rank left after the session"
else fail "$left rank processes left"; fi

echo "rank 0 on an IPv6 host"
# Rank 0's machine has "host": "[::1]" (kept as ::1), rank 1 is on h2 (127.0.0.12): both
# ranks get MASTER_ADDR=::1, bare, and meet there. torch 1.13's env:// takes the bare address
# and not "[::1]" (measured: "The IPv6 network addresses of ([::1], PORT) cannot be
# retrieved", retried until the rendezvous timeout). sshd 4 listens on ::1 as well; the
# rendezvous port is H_PORT+14 (master_port +13, trial 1), the one the span left free.
if ip -6 addr show lo 2> /dev/null | grep -q 'inet6 ::1/'; then
    harness_start 4 "ListenAddress [::1]:$H_PORT"
    echo "[::1]:$H_PORT $(cut -d' ' -f1,2 "$H/host4.pub")" >> "$H/known_hosts"
    "$PY" - "$T/inv.json" "$T/inv6.json" "$H_PORT" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["machine_types"]["one"] = {"bandwidth_gbps": 10,
                               "devices": [{"id": "cpu", "kind": "cpu", "threads": 1}]}
inv["machines"] = [{"name": "v6", "host": "[::1]", "type": "one"},
                   {"name": "h2", "host": "127.0.0.12", "type": "one"}]
inv["trial"]["master_port"] = int(sys.argv[3]) + 13
json.dump(inv, open(sys.argv[2], "w"))
EOF
    "$bin" tune --cluster "$T/inv6.json" --job "$T/job.json" \
        --trial-cmd "echo \"\$RANK \$TUNEDECK_MACHINE \$MASTER_ADDR\" > $T/v6.\$RANK; $trial" \
        --budget 1 --optimizer uniform-devices --trial-timeout 120 --no-journal --json \
        > "$T/t6v.json" 2> "$T/t6v.err"
    left=$(procs_left "--tag $mark")
    if "$PY" - "$T/t6v.json" "$T/v6.0" "$T/v6.1" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "ok", t
said = [open(f).read().split() for f in sys.argv[2:]]
assert said == [["0", "v6", "::1"], ["1", "h2", "::1"]], said
print("    MASTER_ADDR ::1 for rank 0 on v6 and rank 1 on h2, %.4f s per iteration" % t["time_s"])
EOF
    then pass "rank 0 on host [::1]: MASTER_ADDR is the bare ::1 and the ranks meet there"
    else fail "rank 0 on an IPv6 host"; tail -20 "$T/t6v.err"; cat "$T"/v6.* 2>/dev/null; fi
    if [ "$left" -eq 0 ]; then pass "no rank left after the IPv6 trial"
    else fail "$left rank processes left after the IPv6 trial"; fi
    harness_stop 4
else
    echo "  skip: this machine has no IPv6 loopback (::1)"
fi

echo "a crashing rank"
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --trial-cmd "$trial --crash-rank 1" \
    --budget 1 --optimizer uniform-devices --trial-timeout 120 --no-journal --json \
    > "$T/t2.json" 2> "$T/t2.err"
left=$(procs_left "--tag $mark")
if "$PY" - "$T/t2.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
assert "rank 1 on h" in t["reason"] and "crashing on purpose" in t["reason"], t["reason"]
print("    " + t["reason"])
EOF
then pass "the trial fails with the rank's own error text"
else fail "crashing rank"; tail -20 "$T/t2.err"; fi
if [ "$left" -eq 0 ]; then pass "no rank left after the crash"
else fail "$left rank processes left after the crash"; fi

echo "a rank killed without a word"
# The OOM killer's way: rank 1 gets SIGKILL after its first step, printing nothing; its peers
# lose it in their next all_reduce and say so in error events ("Connection reset by peer"),
# which came first and were the whole reason. The fan-out's notice names the rank that died.
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --trial-cmd "$trial --kill-rank 1" \
    --budget 1 --optimizer uniform-devices --trial-timeout 120 --no-journal --json \
    > "$T/t3.json" 2> "$T/t3.err"
left=$(procs_left "--tag $mark")
if "$PY" - "$T/t3.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
# rank 1 leads whichever host's part ended first (h2's may have, its ranks having lost rank
# 1): its peers said only a lost peer's words, and rank 1 said nothing at all
head = "the command failed on h1: rank 1 (h1 gpu0) exited with status 137 (SIGKILL)"
assert t["reason"].startswith(head), t["reason"]
print("    " + t["reason"])
EOF
then pass "the trial's reason names the rank that was killed first, not a peer that lost it"
else fail "killed rank"; tail -20 "$T/t3.err"; fi
if [ "$left" -eq 0 ]; then pass "no rank left after the kill"
else fail "$left rank processes left after the kill"; fi

# hold_rank1: in the background ($holder), a process of this script (no part of the trial,
# so no stop reaches it) opens rank 1's standard output, the h1 part's SSH channel, once rank 1
# wrote its pid to $T/hold.pid, and holds it open until tunedeck's stop of the failed trial
# gives up on that part (5 s after another part ended): h1's part ends last, for certain.
hold_rank1() {
    rm -f "$T/hold.pid" "$T/held"
    (i=0
     while [ ! -s "$T/hold.pid" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
     pid=$(cat "$T/hold.pid" 2>/dev/null)
     if [ -n "$pid" ] && [ -w "/proc/$pid/fd/1" ]; then
         # a plain `exec` whose redirection fails ends dash (a special builtin), so rank 1 would
         # wait for "$T/held" until the trial's timeout; `command exec` only fails
         if command exec 3>"/proc/$pid/fd/1" 2>/dev/null; then
             echo held > "$T/held"
         else
             echo "not held (rank 1's pid '$pid': its output could not be opened)" > "$T/held"
         fi
     else
         echo "not held (rank 1's pid '$pid')" > "$T/held"
     fi
     exec sleep 300) &
    holder=$!
}

echo "a rank that crashes mid-training, its host ending last"
# Rank 1 (h1 gpu0) raises at step 2, after the rendezvous, and h2's ranks lose it in that
# step's all_reduce (gloo's "Connection closed by peer"). Which host's part ends first is a
# race; here h2's does, for certain (hold_rank1). The reason began "the command failed on h2: rank 2 (h2 cpu) exited with status
# 1; on h1: rank 1 ...": the crashed rank must lead, with its own words.
hold_rank1
hold="if [ \"\$RANK\" = 1 ]; then echo \$\$ > $T/hold.pid; while [ ! -e $T/held ]; do sleep 0.1; done; fi; "
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" \
    --trial-cmd "$hold$trial --crash-rank 1 --crash-step 2" \
    --budget 1 --optimizer uniform-devices --trial-timeout 120 --no-journal --json \
    > "$T/t4.json" 2> "$T/t4.err"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=
left=$(procs_left "--tag $mark")
if [ "$(cat "$T/held" 2>/dev/null)" = held ] && "$PY" - "$T/t4.json" <<'EOF'
import json, re, sys
# the crashed rank's own status: 1 from the helper's sys.exit, or 134 when gloo aborts in its
# process group's teardown at interpreter exit (seen once on Slurm); its words name it either way
CRASHED = r"(?:1|134 \(SIGABRT\))"
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
# h1's notice names the rank that ended first there: rank 1, or rank 0 beside it if its
# all_reduce failed while rank 1 was on its way out; h1 leads either way (rankcause.h)
head = (r"the command failed on h1: rank (?:1 \(h1 gpu0\) exited with status " + CRASHED +
        r"|0 \(h1 cpu\) exited with status \d+(?: \(SIG[A-Z]+\))?)")
assert re.match(head, t["reason"]), t["reason"]
assert "rank 1 on h1: RuntimeError: crashing on purpose (--crash-rank 1 at step 2)" in t["reason"], t["reason"]
# h2's notice follows: a peer that lost it (rank 2 or 3, whichever ended first there)
assert "; on h2: rank " in t["reason"], t["reason"]
print("    " + t["reason"])
EOF
then pass "the crashed rank's host leads the reason, with its words, though a peer's host ended first"
else fail "crash mid-training ($(cat "$T/held" 2>/dev/null))"; tail -20 "$T/t4.err"; fi
if [ "$left" -eq 0 ]; then pass "no rank left after the crash mid-training"
else fail "$left rank processes left after the crash mid-training"; fi

echo "a rank that crashes mid-training, the host that ended first without a notice"
# As above, but h2's fan-out is SIGKILLed by rank 2 once it lost rank 1 (rank 3 waits, so the
# fan-out sees no rank of it fail): h2's part ends first with no notice of a failed rank, and
# after h1's leading notice its failure is said as its channel told it ("; on h2: " then a
# signal or status, not a rank). Rank 3's wait is a python3 that carries --tag MARK, as the
# ranks do: a bare sleep was seen by neither procs_left nor stop_ranks, so a stop that missed
# it went unnoticed and it outlived the test. It waits far longer than procs_left does, so a
# rank the trial's stop missed is counted, not outwaited.
hold_rank1
# The SIGKILLed fan-out cannot remove its directory (its EXIT trap): rank 2 does, found by
# its standard input ("$d/in").
fanout="\$(cut -d' ' -f4 /proc/\$PPID/stat); d=\$(dirname \$(readlink /proc/\$\$/fd/0)); case \$d in */tunedeck-ranks.*) rm -rf \$d ;; esac"
# Rank 1's end is ordered by the ranks' own handshake, not by the machine's load: rank 0 and
# rank 2 end only once rank 1's status is in h1's fan-out's record of ended ranks ($d/ended,
# one slot a line as each ends; rank 1 leaves that folder in $T/h1.d). So h1's notice names
# rank 1 (its fan-out names the rank that ended first there), and the stop that h2's end
# brings finds rank 1 failed already. It was left to the timing: with rank 1's end slowed
# (its interpreter on its way out, sockets closed, as on a loaded machine), h2's stop TERMed
# h1's ranks first (status 143, no failure), h1 said no notice and went unnamed ("the command
# failed on h2: killed by SIGKILL; error event: rank 1 on h1: ..."), or rank 0 ended first and
# led h1's notice. A folder gone: its fan-out ended, which it does only after a rank failed.
mine="if [ \"\$RANK\" = 1 ]; then dirname \$(readlink /proc/\$\$/fd/0) > $T/h1.d; fi; "
after1="w=\$(cat $T/h1.d); i=0; while [ -d \$w ] && [ ! -s \$w/ended ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done"
rm -f "$T/h1.d"
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" \
    --trial-cmd "$mine$hold$trial --crash-rank 1 --crash-step 2; rc=\$?; case \$RANK in 0) $after1 ;; 2) $after1; kill -9 $fanout ;; 3) python3 -c 'import time; time.sleep(60)' --tag $mark ;; esac; exit \$rc" \
    --budget 1 --optimizer uniform-devices --trial-timeout 120 --no-journal --json \
    > "$T/t5.json" 2> "$T/t5.err"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=
left=$(procs_left "--tag $mark")
if [ "$(cat "$T/held" 2>/dev/null)" = held ] && "$PY" - "$T/t5.json" <<'EOF'
import json, re, sys
# the crashed rank's own status: 1 from the helper's sys.exit, or 134 when gloo aborts in its
# process group's teardown at interpreter exit (seen once on Slurm); its words name it either way
CRASHED = r"(?:1|134 \(SIGABRT\))"
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
head = re.match(r"the command failed on h1: rank 1 \(h1 gpu0\) exited with status " + CRASHED +
                r"; on h2: ", t["reason"])
assert head, t["reason"]
assert not t["reason"][head.end():].startswith("rank "), t["reason"]
assert "error event: rank 1 on h1: RuntimeError: crashing on purpose" in t["reason"], t["reason"]
print("    " + t["reason"])
EOF
then pass "the host that ended first without a notice is said after the crashed rank's"
else fail "crash mid-training, no notice on h2 ($(cat "$T/held" 2>/dev/null))"; tail -20 "$T/t5.err"; fi
if [ "$left" -eq 0 ]; then pass "no rank left after the fan-out's kill"
else fail "$left rank processes left after the fan-out's kill"; fi

echo "three hosts' notices, said as they came"
# h3's rank 0 says a cause and fails first, then h2's, then h1's: each waits until tunedeck has
# read the notice of the host before it, which it numbers as it reads it and then writes in the
# trial log beside the session's journal (so this trial keeps one, in a state folder of its
# own). The order the notices came is the test's handshake, not how soon each host's fan-out
# and sshd pass them on. No part ends before all three came: a part's end stops the others,
# and that stop's TERM ends a rank 0 still waiting (status 143, no failure: no notice). So
# h3's and h2's parts are held open (hold_parts: a process of this script holds their
# LOCAL_RANK 1's standard output, the part's SSH channel) until h1's notice is in the log;
# h1's ends after its own notice. It relied on the fan-out's KILL 3 s after its TERM to keep
# each part open over the chain, which a loaded machine can outlast. The reason names h3,
# then h2 and h1 as their notices came; it named them in the inventory's order (h1, h2) when
# launch_ssh.c ignored rankcause_order's order.
harness_start 3
harness_inventory "$T/inv3.json" 1 2 3
"$PY" - "$T/inv3.json" "$H_PORT" <<'EOF2'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["trial"] = {"launch": "per-host", "ranks": "per-device", "master_port": int(sys.argv[2]) + 9}
json.dump(inv, open(sys.argv[1], "w"))
EOF2
came() { # HOST: tunedeck read HOST's notice (its rank 0 is its cpu's)
    grep -qs "($1 cpu) exited with status" "$T"/state6/sessions/*.log
}
# hold_parts: in the background ($holder), as hold_rank1, holds the standard output of h3's
# and h2's LOCAL_RANK 1 (their pids in $T/hold.h3, $T/hold.h2) and says so in $T/held6, until
# h1's notice came
hold_parts() {
    rm -f "$T"/hold.h? "$T/held6"
    (i=0
     while { [ ! -s "$T/hold.h3" ] || [ ! -s "$T/hold.h2" ]; } && [ $i -lt 1200 ]; do
         sleep 0.1; i=$((i + 1))
     done
     p3=$(cat "$T/hold.h3" 2>/dev/null) p2=$(cat "$T/hold.h2" 2>/dev/null)
     if [ -n "$p3" ] && [ -n "$p2" ] &&
         command exec 3>"/proc/$p3/fd/1" 4>"/proc/$p2/fd/1" 2>/dev/null; then
         echo held > "$T/held6"
     else
         echo "not held (LOCAL_RANK 1's pids '$p3' on h3, '$p2' on h2)" > "$T/held6"
     fi
     i=0
     until came h1 || [ $i -ge 1200 ]; do sleep 0.1; i=$((i + 1)); done) &
    holder=$!
}
cat > "$T/order.sh" <<EOF2
case \$TUNEDECK_MACHINE in h3) before= ;; h2) before=h3 ;; *) before=h2 ;; esac
if [ "\$LOCAL_RANK" != 0 ]; then
    # runs until its fan-out's TERM, which comes right after this host's notice
    trap 'exit 0' TERM
    [ "\$TUNEDECK_MACHINE" = h1 ] || echo \$\$ > "$T/hold.\$TUNEDECK_MACHINE"
    i=0; while [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done
    exit 0
fi
# h3 fails once h3's and h2's parts are held
i=0
while [ -z "\$before" ] && [ ! -s "$T/held6" ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done
i=0
while [ -n "\$before" ] && ! grep -qs "(\$before cpu) exited with status" "$T"/state6/sessions/*.log &&
    [ \$i -lt 1200 ]; do
    sleep 0.1; i=\$((i + 1))
done
[ "\$TUNEDECK_MACHINE" = h3 ] &&
    echo "{\"event\": \"error\", \"message\": \"rank \$RANK on h3: ValueError: bad shard\"}"
exit 1
EOF2
hold_parts
TUNEDECK_STATE_DIR="$T/state6" "$bin" tune --cluster "$T/inv3.json" --job "$T/job.json" \
    --trial-cmd "sh $T/order.sh" --budget 1 --optimizer uniform-devices --trial-timeout 120 \
    --json > "$T/t6.json" 2> "$T/t6.err"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=
if [ "$(cat "$T/held6" 2>/dev/null)" = held ] && "$PY" - "$T/t6.json" <<'EOF2'
import json, re, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed", t
assert re.match(r"the command failed on h3: rank \d+ \(h3 cpu\) exited with status 1; "
                r"on h2: rank \d+ \(h2 cpu\) exited with status 1; "
                r"on h1: rank \d+ \(h1 cpu\) exited with status 1; "
                r"error event: rank \d+ on h3: ValueError: bad shard$", t["reason"]), t["reason"]
print("    " + t["reason"])
EOF2
then pass "the other hosts follow the leading one in the order their notices came"
else fail "three hosts' notices ($(cat "$T/held6" 2>/dev/null))"; tail -20 "$T/t6.err"; fi
harness_stop 3

echo "live: grow and shrink"
# Two hosts with one GPU each, the job started on every host of its placement (job_launch
# per-host), its ranks meeting at {master_addr}:{master_port}. At 6x: q0 (the cheap
# stand-in job) finishes at ~76 s, so p0 (the PyTorch job) grows from 1 rank to 2 on two
# hosts at 90 s (15 s wall); q1 arrives at 150 s (25 s wall) and p0 shrinks back to 1; the
# run ends at 45 s wall, leaving 20 s for the last run to start. A run that a loaded machine
# leaves importing torch when its SIGTERM comes keeps the signal until its first step, which
# writes the checkpoint (within the 20 s stop timeout). --loss-progress fits p0's own loss
# curve.
"$PY" - "$T/inv.json" "$T/live.json" "$ex" "$root/tests/fixtures/job.sh" "$mark" "$H_PORT" <<'EOF2'
import json, sys
inv = json.load(open(sys.argv[1]))
ex, jobsh, mark, port = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
inv["job_launch"] = "per-host"
inv["job_master_port"] = port + 15
inv["job_command"] = (
    'if [ "$TUNEDECK_JOB" = p0 ]; then OMP_NUM_THREADS=1 exec python3 %s --live '
    '--master-addr {master_addr} --master-port {master_port} --node-rank {node_rank} '
    '--resume {resume} --checkpoint ckpt-%s --batch 64 --step-sleep 0.02 --tag %s; '
    'else exec sh %s {gpus} {hosts} {resume} ckpt-%s; fi' % (ex, mark, mark, jobsh, mark))
json.dump(inv, open(sys.argv[2], "w"))
EOF2
printf 'name,time,application,num_replicas,batch_size\np0,0,cifar10,1,128\nq0,0,ncf,1,32768\nq1,150,cifar10,1,128\n' \
    > "$T/live.csv"
"$bin" schedule --live --cluster "$T/live.json" --workload "$T/live.csv" --policy doubling \
    --interval 30 --time-scale 6 --duration 45 --status-every 0 --loss-progress \
    --job-dir "$T/jobs" > "$T/live.out" 2> "$T/live.err"
rc=$?
left=$(procs_left "$mark")
if [ "$rc" -le 1 ] && "$PY" - "$T/live.out" <<'EOF2'
import re
from outcheck import out, need
FRESH = 1.4116  # the example's loss after its first step from scratch
first = float(need(r"p0: run 1 on h\d \(1 GPU\) first step 1, loss ([\d.]+)", "p0 starts").group(1))
assert abs(first - FRESH) < 1e-3, first
need(r"decision t=90s: resize p0 1 -> 2 GPUs on h\d:1,h\d:1", "p0 grows onto both hosts")
need(r"decision t=150s: resize p0 2 -> 1 GPU", "p0 shrinks")
stops = {int(m.group(1)): float(m.group(2)) for m in re.finditer(
    r"p0: stopped at step (\d+) \(epoch [\d.]+\), checkpoint written \(loss ([\d.]+)\)", out)}
runs = [(int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)), float(m.group(5)))
        for m in re.finditer(r"p0: run (\d+) on h\d \((\d) GPUs?\) resumed at step (\d+) "
                             r"\(checkpoint at step (\d+)\), loss ([\d.]+)", out)]
gpus = [r[1] for r in runs]
assert "2" in gpus and "1" in gpus[gpus.index("2") + 1:], runs
for _, _, resumed, ck, loss in runs:
    # each run starts one step after a checkpoint written by a stop, from its weights, not
    # from scratch
    assert resumed == ck + 1 and ck in stops, (resumed, ck, stops)
    assert abs(loss - FRESH) > 1e-3 and abs(loss - stops[ck]) < 0.35, (loss, stops[ck])
two = runs[gpus.index("2")]
one = runs[gpus.index("1", gpus.index("2") + 1)]
curve = need(r"p0: loss curve .* from (\d+) points: (\d+)% done", "p0's loss curve")
assert not re.search(r"q0: loss curve", out), "a flat loss gave a curve"
print("    p0: 2 GPUs from step %d, 1 GPU from %d; loss %.3f at step 1, %.3f at %d; curve: %s%% "
      "done" % (two[2], one[2], first, one[4], one[2], curve.group(2)))
EOF2
then pass "the PyTorch job grows to 2 ranks on 2 hosts and shrinks back, its loss going on from each checkpoint"
else fail "live grow/shrink (exit $rc)"; tail -40 "$T/live.out"; tail -10 "$T/live.err"; fi
if [ "$left" -eq 0 ]; then pass "no job process left after the live run"
else fail "$left job processes left after the live run"; fi

if [ "$fails" -ne 0 ]; then
    echo "pytorch: $fails failed"
    exit 1
fi
echo "pytorch: all passed"
