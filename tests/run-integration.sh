#!/bin/sh
# Runs every integration suite (tests/integration/*.sh): real subprocesses, sshd, tmux, Slurm.
# Each suite starts and stops its own processes, with ports, markers and scratch folders of
# its own, so TEST_JOBS of them (default 4) run side by side: most of a suite's time is spent
# waiting on daemons, sessions and timers, not on the two cores. Each suite's output is held
# and printed whole when it ends, with its wall time. TEST_JOBS=1 runs them one by one.
# Arguments: the absolute build folder, then optionally suite names (default: all).
set -eu
build="$1"
shift
here="$(cd "$(dirname "$0")" && pwd)"
jobs="${TEST_JOBS:-4}"
case "$jobs" in '' | *[!0-9]* | 0*) echo "run-integration: TEST_JOBS must be a positive number, not '$jobs'" >&2; exit 2 ;; esac

# The slow suites start first so that the short ones fill the gaps beside them; the wall
# time is then about the longest suite's, not their sum. Keep this list to the suites over
# ~30 s (the printed times say which).
slow_first="slurm_live_jobs slurm_live sanitize slurm_live_outage slurm_live_preempt slurm_live_limits slurm_steps slurm_login console_slurm_outage pytorch fuzz slurm schedlive faults console"

all=""
for suite in "$here"/integration/*.sh; do
    [ -e "$suite" ] && all="$all $(basename "$suite" .sh)"
done
if [ $# -gt 0 ]; then
    for name in "$@"; do
        [ -f "$here/integration/$name.sh" ] || { echo "run-integration: no suite $name (tests/integration/$name.sh)" >&2; exit 2; }
    done
    all=""
    for name in "$@"; do # once each: two runs of a suite would share its log
        case " $all " in *" $name "*) ;; *) all="$all $name" ;; esac
    done
fi
queue=""
for name in $slow_first; do
    case " $all " in *" $name "*) queue="$queue $name" ;; esac
done
for name in $all; do
    case " $slow_first " in *" $name "*) ;; *) queue="$queue $name" ;; esac
done

# Sessions the suites start keep their journals in a scratch folder, not the user's.
state="$(mktemp -d /tmp/td-state.XXXXXX)"
logs="$(mktemp -d /tmp/td-suites.XXXXXX)"
export TUNEDECK_STATE_DIR="${TUNEDECK_STATE_DIR:-$state}"
running=""   # "name:pid" of each suite's watcher under way

# stop_running: TERM to every suite under way (each one's trap stops what it started, once
# the command it is in ends), then what each had printed.
stop_running() {
    for entry in $running; do
        pid=$(cat "$logs/${entry%%:*}.pid" 2>/dev/null) && kill -TERM "$pid" 2>/dev/null || true
    done
    for entry in $running; do
        wait "${entry#*:}" 2>/dev/null || true
        cat "$logs/${entry%%:*}.log" 2>/dev/null
        echo "integration ${entry%%:*}: stopped"
    done
    rm -rf "$state" "$logs"
}
trap 'stop_running; exit 130' INT
trap 'stop_running; exit 143' TERM

# start NAME: the suite in the background, its output in logs/NAME.log, watched by a
# subshell that writes logs/NAME.done (exit status, wall seconds) when it ends. Held output
# would hide a suite that hangs, so none runs past SUITE_LIMIT seconds (the longest takes
# ~2 minutes): timeout TERMs it (its trap cleans up), KILLs it 30 s later. timeout also puts
# the suite in a process group of its own, so a Ctrl-C reaches it once, as the runner's
# TERM. A background command of sh starts with SIGINT ignored, which a suite's shell could
# not undo: env gives it back (some suites send it to what they start).
SUITE_LIMIT=900
start() {
    (
        began=$(date +%s)
        TUNEDECK_BUILD="$build" TUNEDECK_BIN="$build/tunedeck" timeout -k 30 "$SUITE_LIMIT" \
            env --default-signal=INT,QUIT sh "$here/integration/$1.sh" > "$logs/$1.log" 2>&1 < /dev/null &
        echo $! > "$logs/$1.pid"
        rc=0
        wait $! || rc=$?
        echo "$rc $(($(date +%s) - began))" > "$logs/$1.tmp"
        mv "$logs/$1.tmp" "$logs/$1.done"
    ) &
    running="$running $1:$!"
}

# report NAME: prints its output and its line; 1 when it failed.
report() {
    read -r rc seconds < "$logs/$1.done"
    cat "$logs/$1.log"
    if [ "$rc" -eq 0 ]; then
        echo "integration $1: ok ($seconds s)"
        return 0
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "integration $1: FAILED ($seconds s: stopped at the ${SUITE_LIMIT}-second limit)"
    else
        echo "integration $1: FAILED ($seconds s, exit $rc)"
    fi
    return 1
}

failed=0
began=$(date +%s)
set -- $queue
while [ $# -gt 0 ] || [ -n "$running" ]; do
    count=0
    for entry in $running; do count=$((count + 1)); done
    if [ $# -gt 0 ] && [ "$count" -lt "$jobs" ]; then
        start "$1"
        shift
        continue
    fi
    sleep 0.5
    still=""
    for entry in $running; do
        name="${entry%%:*}"
        if [ -f "$logs/$name.done" ]; then
            wait "${entry#*:}" 2>/dev/null || true
            report "$name" || failed=1
        else
            still="$still $entry"
        fi
    done
    running="$still"
done
echo "integration: $(echo $queue | wc -w) suites, $jobs at a time, in $(($(date +%s) - began)) s"
rm -rf "$state" "$logs"
exit $failed
