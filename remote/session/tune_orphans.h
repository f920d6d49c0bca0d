/* The orphans glue shared by `tunedeck tune` and the console: every remote process group a
 * trial starts is journaled ("remote_process") and kept; on resume the groups of the trials
 * the killed session never finished, and those an earlier stop left "not stopped", are
 * stopped before anything is launched, each result
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
void tune_procs_on_proc(void *userdata, int trial, const char *machine, long pgid,
                        const char *mark);
/* LaunchConfig.on_proc_lost with a TuneProcs as userdata: journals it "not stopped" at once,
 * with why for its cause (tune_procs_lost_result; a resume stops it should the session die
 * before a later stop decides it) and keeps it to stop before the next trial on that
 * machine. */
void tune_procs_on_proc_lost(void *userdata, int trial, const char *machine, long pgid,
                             const char *mark, ProcLostCause cause);
/* The journal's result for a group lost for `cause`: "not stopped: its end was not seen
 * (its connection dropped)" and the like. */
const char *tune_procs_lost_result(ProcLostCause cause);

/* One line per group stopped (or not), e.g. "interrupted trial 2: process group 123 on h1:
 * stopped". */
typedef void (*TuneOrphanReportFn)(void *userdata, const char *line);

/* Stops the groups of the list that still run and journals each result (quiet: says
 * nothing of those already gone). `what` starts each line ("interrupted", "leftover of").
 * The list itself is left as it was. */
void tune_orphans_stop(HostPool *pool, TuneJournal *tj, OrphanList *l, const char *what, int quiet,
                       TuneOrphanReportFn report, void *userdata);
/* Before trial s->trial: stops what earlier trials' dropped connections left running on the
 * machines it uses (and on hosts that are no machine of the cluster: a login node), journals
 * each result and reports each group stopped ("stopped trial 1's leftover process group 123
 * on h2 before trial 3"). It blocks the caller's loop at most a host's connect timeout plus
 * 3 s a group, and says so first when that can pass 2 s (the console's loop goes on: see
 * tune_orphans_before_trial_begin). A group whose host answered but that
 * could not be stopped ends the session: returns -1 with why (tune_orphans_verdict). One whose
 * host did not answer stays for a later trial (the trial's own launch then meets the same
 * host), and is not waited for again while its host is not connected: once it is, the next
 * trial's stop takes it, whatever that trial's machines; after a "stopping ..."
 * line, one line per such host says so ("trial 1's leftover process group 123 on h2 was not
 * stopped before trial 3: h2 did not answer (...); it may still run, and is tried again ..."). */
int tune_orphans_before_trial(HostPool *pool, TuneJournal *tj, OrphanList *lost, const Schedule *s,
                              TuneOrphanReportFn report, void *userdata, char *why, size_t cap);
/* Whether a kept group is worth a stop attempt now: never tried without an answer, or its
 * host is connected again. */
int tune_orphans_worth_trying(const Orphan *o, HostState host_state);
/* After the stop before trial `trial`: -1 with why (which trial's group, which host, what the
 * kill said, stop it by hand and resume session_id) when a group still runs although its host
 * answered; 0 when every group is stopped, gone, or undecided (its host did not answer). Two or
 * more still running: each is named, whole ("trial 2's 4242 on h2 (kill not permitted)"), as
 * many as cap holds, then "; and N more". */
int tune_orphans_verdict(const OrphanList *tried, int trial, const char *session_id, char *why,
                         size_t cap);
/* Resume: stops what the journal's unfinished trials left running on the hosts, and the groups
 * whose last stop said "not stopped" (orphans_collect); a finished trial's group is reported
 * as "leftover of trial N". */
void tune_orphans_stop_interrupted(HostPool *pool, TuneJournal *tj, TuneOrphanReportFn report,
                                   void *userdata);

/* The same three stops in steps, for a caller whose loop must go on meanwhile (the console
 * reads keys and redraws while a host takes its seconds): each blocking call above is its
 * begin, tune_stop_wait and tune_stop_end, so there is one stop, whoever waits. Begin sends
 * the stop commands (the "stopping ..." line is said then); the caller's loop steps the pool
 * until tune_stop_settled (every host answered, or the stop's deadline passed); end journals
 * and reports each result as the blocking call does, frees the stop and returns the verdict
 * (before a trial: tune_orphans_verdict; a sweep: 0). A stop owns its groups (a copy of the
 * caller's list; the interrupted ones, collected from the journal, are handed over), but a
 * before-trial stop puts back into `lost` what it did not stop: that list must outlive it.
 * Out of memory for the stop commands, every group's result is "not stopped: out of memory",
 * before a trial and in a sweep alike. */
typedef struct TuneStop TuneStop;
/* *out NULL: nothing to stop before this trial (or out of memory). Returns 0. */
int tune_orphans_before_trial_begin(HostPool *pool, TuneJournal *tj, OrphanList *lost,
                                    const Schedule *s, TuneOrphanReportFn report, void *userdata,
                                    TuneStop **out);
/* NULL: nothing to stop (an empty list, or out of memory). */
TuneStop *tune_orphans_stop_begin(HostPool *pool, TuneJournal *tj, const OrphanList *l,
                                  const char *what, int quiet, TuneOrphanReportFn report,
                                  void *userdata);
TuneStop *tune_orphans_stop_interrupted_begin(HostPool *pool, TuneJournal *tj,
                                              TuneOrphanReportFn report, void *userdata);
int tune_stop_settled(const TuneStop *st, int64_t now_ms);
int64_t tune_stop_deadline(const TuneStop *st); /* clock_now_ms time */
void tune_stop_wait(TuneStop *st);              /* a loop of its own until settled */
int tune_stop_end(TuneStop *st, char *why, size_t cap);

#endif
