#!/bin/sh
# The console ended from outside, mid-tuning, in real tmux: SIGTERM (systemd, kill), SIGHUP,
# its terminal closing (tmux kill-session) and Ctrl-C (SIGINT; in the `:` prompt it only
# cancels the line) each quit as `q` `y` does,
# then end the console by that signal: the shell sees 143, 129, 130; the terminal is given
# back as it was (stty settings, no alternate screen, the cursor shown); stderr names the
# signal and the session; the journal keeps every trial measured and `tune --resume` goes
# on from it, those trials first. Then on loopback sshd hosts (tests/sshd-harness.sh):
# SIGTERM to the live scheduler checkpoints and stops every job first (as console_live.sh's
# q y), and SIGTERM during a leftover process group's stop waits for it (as console_stop.sh's),
# without spinning on its terminal when that closes during the wait.
# No `set -e`: the harness relies on commands that may fail (kill, wait on a killed sshd).
suite=console_signals scratch=csig suite_sshd=1 suite_tmux=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/live-inventory.sh"
tmux_screen="$T/screen.txt"
MARK="csig$$x"  # x: pid 12's mark is not part of pid 123's
suite_reap() { for p in $(pgrep -f "$MARK" 2> /dev/null); do pid_kill_named KILL "$p" "$MARK"; done; }
# A console's pid, read from its file, is signalled only while that process still has this
# suite's state folder in its environment (pid_kill_env, lib/procs_left.sh; the tmux server's
# panes have the suite's TUNEDECK_STATE_DIR): one that ended may have left its number to
# another suite's process.
console_kill() { pid_kill_env "$1" "$2" "TUNEDECK_STATE_DIR=${3:-$T/state}"; }

# wait_for SESSION PATTERN [SECONDS]: polls the pane until the extended regex shows; says so
# with the last screen when it does not.
wait_for() {
    tmux_wait "$1" "$2" "${3:-15}" && return 0
    echo "  '$2' did not appear on $1 within ${3:-15} s:" >&2
    cat "$tmux_screen" >&2
    return 1
}

# start NAME: the console on the simulator in tmux session NAME, tuning (trial 4 or later);
# its pid in T/NAME.pid. The pane's shell, the pane's only process (the session leader:
# a closed terminal's SIGHUP goes to it), keeps the tty settings before and after the
# console, and its exit status.
start() {
    cat > "$T/$1.sh" << EOF
trap 'echo hup >> "$T/$1.wrapper"' HUP
trap 'echo int >> "$T/$1.wrapper"' INT
stty -g > "$T/$1.stty-before"
sh -c 'echo \$\$ > "$T/$1.pid"; exec env TERM=xterm-256color LANG=C.UTF-8 "$bin" --sim A:googlenet --optimizer random --budget 40 --pace-ms 150 --no-sched 2> "$T/$1.err"'
echo \$? > "$T/$1.rc"
stty -g > "$T/$1.stty-after"
echo EXITED
sleep 60
EOF
    rm -f "$T/$1.pid" "$T/$1.rc"
    tmx new-session -d -s "$1" -x 100 -y 30 "sh $T/$1.sh"
    wait_for "$1" '\| ([4-9]|[1-3][0-9])/40 \|'
}

# ended NAME STATUS SIGNAME: the console's end, as seen from its shell and its files (the
# tty settings where the terminal is still there).
ended() {
    i=0
    while [ ! -s "$T/$1.rc" ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    check "$3: the console ends by the signal (status $2)" [ "$(cat "$T/$1.rc" 2> /dev/null)" = "$2" ]
    [ "$1" = closed ] || check "$3: the tty settings are as before" cmp -s "$T/$1.stty-before" "$T/$1.stty-after"
    check "$3: stderr names the signal" grep -q "^tunedeck: $3: the console quit as q does" "$T/$1.err"
    id="$(sed -n 's/^tunedeck: session \([^ ]*\) (journal.*/\1/p' "$T/$1.err")"
    check "$3: stderr names the session" [ -n "$id" ]
    journal="$TUNEDECK_STATE_DIR/sessions/$id.jsonl"
    check "$3: the journal is closed as a quit closes it" sh -c "tail -n 1 '$journal' | grep -q '\"event\":\"ended\"'"
    n="$(grep -c '"event":"finished"' "$journal")"
    check "$3: the journal kept the trials measured ($n)" [ "$n" -ge 3 ]
    budget=$((n + 3))
    "$bin" tune --resume "$id" --budget "$budget" --json > "$T/$1.resumed.json" 2> "$T/$1.resumed.err"
    check "$3: tune --resume goes on from the journal" python3 - "$journal" "$T/$1.resumed.json" "$budget" << 'PY'
import json, sys
journal, resumed, budget = sys.argv[1], sys.argv[2], int(sys.argv[3])
before = [e for e in map(json.loads, open(journal)) if e["event"] == "finished"]
after = json.load(open(resumed))["trials"]
assert len(after) == budget, (len(after), budget)
for b, a in zip(before, after):  # a pruned probe's time is not the result's (None there)
    assert a["trial"] == b["trial"] and a["status"] == b["status"], (a["trial"], b["trial"])
    # the result prints 15 digits, the journal 17
    ok = b["status"] != "ok" or abs(a["time_s"] - b["time_s"]) <= 1e-12 * b["time_s"]
    assert ok, (a["trial"], a["time_s"], b["time_s"])
PY
}

# SIGTERM, as systemd or kill sends it; the pane's screen is the shell's again, cursor shown
start term
console_kill TERM "$(cat "$T/term.pid")"
wait_for term EXITED
ended term 143 SIGTERM
check "SIGTERM: the alternate screen is left" [ "$(tmx display -p -t term '#{alternate_on}')" = 0 ]
check "SIGTERM: the cursor is shown" [ "$(tmx display -p -t term '#{cursor_flag}')" = 1 ]

# SIGHUP, to the console alone
start hup
console_kill HUP "$(cat "$T/hup.pid")"
wait_for hup EXITED
ended hup 129 SIGHUP

# Ctrl-C at the console's terminal (SIGINT to its foreground group; the pane's shell
# catches it and waits). In the `:` prompt it cancels the line as Esc does, the console
# running on; with no prompt open it quits.
start int
tmx send-keys -t int : b u d g e t Space 7 7
wait_for int ':budget 77_'
tmx send-keys -t int C-c
i=0
while tmux_capture int && grep -q ':budget 77_' "$tmux_screen" && [ "$i" -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
check "Ctrl-C in the : prompt: the line is cancelled" sh -c "! grep -q ':budget 77' '$tmux_screen'"
# (a console that took the Ctrl-C as a quit may still be in its quit's wait: look a second
# later, and for the quit's own words)
sleep 1
tmux_capture int
check "Ctrl-C in the : prompt: the console runs on" console_kill 0 "$(cat "$T/int.pid")"
check "Ctrl-C in the : prompt: no quit is said" sh -c "! grep -q 'quitting as q does' '$tmux_screen' '$T/int.err'"
tmx send-keys -t int C-c
wait_for int EXITED
ended int 130 SIGINT

# The terminal closes (tmux kills the session): whether SIGHUP reaches the console or only
# the hang-up of its terminal does (its shell, the session leader, catches SIGHUP here), it
# ends as on SIGHUP, rather than running on with no terminal.
start closed
pid="$(cat "$T/closed.pid")"
tmx kill-session -t closed
i=0
while console_kill 0 "$pid" && [ "$i" -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
check "closed terminal: the console is gone" eval "! console_kill 0 $pid"
ended closed 129 SIGHUP

# The live scheduler: SIGTERM mid-run checkpoints and stops every job (as `q` `y`, shown on
# screen), then the console ends by the signal, no job process left on the hosts.
harness_init "$T/h"
for i in 1 2 3; do harness_start "$i"; done
harness_inventory "$T/inv.json" 1 2 3
live_inventory "$T/inv.json" "$build/tunedeck-worker" "$MARK"
cat > "$T/live.sh" << EOF
sh -c 'echo \$\$ > "$T/live.pid"; exec env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 "$bin" --cluster "$T/inv.json" --workload "$root/tests/fixtures/schedlive-workload.csv" --policy doubling --sched-speed 30 --job-dir "$T/jobs" 2> "$T/live.err"'
echo \$? > "$T/live.rc"
echo EXITED
sleep 60
EOF
tmx new-session -d -s live -x 200 -y 50 "sh $T/live.sh"
tmx send-keys -t live 2
if wait_for live 'j0 +[0-9]+ +running .* run h[1-3]:[0-9]+\+[0-9]+ step [1-9][0-9]*' 20; then
    running=$(pgrep -f "ckpt-$MARK" | wc -l)
    check "live: job processes run on the hosts ($running)" [ "$running" -ge 1 ]
    # j0 may have checkpointed already (a resize): only a checkpoint written after the
    # signal counts
    ckpt_before=$(stat -c %.9Y "$T/jobs/j0/ckpt-$MARK" 2> /dev/null || echo none)
    console_kill TERM "$(cat "$T/live.pid")"
    wait_for live EXITED 40
    check "live SIGTERM: the console ends by the signal (status 143)" [ "$(cat "$T/live.rc")" = 143 ]
    check "live SIGTERM: no job process is left" [ "$(pgrep -f "ckpt-$MARK" | wc -l)" -eq 0 ]
    ckpt_after=$(stat -c %.9Y "$T/jobs/j0/ckpt-$MARK" 2> /dev/null || echo none)
    check "live SIGTERM: j0 checkpointed at the signal ($ckpt_before -> $ckpt_after)" \
        sh -c '[ "$1" != none ] && [ "$1" != "$2" ]' - "$ckpt_after" "$ckpt_before"
    check "live SIGTERM: stderr names the signal" grep -q "^tunedeck: SIGTERM: the console quit as q does" "$T/live.err"
else
    fail "live: no job ran"
fi

# SIGTERM while the console stops a leftover process group (console_stop.sh's case: trial 1's
# connection to h2 dropped, leaving a helper that ignores SIGTERM, so the stop before trial 2
# waits its TERM-to-KILL time): the quit waits for the stop as `q` `y` does, its result reaches
# the journal before `ended`, trial 2 is never launched, nothing is left, and then 143.
tmx kill-session -t live 2> /dev/null
harness_stop 3
HARNESS_TIMEOUT_S=2 harness_inventory "$T/inv2.json" 1 2
ln -sf "$(command -v sleep)" "$T/helper-$MARK"
cat > "$T/trial-$MARK.sh" << EOF
#!/bin/sh
slow=""
if [ -e "$T/slow-\$TUNEDECK_TRIAL" ]; then
    slow="--slowdown 40"
    sh -c 'trap "" TERM; exec "$T/helper-$MARK" 300' < /dev/null > /dev/null 2>&1 &
    : > "$T/helper-up-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE"
fi
"$build/tunedeck-worker" --port-base $((H_PORT + 1)) --connect-timeout 10 \$slow "\$@"
EOF
chmod 755 "$T/trial-$MARK.sh"
touch "$T/slow-1"
cat > "$T/stop.sh" << EOF
trap 'echo hup >> "$T/stop.wrapper"' HUP
sh -c 'echo \$\$ > "$T/stop.pid"; exec env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 TUNEDECK_STATE_DIR="$T/stopstate" "$bin" --cluster "$T/inv2.json" --job "$root/examples/tiny-job.json" --launcher per-host --trial-cmd "sh $T/trial-$MARK.sh" --budget 3 --optimizer uniform-devices --seed 3 2> "$T/stop.err"'
echo \$? > "$T/stop.rc"
echo EXITED
sleep 60
EOF
tmx new-session -d -s stop -x 160 -y 45 "sh $T/stop.sh"
j="$T/stopstate/sessions/*.jsonl"
n=0; while [ ! -e "$T/helper-up-1-h2" ] && [ "$n" -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
check "stop: trial 1 started its TERM-ignoring helper on h2" [ -e "$T/helper-up-1-h2" ]
rm -f "$T/slow-1"
harness_stop 2 # trial 1's helper stays on h2
mkdir -p "$H/host-bin2" # the stop's 0.1 s polls take 0.3 s there: ~6 s from TERM to KILL
printf '#!/bin/sh\n[ "$*" = 0.1 ] && set -- 0.3\nexec /bin/sleep "$@"\n' > "$H/host-bin2/sleep"
chmod 755 "$H/host-bin2/sleep"
harness_start 2
if wait_for stop 'stopping [12] leftover process groups? of earlier trials before trial 2' 30; then
    at_signal=$(grep '"event":"remote_process_stop","trial":1,' $j | grep -vc '"result":"not stopped: its end was not seen')
    pid="$(cat "$T/stop.pid")"
    console_kill TERM "$pid" "$T/stopstate"
    # then its terminal closes, mid-wait (the pane's shell catches the SIGHUP): a hung-up
    # terminal polls ready at once, every time, so the console must stop polling it, not spin
    # through the rest of the wait (its CPU time against the wall time it waited)
    sleep 0.3
    tmx kill-session -t stop
    ticks() { awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null; }
    cpu0=$(ticks) t0=$(date +%s%N) cpu1=$cpu0 t1=$t0
    n=0; while [ ! -s "$T/stop.rc" ] && [ "$n" -lt 400 ]; do
        c=$(ticks); [ -n "$c" ] && cpu1=$c t1=$(date +%s%N)
        sleep 0.05; n=$((n + 1))
    done
    hz=$(getconf CLK_TCK)
    cpu_ms=$(( (cpu1 - cpu0) * 1000 / hz )) wall_ms=$(( (t1 - t0) / 1000000 ))
    if [ "$wall_ms" -ge 1000 ]; then
        check "stop SIGTERM, then the terminal closed: no spin on it (${cpu_ms} ms CPU in ${wall_ms} ms)" \
            [ $((cpu_ms * 5)) -le "$wall_ms" ]
    else
        echo "  skipped: the wait ended ${wall_ms} ms after the terminal closed"
    fi
    check "stop SIGTERM: the console ends by the signal (status 143)" [ "$(cat "$T/stop.rc" 2> /dev/null)" = 143 ]
    launched2=no
    grep -q '"event":"remote_process","trial":2,' $j && launched2=yes
    check "stop SIGTERM: the stop's result is journaled before the end (stops journaled at the signal: $at_signal)" \
        python3 - $j $launched2 << 'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
# Each group's last stop line is its state: the drop's own (journaled at once) and a stop
# that missed its deadline say "not stopped", the one that ended it comes after them.
last = {}
for e in ev:
    if e["event"] == "remote_process_stop" and e["trial"] == 1:
        last[(e["machine"], e["pgid"])] = e
stops = list(last.values())
assert "h2" in [e["machine"] for e in stops], stops
assert all(e["result"] in ("stopped", "gone") for e in stops), stops
assert ev[-1]["event"] == "ended", ev[-1]
PY
    if [ "$launched2" = yes ] || [ "$at_signal" != 0 ]; then
        echo "  skipped: the signal came after the stop's end on this loaded machine"
    else
        check "stop SIGTERM: trial 2 was never launched" [ "$launched2" = no ]
    fi
    n=0; while [ "$(pgrep -f "[h]elper-$MARK" | wc -l)" != 0 ] && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    check "stop SIGTERM: nothing of the trials is left on the hosts" [ "$(pgrep -f "[h]elper-$MARK|[t]rial-$MARK" | wc -l)" = 0 ]
else
    fail "stop: the leftover stop was never shown"
fi

[ "$fails" -eq 0 ] || exit 1
echo "$suite: ok"
