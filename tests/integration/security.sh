#!/bin/sh
# Trial output is data only: a trial that prints shell syntax in every string field of the
# protocol (and on stderr, and as log text) makes tunedeck run nothing, through a session, its
# journal, a resume and `sessions`. Journal files are 0600 in a 0700 folder whatever the umask;
# a journal that is a symbolic link is never written through.
set -eu
bin="${TUNEDECK_BIN:?}"
work="$(mktemp -d /tmp/td-security.XXXXXX)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
. "$(dirname "$0")/lib/procs_left.sh"
export TUNEDECK_STATE_DIR="$work/state"
fail() { echo "security: FAIL: $*" >&2; exit 1; }
mark="$work/pwned"

# Every way a string could be pasted into a shell: $(), backticks, ;, |, &&, a newline.
cat >"$work/evil.sh" <<SH
#!/bin/sh
cat >/dev/null
p='\$(touch $mark.1)'
b='\`touch $mark.2\`'
s='; touch $mark.3; '
q='| touch $mark.4'
a='&& touch $mark.5'
echo "\$p \$b \$s \$q \$a"
echo "\$p" >&2
echo "{\"event\":\"iteration\",\"iter\":0,\"time_s\":1,\"machines\":[{\"name\":\"\$p\",\"devices\":[{\"id\":\"\$b\",\"time_s\":1}]}]}"
echo "{\"event\":\"iteration\",\"iter\":1,\"time_s\":1,\"machines\":[{\"name\":\"n1\",\"devices\":[{\"id\":\"\$s\",\"time_s\":1}]}]}"
echo "{\"event\":\"\$q\"}"
echo "{\"event\":\"progress\",\"step\":1,\"note\":\"\$a\"}"
printf '%s\n' "{\"event\":\"error\",\"message\":\"\$p \$b \$s \$q \$a\\\\n touch $mark.6\"}"
exit 3
SH
cat >"$work/cluster.json" <<'JSON'
{"name":"c","machine_types":{"t":{"bandwidth_gbps":1,"devices":[{"id":"cpu","kind":"cpu"}]}},
 "machines":[{"name":"n[1-2]","host":"localhost","type":"t"}],"trial":{"launch":"local"}}
JSON
printf '{"name":"$(touch %s.7)","model_mb":1,"batch":8,"iterations":2,"warmup":1,"x":"`touch %s.8`"}\n' \
    "$mark" "$mark" >"$work/job.json"

umask 000
"$bin" tune --cluster "$work/cluster.json" --job "$work/job.json" --trial-cmd "sh $work/evil.sh" \
    --optimizer random --budget 2 --json >"$work/out.json" 2>"$work/err" && fail "the evil trial succeeded?"
umask 022
id="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$work/out.json")"
python3 - "$work/out.json" <<'PY' || fail "the error message did not come back as data: $(cat "$work/out.json")"
import json, sys
t = json.load(open(sys.argv[1]))["trials"]
assert all(x["status"] == "failed" for x in t), t
r = t[0]["reason"]
# the message's newline is kept, made visible as ^J like every control (termsafe): the
# reason is one line of UTF-8 text in the journal, the table and --json
assert "error event: $(touch" in r and "`touch" in r and "; touch" in r and "^J" in r, r
PY
"$bin" tune --resume "$id" --budget 3 >"$work/out2" 2>"$work/err2" || true
"$bin" sessions >/dev/null
"$bin" sessions --json >/dev/null
ls "$mark".* 2>/dev/null && fail "trial output ran a command: $(ls "$mark".*)"

# Modes, even under umask 000.
[ "$(stat -c %a "$TUNEDECK_STATE_DIR/sessions")" = 700 ] || fail "sessions folder not 0700"
[ "$(stat -c %a "$TUNEDECK_STATE_DIR/sessions/$id.jsonl")" = 600 ] || fail "journal not 0600"
# A folder someone opened up is closed again.
chmod 777 "$TUNEDECK_STATE_DIR/sessions"
"$bin" tune --sim A:googlenet --optimizer random --budget 1 >/dev/null 2>&1
[ "$(stat -c %a "$TUNEDECK_STATE_DIR/sessions")" = 700 ] || fail "an open sessions folder stayed open"

# A journal that is a link to another file is read, but never written through.
printf 'precious\n' >"$work/target"
cp "$TUNEDECK_STATE_DIR/sessions/$id.jsonl" "$work/copy.jsonl"
ln -s "$work/copy.jsonl" "$TUNEDECK_STATE_DIR/sessions/linked.jsonl"
before="$(md5sum <"$work/copy.jsonl")"
"$bin" tune --resume linked --budget 3 >/dev/null 2>"$work/err3" && fail "resumed through a link"
[ "$(md5sum <"$work/copy.jsonl")" = "$before" ] || fail "a linked journal was written"
grep -q "cannot open" "$work/err3" || fail "unclear refusal of a linked journal: $(cat "$work/err3")"
# tunedeck holds private keys libssh loaded, trials' secrets and session keys: a crash writes
# no core of it and, as with ssh-agent, no other process of the user may ptrace it or read its
# /proc files (prctl PR_SET_DUMPABLE 0 from its start, core/base/secret.h). TUNEDECK_DUMPABLE=1
# keeps a core for debugging, which also shows that this machine writes the core where the
# check looks; where it does not (a core_pattern piped or elsewhere), the core check is skipped.
# Not dumpable, /proc/PID/environ (and every private file there) is root's: seen where the
# suite does not run as root.
crash() { # $1: the folder tunedeck runs (and crashes) in; the rest: env assignments
    dir=$1
    shift
    mkdir -p "$dir"
    (cd "$dir" && { ulimit -c unlimited 2>/dev/null || true; exec env "$@" "$bin" tune --sim B:googlenet \
        --launcher local --budget 1 --optimizer random --no-journal \
        --trial-cmd "cat >/dev/null; : >'$dir/started'; exec sleep 60"; }) >/dev/null 2>&1 &
    pid=$!
    n=0
    while [ ! -e "$dir/started" ] && [ $n -lt 600 ] && kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        n=$((n + 1))
    done
    [ -e "$dir/started" ] || fail "tune never started its trial (${*:-TUNEDECK_DUMPABLE unset})"
    owner=$(stat -c %u "/proc/$pid/environ")
    pid_kill_named SEGV "$pid" "$dir/started" # still this tune (it may have ended: its number another's)
    { wait "$pid"; } 2>/dev/null || true
}
crash "$work/dump1" TUNEDECK_DUMPABLE=1
[ "$(id -u)" = 0 ] || [ "$owner" = "$(id -u)" ] ||
    fail "TUNEDECK_DUMPABLE=1: /proc/PID/environ of tunedeck belongs to uid $owner, not to us"
dumps_here=$(ls "$work/dump1" | grep -c '^core' || true)
crash "$work/dump0" TUNEDECK_DUMPABLE=
[ "$(id -u)" = 0 ] || [ "$owner" = 0 ] ||
    fail "tunedeck is dumpable: /proc/PID/environ belongs to uid $owner, not root's"
if [ "$dumps_here" -gt 0 ]; then
    if ls "$work/dump0" | grep -q '^core'; then fail "a crash of tunedeck wrote a core: $(ls "$work/dump0")"; fi
else
    echo "security: the core check skipped: no core written here even with TUNEDECK_DUMPABLE=1 (core_pattern $(cat /proc/sys/kernel/core_pattern))"
fi
rm -rf "$work/dump0" "$work/dump1"
echo "security: ok"
