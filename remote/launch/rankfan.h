/* The per-host rank fan-out (trial.ranks "per-device"): a POSIX sh script that reads the
 * schedule once on standard input and starts the trial command once per rank of its host
 * (core/model/ranks.h) with the variables torch.distributed's env:// rendezvous reads —
 * RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT — and
 * TUNEDECK_MACHINE, TUNEDECK_DEVICE, every value single-quoted. All ranks stay in the
 * script's process group, so the launchers' group stop reaches them. The first rank that
 * fails stops the others of its host (TERM, then KILL after 3 s), and the script exits with
 * that rank's status after they are gone, so nothing outlives the part that the launcher
 * sees end. A stop's TERM to the group still lets each rank's status be written, and the
 * script names a rank that failed as the stop came, then waits as well (KILL 3 s after the
 * TERM, if the stop's own has not come first). "Gone" is every process a rank started, found
 * in the group (/proc), not the shell that ran the rank's command: dash forks even the last
 * command of `sh -c`, and that shell dies of a TERM its command may handle and outlive. */
#ifndef TUNEDECK_RANKFAN_H
#define TUNEDECK_RANKFAN_H

#include <stddef.h>

#include "core/model/schedule.h"

/* Rendezvous port of a trial: the inventory's trial.master_port (default 29500) plus
 * trial % 100, so the next trial never meets a listener the previous one left in closing. */
int rankfan_master_port(const Cluster *c, int trial);

/* The script for the ranks on `machine`, or for every rank when all_here is set (the
 * local launcher: MASTER_ADDR is then 127.0.0.1, else rank 0's machine's host). NULL with
 * err set when the machine has no rank (the caller starts no part there) or on no memory.
 * Caller frees. */
char *rankfan_script(const Schedule *s, size_t machine, int all_here, const char *command,
                     Error *err);

/* Whether `line` (a line of a part's standard output) is the fan-out's own notice of the
 * rank that failed first on its host; if so, 1, with "rank 2 (h2 cpu) exited with status 7"
 * in `who` (cut to `cap`). A rank that dies without a word (a signal, os._exit, the OOM
 * killer) has no error event of its own: its peers' ("connection reset by peer") come first,
 * and the launchers name this rank beside them. */
int rankfan_notice(const char *line, char *who, size_t cap);

/* Whether the schedule's cluster asks for one process per device. */
int rankfan_wanted(const Schedule *s);

#endif
