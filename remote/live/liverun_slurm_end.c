/* A live Slurm run's end in the driver's words; when it is Slurm's word, held until the batch
 * script's exit line is read or exit_grace_s has passed (remote/live/liverun_slurm_priv.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm_priv.h"

void liveslurm_run_end(SlurmRun *r, const char *status)
{
    /* A failed run says why in its own words, as over SSH: "exited 3: no dataset at /data" */
    int code = -1;
    if (r->said.text[0] && sscanf(status, "exited %d", &code) == 1 && code != 0)
        snprintf(r->status, sizeof r->status, "%s: %s", status, r->said.text);
    else
        snprintf(r->status, sizeof r->status, "%s", status);
    r->ended = 1;
    r->granted[0] = r->waiting[0] = 0;
    r->s->active--;
    liveslurm_unfollow(r->s, r->id); /* no round needs its record any more */
}

/* A line may still come: the job ran (a round saw it running, or its script created the
 * output file). One Slurm ended while pending never wrote one. */
static int exit_line_may_come(const SlurmRun *r)
{
    struct stat st;
    return r->ran || (r->out_path && stat(r->out_path, &st) == 0);
}

void liveslurm_note_exit(SlurmRun *r, const SlurmJobInfo *j)
{
    r->end_exit_known = j != NULL;
    r->end_exit_code = j ? j->exit_code : 0;
    r->end_exit_signal = j ? j->exit_signal : 0;
}

int liveslurm_line_saved(const SlurmRun *r)
{
    if (r->script_rc != 0)
        return 0;
    /* Slurm's record decides where it has one: a genuine line can precede the script's end
     * in slurmctld by a moment, so line_early would refuse it there by a race */
    if (r->end_exit_known)
        return r->end_exit_code == 0 && r->end_exit_signal == 0;
    return !r->line_early;
}

/* An exit line of 0 that Slurm's record contradicts is the job's, printed before its script
 * was killed or failed: said once, as the reason no checkpoint is counted. */
static void say_line_refuted(SlurmRun *r)
{
    if (r->script_rc != 0 || !r->end_exit_known || liveslurm_line_saved(r))
        return;
    char slurm_says[64];
    if (r->end_exit_signal)
        snprintf(slurm_says, sizeof slurm_says, "its batch script was killed by signal %d",
                 r->end_exit_signal);
    else
        snprintf(slurm_says, sizeof slurm_says, "its batch script exited %d", r->end_exit_code);
    liveslurm_say(r->s,
                  "slurm: %s (%s): its output ends in an exit line of status 0, but Slurm says "
                  "%s (ExitCode=%d:%d): the line is not the script's (the job's command printed "
                  "it), so no checkpoint is counted from this run",
                  r->label, r->job_name, slurm_says, r->end_exit_code, r->end_exit_signal);
}

void liveslurm_end_held(SlurmRun *r)
{
    if (r->script_rc < 0 && exit_line_may_come(r)) {
        double waited_s = (double)(clock_now_ms() - r->end_seen_ms) / 1000;
        if (waited_s < r->s->o.exit_grace_s)
            return;
        liveslurm_say(r->s,
                      "slurm: %s (%s) ended in Slurm (%s), but its batch script's exit line did "
                      "not reach %s within %g s (exit_grace_s): gave up waiting for it; "
                      "concluded from Slurm's word alone%s",
                      r->label, r->job_name, r->end_status, r->out_path ? r->out_path : "",
                      r->s->o.exit_grace_s,
                      r->saved || strcmp(r->end_status, "exited 0") == 0
                          ? ""
                          : ", no checkpoint counted from this run");
    }
    say_line_refuted(r);
    r->saved |= strcmp(r->end_status, "exited 0") == 0 || liveslurm_line_saved(r);
    liveslurm_run_end(r, r->end_status);
}

void liveslurm_ended_in_slurm(SlurmRun *r, const SlurmJobInfo *j, const char *status)
{
    liveslurm_note_exit(r, j);
    snprintf(r->end_status, sizeof r->end_status, "%s", status);
    r->end_seen_ms = clock_now_ms();
    r->granted[0] = r->waiting[0] = 0; /* Slurm holds nothing for it now */
    liveslurm_end_held(r);
}
