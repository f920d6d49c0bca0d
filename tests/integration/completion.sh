#!/bin/sh
# bash completion (tools/completion/tunedeck.bash): sourced in a real bash, the function
# called with COMP_WORDS/COMP_CWORD as bash sets them, COMPREPLY checked; then zsh's, typed
# into a real zsh in tmux (tests/integration/lib/zshcomplete.sh).
set -u
bin="${TUNEDECK_BIN:?TUNEDECK_BIN names the built tunedeck}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
export TUNEDECK_STATE_DIR="$tmp/state"
command -v bash >/dev/null || { echo "completion: bash missing"; exit 1; }
fails=0
fail() { echo "completion: FAIL: $*"; fails=$((fails + 1)); }

# A session to offer for --resume, and files to offer for --cluster.
"$bin" tune --sim B:googlenet --budget 1 >/dev/null 2>&1 || fail "tune for a session failed"
id="$("$bin" sessions | awk 'NR == 2 { print $1 }')"
[ -n "$id" ] || fail "no session id"
mkdir -p "$tmp/files/sub" && touch "$tmp/files/lab.json" "$tmp/files/other.csv"

# complete WORDS...: the last word is the one being completed; prints COMPREPLY, one a line.
complete_words() {
    PATH="$(dirname "$bin"):$PATH" bash -c '
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _tunedeck
        [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' sh "$root/tools/completion/tunedeck.bash" "$@"
}
expect() { # "what" word-that-must-be-offered WORDS...
    what="$1" want="$2"
    shift 2
    complete_words "$@" >"$tmp/reply" 2>"$tmp/err" || fail "$what: exited $?: $(cat "$tmp/err")"
    grep -qx -- "$want" "$tmp/reply" || fail "$what: '$want' not offered for '$*' (got: $(tr '\n' ' ' <"$tmp/reply"))"
}
refuse() { # "what" word-that-must-not-be-offered WORDS...
    what="$1" bad="$2"
    shift 2
    complete_words "$@" >"$tmp/reply" 2>/dev/null
    grep -qx -- "$bad" "$tmp/reply" && fail "$what: '$bad' offered for '$*'"
}

expect "commands" tune tunedeck t
expect "commands" schedule tunedeck ""
expect "commands" sim-trial tunedeck sim
refuse "commands filter on the prefix" hosts tunedeck t
expect "tune options" --optimizer tunedeck tune --opt
expect "tune options" --trial-timeout tunedeck tune --tr
refuse "tune has no --policy" --policy tunedeck tune --po
expect "console options (no command)" --sched-speed tunedeck --sched
expect "top-level options" --version tunedeck --ver
expect "schedule options" --arrival-mean tunedeck schedule --arr
expect "schedule --live options" --time-scale tunedeck schedule --live --time
refuse "plain schedule has no --time-scale" --time-scale tunedeck schedule --time
expect "hosts options" --gpu-wait tunedeck hosts --gpu
expect "optimizer names" bespoke tunedeck tune --optimizer b
expect "optimizer names" uniform-gpus tunedeck tune --sim B:googlenet --optimizer uniform-g
expect "launcher names" per-host tunedeck tune --launcher p
expect "policy names" doubling-explore tunedeck schedule --policy doubling-
expect "policy names" tiresias tunedeck --policy t
expect "theme names" high-contrast tunedeck --theme h
expect "plot styles" braille tunedeck console --plot b
expect "simulator settings" B:googlenet tunedeck tune --sim B:g
expect "allreduce simulator settings" M1:resnet50 tunedeck tune --sim M1:r
expect "allreduce simulator settings" M3:speechnet tunedeck --sim M3:s
expect "session ids for --resume" "$id" tunedeck tune --resume ""
expect "session ids for --resume" "$id" tunedeck --resume "$(printf %s "$id" | cut -c1-6)"
expect "files for --cluster" "$tmp/files/lab.json" tunedeck tune --cluster "$tmp/files/l"
expect "files for --workload" "$tmp/files/other.csv" tunedeck schedule --workload "$tmp/files/o"
expect "folders for --data" "$tmp/files/sub" tunedeck schedule --data "$tmp/files/s"
refuse "only folders for --data" "$tmp/files/lab.json" tunedeck schedule --data "$tmp/files/l"
complete_words tunedeck tune --budget "" >"$tmp/reply"
[ -s "$tmp/reply" ] && fail "--budget offered values: $(tr '\n' ' ' <"$tmp/reply")"
# the console's live mode takes --checkpoint-file as schedule --live does; a name, not a file here
expect "console --checkpoint-file" --checkpoint-file tunedeck --workload w.csv --checkpoint-f
complete_words tunedeck --workload w.csv --checkpoint-file "" >"$tmp/reply"
[ -s "$tmp/reply" ] && fail "console --checkpoint-file offered values: $(tr '\n' ' ' <"$tmp/reply")"

# The completion is registered for the command name.
PATH="$(dirname "$bin"):$PATH" bash -c '. "$1"; complete -p tunedeck' sh \
    "$root/tools/completion/tunedeck.bash" | grep -q -- '-F _tunedeck tunedeck' ||
    fail "complete -p tunedeck does not name _tunedeck"

# zsh runs the same completion through bashcompinit (tools/completion/_tunedeck).
zsh_expect() { # REGEX LINE
    sh "$root/tests/integration/lib/zshcomplete.sh" "$root/tools/completion" "$(dirname "$bin")" "$1" "$2"
    case $? in 0) ;; 2) fail "zsh is missing (make deps installs it)" ;; *) fails=$((fails + 1)) ;; esac
}
zsh_expect '^ready> tunedeck schedule ?$' 'tunedeck sched'
zsh_expect '^ready> tunedeck tune --optimizer ?$' 'tunedeck tune --opt'
zsh_expect '^ready> tunedeck tune --optimizer uniform-gpus ?$' 'tunedeck tune --optimizer uniform-g'
zsh_expect "^ready> tunedeck tune --resume $id ?\$" 'tunedeck tune --resume '

[ $fails -eq 0 ]
