#!/bin/sh
# What an operator sees at the edges: long names, many jobs, narrow and tiny terminals,
# terminals that cannot be drawn on, and the help's key list. The console in a real tmux;
# keys in with send-keys, the screen out with capture-pane, polled (no fixed sleeps).
set -eu
suite=console_screen scratch=cscreen suite_tmux=1
. "$(dirname "$0")/lib/suite.sh"
tmp="$T"
tmux_screen="$tmp/screen.txt"

fail() { tmux_fail_exit "console_screen.sh: FAIL: $*"; }

# start NAME COLS ROWS TERM ARGS...: the console in a detached session; when it exits the
# pane prints its exit status.
start() { tmux_console "$@"; }
wait_for() { # wait_for SESSION PATTERN [SECONDS]: polls until the extended regex matches
    tmux_wait "$1" "$2" "${3:-10}" || fail "session $1: '$2' did not appear within ${3:-10} s"
}
quit() { tmx send-keys -t "$1" q y; wait_for "$1" "EXITED rc=0"; }

# --- long machine, host and job names: cut with an ellipsis, never over the next column ---
cat > "$tmp/long.json" <<'JSON'
{"name": "long-names",
 "machine_types": {"box": {"bandwidth_gbps": 10.0,
     "devices": [{"id": "cpu", "kind": "cpu", "threads": 8},
                 {"id": "gpu0", "kind": "gpu", "model": "T4"}]}},
 "machines": [{"name": "gpu-node-in-the-very-long-named-rack-number-seventeen-row-b-[0-3]",
               "host": "very-long-hostname-of-the-datacenter-gpu-node-[0-3].invalid", "type": "box"},
              {"name": "s[0-1]", "type": "box"}],
 "trial": {"launch": "local", "command": "python3 examples/trial.py"}}
JSON
cat > "$tmp/longjob.json" <<'JSON'
{"name": "imagenet-resnet152-mixed-precision-large-batch-experiment-n42", "model_mb": 4.0,
 "mops": 50, "batch": 256, "iterations": 6, "warmup": 2}
JSON
# the local launcher reaches no host: none is connected (each read "down" before, for a host
# nothing used), and the hosts view's title says why
start local 100 30 xterm-256color "$bin" --cluster "$tmp/long.json" --job "$tmp/longjob.json" --no-sched --no-journal --budget 400
tmx send-keys -t local 3
wait_for local '^.> gpu-node-i…en-row-b-0 very-long-hostna…u-node-0\.invalid +- +- +- +n/a'
wait_for local 'Hosts: 6, not connected: this session.s trials run here'
tmx send-keys -t local q y
wait_for local 'EXITED rc=0'
# per-host: every host is the session's, connected from the start (here none answers)
start long 100 30 xterm-256color "$bin" --cluster "$tmp/long.json" --job "$tmp/longjob.json" --no-sched --no-journal --budget 400 --launcher per-host
# the surrogate pane: each machine's own end shows (the four would read "gpu-node" alike)
wait_for long '^.gpu-no…ow-b-0 +(PS|W|W\+PS|-) '
wait_for long '^.gpu-no…ow-b-3 +(PS|W|W\+PS|-) '
tmx send-keys -t long 2
wait_for long '^.gpu…b-2 +(PS|W|W\+PS|-)? +cpu '
wait_for long '│gp…b-0 (·|[A-Z]) gp…b-1 '
# the job list: the name keeps its 12 columns, so gpus and state stay in theirs
wait_for long '^.A  tune:…nt-n42 +[0-9]+ '
tmx send-keys -t long 3
wait_for long '^.> gpu-node-i…en-row-b-0 very-long-hostna…u-node-0\.invalid (down|connecting|resolving) '
# a message longer than the status line takes the row above too, and reads whole
tmx send-keys -t long : f r o b n i c a t e Enter
wait_for long '^unknown command .frobnicate.: expected budget, '
wait_for long '^undrain, plot, sort, filter, theme, policy or quit \(\? help\) *$'
tmx send-keys -t long x
wait_for long '^└─+┘$'
# the hints are the view's: on SSH hosts, accepting a key and reconnecting
wait_for long '^ \? help  1-3 views  : command  a accept key  c reconnect  Space pause  q quit *$'
# wider: the columns grow to the whole names; narrower: they keep 10 and 18 columns, and
# the host's last error, cut, ends in an ellipsis
tmx resize-window -t long -x 200 -y 30
wait_for long '^.> gpu-node-in-the-very-long-named-rack-number-seventeen-row-b-0 very-long-hostname-of-the-datacenter-gpu-node-0\.invalid (down|connecting|resolving) '
tmx resize-window -t long -x 60 -y 30
wait_for long '^.> gpu-…w-b-0 very-lon…0\.invalid (down|connecting|resolving) '
wait_for long '^.    cannot resolve very-long-hostname-of-the-.*…│$'
tmx resize-window -t long -x 100 -y 30
# q quits from the override editor too (it asks while tuning runs)
tmx send-keys -t long 1 e
wait_for long 'Override editor'
tmx send-keys -t long q
wait_for long 'Quit anyway\? \(y/n\)'
tmx send-keys -t long y
# quitting stops the running trial, whose parts never reached their hosts (none connects):
# nothing runs there, so nothing is waited for (the SSH launcher gave each such part its 5 s
# KILL_WAIT_MS, and the pool waited for every name lookup still in flight)
wait_for long 'EXITED rc=0'

# --- names whose lookups take a minute: a quit does not wait for them --------------------
# In lib/slowdns.sh's namespaces every name's lookup runs 60 s (a DNS server that never
# answers, 30 s twice); glibc cannot cancel a lookup once it runs. The quit must come back
# before any lookup could have ended: the console was started a moment ago and is waited for
# 15 s (tmux_wait's polls, longer under load), far below the 60 s that waiting for the
# lookups took (55 s after the first screen, measured). The hosts' connect timeout (120 s)
# outlasts the lookups, so they are still resolving when q y comes.
if sh "$root/tests/integration/lib/slowdns.sh" --probe; then
    cat > "$tmp/slow.json" <<'JSON'
{"name": "slow-names",
 "machine_types": {"box": {"bandwidth_gbps": 10.0,
     "devices": [{"id": "cpu", "kind": "cpu", "threads": 8}]}},
 "machines": [{"name": "s[0-1]", "host": "slow-[0-1].invalid", "type": "box"}],
 "ssh": {"connect_timeout_s": 120},
 "trial": {"launch": "per-host", "command": "python3 examples/trial.py"}}
JSON
    start slow 100 30 xterm-256color sh "$root/tests/integration/lib/slowdns.sh" "$tmp/dns" \
        "$bin" --cluster "$tmp/slow.json" --job "$tmp/longjob.json" --no-sched --no-journal --budget 400
    tmx send-keys -t slow 3
    wait_for slow '^.  s1 +slow-1\.invalid +resolving '
    tmx send-keys -t slow q y
    wait_for slow 'EXITED rc=0' 15
    # a lookup that outlasts its host's connect timeout (2 s) is let go of too, the console
    # going on: the host is down for it, saying so, and the console answers keys (the pool
    # waited for the lookup there, the whole loop frozen for the 60 s)
    sed 's/"connect_timeout_s": 120/"connect_timeout_s": 2/' "$tmp/slow.json" > "$tmp/slow2.json"
    start slow2 100 30 xterm-256color sh "$root/tests/integration/lib/slowdns.sh" "$tmp/dns2" \
        "$bin" --cluster "$tmp/slow2.json" --job "$tmp/longjob.json" --no-sched --no-journal --budget 400
    tmx send-keys -t slow2 3
    wait_for slow2 'resolving slow-0\.invalid took longer than 2\.0 s'
    tmx send-keys -t slow2 q y
    wait_for slow2 'EXITED rc=0' 15
else
    echo "console_screen.sh: skipped the slow name lookups: unshare -m -n needs root" >&2
fi

# --- a misspelt key of the job or inventory file: said on the screen ----------------------
# tune said "key 'synch' is not one tunedeck reads; did you mean 'sync'?" and the console
# nothing (on stderr it would land under the screen): the message line and the log say it,
# the inventory's ("job_launh") too.
sed 's/"name": "long-names",/"name": "long-names", "job_launh": "per-host",/' "$tmp/long.json" > "$tmp/slip.json"
printf '{"name": "slip", "model_mb": 4.0, "batch": 256, "iterations": 6, "warmup": 2, "synch": "allreduce"}\n' \
    > "$tmp/slipjob.json"
start slip 200 30 xterm-256color "$bin" --cluster "$tmp/slip.json" --job "$tmp/slipjob.json" --no-sched --no-journal --budget 400
wait_for slip "slipjob\\.json: key 'synch' is not one tunedeck reads; did you mean 'sync'\\?"
tmx send-keys -t slip L
wait_for slip "slip\\.json: key 'job_launh' is not one tunedeck reads; did you mean 'job_launch'\\?"
tmx send-keys -t slip Escape
quit slip

# --- names in other scripts: a cell counts terminal columns, not bytes ------------------
# A job named in Japanese (3 bytes, 2 columns a character) with combining accents (2 bytes,
# no column) and a cluster named in Japanese. The job list cut and padded the name by bytes,
# so its row's gpus and state columns sat left of their heads; the top bar's state was placed
# by bytes, short of the right edge; under LANG=C both showed nothing at all.
cat > "$tmp/cjk.json" <<'JSON'
{"name": "東京の計算クラスタ",
 "machine_types": {"box": {"bandwidth_gbps": 10.0,
     "devices": [{"id": "cpu", "kind": "cpu", "threads": 8},
                 {"id": "gpu0", "kind": "gpu", "model": "T4"}]}},
 "machines": [{"name": "n[0-1]", "type": "box"}],
 "trial": {"launch": "local", "command": "python3 examples/trial.py"}}
JSON
printf '{"name": "%s", "model_mb": 4.0, "mops": 50, "batch": 256, "iterations": 6, "warmup": 2}\n' \
    "画像認識e$(printf '\314\201\314\201')実験モデル" > "$tmp/cjkjob.json"
# columns_agree COLS: in the last capture, the job row's GPU count and its pin mark end in the
# column where the head "gpus" ends, and the top bar reaches the right edge (COLS): columns
# as a terminal counts them
columns_agree() {
    /usr/bin/python3 - "$tmux_screen" "$1" <<'PY'
import re, sys, unicodedata
def cols(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF"
               else 1 for c in s)
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
head = next(l for l in lines if re.search(r"job +gpus state", l))
row = next(l for l in lines if "tune:" in l)
gpus = cols(head[: head.index("gpus") + 4])
m = re.match(r".*?tune:\S+(\s+\S+)*?\s+[0-9]+[* ]", row)  # the count, then the pin's mark
got = cols(m.group(0)) if m else -1
top = cols(lines[0]) + 1  # the bar's own trailing blank, which capture-pane drops
ok = got == gpus and top == int(sys.argv[2])
if not ok:
    print(f"gpus ends at {got}, its head at {gpus}; top bar {top} of {sys.argv[2]} columns")
sys.exit(0 if ok else 1)
PY
}
start cjk 100 30 xterm-256color "$bin" --cluster "$tmp/cjk.json" --job "$tmp/cjkjob.json" --no-sched --no-journal --pace-ms 100
tmx send-keys -t cjk 2
wait_for cjk '^.A  tune:…[^ ]*モデル +[0-9]+ '
wait_for cjk '東京の計算クラスタ \| bespoke \| '
columns_agree 100 || fail "session cjk: columns counted in bytes"
tmx resize-window -t cjk -x 60 -y 30
wait_for cjk '^ 1 Tune  2 Cluster  3 Hosts +[0-9]+/60 \| best '
# such a name can be typed in a prompt (only ASCII was taken), and Backspace takes a whole
# character back
tmx send-keys -t cjk : c o n v e r g e ' '
acute="$(printf '\314\201')"
tmx send-keys -t cjk -l "画像e$acute実"
wait_for cjk "^:converge 画像e$acute実_ *\$"
tmx send-keys -t cjk BSpace BSpace
wait_for cjk '^:converge 画像e_ *$'
tmx send-keys -t cjk Enter
wait_for cjk "^:converge: expected on or off, found '画像e' *\$"
# longer than the line, the prompt shows its end in whole characters
tmx resize-window -t cjk -x 20 -y 30
tmx send-keys -t cjk : f i l t e r ' '
tmx send-keys -t cjk -l '一二三四五六七八九十'
wait_for cjk '^:…[^ ]*八九十_ *$'
tmux_capture cjk
/usr/bin/python3 -c '
import sys, unicodedata
line = [l for l in open(sys.argv[1], encoding="utf-8").read().splitlines() if l.startswith(":")][0]
sys.exit(0 if sum(2 if unicodedata.east_asian_width(c) == "W" else 1 for c in line) <= 20 else 1)
' "$tmux_screen" || fail "session cjk: the prompt is wider than the screen"
tmx send-keys -t cjk Escape
quit cjk
# LANG=C: the name is question marks, one a character, and the rest of the row still shows
tmux_start cjkc 100 30 "cd '$root'; env TERM=xterm-256color LANG=C LC_ALL=C \
XDG_CONFIG_HOME=$T/xdg-cjkc TUNEDECK_STATE_DIR=$T/state-cjkc $bin --cluster $tmp/cjk.json \
--job $tmp/cjkjob.json --no-sched --no-journal --pace-ms 100"
tmx send-keys -t cjkc 2
wait_for cjkc '^.A  tune:~\?+ +[0-9]+ +[#.]+ '
wait_for cjkc '^ 1 Tune  2 Cluster  3 Hosts +\?{9} \| bespoke \| [0-9]+/60 \| best .* \| (tuning|done)$'
quit cjkc

# --- many jobs: the job list says which rows show, PgDn/PgUp/G/g page it ------------------
start jobs 100 30 xterm-256color "$bin" --sched-jobs 60 --sched-speed 600 --pace-ms 100 --no-journal
tmx send-keys -t jobs 2
wait_for jobs '┌ Jobs: [0-9]+/60 done.*  1-10/60 ' 30
wait_for jobs '^.a  resnet110-0 '
wait_for jobs '^ \? help  1-3 views  : command  PgUp/PgDn jobs  Space pause  q quit *$'
# paused, the hint says what Space does now
tmx send-keys -t jobs Space
wait_for jobs '^ \? help  1-3 views  : command  PgUp/PgDn jobs  Space resume  q quit *$'
tmx send-keys -t jobs Space
wait_for jobs '^ \? help  1-3 views  : command  PgUp/PgDn jobs  Space pause  q quit *$'
tmx send-keys -t jobs NPage
wait_for jobs 'Jobs: [^┐]*  10-19/[0-9]+ '
# the rows are written after their title: the first page's may still show for a moment
tmux_wait_gone jobs '^.a  resnet110-0 ' 10 || fail "session jobs: the first page's rows still show on the second"
tmx send-keys -t jobs G
wait_for jobs 'Jobs: [^┐]*  ([2-9][0-9])-([0-9]+)/\2 '
tmx send-keys -t jobs g
wait_for jobs 'Jobs: [^┐]*  1-10/[0-9]+ '
wait_for jobs '^.a  resnet110-0 '
# the wheel over the job list scrolls it, over the loads it scrolls the loads
mouse_press_until jobs 65 10 22 'Jobs: [^┐]*  [2-9]-[0-9]+/60 '
# in the tune view PgDn/PgUp still page the trials
tmx send-keys -t jobs 1
wait_for jobs 'Trials [0-9]+/60'
quit jobs

# --- narrow screens: the hints that go first are the least needed; how to quit stays ------
start narrow 40 10 xterm-256color "$bin" --pace-ms 100 --no-journal --no-sched
wait_for narrow '^ \? help  1-3 views  : command  q quit *$'
# three panes hidden: their names do not fit, their count does
wait_for narrow '^└─+ 3 panes hidden: 36 rows show them ─┘$'
start tiny 20 6 xterm-256color "$bin" --pace-ms 100 --no-journal --no-sched
wait_for tiny '^ \? help  q quit *$'
# a command longer than the line shows its end, where the typing is; Esc drops it
tmx send-keys -t narrow : p i n ' ' r e s n e t 1 1 0 - 0 ' ' 2 ' ' a n d ' ' m o r e ' ' t e x t ' ' t o ' ' t h e ' ' e n d
wait_for narrow '^:….* more text to the end_ *$'
tmx send-keys -t narrow Escape
wait_for narrow '^ \? help  1-3 views  : command  q quit *$'
# :theme with no name lists the themes there are
tmx resize-window -t narrow -x 160 -y 10
tmx send-keys -t narrow : t h e m e Enter
wait_for narrow '^:theme: expected a theme name \(default, high-contrast, light, .*\) or a file'
# a theme file's bad colour is named by its value ("found a number" said not which)
echo '{"roles": {"tab": {"fg": "white", "bg": 300}}}' > "$tmp/bad-theme.json"
tmx send-keys -t narrow : t h e m e ' '
tmx send-keys -t narrow -l "$tmp/bad-theme.json"
tmx send-keys -t narrow Enter
wait_for narrow "roles\.tab: field 'bg':\$"
wait_for narrow '^expected a colour name .* or a number 0-255, found 300 *$'
# a `:` line as long as a command can be takes no more keys, and says so above it (it
# stopped without a word); the next key that fits clears it
tmx send-keys -t narrow : f i l t e r ' '
tmx send-keys -t narrow -l "$(printf '%0130d' 0)"
wait_for narrow '^the command line is full \(127 bytes, the longest command\): Enter runs it, Esc drops it *$'
wait_for narrow '^:filter 0{120}_ *$'
tmx send-keys -t narrow BSpace
wait_for narrow '^:filter 0{119}_ *$'
not_on_screen narrow 'the command line is full'
tmx send-keys -t narrow Escape
tmx resize-window -t narrow -x 40 -y 10
# smaller than any pane: said, not a blank screen; back to a size that fits, drawn again
tmx resize-window -t tiny -x 12 -y 8
wait_for tiny '^Terminal too$'
tmx resize-window -t tiny -x 20 -y 6
wait_for tiny '^ \? help  q quit *$'
not_on_screen tiny 'Terminal too'
tmx send-keys -t tiny q
wait_for tiny '^Quit\? \(y/n\)'
tmx send-keys -t tiny y
wait_for tiny 'EXITED rc=0'
quit narrow

# --- the log overlay (L): the panes under it do not show beside its border ---------------
start logs 60 15 xterm-256color "$bin" --pace-ms 100 --no-journal --sched-speed 600
wait_for logs 'Trials [0-9]+/60'
tmx send-keys -t logs L
wait_for logs '^ ┌ Log [0-9]+-[0-9]+/[0-9]+ \(Up/Down scroll'
not_on_screen logs '^[┌└│][┌└│]|[┐┘│][┐┘│]$'
tmx send-keys -t logs x
wait_for logs '^ \? help  1-3 views  : command  e edit  Space pause  q quit'
quit logs

# --- the help: what it lists works; when it all shows, any key closes it, Down too --------
start help 100 30 xterm-256color "$bin" --sim G40:googlenet --pace-ms 100 --no-journal --no-sched
wait_for help 'Trials [0-9]+/60'
# a pane the size hides is said on the bottom border, with the size that shows it
wait_for help '^└─+ log hidden: 36 rows show it ─┘$'
tmx send-keys -t help '?'
wait_for help 'Keys \(any key closes\)'
# the box 94 wide at 100 columns: a pane's border, a pane column, the blank margin, its border,
# the blank column inside it
wait_for help '^.. │ cluster Up Down j k +scroll the per-host loads; PgUp PgDn g G: the job list'
# at 90-94 columns the Slurm part broke before "undrain NODE" and "theme NAME;" stood alone
# on its row; a resize leaves the help open, wrapped again: each stays whole on a full row.
# Back at 100 between widths (where the Slurm part follows the drains), so each width's
# rows are read from its own redraw, not the last one's (the Slurm row shows it came).
for cols in 90 91 92 93 94; do
    tmx resize-window -t help -x "$cols" -y 40
    wait_for help '│ +Slurm y/n: drain NODE \[REASON\], undrain NODE +│'
    wait_for help '│ +policy NAME, \(un\)drain NODE; +│'
    not_on_screen help '│ +theme NAME; +│'
    not_on_screen help '│ +undrain NODE +│'
    tmx resize-window -t help -x 100 -y 30
    wait_for help '│ +\(un\)drain NODE; Slurm y/n: drain NODE \[REASON\], undrain NODE +│'
done
tmx send-keys -t help Down
wait_for help 'Surrogate: trial'
not_on_screen help 'Keys \('
# the hosts view: Down and a click select a host, shown by the marker; End the last one
tmx send-keys -t help 3
wait_for help '^.> g2-0 '
tmx send-keys -t help Down Down
wait_for help '^.> g2-2 '
mouse_press_until help 0 10 9 '^.> c4x2-1 '
# the hosts view's a, c, d and u say why they do nothing here (they said nothing)
tmx send-keys -t help a
wait_for help '^a: no host key to accept: no SSH in this session \(the hosts are simulated\)'
tmx send-keys -t help c
wait_for help '^c: nothing to reconnect: no SSH in this session \(the hosts are simulated\)'
tmx send-keys -t help d
wait_for help '^d: drains a Slurm node, and this cluster is not Slurm \(:drain NODE takes'
tmx send-keys -t help End
wait_for help '^.> c4x8-[0-9]+ '
tmx send-keys -t help g
wait_for help '^.> g2-0 '
quit help

# --- terminals it cannot draw on are refused in words, before the screen is taken ---------
start dumb 80 24 dumb "$bin" --pace-ms 100 --no-journal
wait_for dumb "TERM='dumb' cannot place the cursor"
wait_for dumb 'EXITED rc=[1-9]'
start unknown 80 24 no-such-terminal "$bin" --pace-ms 100 --no-journal
wait_for unknown "TERM='no-such-terminal': no such terminal type"
wait_for unknown 'EXITED rc=[1-9]'
# 8 colours (TERM=xterm, screen, linux): the tab bar's white on grey became white on white,
# so the other tabs and the session's state vanished; its text is now black on white
for term in xterm screen; do
    start "c8$term" 80 24 "$term" "$bin" --pace-ms 100 --no-journal --no-sched
    wait_for "c8$term" 'Trials [0-9]+/60'
    tmx capture-pane -p -e -t "c8$term" | head -1 > "$tmp/tabs.txt"
    esc="$(printf '\033')"
    grep -q "${esc}\[37m${esc}\[47m" "$tmp/tabs.txt" && fail "TERM=$term: the tab bar is white on white"
    grep -q "${esc}\[30m${esc}\[47m 2 Cluster " "$tmp/tabs.txt" ||
        fail "TERM=$term: the tab bar is not black on white: $(cat -v "$tmp/tabs.txt")"
    quit "c8$term"
done
# vt100 (no colours) draws and quits
start vt 80 24 vt100 "$bin" --pace-ms 100 --no-journal --no-sched
wait_for vt 'Trials [0-9]+/60'
quit vt
echo "console_screen.sh: ok"
