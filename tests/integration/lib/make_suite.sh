# The prologue of the suites that run make on the tree (install.sh, deb.sh, buildtree.sh),
# sourced after `set -u`; not a suite. Before sourcing, a suite sets `suite` (its name, for
# messages). Sets root and tmp (removed at the end), fails (a count, 0) and fail MESSAGE.
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
# make runs here on its own, not as part of an outer make's jobserver (make test).
unset MAKEFLAGS MFLAGS MAKELEVEL
fails=0
fail() { echo "$suite: FAIL: $*"; fails=$((fails + 1)); }
