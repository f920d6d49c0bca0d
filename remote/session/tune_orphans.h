/* The orphans glue shared by `tunedeck tune` and the console: every remote process group a
 * trial starts is journaled ("remote_process") and kept; on resume the groups of the trials
 * the killed session never finished are stopped before anything is launched, each result
 * reported and journaled ("remote_process_stop"). */
#ifndef TUNEDECK_TUNE_ORPHANS_H
#define TUNEDECK_TUNE_ORPHANS_H

#include "remote/session/tune_journal.h"
#include "remote/ssh/hostpool.h"
#include "remote/launch/orphans.h"

/* The process groups a session started (for LaunchConfig.on_proc). */
typedef struct {
    TuneJournal *tj;
    OrphanList seen;
    OrphanList lost; /* those a dropped connection left behind, not yet stopped */
} TuneProcs;

/* LaunchConfig.on_proc with a TuneProcs as userdata: journals the group and keeps it. */
void tune_procs_on_proc(void *userdata, int trial, const char *machine, long pgid);
/* LaunchConfig.on_proc_lost with a TuneProcs as userdata: keeps it to stop before the next
 * trial on that machine. */
void tune_procs_on_proc_lost(void *userdata, int trial, const char *machine, long pgid);

/* One line per group stopped (or not), e.g. "interrupted trial 2: process group 123 on h1:
 * stopped". */
typedef void (*TuneOrphanReportFn)(void *userdata, const char *line);

/* Stops the groups of the list that still run and journals each result (quiet: says
 * nothing of those already gone). `what` starts each line ("interrupted", "leftover of"). */
void tune_orphans_stop(HostPool *pool, TuneJournal *tj, OrphanList *l, const char *what, int quiet,
                       TuneOrphanReportFn report, void *userdata);
/* Before trial s->trial: stops what earlier trials' dropped connections left running on the
 * machines it uses (and on hosts that are no machine of the cluster: a login node), journals
 * each result and reports each group stopped ("stopped trial 1's leftover process group 123
 * on h2 before trial 3"). A group whose host answered but that could not be stopped fails the
 * trial: returns -1 with why. One whose host did not answer stays for the next try (the
 * trial's own launch then meets the same host). */
int tune_orphans_before_trial(HostPool *pool, TuneJournal *tj, OrphanList *lost, const Schedule *s,
                              TuneOrphanReportFn report, void *userdata, char *why, size_t cap);
/* Resume: stops what the journal's unfinished trials left running on the hosts. */
void tune_orphans_stop_interrupted(HostPool *pool, TuneJournal *tj, TuneOrphanReportFn report,
                                   void *userdata);

#endif
