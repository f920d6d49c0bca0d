# Sourced by the suites that check no process is left behind (lib/suite.sh, pytorch.sh,
# worker.sh) or stop what a run left (faults.sh, journal.sh); not a suite.
# procs_left PATTERN: how many processes whose command line holds PATTERN are left, once those
# on their way out are gone: asked again every 0.1 s for up to 10 s while any is there. A
# process a stop missed outlives that (the suites' jobs run until stopped), and a loaded
# machine that is slow to reap one that was stopped is not taken for a leftover.
procs_left() {
    n=0
    while [ "$n" -lt 100 ] && pgrep -f -- "$1" > /dev/null 2>&1; do
        sleep 0.1; n=$((n + 1))
    done
    pgrep -f -- "$1" 2>/dev/null | wc -l
}

# running_pid PID: PID is a process that has not ended: there, and not a zombie. kill -0 answers
# for a zombie too, and a process orphaned on its way (its shell died with sshd) waits as one
# for this machine's init to reap it: about a second here (measured idle: 0.95 to 1.2 s), more
# under load. A stop counts it stopped (remote/ssh/groupstop.h), and so must a check after one.
running_pid() {
    case "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)" in '' | Z*) return 1 ;; esac
    return 0
}

# group_kill_marked PGID PATTERN: SIGKILL to process group PGID, only while a process of it
# still holds PATTERN in its command line. A group a journal or pid file recorded earlier may
# be gone, and its number taken by another suite's group (pid_max is 32768 here, and a full
# run goes through it): a bare kill -- -PGID at a suite's end once ended console_stop.sh, run
# beside faults.sh, with SIGKILL.
group_kill_marked() {
    # No "--" before the group: dash's kill reads it as a number and fails (exit 2), which
    # under set -e ended the caller's cleanup there, the group left running. A group gone
    # between the pgrep and the kill is not a failure either.
    if [ "$1" -gt 1 ] 2>/dev/null && pgrep -g "$1" -f -- "$2" > /dev/null 2>&1; then
        kill -KILL "-$1" 2>/dev/null || :
    fi
    return 0
}

# pid_kill_named SIG PID TEXT: signal SIG (a name kill takes; 0 asks only) to PID only while its
# command line holds TEXT (a fixed string); exit 0 when it was sent. pid_kill_env SIG PID ENTRY:
# the same while its environment holds the entry ENTRY (NAME=VALUE) whole, for a process whose
# command line names nothing of the suite's own (a console on the simulator). A pid read from a
# file, from $!, or from a pgrep a moment ago may be a process that has ended (the shell reaps
# its background jobs by itself), its number taken since by another suite's process: pid_max is
# 32768 here, and a full run goes through it in a minute or so. The look and the kill are two
# steps, as harness_is_ours's are (tests/sshd-harness.sh): a process that ends between them
# leaves a window of microseconds, not the seconds to minutes a stored pid is kept.
pid_kill_named() {
    case "$2" in '' | *[!0-9]*) return 1 ;; esac
    tr '\0' ' ' 2>/dev/null < "/proc/$2/cmdline" | grep -qF -- "$3" || return 1
    kill "-$1" "$2" 2>/dev/null
}
pid_kill_env() {
    case "$2" in '' | *[!0-9]*) return 1 ;; esac
    tr '\0' '\n' 2>/dev/null < "/proc/$2/environ" | grep -qxF -- "$3" || return 1
    kill "-$1" "$2" 2>/dev/null
}
