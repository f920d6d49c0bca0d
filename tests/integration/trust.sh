#!/bin/sh
# Trust that no configuration can weaken (issue 11), against real OpenSSH sshd instances
# (tests/sshd-harness.sh): StrictHostKeyChecking / UserKnownHostsFile lines in an ssh config
# never make an unknown or changed key pass; @revoked keys are refused even with
# --accept-new-host-keys; the inventory's port, user and known_hosts win over the config;
# ProxyCommand / ProxyJump are refused clearly; every host-key message names the known_hosts
# file used. Every sshd started here is stopped by the trap.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
build="${TUNEDECK_BUILD:-$root/build}"
bin="${TUNEDECK_BIN:-$build/tunedeck}"
rexec="$build/tunedeck-rexec"
T="$(mktemp -d /tmp/tunedeck-trust.XXXXXX)"
HARNESS_SRC="$here/sshd-harness.sh"
. "$here/sshd-harness.sh"
cleanup() {
    harness_stop_all
    [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM
unset SSH_AUTH_SOCK
export TUNEDECK_STATE_DIR="$T/state"

fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); }
check() { # check NAME COMMAND...: passes when the command succeeds
    name="$1"; shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

harness_init "$T/h"
for i in 1 2 3; do harness_start "$i"; done
HARNESS_TIMEOUT_S=2 harness_inventory "$T/inv.json" 1 2 3
kh="$T/h/known_hosts"
cp "$kh" "$T/kh.all"
# h1 unknown, h2 changed (another key on its line), h3 known.
ssh-keygen -q -t ed25519 -N '' -f "$T/other"
other="$(cut -d' ' -f1,2 "$T/other.pub")"
write_kh() {
    grep -v '127.0.0.11\|127.0.0.12' "$T/kh.all" > "$kh"
    echo "[127.0.0.12]:$H_PORT $other" >> "$kh"
}
write_kh
run() { # run CONFIG-TEXT OUT [rexec args...]
    printf '%b' "$1" > "$T/cfg"; out="$2"; shift 2
    TUNEDECK_SSH_CONFIG="$T/cfg" timeout 20 "$rexec" --cluster "$T/inv.json" "$@" -- true > "$out" 2>&1
}

echo "ssh config cannot switch host-key checking off"
n=0
for line in "StrictHostKeyChecking no" "StrictHostKeyChecking accept-new" \
    "UserKnownHostsFile /dev/null" "StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null"; do
    n=$((n + 1))
    write_kh
    before="$(md5sum < "$kh")"
    run "Host *\n  $line\n" "$T/c$n"
    check "'$line': the unknown key is refused and nothing is written" sh -c \
        "grep -q 'h1 ssh-failed: .*unknown host key .*not in $kh' '$T/c$n' && [ \"\$(md5sum < '$kh')\" = '$before' ]"
    check "'$line': the changed key is refused, naming $kh" \
        grep -q "h2 ssh-failed: .*host key for 127.0.0.12 changed .*remove its old line from $kh" "$T/c$n"
    check "'$line': the known key still works" grep -q 'h3 exit 0' "$T/c$n"
done

# The same through ~/.ssh/config (HOME points at a folder of the test).
mkdir -p "$T/home/.ssh"
printf 'Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n' > "$T/home/.ssh/config"
write_kh
HOME="$T/home" timeout 20 "$rexec" --cluster "$T/inv.json" -- true > "$T/home.out" 2>&1
check "~/.ssh/config cannot switch checking off either" sh -c \
    "grep -q 'h1 ssh-failed: .*unknown host key' '$T/home.out' && grep -q 'h2 ssh-failed: .*host key .* changed' '$T/home.out'"

echo "tune --launcher per-host runs nothing on an unchecked host"
printf 'Host *\n  StrictHostKeyChecking no\n' > "$T/cfg"
cat > "$T/job.json" <<'JOB'
{"name": "tiny", "model_mb": 10, "batch": 64, "iterations": 4, "warmup": 1}
JOB
write_kh
TUNEDECK_SSH_CONFIG="$T/cfg" timeout 60 "$bin" tune --cluster "$T/inv.json" --job "$T/job.json" \
    --launcher per-host --trial-cmd "python3 $root/tests/fixtures/trial.py" --budget 1 \
    --optimizer random --json > "$T/tune.json" 2> "$T/tune.err"
check "tune runs no trial on hosts whose keys were not checked" python3 -c "
import json
t = json.load(open('$T/tune.json'))['trials']
assert t and all(x['status'] != 'ok' for x in t), t
assert all('host key' in x['reason'] for x in t), t"

echo "@revoked"
h3key="$(cut -d' ' -f2 "$T/h/host3.pub")"
write_kh
echo "@revoked * ssh-ed25519 $h3key" >> "$kh"
run "" "$T/r1" --only h3
check "a revoked key is refused even though it is listed for the host" \
    grep -q "h3 ssh-failed: .*host key for 127.0.0.13 (SHA256:.*) is marked @revoked in $kh: refused" "$T/r1"
grep -v '127.0.0.13' "$T/kh.all" > "$kh"
echo "@revoked 127.0.0.13 ssh-ed25519 $h3key" >> "$kh"
before="$(md5sum < "$kh")"
run "" "$T/r2" --only h3 --accept-new-host-keys
check "a revoked key is refused with --accept-new-host-keys, nothing written" sh -c \
    "grep -q 'h3 ssh-failed: .*@revoked' '$T/r2' && [ \"\$(md5sum < '$kh')\" = '$before' ]"
fp3="$(ssh-keygen -lf "$T/h/host3.pub" | cut -d' ' -f2)"
run "" "$T/r3" --only h3 --accept-fingerprint "$fp3"
check "a revoked key is refused even when its fingerprint is accepted" sh -c \
    "grep -q 'h3 ssh-failed: .*@revoked' '$T/r3' && [ \"\$(md5sum < '$kh')\" = '$before' ]"
"$bin" hosts --cluster "$T/inv.json" --json > "$T/r4.json" 2>/dev/null
check "hosts reports the key status 'revoked'" python3 -c "
import json, sys
h = {x['name']: x for x in json.load(open('$T/r4.json'))['hosts']}
assert h['h3']['host_key'] == 'revoked', h['h3']"

echo "the inventory wins over the ssh config"
cp "$T/kh.all" "$kh"
run "Host 127.0.0.*\n  Port 1\n  User nobody-here\n  UserKnownHostsFile $T/other.pub\n  IdentityFile $T/other\n" "$T/i1"
check "inventory port, user, known_hosts and identity override Port, User, UserKnownHostsFile, IdentityFile" \
    sh -c "[ \$(grep -c 'exit 0' '$T/i1') -eq 3 ]"
python3 - "$T/inv.json" "$T/inv-bare.json" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
del inv["ssh"]["port"], inv["ssh"]["user"]
json.dump(inv, open(sys.argv[2], "w"))
PY
printf 'Host 127.0.0.*\n  Port %s\n  User root\n' "$H_PORT" > "$T/cfg"
TUNEDECK_SSH_CONFIG="$T/cfg" timeout 20 "$rexec" --cluster "$T/inv-bare.json" -- true > "$T/i2" 2>&1
check "what the inventory leaves unset still comes from the config" \
    sh -c "[ \$(grep -c 'exit 0' '$T/i2') -eq 3 ]"

echo "proxies are refused, never silently bypassed"
run "Host 127.0.0.11\n  ProxyCommand nc %h %p\n" "$T/p1" --only h1
check "ProxyCommand is refused clearly" \
    grep -q 'h1 ssh-failed: .*the ssh configuration gives 127.0.0.11 a ProxyCommand or ProxyJump' "$T/p1"
run "Host 127.0.0.11\n  ProxyJump 127.0.0.12:$H_PORT\n" "$T/p2" --only h1
check "ProxyJump is refused clearly" \
    grep -q 'h1 ssh-failed: .*the ssh configuration gives 127.0.0.11 a ProxyCommand or ProxyJump' "$T/p2"

if [ "$fails" -ne 0 ]; then
    echo "trust.sh: $fails FAILED"
    exit 1
fi
echo "trust.sh: ok"
