#!/bin/sh
# The console on a real private Slurm 22.05 (tests/slurm-harness.sh: n1,n2 gpu:t4:2, n3,n4
# gpu:v100:4), in a real tmux: `--slurm --workload` runs the live scheduler's job as a batch
# job, the cluster view's GPU grid shows the GPUs Slurm granted it and another user's job as
# foreign, and quitting checkpoints it and leaves no job of ours; the hosts view shows
# Slurm's nodes and queue (a pending job's reason), `:drain NODE` asks and then drains it in
# Slurm, an operator without Slurm's rights (nobody) is refused with Slurm's own error, and
# through a login node (a loopback sshd) the hosts view, a drain, a tuning session quit
# mid-trial, and one through the login node's outage (its log says it is down and new trials
# wait, then that it answers again). A tuning session that lives through slurmctld going away is
# console_slurm_outage.sh. The trap stops every daemon, job and terminal it started.
set -u
suite=console_slurm scratch=cslurm suite_slurm=1 suite_sshd=1 suite_tmux=1
. "$(dirname "$0")/lib/suite.sh"
. "$here/integration/lib/slurm_login.sh"
. "$here/integration/lib/console_slurm.sh"

slurm_init "$T/s"
slurm_start || fail "the Slurm harness did not start"

# ---- --slurm --workload: the live scheduler's jobs are batch jobs; the grid is what Slurm
# granted, other users' jobs foreign ----
mark="csl$$x" # x after the PID: "csl123x" is no prefix of a run beside it with PID 1234
jobcmd="$build/tunedeck-worker --job --gpus {gpus} --hosts {hosts} --checkpoint ckpt-$mark --resume {resume} --model-mb 0.02 --batch 64 --progress-every 0.25 --step-sleep 0.01"
printf 'name,time,application,num_replicas,batch_size\nsolo,0,cifar10,1,128\n' > "$T/solo.csv"
other=$(other_job n2)
console "$ENVS XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --slurm --partition t4 --workload $T/solo.csv --job-command '$jobcmd' --policy doubling --sched-speed 30 --job-dir $T/jobs"
wait_for 'doubling live t=[0-9]+s' 15 # opens on the cluster view: no tuning here
# solo runs on the GPUs Slurm granted it (n1, beside the other job on n2), read back from
# scontrol; the grid draws them as solo's (a), and the other job's GPU as foreign, with its
# legend in the title
wait_for 'solo +[0-9]+ +running .* run n1:0(\+1)? step [1-9][0-9]*' 30
wait_for 'GPUs: [12]/4 held, 1 (▒|#) other users. jobs' 10
# the grid's rows are written after the title that says so (a frame comes in many writes):
# waited for, not read from the capture that showed the title
tmux_wait c 'n1 +a' 10 || fail "solo is not on n1 in the grid"
tmux_wait c 'n2 +(▒·|·▒|#\.|\.#)' 10 || fail "the other job's GPU is not foreign on n2"
gpu=$(scontrol show -d job "$other" | sed -n 's/.*GRES=gpu[^(]*(IDX:\([0-9]\)).*/\1/p' | head -1)
if [ "$gpu" = 0 ]; then tmux_wait c 'n2 +(▒·|#\.)' 10 || fail "foreign is not GPU 0 of n2"
else tmux_wait c 'n2 +(·▒|\.#)' 10 || fail "foreign is not GPU 1 of n2"; fi
# :drain n1 in Slurm under solo: the live scheduler reads it at its next tick, solo
# checkpoints and moves to the GPU of n2 the other job leaves; the grid follows Slurm's
# grant, nothing of ours stays on n1. :undrain n1 makes it usable again.
tmx send-keys -t c ':drain n1 tdtest' Enter y
wait_for 'slurm: drain n1 done' 10
wait_for 'n1 is draining in Slurm \(reason: tunedeck: tdtest\): its runs move' 15
wait_for 'solo: run 2 on n2 \(1 GPU\) resumed at step [0-9]+' 30
wait_for 'n2 +(a▒|▒a|a#|#a)' 15
grep -qE 'n1 +a' "$T/screen.txt" && fail "solo is still drawn on n1 after the drain"
[ -z "$(squeue -h -w n1 -o %i)" ] || fail "a job is left on the drained n1"
tmx send-keys -t c ':undrain n1' Enter y
wait_for 'n1 is usable again' 15
tmx send-keys -t c q
wait_for 'Live jobs run: quitting checkpoints and stops them'
tmx send-keys -t c y
wait_for 'EXITED rc=0' 30
mine="$(squeue -h -o '%i %j' | grep -v "^$other ")"
[ -z "$mine" ] || fail "a job of ours is left: $mine"
[ -n "$(squeue -h -j "$other" 2> /dev/null)" ] || fail "the other user's job was touched"
scancel "$other"
tmux_stop # its pane's command line names the job command too
n=0
while [ $n -lt 50 ] && pgrep -f "ckpt-$mark" > /dev/null; do sleep 0.2; n=$((n + 1)); done
pgrep -f "ckpt-$mark" > /dev/null && fail "a job process is left"
ls "$T"/jobs/solo*/ckpt-$mark* > /dev/null 2>&1 || ls -R "$T/jobs" | grep -q "ckpt-$mark" ||
    fail "solo wrote no checkpoint on quit"
echo "  ok   --workload on Slurm: the grid shows Slurm's grant and another user's job as foreign; :drain moves the run off the node; quit checkpoints, no job left"

# ---- watching: nodes, queue, drain ----
watch_start=$(date +%s)
console "$ENVS XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --slurm"
# Slurm watched, no tuning: the console opens on the hosts view, Slurm's nodes and queue (it
# opened on the tune view, which said "2 shows the live scheduler": there was none)
wait_for 'Slurm nodes: 4 \(4 idle, 0 mixed, 0 alloc, 0 drain, 0 down\)' 15
wait_for 'controller \(here\): answering'
wait_for '> n1 +idle +idle +0/4 +2000 t4:2'
wait_for '  n3 +idle +idle +0/8 +4000 v100:4'
sbatch -o /dev/null -J hold -w n3 --gres=gpu:v100:4 -n 1 --wrap 'sleep 300' > /dev/null
# a job name longer than its 20 columns is cut around an ellipsis (it pushed the reason out
# of its column)
sbatch -o /dev/null -J waits-for-the-v100-node-long-name -w n3 --gres=gpu:v100:4 -n 1 \
    --wrap 'sleep 300' > /dev/null
wait_for 'Slurm queue: 2 jobs, 1 pending' 20
wait_for 'root +PENDING +1 gres:gpu:v100:4 +waits-for…-long-name Resources'
wait_for 'n3 +mixed +mixed +1/8'
# a well-formed name no node has is not "expected a Slurm node name": the cluster has no
# such node, and its nodes are named
tmx send-keys -t c ':drain n9' Enter
wait_for ":drain: 'n9' is not a node of this cluster \(its nodes: n1, n2, n3, n4\)"
tmx send-keys -t c ':drain' Enter
wait_for ":drain: expected a Slurm node name \(e.g. n1\), found nothing"
# an undrain of a node Slurm lists idle has nothing to undo: said, and not asked (it asked,
# and scontrol refused it after the yes)
tmx send-keys -t c ':undrain n1' Enter
wait_for ":undrain: n1 is not drained or down in Slurm \(it lists it idle; nothing done\)"
tmx send-keys -t c ':drain n4 fan test' Enter
wait_for 'Drain n4 in Slurm \(scontrol update NodeName=n4 State=DRAIN Reason="tunedeck: fan test"\)'
tmx send-keys -t c n
wait_for 'drain n4: not asked'
# At the default 100 columns the question is longer than the line: it takes the row above,
# its answers in sight (they were cut: "...no new jo…"); narrower still, its short form.
tmx resize-window -t c -x 100 -y 30
tmx send-keys -t c ':drain n4 fan test' Enter
wait_for 'there\. Drain\? \(y/n\)'
tmx send-keys -t c n
wait_for 'drain n4: not asked'
tmx resize-window -t c -x 50 -y 20
tmx send-keys -t c ':drain n4 fan test' Enter
wait_for '^Drain n4\? \(y/n\)'
tmx send-keys -t c n
wait_for 'drain n4: not asked'
tmx resize-window -t c -x 150 -y 40
[ "$(sinfo -h -n n4 -o %T | sort -u)" = idle ] || fail "n4 was drained without a yes"
tmx send-keys -t c ':drain n4 fan test' Enter y
wait_for 'slurm: drain n4 done'
wait_for 'n4 +drain +(drained|draining) .*tunedeck: fan test' 10
[ "$(sinfo -h -n n4 -o %E | sort -u)" = "tunedeck: fan test" ] || fail "Slurm does not have the reason"
tmx send-keys -t c j j j # the selection to n4; u offers its undrain on the command line
wait_for '> n4 +drain'
tmx send-keys -t c u
wait_for '^:undrain n4_'
tmx send-keys -t c Enter
wait_for 'Return n4 to service in Slurm \(scontrol update NodeName=n4 State=RESUME\)'
tmx send-keys -t c y
wait_for 'slurm: undrain n4 done'
wait_for '[ >] n4 +idle +idle' 10
# At most one controller call a second: the panel counts them (the inventory's sinfo, the
# rounds, and the two scontrol updates the operator asked for).
wait_for 'answering; next look in [0-9]+ s .*, [0-9]+ calls so far'
calls=$(sed -n 's/.*, \([0-9]*\) calls so far.*/\1/p' "$T/screen.txt" | head -1)
took=$(( $(date +%s) - watch_start ))
[ "$calls" -le $((took + 5)) ] || fail "$calls controller calls in $took s"
tmx send-keys -t c q
wait_for 'EXITED rc=0'
scancel -n hold
scancel -n waits-for-the-v100-node-long-name
# n3 idle again before the next section checks that it still is (a cancelled job stays
# COMPLETING up to KillWait, and n3 with it)
no_job() { [ -z "$(squeue -h)" ]; }
wait_until 60 no_job || fail "the jobs hold and waits are not gone: $(squeue -h)"
# and every node plain idle: backfill may leave n3 PLANNED for waits a while after it is gone
all_idle() { [ "$(sinfo -h -N -o %T | sort -u)" = idle ]; }
wait_until 60 all_idle || fail "the nodes are not all idle again: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
echo "  ok   watching: nodes, queue with its pending reason, drain asked then done, undrain ($calls calls in $took s)"

# ---- an operator without Slurm's rights (nobody): Slurm's refusal, quoted ----
if command -v setpriv > /dev/null && id nobody > /dev/null 2>&1; then
    mkdir -p "$T/nobody"
    chmod 777 "$T/nobody"
    chmod 711 "$T" "$T/s" # the munge socket and slurm.conf within reach, the key not
    nid="$(id -u nobody)"
    ngid="$(id -g nobody)"
    console "$ENVS XDG_CONFIG_HOME=$T/nobody setpriv --reuid=$nid --regid=$ngid --clear-groups $bin --slurm --no-journal"
    tmx send-keys -t c 3
    wait_for 'Slurm nodes: 4 ' 15
    tmx send-keys -t c ':drain n3' Enter y
    wait_for 'drain n3 refused by Slurm: slurm_update error: Invalid user id \(needs root' 15
    # no DRAIN flag on n3 (its state may still carry PLANNED from the jobs cancelled above,
    # which backfill clears in its own time: "idle" alone failed once on IDLE+PLANNED)
    n3_state=$(scontrol show node n3 | sed -n 's/.* State=\([^ ]*\).*/\1/p')
    case "$n3_state" in IDLE*) case "$n3_state" in *DRAIN*) fail "nobody drained n3 ($n3_state)" ;; esac ;;
    *) fail "nobody drained n3: n3 is $n3_state, expected IDLE without DRAIN" ;; esac
    tmx send-keys -t c q
    wait_for 'EXITED rc=0'
    chmod 700 "$T" "$T/s"
    echo "  ok   a drain without Slurm's rights is refused with Slurm's error"
else
    echo "  skip the refusal as nobody (no setpriv or no nobody user)"
fi

# ---- through a login node: the rounds go over one SSH session, on the console's loop ----
slurm_login_start
printf '{"name": "tdtest", "backend": "slurm", "login": "%s",
 "ssh": {"user": "root", "port": %s, "identity": "%s/id_ed25519",
         "known_hosts": "%s/known_hosts", "connect_timeout_s": 5}}\n' \
    "$login" "$H_PORT" "$T/h" "$T/h" > "$T/inv-login.json"
console "env -u SLURM_CONF TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --cluster $T/inv-login.json"
tmx send-keys -t c 3
wait_for "controller \($login\): answering" 20
wait_for 'Slurm nodes: 4 \(4 idle' 30 # a look every 8 s at most once nothing changes
tmx send-keys -t c ':drain n2 via login' Enter y
wait_for 'slurm: drain n2 done' 15
[ "$(sinfo -h -n n2 -o %E | sort -u)" = "tunedeck: via login" ] || fail "the drain did not reach Slurm through the login node"
tmx send-keys -t c ':undrain n2' Enter y
wait_for 'slurm: undrain n2 done' 15
tmx send-keys -t c q
wait_for 'EXITED rc=0'
echo "  ok   through a login node: the nodes, a drain and an undrain over its SSH session"

# Tuning through the login node, quit mid-trial: salloc, srun and the scancel of the running
# trial's step all go over the SSH session (here, Slurm's commands are stand-ins that leave
# a mark); nothing is left on the cluster.
slurm_standins
sed 's/"backend": "slurm",/"backend": "slurm", "partition": "t4",/' "$T/inv-login.json" \
    > "$T/inv-login-t4.json"
printf '{"name": "tiny", "model_mb": 10, "batch": 64, "iterations": 4, "warmup": 1}\n' > "$T/job.json"
console "env -u SLURM_CONF PATH=$T/here:$PATH TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --cluster $T/inv-login-t4.json --job $T/job.json --trial-cmd 'python3 $root/tests/fixtures/trial.py 30 clogin-$$x' --optimizer random --budget 3"
n=0
while [ $n -lt 150 ] && ! pgrep -f "^python3 [^ ]*trial.py 30 clogin-$$x" > /dev/null; do
    sleep 0.2; n=$((n + 1))
done
[ -n "$(squeue -h -s -o %j | grep tunedeck-trial)" ] || fail "no trial step ran through the login node"
tmx send-keys -t c q
sleep 0.5
tmx send-keys -t c y
wait_for 'EXITED rc=0' 40
tmux_stop # its pane's command line names the trial command too
n=0
while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f "clogin-$$x" > /dev/null; }; do
    sleep 0.2; n=$((n + 1))
done
[ -z "$(squeue -h)" ] || fail "a job is left after quitting mid-trial: $(squeue -h)"
[ -z "$(pgrep -f "clogin-$$x")" ] || fail "a trial process is left after quitting mid-trial"
[ ! -e "$T/here/ran" ] || fail "a Slurm command ran here: $(cat "$T/here/ran")"
echo "  ok   tuning through the login node, quit mid-trial: the step is cancelled there, no job or process left"

# Tuning through the login node while its sshd goes away and comes back: the log pane says
# the login node is down and that new trials wait for it, then that it answers again, and
# the session goes on to its budget; nothing is left on the cluster.
console "env -u SLURM_CONF PATH=$T/here:$PATH TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$T/xdg TUNEDECK_STATE_DIR=$T/state $bin --cluster $T/inv-login-t4.json --job $T/job.json --trial-cmd 'python3 $root/tests/fixtures/trial.py 2 cout-$$x' --optimizer random --budget 4"
wait_until 60 pgrep -f "^python3 [^ ]*trial.py 2 cout-$$x" > /dev/null ||
    fail "no trial ran through the login node"
harness_stop 1
wait_for 'login node [^ ]+: down \(retry in [0-9.]+ s\): ssh to [^ ]+ failed: .*new trials wait' 30
harness_start 1 || fail "the login node's sshd did not start again"
wait_for 'login node [^ ]+ answers again: new trials go on' 60
wait_for '4/4 \| best [0-9.]+ s \| done' 90
tmx send-keys -t c q
sleep 0.5
tmx send-keys -t c y
wait_for 'EXITED rc=0' 40
tmux_stop
n=0
while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || pgrep -f "cout-$$x" > /dev/null; }; do
    sleep 0.2; n=$((n + 1))
done
[ -z "$(squeue -h)" ] || fail "a job is left after the login node's outage: $(squeue -h)"
[ -z "$(pgrep -f "cout-$$x")" ] || fail "a trial process is left after the login node's outage"
echo "  ok   tuning through the login node while it is down: the log says so and that new trials wait, then that it answers again; the session ends its budget, nothing left"
harness_stop_all
H=""
echo "console_slurm.sh: ok"
