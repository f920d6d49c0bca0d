#!/bin/sh
# tests/sshd-harness.sh signals only its own sshd listeners. A listener harness_stop stopped
# is reaped then, and its number may go to another process, another suite's (pid_max is 32768
# here, and a full run with TEST_JOBS suites side by side goes through it in a minute or so);
# harness_stop_all at a suite's end once SIGKILLed every number the suite had started, the
# long stopped ones too. Here the stopped listener's number is handed at once to a new process
# of this suite (through /proc/sys/kernel/ns_last_pid, root only), which must outlive
# harness_stop_all.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
T="$(mktemp -d /tmp/tunedeck-sshd-harness.XXXXXX)"
. "$here/port-lease.sh"
HARNESS_SRC="$here/sshd-harness.sh"
. "$here/sshd-harness.sh"
VICTIM=""
cleanup() {
    harness_stop_all
    # the stand-in, only while it is still this shell's `sleep 300`
    if [ -n "$VICTIM" ] && [ "$(ps -o ppid= -p "$VICTIM" 2>/dev/null | tr -d ' ')" = $$ ] &&
        [ "$(tr '\0' ' ' 2>/dev/null < "/proc/$VICTIM/cmdline")" = "sleep 300 " ]; then
        kill -KILL "$VICTIM" 2>/dev/null
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); }

if [ ! -w /proc/sys/kernel/ns_last_pid ]; then
    echo "sshd_harness: skipped: /proc/sys/kernel/ns_last_pid is not writable (needs root)"
    exit 0
fi
harness_init "$T/h" || exit 1
harness_start 1 || exit 1
old=$(cat "$T/h/sshd1.pid")
harness_stop 1

# The next pid the kernel gives is ns_last_pid + 1, unless another process forks in between
# (the machine is shared): try again then, each miss stopped at once.
tries=0
while [ $tries -lt 500 ]; do
    echo $((old - 1)) > /proc/sys/kernel/ns_last_pid
    sleep 300 &
    VICTIM=$!
    [ "$VICTIM" = "$old" ] && break
    kill -KILL "$VICTIM"; wait "$VICTIM" 2>/dev/null; VICTIM=""
    tries=$((tries + 1))
done
if [ -z "$VICTIM" ]; then
    echo "sshd_harness: skipped: pid $old went to other processes $tries times"
    exit 0
fi

harness_stop_all
# The suites' own check (lib/procs_left.sh) on the listener's number, as a suite would signal
# a pid it kept: the process that took the number is not the one it names.
. "$here/integration/lib/procs_left.sh"
pid_kill_named KILL "$old" "-f $T/h/sshd1.conf "
pid_kill_env KILL "$old" "SSH_ORIGINAL_COMMAND=none"
# Ours to end now: a TERM ends it with 143, unless harness_stop_all's KILL came first (137).
kill -TERM "$VICTIM" 2>/dev/null
wait "$VICTIM" 2>/dev/null
rc=$?
VICTIM=""
if [ "$rc" -eq 143 ]; then
    pass "harness_stop_all and pid_kill_named leave alone the process that took a stopped listener's pid ($old)"
else
    fail "harness_stop_all or pid_kill_named killed the process that took a stopped listener's pid $old (exit $rc)"
fi
[ "$fails" -eq 0 ]
