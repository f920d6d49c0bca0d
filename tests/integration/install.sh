#!/bin/sh
# make install into a DESTDIR tree, then the installed programs run from a folder outside
# the source tree and find their data, themes and examples under PREFIX/share/tunedeck:
# --version, a tuning session, the scheduler on the installed catalogue, the console in
# tmux, the man page through man's own search path (tests/integration/lib/installed.sh);
# the installed example inventories (lab-cluster, pytorch-cluster) tuned from another folder;
# install-node installs only the worker; make uninstall removes every file.
set -u
bin="${TUNEDECK_BIN:?TUNEDECK_BIN names the built tunedeck}"
build="${TUNEDECK_BUILD:-$(dirname "$bin")}"
suite=install
. "$(dirname "$0")/lib/make_suite.sh"

dest="$tmp/dest"
make -s -C "$root" BUILD="$build" install DESTDIR="$dest" PREFIX=/usr >"$tmp/make.out" 2>&1 ||
    fail "make install: $(tail -5 "$tmp/make.out")"
for f in bin/tunedeck bin/tunedeck-worker bin/tunedeck-rexec bin/tunedeck-jobctl \
    share/tunedeck/data/pollux-osdi21/traces share/tunedeck/themes/default.json \
    share/tunedeck/examples/lab-cluster.json share/tunedeck/tools/python/tunedeck_trial.py \
    share/man/man1/tunedeck.1 \
    share/man/man1/tunedeck-worker.1 share/bash-completion/completions/tunedeck \
    share/zsh/vendor-completions/_tunedeck; do
    [ -e "$dest/usr/$f" ] || fail "make install left out /usr/$f"
done
[ -x "$dest/usr/bin/tunedeck" ] || fail "the installed tunedeck is not executable"
find "$dest" -perm -o+w ! -type l | grep -q . && fail "world-writable files installed"
# The installed PyTorch example imports the trial helper from ../tools/python, as in the tree.
(cd "$tmp" && python3 -c 'import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "..", "tools", "python"))
import tunedeck_trial' "$dest/usr/share/tunedeck/examples") >"$tmp/py.out" 2>&1 ||
    fail "the installed examples/pytorch_ddp.py cannot import tunedeck_trial: $(tail -1 "$tmp/py.out")"

# The installed tree, run from elsewhere (shared with deb.sh).
sh "$root/tests/integration/lib/installed.sh" "$dest/usr" || fails=$((fails + 1))

# The installed example inventories, as the docs give them, from a folder outside the trees:
# their trial commands find their scripts through the TUNEDECK_HOME tunedeck sets (they
# named examples/... relative to the source tree's top folder: "can't open file").
ex="$dest/usr/share/tunedeck/examples"
mkdir -p "$tmp/elsewhere"
(cd "$tmp/elsewhere" && unset TUNEDECK_HOME && TUNEDECK_STATE_DIR="$tmp/state" \
    "$dest/usr/bin/tunedeck" tune --cluster "$ex/lab-cluster.json" --job "$ex/small-job.json" \
    --budget 1 --no-journal >"$tmp/lab.out" 2>&1) ||
    fail "the installed lab-cluster.json from another folder: $(tail -3 "$tmp/lab.out")"
# The PyTorch one with a python3 that has torch first on PATH (Debian's: /usr/bin).
PYBIN=
for p in "$(command -v python3)" /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import torch' 2>/dev/null && PYBIN="$(dirname "$p")" && break
done
if [ -n "$PYBIN" ]; then
    (cd "$tmp/elsewhere" && unset TUNEDECK_HOME && PATH="$PYBIN:$PATH" OMP_NUM_THREADS=1 \
        TUNEDECK_STATE_DIR="$tmp/state" "$dest/usr/bin/tunedeck" tune --cluster \
        "$ex/pytorch-cluster.json" --job "$ex/pytorch-job.json" --budget 1 --no-journal \
        >"$tmp/pt.out" 2>&1) ||
        fail "the installed pytorch-cluster.json from another folder: $(tail -3 "$tmp/pt.out")"
else
    echo "install: note: no python3 with torch; the PyTorch example is run only as far as its script"
    (cd "$tmp/elsewhere" && unset TUNEDECK_HOME && TUNEDECK_STATE_DIR="$tmp/state" \
        "$dest/usr/bin/tunedeck" tune --cluster "$ex/pytorch-cluster.json" \
        --job "$ex/pytorch-job.json" --budget 1 --no-journal >"$tmp/pt.out" 2>&1)
    grep -q "No module named 'torch' in" "$tmp/pt.out" ||
        fail "the installed pytorch_ddp.py did not start from another folder: $(tail -3 "$tmp/pt.out")"
fi

# install-node: only what compute nodes run.
make -s -C "$root" BUILD="$build" install-node DESTDIR="$tmp/node" PREFIX=/opt/td >"$tmp/make.out" 2>&1 ||
    fail "make install-node: $(tail -5 "$tmp/make.out")"
[ "$(cd "$tmp/node" && find . -type f | sort | tr '\n' ' ')" = "./opt/td/bin/tunedeck-worker " ] ||
    fail "install-node installed: $(cd "$tmp/node" && find . -type f | tr '\n' ' ')"

# uninstall leaves no file behind.
make -s -C "$root" BUILD="$build" uninstall DESTDIR="$dest" PREFIX=/usr >"$tmp/make.out" 2>&1 ||
    fail "make uninstall: $(tail -5 "$tmp/make.out")"
left="$(find "$dest" ! -type d | head -5)"
[ -z "$left" ] || fail "make uninstall left: $left"

[ $fails -eq 0 ]
