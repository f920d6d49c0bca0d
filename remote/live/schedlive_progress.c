/* A live job's run as its progress lines tell it (the protocol's lines, remote/live/liverun.h's
 * JobProgress): its first line (a resume checked against its checkpoint), where it stands, and
 * what the model learns of its progress: the loss curve (--loss-progress) or its epoch
 * (--real-progress). */
#include <math.h>
#include <stdio.h>

#include "core/base/plural.h"
#include "core/sched/losscurve.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive_priv.h"

/* loss_progress: the job's loss curve, not the catalogue, says how much of it is done; the
 * model's progress becomes that share of the job's epochs (sched_report_progress). */
static void report_loss(SchedLive *l, LiveJob *j, long step, double loss)
{
    if (isnan(loss)) /* this line gave no loss */
        return;
    int rc = losscurve_add(&j->curve, (double)step, loss);
    if (rc < 0)
        return;
    if (rc == 1)
        schedlive_log(l,
                      "%s: loss %.4g at step %ld is at or below 0, under the convergence model's "
                      "asymptote (>= 0): --loss-progress keeps the model's simulated progress "
                      "for it",
                      j->name, loss, step);
    double f = losscurve_fraction_done(&j->curve, (double)step, l->o.loss_tol);
    if (f < 0)
        return;
    size_t idx = (size_t)(j - l->jobs);
    SchedJobInfo info;
    Error err;
    if (sched_job_info(l->s, idx, &info) < 0 ||
        sched_report_progress(l->s, idx, f * info.epochs_total, 0, &err) < 0)
        return;
    j->loss_fraction = f;
    int decile = (int)(f * 10);
    if (decile != j->loss_decile_logged) {
        j->loss_decile_logged = decile;
        const ConvModel *m = &j->curve.model;
        double total = losscurve_total_steps(&j->curve, l->o.loss_tol);
        /* A curve first known after the job passed its end (few progress lines, a fast
         * job) said "100% done at step 181 of ~26", which reads as a miscount. */
        char of[80];
        if ((double)step > total)
            snprintf(of, sizeof of, " (the curve reached its end at step ~%.0f)", total);
        else
            snprintf(of, sizeof of, " of ~%.0f", total);
        schedlive_log(l,
                      "%s: loss curve 1/(%.3g k + %.3g) + %.3g from %zu points: %.0f%% done "
                      "at step %ld%s",
                      j->name, m->theta0, m->theta1, m->theta2, j->curve.n, 100 * f, step, of);
    }
}

/* ", loss 0.1822" for a log line, or nothing when the progress line gave no loss. */
static const char *loss_note(char *buf, size_t size, double loss)
{
    if (isnan(loss))
        return "";
    snprintf(buf, size, ", loss %.4f", loss);
    return buf;
}

void schedlive_take_progress(SchedLive *l, LiveJob *j)
{
    const JobProgress *p = l->ops->progress(j->run);
    /* Once a run: a diverged job prints a NaN loss every step. */
    if (p->refused && !j->refused_said) {
        j->refused_said = 1;
        schedlive_log(l, "%s: a line it printed was refused: %s", j->name, p->first_refused);
    }
    if (p->seen > j->seen) {
        /* The run's first line, not the latest: one step may bring several (a Slurm
         * job's file read after a late wake-up), and a resume is checked against it. */
        if (j->seen == 0) {
            char ln[40];
            j->run_first_step = p->first_step;
            if (j->fence_said)
                schedlive_log(l, "%s: its folder is free again: the run goes on", j->name);
            j->fence_said = 0;
            if (j->has_ckpt && j->runs > 1) {
                j->resumed_step = p->first_step;
                schedlive_log(l,
                              "%s: run %d on %s (%d GPU%s) resumed at step %ld (checkpoint at "
                              "step %ld)%s",
                              j->name, j->runs, schedlive_machine(l, j->host), j->run_gpus,
                              plural_s(j->run_gpus), p->first_step, j->saved_step,
                              loss_note(ln, sizeof ln, p->first_loss));
                /* A run given {resume} that counts from before its checkpoint started
                 * afresh: a template without {resume}, or a job that ignores it, loses
                 * every step at each resize while the log said it resumed. */
                if (p->first_step <= j->saved_step)
                    schedlive_log(l,
                                  "%s: run %d did not resume: its first step %ld is not after "
                                  "its checkpoint's step %ld (expected {resume} in "
                                  "job_command, and a job that loads the checkpoint it "
                                  "names and goes on from its step)",
                                  j->name, j->runs, p->first_step, j->saved_step);
            } else {
                schedlive_log(l, "%s: run %d on %s (%d GPU%s) first step %ld%s", j->name, j->runs,
                              schedlive_machine(l, j->host), j->run_gpus, plural_s(j->run_gpus),
                              p->first_step, loss_note(ln, sizeof ln, p->first_loss));
            }
        }
        int from = j->seen;
        j->seen = p->seen;
        j->step = p->step;
        j->loss = p->loss;
        j->eps = p->examples_per_s;
        j->epoch = p->epoch;
        Error err;
        if (l->o.loss_progress && !l->stopping_all) {
            /* every line since the last step is a point of the curve, not the latest
             * alone (lines past the ring's reach, the oldest, are gone) */
            if (p->seen - from > JOBPROGRESS_POINTS)
                from = p->seen - JOBPROGRESS_POINTS;
            for (int i = from; i < p->seen; i++) {
                const JobLossPoint *pt = &p->points[i % JOBPROGRESS_POINTS];
                report_loss(l, j, pt->step, pt->loss);
            }
        } else if (l->o.real_progress && !l->stopping_all) {
            /* A line without "epoch" (the protocol's -1) says nothing about progress: once,
             * not a refused report per line. */
            if (p->epoch < 0 && !j->no_epoch_said) {
                j->no_epoch_said = 1;
                schedlive_log(l,
                              "%s: its progress lines have no \"epoch\": --real-progress "
                              "keeps the model's simulated progress for it",
                              j->name);
            } else if (p->epoch >= 0 &&
                       sched_report_progress(l->s, (size_t)(j - l->jobs), p->epoch, 0, &err) < 0) {
                schedlive_log(l, "%s: %s", j->name, err.msg);
            }
        }
    }
}
