#!/bin/sh
# slowdns.sh DIR COMMAND...: COMMAND in a network and mount namespace of its own, where every
# host name that /etc/hosts does not list takes about a minute to resolve: DIR gets a
# resolv.conf naming a nameserver that never answers (10.99.0.2, routed into the namespace's
# loopback, where no one has that address: its queries vanish, no error comes back) with a
# 30 s timeout tried twice, and an nsswitch.conf that asks /etc/hosts then DNS (no
# systemd-resolved or mDNS that the namespace would not reach), both bound over /etc's for
# COMMAND alone. Needs root (unshare); `slowdns.sh --probe` says whether it can run here.
# Nothing is left behind: the namespaces end with COMMAND. Not a suite.
set -eu
if [ "${1:-}" = --probe ]; then
    exec unshare -m -n true 2> /dev/null
fi
dir="$1"
shift
mkdir -p "$dir"
printf 'nameserver 10.99.0.2\noptions timeout:30 attempts:2\n' > "$dir/resolv.conf"
printf 'hosts: files dns\n' > "$dir/nsswitch.conf"
exec unshare -m -n sh -c 'ip link set lo up && ip route add 10.99.0.2/32 dev lo &&
mount --bind "$0/resolv.conf" /etc/resolv.conf &&
mount --bind "$0/nsswitch.conf" /etc/nsswitch.conf && exec "$@"' "$dir" "$@"
