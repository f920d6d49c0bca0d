#!/bin/sh
# Installs the Debian packages tunedeck builds, tests and benchmarks with, only when missing.
# Run by `make deps` (a dependency of `make run` and `make test`).
set -eu

PACKAGES="build-essential pkg-config libncursesw5-dev libssh-dev libgsl-dev libopenblas-dev \
libcjson-dev libcriterion-dev openssh-server openssh-client tmux python3 python3-optuna python3-torch python3-cryptography pdsh \
iproute2 procps busybox clang libclang-rt-dev valgrind \
dpkg-dev debhelper fakeroot man-db groff-base bash-completion zsh lintian slurm-wlm munge"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists; update once, then install.
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
