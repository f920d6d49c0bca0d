#!/bin/sh
# The console answers while it stops a leftover process group (tests/sshd-harness.sh, real
# sshd on 127.0.0.x, real tmux): trial 1's connection to h2 drops and leaves a helper behind
# that ignores SIGTERM, so the stop before trial 2 waits its full TERM-to-KILL time (made ~6 s
# on h2, see below) and sends a SIGKILL. While it runs, a key changes the screen (the quit prompt), and a quit then waits, on screen, for the
# stop's end: its result is in the journal, nothing of trial 1 is left on h2, and trial 2,
# which waited for the stop, is never launched.
# No `set -e`: the harness relies on commands that may fail (kill, wait on a killed sshd).
suite=console_stop
scratch=cstop
suite_sshd=1
suite_tmux=1
. "$(cd "$(dirname "$0")" && pwd)/lib/suite.sh"
worker="$build/tunedeck-worker"
if [ ! -x "$worker" ] || ! command -v tmux > /dev/null 2>&1; then
    echo "$suite: skipped: needs $worker and tmux"
    exit 0
fi
MARK="tdcstop$$x"  # x: pid 12's mark is not part of pid 123's
tmux_screen="$T/screen"
tmux_join=1
# Anything still carrying this run's marker (the hosts are this machine's 127.0.0.x).
suite_reap() { for p in $(pgrep -f "$MARK" 2> /dev/null); do pid_kill_named KILL "$p" "$MARK"; done; }
marker_left() { pgrep -f "$(echo "$MARK" | sed 's/^\(.\)/[\1]/')" | wc -l; }

harness_init "$T/h"
harness_start 1
harness_start 2
HARNESS_TIMEOUT_S=2 harness_inventory "$T/inv.json" 1 2
PORT_BASE=$((H_PORT + 1)) # the workers' ports, after the harness's sshd port
# The trial: tunedeck-worker on each host. With $T/slow-N present, trial N runs slowly (to be
# cut in the middle) and starts a helper that ignores SIGTERM (a data loader that traps it,
# say); it says so in $T/helper-up-N-MACHINE once the helper runs.
ln -sf "$(command -v sleep)" "$T/helper-$MARK"
cat > "$T/trial-$MARK.sh" <<EOF
#!/bin/sh
slow=""
if [ -e "$T/slow-\$TUNEDECK_TRIAL" ]; then
    slow="--slowdown 40"
    sh -c 'trap "" TERM; exec "$T/helper-$MARK" 300' </dev/null >/dev/null 2>&1 &
    : > "$T/helper-up-\$TUNEDECK_TRIAL-\$TUNEDECK_MACHINE"
fi
"$worker" --port-base $PORT_BASE --connect-timeout 10 \$slow "\$@"
EOF
chmod 755 "$T/trial-$MARK.sh"

# until FILE has a line matching PATTERN (grep -E), at most SECONDS
file_wait() {
    n=0
    while [ "$n" -lt $(($3 * 20)) ]; do
        grep -Eq -- "$2" $1 2> /dev/null && return 0
        sleep 0.05; n=$((n + 1))
    done
    return 1
}
# until the screen shows PATTERN (grep -E), at most SECONDS
pane_wait() {
    tmux_wait c "$1" "$2" && return 0
    cp "$T/screen" "$T/screen-at-fail" 2> /dev/null
    return 1
}

touch "$T/slow-1"
tmx new-session -d -s c -x 160 -y 45 "exec env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 \
XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --cluster $T/inv.json \
--job $root/examples/tiny-job.json --launcher per-host --trial-cmd 'sh $T/trial-$MARK.sh' \
--budget 3 --optimizer uniform-devices --seed 3 2> $T/console.err"
j="$T/state/sessions/*.jsonl"
file_wait "$j" '"event":"remote_process","trial":1,"machine":"h2"' 20
n=0; while [ ! -e "$T/helper-up-1-h2" ] && [ "$n" -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
check "trial 1 started its TERM-ignoring helper on h2" [ -e "$T/helper-up-1-h2" ]
rm -f "$T/slow-1"
harness_stop 2 # the listener and every connection it serves: trial 1's helper stays
# On h2 from now on, the stop's 0.1 s polls take 0.3 s: its TERM-to-KILL wait grows from 2 s to
# ~6 s (well inside its 15 s deadline), so that a loaded machine cannot make the quit prompt
# below miss the stop. A console that blocks during the stop still draws it only afterwards.
mkdir -p "$H/host-bin2"
cat > "$H/host-bin2/sleep" <<'EOF'
#!/bin/sh
[ "$*" = 0.1 ] && set -- 0.3
exec /bin/sleep "$@"
EOF
chmod 755 "$H/host-bin2/sleep"
harness_start 2
file_wait "$j" '"event":"finished","trial":1,' 30
check "trial 1 ended with h2's connection (its leftover kept to stop before trial 2)" \
    grep -Eq '"event":"finished","trial":1,"status":"(unreachable|failed)","reason":"[^"]*( on h2|ssh to h2 failed)' $j

# The stop is said when it begins; the quit key must show its prompt before the stop ends.
# (h1's group too, when its part of trial 1 was cut as well: both are stopped at once.)
pane_wait 'stopping [12] leftover process groups? of earlier trials before trial 2 \(h[12]' 20
check "the console says it is stopping trial 1's leftover before trial 2" [ $? -eq 0 ]
tmx send-keys -t c q
pane_wait 'Tuning is running. Quit anyway\? \(y/n\)' 10
prompt=$?
stop_at_prompt=$(grep '"event":"remote_process_stop","trial":1,' $j | grep -vc '"result":"not stopped: its end was not seen')
check "a key is answered while the stop runs (quit prompt drawn, stop not yet journaled: $stop_at_prompt)" \
    [ "$prompt $stop_at_prompt" = "0 0" ]
tmx send-keys -t c y
# Until the console is gone: whether it said that it waits for the stop.
said=no n=0
while ! tmux_gone c && [ "$n" -lt 400 ]; do
    tmux_capture c && grep -q 'quitting once the leftover process group stop ends' "$T/screen" && said=yes
    sleep 0.05; n=$((n + 1))
done
check "the console quits after y" tmux_gone c
launched2=no
grep -q '"event":"remote_process","trial":2,' $j && launched2=yes
check "the stop's result reached the journal before the console ended: trial 1's group on h2 stopped" \
    python3 - $j $launched2 << 'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
# Each group's last stop line is its state: the drop's own (journaled at once) and a stop
# that missed its deadline say "not stopped", the one that ended it comes after them.
last = {}
for e in ev:
    if e["event"] == "remote_process_stop" and e["trial"] == 1:
        last[(e["machine"], e["pgid"])] = e
stops = list(last.values())
# Stopped before trial 2; or, when a loaded machine made that stop miss its deadline (its
# command still ran to its end), found gone by the quit's own stop.
assert "h2" in [e["machine"] for e in stops], stops
assert all(e["result"] in ("stopped", "gone") for e in stops), stops
if sys.argv[2] == "no":  # quit during the stop: the journal's end follows the stop's lines
    assert ev[-1]["event"] == "ended", ev[-1]
EOF
if [ "$launched2" = yes ]; then
    echo "  skipped: the quit came after the stop's end on this loaded machine (trial 2 ran)"
else
    check "the quit during the stop waited for it on screen; trial 2 was never launched" [ "$said" = yes ]
fi
# A trial 2 that ran when the console quit is stopped as the console closes: give it time.
n=0; while [ "$(marker_left)" != 0 ] && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
check "nothing of the trials is left on the hosts ($(marker_left))" [ "$(marker_left)" = 0 ]

if [ "$fails" -ne 0 ]; then
    for f in "$T"/console.err "$T"/screen-at-fail; do [ -s "$f" ] && { echo "--- $f"; tail -c 3000 "$f"; }; done
    echo "$suite: $fails failed"
    exit 1
fi
echo "$suite: all passed"
