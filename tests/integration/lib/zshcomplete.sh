#!/bin/sh
# zsh completion, as a person meets it: an interactive zsh in tmux with FPATH_DIR on its
# fpath and compinit run, a line typed and Tab pressed, the screen read back. Arguments:
# FPATH_DIR BINDIR (where tunedeck is) EXPECTED-REGEX LINE; prints a FAIL line and exits 1
# when the screen never matches. Exits 2 when zsh is missing.
set -u
fp="$1" bindir="$2" want="$3" line="$4"
command -v zsh >/dev/null || exit 2
tmp="$(mktemp -d)"
. "$(dirname "$0")/tmux.sh"
tmux_screen="$tmp/screen"
trap 'tmux_stop; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
tmx new-session -d -s z -x 160 -y 20 \
    "env -i PATH='$bindir':/usr/bin:/bin TERM=xterm HOME='$tmp' TUNEDECK_STATE_DIR='${TUNEDECK_STATE_DIR:-$tmp}' zsh -f"
tmx send-keys -t z "PS1='ready> '; fpath=('$fp' \$fpath); autoload -U compinit && compinit -u -d '$tmp/zcd'; clear" Enter
tmux_wait z '^ready> ?$' 10 || { echo "zsh: FAIL: no prompt: $(cat "$tmp/screen")"; exit 1; }
tmx send-keys -t z "$line" Tab
tmux_wait z "$want" 10 && exit 0
echo "zsh: FAIL: '$line' + Tab never showed '$want': $(grep . "$tmp/screen" | tr '\n' '|')"
exit 1
