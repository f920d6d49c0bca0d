/* What `schedule --live` says of its jobs' real progress: a line each on standard output, and
 * a progress record each on the --events stream. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/schedule_live_status.h"
#include "cmd/table_row.h"
#include "core/base/clock.h"
#include "core/base/jsonprint.h"
#include "core/base/plural.h"

/* One progress record of the --events stream; cJSON quotes the job name, which comes from
 * the workload file and may hold any character. */
static void write_progress(FILE *out, double wall_s, double time_s, const SchedLiveJob *j)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "wall_s", wall_s);
    cJSON_AddNumberToObject(o, "time_s", time_s);
    cJSON_AddStringToObject(o, "event", "progress");
    cJSON_AddStringToObject(o, "job", j->name);
    cJSON_AddBoolToObject(o, "running", j->running);
    if (j->suspended) /* only while it is: a record without it is not suspended */
        cJSON_AddBoolToObject(o, "suspended", 1);
    cJSON_AddNumberToObject(o, "gpus", j->gpus);
    if (j->ceiling_gpus > 0) /* the cluster refused it more (left out while it did not) */
        cJSON_AddNumberToObject(o, "ceiling_gpus", j->ceiling_gpus);
    cJSON_AddNumberToObject(o, "step", (double)j->step);
    /* what the job's progress lines did not say (the protocol's -1) is left out */
    if (j->epoch >= 0)
        cJSON_AddNumberToObject(o, "epoch", j->epoch);
    if (!isnan(j->loss)) /* a loss may be negative; NAN is "none" */
        cJSON_AddNumberToObject(o, "loss", j->loss);
    if (j->examples_per_s >= 0)
        cJSON_AddNumberToObject(o, "examples_per_s", j->examples_per_s);
    cJSON_AddNumberToObject(o, "model_progress", j->model_progress);
    char *text = jsonprint_text(o, 0);
    if (text)
        fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(o);
}

/* A figure of the job's progress lines, or "-" where they did not give it (the protocol's
 * -1 for an absent field). */
static const char *figure(char *buf, size_t size, const char *fmt, double v)
{
    if (v < 0)
        return "-";
    snprintf(buf, size, fmt, v);
    return buf;
}

/* The loss has no sign to spare (a negative log-likelihood may be below 0): NAN is "none". */
static const char *loss_figure(char *buf, size_t size, double loss)
{
    if (isnan(loss))
        return "-";
    snprintf(buf, size, "%.4f", loss);
    return buf;
}

void schedule_live_status(SchedLive *l, double t0, FILE *events, int to_stdout)
{
    for (size_t i = 0; i < schedlive_job_count(l); i++) {
        SchedLiveJob j;
        schedlive_job(l, i, &j);
        char st[32], ep[32], lo[32], eps[32], said[96], ceiling[100] = "";
        const char *state = j.suspended ? "suspended" : j.running ? "running" : "stopped";
        if (schedlive_ceiling_text(&j, said, sizeof said)[0])
            snprintf(ceiling, sizeof ceiling, " (%s)", said);
        /* a running job that has printed no progress line yet has no step: "-", not -1 */
        if (to_stdout && (j.running || j.step >= 0))
            printf("[%7.2fs]   %-12s %-10s model %5.1f%% | real %s %d GPU%s%s step %s epoch %s "
                   "loss %s %s ex/s\n",
                   clock_now_s() - t0, j.name, j.model, 100 * j.model_progress, state, j.gpus,
                   plural_s(j.gpus), ceiling, figure(st, sizeof st, "%.0f", (double)j.step),
                   figure(ep, sizeof ep, "%.2f", j.epoch), loss_figure(lo, sizeof lo, j.loss),
                   figure(eps, sizeof eps, "%.0f", j.examples_per_s));
        if (events && j.step >= 0)
            write_progress(events, clock_now_s() - t0, schedlive_sim_time(l), &j);
    }
    fflush(stdout);
}

/* The closing table, a row per job; returns 1 when a job failed. */
int schedule_live_table(SchedLive *l)
{
    table_row(stdout, "%-12s %-10s %8s %6s %5s %7s %6s %10s %8s %10s %10s  %s", "job", "model",
              "model%", "runs", "resz", "deaths", "failed", "steps", "epoch", "last_loss", "ex/s",
              "last status");
    int failed = 0;
    for (size_t i = 0; i < schedlive_job_count(l); i++) {
        SchedLiveJob j;
        schedlive_job(l, i, &j);
        failed |= j.failed;
        /* a job that never reported progress has no figures at all */
        int none = j.step < 0;
        char st[32], ep[32], lo[32], eps[32];
        table_row(stdout, "%-12s %-10s %7.1f%% %6d %5d %7d %6s %10s %8s %10s %10s  %s", j.name,
                  j.model, 100 * j.model_progress, j.runs, j.resizes, j.deaths,
                  j.failed ? "yes" : "no", figure(st, sizeof st, "%.0f", (double)j.step),
                  none ? "-" : figure(ep, sizeof ep, "%.2f", j.epoch),
                  none ? "-" : loss_figure(lo, sizeof lo, j.loss),
                  none ? "-" : figure(eps, sizeof eps, "%.0f", j.examples_per_s),
                  j.status[0] ? j.status : "-");
    }
    return failed;
}
