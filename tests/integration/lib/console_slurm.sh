# The console on the Slurm harness (console_slurm.sh, console_slurm_outage.sh), sourced after
# lib/suite.sh (suite_slurm=1 suite_tmux=1); not a suite. These suites stop at their first
# failure, showing the last screen.
#
#   console COMMAND...     the console (a shell line) in a fresh tmux server, session "c":
#                          one server per console, since a new session on a server whose
#                          last session just ended can race with its exit ("server exited
#                          unexpectedly")
#   wait_for PATTERN [SECONDS]   polls the pane until the extended regex shows (10 s at most)
#   ENVS                   the console's environment: TERM, UTF-8, the harness's SLURM_CONF
n_console=0
tmux_sock="tunedeck-$scratch-$$-0"
tmux_screen="$T/screen.txt"

fail() { tmux_fail_exit "$suite.sh: FAIL: $*"; }
wait_for() {
    tmux_wait c "$1" "${2:-10}" || fail "'$1' did not appear within ${2:-10} s"
}
console() {
    tmux_stop
    n_console=$((n_console + 1))
    tmux_sock="tunedeck-$scratch-$$-$n_console"
    tmux_start c 150 40 "$*"
}
ENVS="env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 SLURM_CONF=$T/s/slurm.conf"
