#!/bin/sh
# zsh completion, as a person meets it: an interactive zsh in tmux with FPATH_DIR on its
# fpath and compinit run, a line typed and Tab pressed, the screen read back. Arguments:
# FPATH_DIR BINDIR (where tunedeck is) EXPECTED-REGEX LINE; prints a FAIL line and exits 1
# when the screen never matches. Exits 2 when zsh is missing.
set -u
fp="$1" bindir="$2" want="$3" line="$4"
command -v zsh >/dev/null || exit 2
tmp="$(mktemp -d)"
sock="tunedeck-zsh-$$"
T() { tmux -L "$sock" -f /dev/null "$@"; }
# (tmux leaves its socket file behind; it is removed with the server)
trap 'T kill-server 2>/dev/null; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"; rm -rf "$tmp"' EXIT INT TERM
T new-session -d -s z -x 160 -y 20 \
    "env -i PATH='$bindir':/usr/bin:/bin TERM=xterm HOME='$tmp' TUNEDECK_STATE_DIR='${TUNEDECK_STATE_DIR:-$tmp}' zsh -f"
T send-keys -t z "PS1='ready> '; fpath=('$fp' \$fpath); autoload -U compinit && compinit -u -d '$tmp/zcd'; clear" Enter
i=0
until T capture-pane -p -t z | grep -Eq '^ready> ?$'; do
    i=$((i + 1))
    [ $i -lt 200 ] || { echo "zsh: FAIL: no prompt: $(T capture-pane -p -t z)"; exit 1; }
    sleep 0.05
done
T send-keys -t z "$line" Tab
i=0
while [ $i -lt 200 ]; do
    T capture-pane -p -t z >"$tmp/screen"
    grep -Eq -- "$want" "$tmp/screen" && exit 0
    sleep 0.05
    i=$((i + 1))
done
echo "zsh: FAIL: '$line' + Tab never showed '$want': $(grep . "$tmp/screen" | tr '\n' '|')"
exit 1
