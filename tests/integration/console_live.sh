#!/bin/sh
# Screen test of `tunedeck --cluster F --workload W`: the console runs the scheduler live on
# 3 loopback sshd hosts (tests/sshd-harness.sh) with tunedeck-worker in job mode as the job
# command (tests/live-inventory.sh, as tests/integration/schedlive.sh), its checkpoint file
# given by --checkpoint-file, not the template. Time runs 30x, so the
# doubling policy starts j0 and j1 at once and resizes j0 2>4 at t=120 s (~4 s). Checks: the
# job list shows a job running on a host with its real step and loss, the decision pane shows
# the resize, q asks, y checkpoints and stops every job, and no job process is left (pgrep).
# No `set -e`: the harness relies on commands that may fail (kill, wait on a killed sshd).
suite=console_live scratch=console-live suite_sshd=1 suite_tmux=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/live-inventory.sh"
tmux_screen="$T/screen.txt"
mark="cl$$x"  # x: pid 12's mark is not part of pid 123's
# a job is the worker with --checkpoint ckpt-MARK (the console's own line has
# --checkpoint-file ckpt-MARK)
suite_reap() { for p in $(pgrep -f -- "--checkpoint ckpt-$mark" 2>/dev/null); do pid_kill_named KILL "$p" "--checkpoint ckpt-$mark"; done; }

fail() { tmux_fail_exit "console_live.sh: FAIL: $*"; }
# wait_for PATTERN [SECONDS]: polls the pane until the extended regex shows.
wait_for() {
    tmux_wait c "$1" "${2:-10}" || fail "'$1' did not appear within ${2:-10} s"
}

harness_init "$T/h"
for i in 1 2 3; do harness_start "$i"; done
harness_inventory "$T/inv.json" 1 2 3
live_inventory "$T/inv.json" "$build/tunedeck-worker" "$mark"
# The job_command names no checkpoint (a script with its own file, here a wrapper that gives
# the worker ckpt-MARK): --checkpoint-file says that file, as schedule --live's does; without
# it the console refuses the template, and with a wrong one nothing resumes
printf '#!/bin/sh\nexec "%s" "$@" --checkpoint "ckpt-%s"\n' "$build/tunedeck-worker" "$mark" \
    > "$T/job.sh"
python3 - "$T/inv.json" "$build/tunedeck-worker" "$mark" "$T/job.sh" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["job_command"] = inv["job_command"].replace(
    "%s --job" % sys.argv[2], "sh %s --job" % sys.argv[4]).replace(
    " --checkpoint ckpt-%s" % sys.argv[3], "")
assert "--checkpoint" not in inv["job_command"], inv["job_command"]
json.dump(inv, open(sys.argv[1], "w"))
PY

tmux_start c 200 50 \
    "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --cluster $T/inv.json --workload $root/tests/fixtures/schedlive-workload.csv --policy doubling --sched-speed 30 --job-dir $T/jobs --checkpoint-file ckpt-$mark"
# no tuning here: the console opens on the cluster view, where the live jobs show (it opened
# on the tune view's "no tuning in this session")
wait_for 'doubling live t=[0-9]+s'
# Space pauses tuning and the simulated scheduler: with neither it is not offered, and says
# so (it logged "paused: no new trial starts" while the jobs ran on, the tab bar "running").
# The hints are the frame's last row: shown whole first, or their absence would prove nothing.
wait_for '^ \? help  1-3 views  .* q quit *$'
not_on_screen c 'Space pause'
tmx send-keys -t c Space
wait_for 'nothing to pause: Space pauses tuning, and there is none here; the live jobs keep running'
wait_for 'live scheduler \| running'
# a job running on a real host with its real progress (step, loss from its lines) and the
# GPU indices it was given (its CUDA_VISIBLE_DEVICES)
wait_for 'j[01] +[0-9]+ +running .* run h[1-3]:[0-9]+\+[0-9]+ step [1-9][0-9]* loss [0-9]+\.[0-9]+' 15
# the policy's resize of j0, enacted through its checkpoint (the --checkpoint-file)
wait_for '[0-9]+s [a-z] j0 +resize 2>4' 15
wait_for 'j0 +4 +running .* run h[1-3]:0\+1,h[1-3]:0\+1 step [0-9]+' 15
# :policy switches the live scheduler's policy at its next decision
tmx send-keys -t c : p o l i c y ' ' f i x e d - 1 Enter
wait_for 'policy fixed-1: applied at the next scheduling decision'
wait_for 'fixed-1 live t=[0-9]+s'
# a small terminal still shows the job list: the GPU grid above it, no per-worker loads
# pane (without tuning it said "no tuning" on every host and hid the jobs under 16 rows)
tmx resize-window -t c -x 60 -y 15
wait_for 'Jobs: [0-9]+/3 done'
wait_for 'j0 +[0-9]+ +[a-z]+'
not_on_screen c 'Tuning workers'
tmx resize-window -t c -x 200 -y 50
# Looked for over a few seconds: fixed-1's first decision resizes j0 and j2 at once, and while
# both are between their checkpoint and their restart no job process runs (a loaded machine
# met that moment: CI, 2026-11-27).
running=0 i=0
while [ "$running" -lt 1 ] && [ "$i" -lt 150 ]; do
    running=$(pgrep -f -- "--checkpoint ckpt-$mark" | wc -l)
    [ "$running" -ge 1 ] || sleep 0.1
    i=$((i + 1))
done
[ "$running" -ge 1 ] || fail "no job process ran on the hosts for 15 s"
tmx send-keys -t c q
wait_for 'Live jobs run: quitting checkpoints and stops them'
tmx send-keys -t c y
wait_for 'EXITED rc=0' 30
left=$(pgrep -f -- "--checkpoint ckpt-$mark" | wc -l)
[ "$left" -eq 0 ] || fail "$left job processes left on the hosts: $(pgrep -af -- "--checkpoint ckpt-$mark")"
ls "$T"/jobs/j0/ckpt-"$mark" > /dev/null 2>&1 || fail "j0 wrote no checkpoint in $T/jobs/j0"

# A run that is over (its one job ended by itself) has nothing to stop: q quits at once (it
# asked "Live jobs run: quitting checkpoints and stops them" with none left).
python3 - "$T/inv.json" "$mark" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
# braces are the template's placeholders: printf writes them from octal; the comment names
# the checkpoint file, which the console takes from the template
inv["job_command"] = ("printf '\\173\"event\": \"progress\", \"step\": 10, \"loss\": 0.7\\175\\n'; "
                      "exit 0 # --checkpoint ckpt-%s" % sys.argv[2])
json.dump(inv, open(sys.argv[1].replace(".json", "-ends.json"), "w"))
PY
tmux_stop
tmux_sock="$tmux_sock-ends" # a server of its own (one whose session just ended can race)
tmux_start c 200 50 \
    "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --cluster $T/inv-ends.json --workload $root/tests/fixtures/schedlive-real.csv --job-dir $T/jobs-ends"
wait_for 'live scheduler \| stopped' 15
tmx send-keys -t c q
wait_for 'EXITED rc=0' 10
echo "console_live.sh: ok ($running job processes ran, none left)"
