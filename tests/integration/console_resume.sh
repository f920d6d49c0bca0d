#!/bin/sh
# `tunedeck --resume ID`: the console reopens a session from its journal. A 3-trial headless
# session reopened in a real tmux and run on to 6 shows trials 1-3 from the journal and 4-6
# new, and the whole equals an uninterrupted 6-trial run, trial by trial; a :budget typed in
# the console is the one a resume goes on to. A full disk under
# the console's journal shows the session stopped, without writing over the screen.
set -eu
suite=console_resume scratch=console-resume suite_tmux=1
. "$(dirname "$0")/lib/suite.sh"
tmp="$T"
tmux_screen="$tmp/screen.txt"
fail() { tmux_fail_exit "console_resume: FAIL: $*"; }
command -v tmux >/dev/null 2>&1 || { echo "console_resume: skipped: no tmux"; exit 0; }

# wait_for SESSION TEXT: polls the screen (at most 30 s); TEXT is a basic regex ("| stopped"
# is the status bar's bar, not an alternation).
wait_for() { tmux_wait "$1" "$2" 30 G || fail "'$2' never appeared on $1"; }
quit() {
    tmx send-keys -t "$1" q
    sleep 0.3
    tmx send-keys -t "$1" y
    wait_for "$1" "EXITED"
}

"$bin" tune --sim A:googlenet --optimizer random --budget 3 --json >"$tmp/three.json" 2>/dev/null
id="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$tmp/three.json")"
tmux_start r 120 35 "env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$TUNEDECK_STATE_DIR $bin --resume $id --budget 6 --pace-ms 20 --no-sched 2>$tmp/err"
wait_for r "6/6 .*done"
# trial 1 is the design probe (stopped after 5 iterations, shown as pruned). Each row is
# waited for: the capture that showed "6/6 done" in the top bar may hold the frame only in
# part (the console writes it in many writes, top to bottom), trial 6's row not yet.
for n in 1 2 3 4 5 6; do
    tmux_wait r "^│ +$n +(ok|pruned) " 10 || fail "trial $n is not on the screen"
done
quit r
grep -q "EXITED rc=0" "$tmp/screen.txt" || fail "the console did not exit cleanly"
"$bin" tune --sim A:googlenet --optimizer random --budget 6 --json --no-journal >"$tmp/six.json" 2>/dev/null
"$bin" tune --resume "$id" --json >"$tmp/after.json" 2>/dev/null
python3 - "$tmp/six.json" "$tmp/after.json" <<'PY' || fail "the console's resumed session differs from an uninterrupted one"
import json, sys
a = json.load(open(sys.argv[1]))["trials"]; b = json.load(open(sys.argv[2]))["trials"]
assert len(a) == len(b) == 6, (len(a), len(b))
for x, y in zip(a, b):
    assert x["schedule"] == y["schedule"] and x["time_s"] == y["time_s"], x["trial"]
PY
"$bin" --resume "$id" --sim B:googlenet 2>"$tmp/err" && fail "--resume with --sim accepted"
grep -q "from .*journal" "$tmp/err" || fail "unclear --resume error: $(cat "$tmp/err")"

# The console's :budget is the session's budget from then on: a resume goes on to it and
# `sessions` counts against it (it was lost on quitting: 2/60, and a resume ran to 60). An hour
# between trials: trial 2 starts only when :budget 2 makes it the last one (next_trial_ms).
tmux_start b 120 35 "env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$tmp/b $bin --sim A:googlenet --optimizer random --pace-ms 3600000 --no-sched 2>$tmp/berr"
wait_for b "1/60 "
tmx send-keys -t b ":budget 2" Enter
wait_for b "2/2 .*done"
quit b
TUNEDECK_STATE_DIR="$tmp/b" "$bin" sessions >"$tmp/blist"
grep -q ' 2/2 ' "$tmp/blist" || fail "sessions after :budget 2: $(cat "$tmp/blist")"
bid="$(sed -n '2s/ .*//p' "$tmp/blist")"
TUNEDECK_STATE_DIR="$tmp/b" "$bin" tune --resume "$bid" --json >"$tmp/bafter.json" 2>/dev/null
python3 - "$tmp/bafter.json" <<'PY' || fail "a resume without --budget did not stop at the console's :budget 2"
import json, sys
assert len(json.load(open(sys.argv[1]))["trials"]) == 2
PY

# Overrides queued and not yet run when the console quits come back on --resume, queued in
# their order, and run as the next trials; none of them runs twice. An hour between trials:
# trial 2 waits while two overrides are queued (paused) and the console quits.
tmux_start o 120 35 "env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$tmp/o $bin --sim A:googlenet --optimizer random --pace-ms 3600000 --no-sched 2>$tmp/oerr"
wait_for o "1/60 "
tmx send-keys -t o Space
wait_for o "| paused"
for n in 1 2; do
    tmx send-keys -t o e
    wait_for o "valid: Enter launches"
    tmx send-keys -t o Enter
    wait_for o "| $n queued | paused"
done
tmx send-keys -t o q
wait_for o "EXITED rc=0"
TUNEDECK_STATE_DIR="$tmp/o" "$bin" sessions >"$tmp/olist"
oid="$(sed -n '2s/ .*//p' "$tmp/olist")"
ojournal="$(find "$tmp/o" -name '*.jsonl' | head -1)"
[ "$(grep -c '"event":"override_queued"' "$ojournal")" -eq 2 ] ||
    fail "the journal does not hold both queued overrides"
cp -R "$tmp/o" "$tmp/w" # for the budget that leaves one waiting, below
tmux_start o2 120 35 "env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$tmp/o $bin --resume $oid --budget 3 --pace-ms 20 --no-sched 2>$tmp/o2err"
wait_for o2 "3/3 .*done"
for n in 2 3; do # waited for, as the rows above
    tmux_wait o2 "^│ +$n +(ok|pruned) .*override" 10 || fail "trial $n did not run the override"
done
# the log says so (L shows it whole)
tmx send-keys -t o2 L
wait_for o2 "2 overrides queued before the session ended run first as trials 2-3"
tmx send-keys -t o2 a
quit o2
# A budget that leaves the second override without a trial: the log says, in one line, which
# runs and which waits (it said both run first, then that those past trial 2 wait).
tmux_start w 120 35 "env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$tmp/w $bin --resume $oid --budget 2 --pace-ms 20 --no-sched 2>$tmp/werr"
wait_for w "2/2 .*done"
tmx send-keys -t w L
wait_for w "1 runs first as trial 2 and 1 waits past the budget of 2"
tmx send-keys -t w a
quit w
# The console killed between an override's `suggested` line and its trial's start (a copy of
# the session cut after trial 3's suggested line): the resume marks trial 3 interrupted and
# runs override 2 again, first, as trial 4. Before, the override was lost.
cp -R "$tmp/o" "$tmp/u"
ujournal="$tmp/u/${ojournal#"$tmp/o/"}"
python3 - "$ujournal" <<'PY' || fail "the copy could not be cut"
import json, sys
lines = open(sys.argv[1]).read().splitlines(True)
cut = next(i for i, l in enumerate(lines)
           if json.loads(l)["event"] == "suggested" and json.loads(l)["trial"] == 3)
open(sys.argv[1], "w").writelines(lines[:cut + 1])
PY
TUNEDECK_STATE_DIR="$tmp/u" "$bin" tune --resume "$oid" --budget 4 --json >"$tmp/uafter.json" 2>"$tmp/uafter.err" ||
    fail "the resume of a session killed before an override's start failed: $(cat "$tmp/uafter.err")"
grep -q "1 override queued before the session ended runs first" "$tmp/uafter.err" ||
    fail "the override whose trial never started was not queued again: $(cat "$tmp/uafter.err")"
python3 - "$ujournal" <<'PY' || fail "the override whose trial never started did not run on --resume"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
sg = [e for e in ev if e["event"] == "suggested"]
assert [e.get("override") for e in sg] == [None, 1, 2, 2], sg
fin = {e["trial"]: e["status"] for e in ev if e["event"] == "finished"}
assert fin[3] == "interrupted" and fin[4] in ("ok", "pruned"), fin
PY
TUNEDECK_STATE_DIR="$tmp/o" "$bin" tune --resume "$oid" --budget 4 --json >"$tmp/oafter.json" 2>"$tmp/oafter.err"
grep -q "override.*queued before" "$tmp/oafter.err" &&
    fail "a second resume queued again an override that ran: $(cat "$tmp/oafter.err")"
python3 - "$tmp/oafter.json" "$ojournal" <<'PY' || fail "the second resume ran an override twice"
import json, sys
assert len(json.load(open(sys.argv[1]))["trials"]) == 4
sg = [e for e in map(json.loads, open(sys.argv[2])) if e["event"] == "suggested"]
assert [e["trial"] for e in sg] == [1, 2, 3, 4], sg
assert [e["overridden"] for e in sg] == [False, True, True, False], sg
assert [e.get("override") for e in sg] == [None, 1, 2, None], sg
PY

# The :budget is journaled when it is typed: a console killed outright (SIGKILL, no `ended`
# line) keeps it (it was written only at the clean end: `sessions` said 2/60).
tmux_start k 120 35 "sh -c 'echo \$\$ > $tmp/k.pid; exec env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$tmp/k $bin --sim A:googlenet --optimizer random --pace-ms 3600000 --no-sched 2>$tmp/kerr'"
wait_for k "1/60 "
tmx send-keys -t k ":budget 3" Enter
wait_for k "2/3 "
# only while it is still that console (its state folder in its environment): one that
# ended may have left its number to another suite's process (pid_kill_env, lib/procs_left.sh)
pid_kill_env KILL "$(cat "$tmp/k.pid")" "TUNEDECK_STATE_DIR=$tmp/k"
wait_for k "EXITED"
TUNEDECK_STATE_DIR="$tmp/k" "$bin" sessions >"$tmp/klist"
grep -q ' 2/3 .*interrupted' "$tmp/klist" || fail "sessions after :budget 3 and SIGKILL: $(cat "$tmp/klist")"

# A full disk (a file size limit) under the console's journal.
tmux_start f 120 35 "sh -c 'ulimit -f 24; env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$tmp/full $bin --sim A:googlenet --optimizer random --pace-ms 20 --no-sched 2>$tmp/ferr'"
wait_for f "| stopped"
# its row is below the top bar, perhaps not yet written when "stopped" showed: waited for
tmux_wait f "cancelled" 10 F || fail "the trial not launched is not shown cancelled"
quit f
[ ! -s "$tmp/ferr" ] || grep -q "could not be written" "$tmp/ferr" || fail "stderr: $(cat "$tmp/ferr")"
grep -q "could not be written" "$tmp/ferr" || fail "no word of the failed journal after the console closed"
grep -q "EXITED rc=1" "$tmp/screen.txt" || fail "a console whose journal failed did not exit 1 (as tune does)"

# A disk that fills while the console runs: what it writes at the quit fails (the running
# trial's held tail and its end in the trial log; the journal's `ended` line too, unless its
# last page has room), and each failure is one line on stderr naming the file, the exit is 1,
# and what was written before stays. Before, the trial log's failure at the quit went to the
# closed screen's log: said nowhere, and exit 0. A tmpfs of 256 KiB, filled once the trial
# has printed; the trial's lines past its first 8 KiB are held for its end (24 KiB of them,
# more than the page a file may still have room in), and the quit drains what it printed.
mnt="$tmp/small"
mkdir -p "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=256k,mode=0700 tmpfs "$mnt" 2>/dev/null; then
    suite_stop() { umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || :; }
    tmux_start q 120 35 "env TERM=xterm-256color LANG=C.UTF-8 TUNEDECK_STATE_DIR=$mnt/state $bin --sim A:googlenet --optimizer random --launcher local --pace-ms 20 --no-sched --trial-cmd 'cat >/dev/null; i=0; while [ \$i -lt 400 ]; do echo \"warming up, line \$i ..........................................................................\" >&2; i=\$((i + 1)); done; touch $tmp/printed; exec sleep 600' 2>$tmp/qerr"
    i=0
    while ! { [ -e "$tmp/printed" ] && grep -qs 'warming up, line 0 ' "$mnt"/state/sessions/*.log; } && [ $i -lt 300 ]; do
        sleep 0.1; i=$((i + 1))
    done
    grep -qs 'warming up, line 0 ' "$mnt"/state/sessions/*.log || fail "the trial's first line never reached the trial log"
    dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null || : # the disk is full now
    quit q
    grep -q "EXITED rc=1" "$tmp/screen.txt" || fail "a console whose trial log failed at the quit did not exit 1: $(cat "$tmp/qerr")"
    log="$(ls "$mnt"/state/sessions/*.log)"
    grep -q "^tunedeck: the trial log could not be written: $log: cannot write: No space left on device; " "$tmp/qerr" ||
        fail "the trial log's failure at the quit was not said: $(cat "$tmp/qerr")"
    if grep -q "journal" "$tmp/qerr" && ! grep -q "^tunedeck: session " "$tmp/qerr"; then
        grep -q "^tunedeck: the journal could not be written: journal .*\.jsonl: write failed: No space left on device" "$tmp/qerr" ||
            fail "the journal's failure at the quit was not said: $(cat "$tmp/qerr")"
    fi
    grep -q 'trial 1 local stderr: warming up, line 0 ' "$log" || fail "the trial log lost what it held: $(cat "$log")"
    rm -f "$mnt/fill"
    TUNEDECK_STATE_DIR="$mnt/state" "$bin" sessions >"$tmp/qlist" 2>&1
    grep -q ' 0/60 .*\(ended\|interrupted (resumable)\)$' "$tmp/qlist" ||
        fail "the journal is not whole: $(cat "$tmp/qlist")"
    suite_stop
else
    echo "  skipped: a full disk at the quit needs root (mount -t tmpfs)"
fi
echo "console_resume: ok"
