#!/bin/sh
# The remote layer against real OpenSSH sshd instances on 127.0.0.x (tests/sshd-harness.sh):
# exec and exit codes, a 1 MiB line, stdout/stderr, host keys (unknown, accepted, changed),
# quoting, a frozen sshd, a killed sshd, per-host and single trials, cancel, job control,
# GPU state, ~/.ssh/config. Every sshd started here is stopped by the trap.
set -u
suite=remote scratch=remote suite_sshd=1
. "$(dirname "$0")/lib/suite.sh"
rexec="$build/tunedeck-rexec"
jobctl="$build/tunedeck-jobctl"
# A kept pid is signalled only while its command line still names this suite's scratch folder
# (pid_kill_named, lib/procs_left.sh): one that ended (the shell reaps its jobs by itself) may
# have left its number to another suite's process.
suite_reap() {
    [ -n "${TUNE_PID:-}" ] && pid_kill_named TERM "$TUNE_PID" "$T/"
    [ -n "${GPID:-}" ] && pid_kill_named TERM "$GPID" "$T/"
    [ -n "${AGENT_PID:-}" ] && pid_kill_named TERM "$AGENT_PID" "$T/"
}
has() { grep -qF -- "$2" "$1"; }

harness_init "$T/h"
touch "$T/h/nogpu3"
# VERBOSE: sshd logs each exec channel ("Starting session: command"), which "exec channels"
# counts (every start of a host here, its restarts too: a log is appended to)
HARNESS_LOGLEVEL=VERBOSE
for i in 1 2 3; do harness_start "$i"; done
HARNESS_TIMEOUT_S=2 harness_inventory "$T/inv.json" 1 2 3
HARNESS_TIMEOUT_S=2 harness_inventory "$T/inv4.json" 1 2 3 4
python3 - "$T/inv.json" "$root/tests/fixtures/job.sh" "$T/ckpt" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = "exec sh %s {gpus} {hosts} {resume} %s" % (sys.argv[2], sys.argv[3])
json.dump(inv, open(sys.argv[1], "w"))
EOF
cat > "$T/job.json" <<'EOF'
{"name": "tiny", "model_mb": 10, "batch": 64, "iterations": 4, "warmup": 1}
EOF
trial="python3 $root/tests/fixtures/trial.py"

echo "exec"
"$rexec" --cluster "$T/inv.json" -- sh -c 'echo out-$TUNEDECK_TEST_HOST; echo err-line >&2; exit 7' > "$T/o1" 2>&1
rc=$?
check "exit codes come back per host" sh -c "[ $rc -eq 1 ] && grep -c 'exit 7' '$T/o1' | grep -qx 3"
check "stdout and stderr are kept apart" sh -c "has() { grep -qF -- \"\$2\" \"\$1\"; }; has '$T/o1' 'h2 out: out-2' && has '$T/o1' 'h2 err: err-line' && ! grep -q 'out: err-line' '$T/o1'"
"$rexec" --cluster "$T/inv.json" -- true > "$T/o2" 2>&1
check "a zero exit everywhere is success" sh -c "[ $? -eq 0 ] && [ \$(grep -c 'exit 0' '$T/o2') -eq 3 ]"

"$rexec" --cluster "$T/inv.json" --only h1 -- python3 -c \
    'import sys; sys.stdout.write("{\"pad\": \"" + "a" * (1 << 20) + "\"}\nnext\n")' > "$T/o3" 2>&1
check "a 1 MiB JSON line arrives whole, across packets" \
    sh -c "grep -qF 'h1 out: [1048587 bytes] {\"pad\": \"aaaa' '$T/o3' && grep -qF 'h1 out: next' '$T/o3'"

hostile="'; \$(touch $T/pwned)"
"$rexec" --cluster "$T/inv.json" --only h1 -- printf '[%s]' "$hostile" > "$T/o4" 2>&1
hostile_ok() { [ "$(head -n 1 "$T/o4")" = "h1 out: [$hostile]" ] && [ ! -e "$T/pwned" ]; }
check "a hostile argument arrives byte for byte and runs nothing" hostile_ok

echo "host keys"
cp "$T/h/known_hosts" "$T/known_hosts.all"
grep -v "127.0.0.11" "$T/known_hosts.all" > "$T/h/known_hosts"
"$rexec" --cluster "$T/inv.json" --only h1 -- true > "$T/k1" 2>&1
check "an unknown host key is refused, with its SHA256 fingerprint" \
    sh -c "grep -q 'h1 ssh-failed: .*unknown host key .*SHA256:' '$T/k1'"
# A host refused for its key is not retried by the pool on its own: each round's exec tries it
# once, at once, and fails with the key's words. Regression: each round waited out the host's
# back-off first (half fixed: 0.25 s, doubling, then 15 s; 30 s at least before the 8th
# round), so the timeout below, a guard the fixed code is far inside, cut it short.
timeout 20 "$rexec" --cluster "$T/inv.json" --only h1 --repeat 8 -- true > "$T/k1r" 2>&1
check "each exec on a key-refused host fails with the key's words, not after the back-off" \
    sh -c "[ \$(grep -c 'h1 ssh-failed: .*unknown host key .*SHA256:' '$T/k1r') -eq 8 ]"
fp=$(sed -n 's/.*(\(SHA256:[^)]*\)).*/\1/p' "$T/k1")
# Whether known_hosts lists h1 is asked of ssh-keygen -F: the key may be written hashed (the
# machine's /etc/ssh/ssh_config may say HashKnownHosts yes, as Debian's does).
"$rexec" --cluster "$T/inv.json" --only h1 --accept-fingerprint "SHA256:AAAAnotthekey" -- true > "$T/k1b" 2>&1
check "an operator's acceptance holds only for the fingerprint shown" \
    sh -c "grep -q 'h1 ssh-failed: .*unknown host key' '$T/k1b' && ! ssh-keygen -F '[127.0.0.11]:$H_PORT' -f '$T/h/known_hosts' > /dev/null"
"$rexec" --cluster "$T/inv.json" --only h1 --accept-fingerprint "$fp" -- true > "$T/k1c" 2>&1
check "the operator accepts the key whose fingerprint was shown" \
    sh -c "grep -q 'h1 exit 0' '$T/k1c' && ssh-keygen -F '[127.0.0.11]:$H_PORT' -f '$T/h/known_hosts' > /dev/null"
grep -v "127.0.0.11" "$T/known_hosts.all" > "$T/h/known_hosts"
"$rexec" --cluster "$T/inv.json" --only h1 --accept-new-host-keys -- true > "$T/k2" 2>&1
check "an unknown host key is accepted with the flag and recorded" \
    sh -c "grep -q 'h1 exit 0' '$T/k2' && ssh-keygen -F '[127.0.0.11]:$H_PORT' -f '$T/h/known_hosts' > /dev/null"
"$rexec" --cluster "$T/inv.json" --only h1 -- true > "$T/k3" 2>&1
check "the accepted key is known the next time" sh -c "grep -q 'h1 exit 0' '$T/k3'"
harness_stop 2
rm -f "$T/h/host2" "$T/h/host2.pub"
harness_start 2 # a new host key; known_hosts still holds the old one first
cp "$T/known_hosts.all" "$T/h/known_hosts"
"$rexec" --cluster "$T/inv.json" --only h2 --accept-new-host-keys -- true > "$T/k4" 2>&1
check "a changed host key is refused, even with --accept-new-host-keys" \
    sh -c "grep -q 'h2 ssh-failed: .*host key for 127.0.0.12 changed' '$T/k4'"
# The refusal says how to remove the old line: the name is "[host]:port" off port 22 and the
# file may be hashed (HashKnownHosts), so the operator runs the command it gives, as written,
# then accepts the new key. Regression: it said "remove its old line from FILE" alone.
fixcmd=$(sed -n 's/.*remove its old line from [^:]*: \(ssh-keygen -R .*\)$/\1/p' "$T/k4")
: > "$T/k5"
[ -n "$fixcmd" ] && sh -c "$fixcmd" > /dev/null 2>&1 &&
    "$rexec" --cluster "$T/inv.json" --only h2 --accept-new-host-keys -- true > "$T/k5" 2>&1
check "the changed-key refusal's ssh-keygen -R command removes the old line, and the new key is then accepted" \
    grep -q 'h2 exit 0' "$T/k5"
# Back to a consistent known_hosts for the rest of the suite.
grep -v "127.0.0.12" "$T/known_hosts.all" > "$T/h/known_hosts"
echo "[127.0.0.12]:$H_PORT $(cut -d' ' -f1,2 "$T/h/host2.pub")" >> "$T/h/known_hosts"

echo "tune on hosts whose keys are refused"
# A refused key is refused again at every attempt until known_hosts is fixed: a trial that
# reaches such a host fails unreachable and teaches the optimizer nothing. Regression: tune
# spent its whole budget so (10 trials unreachable, exit 1), the optimizer proposing the same
# schedule with the refused hosts each time. Each refusal now costs at most the one trial
# that met it, whatever the order the hosts refuse in.
cp "$T/h/known_hosts" "$T/known_hosts.ok"
: > "$T/h/known_hosts"
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host --trial-cmd "$trial" \
    --budget 10 --json > "$T/kr1.json" 2> "$T/kr1.err"
echo "rc=$?" >> "$T/kr1.err"
check "every host's key refused: tune stops as soon as it knows, says each refusal once, exits 4" \
    python3 - "$T/kr1.json" "$T/kr1.err" <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))["trials"]
err = open(sys.argv[2]).read()
assert err.endswith("rc=4\n"), err
failed = [x for x in t if x["status"] == "unreachable"]
assert 1 <= len(failed) <= 3 and len(t) == len(failed) + 1, t
assert all("host key" in x["reason"] for x in failed), t
assert t[-1]["status"] == "cancelled", t[-1]
assert t[-1]["reason"].startswith("not launched: the host key of h1, h2, h3 is refused"), t[-1]
for i in (1, 2, 3):
    said = re.findall(r"h%d is left out of the trials from now on: unknown host key for "
                      r"127\.0\.0\.1%d \(SHA256:" % (i, i), err)
    assert len(said) == 1, (i, err)
assert "the session stopped early: the host key of h1, h2, h3 is refused" in err, err
PY
kr1=$(sed -n 's/^tunedeck tune: session \([^ ]*\) (journal.*/\1/p' "$T/kr1.err")
"$bin" sessions --json > "$T/kr1s.json"
cp "$T/known_hosts.ok" "$T/h/known_hosts"
"$bin" tune --resume "$kr1" --budget 6 --json > "$T/kr1r.json" 2> "$T/kr1r.err"
rc=$?
check "the session is listed stopped early, and resumed once known_hosts is fixed" \
    python3 - "$T/kr1s.json" "$kr1" "$T/kr1r.json" "$rc" <<'PY'
import json, sys
s = {x["id"]: x for x in json.load(open(sys.argv[1]))}[sys.argv[2]]
assert s["state"] == "stopped early", s
t = json.load(open(sys.argv[3]))["trials"]
assert sys.argv[4] == "0" and len(t) == 6 and t[-1]["status"] == "ok", (sys.argv[4], t)
PY
grep -v "127.0.0.11" "$T/known_hosts.ok" > "$T/h/known_hosts"
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host --trial-cmd "$trial" \
    --budget 4 --json > "$T/kr2.json" 2> "$T/kr2.err"
echo "rc=$?" >> "$T/kr2.err"
check "one host's key refused: it is said once and left out of every later trial, which run ok" \
    python3 - "$T/kr2.json" "$T/kr2.err" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
err = open(sys.argv[2]).read()
assert err.endswith("rc=0\n"), err
assert err.count("h1 is left out of the trials from now on: unknown host key") == 1, err
uses = lambda x, name: any(m["name"] == name and (m["worker"] or m["ps"])
                           for m in x["schedule"]["machines"])
first = next(i for i, x in enumerate(t) if x["status"] == "unreachable")
assert "127.0.0.11" in t[first]["reason"], t[first]
later = t[first + 1:]
assert len(t) == 4 and later, t
assert all(x["status"] == "ok" and not uses(x, "h1") for x in later), later
PY
# The optimizer was told h1 is left out (the suggested lines' left_out), and a resume tells
# it the same: its re-made suggestions are the journal's (no "another schedule" warning).
# The resume checks h1 again before its first new trial: still refused, it gets none.
# Regression: the resumed pool did not know, and trial 5 could try h1 and be lost unreachable.
kr2=$(sed -n 's/^tunedeck tune: session \([^ ]*\) (journal \(.*\))$/\2/p' "$T/kr2.err")
kr2id=$(sed -n 's/^tunedeck tune: session \([^ ]*\) (journal.*/\1/p' "$T/kr2.err")
"$bin" tune --resume "$kr2id" --budget 6 --json > "$T/kr2r.json" 2> "$T/kr2r.err"
echo "rc=$?" >> "$T/kr2r.err"
check "a refused host's machine is journaled left out; a resume re-makes the suggestions and, h1 still refused, spends no trial on it" \
    python3 - "$kr2" "$T/kr2r.json" "$T/kr2r.err" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
# the first run's lines
lines = lines[:next(i for i, l in enumerate(lines) if l["event"] == "resumed")]
sug = [l for l in lines if l["event"] == "suggested"]
first = min(l["trial"] for l in lines if l["event"] == "finished" and l["status"] == "unreachable")
assert all(l.get("left_out") == ["h1"] for l in sug if l["trial"] > first), sug
assert all("left_out" not in l for l in sug if l["trial"] <= first), sug
err = open(sys.argv[3]).read()
assert err.endswith("rc=0\n") and "another schedule" not in err, err
t = json.load(open(sys.argv[2]))["trials"]
assert len(t) == 6 and [x["status"] for x in t[1:4]] == ["ok"] * 3, t
uses = lambda x, name: any(m["name"] == name and (m["worker"] or m["ps"])
                           for m in x["schedule"]["machines"])
assert all(x["status"] == "ok" and not uses(x, "h1") for x in t[4:]), t[4:]
assert err.count("h1 is still left out of the trials (refused when the session last ran, and "
                 "again now): unknown host key for 127.0.0.11") == 1, err
assert "accept it with --accept-new-host-keys" in err and "from now on" not in err, err
PY
# known_hosts fixed: the next resume finds h1 answering and uses it again, said once.
cp "$T/known_hosts.ok" "$T/h/known_hosts"
"$bin" tune --resume "$kr2id" --budget 9 --json > "$T/kr2f.json" 2> "$T/kr2f.err"
echo "rc=$?" >> "$T/kr2f.err"
check "known_hosts fixed since: a resume uses h1 again, said once" \
    python3 - "$T/kr2f.json" "$T/kr2f.err" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
err = open(sys.argv[2]).read()
assert err.endswith("rc=0\n"), err
assert err.count("h1 is in the trials again: it was left out when the session last ran (its "
                 "host refused), and its host key and login are accepted now") == 1, err
assert "left out of the trials" not in err, err
uses = lambda x, name: any(m["name"] == name and (m["worker"] or m["ps"])
                           for m in x["schedule"]["machines"])
assert len(t) == 9 and all(x["status"] == "ok" for x in t[6:]), t[6:]
assert any(uses(x, "h1") for x in t[6:]), t[6:]
PY
grep -v "127.0.0.11" "$T/known_hosts.ok" > "$T/h/known_hosts"
# The single launcher runs every trial on its one host (h1, the first machine): refused, no
# trial can run, whatever the others.
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher single --trial-cmd "$trial" \
    --budget 5 --json > "$T/kr3.json" 2> "$T/kr3.err"
echo "rc=$?" >> "$T/kr3.err"
check "the single launcher's host key refused: tune stops after the trial that met it, exits 4" \
    python3 - "$T/kr3.json" "$T/kr3.err" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
err = open(sys.argv[2]).read()
assert err.endswith("rc=4\n"), err
assert [x["status"] for x in t] == ["unreachable", "cancelled"], t
assert t[1]["reason"].startswith("not launched: the host key of h1 is refused"), t[1]
assert err.count("h1 is left out of the trials from now on: unknown host key") == 1, err
PY
cp "$T/known_hosts.ok" "$T/h/known_hosts"

echo "hosts and GPUs"
# A machine's settings refused by the pool (a host name with user@) name the inventory file,
# as every other inventory error does. Regression: "machine 'h1': host …" alone.
python3 - "$T/inv.json" "$T/inv-at.json" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["machines"][0]["host"] = "root@" + inv["machines"][0]["host"]
json.dump(inv, open(sys.argv[2], "w"))
EOF
"$bin" hosts --cluster "$T/inv-at.json" > /dev/null 2> "$T/hat.err"
check "tunedeck hosts names the inventory file and the machine of a host it refuses" \
    grep -qF "tunedeck hosts: $T/inv-at.json: machine 'h1': host 'root@" "$T/hat.err"
"$bin" tune --cluster "$T/inv-at.json" --job "$T/job.json" --launcher per-host --trial-cmd true \
    --budget 1 > /dev/null 2> "$T/tat.err"
check "tunedeck tune names the inventory file and the machine of a host it refuses" \
    grep -qF "$T/inv-at.json: machine 'h1': host 'root@" "$T/tat.err"
"$bin" hosts --cluster "$T/inv.json" --json > "$T/h1.json" 2>"$T/h1.err"
check "tunedeck hosts reports every host up, with fingerprints" python3 - "$T/h1.json" <<'EOF'
import json, sys
h = {x["name"]: x for x in json.load(open(sys.argv[1]))["hosts"]}
assert all(x["reachable"] and x["host_key"] == "ok" for x in h.values()), h
assert all(x["fingerprint"].startswith("SHA256:") for x in h.values())
assert all(x["handshake_ms"] is not None for x in h.values())
EOF
check "GPUs seen through nvidia-smi, joined on UUID; a host without it says so" \
    python3 - "$T/h1.json" <<'EOF'
import json, sys
h = {x["name"]: x for x in json.load(open(sys.argv[1]))["hosts"]}
assert h["h1"]["gpus"] == 2 and h["h1"]["gpu_list"][0]["util_pct"] == 87, h["h1"]
assert h["h1"]["gpu_processes"][0]["pid"] == 4242
assert h["h1"]["gpu_processes"][0]["gpu_index"] == 0
assert h["h3"]["gpu_state"] == "no GPU tool" and h["h3"]["gpus"] is None, h["h3"]
assert h["h3"]["last_error"] == ""
EOF

# A real process as a GPU process: its process group comes back with it (setsid: pgid = pid).
# A sleep by a name in $T, so that its command line is the suite's own (suite_reap).
ln -sf "$(command -v sleep)" "$T/gpu-sleep"
setsid "$T/gpu-sleep" 30 &
GPID=$!
sleep 0.2
echo "$GPID, GPU-b81f06d2-3e4a-5c97-d210-6a8f4e2c9b05, 1024" > "$T/h/apps.csv"
"$bin" hosts --cluster "$T/inv.json" --json > "$T/h3.json" 2>/dev/null
kill "$GPID" 2>/dev/null
wait "$GPID" 2>/dev/null
rm -f "$T/h/apps.csv"
check "a GPU process comes with its GPU (by UUID) and its process group, for job mapping" \
    python3 - "$T/h3.json" "$GPID" <<'EOF'
import json, sys
h = {x["name"]: x for x in json.load(open(sys.argv[1]))["hosts"]}
p = h["h1"]["gpu_processes"][0]
assert p["pid"] == int(sys.argv[2]) and p["pgid"] == int(sys.argv[2]), p
assert p["gpu_index"] == 1 and p["used_mib"] == 1024, p
EOF
GPID=

# An nvidia-smi whose every line is refused (utilization 150): the host's GPU state is an
# error naming the field, not "starting" with nothing said, as it stayed.
# fake_nvidia_smi N FILE: host N's nvidia-smi prints FILE for its GPU query, and no process;
# with -lms every period, as nvidia-smi does, until the channel closes (cat then fails)
fake_nvidia_smi() {
    mkdir -p "$T/h/host-bin$1"
    cat > "$T/h/host-bin$1/nvidia-smi" <<EOF
#!/bin/sh
case "\$*" in *query-compute-apps*) exit 0 ;; esac
while cat '$2'; do
    case "\$*" in *-lms*) sleep 0.2 ;; *) exit 0 ;; esac
done
EOF
    chmod 755 "$T/h/host-bin$1/nvidia-smi"
}
echo '0, GPU-4c2e8a51-9d3f-7b1e-a6c0-2f5d8e9b1a73, NVIDIA A100-SXM4-40GB, 150, 10, 40960' \
    > "$T/gpu7.csv"
fake_nvidia_smi 7 "$T/gpu7.csv"
harness_start 7
HARNESS_TIMEOUT_S=3 harness_inventory "$T/inv7.json" 7
"$bin" hosts --cluster "$T/inv7.json" --json > "$T/h7.json" 2>/dev/null
harness_stop 7
check "every nvidia-smi line refused: the GPU state is an error naming the field" \
    python3 - "$T/h7.json" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
assert h["gpu_state"] == "error" and h["gpus"] is None, h
assert h["last_error"].startswith("utilization.gpu: expected a number in [0, 100]"), h
EOF

# Some lines read, others refused (a GPU lost, one [Unknown Error], a bad number, a line with
# no index, a cut one: tests/fixtures/nvidia-smi/query-gpu-failing.csv): every GPU is listed,
# the refused ones in error with their field, and the table says so. They were dropped: the
# host showed 1 GPU of 6 and nothing said why.
fake_nvidia_smi 8 "$root/tests/fixtures/nvidia-smi/query-gpu-failing.csv"
harness_start 8
HARNESS_TIMEOUT_S=3 harness_inventory "$T/inv8.json" 8
"$bin" hosts --cluster "$T/inv8.json" --json > "$T/h8.json" 2>/dev/null
"$bin" hosts --cluster "$T/inv8.json" > "$T/h8.txt" 2>/dev/null
harness_stop 8
check "some nvidia-smi lines refused: each GPU listed, those in error with their field" \
    python3 - "$T/h8.json" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
assert h["gpu_state"] == "ok" and h["gpus"] == 6 and h["gpus_in_error"] == 5, h
g = h["gpu_list"]
assert [x["index"] for x in g] == [0, 1, 2, 3, None, 5], g
assert g[0]["error"] is None and g[0]["util_pct"] == 87, g[0]
assert "'[GPU is lost]'" in g[2]["error"] and g[2]["error"].startswith("memory.used"), g[2]
assert "Unable to determine the device handle" in g[4]["error"], g[4]
assert h["last_error"] == "", h
EOF
gpu_row_ok() {
    grep -F '6, 5 error' "$T/h8.txt" |
        grep -qF "GPU 2: error (memory.used: expected a number or [N/A], found '[GPU is lost]')"
}
check "tunedeck hosts shows the GPUs in error on the host's row" gpu_row_ok

pid_kill_named STOP "$(cat "$T/h/sshd2.pid")" "-f $H/sshd2.conf "
start=$(date +%s%N)
"$bin" hosts --cluster "$T/inv.json" --json --gpu-wait 0 > "$T/h2.json" 2>/dev/null
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
pid_kill_named CONT "$(cat "$T/h/sshd2.pid")" "-f $H/sshd2.conf "
check "a frozen sshd is down at its deadline; the others are not delayed (${elapsed_ms} ms)" \
    python3 - "$T/h2.json" "$elapsed_ms" <<'EOF'
import json, sys
h = {x["name"]: x for x in json.load(open(sys.argv[1]))["hosts"]}
assert not h["h2"]["reachable"] and "no answer within 2.0 s" in h["h2"]["last_error"], h["h2"]
assert h["h1"]["reachable"] and h["h3"]["reachable"]
assert h["h1"]["handshake_ms"] < 1500 and h["h3"]["handshake_ms"] < 1500, (h["h1"], h["h3"])
assert 1900 <= int(sys.argv[2]) < 6000, sys.argv[2]
EOF

printf 'Host alias-one\n    HostName 127.0.0.11\n    Port %s\n    User root\n' "$H_PORT" > "$T/ssh_config"
python3 - "$T/inv.json" "$T/inv-alias.json" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
del inv["ssh"]["port"], inv["ssh"]["user"]
inv["machines"] = [{"name": "a1", "host": "alias-one", "type": "g"}]
json.dump(inv, open(sys.argv[2], "w"))
EOF
TUNEDECK_SSH_CONFIG="$T/ssh_config" "$rexec" --cluster "$T/inv-alias.json" -- sh -c 'echo $TUNEDECK_TEST_HOST' > "$T/c1" 2>&1
check "an ssh_config Host alias with HostName/Port/User is honoured" grep -qx 'a1 out: 1' "$T/c1"
"$bin" hosts --cluster "$T/inv.json" > "$T/ht.txt" 2>&1
check "hosts --cluster's table: every host a row, none ending in blanks" \
    sh -c '! grep -n "[[:blank:]]\$" "$1" && [ "$(grep -c " up " "$1")" -ge 1 ]' _ "$T/ht.txt"
TUNEDECK_SSH_CONFIG="$T/no-such-config" "$bin" hosts --cluster "$T/inv.json" > "$T/c2" 2>&1
echo "rc=$?" >> "$T/c2"
check "hosts refuses a TUNEDECK_SSH_CONFIG it cannot read as bad input (exit 3)" \
    sh -c 'grep -q "no-such-config (TUNEDECK_SSH_CONFIG): cannot read it" "$1" && grep -qx rc=3 "$1"' _ "$T/c2"

python3 - "$T/inv.json" "$T/inv-nokey.json" "$T/missing_key" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["ssh"]["identity"] = sys.argv[3]
json.dump(inv, open(sys.argv[2], "w"))
EOF
SSH_AUTH_SOCK= "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk" 2>&1 || true
check "a login refused with an identity file that cannot be read names the file" \
    grep -q "h1 ssh-failed: .*identity $T/missing_key .*cannot be read: No such file" "$T/nk"
# What the failure says of the agent is what was asked. Regression: "no agent key was
# accepted" with no agent at all, which sent the operator looking for an agent problem.
check "with no agent, the failure says none runs" \
    grep -q "h1 ssh-failed: .*: no agent is running (SSH_AUTH_SOCK empty), and the identity $T/missing_key (the inventory's ssh.identity) cannot be read" "$T/nk"
SSH_AUTH_SOCK="$T/no-agent.sock" "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk2" 2>&1 || true
check "with SSH_AUTH_SOCK naming no socket, the failure says no agent answers there, and why" \
    grep -q "h1 ssh-failed: .*: no agent answers at SSH_AUTH_SOCK ($T/no-agent.sock: No such file or directory), and the identity $T/missing_key" "$T/nk2"
ssh-agent -D -a "$T/agent.sock" > /dev/null 2>&1 &
AGENT_PID=$!
n=0
until [ -S "$T/agent.sock" ] || [ $n -ge 100 ]; do sleep 0.05; n=$((n + 1)); done
SSH_AUTH_SOCK="$T/agent.sock" "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk3" 2>&1 || true
# libssh asks the ssh config's IdentityAgent socket instead: "none" (a file name to libssh,
# not there) asks no agent, and a path is probed as SSH_AUTH_SOCK is. Regression: any such
# line counted as an agent asked, live agent in SSH_AUTH_SOCK or not.
printf 'Host *\n    IdentityAgent none\n' > "$T/agent-none.config"
printf 'Host *\n    IdentityAgent %s\n' "$T/no-agent.sock" > "$T/agent-dead.config"
printf 'Host *\n    IdentityAgent %s\n' "$T/agent.sock" > "$T/agent-live.config"
SSH_AUTH_SOCK="$T/agent.sock" TUNEDECK_SSH_CONFIG="$T/agent-none.config" \
    "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk4" 2>&1 || true
SSH_AUTH_SOCK="$T/agent.sock" TUNEDECK_SSH_CONFIG="$T/agent-dead.config" \
    "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk5" 2>&1 || true
SSH_AUTH_SOCK= TUNEDECK_SSH_CONFIG="$T/agent-live.config" \
    "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk6" 2>&1 || true
# libssh runs a Match exec command while it parses and takes the block's IdentityAgent only if
# it succeeded; tunedeck does not run it again, so it probes both sockets libssh may have
# asked. Regression: such a line counted as an agent asked, with no agent anywhere.
printf 'Match exec true\n    IdentityAgent %s\n' "$T/no-agent.sock" > "$T/agent-exec-dead.config"
printf 'Match exec false\n    IdentityAgent %s\n' "$T/agent.sock" > "$T/agent-exec-live.config"
SSH_AUTH_SOCK= TUNEDECK_SSH_CONFIG="$T/agent-exec-dead.config" \
    "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk7" 2>&1 || true
SSH_AUTH_SOCK= TUNEDECK_SSH_CONFIG="$T/agent-exec-live.config" \
    "$rexec" --cluster "$T/inv-nokey.json" --only h1 -- true > "$T/nk8" 2>&1 || true
# Several Match exec IdentityAgent lines with long socket paths make the agent's words long;
# what follows them must survive. Regression: they were built in 1200 bytes, the host kept
# 512 and tunedeck-rexec 600, so "and no identity file was accepted (denied)" was cut off.
python3 - "$T/inv.json" "$T/inv-noid.json" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["ssh"].pop("identity", None)
json.dump(inv, open(sys.argv[2], "w"))
EOF
long="$T/$(printf '%0200d' 0)"
{
    printf 'Match exec false\n    IdentityAgent %s\n' "$T/agent.sock"
    for i in 1 2 3; do printf 'Match exec false\n    IdentityAgent %s/dead-%s.sock\n' "$long" "$i"; done
} > "$T/agent-exec-long.config"
SSH_AUTH_SOCK= TUNEDECK_SSH_CONFIG="$T/agent-exec-long.config" \
    "$rexec" --cluster "$T/inv-noid.json" --only h1 -- true > "$T/nk9" 2>&1 || true
SSH_AUTH_SOCK= TUNEDECK_SSH_CONFIG="$T/agent-exec-long.config" \
    "$bin" hosts --cluster "$T/inv-noid.json" > "$T/nk9-hosts.txt" 2>&1 || true
SSH_AUTH_SOCK= TUNEDECK_SSH_CONFIG="$T/agent-exec-long.config" \
    "$bin" hosts --cluster "$T/inv-noid.json" --json > "$T/nk9-hosts.json" 2>/dev/null || true
kill "$AGENT_PID" 2>/dev/null
wait "$AGENT_PID" 2>/dev/null
AGENT_PID=
check "with an agent that holds no key the host takes, the failure says no agent key was accepted" \
    grep -q "h1 ssh-failed: .*: no agent key was accepted, and the identity $T/missing_key" "$T/nk3"
check "with IdentityAgent none, the failure says the agent is turned off there, not that its key was refused" \
    grep -q "h1 ssh-failed: .*: the agent is turned off (IdentityAgent none at $T/agent-none.config:2), and the identity $T/missing_key" "$T/nk4"
check "with an IdentityAgent socket that does not answer, the failure names it, the line and why" \
    grep -q "h1 ssh-failed: .*: no agent answers at $T/no-agent.sock (from IdentityAgent at $T/agent-dead.config:2): No such file or directory, and the identity $T/missing_key" "$T/nk5"
check "with an IdentityAgent socket that answers, the agent counts as asked whatever SSH_AUTH_SOCK says" \
    grep -q "h1 ssh-failed: .*: no agent key was accepted, and the identity $T/missing_key" "$T/nk6"
check "with an IdentityAgent under Match exec and no agent at either socket, the failure says none was asked" \
    grep -q "h1 ssh-failed: .*: no agent is running (SSH_AUTH_SOCK empty); nor at $T/no-agent.sock (IdentityAgent at $T/agent-exec-dead.config:2, under Match exec): No such file or directory, and the identity $T/missing_key" "$T/nk7"
check "with an IdentityAgent under Match exec where only that socket answers, the failure says which socket hangs on the command" \
    grep -q "h1 ssh-failed: .*: no agent key was accepted, if an agent was asked: libssh asked $T/agent.sock (answers) if the Match exec command of IdentityAgent at $T/agent-exec-live.config:2 succeeded, else no socket (SSH_AUTH_SOCK empty), and the identity $T/missing_key" "$T/nk8"
check "with many long Match exec agent sockets, rexec's failure still ends with what was denied" \
    grep -q "h1 ssh-failed: .*: no agent key was accepted, if an agent was asked: libssh asked $T/agent.sock (answers) if .*dead-3.sock (does not answer: No such file or directory) if the Match exec command of IdentityAgent at $T/agent-exec-long.config:8 succeeded, else no socket (SSH_AUTH_SOCK empty) and no identity file was accepted (denied)\$" "$T/nk9"
check "with many long Match exec agent sockets, the hosts table's row still ends with what was denied" \
    grep -q "^h1 .*dead-3.sock .* and no identity file was accepted (denied)\$" "$T/nk9-hosts.txt"
check "with many long Match exec agent sockets, hosts --json's last_error is whole" python3 - "$T/nk9-hosts.json" <<'EOF'
import json, sys
h1 = {x["name"]: x for x in json.load(open(sys.argv[1]))["hosts"]}["h1"]
le = h1["last_error"]
assert le.count("dead-") == 3 and le.endswith("and no identity file was accepted (denied)"), le
EOF
# The inventory's identity, loaded, is the only key offered: the agent is never asked.
ssh-keygen -q -t ed25519 -N '' -f "$T/stranger_key"
python3 - "$T/inv.json" "$T/inv-stranger.json" "$T/stranger_key" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["ssh"]["identity"] = sys.argv[3]
json.dump(inv, open(sys.argv[2], "w"))
EOF
"$rexec" --cluster "$T/inv-stranger.json" --only h1 -- true > "$T/nk4" 2>&1 || true
check "an inventory identity the host refuses is named as the only key offered" \
    grep -q "h1 ssh-failed: .*: the identity $T/stranger_key (the inventory's ssh.identity, the only key offered) was not accepted (denied)" "$T/nk4"

echo "reconnect"
# 25 rounds (10 s at least): h3 is away for 0.6 s plus its sshd's start, and each failed
# connect doubles the wait before the next (0.5 s base): with 10 rounds (4 s) a loaded machine
# could end the run before h3's reconnect came round.
"$rexec" --cluster "$T/inv.json" --keep --repeat 25 --interval 0.4 --stats --quiet -- true > "$T/r1" 2>&1 &
RPID=$!
sleep 1.2
# h3's session up (the sshd child serving it) before its sshd is killed: its first connect
n=0
until pgrep -P "$(cat "$T/h/sshd3.pid")" > /dev/null || [ $n -ge 200 ]; do sleep 0.05; n=$((n + 1)); done
harness_stop 3
sleep 0.6
harness_start 3
wait $RPID
# Noticed: the session counts a drop. A round that comes while h3 is down waits for its
# planned reconnect (the back-off holds for execs, docs/remote.md), so it fails only when an
# attempt fails meanwhile ("h3 ssh-failed", which timing decides): not asked for here.
check "a killed sshd is noticed and its host reconnected" \
    sh -c "grep -q 'host h3 connects [2-9][0-9]* drops [1-9]' '$T/r1' && grep -q 'last-round h3 ok' '$T/r1'"

"$rexec" --cluster "$T/inv.json" --keep --heartbeat 0.3 --repeat 7 --interval 0.5 --stats --quiet \
    -- sleep 0.1 > "$T/r2" 2>&1 &
RPID=$!
sleep 1.2
# h2's session: the sshd child serving the kept connection (a loaded machine may not have
# made it yet at 1.2 s; kill -STOP of nothing stopped nothing)
n=0
until kids=$(pgrep -P "$(cat "$T/h/sshd2.pid")") || [ $n -ge 200 ]; do sleep 0.05; n=$((n + 1)); done
kill -STOP $kids
sleep 1.8
kill -CONT $kids
wait $RPID
check "a silent host (its session's sshd stopped) is found by heartbeats and reconnected" \
    sh -c "grep -q 'h2 ssh-failed: .*silent for' '$T/r2' && grep -q 'last-round h2 ok' '$T/r2' && ! grep -q 'h1 ssh-failed' '$T/r2'"

ssh-keygen -q -t ed25519 -N 'not-asked' -f "$T/h/enc"
cat "$T/h/enc.pub" >> "$T/h/authorized_keys"
sed "s|$T/h/id_ed25519|$T/h/enc|" "$T/inv.json" > "$T/inv-enc.json"
timeout 10 "$rexec" --cluster "$T/inv-enc.json" --only h1 -- true < /dev/null > "$T/e1" 2>&1
check "an encrypted key without an agent fails clearly and never prompts" \
    grep -q 'h1 ssh-failed: .*is encrypted and no ssh-agent holds it' "$T/e1"

echo "trials"
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host --trial-cmd "$trial" \
    --budget 3 --optimizer random --json > "$T/t1.json" 2>"$T/t1.err"
check "tune --launcher per-host runs 3 trials end to end with merged timings" \
    python3 - "$T/t1.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["trials"]) == 3 and all(t["status"] == "ok" for t in r["trials"]), r["trials"]
assert r["best_time_s"] > 0.05
EOF
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher single --trial-cmd "$trial" \
    --budget 1 --optimizer random --json > "$T/t2.json" 2>"$T/t2.err"
check "the single launcher runs one command for the trial" \
    python3 -c "import json,sys; r=json.load(open('$T/t2.json')); assert r['trials'][0]['status']=='ok', r"
# A line with a NUL byte, read over the SSH channel: refused naming the byte (the NUL cut it as
# a C string, the event after it dropped unseen), the trial measured all the same, as with
# the local launcher (tests/remote/launch/test_launch_local.c).
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "printf '{\"event\":\"progress\",\"step\":1}\\000{\"event\":\"error\",\"message\":\"x\"}\\n'; $trial" \
    --budget 1 --optimizer random --json > "$T/t2n.json" 2>"$T/t2n.err"
check "per-host over SSH: a line with a NUL byte is refused naming the byte" python3 - "$T/t2n.json" <<'EOF'
import json, re, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "ok", t
assert re.match(r"first bad line: h\d: event line: expected JSON text, found a NUL byte at byte 30$",
                t["reason"]), t
EOF
"$bin" tune --cluster "$T/inv4.json" --job "$T/job.json" --launcher per-host --trial-cmd "$trial" \
    --budget 1 --optimizer uniform-devices --json > "$T/t3.json" 2>"$T/t3.err"
check "ssh failing is its own outcome (unreachable)" python3 - "$T/t3.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "unreachable" and t["reason"].startswith("ssh failed"), t
EOF
# A channel sshd closes under the command, the connection kept (ChannelTimeout: no exit
# status, no signal) is "ssh failed on HOST": the channel's end does not say where. What the
# command left there is stopped by the end of the session.
harness_start 6 "ChannelTimeout session:*=1s"
HARNESS_TIMEOUT_S=3 harness_inventory "$T/inv6.json" 6
"$bin" tune --cluster "$T/inv6.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd ": chto$$; sleep 4; $trial" --budget 1 --optimizer random --json \
    > "$T/t3c.json" 2> "$T/t3c.err"
check "a channel closed without an exit status: unreachable, 'ssh failed on h6'" \
    python3 - "$T/t3c.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "unreachable", t
assert t["reason"] == "ssh failed on h6: the channel closed without an exit status", t
EOF
check "and nothing of its command is left on h6" sh -c "! pgrep -f 'ch[t]o$$' > /dev/null"
harness_stop 6
# Every part prints its lines, then waits (at most 10 s) until every host of the inventory
# has, before it fails: a part whose host is slow to start is stopped, lines unprinted, once
# the first part fails (a loaded full run saw h3 fail before h2 had printed).
parts=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['machines']))" "$T/inv.json")
rm -f "$T"/printed.*
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "echo \"loading on \$TUNEDECK_MACHINE\" >&2; echo stray; echo broken >&2; touch '$T'/printed.\$TUNEDECK_MACHINE; n=0; while [ \$(ls '$T'/printed.* | wc -l) -lt $parts ] && [ \$n -lt 100 ]; do sleep 0.1; n=\$((n + 1)); done; exit 3" \
    --budget 1 --optimizer random --json > "$T/t4.json" 2>"$T/t4.err"
check "the command failing is another (failed, with the host and stderr)" python3 - "$T/t4.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["status"] == "failed" and "the command failed on h" in t["reason"], t
assert "exit status 3: broken" in t["reason"], t
EOF
# The command's last stderr line without a newline shares its line with the wrapping shell's
# end line, and a command's own "tunedeck: " line is its last word: both stay the reason
# (before: "boomtunedeck-ended" was no end line, and every "tunedeck: " line was dropped).
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "printf 'tunedeck: own words, no newline' >&2; exit 3" \
    --budget 1 --optimizer random --json > "$T/t4b.json" 2>"$T/t4b.err"
check "a command's own last line, unended and in tunedeck's words, is still its failure's" \
    python3 - "$T/t4b.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["trials"][0]
assert t["status"] == "failed", t
assert "exit status 3: tunedeck: own words, no newline" in t["reason"], t
text = open(r["trial_log"]).read()
assert "tunedeck-ended" not in text, text
EOF2
# What each host's part printed besides the protocol is kept in the log beside the journal,
# tagged with the trial and the host, and the failure says where (before: nowhere). Each of
# the command's three lines is there once per host; the log's count is what it holds. Beside
# them only a wrapping shell's or a stop's note on what a command left may stand (logged as
# its part's stderr, launch_ssh.c): the parts end at about the same time, so one may be
# stopped as its command ends by itself. A loaded run once counted 7 lines for 2 hosts where
# the check wanted exactly 6; it was not reproduced (21 runs under load), and whatever such a
# line is, the assertion now names it.
check "per-host: every part's stderr and stray stdout are in the trial log, by host" \
    python3 - "$T/t4.json" "$T/t4.err" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
log, t = r["trial_log"], r["trials"][0]
assert log and log.endswith(".log") and r["session"] in log, r
err = open(sys.argv[2]).read()
assert "what the trials printed besides the protocol" in err and log in err, err
text = open(log).read()
hosts = sorted(m["name"] for m in t["schedule"]["machines"] if m["worker"] or m["ps"])
said = re.findall(r"^\S+Z trial 1 (\S+) (stderr|stdout): (.*)$", text, re.M)
assert t["log_lines"] == len(said), (t["log_lines"], said)
NOTE = ("tunedeck: the trial's command ended and left processes running (",
        "); stopping them: TERM, KILL after 2000 ms")
own, other = [], []
for h, stream, line in said:
    if stream == "stderr" and line.startswith(NOTE[0]) and line.endswith(NOTE[1]):
        continue
    (own if h in hosts else other).append((h, stream, line))
for h in hosts:
    mine = sorted((s, l) for g, s, l in own if g == h)
    assert mine == [("stderr", "broken"), ("stderr", "loading on " + h), ("stdout", "stray")], \
        (h, mine, said)
assert not other, (other, said)
assert "Z trial 1 ended: failed: the command failed on h" in text, text
EOF
if [ -x "$build/tunedeck-worker" ]; then
    # The reference workload: one worker process per host, PS shards on each host's address.
    # --no-prune: its iterations take milliseconds, and on a loaded machine one trial of the
    # same schedule can run 2x slower than another and be pruned (CI saw 0.036 s against
    # 0.016 s); this checks the merged timings, pruning over SSH is checked below.
    "$bin" tune --cluster "$T/inv.json" --job "$root/examples/tiny-job.json" --launcher per-host \
        --trial-cmd "$build/tunedeck-worker --port-base $((H_PORT + 1)) --connect-timeout 10" \
        --budget 3 --optimizer uniform-devices --seed 3 --no-journal --no-prune --json \
        > "$T/w1.json" 2>"$T/w1.err"
    check "tune --launcher per-host runs tunedeck-worker on 3 hosts, 3 trials, merged timings" \
        python3 - "$T/w1.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["trials"]) == 3, r["trials"]
for t in r["trials"]:
    assert t["status"] == "ok" and t["time_s"] > 0, t
    ms = [m for m in t["schedule"]["machines"] if m["worker"] or m["ps"]]
    assert len(ms) == 3, ms  # every host took part
EOF2
fi
marker="tunedeck-slow-$$x"  # x: pid 12's mark is not part of pid 123's
# marked_hosts: how many hosts run a process with the marker (tune's own command line carries
# it too, but not a host's TUNEDECK_TEST_HOST, which each sshd sets).
marked_hosts() {
    for p in $(pgrep -f "$marker"); do
        cat "/proc/$p/environ" 2>/dev/null | tr '\0' '\n' | grep '^TUNEDECK_TEST_HOST='
    done | sort -u | wc -l
}
# The trial runs on all 3 hosts (uniform-devices: every device takes part; random left h1 out
# of its schedule), and the timeout (8 s) stops it once it runs on all three: at 1.5 s a
# loaded machine could time it out before ssh and python were up everywhere, and the check
# then counted tune's own process as one of the trial's (it waited for 4 marked processes,
# accepted 3).
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "$trial 30 $marker" --budget 1 --optimizer uniform-devices --trial-timeout 8 --json \
    > "$T/t5.json" 2>/dev/null &
TUNE_PID=$!
n=0
while [ "$(marked_hosts)" -lt 3 ] && [ $n -lt 400 ] && kill -0 $TUNE_PID 2>/dev/null; do
    sleep 0.05; n=$((n + 1))
done
running=$(marked_hosts)
wait $TUNE_PID
TUNE_PID=""
left=$(procs_left "$marker")
check "a stopped trial leaves no process behind on any host (it ran on $running hosts, $left left)" \
    sh -c "[ $running -eq 3 ] && [ $left -eq 0 ] && grep -q '\"timeout\"' '$T/t5.json'"

# Pruning over SSH: trial 2 is 10x slower than trials 1 and 3 and takes 0.3 s per iteration on every
# host; it is stopped in its warm-up and its processes are gone from every host.
cat > "$T/job20.json" <<'EOF'
{"name": "tiny", "model_mb": 10, "batch": 64, "iterations": 20, "warmup": 5}
EOF
pmark="tunedeck-prune-$$x"  # x: pid 12's mark is not part of pid 123's
cat > "$T/slow.sh" <<'EOF'
cat >/dev/null
t=0.1
[ "$TUNEDECK_TRIAL" = 2 ] && t=1.0
i=1
while [ $i -le 20 ]; do
    printf '{"event":"iteration","iter":%d,"time_s":%s}\n' $i $t
    [ "$t" = 0.1 ] || sleep 0.3
    i=$((i+1))
done
EOF
"$bin" tune --cluster "$T/inv.json" --job "$T/job20.json" --launcher per-host \
    --trial-cmd "sh $T/slow.sh $pmark" --budget 3 --optimizer random --no-journal --json \
    > "$T/t6.json" 2>"$T/t6.err"
left=$(procs_left "$pmark")
check "per-host: a slow trial is pruned in warm-up and leaves no process on any host ($left left)" \
    python3 - "$T/t6.json" "$left" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
# trial 1 is a probe (nothing measured before it); trial 2 is compared with it
assert [x["status"] for x in t] == ["pruned", "pruned", "ok"], t
assert "probe" in t[0]["reason"], t[0]
assert "in warm-up" in t[1]["reason"], t[1]
assert sys.argv[2] == "0", sys.argv[2]
EOF

# Ctrl-C mid-trial over SSH, twice: trial 1 is done, trial 2 runs on every host; its remote
# processes are stopped on all three, then the summary (trial 1 ok, trial 2 interrupted, the
# best so far) and the command that goes on; that command resumes it. Before, stdout stayed
# empty and the second Ctrl-C ended tunedeck in the middle of the stop.
imark="tunedeck-int-$$x"
cat > "$T/int.sh" <<EOF
[ "\$TUNEDECK_TRIAL" = 2 ] || exec python3 $root/tests/fixtures/trial.py
echo "trial 2 on \$TUNEDECK_MACHINE: loading" >&2
touch "$T/int2-\$TUNEDECK_MACHINE"
exec python3 $root/tests/fixtures/trial.py 30 "\$1"
EOF
rm -f "$T"/int2-*
env --default-signal=INT "$bin" tune --cluster "$T/inv.json" --job "$T/job.json" \
    --launcher per-host --trial-cmd "sh $T/int.sh $imark" --budget 3 \
    --optimizer uniform-devices --no-prune --json > "$T/t7.json" 2> "$T/t7.err" &
TUNE_PID=$!
n=0
while [ "$(ls "$T"/int2-* 2>/dev/null | wc -l)" -lt 3 ] && [ $n -lt 400 ]; do
    sleep 0.05; n=$((n + 1))
done
running=$(ls "$T"/int2-* 2>/dev/null | wc -l)
kill -INT "$TUNE_PID"
n=0
while ! grep -q 'stopping the running trial' "$T/t7.err" && [ $n -lt 100 ]; do
    sleep 0.05; n=$((n + 1))
done
pid_kill_named INT "$TUNE_PID" "$T/"
wait "$TUNE_PID"
rc=$?
TUNE_PID=""
left=$(procs_left "$imark")
check "Ctrl-C twice mid-trial over SSH (it ran on $running hosts): exit $rc, no process left on any host ($left), the summary and the resume command" \
    python3 - "$T/t7.json" "$T/t7.err" "$rc" "$running" "$left" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
assert sys.argv[3:] == ["130", "3", "0"], sys.argv[3:]
assert r["interrupted"] == "SIGINT" and r["trials_done"] == 1, r
assert [t["status"] for t in r["trials"]] == ["ok", "interrupted"], r["trials"]
assert r["best_time_s"] == r["trials"][0]["time_s"] and r["best_schedule"], r
assert r["resume"] == "tunedeck tune --resume %s --json" % r["session"], r
assert "to go on: " + r["resume"] in err, err
text = open(r["trial_log"]).read()
for h in ("h1", "h2", "h3"):
    assert "trial 2 %s stderr: trial 2 on %s: loading\n" % (h, h) in text, text
assert "trial 2 ended: interrupted: SIGINT" in text, text
EOF

# SIGKILL of tune mid-trial: its connections close, but a remote command with no pty gets no
# SIGHUP and a quiet one never meets EPIPE. Each part's guard (remote/ssh/groupstop.h) sees
# its sshd session process gone and stops the group (regression: a trial that did not write
# ran on for ever on every host, until a --resume stopped it).
kmark="tunedeck-sigkill-$$x"  # x: pid 12's mark is not part of pid 123's
ln -sf "$(command -v sleep)" "$T/$kmark"
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "cat >/dev/null; exec $T/$kmark 300" --budget 1 --optimizer uniform-devices \
    --no-journal > /dev/null 2>&1 &
TUNE_PID=$!
n=0
while [ "$(pgrep -fx "$T/$kmark 300" | wc -l)" -lt 3 ] && [ $n -lt 400 ]; do
    sleep 0.05; n=$((n + 1))
done
running=$(pgrep -fx "$T/$kmark 300" | wc -l)
pid_kill_named KILL "$TUNE_PID" "$T/"; wait "$TUNE_PID" 2>/dev/null; TUNE_PID=""
left=$(procs_left "$kmark")
check "SIGKILL of tune mid-trial: a quiet trial stops on every host with its session (it ran on $running hosts, $left left)" \
    [ "$running $left" = "3 0" ]
for p in $(pgrep -f "$kmark"); do pid_kill_named KILL "$p" "$kmark"; done
# The same for a live job (remote/live/jobctl.c), whose client (schedule --live, here
# tunedeck-jobctl) is SIGKILLed while the job is quiet: its guard stops it.
python3 - "$T/inv.json" "$T/invq.json" "$T/$kmark" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = "exec %s 300" % sys.argv[3]
json.dump(inv, open(sys.argv[2], "w"))
EOF
"$jobctl" "$T/invq.json" "$T/ckptq" > /dev/null 2>&1 &
TUNE_PID=$!
n=0
while [ "$(pgrep -fx "$T/$kmark 300" | wc -l)" -lt 1 ] && [ $n -lt 400 ]; do
    sleep 0.05; n=$((n + 1))
done
running=$(pgrep -fx "$T/$kmark 300" | wc -l)
pid_kill_named KILL "$TUNE_PID" "$T/"; wait "$TUNE_PID" 2>/dev/null; TUNE_PID=""
left=$(procs_left "$kmark")
check "SIGKILL of a live job's client: a quiet job stops with its session ($running ran, $left left)" \
    [ "$running $left" = "1 0" ]
for p in $(pgrep -f "$kmark"); do pid_kill_named KILL "$p" "$kmark"; done

# exec channels: how many a trial opens, as the hosts' sshd logged them. One per host (its
# command's); what the command left is stopped by the shell that wraps it there, on that
# channel (remote/ssh/groupstop.h). Regression: the stop of what it left was a second exec
# per host, asked for and waited on at every trial's end, though nothing was left (6 here).
# A run of 2 trials less a run of 1: what a run asks once (the hosts' GPU state) cancels out.
sessions() { cat "$T"/h/sshd[123].log | grep -c 'Starting session: command'; }
run_sessions() { # run_sessions BUDGET: the exec channels one run of BUDGET trials opened
    _rs0=$(sessions)
    "$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
        --trial-cmd "exec $trial" --budget "$1" --optimizer uniform-devices --no-journal \
        --json > "$T/c$1.json" 2> "$T/c$1.err" || echo "tune failed" >> "$T/c$1.err"
    echo $(($(sessions) - _rs0))
}
one_trial=$(run_sessions 1)
two_trials=$(run_sessions 2)
check "a trial that ends opens one exec channel per host, 3 on 3 hosts (run of 1: $one_trial, run of 2: $two_trials)" \
    sh -c "[ \$(($two_trials - $one_trial)) -eq 3 ] && ! grep -q 'tune failed' '$T/c1.err' '$T/c2.err'"

# A trial's daemon: a process the trial starts with setsid (a group and session of its own, as
# a data-loader server or `setsid cmd &` has) that ignores TERM. The stop (here the trial's
# timeout), the guard (tune SIGKILLed) and the command's own end each stop it on every host
# (regression: each signalled the trial's process group only, and the daemon ran on). It is up
# (its TERM ignored) before the trial goes on: it says so in $T/dup-TAG-MACHINE.
dmark="tunedeck-daemon-$$x"  # x: pid 12's mark is not part of pid 123's
ln -sf "$(command -v sleep)" "$T/$dmark"
daemon_cmd() { # daemon_cmd TAG: the trial command's start, which leaves the daemon running
    # (the schedule on its stdin left to what follows)
    printf '%s' "setsid sh -c 'trap \"\" TERM; : > $T/dup-$1-\$TUNEDECK_MACHINE; exec $T/$dmark 300' </dev/null >/dev/null 2>&1 & until [ -e $T/dup-$1-\$TUNEDECK_MACHINE ]; do sleep 0.05; done; "
}
daemons_up() { # daemons_up TAG: until the 3 hosts' daemons of TAG are up (10 s at most)
    n=0
    while [ "$(ls "$T" | grep -c "^dup-$1-")" -lt 3 ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
    ls "$T" | grep -c "^dup-$1-"
}
daemon_reap() { for p in $(pgrep -f "$dmark"); do pid_kill_named KILL "$p" "$dmark"; done; }
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "$(daemon_cmd stop)cat >/dev/null; exec sleep 300" --budget 1 --optimizer uniform-devices \
    --trial-timeout 10 --no-journal --json > "$T/d1.json" 2> "$T/d1.err" &
TUNE_PID=$!
running=$(daemons_up stop)
wait "$TUNE_PID"; TUNE_PID=""
left=$(procs_left "$dmark")
check "a stopped trial's setsid daemon that ignores TERM is stopped on every host ($running ran, $left left)" \
    sh -c "[ '$running $left' = '3 0' ] && grep -q '\"timeout\"' '$T/d1.json'"
daemon_reap
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "$(daemon_cmd guard)cat >/dev/null; exec sleep 300" --budget 1 --optimizer uniform-devices \
    --no-journal > /dev/null 2>&1 &
TUNE_PID=$!
running=$(daemons_up guard)
# Each host's mark, read from its daemon's environment: no command line holds one (the wrapping
# shell's, the command's, the guard's), while the trial runs.
marks=$(for p in $(pgrep -f "$dmark"); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | sed -n 's/^TUNEDECK_RUN_MARK=//p'
done | sort -u)
printf '%s\n' $marks > "$T/marks" # a pattern file: grep's own command line holds none
shown=$(cd /proc && grep -laFf "$T/marks" [0-9]*/cmdline 2>/dev/null | wc -l)
check "no command line holds a trial's mark while it runs ($(echo $marks | wc -w) marks, on $shown command lines)" \
    [ "$(echo $marks | wc -w) $shown" = "3 0" ]
pid_kill_named KILL "$TUNE_PID" "$T/"; wait "$TUNE_PID" 2>/dev/null; TUNE_PID=""
left=$(procs_left "$dmark")
check "SIGKILL of tune: the guard stops the trial's setsid daemon on every host ($running ran, $left left)" \
    [ "$running $left" = "3 0" ]
daemon_reap
s0=$(sessions)
"$bin" tune --cluster "$T/inv.json" --job "$T/job.json" --launcher per-host \
    --trial-cmd "$(daemon_cmd end)exec $trial" --budget 1 --optimizer uniform-devices \
    --json > "$T/d3.json" 2> "$T/d3.err"
d3_sessions=$(($(sessions) - s0))
left=$(procs_left "$dmark")
check "a trial that ends and leaves a setsid daemon: ok, the daemon stopped on every host and named in its log, no exec channel more than a trial that left nothing ($left left, $d3_sessions channels, $one_trial)" \
    python3 - "$T/d3.json" "$left" "$d3_sessions" "$one_trial" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
assert sys.argv[2] == "0", sys.argv[2]
assert sys.argv[3] == sys.argv[4], (sys.argv[3], sys.argv[4])
assert [t["status"] for t in r["trials"]] == ["ok"], r["trials"]
text = open(r["trial_log"]).read()
for h in ("h1", "h2", "h3"):
    pat = (r"trial 1 %s stderr: tunedeck: the trial's command ended and left processes running "
           r"\([0-9]+ tunedeck-daemon \(outside the trial's process group\)\); stopping "
           r"them: TERM, KILL after 2000 ms\n" % h)
    assert re.search(pat, text), text
EOF
daemon_reap

resume=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['resume'])" "$T/t7.json")
set -- $resume
shift
"$bin" "$@" > "$T/t8.json" 2> "$T/t8.err"
check "the printed command resumes it: trial 2 interrupted, trial 3 runs ($resume)" \
    python3 - "$T/t8.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert [t["status"] for t in r["trials"]] == ["ok", "interrupted", "ok"], r["trials"]
assert r["interrupted"] is None, r
EOF

echo "jobs"
"$jobctl" "$T/inv.json" "$T/ckpt" > "$T/j1" 2>&1
# Each run of the job has a mark of its own. Regression: a restart kept the old run's, so the old
# run's guard (or a KILL of it still on its way) reached the new run's processes, and the new
# run's stop the old run's leftovers.
# The first run carries the mark the tool gave (regression: the first launch replaced it, so
# jobgroup_start's own was never exported). A restart after our own KILL goes ahead (regression:
# the KILL ended the channel signalled and read as a run that may linger: always refused).
check "a job starts under the given mark, restarts at a new size from its checkpoint under a fresh mark, restarts after a KILL, and stops" python3 - "$T/j1" "$T/ckpt" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read()
given = re.search(r"given mark ([0-9a-f]{32})\n", lines)
started = re.search(r"started: pgid \d+ progress step (\d+) .* examples_per_s 200 .* mark ([0-9a-f]{32})\n", lines)
restarted = re.search(r"\nrestarted: pgid \d+ progress step (\d+) .* examples_per_s 100 .* mark ([0-9a-f]{32})\n", lines)
again = re.search(r"restarted after kill: pgid \d+ .* mark ([0-9a-f]{32})\n", lines)
stopped = re.search(r"stopped: .* status 'exited 0'", lines)
assert given and started and restarted and again and stopped, lines
assert given.group(1) == started.group(2), lines
assert started.group(2) != restarted.group(2) != again.group(1), lines
ckpt = int(re.search(r"checkpoint at restart: step (\d+)", lines).group(1))
assert int(restarted.group(1)) > ckpt >= int(started.group(1)), (restarted.group(1), ckpt)
EOF

# A live job whose command leaves a process in its group that emptied its environment (no
# mark) and ignores TERM, at each of its runs (the tool KILLs the second, which reaches them
# too): the job's wrapping shell (groupstop.h) KILLs it at each run's end, on the job's own
# channel: after the job's stop_timeout_s (20 s), as the
# run ended on a TERM its group had (a restart, a stop: a checkpoint's time). Regression: the job ran under
# a plain `sh -c` and such a process outlived it (2 left).
# Each run also starts a daemon with setsid (a group and session of its own, as a data-loader
# server has) that ignores TERM, up before the job goes on ($T/jd-PID): only the run's mark, in
# its environment, names it, and the same stop KILLs it (no wait more). Regression: the mark
# was exported by the job's command alone, the wrapping shell never knew it, and the daemon
# outlived every run (2 left).
lmark="tunedeck-jobleft-$$x"
jdmark="tunedeck-jobdaemon-$$x"
ln -sf "$(command -v sleep)" "$T/$lmark"
ln -sf "$(command -v sleep)" "$T/$jdmark"
python3 - "$T/inv.json" "$T/invl.json" "$root/tests/fixtures/job.sh" "$T/ckptl" "$T/$lmark" "$T/$jdmark" "$T" <<'EOF2'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = ("env -i sh -c 'trap \"\" TERM; exec %s 296' </dev/null >/dev/null 2>&1 & "
                      "setsid sh -c 'trap \"\" TERM; : > %s/jd-'$$'; exec %s 297' "
                      "</dev/null >/dev/null 2>&1 & until [ -e %s/jd-$$ ]; do sleep 0.05; done; "
                      "exec sh %s {gpus} {hosts} {resume} %s"
                      % (sys.argv[5], sys.argv[7], sys.argv[6], sys.argv[7], sys.argv[3], sys.argv[4]))
json.dump(inv, open(sys.argv[2], "w"))
EOF2
"$jobctl" "$T/invl.json" "$T/ckptl" > "$T/j2" 2>&1
left=$(pgrep -fx "$T/$lmark 296" | wc -l)
check "a live job's unmarked leftover that ignores TERM is stopped at each run's end ($left left)" \
    sh -c "[ $left -eq 0 ] && grep -q \"stopped: .* status 'exited 0'\" '$T/j2'"
ran=$(ls "$T" | grep -c '^jd-')
left=$(pgrep -fx "$T/$jdmark 297" | wc -l)
check "a live job's setsid daemon that ignores TERM is stopped at each run's end ($ran ran, $left left)" \
    [ "$ran $left" = "3 0" ]
for p in $(pgrep -f "$lmark"); do pid_kill_named KILL "$p" "$lmark"; done
for p in $(pgrep -f "$jdmark"); do pid_kill_named KILL "$p" "$jdmark"; done

if [ "$fails" -ne 0 ]; then
    echo "remote: $fails failed"
    for f in "$T"/*.err "$T"/o* "$T"/k* "$T"/r1 "$T"/j1 "$T"/j2; do [ -s "$f" ] && { echo "--- $f"; head -c 2000 "$f"; }; done
    exit 1
fi
echo "remote: all passed"
