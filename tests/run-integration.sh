#!/bin/sh
# Runs every integration suite (tests/integration/*.sh): real subprocesses, sshd, tmux.
# Each suite starts and stops its own processes. Argument: the absolute build folder.
set -eu
build="$1"
here="$(cd "$(dirname "$0")" && pwd)"
failed=0
# Sessions the suites start keep their journals in a scratch folder, not the user's.
state="$(mktemp -d /tmp/td-state.XXXXXX)"
export TUNEDECK_STATE_DIR="${TUNEDECK_STATE_DIR:-$state}"
for suite in "$here"/integration/*.sh; do
    [ -e "$suite" ] || continue
    name="$(basename "$suite" .sh)"
    # each suite's wall time, so the slow ones are known (make test should stay short)
    start=$(date +%s)
    if TUNEDECK_BUILD="$build" TUNEDECK_BIN="$build/tunedeck" sh "$suite"; then
        echo "integration $name: ok ($(($(date +%s) - start)) s)"
    else
        echo "integration $name: FAILED ($(($(date +%s) - start)) s)"
        failed=1
    fi
done
rm -rf "$state"
exit $failed
