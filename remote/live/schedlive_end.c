/* The live driver's end of a run (remote/live/schedlive.c serves each run until then): a
 * start the backend refused after all, a run the backend took, one the fence turned away, a
 * stop with its checkpoint, a run that ended by itself (the job done) and a death, counted. */
#include "remote/live/schedlive_priv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/plural.h"
#include "core/sched/sched.h"
#include "remote/live/liverun.h"

const char *schedlive_ended(char *buf, size_t size, long step, const char *status)
{
    if (step < 0)
        snprintf(buf, size, "before its first progress line (%s)", status);
    else
        snprintf(buf, size, "after step %ld (its last progress line; %s)", step, status);
    return buf;
}

/* Counts a death; returns how many there have been in a row, each within death_window_s of
 * the one before: a job that dies once a day is restarted each time, one that dies again
 * soon after a restart is left failed. */
static int count_death(SchedLive *l, LiveJob *j, int64_t now)
{
    if (j->deaths_near && now - j->last_death_ms >= (int64_t)(l->o.death_window_s * 1000))
        j->deaths_near = 0;
    j->deaths++;
    j->last_death_ms = now;
    return ++j->deaths_near;
}

/* The run exited 0 unasked: its script says the training is done, so the job is done. The
 * model finishes it now (sched_complete): its GPUs go back at once for the other jobs, and no
 * decision places it again (docs/scheduler-live.md, "Deaths"). Left to the model's progress,
 * its GPUs sat idle in the model until it finished the job there, and a decision that resized
 * it meanwhile started it again. */
static void ended_itself(SchedLive *l, LiveJob *j)
{
    j->ended_itself = 1;
    j->need_start = 0;
    j->want_gpus = 0;
    j->resize_pending = 0;
    j->ceiling_until_ms = 0; /* no lift to wait for */
    char at[48];
    schedlive_at_step(at, sizeof at, j->step);
    size_t idx = (size_t)(j - l->jobs);
    SchedJobInfo info;
    Error err;
    if (sched_job_info(l->s, idx, &info) < 0 || info.state == SCHED_JOB_DONE) {
        schedlive_log(l, "%s: ended by itself %s", j->name, at); /* the model finished it too */
        return;
    }
    if (sched_complete(l->s, idx, &err) < 0) {
        schedlive_log(l, "%s: ended by itself %s (the scheduler: %s)", j->name, at, err.msg);
        return;
    }
    j->complete_event = 1;
    if (info.gpus > 0)
        schedlive_log(l,
                      "%s: ended by itself %s: done, its %d GPU%s go%s back to the scheduler "
                      "for other jobs",
                      j->name, at, info.gpus, plural_s(info.gpus), info.gpus == 1 ? "es" : "");
    else
        schedlive_log(l, "%s: ended by itself %s: done", j->name, at);
}

void schedlive_run_ended(SchedLive *l, LiveJob *j, int64_t now)
{
    snprintf(j->status, sizeof j->status, "%s", l->ops->status(j->run));
    int asked = j->stop_wanted || j->stopping;
    /* The backend's request was refused after its start returned (Slurm: sbatch's
     * error): a refused start, not a death; a stop asked meanwhile is only a stop. */
    LiveRefusal how = LIVERUN_REFUSED_ONCE;
    const char *refused_why = !j->preempted && !asked && !l->stopping_all && l->ops->refused
                                  ? l->ops->refused(j->run, &how)
                                  : NULL;
    /* cancelled on a limit of its size before it printed a line (one that started
     * meanwhile and was stopped is an end like any other) */
    int limited = j->limit_wait && j->seen == 0 && !l->stopping_all;
    j->limit_wait = 0;
    if (!refused_why && !limited) {
        j->start_refused = 0;
        j->limit_tries = 0;
    }
    /* Only a run seen running says its size passed the cluster's limits: one stopped or
     * preempted while pending may have waited on a limit whose reason no round had read
     * yet (LiveRunOps.over_limit), and would make a size refusal read as a count one
     * (schedlive_limit_refused) or forget a ceiling the limit still holds.
     * A preempted run was counted when the backend took it (schedlive_preempted), before
     * its size was cleared. */
    if (!refused_why && !limited && j->seen > 0 && !j->preempted)
        schedlive_ran(j);
    if (refused_why || limited) {
        j->runs--; /* the job never ran */
        schedlive_start_refused(l, j, refused_why ? how : j->limit_how, j->run_gpus, j->n_run_nodes,
                                j->run_slot_gpus, refused_why ? refused_why : j->limit_why);
    } else if (j->preempted) {
        /* said when the backend took it (schedlive_preempted): no death. With REQUEUE that
         * is usually while its copy is pending, before the exit line that says the TERM
         * wrote a checkpoint reached its output: read again now that the run is over, so
         * the next run resumes from that checkpoint rather than an older one or none. */
        if (!j->preempt_saved && l->ops->rank0_saved(j->run)) {
            j->has_ckpt = 1;
            j->saved_step = j->step;
            schedlive_log(l,
                          "%s: its preempted run ended having written its checkpoint at "
                          "step %ld: the next run resumes from it",
                          j->name, j->step);
        }
    } else if (strstr(j->status, "exited 75: " SCHEDLIVE_FENCE_WORD)) {
        /* Not a death: the job never started. Another run of it still holds its folder
         * (left on a host whose sshd died); the backend stops that one when its host
         * answers. The model keeps the placement; the start is tried again. */
        if (!j->fence_said && !l->stopping_all)
            schedlive_log(l,
                          "%s: another run of it still holds its folder (one left on a "
                          "host whose connection dropped?): it starts once that run has "
                          "stopped, tried every %d s",
                          j->name, SCHEDLIVE_FENCE_RETRY_S);
        j->fence_said = 1;
        j->runs--; /* the job never ran: the start that gets through is the run */
        j->need_start = j->want_gpus > 0;
        j->start_after_ms = now + SCHEDLIVE_FENCE_RETRY_S * 1000;
    } else if (asked && strcmp(j->status, "exited 0") == 0) {
        j->has_ckpt = 1;
        j->saved_step = j->step;
        char epoch[40] = "", loss[40] = "";
        if (j->epoch >= 0)
            snprintf(epoch, sizeof epoch, " (epoch %.2f)", j->epoch);
        if (!isnan(j->loss))
            snprintf(loss, sizeof loss, " (loss %.4f)", j->loss);
        char at[48];
        schedlive_log(l, "%s: stopped %s%s, checkpoint written%s", j->name,
                      schedlive_at_step(at, sizeof at, j->step), epoch, loss);
    } else if (asked) {
        schedlive_log(l, "%s: stopped: %s (no new checkpoint)", j->name, j->status);
    } else if (strcmp(j->status, "exited 0") == 0) {
        ended_itself(l, j);
    } else {
        char ended[384]; /* its status (300) and where it stood */
        /* where this run stood: its own last line, not the run's before it (j->step is
         * the job's, kept across runs) when it died before printing one */
        long run_step = j->seen ? j->step : -1;
        if (l->ops->rank0_saved(j->run)) { /* another host's run died; rank 0 saved */
            j->has_ckpt = 1;
            j->saved_step = j->step;
        }
        int down = schedlive_run_on_unusable(l, j);
        if (down >= 0 && j->want_gpus > 0 && !l->stopping_all) {
            /* Its host went down (drained in the model: schedlive_nodes.c). A restart
             * there now would only fail and leave the job failed; the decision that
             * moves it off the node starts it. Not the job's death: its node's. That
             * decision may have come in this very step, enacted before this end was
             * read (need_start set while the run was already over): its start stands. */
            schedlive_log(l,
                          "%s: its run ended %s with %s, which the scheduler no longer "
                          "uses: it restarts %s where %s decision places it",
                          j->name, schedlive_ended(ended, sizeof ended, run_step, j->status),
                          schedlive_machine(l, down),
                          j->has_ckpt ? "from its checkpoint" : "fresh (no checkpoint yet)",
                          j->need_start ? "this" : "the next");
            /* No decision of this step placed it elsewhere: its GPUs go back in the model
             * (as a preemption's do), so the next decision places it again. Kept there, a
             * node that answers again before that decision left it placed and "running"
             * in the model, and a policy that does not resize it never started it. */
            Error err;
            if (!j->need_start && sched_evict(l->s, (size_t)(j - l->jobs), &err) < 0)
                schedlive_log(l, "%s: %s", j->name, err.msg);
            else if (!j->need_start)
                j->preempt_event = 1; /* the model's stop that follows: said here */
        } else if (count_death(l, j, now) == 1 && j->want_gpus > 0 && !l->stopping_all) {
            char ago[96] = "";
            double w = l->o.death_window_s;
            if (j->deaths > 1)
                snprintf(ago, sizeof ago,
                         " (its last death was over %.0f %s ago: counted as a first)",
                         w >= 120 ? w / 60 : w, w >= 120 ? "min" : "s");
            schedlive_log(l, "%s: died unexpectedly %s: restarting %s%s", j->name,
                          schedlive_ended(ended, sizeof ended, run_step, j->status),
                          j->has_ckpt ? "from its checkpoint" : "fresh (no checkpoint yet)", ago);
            j->need_start = 1;
        } else {
            schedlive_log(l, "%s: died unexpectedly %s%s", j->name,
                          schedlive_ended(ended, sizeof ended, run_step, j->status),
                          j->want_gpus > 0 && !l->stopping_all
                              ? ": second death in a row, left stopped"
                              : "");
            if (j->want_gpus > 0 && !l->stopping_all)
                schedlive_fail(l, j);
        }
    }
    l->ops->free(j->run);
    j->run = NULL;
    j->run_gpus = 0;
    j->n_run_nodes = 0;
    j->stopping = j->stop_wanted = j->killed = 0;
    j->preempted = j->preempt_saved = 0;
}
