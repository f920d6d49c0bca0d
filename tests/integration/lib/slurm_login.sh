# The Slurm suites' login node and what they poll (slurm.sh, slurm_login.sh, console_slurm.sh,
# console_slurm_outage.sh), sourced after lib/suite.sh (suite_slurm=1, and suite_sshd=1 for
# the login node) once the Slurm harness runs; not a suite (tests/run-integration.sh runs
# only tests/integration/*.sh).
#
#   slurm_login_start    one loopback sshd (tests/sshd-harness.sh in T/h) as the login node;
#                        sets login (its address). A login node finds its cluster through
#                        /etc/slurm; here wrappers first on its PATH (the harness's bin folder)
#                        point the real commands at the harness's config, and scancel writes
#                        its arguments to T/scancel-login first: what was cancelled there.
#   slurm_standins       T/here: stand-ins for Slurm's commands that leave a mark in
#                        T/here/ran and fail, so a command run here instead of on the login
#                        node shows (PATH="$T/here:$PATH").
#   wait_until SECONDS COMMAND...   polls COMMAND every 0.2 s until it succeeds (SECONDS at
#                        most, a bound for failure only); returns its last status.
#   settle MARK          waits (10 s at most) until no job, no step and no process with MARK
#                        in its command line is left (the trial's, and the srun client on the
#                        login node: it carries the trial command); sets left to the
#                        processes still there.

slurm_login_start() {
    harness_init "$T/h"
    harness_start 1
    for c in sinfo squeue scontrol salloc sbatch scancel srun; do
        { echo '#!/bin/sh'
          [ "$c" = scancel ] && echo "echo \"\$*\" >> '$T/scancel-login'"
          echo "SLURM_CONF='$SLURM_CONF' exec /usr/bin/$c \"\$@\""
        } > "$T/h/bin/$c"
        chmod 755 "$T/h/bin/$c"
    done
    login="$(harness_addr 1)"
}

slurm_standins() {
    mkdir -p "$T/here"
    for c in sinfo squeue scontrol salloc sbatch scancel srun; do
        printf '#!/bin/sh\necho %s >> %s/here/ran\nexit 1\n' "$c" "$T" > "$T/here/$c"
        chmod 755 "$T/here/$c"
    done
}

wait_until() {
    _wu_n=$(($1 * 5))
    shift
    while [ "$_wu_n" -gt 0 ] && ! "$@"; do
        sleep 0.2
        _wu_n=$((_wu_n - 1))
    done
    "$@"
}

settle() {
    n=0
    while [ $n -lt 50 ] && { [ -n "$(squeue -h)" ] || [ -n "$(squeue -h -s)" ] ||
                             pgrep -f "$1" > /dev/null; }; do
        sleep 0.2; n=$((n + 1))
    done
    left=$(pgrep -f "$1" | wc -l)
}
