/* A run the backend took off its GPUs for another job (Slurm's preemption: CANCEL, REQUEUE)
 * is not a death: the job's GPUs leave the model at once and a later decision places it
 * again, resuming from its checkpoint; one it suspended (SUSPEND) keeps its GPUs and makes no
 * progress until resumed (remote/live/schedlive_priv.h, docs/slurm.md). */
#include <stdio.h>

#include "core/base/plural.h"
#include "remote/live/schedlive_priv.h"

int schedlive_preempted(SchedLive *l, LiveJob *j)
{
    if (j->preempted)
        return 1;
    const char *how = j->run && l->ops->preempted ? l->ops->preempted(j->run) : "";
    if (!how[0])
        return 0;
    j->preempted = 1;
    j->preemptions++;
    /* The TERM Slurm sends first (KillWait, GraceTime) may have let it write a checkpoint:
     * its batch script's exit 0 says so. */
    char ck[96];
    j->preempt_saved = l->ops->rank0_saved(j->run);
    if (j->preempt_saved) {
        j->has_ckpt = 1;
        j->saved_step = j->step;
        snprintf(ck, sizeof ck, "checkpoint written at step %ld", j->step);
    } else if (j->has_ckpt) {
        snprintf(ck, sizeof ck, "no new checkpoint (the last at step %ld)", j->saved_step);
    } else {
        snprintf(ck, sizeof ck, "no checkpoint yet");
    }
    size_t idx = (size_t)(j - l->jobs);
    SchedJobInfo info;
    int held = sched_job_info(l->s, idx, &info) == 0 ? info.gpus : 0;
    Error err;
    if (held > 0 && !l->stopping_all) {
        if (sched_evict(l->s, idx, &err) < 0)
            schedlive_log(l, "%s: %s", j->name, err.msg);
        else
            j->preempt_event = 1;
    }
    /* A run seen running passed the cluster's limits at its size: counted now, while its
     * size is still known (its end, later, finds it cleared). */
    if (j->seen > 0)
        schedlive_ran(j);
    /* whatever was asked of the run before goes: a later decision starts the job again */
    j->need_start = j->resize_pending = 0;
    j->stop_wanted = j->stopping = j->killed = 0;
    j->run_gpus = 0;
    j->n_run_nodes = 0;
    j->run_where[0] = 0;
    const char *label = l->ops->label ? l->ops->label(j->run) : "run";
    char atb[48];
    const char *at = schedlive_at_step(atb, sizeof atb, j->step);
    if (l->stopping_all)
        schedlive_log(l, "%s: %s %s, %s, %s", j->name, label, how, at, ck);
    else if (held == 0) /* a stop of the model's was on its way: nothing to give back */
        schedlive_log(l,
                      "%s: %s %s, %s, %s: not a death; it held no GPUs in the model, "
                      "a decision that places it again %s",
                      j->name, label, how, at, ck,
                      j->has_ckpt ? "resumes from its checkpoint" : "starts it fresh");
    else
        schedlive_log(l,
                      "%s: %s %s, %s, %s: not a death; its %d GPU%s leave the model "
                      "until a decision places it again, %s",
                      j->name, label, how, at, ck, held, plural_s(held),
                      j->has_ckpt ? "resuming from its checkpoint" : "starting fresh");
    return 1;
}

void schedlive_sync_suspended(SchedLive *l, LiveJob *j)
{
    int now = j->run && !j->preempted && l->ops->suspended && l->ops->running(j->run) &&
              l->ops->suspended(j->run);
    if (now && j->stop_wanted && !j->stopping && !j->suspended_stop_said) {
        j->suspended_stop_said = 1; /* the backend's ready() holds the TERM back */
        schedlive_log(l,
                      "%s: its stop waits until it is resumed: a suspended job cannot write its "
                      "checkpoint",
                      j->name);
    }
    if (now == j->suspended)
        return;
    if (!now)
        j->suspended_stop_said = 0;
    Error err;
    if (sched_suspend(l->s, (size_t)(j - l->jobs), now, &err) < 0) {
        schedlive_log(l, "%s: %s", j->name, err.msg);
        return;
    }
    j->suspended = now;
}
