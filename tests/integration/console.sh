#!/bin/sh
# Screen tests: the console in a real tmux at fixed sizes and TERMs; keys in with send-keys,
# what a person would see out with capture-pane, polled with a timeout (no fixed sleeps).
set -eu
suite=console scratch=console suite_tmux=1
. "$(dirname "$0")/lib/suite.sh"
tmp="$T"
tmux_screen="$tmp/screen.txt"
# after the exit status, the terminal modes the console left behind (wait_exit reads them)
tmux_after_exit="stty -a | tr -s ' \n' '  '; echo; "

fail() { tmux_fail_exit "console.sh: FAIL: $*"; }

# start NAME COLS ROWS TERM ARGS...: the console in a detached session; when it exits the
# pane prints its exit status and the terminal modes it left behind (tmux_after_exit).
start() { tmux_console "$@"; }

# wait_for SESSION PATTERN [SECONDS]: polls the pane until the extended regex matches.
wait_for() {
    tmux_wait "$1" "$2" "${3:-10}" || fail "session $1: '$2' did not appear within ${3:-10} s"
}

# The number after "Trials " in the table title.
trial_count() {
    tmux_capture "$1"
    sed -n 's/.*Trials \([0-9][0-9]*\)\/.*/\1/p' "$tmp/screen.txt" | head -1
}

# wait_exit SESSION RC: the console exited with RC and left the terminal in cooked mode.
wait_exit() {
    wait_for "$1" "EXITED rc=$2"
    wait_for "$1" 'icanon'
    tr -d '\n' < "$tmp/screen.txt" > "$tmp/modes.txt"
    grep -q -- ' -icanon' "$tmp/modes.txt" && fail "session $1 left the terminal without icanon"
    grep -q -- ' -echo ' "$tmp/modes.txt" && fail "session $1 left the terminal without echo"
    return 0
}

console_pid() {
    pgrep -P "$(tmux_pane_pid "$1")" tunedeck | head -1
}

# --- the default session: trials appear, best-so-far moves, views, help ---------------------
# 4 trials a second: its checks need 5 trials, the resumes below at least 10 (16 came at
# 3 a second on a machine at load 14), and each resume refits the model on every trial the
# journal holds, ~0.06 s of CPU each (at 10 a second a loaded run's resumes took a minute)
start main 100 30 xterm-256color "$bin" --pace-ms 250 --budget 400
wait_for main 'Trials [0-9]+/400'
# the first trial is a 5-iteration probe (docs/optimizer.md), shown as pruned
wait_for main '^.    1  pruned ' 10
wait_for main 'Surrogate: trial [0-9]+'
wait_for main 'Best-so-far'
wait_for main 'best [0-9.]+ s +measured'
n1="$(trial_count main)"
wait_for main "Trials $((n1 + 3))/400"
# Braille cells (U+2800..U+28FF) in the plot
tmux_capture main
grep -q "$(printf '\342\240')\|$(printf '\342\241')\|$(printf '\342\242')\|$(printf '\342\243')" "$tmp/screen.txt" ||
    fail "no Braille glyph in the best-so-far plot"

tmx send-keys -t main 2
wait_for main 'Tuning workers: trial [0-9]+ measured'
wait_for main 'GPUs: [0-9]+/64 held, doubling t=[0-9]+s'
wait_for main 'Resizes and decisions'
wait_for main 's [a-z] resnet110-[0-9]+ +start [0-9]+ GPU'
wait_for main 's [a-z] resnet110-[0-9]+ +resize [0-9]+>[0-9]+' 30
wait_for main '^.a  resnet110-0 '
# scheduler overrides: applied at the next decision and logged; bad ones explained
tmx send-keys -t main : p i n ' ' r e s n e t 1 1 0 - 0 ' ' 2 Enter
wait_for main 'pin resnet110-0 2: applied at the next scheduling decision'
wait_for main 'resnet110-0 +2\* ' 20
# the same pin again changes nothing and says so (it read "applied" a second time)
tmx send-keys -t main : p i n ' ' r e s n e t 1 1 0 - 0 ' ' 2 Enter
wait_for main ':pin: resnet110-0 is already pinned at 2 GPUs \(nothing done\)'
tmx send-keys -t main : d r a i n ' ' n o d e 1 5 Enter
wait_for main 'drain node15: applied at the next scheduling decision'
# one that would change nothing says so (an undrain of a node not drained read "applied"),
# and a name no node has is told so, not "expected a node name"
tmx send-keys -t main : u n d r a i n ' ' n o d e 1 4 Enter
wait_for main ':undrain: node14 is not drained \(nothing done\)'
tmx send-keys -t main : d r a i n ' ' n 9 Enter
wait_for main ":drain: 'n9' is not a node of this cluster \(its nodes: node00 \.\.\. node15, 16 in all\)"
tmx send-keys -t main : p i n ' ' n o s u c h ' ' 2 Enter
wait_for main ":pin: expected a job name from the job list, found 'nosuch'"
tmx send-keys -t main : p i n ' ' r e s n e t 1 1 0 - 0 ' ' 0 x 1 0 Enter
wait_for main ":pin: expected JOB GPUS \(0 unpins\), found 'resnet110-0 0x10'"
# a word too many is refused, not dropped (drain read "node15 now: applied")
tmx send-keys -t main : d r a i n ' ' n o d e 1 4 ' ' n o w Enter
wait_for main ":drain: expected one name, found 'node14 now'"
tmx send-keys -t main : p i n ' ' r e s n e t 1 1 0 - 0 ' ' 2 ' ' 4 Enter
wait_for main ":pin: expected JOB GPUS \(0 unpins\), found 'resnet110-0 2 4'"
tmx send-keys -t main : p o l i c y ' ' n o s u c h Enter
wait_for main ":policy: unknown policy 'nosuch': expected one of doubling"
tmx send-keys -t main : p o l i c y ' ' o p t i m u s Enter
wait_for main 'policy optimus: applied at the next scheduling decision'
wait_for main 'optimus t=[0-9]+s'
tmx send-keys -t main 3
wait_for main 'c4x8-2 +c4x8-2.sim +simulated'
tmx send-keys -t main Tab
wait_for main 'Surrogate'
# a queued override's row shows the model's predicted time, as a suggested trial's does
# (it showed a dash)
tmx send-keys -t main Space
wait_for main '\| paused'
tmx send-keys -t main e
wait_for main 'Override editor'
tmx send-keys -t main Enter
wait_for main 'override launches as trial [0-9]+ \(1 queued'
wait_for main '^. +[0-9]+  queued +- +- +[0-9][0-9.]*  '
tmx send-keys -t main X
wait_for main 'dropped; 0 still queued'
tmx send-keys -t main Space
wait_for main 'best [0-9.]+ s \| tuning'

tmx send-keys -t main '?'
wait_for main 'Keys \(any key closes\)'
for k in 'Tab' 'Space' 'Ctrl-L' 'PgUp PgDn' 'Esc' 'q F10' '\[ \]' 'click, wheel' 'config.json'; do
    wait_for main "$k" 5 # polled: the terminal may still be drawing the overlay
done
tmx send-keys -t main x
wait_for main '\? help +1-3 views'
# at 80x24 it scrolls to its last key, and a resize leaves it open
tmx resize-window -t main -x 80 -y 24
tmx send-keys -t main '?'
wait_for main 'Keys 1-[0-9]+/[0-9]+ \(Up/Down scroll\)'
tmx send-keys -t main NPage NPage NPage
wait_for main 'config.json'
tmx resize-window -t main -x 100 -y 30
wait_for main 'Keys \(any key closes\)'
tmx send-keys -t main x
wait_for main '\? help +1-3 views'

# sort and filter
tmx send-keys -t main / f a i l e d Enter
wait_for main "filter 'failed'"
tmx send-keys -t main / Escape
wait_for main 'Trials [0-9]+/400  best'
tmx send-keys -t main : b u d g e t ' ' 9 0 0 Enter
wait_for main 'Trials [0-9]+/900'
tmx send-keys -t main : n o p e Enter
wait_for main "unknown command 'nope'"

# resizes do not crash, and each size draws
tmx resize-window -t main -x 80 -y 24
wait_for main 'Trials [0-9]+/900'
wait_for main 'Surrogate'
# the tab bar drops whole fields of its state from the left, never part of one
wait_for main '3 Hosts +bespoke \| [0-9]+/900 \| best [0-9.]+ s \| [a-z]+ ?$'
tmx resize-window -t main -x 40 -y 12
wait_for main 'Trials'
wait_for main '^ 1 Tune  2 Cluster  3 Hosts +[a-z]+ ?$'
tmx resize-window -t main -x 100 -y 30
wait_for main 'Best-so-far'

# q asks while tuning runs; n keeps it; q y quits and restores the terminal
tmx send-keys -t main q
wait_for main 'Quit anyway\? \(y/n\)'
tmx send-keys -t main n
wait_for main '\? help'
# a resize is no answer: the question stays, and y still quits
tmx send-keys -t main q
wait_for main 'Quit anyway\? \(y/n\)'
tmx resize-window -t main -x 90 -y 28
wait_for main '\| [a-z]+ ?$' # the tab bar redrawn at the new width
wait_for main 'Quit anyway\? \(y/n\)'
tmx send-keys -t main y
wait_exit main 0
# the session was journalled as it went: `tune --resume` goes on from its trials, headless
tmux_capture main
id="$(sed -n 's/.*tunedeck: session \([^ ]*\) (journal.*/\1/p' "$tmp/screen.txt" | head -1)"
[ -n "$id" ] || fail "the console did not name its session journal"
ls "$tmp/state-main"/*/* "$tmp/state-main"/* 2>/dev/null | grep -q "$id" || fail "no journal file for $id"
# (--budget: the trials it has, so that none is added; one below them is refused)
ran="$(cat "$tmp/state-main"/*/"$id.jsonl" "$tmp/state-main/$id.jsonl" 2>/dev/null | grep -c '"event":"suggested"')"
rc=0; TUNEDECK_STATE_DIR="$tmp/state-main" "$bin" tune --resume "$id" --budget $((ran - 1)) \
    >/dev/null 2>"$tmp/resume.err" || rc=$?
[ "$rc" = 2 ] && grep -q -- "--budget $((ran - 1)): the session already has $ran trials" "$tmp/resume.err" ||
    fail "a budget below the $ran trials run: exit $rc, $(cat "$tmp/resume.err")"
TUNEDECK_STATE_DIR="$tmp/state-main" "$bin" tune --resume "$id" --budget "$ran" --json \
    > "$tmp/resume.json" 2>"$tmp/resume.err" || true
python3 - "$tmp/resume.json" <<'PY' || fail "resume: $(cat "$tmp/resume.err")"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["trials"]) >= 10, len(r["trials"])
PY
# ... and `tunedeck --resume ID` opens the console on it: its trials are in the table at once
n_before="$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["trials"]))' "$tmp/resume.json")"
cp -r "$tmp/state-main" "$tmp/state-res"
start res 100 30 xterm-256color "$bin" --resume "$id" --budget 200
wait_for res "Trials [0-9]+/200" 30 # it reads the journal and refits first (slow when loaded)
[ "$(trial_count res)" -ge "$n_before" ] || fail "the resumed console shows $(trial_count res) trials, the journal $n_before"
tmx send-keys -t res q y
wait_exit res 0
rc=0; "$bin" --resume "$id" --sim B:googlenet > "$tmp/res-bad" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "come from its journal" "$tmp/res-bad" || fail "--resume with --sim: $(cat "$tmp/res-bad")"
rc=0; TUNEDECK_STATE_DIR="$tmp/state-res" "$bin" --resume no-such-session > "$tmp/res-bad" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "^tunedeck: --resume: no session 'no-such-session' (\`tunedeck sessions\` lists them" "$tmp/res-bad" ||
    fail "--resume of an unknown id: $(cat "$tmp/res-bad")"

# --- the override editor (uniform schedule: every device holds inputs) --------------------
start edit 100 30 xterm-256color "$bin" --optimizer uniform-devices --pace-ms 100
wait_for edit '^.    2  ok '
tmx send-keys -t edit Space
wait_for edit '\| paused'
tmx send-keys -t edit e
wait_for edit 'Override editor'
wait_for edit 'valid: Enter launches'
wait_for edit 'no prediction'
# an unbalanced edit is explained and refused
tmx send-keys -t edit +
wait_for edit 'cannot launch: schedule: worker inputs'
wait_for edit 'batch 768, found 776'
tmx send-keys -t edit Enter
wait_for edit 'not launched: schedule: worker inputs must sum to the batch 768, found 776'
tmx send-keys -t edit -
wait_for edit 'valid: Enter launches'
# move 8 inputs from g2-0's cpu to its gpu0: the share changes, the batch is kept
tmux_capture edit
before="$(sed -n 's/.*gpu0 *\([0-9][0-9]*\) .*/\1/p' "$tmp/screen.txt" | head -1)"
tmx send-keys -t edit m j +
wait_for edit "gpu0 +$((before + 8)) "
wait_for edit 'valid: Enter launches'
# the mouse moves inputs too: a click on the selected device adds from the source, a right
# click gives back
# (the gpu0 row is screen row 10: tabs, border, 2 prediction and 3 verdict lines, g2-0, cpu)
mouse_press_until edit 0 10 10 "gpu0 +$((before + 16)) "
mouse_press edit 2 10 10
wait_for edit "gpu0 +$((before + 8)) "
wait_for edit 'valid: Enter launches'
tmx send-keys -t edit Enter
wait_for edit 'override launches as trial [0-9]+ \(1 queued, X drops the last\) \(paused'
tmux_capture edit
first="$(sed -n 's/.*override launches as trial \([0-9][0-9]*\) (1 queued.*/\1/p' "$tmp/screen.txt" | head -1)"
[ -n "$first" ] || fail "no trial number in the override's message"
second=$((first + 1))
# a second override made while paused queues behind the first (it took the first one's
# place, and the first never ran): 16 inputs moved where the first moved 8
tmx send-keys -t edit e
wait_for edit 'valid: Enter launches'
tmx send-keys -t edit m j + +
wait_for edit "gpu0 +$((before + 16)) "
wait_for edit 'valid: Enter launches'
tmx send-keys -t edit Enter
wait_for edit "override launches as trial $second \\(2 queued"
# both show, in order, as queued rows under the trials, and the tab bar counts them
wait_for edit "^. +$first  queued .*override"
wait_for edit "^. +$second  queued .*override"
wait_for edit '\| 2 queued \| paused'
# a third (24 inputs moved) and a fourth (unchanged); X drops the fourth (the one queued
# last), then :unqueue drops the middle one of the three left (the second): the first and
# the third stay, the third moved up to the second's trial
tmx send-keys -t edit e
wait_for edit 'valid: Enter launches'
tmx send-keys -t edit m j + + +
wait_for edit "gpu0 +$((before + 24)) "
wait_for edit 'valid: Enter launches'
tmx send-keys -t edit Enter
wait_for edit "override launches as trial $((second + 1)) \\(3 queued"
tmx send-keys -t edit e
wait_for edit 'valid: Enter launches'
tmx send-keys -t edit Enter
wait_for edit "override launches as trial $((second + 2)) \\(4 queued"
wait_for edit '\| 4 queued \| paused'
tmx send-keys -t edit X
wait_for edit "override queued as trial $((second + 2)) dropped; 3 still queued"
wait_for edit '\| 3 queued \| paused'
not_on_screen edit "^. +$((second + 2))  queued"
# a trial number no queued row shows is refused, naming those that are
tmx send-keys -t edit -l ":unqueue $((second + 5))"
tmx send-keys -t edit Enter
wait_for edit ":unqueue: trial $((second + 5)) is not queued; the queued overrides are trials $first-$((second + 1))"
wait_for edit '\| 3 queued \| paused'
tmx send-keys -t edit -l ":unqueue $second"
tmx send-keys -t edit Enter
wait_for edit "override queued as trial $second dropped; 2 still queued \\(those after it run one trial earlier\\)"
wait_for edit '\| 2 queued \| paused'
wait_for edit "^. +$first  queued .*override"
wait_for edit "^. +$second  queued .*override"
not_on_screen edit "^. +$((second + 1))  queued"
# resumed, both run next in the order queued, each as the operator's
tmx send-keys -t edit Space
wait_for edit "^. +$first  (ok|pruned) .*override"
wait_for edit "^. +$second  (ok|pruned) .*override"
tmx send-keys -t edit Space
wait_for edit '\| paused'
not_on_screen edit '^. +[0-9]+  queued '
# which ran as which: the editor opened on each trial shows its inputs (the table's first row
# is trial 1; j moves down one)
tmx send-keys -t edit g
i=1; while [ $i -lt "$first" ]; do tmx send-keys -t edit j; i=$((i + 1)); done
tmx send-keys -t edit e
wait_for edit "editing trial $first's schedule"
wait_for edit "gpu0 +$((before + 8)) "
tmx send-keys -t edit Escape
wait_for edit 'edit discarded'
tmx send-keys -t edit j e
wait_for edit "editing trial $second's schedule"
wait_for edit "gpu0 +$((before + 24)) "
tmx send-keys -t edit Escape
wait_for edit 'edit discarded'
# with nothing queued, X says so
tmx send-keys -t edit X
wait_for edit 'no override is queued'
tmx send-keys -t edit Space
# :quit asks as q does while tuning runs (it quit at once, a running trial dropped unasked);
# a word after it is refused; :quit! is vi's forced form and quits without asking
tmx send-keys -t edit : q u i t Enter
wait_for edit 'Quit anyway\? \(y/n\)'
tmx send-keys -t edit n
wait_for edit '\? help'
tmx send-keys -t edit : q u i t Space n o w Enter
wait_for edit ":quit: expected nothing after it, found 'now'"
tmx send-keys -t edit : q u i t ! Enter
wait_exit edit 0

# --- without a journal, quitting with overrides queued asks: nothing would keep them ------
start nj 120 30 xterm-256color "$bin" --pace-ms 3600000 --no-sched --no-journal
wait_for nj '^. +1  (ok|pruned) '
tmx send-keys -t nj Space
wait_for nj '\| paused'
tmx send-keys -t nj e
wait_for nj 'valid: Enter launches'
tmx send-keys -t nj Enter
wait_for nj '\| 1 queued \| paused'
tmx send-keys -t nj q
wait_for nj 'no journal keeps them: quitting drops them\. Quit\? \(y/n\)'
tmx send-keys -t nj n
wait_for nj '\| 1 queued \| paused'
tmx send-keys -t nj X
wait_for nj 'dropped; 0 still queued'
# nothing queued, paused, nothing running: q quits at once, as before
tmx send-keys -t nj q
wait_exit nj 0

# --- with a model (the default optimizer): the editor's prediction follows the edit -------
if "$bin" tune --help | grep -q bespoke; then
    start pred 100 30 xterm-256color "$bin" --pace-ms 100
    wait_for pred '^.    3  ok '
    tmx send-keys -t pred Space
    wait_for pred '\| paused'
    tmx send-keys -t pred g e
    wait_for pred 'predicted [0-9.]+ s \[[0-9.]+-[0-9.]+\] if run'
    # The prediction and the cursor's row, read from one whole frame: a capture can catch
    # curses mid-way through drawing the editor over the table (CI once saw the prediction
    # line drawn and the machine rows not yet, lines scrolled and blank), and a prediction
    # read from such a capture, or none, would make the check below pass on any value.
    i=0
    while :; do
        p0="$(sed -n 's/.*predicted \([0-9.]*\) s \[\([0-9.-]*\)\] if run.*/\1 \2/p' "$tmp/screen.txt")"
        # g2-0: its GPU becomes the source, 8 inputs go to its CPU
        c0="$(sed -n 's/^.>   cpu *\([0-9][0-9]*\) .*/\1/p' "$tmp/screen.txt")"
        [ -n "$p0" ] && [ -n "$c0" ] && break
        i=$((i + 1))
        [ "$i" -lt 100 ] || fail "the editor does not start on g2-0's cpu"
        sleep 0.05
        tmux_capture pred
    done
    tmx send-keys -t pred j m k +
    wait_for pred ">   cpu +$((c0 + 8)) "
    wait_for pred 'gpu0 .* source'
    wait_for pred 'valid: Enter launches'
    i=0
    while :; do
        tmux_capture pred
        p1="$(sed -n 's/.*predicted \([0-9.]*\) s \[\([0-9.-]*\)\] if run.*/\1 \2/p' "$tmp/screen.txt")"
        [ -n "$p1" ] && [ "$p1" != "$p0" ] && break
        i=$((i + 1))
        [ "$i" -lt 100 ] || fail "the prediction did not change after the edit ($p0)"
        sleep 0.05
    done
    tmx send-keys -t pred Escape
    wait_for pred 'edit discarded'
    tmx send-keys -t pred : q u i t Enter
    wait_exit pred 0
fi

start mouse 100 30 xterm-256color "$bin" --pace-ms 100 --no-sched --budget 12
wait_for mouse 'Trials 12/12' 30 # 12 refits of the model (slow when loaded)
mouse_press_until mouse 0 11 1 'Tuning workers: trial'
mouse_press_until mouse 0 3 1 'Best-so-far'
# the trial table's first data row is screen row 18 (tabs, 14-row top panes, border, header).
# Opening the editor computes its prediction, seconds on a loaded machine: each try waits
# for the editor to open, and tries again only when it opened on another trial (the click
# was lost, see mouse_press_until), never because the console was slow to answer.
ok=0
for attempt in 1 2 3 4 5; do
    mouse_press mouse 0 10 18
    tmx send-keys -t mouse e
    wait_for mouse "editing trial [0-9]+'s schedule" 30
    if grep -q "editing trial 2's schedule" "$tmp/screen.txt"; then ok=1; break; fi
    tmx send-keys -t mouse Escape
    wait_for mouse 'edit discarded'
done
[ "$ok" = 1 ] || fail "session mouse: clicking a trial row does not select it"
tmx send-keys -t mouse Escape
wait_for mouse 'edit discarded'
tmx send-keys -t mouse -l "$(printf '\033[<65;10;20M')"
tmx send-keys -t mouse e
wait_for mouse "editing trial 5's schedule" 30
tmx send-keys -t mouse Escape q
wait_exit mouse 0

# --- 8 colours, NO_COLOR, ASCII, 80x24: still draws and quits ------------------------------
start plain 80 24 xterm "env NO_COLOR=1 $bin --ascii --pace-ms 100 --budget 3"
wait_for plain '^\+ Trials 3/3'
wait_for plain 'done'
not_on_screen plain "$(printf '\342\224\200')"
tmx send-keys -t plain q
wait_exit plain 0

# --- signals: TSTP/CONT redraws, TERM quits as q does and ends by it (143; more in
# console_signals.sh), a crash restores the terminal ----------------------------------------
start sig 100 30 screen-256color "$bin" --pace-ms 100
wait_for sig '^.    1  pruned '
pid="$(console_pid sig)"
[ -n "$pid" ] || fail "no console process"
# Each signal only while the process is still the console (its state folder in its
# environment, pid_kill_env): one that ended may have left its number to another suite's.
sig_env="TUNEDECK_STATE_DIR=$T/state-sig"
pid_kill_env TSTP "$pid" "$sig_env"
n1="$(trial_count sig)"
pid_kill_env CONT "$pid" "$sig_env"
wait_for sig "Trials $((n1 + 2))/"
pid_kill_env TERM "$pid" "$sig_env"
wait_exit sig 143

start crash 100 30 xterm-256color "$bin" --pace-ms 100
wait_for crash '^.    1  pruned '
pid_kill_env SEGV "$(console_pid crash)" "TUNEDECK_STATE_DIR=$T/state-crash"
wait_exit crash 139

# --- settings: a rebound key, and :theme saved atomically to config.json -------------------
mkdir -p "$tmp/xdg-conf/tunedeck"
printf '{"keys": {"quit": "x", "help": "h", "view-hosts": "9"}}\n' > "$tmp/xdg-conf/tunedeck/config.json"
start conf 100 30 xterm-256color "$bin" --pace-ms 100 --no-sched
wait_for conf '^.    1  pruned '
# The tab bar and the key hints name the keys as bound (they said 3 and "q quit", and q no
# longer quit).
wait_for conf '^ 1 Tune  2 Cluster  9 Hosts '
wait_for conf '^ h help  1/2/9 views .* x quit *$'
tmx send-keys -t conf h
# the help lists the default keys; its title names the ones config.json moved
wait_for conf 'Keys \(any key closes\); rebound: x quit, h help, 9 view-hosts'
tmx send-keys -t conf Escape q
not_on_screen conf 'Quit anyway'
tmx send-keys -t conf : t h e m e ' ' l i g h t Enter
wait_for conf 'theme light \(saved in '
grep -Eq '"theme":[[:space:]]*"light"' "$tmp/xdg-conf/tunedeck/config.json" || fail "the theme was not saved"
grep -Eq '"quit":[[:space:]]*"x"' "$tmp/xdg-conf/tunedeck/config.json" || fail "saving lost the key bindings"
tmx send-keys -t conf : t h e m e ' ' n o p e Enter
wait_for conf "theme 'nope' not loaded, the current one kept: .*nope.json"
tmx send-keys -t conf x y
wait_exit conf 0
printf '{"keys": {"quit": "?"}}\n' > "$tmp/xdg-conf/tunedeck/config.json"
# wide enough for the whole message, whatever the length of the scratch folder's name
start conf2 200 30 xterm-256color "env XDG_CONFIG_HOME=$tmp/xdg-conf $bin --pace-ms 100 --no-sched"
wait_for conf2 "settings ignored: .* is bound to both quit"
# the file it refused is its owner's to fix: :theme does not write over it
cp "$tmp/xdg-conf/tunedeck/config.json" "$tmp/conf2.before"
tmx send-keys -t conf2 : t h e m e ' ' l i g h t Enter
wait_for conf2 "settings not saved: .*config.json has errors"
cmp -s "$tmp/xdg-conf/tunedeck/config.json" "$tmp/conf2.before" || fail ":theme wrote over a config.json it had refused"
tmx send-keys -t conf2 q y
wait_exit conf2 0

# --- pruning and the stop rule (issue 14) ---------------------------------------------------
# Random search runs hopeless schedules: the table shows them as pruned, with why.
start prune 160 30 xterm-256color "$bin" --optimizer random --pace-ms 20 --budget 12 --no-sched --no-journal
wait_for prune '^.? +[0-9]+  pruned .*pruned after [0-9]+ of [0-9]+ iterations \(in warm-up\)' 20
tmx send-keys -t prune q y
wait_exit prune 0
# :converge on offers the stop rule: bespoke stops by itself, and says so.
start conv 120 30 xterm-256color "$bin" --pace-ms 100 --budget 60 --no-sched --no-journal
wait_for conv '^.    1  pruned '
tmx send-keys -t conv : c o n v e r g e ' ' o n Enter
wait_for conv 'stop when converged: on|tuning stopped: converged'
wait_for conv '\| converged *$' 60
wait_for conv 'tuning stopped: converged: the last 3 suggestions'
n="$(trial_count conv)"
[ "$n" -lt 60 ] || fail "the stop rule did not stop before the budget ($n trials)"
tmx send-keys -t conv : c o n v e r g e ' ' m a y b e Enter
wait_for conv ':converge: expected on or off'
tmx send-keys -t conv q y
wait_exit conv 0

# --- bad input is refused before the screen is taken ---------------------------------------
if "$bin" --theme-typo x >"$tmp/out" 2>&1; then fail "an unknown option was accepted"; fi
grep -q "unknown or incomplete option" "$tmp/out" || fail "unknown option: $(cat "$tmp/out")"
if "$bin" --no-journal --budget 0 </dev/null >"$tmp/out" 2>&1; then fail "--budget 0 was accepted"; fi
grep -q -- "--budget: expected" "$tmp/out" || fail "--budget 0: $(cat "$tmp/out")"
"$bin" console --help | grep -q -- "--no-journal" || fail "--help does not list --no-journal"
# a --theme that does not load is refused as a bad --plot is (it drew the default's colours
# under a message on the status line); a good one goes on to the terminal check
if "$bin" --no-journal --theme nope </dev/null >"$tmp/out" 2>&1; then fail "--theme nope was accepted"; fi
grep -q -- "--theme 'nope': .*nope.json: cannot open.*expected a theme name: default, " "$tmp/out" ||
    fail "--theme nope: $(cat "$tmp/out")"
if "$bin" --no-journal --theme light </dev/null >"$tmp/out" 2>&1; then fail "no terminal was accepted"; fi
grep -q "needs a terminal" "$tmp/out" || fail "--theme light: $(cat "$tmp/out")"
if "$bin" --sim Z:googlenet </dev/null >"$tmp/out" 2>&1; then fail "a bad --sim was accepted"; fi
grep -q "unknown setting 'Z'" "$tmp/out" || fail "bad --sim: $(cat "$tmp/out")"
if "$bin" </dev/null >"$tmp/out" 2>&1; then fail "no terminal was accepted"; fi
grep -q "needs a terminal" "$tmp/out" || fail "no terminal: $(cat "$tmp/out")"
echo "console.sh: ok"
