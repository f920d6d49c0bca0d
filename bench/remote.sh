#!/bin/sh
# The remote layer against pdsh -R ssh, in the same run, on 32 local OpenSSH sshd instances
# (tests/sshd-harness.sh): (1) wall time to run `true` on every host, (2) CPU seconds to poll
# every host once a second for BENCH_POLL_S seconds (default 60) — ours over persistent
# sessions, pdsh reconnecting each time — client and sshd side; (3) 256 hosts (32 sshd x 8
# addresses): time until all are connected and the longest event-loop iteration.
# Argument: the JSON result file. Prints ratios (pdsh / ours: above 1 means we are faster).
set -u
out="${1:-/dev/null}"
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${TUNEDECK_BUILD:-$here/build}"
rexec="$build/tunedeck-rexec"
poll_s="${BENCH_POLL_S:-60}"
T="$(mktemp -d /tmp/tunedeck-bench-remote.XXXXXX)"
. "$here/tests/port-lease.sh"
HARNESS_SRC="$here/tests/sshd-harness.sh"
. "$here/tests/sshd-harness.sh"
trap 'harness_stop_all; rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
unset SSH_AUTH_SOCK
command -v pdsh >/dev/null || { echo "bench remote: pdsh not installed; skipped"; exit 0; }

harness_init "$T/h"
N=32
EXTRA=7 # more addresses per sshd for the 256-host run
i=1
while [ $i -le $N ]; do
    set --
    k=1
    while [ $k -le $EXTRA ]; do
        set -- "$@" "ListenAddress 127.0.$((k)).$((10 + i)):$H_PORT"
        k=$((k + 1))
    done
    harness_start $i "$@"
    k=1
    while [ $k -le $EXTRA ]; do
        echo "[127.0.$k.$((10 + i))]:$H_PORT $(cut -d' ' -f1,2 "$T/h/host$i.pub")" >> "$T/h/known_hosts"
        k=$((k + 1))
    done
    i=$((i + 1))
done
harness_inventory "$T/inv32.json" $(seq 1 $N)
python3 - "$T/inv32.json" "$T/inv256.json" "$N" "$EXTRA" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))
n, extra = int(sys.argv[3]), int(sys.argv[4])
inv["ssh"]["connect_timeout_s"] = 20
ms = list(inv["machines"])
for k in range(1, extra + 1):
    for i in range(1, n + 1):
        ms.append({"name": "x%d-%d" % (k, i), "host": "127.0.%d.%d" % (k, 10 + i), "type": "g"})
inv["machines"] = ms
json.dump(inv, open(sys.argv[2], "w"))
EOF
hosts="127.0.0.[11-$((10 + N))]"
export PDSH_SSH_ARGS="-p $H_PORT -i $T/h/id_ed25519 -o UserKnownHostsFile=$T/h/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR -l%u %h"
export PDSH_SSH_ARGS_APPEND=""

# Runs a command; prints "wall_s cpu_s" (its own and its waited-for descendants' CPU).
measure() {
    python3 - "$@" <<'EOF'
import resource, subprocess, sys, time
t = time.time()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %.4f" % (time.time() - t, ru.ru_utime + ru.ru_stime))
EOF
}
# CPU seconds used so far by every sshd of the harness and the connections it reaped.
sshd_cpu() {
    python3 - "$T/h" <<'EOF'
import glob, os, sys
hz = os.sysconf("SC_CLK_TCK")
total = 0
for f in glob.glob(sys.argv[1] + "/sshd*.pid"):
    try:
        st = open("/proc/%s/stat" % open(f).read().strip()).read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in st[11:15])
    except OSError:
        pass
print("%.3f" % (total / hz))
EOF
}
median3() { sort -n | sed -n 2p; }

echo "bench remote: $N sshd on 127.0.0.x, pdsh $(pdsh -V 2>&1 | head -1 | cut -d' ' -f1)"
# Warm both once (page cache, sshd key loading).
"$rexec" --cluster "$T/inv32.json" --quiet -- true >/dev/null 2>&1
pdsh -R ssh -w "$hosts" true >/dev/null 2>&1

ours_true=$(for r in 1 2 3; do measure "$rexec" --cluster "$T/inv32.json" --quiet -- true | cut -d' ' -f1; done | median3)
pdsh_true=$(for r in 1 2 3; do measure pdsh -R ssh -f $N -w "$hosts" true | cut -d' ' -f1; done | median3)
ratio_true=$(echo "$pdsh_true $ours_true" | awk '{printf "%.2f", $1 / $2}')
echo "  run true on $N hosts: ours ${ours_true}s, pdsh ${pdsh_true}s: pdsh/ours = ${ratio_true}x"

s0=$(sshd_cpu)
ours_poll=$(measure "$rexec" --cluster "$T/inv32.json" --quiet --keep --repeat "$poll_s" --interval 1 -- cat /proc/loadavg)
sleep 0.5
s1=$(sshd_cpu)
cat > "$T/pdsh-loop.sh" <<EOF
i=0
start=\$(date +%s.%N)
while [ \$i -lt $poll_s ]; do
    pdsh -R ssh -f $N -w "$hosts" cat /proc/loadavg >/dev/null 2>&1
    i=\$((i + 1))
    now=\$(date +%s.%N)
    left=\$(echo "\$start + \$i - \$now" | bc -l 2>/dev/null || echo 0)
    case "\$left" in -*|0) ;; *) sleep "\$left" ;; esac
done
EOF
pdsh_poll=$(measure sh "$T/pdsh-loop.sh")
sleep 0.5
s2=$(sshd_cpu)
ours_cpu=$(echo "$ours_poll" | cut -d' ' -f2)
pdsh_cpu=$(echo "$pdsh_poll" | cut -d' ' -f2)
ours_sshd=$(echo "$s1 $s0" | awk '{printf "%.3f", $1 - $2}')
pdsh_sshd=$(echo "$s2 $s1" | awk '{printf "%.3f", $1 - $2}')
ratio_cpu=$(echo "$pdsh_cpu $ours_cpu" | awk '{printf "%.1f", $1 / ($2 > 0.001 ? $2 : 0.001)}')
ratio_sshd=$(echo "$pdsh_sshd $ours_sshd" | awk '{printf "%.1f", $1 / ($2 > 0.001 ? $2 : 0.001)}')
ours_wall=$(echo "$ours_poll" | cut -d' ' -f1)
pdsh_wall=$(echo "$pdsh_poll" | cut -d' ' -f1)
echo "  poll $N hosts every 1 s, ${poll_s} rounds: wall ours ${ours_wall}s, pdsh ${pdsh_wall}s (pdsh cannot keep a 1 s period when a round takes longer)"
echo "  poll $N hosts every 1 s for ${poll_s} s: client CPU ours ${ours_cpu}s, pdsh ${pdsh_cpu}s: pdsh/ours = ${ratio_cpu}x"
echo "                                      sshd CPU   ours ${ours_sshd}s, pdsh ${pdsh_sshd}s: pdsh/ours = ${ratio_sshd}x"

"$rexec" --cluster "$T/inv256.json" --quiet --stats -- true > "$T/s256" 2>&1
stats=$(grep '^stats:' "$T/s256")
n256=$(echo "$stats" | awk '{print $3}')
conn=$(echo "$stats" | awk '{print $5}')
maxstep=$(echo "$stats" | awk '{print $13}')
maxcpu=$(echo "$stats" | awk '{print $15}')
fails=$(grep -c 'failed' "$T/s256")
echo "  $n256 hosts: all connected in ${conn}s (target 6 s), longest loop iteration ${maxstep} ms wall, ${maxcpu} ms CPU (target 20 ms), $fails failed"
echo "  (load average now: $(cut -d' ' -f1-3 /proc/loadavg); wall times include time the 2 shared cores gave to others)"

cat > "$out" <<EOF
{"bench": "remote", "hosts": $N, "poll_s": $poll_s,
 "true_ours_s": $ours_true, "true_pdsh_s": $pdsh_true, "true_ratio_pdsh_over_ours": $ratio_true,
 "poll_wall_ours_s": $ours_wall, "poll_wall_pdsh_s": $pdsh_wall,
 "poll_client_cpu_ours_s": $ours_cpu, "poll_client_cpu_pdsh_s": $pdsh_cpu, "poll_client_cpu_ratio": $ratio_cpu,
 "poll_sshd_cpu_ours_s": $ours_sshd, "poll_sshd_cpu_pdsh_s": $pdsh_sshd, "poll_sshd_cpu_ratio": $ratio_sshd,
 "hosts_256": $n256, "connected_256_s": $conn, "max_loop_iteration_ms": $maxstep, "max_loop_iteration_cpu_ms": $maxcpu, "failed_256": $fails}
EOF
