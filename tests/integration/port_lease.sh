#!/bin/sh
# tests/port-lease.sh, the harnesses' port leases: a span another live shell holds, or where a
# socket listens, is refused whole; a lease whose shell is gone is taken back; a release gives
# back only its own tag's ports; two shells leasing at once never both get a port. A lease
# folder of its own (PORT_LEASE_DIR), so the suites running beside it are not touched.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
T="$(mktemp -d /tmp/tunedeck-port-lease.XXXXXX)"
LISTENER=""
. "$here/port-lease.sh"
shared="$PORT_LEASE_DIR"
cleanup() {
    [ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null
    PORT_LEASE_DIR="$shared" port_lease_release own
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
# The ports this suite names, 30 from base, leased in the shared folder like any harness's
# (it listens on one of them); then the checks lease them again in a folder of their own.
n=0
while :; do
    base=$((20000 + ($$ * 7 + n * 977) % 9000))
    port_lease own "$base" $((base + 29)) && break
    n=$((n + 1))
    [ $n -lt 50 ] || { echo "port_lease: no free span of 30 ports" >&2; exit 1; }
done
export PORT_LEASE_DIR="$T/leases"

fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); }
check() { name="$1"; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
owner() { readlink "$PORT_LEASE_DIR/$1" 2>/dev/null; }
# other_shell FIRST LAST: port_lease from another live shell; prints its exit status
other_shell() { sh -c '. "$1/port-lease.sh"; port_lease x "$2" "$3"; echo $?' - "$here" "$1" "$2"; }

port_lease sshd "$base" $((base + 3))
rc=$?
check "a free span is leased (exit $rc), each port linked to this shell" \
    sh -c '[ "$1" = 0 ] && [ "$(ls "$2" | wc -l)" = 4 ] && [ "$(readlink "$2/$3")" = "$4" ]' \
    - "$rc" "$PORT_LEASE_DIR" $((base + 3)) "$$"
rc=$(other_shell $((base + 3)) $((base + 5)))
check "another live shell cannot lease a span that overlaps it (exit $rc), and gets none of it" \
    sh -c '[ "$1" = 1 ] && [ -z "$2" ]' - "$rc" "$(owner $((base + 4)))"
port_lease slurm $((base + 6)) $((base + 7))
port_lease_release sshd
check "a release gives back its own tag's ports, not the other tag's" \
    sh -c '[ -z "$(readlink "$1/$2")" ] && [ "$(readlink "$1/$3")" = "$4" ]' \
    - "$PORT_LEASE_DIR" "$base" $((base + 6)) "$$"
port_lease_release slurm

# a lease whose shell is gone: a pid that no process has
sh -c 'exit 0' &
gone=$!
wait "$gone"
ln -s "$gone" "$PORT_LEASE_DIR/$((base + 8))"
rc=$(other_shell $((base + 8)) $((base + 8)))
check "a lease whose shell is gone is taken back (exit $rc)" [ "$rc" = 0 ]

# a port something listens on
lport=$((base + 9))
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); print("up", flush=True)
time.sleep(60)' "$lport" > "$T/listener" &
LISTENER=$!
n=0; while ! grep -q up "$T/listener" && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
port_lease sshd $((lport - 1)) $((lport + 1))
rc=$?
check "a span with a listening port is refused (exit $rc), none of it leased" \
    sh -c '[ "$1" = 1 ] && [ -z "$(readlink "$2/$3")" ]' - "$rc" "$PORT_LEASE_DIR" $((lport - 1))
kill "$LISTENER" 2>/dev/null; LISTENER=""

# eight shells lease the same 4-port span at once: exactly one gets it
rm -rf "$PORT_LEASE_DIR"
mkdir -p "$PORT_LEASE_DIR"
i=0
while [ $i -lt 8 ]; do
    sh -c '. "$1/port-lease.sh"; port_lease x "$2" "$3" && { echo won > "$4"; sleep 2; }' \
        - "$here" $((base + 20)) $((base + 23)) "$T/won.$i" &
    i=$((i + 1))
done
wait
won=$(ls "$T"/won.* 2>/dev/null | wc -l)
check "of eight shells leasing one span at once, exactly one gets it ($won)" [ "$won" -eq 1 ]

# no ss: a clear error, exit 2
rc=$(PATH=/nonexistent; port_lease sshd "$base" "$base" 2> "$T/noss.err"; echo $?)
check "without ss: exit 2 and an error naming it" \
    sh -c '[ "$1" = 2 ] && grep -q "ss is not installed (iproute2" "$2"' - "$rc" "$T/noss.err"

if [ "$fails" -ne 0 ]; then
    echo "port_lease: $fails failed"
    exit 1
fi
echo "port_lease: all passed"
