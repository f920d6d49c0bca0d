# The console in a real terminal: a private tmux server, its panes read back with
# capture-pane and polled with a deadline (no fixed sleeps), and the server stopped at the
# end. Shared by the screen suites (console*.sh, faults.sh, trust.sh) and lib/installed.sh and
# lib/zshcomplete.sh; sourced, not a suite.
#
# A suite on lib/suite.sh sets suite_tmux=1 and suite.sh sources this file and stops the
# server in its trap; any other suite sources it and calls tmux_stop from its own trap.
# Before the first capture the suite sets tmux_screen, the file each capture is written to
# (its checks grep that file). Optional, set before use:
#   tmux_sock   the server's name (default tunedeck-SUITE-PID); a suite may change it to
#               start a fresh server (lib/console_slurm.sh does, one per console)
#   tmux_join=1 captures join wrapped lines and keep trailing spaces (capture-pane -J), for
#               the suites that read whole log lines
#   tmux_after_exit  shell text run in a pane after its "EXITED rc=N" line (console.sh
#               prints the terminal modes the console left behind)
tmux_sock="${tmux_sock:-tunedeck-$(basename "$0" .sh)-$$}"

# tmx ARGS...: tmux on this suite's own server, with no user configuration.
tmx() { tmux -L "$tmux_sock" -f /dev/null "$@"; }

# tmux_stop: the server and every pane's process stopped, and its socket file removed (tmux
# leaves it behind).
tmux_stop() {
    tmx kill-server 2> /dev/null || : # none running: nothing to stop
    rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$tmux_sock"
}

# tmux_start SESSION COLS ROWS COMMAND: COMMAND (a shell line) in a detached session of that
# size; when it ends the pane prints "EXITED rc=N" and stays, so that its last screen can
# still be read, until the server stops.
tmux_start() {
    tmx new-session -d -s "$1" -x "$2" -y "$3" \
        "$4; echo \"EXITED rc=\$?\"; ${tmux_after_exit:-}sleep 120"
}

# tmux_console SESSION COLS ROWS TERM COMMAND...: tmux_start of the console (COMMAND, run
# from the source tree, where the examples' relative paths resolve) under TERM in UTF-8, with
# a config folder and a state folder of its own (xdg-SESSION and state-SESSION in $T, the
# scratch folder of lib/suite.sh): sessions share no config.json and no journal.
tmux_console() {
    tmux_session="$1" tmux_cols="$2" tmux_rows="$3" tmux_term="$4"
    shift 4
    tmux_start "$tmux_session" "$tmux_cols" "$tmux_rows" "cd '$root'; env TERM=$tmux_term \
LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$T/xdg-$tmux_session \
TUNEDECK_STATE_DIR=$T/state-$tmux_session $*"
}

# tmux_capture SESSION: the pane as a person sees it, in $tmux_screen.
tmux_capture() {
    tmx capture-pane -p ${tmux_join:+-J} -t "$1" > "$tmux_screen" 2> /dev/null
}

# tmux_wait SESSION PATTERN SECONDS [E|F|G]: polls the pane every 0.05 s until grep finds
# PATTERN (E: an extended regex, the default; F: a fixed string; G: a basic regex), at most
# SECONDS*20 polls (longer on a loaded machine, never shorter). Returns 1 when it did not
# show; the last capture stays in $tmux_screen.
tmux_wait() {
    tmux_polls=0
    while [ "$tmux_polls" -lt $(($3 * 20)) ]; do
        tmux_capture "$1" && grep -q"${4:-E}" -- "$2" "$tmux_screen" && return 0
        sleep 0.05
        tmux_polls=$((tmux_polls + 1))
    done
    return 1
}

# tmux_wait_check SESSION SECONDS COMMAND...: polls as tmux_wait does until COMMAND, run on
# each capture (in $tmux_screen), succeeds; returns 1 when it never did, the last capture
# staying in $tmux_screen. For checks of more than one line: the console writes a frame in
# many writes, top to bottom, and tmux can be read between two of them, so the capture that
# first shows one line of a frame may hold the rows below it from the frame before.
tmux_wait_check() {
    tmux_check_session="$1" tmux_check_polls=$(($2 * 20))
    shift 2
    tmux_polls=0
    while [ "$tmux_polls" -lt "$tmux_check_polls" ]; do
        tmux_capture "$tmux_check_session" && "$@" && return 0
        sleep 0.05
        tmux_polls=$((tmux_polls + 1))
    done
    return 1
}

# tmux_wait_gone SESSION PATTERN SECONDS: tmux_wait_check until the extended regex is not on
# the screen (a row written after the line that was waited for, which may still show the
# frame before).
tmux_absent() { ! grep -Eq -- "$1" "$tmux_screen"; }
tmux_wait_gone() { tmux_wait_check "$1" "$3" tmux_absent "$2"; }

# tmux_fail_exit TEXT: for the suites that stop at their first failure: TEXT and the last
# capture on stderr, then exit 1 (the suite's trap stops the server).
tmux_fail_exit() {
    echo "$*" >&2
    echo "---- screen ----" >&2
    cat "$tmux_screen" >&2 2> /dev/null || :
    exit 1
}

# not_on_screen SESSION PATTERN: the suite's fail unless the extended regex is absent.
not_on_screen() {
    tmux_capture "$1"
    if grep -Eq -- "$2" "$tmux_screen"; then fail "session $1: '$2' should not be shown"; fi
}

# mouse_press SESSION BUTTON COL ROW (1-based): an SGR mouse press and release, the form
# xterm-256color's kmous asks for (button 0: the left, 2: the right).
mouse_press() {
    tmx send-keys -t "$1" -l "$(printf '\033[<%d;%d;%dM' "$2" "$3" "$4")"
    tmx send-keys -t "$1" -l "$(printf '\033[<%d;%d;%dm' "$2" "$3" "$4")"
}

# mouse_press_until SESSION BUTTON COL ROW PATTERN: a report split by a busy machine reads as
# a lone Escape (as it would for a person), so the press is repeated a few times, as a person
# would, until the extended regex shows; the suite's fail when it never does.
mouse_press_until() {
    for tmux_attempt in 1 2 3 4 5; do
        mouse_press "$1" "$2" "$3" "$4"
        tmux_wait "$1" "$5" 1 && return 0
    done
    fail "session $1: button $2 at $3,$4 never showed '$5'"
}

# tmux_gone SESSION: the session has ended (its pane's program exited, for a pane started with
# exec).
tmux_gone() { ! tmx has-session -t "$1" 2> /dev/null; }

# tmux_pane_pid SESSION: the pid of the pane's first process (the shell, or the program a
# pane started with exec).
tmux_pane_pid() { tmx display-message -p -t "$1" '#{pane_pid}'; }
