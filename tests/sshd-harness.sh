# Test harness (sourced by tests/integration/remote.sh and bench/remote.sh): starts N real
# OpenSSH sshd instances on 127.0.0.x with keys generated for the run, a known_hosts that
# lists them, and a stub nvidia-smi on their PATH. harness_stop_all stops every sshd it
# started (by pid); callers set `trap harness_stop_all EXIT`.
#
#   harness_init DIR              keys, stub tools; picks and leases a free port span for this
#                                 run (tests/port-lease.sh, sourced first)
#   harness_start I [extra cfg]   starts sshd number I on 127.0.0.(10+I):PORT ($H/host-binI,
#                                 if present, first on its PATH; its log $H/sshdI.log at
#                                 HARNESS_LOGLEVEL, default ERROR: sshd takes a keyword's
#                                 first value, so an extra LogLevel line would not count)
#   harness_stop I                stops it (its per-connection children too)
#   harness_drop I                ends every connection it serves; it keeps listening
#   harness_inventory FILE N...   writes an inventory naming hosts h1..hN
#   harness_stop_all

HARNESS_PIDS=""

harness_init() {
    H="$1"
    mkdir -p "$H/bin" "$H/nogpu-bin" /run/sshd
    chmod 755 "$H"
    harness_pick_port || return 1
    ssh-keygen -q -t ed25519 -N '' -C tunedeck-test -f "$H/id_ed25519"
    cp "$H/id_ed25519.pub" "$H/authorized_keys"
    chmod 600 "$H/authorized_keys"
    : > "$H/known_hosts"
    chmod 644 "$H/known_hosts" # whatever the umask: tunedeck refuses a writable one
    here_harness="$(cd "$(dirname "${HARNESS_SRC:-$0}")" && pwd)"
    fixtures="${TUNEDECK_FIXTURES:-$here_harness/fixtures/nvidia-smi}"
    # The stub answers the two queries tunedeck makes, in nvidia-smi's own csv format
    # (captured samples in tests/fixtures/nvidia-smi), once or every -lms period.
    cat > "$H/bin/nvidia-smi" <<EOF
#!/bin/sh
period=""
file="$fixtures/query-gpu.csv"
for a in "\$@"; do
    case "\$a" in
        --query-compute-apps=*) file="$fixtures/query-compute-apps.csv"
            [ -f "$H/apps.csv" ] && file="$H/apps.csv" ;;
        -lms) period=next ;;
        *) [ "\$period" = next ] && period="\$a" ;;
    esac
done
if [ -z "\$period" ]; then cat "\$file"; exit 0; fi
while :; do cat "\$file" || exit 0; sleep \$(echo "\$period" | awk '{print \$1/1000}'); done
EOF
    chmod 755 "$H/bin/nvidia-smi"
}

harness_addr() { echo "127.0.0.$((10 + $1))"; }

# The ports a run uses: H_PORT (every sshd) and the next H_PORT_SPAN (the suites' worker
# ports, BASE+index with BASE = H_PORT+1, rendezvous ports and fake servers), all leased
# (tests/port-lease.sh) from the pick until harness_stop_all: sshd binds H_PORT only at
# harness_start, and a suite restarts its sshd on the same port.
H_PORT_SPAN=16

# A port of our own, below Linux's ephemeral range (an outgoing connection there could hold
# it), with its span free and leased: several suites (and helpers) run side by side.
# tests/integration/worker.sh sources this file for this function alone.
harness_pick_port() {
    if ! command -v port_lease > /dev/null 2>&1; then
        echo "sshd-harness: source tests/port-lease.sh before this file" >&2
        return 1
    fi
    port_lease_release sshd # a second harness_init in one run: the first span goes back
    _hp_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    _hp_high=$((_hp_low - H_PORT_SPAN - 1))
    [ "$_hp_high" -gt 20000 ] || _hp_high=30000
    _hp_try=0
    while [ "$_hp_try" -lt 50 ]; do
        H_PORT=$(( 20000 + ($$ * 7 + _hp_try * 977 + $(date +%N | sed 's/^0*//;s/^$/0/') ) % (_hp_high - 20000) ))
        _pl_rc=0
        port_lease sshd "$H_PORT" $((H_PORT + H_PORT_SPAN)) || _pl_rc=$? # set -e callers
        case $_pl_rc in 0) return 0 ;; 2) return 1 ;; esac
        _hp_try=$((_hp_try + 1))
    done
    echo "sshd-harness: no free port span of $((H_PORT_SPAN + 1)) in 20000..$_hp_high after 50 tries" >&2
    return 1
}

harness_start() {
    i="$1"; shift
    addr=$(harness_addr "$i")
    [ -f "$H/host$i" ] || ssh-keygen -q -t ed25519 -N '' -f "$H/host$i"
    gpu_path="$H/bin:"
    [ -f "$H/nogpu$i" ] && gpu_path=""
    # $H/host-bin$I, when a suite made it, comes first on that host's PATH alone (a slow or
    # failing tool on one host).
    [ -d "$H/host-bin$i" ] && gpu_path="$H/host-bin$i:$gpu_path"
    cat > "$H/sshd$i.conf" <<EOF
ListenAddress $addr:$H_PORT
HostKey $H/host$i
AuthorizedKeysFile $H/authorized_keys
PidFile none
StrictModes no
UsePAM no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AllowAgentForwarding no
X11Forwarding no
MaxStartups 2000
MaxSessions 2000
LogLevel ${HARNESS_LOGLEVEL:-ERROR}
# SHLVL=1: bash then skips ~/.bashrc, which it would otherwise source for every ssh
# command (Debian's SSH_SOURCE_BASHRC): a heavy .bashrc would dominate every timing.
SetEnv PATH=${gpu_path}/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin TUNEDECK_TEST_HOST=$i SHLVL=1
EOF
    for extra in "$@"; do echo "$extra" >> "$H/sshd$i.conf"; done
    /usr/sbin/sshd -D -f "$H/sshd$i.conf" -E "$H/sshd$i.log" &
    pid=$!
    echo "$pid" > "$H/sshd$i.pid"
    HARNESS_PIDS="$HARNESS_PIDS $pid"
    # Ready when the port answers: 30 s at most, since a loaded machine can take seconds to
    # start it (a suite that went on before would see its first connections refused); an
    # sshd that exits (its port taken after all) is said at once.
    _hs_end=$(($(date +%s) + 30))
    until bash -c "exec 3<>/dev/tcp/$addr/$H_PORT" 2>/dev/null; do
        # exited: gone, or a zombie not yet reaped (which kill -0 would still find)
        _hs_state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null || echo gone)
        if [ "$_hs_state" = gone ] || [ "$_hs_state" = Z ] || [ "$(date +%s)" -ge "$_hs_end" ]; then
            echo "sshd-harness: sshd $i did not answer on $addr:$H_PORT ($H/sshd$i.log:" \
                "$(tail -n 3 "$H/sshd$i.log" 2>/dev/null))" >&2
            return 1
        fi
        sleep 0.02
    done
    # HARNESS_UNLISTED=1: the key stays out of known_hosts, for a test whose client is
    # already running (removing it afterwards leaves a window where the client trusts it).
    [ -n "${HARNESS_UNLISTED:-}" ] && return 0
    line="[$addr]:$H_PORT $(cut -d' ' -f1,2 "$H/host$i.pub")"
    grep -qF "$line" "$H/known_hosts" 2>/dev/null || echo "$line" >> "$H/known_hosts"
}

# harness_end_sessions LISTENER: ends every connection the sshd LISTENER serves, as when its
# session processes die with the commands' shells: each session process (a child of the
# listener; the harness logs in as root, whose session process is that child itself) is
# frozen, its children (each command's shell, the leader of the command's group) are killed
# and seen dead (zombies: it cannot reap them while frozen), and only then is it killed. What
# a shell started runs on in its group, for tunedeck to stop. The order is what makes it
# deterministic: a command's guard (remote/ssh/groupstop.h) that finds its session process
# gone while its shell still runs stops the group itself (the case of a tunedeck killed
# outright, remote.sh), one that finds the shell dead leaves the group to tunedeck. Killed
# in one go, either could die first on a loaded machine, and a leftover the suite left on
# purpose was at times stopped by its guard before tunedeck met it.
harness_end_sessions() {
    _hes=$(pgrep -P "$1" 2>/dev/null || true)
    for c in $_hes; do kill -STOP "$c" 2>/dev/null || true; done
    for c in $_hes; do
        for g in $(pgrep -P "$c" 2>/dev/null || true); do
            kill -KILL "$g" 2>/dev/null || true
            _hes_n=0
            while [ "$_hes_n" -lt 200 ]; do
                case "$(sed 's/.*) //' "/proc/$g/stat" 2>/dev/null || true)" in '' | Z*) break ;; esac
                sleep 0.05; _hes_n=$((_hes_n + 1))
            done
        done
        kill -KILL "$c" 2>/dev/null || true
    done
}

# Stops sshd I and every connection it serves (harness_end_sessions). The listener is frozen
# first, so that it takes no new connection in between. Safe under `set -e` (callers' traps
# run it): every step that may find its process gone is allowed to fail.
harness_stop() {
    i="$1"
    [ -f "$H/sshd$i.pid" ] || return 0
    pid=$(cat "$H/sshd$i.pid")
    rm -f "$H/sshd$i.pid"
    harness_forget "$pid"
    if harness_is_ours "$pid" "$i"; then
        kill -STOP "$pid" 2>/dev/null || true
        harness_end_sessions "$pid"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# harness_is_ours PID I: PID is still sshd I of this harness (its command line names
# $H/sshdI.conf). A listener that ended earlier was reaped by this shell, and its number may
# have gone to another suite's process since (pid_max is 32768 here and a full run goes
# through it in a minute or so): signalled blindly, that process, or the children of it
# harness_end_sessions would kill, died in its place.
harness_is_ours() {
    tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline" | grep -qF -- "-f $H/sshd$2.conf "
}

# harness_forget PID: PID leaves HARNESS_PIDS, so harness_stop_all does not kill it again
# once harness_stop has (by then the number may be another process's).
harness_forget() {
    _hf=""
    for _hp in $HARNESS_PIDS; do [ "$_hp" = "$1" ] || _hf="$_hf $_hp"; done
    HARNESS_PIDS="$_hf"
}

# harness_drop I: every connection sshd I serves ends (harness_end_sessions), as when the
# sessions' sshd processes die; the listener stays, so the host takes the next connection at
# once. (Stopping sshd and starting it again for that leaves a window in which a client's
# reconnect, a tenth of a second or so after the drop, meets "Connection refused".)
harness_drop() {
    [ -f "$H/sshd$1.pid" ] || return 0
    _hd=$(cat "$H/sshd$1.pid")
    harness_is_ours "$_hd" "$1" && harness_end_sessions "$_hd"
    return 0
}

harness_stop_all() {
    for f in "$H"/sshd*.pid; do
        [ -f "$f" ] || continue
        i=$(basename "$f" .pid); i=${i#sshd}
        harness_stop "$i"
    done
    # What is left: listeners whose pid file went (harness_start's failed ones). Only those
    # still an sshd of this harness (see harness_is_ours).
    for pid in $HARNESS_PIDS; do
        tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | grep -qF -- "-f $H/sshd" &&
            kill -KILL "$pid" 2>/dev/null || true
    done
    HARNESS_PIDS=""
    port_lease_release sshd
}

# harness_inventory FILE I... : machines h<I> at 127.0.0.(10+I), all of one GPU type.
harness_inventory() {
    # not "out": a sourcing bench keeps its result file in that name
    inv_file="$1"; shift
    machines=""
    for i in "$@"; do
        [ -n "$machines" ] && machines="$machines,"
        machines="$machines{\"name\": \"h$i\", \"host\": \"$(harness_addr "$i")\", \"type\": \"g\"}"
    done
    cat > "$inv_file" <<EOF
{"name": "harness",
 "ssh": {"user": "root", "port": $H_PORT, "identity": "$H/id_ed25519",
         "known_hosts": "$H/known_hosts", "connect_timeout_s": ${HARNESS_TIMEOUT_S:-3}},
 "machine_types": {"g": {"bandwidth_gbps": 10,
     "devices": [{"id": "cpu", "kind": "cpu", "threads": 4},
                 {"id": "gpu0", "kind": "gpu", "model": "A100"}]}},
 "machines": [$machines],
 "trial": {"launch": "per-host", "command": "true"},
 "job_command": "echo start gpus={gpus} hosts={hosts} resume={resume}"}
EOF
}
