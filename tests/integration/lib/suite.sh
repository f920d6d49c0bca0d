# The prologue the suites that start daemons or a console share (the Slurm suites slurm.sh,
# slurm_steps.sh, slurm_login.sh, slurm_long.sh, slurm_live*.sh, console_slurm*.sh; the live
# scheduler's multihost.sh and schedlive.sh; the SSH suites remote.sh and trust.sh; the screen
# suites console.sh, console_hosts.sh, console_live.sh, console_resume.sh, console_screen.sh,
# console_stop.sh),
# sourced first; not a suite (tests/run-integration.sh runs only tests/integration/*.sh).
# Before sourcing, a suite sets `suite` (its name, for messages) and `scratch` (its /tmp
# folder's prefix), and what it starts:
#   suite_slurm=1  the private Slurm of tests/slurm-harness.sh; fails (exit 1) when slurm-wlm
#                  or munge is missing; defines slurm_suite_start
#   suite_sshd=1   loopback sshd hosts (tests/sshd-harness.sh; H is empty until harness_init)
#   suite_tmux=1   a private tmux server for the console (lib/tmux.sh; the suite sets
#                  tmux_screen before its first capture)
#
# Sets here (tests/), root, build, bin and T (the scratch folder; KEEP=1 keeps it) and
# TUNEDECK_STATE_DIR (T/state). The trap stops the tmux server (suite_tmux), runs the suite's
# suite_stop (its own processes: a console, a background run), stops every Slurm daemon and
# job and every sshd, then runs suite_reap (what the jobs may leave behind), and removes T.
# Defines pass, fail and check (a suite may redefine fail), and puts lib/ on PYTHONPATH for
# lib/outcheck.py.
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
build="${TUNEDECK_BUILD:-$root/build}"
bin="${TUNEDECK_BIN:-$build/tunedeck}"
if [ -n "${suite_slurm:-}" ] && { ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; }; then
    echo "$suite: slurm-wlm and munge are not installed (make deps)" >&2
    exit 1
fi
T="$(mktemp -d "/tmp/tunedeck-$scratch.XXXXXX")"
[ -d "$T" ] || exit 1
# the harnesses lease their ports (tests/port-lease.sh)
[ -n "${suite_slurm:-}${suite_sshd:-}" ] && . "$here/port-lease.sh"
if [ -n "${suite_slurm:-}" ]; then
    . "$here/slurm-harness.sh"
    unset SLURM_JOB_ID
fi
H=""
if [ -n "${suite_sshd:-}" ]; then
    HARNESS_SRC="$here/sshd-harness.sh"
    . "$here/sshd-harness.sh"
    unset SSH_AUTH_SOCK
fi
[ -n "${suite_tmux:-}" ] && . "$here/integration/lib/tmux.sh"
suite_stop() { :; }
suite_reap() { :; }
cleanup() {
    # a second signal (Ctrl-C reaches the suite, then the runner's TERM) would otherwise end
    # the cleanup half done, leaving daemons behind
    trap '' HUP INT TERM
    [ -n "${suite_tmux:-}" ] && tmux_stop
    suite_stop
    [ -n "${suite_slurm:-}" ] && [ -z "${slurm_all_stopped:-}" ] && slurm_stop_all
    [ -n "$H" ] && harness_stop_all
    suite_reap
    # a slurmd may still be writing
    [ -n "${KEEP:-}" ] || rm -rf "$T" 2> /dev/null || { sleep 1; rm -rf "$T"; }
}
trap cleanup EXIT
# a signal ends the suite (the EXIT trap cleans up); a trap that returned would go on with it
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
export TUNEDECK_STATE_DIR="$T/state"
# the Python checks' shared part (lib/outcheck.py)
export PYTHONPATH="$here/integration/lib${PYTHONPATH:+:$PYTHONPATH}"

fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); }
check() { # check NAME COMMAND...: passes when the command succeeds
    name="$1"; shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

# slurm_suite_start [DIR]: the harness's four nodes in DIR (T/s), started; exit 1 when they do
# not start.
slurm_suite_start() {
    if ! slurm_init "${1:-$T/s}" || ! slurm_start; then
        echo "$suite: the harness did not start" >&2
        exit 1
    fi
}

# slurm_nothing_left: stops the harness and checks that none of its daemons is left. When none
# is, the trap does not stop it again: its scancel, with no controller to answer, would retry
# for 18 s.
slurm_nothing_left() {
    echo "nothing left"
    slurm_stop_all
    left=0
    for f in "$S"/slurmctld.pid "$S"/slurmd-n*.pid; do
        [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && left=$((left + 1))
    done
    check "no Slurm daemon of the harness is left ($left)" [ "$left" -eq 0 ]
    [ "$left" -eq 0 ] && slurm_all_stopped=1
}

# other_job NODE: a job not ours, one GPU of NODE for two minutes, running before this
# returns (5 s at most); prints its id.
other_job() {
    other_id=$(sbatch --parsable -J other -o /dev/null -w "$1" --gres=gpu:1 --wrap 'sleep 120')
    n=0
    while [ $n -lt 50 ] && ! squeue -h -t R -j "$other_id" | grep -q .; do sleep 0.1; n=$((n + 1)); done
    echo "$other_id"
}
. "$here/integration/lib/procs_left.sh"
