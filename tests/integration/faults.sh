#!/bin/sh
# Fault injection against real sshd instances (tests/sshd-harness.sh) and the reference
# workload (tunedeck-worker, per-host launcher, 3 hosts):
#   1. the headless tune is SIGKILLed mid-trial and resumed: no finished trial is lost, the
#      running one is interrupted, and its remote processes are stopped by the resume;
#      1b. the same after a resume that crossed a damaged line (trial numbers shifted);
#   2. one host's connection dies mid-trial (its sshd session process, killed with the
#      command's shell): the trial fails naming that host, the session goes on with its next
#      trials, and stops what the dropped connection left running on that host before its
#      next trial there;
#      2b. the same with a leftover that outlives SIGKILL: the session stops early, exit 1;
#      2c. the same with a leftover of another user that the login may not kill;
#   3. packets delayed and dropped (tc, in a private network namespace): streams survive;
#   4. the journal's disk is full during a remote (per-host) session;
#   5. the console (in tmux) is SIGKILLed mid-trial and reopened with --resume: the running
#      trial's remote process groups are stopped before it launches anything.
# Every sshd and trial process started here is stopped by the trap (by pid, by the process
# groups the journals recorded, and by the marker in the trial wrapper's name). The scratch
# folder T is removed then, unless a check failed or KEEP=1 (as lib/suite.sh keeps it): its
# path is printed, with the journals, the trials' logs (state*/sessions/ID.log) and outputs.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
build="${TUNEDECK_BUILD:-$root/build}"
bin="${TUNEDECK_BIN:-$build/tunedeck}"
rexec="$build/tunedeck-rexec"
worker="$build/tunedeck-worker"

if [ "${1:-}" = --netns-part ]; then
    T="$2"
else
    T="$(mktemp -d /tmp/tunedeck-faults.XXXXXX)"
fi
MARK="tdfault$$x"  # x: pid 12's mark is not part of pid 123's
. "$here/port-lease.sh"
HARNESS_SRC="$here/sshd-harness.sh"
. "$here/sshd-harness.sh"
. "$here/integration/lib/tmux.sh"
. "$here/integration/lib/procs_left.sh"
tmux_screen="$T/c5.screen"
tmux_join=1
# TUNE_PID, the session in the background, and TUNE_STATE, the state folder in its environment:
# it is signalled only while that is still there (tune_kill), since a session that ended may
# have left its number to another suite's process (its command line, a --resume's or the
# console's, may name nothing of this suite's).
TUNE_PID="" TUNE_STATE=""
tune_kill() { pid_kill_env "$1" "$TUNE_PID" "TUNEDECK_STATE_DIR=$TUNE_STATE"; }
cleanup() {
    trap "" HUP INT TERM # a second signal (Ctrl-C, then the runner's TERM) must not cut it short
    [ -n "$TUNE_PID" ] && tune_kill KILL
    command -v tmux >/dev/null 2>&1 && tmux_stop
    thaw_sessions
    harness_stop_all
    # The groups the journals recorded (those still this run's), then anything still
    # carrying this run's marker.
    for g in $(cat "$T"/state*/sessions/*.jsonl 2>/dev/null |
        sed -n 's/.*"event":"remote_process".*"pgid":\([0-9][0-9]*\).*/\1/p'); do
        group_kill_marked "$g" "$MARK"
    done
    for p in $(pgrep -f "$MARK" 2>/dev/null); do pid_kill_named KILL "$p" "$MARK"; done
    if [ "${1:-}" = --netns-part ]; then
        : # part 3's folder is inside the main run's T
    elif [ -n "${KEEP:-}" ] || [ "$2" -ne 0 ]; then
        echo "faults: kept $T (the journals and trial logs: $T/state*/sessions, part 3's under $T/netns)"
    else
        rm -rf "$T"
    fi
}
trap 'cleanup "${1:-}" "$?"' EXIT
trap 'exit 1' HUP INT PIPE TERM
unset SSH_AUTH_SOCK

fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); KEEP=1; }
skip() { echo "  skipped: $1"; }
check() { # check NAME COMMAND...: passes when the command succeeds
    name="$1"; shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

if [ ! -x "$worker" ]; then
    echo "faults: skipped: $worker is not built"
    exit 0
fi

# The trial: tunedeck-worker on every host, started by a wrapper whose name carries this
# run's marker (pgrep finds it on every host). With $T/slow-N present, trial N runs with a
# slowdown (seconds long, to be killed in the middle), and also starts a helper that never
# writes to its output (a data loader, say): such a process outlives a dropped connection,
# and only an explicit stop ends it. Once the helper runs, the wrapper says so in
# $T/helper-up-N-MACHINE (the hosts share this file system). Each machine has one "GPU":
# a lock ($T/gpu-MACHINE) that every process of a trial holds, so a trial started beside an
# earlier trial's leftover on that machine fails at once, whatever the timing. With
# $T/stuck-N-MACHINE present as well, trial N on that machine leaves a group that SIGKILL
# cannot empty, as a process stuck in the kernel would: a parent leaves the group (for a
# group of its own, in the same session), keeps a never-reaped zombie child in it, which
# keeps the group's id in use, and puts a new live child into it whenever the last one
# dies. The parent and its children carry the marker; killing them all ends it. The parent
# runs without the launch's TUNEDECK_RUN_MARK (its children, `sleep`, get it back): a stop
# also stops the processes that carry the mark outside the group (a daemon of the trial), so
# a marked parent would be killed and the group emptied, which a process really stuck in the
# kernel, needing no parent outside, would not let happen. With
# $T/other-user-N-MACHINE present instead, the helper of trial N on that machine runs as
# nobody (a data loader started under a service account, say), its name still the marker's.
setup_trial() {
    nobody="--reuid=$(id -u nobody 2>/dev/null) --regid=$(id -g nobody 2>/dev/null) --clear-groups"
    ln -sf "$(command -v sleep)" "$T/helper-$MARK"
    cat > "$T/trial-$MARK.sh" <<EOF
#!/bin/sh
exec 9>>"$T/gpu-\$TUNEDECK_MACHINE"
if ! flock -n 9; then
    echo "the GPU of \$TUNEDECK_MACHINE is held by another trial's process" >&2
    exit 1
fi
slow=""
if [ -e "$T/slow-\$TUNEDECK_TRIAL" ]; then
    slow="--slowdown 40"
    if [ -e "$T/other-user-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE" ]; then
        setpriv $nobody bash -c 'exec -a "helper-$MARK" sleep 300' </dev/null >/dev/null 2>&1 &
    else
        "$T/helper-$MARK" 300 </dev/null >/dev/null 2>&1 &
    fi
    if [ -e "$T/stuck-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE" ]; then
        up="$T/stuck-up-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE"
        env -u TUNEDECK_RUN_MARK python3 -c 'import os, shutil, sys, time
group = os.getpgrp()
sleep = shutil.which("sleep")
if os.fork() == 0:
    os._exit(0)
os.setpgid(0, 0)
# Real-time priority where allowed: on a loaded machine the stop must never find the group
# between a child killed and its successor (it reads an empty group as stopped).
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
except (OSError, AttributeError):
    pass
end = time.time() + 300
while time.time() < end:
    born = time.time()
    child = os.fork()
    if child == 0:
        os.setpgid(0, group)
        os.execve(sleep, [sys.argv[1], "300"], dict(os.environ, TUNEDECK_RUN_MARK=sys.argv[3]))
    try:
        os.setpgid(child, group)  # by the parent too: in the group before the child first runs
    except OSError:
        pass
    if not os.path.exists(sys.argv[2]):
        open(sys.argv[2], "w").close()
    os.waitpid(child, 0)
    if time.time() - born < 0.01:
        time.sleep(0.05)  # a child that cannot live: no real-time busy loop' "stuck-$MARK" "\$up" "\$TUNEDECK_RUN_MARK" \
            9>&- </dev/null >/dev/null 2>&1 &
        # ready once the group holds a live child of the parent that left it
        n=0; while [ ! -e "\$up" ] && [ \$n -lt 1200 ]; do sleep 0.05; n=\$((n + 1)); done
    fi
    : > "$T/helper-up-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE"
fi
# How the worker ended, while this script lived (a stop's TERM to the group ends the script
# too, and then nothing is written): a part that ended before a stop reached it says why in
# $T/ended-N-MACHINE, its status and, for a slow trial (one killed mid-way, whose stderr goes
# nowhere once its session is frozen), the end of what it said on stderr, kept in
# $T/stderr-N-MACHINE and passed on once it ends.
if [ -n "\$slow" ]; then
    "$worker" --port-base \$((${PORT_BASE:-0} + 0)) --connect-timeout 10 \$slow "\$@" \
        2> "$T/stderr-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE"
    rc=\$?
    cat "$T/stderr-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE" >&2
else
    "$worker" --port-base \$((${PORT_BASE:-0} + 0)) --connect-timeout 10 "\$@"
    rc=\$?
fi
echo "status \$rc: \$(tail -n 2 "$T/stderr-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE" 2>/dev/null)" \
    > "$T/ended-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE"
exit \$rc
EOF
    chmod 755 "$T/trial-$MARK.sh"
}
trial_cmd() { echo "sh $T/trial-$MARK.sh"; }

# wait_for FILE PATTERN N SECONDS: until FILE has at least N lines matching PATTERN.
wait_for() {
    n=0
    while [ "$n" -lt $(($4 * 20)) ]; do
        [ "$(cat $1 2>/dev/null | grep -c -- "$2")" -ge "$3" ] && return 0
        sleep 0.05; n=$((n + 1))
    done
    return 1
}
# helpers_up TRIAL N SECONDS: until N hosts' wrappers of TRIAL have started their helper.
# The journal has a trial's process group as soon as the remote shell starts, before the
# wrapper has looked for $T/slow-N: removing that file (or killing the session) before
# then would leave a trial without its helper, whose processes then end on their own.
helpers_up() {
    n=0
    while [ "$n" -lt $(($3 * 20)) ]; do
        [ "$(ls "$T" | grep -c "^helper-up-$1-")" -ge "$2" ] && return 0
        sleep 0.05; n=$((n + 1))
    done
    return 1
}
journal_of() { ls "$1"/sessions/*.jsonl 2>/dev/null | head -n 1; }
# freeze_sessions: SIGSTOP every sshd session process (each listener's children) before tune
# is SIGKILLed, as if its machine had lost power: sshd never sees the connection end, so the
# trial's guard (remote/ssh/groupstop.h: it stops the group once its sshd session process is
# gone) leaves it running, and --resume's stop is what ends it. thaw_sessions ends them.
# The frozen processes are listed in $T/frozen ("hI PID"), for frozen_states.
frozen=""
freeze_sessions() {
    : > "$T/frozen"
    for f in "$H"/sshd*.pid; do
        fh=$(basename "$f" .pid); fh="h${fh#sshd}"
        for c in $(pgrep -P "$(cat "$f")" 2>/dev/null); do
            kill -STOP "$c" 2>/dev/null && frozen="$frozen $c" && echo "$fh $c" >> "$T/frozen"
        done
    done
}
# frozen_states: per host, each session process frozen there and its state now, "PID STATE"
# (T: still frozen; gone: it died, and its commands' guards then stop their groups: no stop of
# tunedeck's finds them), or "none" (the connection was gone before the freeze: the same).
frozen_states() {
    for fh in h1 h2 h3; do
        fs=""
        while read -r fm c; do
            [ "$fm" = "$fh" ] || continue
            fs="$fs $c $(sed 's/.*) \([A-Za-z]\).*/\1/' "/proc/$c/stat" 2>/dev/null || echo gone)"
        done < "$T/frozen"
        echo "$fh:${fs:- none}"
    done
}
# Each only while still frozen (T) and an sshd's: one that died since (harness_stop kills a
# listener's sessions) may have left its number to another suite's process.
thaw_sessions() {
    for c in $frozen; do
        [ "$(sed 's/.*) \([A-Za-z]\).*/\1/' "/proc/$c/stat" 2>/dev/null)" = T ] &&
            pid_kill_named KILL "$c" sshd
    done
    frozen=""
}
# session_bg PART: the 3-trial session of parts 2, 2b and 2c in the background (TUNE_PID), its
# journal under $T/statePART, its result in $T/sPART.json, its stderr in $T/sPART.err.
session_bg() {
    export TUNEDECK_STATE_DIR="$T/state$1"
    "$bin" tune --cluster "$T/inv.json" --job "$job" --launcher per-host --trial-cmd "$(trial_cmd)" \
        --budget 3 --optimizer uniform-devices --seed 3 --no-prune --json > "$T/s$1.json" 2> "$T/s$1.err" &
    TUNE_PID=$! TUNE_STATE="$T/state$1"
}
# stopped_before_3 PART RC TEXT: the session stopped before trial 3, trial 2's leftover on h2
# the reason (TEXT in it), trial 1 ok and the best, exit 1 though a trial succeeded.
stopped_before_3() {
    python3 - "$T/s$1.json" "$T/s$1.err" "$2" "$3" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["trials"]
assert int(sys.argv[3]) == 1, sys.argv[3]
assert [x["status"] for x in t][0::2] == ["ok", "cancelled"], [(x["status"], x.get("reason")) for x in t]
assert r["best_time_s"] == t[0]["time_s"]
assert "trial 2's leftover process group" in r["stopped_early"] and sys.argv[4] in r["stopped_early"], r["stopped_early"]
assert "the session stopped early: trial 2's leftover" in open(sys.argv[2]).read()
EOF
}
# trial_log_tails DIR...: the end of each trial log (ID.log beside the journal) under the state
# folders DIR: what the failed trials printed, their reason being only the last words.
trial_log_tails() {
    for d in "$@"; do
        for f in "$d"/sessions/*.log; do
            [ -s "$f" ] && { echo "--- $f"; tail -n 40 "$f" | tail -c 4000; }
        done
    done
}
# The process groups the journal recorded for a trial: "machine pgid" lines.
groups_of() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "remote_process" and e.get("trial") == int(sys.argv[2]):
        print(e["machine"], e["pgid"])
EOF
}
# Asked on the hosts over SSH, a host that did not answer (a loaded machine can take longer
# than the inventory's connect timeout) is asked again, up to 5 times, and then counts as
# "?", never as "nothing there"; what each such try printed goes to $T/noanswer.err.
# alive_in FILE [PATTERN]: how many of FILE's "machine pgid" groups still have a process (a
# zombie waiting for a late init to reap it is none, as for the stop: remote/launch/orphans.c);
# with PATTERN, a process whose command line holds it. A trial's guard (groupstop.h) is of its
# group and outlives the trial by up to a second: "the trial still runs there" is asked with
# the marker (its wrapper script and helper), "nothing is left" without.
alive_in() {
    n=0
    while read -r m g; do
        try=0 said=""
        while [ -z "$said" ] && [ "$try" -lt 5 ]; do
            "$rexec" --cluster "$T/inv.json" --only "$m" -- pgrep -r R,S,D,T,t,W,I -g "$g" \
                ${2:+-f "$2"} > "$T/alive" 2>&1 </dev/null
            if grep -q "^$m out: [0-9]" "$T/alive"; then said=yes
            elif grep -q "^$m exit 1\$" "$T/alive"; then said=no
            else cat "$T/alive" >> "$T/noanswer.err"; fi
            try=$((try + 1))
        done
        case $said in yes) n=$((n + 1)) ;; no) ;; *) echo "?"; return ;; esac
    done < "$1"
    echo "$n"
}
# marker_left: the marker's processes on the 3 hosts (the pattern does not match itself).
# One look: a trial's guard (groupstop.h), which outlives its command by up to a second, is
# a shell of its own whose command line holds nothing of the trial's, so it is not counted.
marker_left() {
    pat="$(echo "$MARK" | sed 's/^\(.\)/[\1]/')"
    for try in 1 2 3 4 5; do
        "$rexec" --cluster "$T/inv.json" -- pgrep -f "$pat" > "$T/marked" 2>&1 </dev/null
        if [ "$(grep -c '^h[123] exit [01]$' "$T/marked")" -eq 3 ]; then
            grep -c ' out: [0-9]' "$T/marked"
            return
        fi
        cat "$T/marked" >> "$T/noanswer.err"
    done
    echo "?"
}

if [ "${1:-}" = --netns-part ]; then
    # Part 3, in a private network namespace: its own loopback, so shaping it touches no
    # other process on this machine. netem where the kernel has it; otherwise an htb rate
    # limit (packets wait in its queue: delay) over a small byte fifo (bursts overflow it:
    # drops). Every host's traffic goes through it (one loopback), not only one host's.
    ip link set lo up || exit 3
    if tc qdisc add dev lo root netem delay 20ms 5ms loss 2% 2>/dev/null; then
        how="netem: 20 ms +- 5 ms delay, 2% loss"
    elif tc qdisc add dev lo root handle 1: htb default 1 2>/dev/null &&
        tc class add dev lo parent 1: classid 1:1 htb rate 300mbit ceil 300mbit 2>/dev/null &&
        tc qdisc add dev lo parent 1:1 handle 10: bfifo limit 300000 2>/dev/null; then
        how="no netem in this kernel: htb 300 Mbit/s over a 300 kB fifo"
    else
        echo "  skipped: packet delay and loss: neither netem nor htb can be set up here"
        exit 0
    fi
    harness_init "$T/h"
    for i in 1 2 3; do harness_start "$i"; done
    HARNESS_TIMEOUT_S=5 harness_inventory "$T/inv.json" 1 2 3
    PORT_BASE=$((H_PORT + 1))
    setup_trial
    export TUNEDECK_STATE_DIR="$T/state3"
    # The same schedule twice through a lossy link: the second may well run 2x slower, which
    # pruning would stop; this checks that trials finish, so every trial runs to its end.
    "$bin" tune --cluster "$T/inv.json" --job "$root/examples/tiny-job.json" --launcher per-host \
        --trial-cmd "$(trial_cmd)" --budget 2 --optimizer uniform-devices --seed 3 --no-prune --json \
        > "$T/n1.json" 2> "$T/n1.err"
    "$rexec" --cluster "$T/inv.json" -- python3 -c \
        'import sys; sys.stdout.write("{\"pad\": \"" + "a" * (1 << 20) + "\"}\nnext\n")' > "$T/n2" 2>&1
    dropped=$(tc -s qdisc show dev lo | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | sort -n | tail -n 1)
    echo "  ($how; $dropped packets dropped)"
    check "trials on 3 hosts finish ok through delayed and dropped packets" python3 - "$T/n1.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert len(t) == 2 and all(x["status"] == "ok" and x["time_s"] > 0 for x in t), t
EOF
    check "a 1 MiB line arrives whole from every host" \
        sh -c "[ \$(grep -c 'out: \[1048587 bytes\] {\"pad\": \"aaaa' '$T/n2') -eq 3 ] && [ \$(grep -c 'out: next' '$T/n2') -eq 3 ]"
    check "packets were dropped on the way ($dropped)" [ "${dropped:-0}" -gt 0 ]
    if [ "$fails" -ne 0 ]; then
        for f in "$T"/n1.err "$T"/n2; do echo "--- $f"; tail -c 1500 "$f"; done
        trial_log_tails "$T/state3"
    fi
    exit "$fails"
fi

harness_init "$T/h"
for i in 1 2 3; do harness_start "$i"; done
# A 10 s connect timeout: a stop before a trial waits for a host that was away for its
# connect timeout + 4 s, and the stop of 2b's group that outlives SIGKILL runs all its polls
# on the host (~3 s idle, more under load): with 2 s a loaded machine's stop came back
# unanswered, the group was kept for later and the session went on (exit 0). The hosts
# here are never unreachable by a hanging connect, so the timeout costs nothing.
HARNESS_TIMEOUT_S=10 harness_inventory "$T/inv.json" 1 2 3
PORT_BASE=$((H_PORT + 1))
setup_trial
job="$root/examples/tiny-job.json"
# Parts 1, 2 and 4 expect their later trials "ok": --no-prune, as a loaded machine makes one
# trial slower than twice the best and pruning would rightly stop it (parts 2 and 4 also
# need the same journal header: part 4's size limit is measured on part 2's journal).

echo "1. SIGKILL of tune --launcher per-host mid-trial, then --resume"
export TUNEDECK_STATE_DIR="$T/state1"
touch "$T/slow-2"
"$bin" tune --cluster "$T/inv.json" --job "$job" --launcher per-host --trial-cmd "$(trial_cmd)" \
    --budget 4 --optimizer uniform-devices --seed 3 --no-prune --json > "$T/k1.json" 2> "$T/k1.err" &
TUNE_PID=$! TUNE_STATE="$T/state1"
wait_for "$T/state1/sessions/*.jsonl" '"event":"remote_process","trial":2' 3 20
check "trial 2 started its helper on 3 hosts" helpers_up 2 3 20
j1="$(journal_of "$T/state1")"
freeze_sessions
tune_kill KILL; wait "$TUNE_PID" 2>/dev/null; TUNE_PID=""
rm -f "$T/slow-2"
cp "$j1" "$T/before.jsonl"
groups_of "$T/before.jsonl" 2 > "$T/groups2"
check "trial 2 was running on 3 hosts when tune was killed" \
    sh -c "[ \$(wc -l < '$T/groups2') -eq 3 ] && ! grep -q '\"finished\",\"trial\":2' '$T/before.jsonl'"
sleep 0.3
before_alive=$(alive_in "$T/groups2" "$MARK")
check "the killed trial left processes behind (the trial runs in $before_alive of 3 groups)" [ "$before_alive" = 3 ]
id="$(basename "$j1" .jsonl)"
"$bin" tune --resume "$id" --json > "$T/r1.json" 2> "$T/r1.err"
thaw_sessions
check "tune --resume after SIGKILL keeps every finished trial and interrupts the running one" \
    python3 - "$T/before.jsonl" "$T/r1.json" "$j1" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
done = {e["trial"]: e for e in ev if e["event"] == "finished"}
assert 1 in done and done[1]["status"] == "ok", done
r = {t["trial"]: t for t in json.load(open(sys.argv[2]))["trials"]}
for n, e in done.items():  # nothing finished is lost, nothing changed
    assert r[n]["status"] == e["status"] and r[n]["time_s"] == e["time_s"], (n, r[n], e)
assert r[2]["status"] == "interrupted" and "interrupted" in r[2]["reason"], r[2]
assert len(r) == 4 and all(r[n]["status"] == "ok" for n in (3, 4)), r
after = [json.loads(l) for l in open(sys.argv[3])]
fin = {e["trial"]: e for e in after if e["event"] == "finished"}
assert all(fin[n] == e for n, e in done.items())  # the journal's lines too
assert fin[2]["status"] == "interrupted", fin[2]
EOF
check "resume stopped the interrupted trial's process groups and journaled it" \
    sh -c "[ \$(grep -c 'interrupted trial 2: process group [0-9]* on h[123]: stopped' '$T/r1.err') -eq 3 ] &&
           grep -q '\"event\":\"remote_process_stop\",\"trial\":2' '$j1'"
left=$(alive_in "$T/groups2")
marker=$(marker_left)
check "no process of the killed trial is left on any host ($left groups, $marker marked)" \
    [ "$left $marker" = "0 0" ]

echo "1b. a resume across a damaged line, SIGKILLed mid-trial, then --resume again"
# Trial 1's suggested line damaged: the file's trials 2, 3, 4 are the tuner's 1, 2, 3, and the
# next is the file's trial 5 (the tuner's 4). Its processes must carry TUNEDECK_TRIAL=5, the
# number its groups are journaled by, or the next resume finds them "gone" and leaves them.
line="$(grep -n '"event":"suggested","trial":1,' "$j1" | cut -d: -f1)"
sed -i "${line}s/.*/{\"event\":\"suggested\",\"trial\":1,garbage/" "$j1"
touch "$T/slow-5"
"$bin" tune --resume "$id" --budget 5 --json > "$T/k1b.json" 2> "$T/k1b.err" &
TUNE_PID=$! TUNE_STATE="$T/state1"
wait_for "$j1" '"event":"remote_process","trial":5,' 3 20
up=0; helpers_up 5 3 20 || up=1
freeze_sessions
tune_kill KILL; wait "$TUNE_PID" 2>/dev/null; TUNE_PID=""
check "after the gap the file's trial 5 ran with TUNEDECK_TRIAL=5 (its helper up on 3 hosts)" \
    sh -c "[ $up = 0 ] && ! grep -q '\"event\":\"started\",\"trial\":6,' '$j1'"
rm -f "$T/slow-5"
groups_of "$j1" 5 > "$T/groups5"
sleep 0.3
before_alive=$(alive_in "$T/groups5" "$MARK")
check "the killed trial 5 left processes behind (the trial runs in $before_alive of 3 groups)" [ "$before_alive" = 3 ]
"$bin" tune --resume "$id" --budget 5 --json > "$T/r1b.json" 2> "$T/r1b.err"
frozen_after=$(frozen_states)
thaw_sessions
said5=$(grep -c 'interrupted trial 5: process group [0-9]* on h[123]: stopped' "$T/r1b.err")
journaled5=$(grep -c '"event":"remote_process_stop","trial":5,.*"result":"stopped"' "$j1")
check "the second resume stopped trial 5's groups by the file's number and journaled it (said $said5, journaled $journaled5 of 3)" \
    [ "$said5 $journaled5" = "3 3" ]
# When it is not that (CI saw it once, under load: h1's group "gone", though counted alive
# before by a look that also counted the guard): what the resume said of them, how each
# host's worker ended if it ended before the stop (its status: 143 a TERM, 137 a KILL that
# reached it alone), and whether each host's sshd session process was frozen and still was
# then (one that died, or was gone before the freeze, lets its commands' guards stop their
# groups before the resume looks).
if [ "$before_alive $said5 $journaled5" != "3 3 3" ]; then
    grep -e 'trial 5' -e 'h[123]' "$T/r1b.err" | head -20
    for h in h1 h2 h3; do
        echo "    trial 5's worker on $h: $(cat "$T/ended-5-$h" 2>/dev/null || echo 'no end of its own: it ran until its group was signalled')"
    done
    echo "$frozen_after" | sed 's/^/    sshd session processes frozen on /'
fi
left=$(alive_in "$T/groups5")
marker=$(marker_left)
check "no process of trial 5 is left on any host ($left groups, $marker marked)" \
    [ "$left $marker" = "0 0" ]

echo "1c. a resume stops its own trial's group, never another session's trial of the same number"
# Two groups on h1 carry TUNEDECK_TRIAL=6: this session's (mark A) and another session's (mark
# B) whose group id the journal also names, as when a group id is reused. The stop matches the
# launch's mark, not the number: the other session's group runs on. (It stopped both before.)
mark_a=0123456789abcdef0123456789abcdef mark_b=fedcba9876543210fedcba9876543210
for who in a b; do
    eval "m=\$mark_$who"
    "$rexec" --cluster "$T/inv.json" --only h1 -- sh -c \
        "TUNEDECK_TRIAL=6 TUNEDECK_RUN_MARK=$m setsid sh -c 'echo \$\$ > $T/pg-$who; sleep 300; : $MARK' </dev/null >/dev/null 2>&1 &" \
        > "$T/start-$who" 2>&1 </dev/null
done
n=0; while [ ! -s "$T/pg-a" ] || [ ! -s "$T/pg-b" ]; do
    n=$((n + 1)); [ "$n" -gt 200 ] && break; sleep 0.05
done
pg_a="$(cat "$T/pg-a" 2>/dev/null)" pg_b="$(cat "$T/pg-b" 2>/dev/null)"
printf '{"event":"remote_process","trial":6,"machine":"h1","pgid":%s,"mark":"%s"}\n' \
    "$pg_a" "$mark_a" "$pg_b" "$mark_a" >> "$j1"
printf 'h1 %s\n' "$pg_a" > "$T/group-a"; printf 'h1 %s\n' "$pg_b" > "$T/group-b"
alive_a=$(alive_in "$T/group-a") alive_b=$(alive_in "$T/group-b")
check "two groups with TUNEDECK_TRIAL=6 run on h1 ($alive_a and $alive_b alive)" [ "$alive_a $alive_b" = "1 1" ]
"$bin" tune --resume "$id" --budget 5 --json > "$T/r1c.json" 2> "$T/r1c.err"
check "the resume stopped this session's group of trial 6 and journaled it" \
    sh -c "grep -q 'interrupted trial 6: process group $pg_a on h1: stopped' '$T/r1c.err' &&
           grep -q '\"event\":\"remote_process_stop\",\"trial\":6,\"machine\":\"h1\",\"pgid\":$pg_a,\"mark\":\"$mark_a\",\"result\":\"stopped\"' '$j1'"
alive_a=$(alive_in "$T/group-a") alive_b=$(alive_in "$T/group-b")
check "the other session's group with the same trial number runs on, said gone ($alive_b alive)" \
    sh -c "[ '$alive_b' = 1 ] && grep -q 'interrupted trial 6: process group $pg_b on h1: gone' '$T/r1c.err'"
check "and this session's group is stopped ($alive_a alive)" [ "$alive_a" = 0 ]
"$rexec" --cluster "$T/inv.json" --only h1 -- kill -KILL -- "-$pg_b" > /dev/null 2>&1 </dev/null

echo "2. one host's connection dies mid-trial"
touch "$T/slow-1"
session_bg 2
wait_for "$T/state2/sessions/*.jsonl" '"event":"remote_process","trial":1' 3 20
check "trial 1 started its helper on 3 hosts" helpers_up 1 3 20
j2="$(journal_of "$T/state2")"
# h2's connection dies with the trial's shell (harness_drop: its sshd keeps listening):
# trial 2 finds h2 at once, and trial 1's leftover there
harness_drop 2
wait_for "$j2" '"event":"finished","trial":1' 1 15
rm -f "$T/slow-1"
wait "$TUNE_PID"; rc=$?; TUNE_PID=""

check "the trial fails with a reason naming the host whose sshd died" python3 - "$T/s2.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert t[0]["status"] in ("unreachable", "failed") and "h2" in t[0]["reason"], t[0]
EOF
check "the session goes on with its next trials on 3 hosts, and ends (exit $rc)" \
    python3 - "$T/s2.json" "$j2" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert len(t) == 3, t
for x in t[1:]:  # none beside trial 1's leftover (its GPU lock would fail it)
    assert x["status"] == "ok", x
assert any(json.loads(l)["event"] == "ended" for l in open(sys.argv[2]))
EOF
check "trial 1's leftover on h2 is stopped and journaled before trial 2 starts there, said once" \
    python3 - "$j2" "$T/s2.err" <<'EOF'
import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
stops = [i for i, e in enumerate(ev) if e["event"] == "remote_process_stop" and e["trial"] == 1]
# The drop is journaled at once, before trial 1's outcome (a resume after a kill stops it);
# the stop before trial 2 then has the last word.
fin1 = [i for i, e in enumerate(ev) if e["event"] == "finished" and e["trial"] == 1]
dropped = [i for i in stops if ev[i]["result"].startswith("not stopped: its end was not seen")]
assert fin1 and "h2" in [ev[i]["machine"] for i in dropped if i < fin1[0]], ev
# with its cause: the connection dropped (not a failed command, nor an unanswered stop)
assert [ev[i]["result"] for i in dropped if ev[i]["machine"] == "h2"][0] == \
    "not stopped: its end was not seen (its connection dropped, which stops nothing there)", ev
stops = [i for i in stops if i not in dropped]
proc2 = [i for i, e in enumerate(ev) if e["event"] == "remote_process" and e["trial"] == 2]
assert stops and proc2 and stops[0] < proc2[0], (stops, proc2)
assert ev[stops[0]]["machine"] == "h2" and ev[stops[0]]["result"] == "stopped", ev[stops[0]]
said = [l for l in open(sys.argv[2])
        if re.search(r"stopped trial 1's leftover process group [0-9]+ on h2 before trial 2$", l)]
assert len(said) == 1, open(sys.argv[2]).read()
EOF
marker=$(marker_left)
check "no trial process is left on any host ($marker)" [ "$marker" = 0 ]

echo "2b. a leftover group that outlives SIGKILL stops the session: exit 1, the table kept"
# As in part 2, but trial 1 runs whole and trial 2 is the one whose connection to h2 drops,
# leaving on h2 a group that SIGKILL cannot empty: before trial 3 the session stops.
rm -f "$T"/helper-up-2-*
touch "$T/slow-2" "$T/stuck-2-h2"
session_bg 2b
wait_for "$T/state2b/sessions/*.jsonl" '"event":"remote_process","trial":2' 3 60
helpers_up 2 3 20
j2b="$(journal_of "$T/state2b")"
harness_drop 2
wait_for "$j2b" '"event":"finished","trial":2' 1 15
rm -f "$T/slow-2" "$T/stuck-2-h2"
wait "$TUNE_PID"; rc=$?; TUNE_PID=""
check "the session stops early before trial 3, says why, exits 1 though trial 1 succeeded (exit $rc)" \
    stopped_before_3 2b "$rc" "on h2 still runs"
# The parent may put a new child in between the listing and its own kill: list again.
for try in 1 2 3 4 5; do
    stuck=$(pgrep -f "stuck-$MARK" 2>/dev/null) || break
    for p in $stuck; do pid_kill_named KILL "$p" "stuck-$MARK"; done
    sleep 0.2
done
marker=$(marker_left)
check "no trial process is left on any host ($marker)" [ "$marker" = 0 ]

echo "2c. a leftover group of another user's process, which the login may not kill: exit 1"
# As in part 2b, but what trial 2's dropped connection leaves on h2 is a helper running as
# nobody, and h2's logins may not signal another user's process: its sshd runs every command
# without CAP_KILL, the kill rights of a login that is not root (the harness logs in as root,
# the only user it can count on). The stop's kill is refused by the kernel (EPERM): "kill not
# permitted", and the session stops before trial 3. While h2's sshd is away, tune is held
# (SIGSTOP), so that the stop meets the group as the dropped connection leaves it: only the
# helper (a root process of the trial still there would take the signal, and the group would
# read as alive after SIGKILL instead).
if ! command -v setpriv > /dev/null 2>&1 || ! id nobody > /dev/null 2>&1 ||
    ! command -v bash > /dev/null 2>&1; then
    skip "a leftover the login may not kill: needs setpriv, bash and a nobody user"
else
    nokill='ForceCommand exec setpriv --bounding-set=-kill --inh-caps=-kill "$SHELL" -c "$SSH_ORIGINAL_COMMAND"'
    harness_stop 2
    harness_start 2 "$nokill"
    rm -f "$T"/helper-up-2-*
    touch "$T/slow-2" "$T/other-user-2-h2"
    session_bg 2c
    wait_for "$T/state2c/sessions/*.jsonl" '"event":"remote_process","trial":2' 3 60
    helpers_up 2 3 20
    j2c="$(journal_of "$T/state2c")"
    pg=$(groups_of "$j2c" 2 | sed -n 's/^h2 //p')
    tune_kill STOP
    harness_stop 2
    n=0
    while [ -n "$pg" ] && [ "$n" -lt 200 ] && pgrep -u 0 -g "$pg" > /dev/null; do
        sleep 0.1; n=$((n + 1))
    done
    check "the dropped connection left only nobody's helper in trial 2's group on h2 (${pg:-none})" \
        sh -c "[ -n '$pg' ] && ! pgrep -u 0 -g '$pg' > /dev/null && pgrep -u nobody -g '$pg' > /dev/null"
    harness_start 2 "$nokill"
    tune_kill CONT
    wait_for "$j2c" '"event":"finished","trial":2' 1 15
    rm -f "$T/slow-2" "$T/other-user-2-h2"
    wait "$TUNE_PID"; rc=$?; TUNE_PID=""
    check "the kill is refused: the session stops before trial 3 saying so, exit 1 (exit $rc)" \
        stopped_before_3 2c "$rc" "on h2 still runs (kill not permitted)"
    check "the journal has the refusal: not stopped: kill not permitted" python3 - "$j2c" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
stops = [e for e in ev if e["event"] == "remote_process_stop" and e["trial"] == 2 and e["machine"] == "h2"]
# the drop's own line first (journaled at once), then the stop's
assert stops and stops[0]["result"].startswith("not stopped: its end was not seen"), stops
stops = stops[1:]
assert stops and all(e["result"] == "not stopped: kill not permitted" for e in stops), stops
EOF
    # Not h2's logins' to stop; this script may.
    [ -n "$pg" ] && pkill -KILL -u nobody -g "$pg" 2> /dev/null
    harness_stop 2
    harness_start 2
    marker=$(marker_left)
    check "no trial process is left on any host ($marker)" [ "$marker" = 0 ]
fi

echo "3. packets delayed and dropped"
mkdir -p "$T/netns"
if unshare -n true 2>/dev/null; then
    unshare -n sh "$0" --netns-part "$T/netns"
    rc=$?
else
    rc=3
fi
case $rc in
0) ;;
3) skip "packet delay and loss: cannot bring up a private network namespace (unshare -n)" ;;
*) fails=$((fails + rc)) ;;
esac

echo "4. the journal's disk fills up during a per-host session"
# journal.sh fills it under simulated trials (tmpfs, RLIMIT_FSIZE); here the write that fails
# is a remote one: the first process group of trial 1, journaled while the trial runs on
# the hosts. The limit is where part 2's journal (same inventory, job and schedule) had
# trial 1's "started" line end, plus 30 bytes: inside the next line.
limit=$(python3 - "$j2" <<'EOF'
import sys
off = 0
for line in open(sys.argv[1], "rb"):
    off += len(line)
    if line.startswith(b'{"event":"started","trial":1,'):
        print(off + 30); break
EOF
)
export TUNEDECK_STATE_DIR="$T/state4"
python3 -c 'import os, resource, sys; n = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])' \
    "$limit" "$bin" tune --cluster "$T/inv.json" --job "$job" --launcher per-host \
    --trial-cmd "$(trial_cmd)" --budget 3 --optimizer uniform-devices --seed 3 --no-prune --json \
    > "$T/f4.json" 2> "$T/f4.err"
rc=$?
j4="$(journal_of "$T/state4")"
check "the failed write is reported, launching stops, tune exits 1 (exit $rc)" \
    sh -c "[ $rc -eq 1 ] && grep -q 'write failed' '$T/f4.err' && grep -q 'no more trials are launched' '$T/f4.err'"
check "the journal holds whole lines only, up to the write that failed" python3 - "$j4" "$limit" "$T/f4.json" <<'EOF'
import json, os, sys
data = open(sys.argv[1]).read()
assert data.endswith("\n") and len(data) <= int(sys.argv[2]), len(data)
ev = [json.loads(l)["event"] for l in data.splitlines()]
assert ev[-1] == "started" and "remote_process" not in ev, ev
t = json.load(open(sys.argv[3]))["trials"]
assert all(x["status"] != "ok" or x["trial"] == 1 for x in t), t  # nothing launched after
print("    (trials: %s)" % ", ".join("%d %s" % (x["trial"], x["status"]) for x in t))
EOF
marker=$(marker_left)
check "no trial process is left on any host ($marker)" [ "$marker" = 0 ]
"$bin" tune --resume "$(basename "$j4" .jsonl)" --json > "$T/f4r.json" 2> "$T/f4r.err"
check "once there is room the session resumes: trial 1 interrupted, the rest run" \
    python3 - "$T/f4r.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert [x["status"] for x in t] == ["interrupted", "ok", "ok"], [(x["status"], x.get("reason")) for x in t]
EOF

echo "5. SIGKILL of the console (--launcher per-host) mid-trial, then tunedeck --resume"
# console ARGS...: the console in a detached tmux session c5 (exec: the pane's pid is its pid).
console() {
    tmx new-session -d -s c5 -x 160 -y 45 "exec env TERM=xterm-256color LANG=C.UTF-8 \
LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$T/xdg5 TUNEDECK_STATE_DIR=$T/state5 $*"
}
# pane_wait PATTERN SECONDS: until the console's screen shows the extended regex.
pane_wait() {
    tmux_wait c5 "$1" "$2" && return 0
    cp "$T/c5.screen" "$T/c5-screen.err" 2>/dev/null
    return 1
}
if ! command -v tmux >/dev/null 2>&1; then
    skip "the console's resume: no tmux"
else
    touch "$T/slow-2"
    console "$bin" --cluster "$T/inv.json" --job "$job" --launcher per-host \
        --trial-cmd "\"$(trial_cmd)\"" --budget 3 --optimizer uniform-devices --seed 3
    TUNE_PID="$(tmux_pane_pid c5)" TUNE_STATE="$T/state5"
    wait_for "$T/state5/sessions/*.jsonl" '"event":"remote_process","trial":2' 3 20
    check "the console's trial 2 started its helper on 3 hosts" helpers_up 2 3 20
    j5="$(journal_of "$T/state5")"
    freeze_sessions
    tune_kill KILL; TUNE_PID=""
    tmux_stop
    rm -f "$T/slow-2"
    cp "$j5" "$T/before5.jsonl"
    groups_of "$T/before5.jsonl" 2 > "$T/groups5"
    check "the console journaled trial 2's process groups on 3 hosts before it was killed" \
        sh -c "[ \$(wc -l < '$T/groups5') -eq 3 ] && ! grep -q '\"finished\",\"trial\":2' '$T/before5.jsonl'"
    sleep 0.3
    alive=$(alive_in "$T/groups5")
    check "the killed console left trial 2's processes behind ($alive of 3 groups alive)" [ "$alive" = 3 ]
    console "$bin" --resume "$(basename "$j5" .jsonl)"
    pane_wait 'interrupted trial 2: process group [0-9]+ on h[123]: stopped' 20
    check "the resumed console says in its log that it stopped trial 2's process groups" [ $? -eq 0 ]
    wait_for "$j5" '"event":"finished","trial":3' 1 20
    thaw_sessions
    check "the orphans are stopped and journaled before the resumed console launches trial 3" \
        python3 - "$j5" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
stops = [i for i, e in enumerate(ev) if e["event"] == "remote_process_stop" and e["trial"] == 2]
start3 = [i for i, e in enumerate(ev) if e["event"] == "started" and e["trial"] == 3]
fin = {e["trial"]: e for e in ev if e["event"] == "finished"}
assert len(stops) == 3 and start3 and max(stops) < start3[0], (stops, start3)
assert all(ev[i]["result"] == "stopped" for i in stops), [ev[i] for i in stops]
assert fin[1]["status"] == "ok" and fin[2]["status"] == "interrupted", fin
assert any(e["event"] == "remote_process" and e["trial"] == 3 for e in ev)  # recorded again
EOF
    tmx send-keys -t c5 q y
    n=0
    while ! tmux_gone c5 && [ "$n" -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
    check "the resumed console quits on q y" tmux_gone c5
    left=$(alive_in "$T/groups5")
    marker=$(marker_left)
    check "no process of the console's trials is left on any host ($left groups, $marker marked)" \
        [ "$left $marker" = "0 0" ]
fi

if [ "$fails" -ne 0 ]; then
    echo "faults: $fails failed"
    for f in "$T"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -c 2000 "$f"; }; done
    trial_log_tails "$T"/state*
    exit 1
fi
echo "faults: all passed"
