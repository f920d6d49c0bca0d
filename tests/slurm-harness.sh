#!/bin/sh
# A private Slurm cluster on this one machine for the tests (sourced, like sshd-harness.sh):
# one munged, one slurmctld and N slurmd daemons on loopback, with fake GPUs (GRES files
# that are links to /dev/null, which Slurm accepts as character devices). Nothing is
# written outside the harness folder; slurm_stop_all stops every daemon it started.
#
#   slurm_init DIR           writes munge key, slurm.conf, gres.conf (a free block of ports,
#                            leased: tests/port-lease.sh, sourced first)
#   slurm_start              starts munged, slurmctld and every slurmd; waits for idle nodes
#   slurm_stop_all           scancels every job, stops the daemons, waits for them to exit
#   slurm_ctld_stop / slurm_ctld_start   the controller alone (a controller that goes away)
#
# SLURM_NODES (default "n[1-4]": n1,n2 with gpu:t4:2, n3,n4 with gpu:v100:4) is fixed here;
# commands find the cluster through SLURM_CONF, exported by slurm_init.
#
# SLURM_EXTRA_NODES=K (opt-in, for bench/slurm_scale.sh: a long node list) declares K more
# nodes x1..xK with no slurmd behind them (8 CPUs, gpu:a100:8) and a partition "wide" of
# n[1-4] and them; without it the cluster is the 4 nodes. SLURM_EXTRA_STATE says how:
#   CLOUD (default): powered-down cloud nodes, listed as idle~ (PrivateData=cloud shows
#     them), never pinged, so their state never changes under a watch; Weight=100 sends jobs
#     to n1..n4 first, but a job that does not fit there would wait on an x node that never
#     powers up (keep the jobs of "wide" small);
#   DOWN: never scheduled, but slurmctld pings them (about 2% of a core at 1,020) and some
#     30 s after start they all turn down* (not responding): a change every watcher sees.
# FUTURE nodes would be hidden from sinfo. Start-up stays under a second with 1,020 nodes.
#
# SLURM_IPV6=1 (opt-in, set before slurm_init; tests/integration/slurm.sh) gives n1 and n2
# NodeAddr=::1 and adds CommunicationParameters=EnableIPv6, without which Slurm 22.05 lists
# them idle but no step starts there (srun: "slurm_set_addr: Unable to resolve "::1"").
# The controller stays on 127.0.0.1, n3 and n4 too.

slurm_init() {
    S="$1"
    mkdir -p "$S/state" "$S/spool" "$S/log" "$S/gpu"
    chmod 700 "$S"
    _slurm_pick_block || return 1
    base=$S_CTLD_PORT
    ln -sf /dev/null "$S/gpu/g0"; ln -sf /dev/null "$S/gpu/g1"
    ln -sf /dev/null "$S/gpu/g2"; ln -sf /dev/null "$S/gpu/g3"
    dd if=/dev/urandom of="$S/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$S/munge.key"
    S_HOST="$(hostname -s)"
    _si_addr12=127.0.0.1
    [ "${SLURM_IPV6:-0}" = 1 ] && _si_addr12=::1
    cat > "$S/slurm.conf" <<CONF
ClusterName=tdtest
SlurmctldHost=$S_HOST(127.0.0.1)
SlurmctldPort=$S_CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge.sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd-%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
SlurmctldTimeout=10
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=n[1-2] NodeHostname=$S_HOST NodeAddr=$_si_addr12 Port=[$((base + 1))-$((base + 2))] CPUs=4 RealMemory=2000 Gres=gpu:t4:2 Feature=t4 State=UNKNOWN
NodeName=n[3-4] NodeHostname=$S_HOST NodeAddr=127.0.0.1 Port=[$((base + 3))-$((base + 4))] CPUs=8 RealMemory=4000 Gres=gpu:v100:4 Feature=v100 State=UNKNOWN
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP
PartitionName=t4 Nodes=n[1-2] MaxTime=INFINITE State=UP
CONF
    _slurm_extra_nodes >> "$S/slurm.conf"
    [ "${SLURM_IPV6:-0}" = 1 ] && echo "CommunicationParameters=EnableIPv6" >> "$S/slurm.conf"
    cat > "$S/gres.conf" <<CONF
NodeName=n[1-2] Name=gpu Type=t4 File=$S/gpu/g[0-1]
NodeName=n[3-4] Name=gpu Type=v100 File=$S/gpu/g[0-3]
CONF
    SLURM_CONF="$S/slurm.conf"
    export SLURM_CONF
}

# The opt-in long node list. The extra nodes share one port of this harness's block of 10
# (nothing listens there), so they never reach another harness's daemons.
_slurm_extra_nodes() {
    _sx_k="${SLURM_EXTRA_NODES:-0}"
    [ "$_sx_k" -gt 0 ] 2>/dev/null || return 0
    _sx_state="${SLURM_EXTRA_STATE:-CLOUD}"
    echo "NodeName=x[1-$_sx_k] NodeHostname=$S_HOST NodeAddr=127.0.0.1 Port=$((S_CTLD_PORT + 9))" \
        "CPUs=8 RealMemory=4000 Gres=gpu:a100:8 Feature=a100 Weight=100 State=$_sx_state"
    echo "PartitionName=wide Nodes=n[1-4],x[1-$_sx_k] MaxTime=INFINITE State=UP"
    [ "$_sx_state" = CLOUD ] && echo "PrivateData=cloud"
    return 0
}

# This harness's block of 10 ports (the controller, four slurmd at +1..+4, the extra nodes' at
# +9; +5..+8 free for a suite's own use, such as a rendezvous port) in 17000..19999, below
# the sshd harness's 20000 and up: one where nothing listens and that no other harness holds,
# since other suites run their own side by side. It is leased (tests/port-lease.sh) from the
# pick until slurm_stop_all: the daemons bind it only after munged starts, and an outage
# suite restarts the controller on it. The first try follows the PID, so two harnesses
# starting in the same second rarely try the same block.
_slurm_pick_block() {
    if ! command -v port_lease > /dev/null 2>&1; then
        echo "slurm harness: source tests/port-lease.sh before this file" >&2
        return 1
    fi
    port_lease_release slurm # a second slurm_init in one run: the first block goes back
    _sb_try=0
    while [ "$_sb_try" -lt 300 ]; do
        S_CTLD_PORT=$((17000 + (($$ + _sb_try * 37) % 300) * 10))
        _pl_rc=0
        port_lease slurm "$S_CTLD_PORT" $((S_CTLD_PORT + 9)) || _pl_rc=$? # set -e callers
        case $_pl_rc in 0) return 0 ;; 2) return 1 ;; esac
        _sb_try=$((_sb_try + 1))
    done
    echo "slurm harness: no free block of 10 ports in 17000..19999" >&2
    return 1
}

_slurm_wait_pidfile() {
    n=0
    while [ $n -lt 100 ] && ! [ -s "$1" ]; do sleep 0.1; n=$((n + 1)); done
}

slurm_ctld_start() {
    slurmctld -f "$S/slurm.conf" -i 2>> "$S/log/slurmctld.err" || return 1
    _slurm_wait_pidfile "$S/slurmctld.pid"
    n=0
    while [ $n -lt 100 ] && ! scontrol ping 2>/dev/null | grep -q UP; do sleep 0.1; n=$((n + 1)); done
}

# _slurm_ours PID: PID is still a daemon of this harness, its command line naming $S (the
# daemons are not this shell's children: init reaps them, and a pid file outlives its daemon,
# whose number may be another suite's process by the time the stop reads it; pid_max is 32768
# here and a full run goes through it in a minute or so). A zombie's reads empty: not ours.
_slurm_ours() {
    tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline" | grep -qF -- "$S/"
}

slurm_ctld_stop() {
    if [ -s "$S/slurmctld.pid" ]; then
        pid=$(cat "$S/slurmctld.pid")
        _slurm_ours "$pid" && kill -TERM "$pid" 2>/dev/null
        n=0
        while [ $n -lt 100 ] && _slurm_ours "$pid"; do sleep 0.1; n=$((n + 1)); done
        _slurm_ours "$pid" && kill -KILL "$pid" 2>/dev/null
        rm -f "$S/slurmctld.pid"
    fi
}

slurm_start() {
    munged --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
        --log-file="$S/log/munged.log" --seed-file="$S/munge.seed" --force 2>> "$S/log/munged.err" ||
        return 1
    _slurm_wait_pidfile "$S/munged.pid"
    slurm_ctld_start || return 1
    for i in 1 2 3 4; do
        mkdir -p "$S/spool/n$i"
        slurmd -f "$S/slurm.conf" -N "n$i" 2>> "$S/log/slurmd.err" || return 1
    done
    n=0
    while [ $n -lt 150 ]; do
        idle=$(sinfo -h -N -p debug -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
        [ "$idle" -ge 4 ] && return 0
        sleep 0.1; n=$((n + 1))
    done
    echo "slurm harness: nodes did not come up idle (see $S/log)" >&2
    sinfo -N >&2
    return 1
}

slurm_stop_all() {
    [ -n "${S:-}" ] || return 0
    scancel --user=root --full 2>/dev/null
    for i in 1 2 3 4; do
        f="$S/slurmd-n$i.pid"
        [ -s "$f" ] && _slurm_ours "$(cat "$f")" && kill -TERM "$(cat "$f")" 2>/dev/null
    done
    slurm_ctld_stop
    for i in 1 2 3 4; do
        f="$S/slurmd-n$i.pid"
        if [ -s "$f" ]; then
            pid=$(cat "$f"); n=0
            while [ $n -lt 50 ] && _slurm_ours "$pid"; do sleep 0.1; n=$((n + 1)); done
            _slurm_ours "$pid" && kill -KILL "$pid" 2>/dev/null
        fi
    done
    # steps slurmstepd left behind (their parent slurmd is gone)
    for p in $(pgrep -f "slurmstepd.*" 2>/dev/null); do
        grep -qs "$S" "/proc/$p/environ" && kill -KILL "$p" 2>/dev/null
    done
    [ -s "$S/munged.pid" ] && _slurm_ours "$(cat "$S/munged.pid")" &&
        kill -TERM "$(cat "$S/munged.pid")" 2>/dev/null
    port_lease_release slurm
}
