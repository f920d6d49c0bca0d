# Port leases for the test harnesses (sourced before tests/sshd-harness.sh and
# tests/slurm-harness.sh, which call it): a harness checks a span of ports free and its daemons
# bind them only later (sshd after its keys, slurmd after munged and slurmctld); another suite
# side by side checking in between would find the same span free and the first to bind wins.
# So every port a harness picks is leased first, in a folder that every run on this machine
# shares: one symbolic link per port, named after it, pointing at the pid of the shell that
# holds it. The check and the links are made under one flock, so two pickers never take the
# same port; a lease whose shell is gone (a suite killed before its trap ran) is taken back.
#
#   port_lease TAG FIRST LAST  0 when every port of FIRST..LAST was neither leased nor listened
#                           on and is now leased to this shell under TAG (a word: which
#                           harness, since a suite may run both); 1 when one was (nothing
#                           leased); 2 when a tool it needs is missing (an error says which)
#   port_lease_release TAG  gives back every port this shell leased under TAG

PORT_LEASE_DIR="${PORT_LEASE_DIR:-/tmp/tunedeck-port-leases}"
PORT_LEASES="" # TAG:PORT, one per leased port

# port_listened FIRST LAST: some TCP socket listens on a port in FIRST..LAST (any address).
port_listened() {
    ss -Hltn 2> /dev/null | awk -v a="$1" -v b="$2" \
        '{ p = $4; sub(/.*:/, "", p); if (p + 0 >= a && p + 0 <= b) found = 1 }
         END { exit !found }'
}

port_lease() {
    _pl_tag="$1"
    shift
    if ! command -v ss > /dev/null 2>&1; then
        echo "port-lease: ss is not installed (iproute2; make deps installs it)" >&2
        return 2
    fi
    if ! command -v flock > /dev/null 2>&1; then
        echo "port-lease: flock is not installed (util-linux)" >&2
        return 2
    fi
    mkdir -p "$PORT_LEASE_DIR" || return 2
    # fd 8: the lock, held for the check and the links; 30 s at most (each holder keeps it
    # for a few commands only)
    exec 8> "$PORT_LEASE_DIR/.lock"
    if ! flock -w 30 8; then
        exec 8>&-
        echo "port-lease: $PORT_LEASE_DIR/.lock stayed locked for 30 s" >&2
        return 1
    fi
    _pl_ok=0
    _pl_p="$1"
    while [ "$_pl_p" -le "$2" ]; do
        if [ -L "$PORT_LEASE_DIR/$_pl_p" ]; then
            _pl_owner=$(readlink "$PORT_LEASE_DIR/$_pl_p")
            # /proc, not kill -0: a holder of another user is alive though not signalable
            if [ -n "$_pl_owner" ] && [ -d "/proc/$_pl_owner" ]; then _pl_ok=1; break; fi
            rm -f "$PORT_LEASE_DIR/$_pl_p"
        fi
        _pl_p=$((_pl_p + 1))
    done
    [ "$_pl_ok" -eq 0 ] && port_listened "$1" "$2" && _pl_ok=1
    if [ "$_pl_ok" -eq 0 ]; then
        _pl_p="$1"
        while [ "$_pl_p" -le "$2" ]; do
            # a link already there (a picker that took no lock): the span is not ours, and the
            # links made so far go back
            if ! ln -s "$$" "$PORT_LEASE_DIR/$_pl_p" 2> /dev/null; then
                while [ "$_pl_p" -gt "$1" ]; do
                    _pl_p=$((_pl_p - 1))
                    rm -f "$PORT_LEASE_DIR/$_pl_p"
                done
                _pl_ok=1
                break
            fi
            _pl_p=$((_pl_p + 1))
        done
    fi
    if [ "$_pl_ok" -eq 0 ]; then
        _pl_p="$1"
        while [ "$_pl_p" -le "$2" ]; do
            PORT_LEASES="$PORT_LEASES $_pl_tag:$_pl_p"
            _pl_p=$((_pl_p + 1))
        done
    fi
    flock -u 8
    exec 8>&-
    [ "$_pl_ok" -eq 0 ]
}

port_lease_release() {
    _pl_kept=""
    for _pl_e in $PORT_LEASES; do
        if [ "${_pl_e%%:*}" = "$1" ]; then
            _pl_p="${_pl_e#*:}"
            [ "$(readlink "$PORT_LEASE_DIR/$_pl_p" 2> /dev/null)" = "$$" ] && rm -f "$PORT_LEASE_DIR/$_pl_p"
        else
            _pl_kept="$_pl_kept $_pl_e"
        fi
    done
    PORT_LEASES="$_pl_kept"
    return 0
}
