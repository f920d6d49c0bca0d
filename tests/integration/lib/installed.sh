#!/bin/sh
# Runs an installed tunedeck tree from a folder outside the source and build trees and
# checks it finds its data, themes, man page and completion under its own share folder:
# --version, tune --sim B:googlenet --budget 2, the scheduler on the installed catalogue, a
# trial through the installed sim-trial, the console in tmux. Used by install.sh (a make
# install DESTDIR tree) and deb.sh (the package's files). Argument: the tree's usr folder.
# Prints a FAIL line per problem; exits non-zero if any.
set -u
usr="$1"
tmp="$(mktemp -d)"
. "$(dirname "$0")/tmux.sh"
tmux_screen="$tmp/screen.txt"
cleanup() {
    trap "" HUP INT TERM # a second signal (Ctrl-C, then the runner's TERM) must not cut it short
    tmux_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
export TUNEDECK_STATE_DIR="$tmp/state"
unset TUNEDECK_HOME
fails=0
fail() { echo "installed: FAIL: $*"; fails=$((fails + 1)); }

# From a folder that is neither the source nor the build tree.
mkdir -p "$tmp/elsewhere" && cd "$tmp/elsewhere" || exit 1
td="$usr/bin/tunedeck"
"$td" --version | grep -Eq '^tunedeck [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version: $("$td" --version 2>&1)"
"$td" --help | grep -qF "data, themes, examples: $usr/share/tunedeck (" ||
    fail "the installed tunedeck does not use its share folder: $("$td" --help | tail -1)"
TUNEDECK_HOME="$tmp/home" "$td" --help | grep -qF "examples: $tmp/home (" ||
    fail "TUNEDECK_HOME does not override the share folder"
"$td" tune --sim B:googlenet --budget 2 >"$tmp/tune.out" 2>"$tmp/tune.err" ||
    fail "tune --sim B:googlenet --budget 2 exited $?: $(cat "$tmp/tune.err")"
grep -q "best" "$tmp/tune.out" || fail "tune printed no best schedule: $(cat "$tmp/tune.out")"
"$td" schedule --policy doubling --workload \
    "$usr/share/tunedeck/data/pollux-osdi21/workloads/workload-1.csv" --nodes 4 \
    >"$tmp/sched.out" 2>&1 || fail "schedule on the installed catalogue: $(tail -2 "$tmp/sched.out")"
TUNEDECK_HOME="$tmp/nowhere" "$td" schedule --policy doubling --arrival-mean 60 --jobs 2 \
    >/dev/null 2>"$tmp/home.err" && fail "schedule ran with TUNEDECK_HOME pointing nowhere"
grep -qF "$tmp/nowhere/data/pollux-osdi21" "$tmp/home.err" ||
    fail "TUNEDECK_HOME's catalogue not the one read: $(cat "$tmp/home.err")"
# A helper program and a trial through the installed worker.
"$usr/bin/tunedeck-worker" --blas-core >/dev/null 2>&1 || fail "tunedeck-worker --blas-core"
"$td" tune --sim B:googlenet --launcher local --budget 1 \
    --trial-cmd "'$td' sim-trial B:googlenet" >/dev/null 2>"$tmp/sub.err" ||
    fail "sim-trial through the installed binary: $(cat "$tmp/sub.err")"

# The man page through man's search path, and the completion file sources.
MANWIDTH=80 man -M "$usr/share/man" tunedeck 2>/dev/null | grep -q "EXIT STATUS" ||
    fail "man -M DEST/usr/share/man tunedeck does not show the page"
MANWIDTH=80 man -M "$usr/share/man" tunedeck-worker 2>/dev/null | grep -q "HELPER PROGRAMS" ||
    fail "man tunedeck-worker does not lead to tunedeck(1)"
bash -c ". '$usr/share/bash-completion/completions/tunedeck' && complete -p tunedeck" \
    >/dev/null 2>&1 || fail "the installed completion does not source"
# zsh's completion finds the installed bash one (../../bash-completion/completions).
sh "$(dirname "$0")/zshcomplete.sh" "$usr/share/zsh/vendor-completions" "$usr/bin" \
    '^ready> tunedeck tune --optimizer ?$' 'tunedeck tune --opt' || fail "the installed zsh completion"

# The console in tmux: it draws, its themes come from the installed share folder.
tmux_start c 160 30 \
    "cd '$tmp/elsewhere' && env TERM=xterm-256color LANG=C.UTF-8 XDG_CONFIG_HOME=$tmp/xdg '$td' --pace-ms 100 --no-sched"
wait_for() { # PATTERN: polls the pane for up to 15 s
    tmux_wait c "$1" 15 && return 0
    fail "console: '$1' did not appear: $(cat "$tmp/screen.txt")"
    return 1
}
wait_for '^. +[0-9]+  ok '  # trial 1 is the design probe (pruned); a later one is ok
tmx send-keys -t c : t h e m e ' ' n o p e Enter
wait_for "theme 'nope' not loaded, the current one kept: $usr/share/tunedeck/themes/nope.json"
tmx send-keys -t c : t h e m e ' ' l i g h t Enter
wait_for 'theme light \(saved in '
tmx send-keys -t c q y
wait_for 'EXITED rc=0'

[ $fails -eq 0 ]
