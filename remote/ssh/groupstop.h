/* The remote shell text that stops a process group: TERM, wait while a process of it that
 * is not a zombie is left, KILL after 2 s. */
#ifndef TUNEDECK_GROUPSTOP_H
#define TUNEDECK_GROUPSTOP_H

/* live G: exit 0 while group G holds a process that is not a zombie. `kill -0 -G` counts
 * zombies, and a group member whose parent died waits for init to reap it (a container's
 * init may take a second or more), so a stop that asked kill -0 waited out its cap on a
 * group already stopped. Reads the state from /proc/PID/stat with builtins only; where
 * pgrep cannot list a group (absent, or busybox's without -g: exit status above 1) it asks
 * kill -0 of the group, and of a process whose stat it cannot read (no /proc) kill -0 of
 * that process, as before: never "stopped" where it cannot tell. No "--" before a group in
 * any kill here: dash's kill (a login shell that is /bin/sh) reads it as a number and fails,
 * and the signal named first keeps "-PGID" an operand in every shell. */
#define GROUPSTOP_LIVE_SH                                                                        \
    "live() { l=$(pgrep -g \"$1\" 2>/dev/null); case $? in 0) ;; 1) return 1 ;; "                 \
    "*) kill -0 -\"$1\" 2>/dev/null; return ;; esac; "                                         \
    "for p in $l; do s=; read -r s 2>/dev/null </proc/$p/stat; s=${s##*) }; case $s in "         \
    "Z*|X*) ;; '') kill -0 \"$p\" 2>/dev/null && return 0 ;; *) return 0 ;; esac; done; "        \
    "return 1; }"

/* The command that stops group pgid (> 1): TERM, then KILL once it has had 2 s; it ends
 * when no process but zombies is left, or just after the KILL. Caller frees; NULL when
 * memory runs out. */
char *groupstop_command(long pgid);

#endif
