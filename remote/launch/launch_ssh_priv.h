/* Internal: what the per-host and single launchers' two files share: launch_ssh.c (a trial's
 * parts started, read, stopped and ended) and launch_ssh_failure.c (what a part's own failure
 * makes of the trial: its status, and the reason's words). Not a public API. */
#ifndef TUNEDECK_LAUNCH_SSH_PRIV_H
#define TUNEDECK_LAUNCH_SSH_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "core/model/observation.h"
#include "remote/launch/launch_ssh_reason.h"
#include "remote/launch/launcher.h"
#include "remote/launch/rankcause.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"

typedef struct SshRun SshRun;

typedef struct {
    SshRun *run; /* its trial's: the killer's lines come with the part */
    size_t machine, host;
    RemoteExec *x, *killer;
    long pgid;
    int stop_wanted;
    /* the command ended by itself; killer is the stop of what it left running, given up at
     * killer_until_ms: asked only where the wrapping shell's own stop did not say it was over
     * (end_stopped) or a stray still holds the output */
    int ended_stop;
    int end_stopped; /* the wrapping shell said GROUPSTOP_ENDED: nothing of the part is left */
    int64_t killer_until_ms;
    /* TUNEDECK_RUN_MARK of this part (orphans.h): one per host, so that the stop of a part that
     * ended (or its orphan stop) never reaches another part's processes on a machine that two
     * of the schedule's machines share */
    char mark[GROUPSTOP_MARK_CHARS + 1];
    char last_stderr[200];
    int left_noted; /* the wrapping shell's GROUPSTOP_LEFT_NOTE came: later lines are not the
                       command's */
    char first_failed[160]; /* the rank fan-out's notice: the rank that failed first here */
    /* 1 for the first part whose notice came, 2 for the next ...; the part that ended first
     * without one is stamped as it ends */
    unsigned failed_seq;
} Part;

struct SshRun {
    LaunchConfig cfg;
    const Schedule *schedule;
    HostPool *pool;
    char where[64]; /* cfg.remote_host: named instead of a machine */
    TrialAccumulator *acc;
    RankCause *causes; /* what each rank's error events said: which part's failure leads */
    /* how many parts have failed so far, by a fan-out notice or (the part that ended first
     * without one) by its end: the last failed_seq given */
    unsigned failures_seen;
    Part *parts;
    PartFailure *failures; /* room for each part's, filled when the reason is written */
    size_t n;
    int64_t deadline_ms, stop_deadline_ms;
    int stopping, cancelled, timed_out;
    int stop_iter;   /* the iteration at which it asked (launcher_past_stop) */
    int stop_wanted; /* on_iteration asked for a stop: cancelled at the next step */
    /* TRIAL_OK until a part goes wrong on its own (not by our stop); then TRIAL_UNREACHABLE
     * (its ssh failed: failure says so) or TRIAL_FAILED (its command failed: failed_part) */
    TrialStatus failure_status;
    const Part *failed_part; /* the first part whose command failed: the reason's ended_first */
    char failure[LAUNCH_SSH_REASON_MAX]; /* the words the reason gives, once they are written */
    char failure_stderr[200]; /* the leading part's last stderr line, said after failure */
    char protocol_error[256];
    Observation *result;
};

/* The name a part's lines, events and reason give: its machine's, or the pool host named
 * instead (cfg.remote_host). */
const char *launch_ssh_machine_name(const SshRun *r, const Part *p);
/* Part p's channel ended: the first part that went wrong on its own fails the trial
 * (failure_status; failed_part, or an ssh failure's words in failure). */
void launch_ssh_failure_note(SshRun *r, Part *p);
/* The trial a part failed (failure_status is not TRIAL_OK): o's status, its reason, and, lost
 * unreachable, the machines it did not reach (o->unreachable). */
void launch_ssh_failure_write(SshRun *r, Observation *o);

#endif
