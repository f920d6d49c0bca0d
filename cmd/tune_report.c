/* What `tune` prints when its session ends: each trial and the best, as a table or as one
 * JSON object, and for an interrupted session the command that resumes it. It only reads the
 * tuner and the session; cmd_tune.c runs them. */
#include "cmd/tune_report.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/table_row.h"
#include "cmd/tune_interrupted.h"
#include "core/base/jsonprint.h"
#include "core/base/termsafe.h"

static cJSON *trial_json(const TrialRecord *r, const TuneEnding *e)
{
    cJSON *j = cJSON_CreateObject();
    const Observation *o = r->obs;
    cJSON_AddNumberToObject(j, "trial", r->trial);
    if (o && o->status == TRIAL_OK)
        cJSON_AddNumberToObject(j, "time_s", o->time_s);
    else
        cJSON_AddNullToObject(j, "time_s");
    cJSON_AddStringToObject(j, "status", o ? trial_status_name(o->status)
                                        : e->signal ? "interrupted" : "running");
    if (o && o->reason[0]) {
        char reason[sizeof o->reason]; /* cut by snprintf maybe mid-character: made UTF-8 */
        termsafe(reason, sizeof reason, o->reason);
        cJSON_AddStringToObject(j, "reason", reason);
    }
    if (!o && e->signal) {
        char why[128];
        tune_interrupted_reason(why, sizeof why, e->signal, r);
        cJSON_AddStringToObject(j, "reason", why);
    }
    size_t lines = session_trial_log_lines(e->ses, r->trial);
    if (lines)
        cJSON_AddNumberToObject(j, "log_lines", (double)lines);
    if (session_trial_log_left_out(e->ses, r->trial)) /* to keep the log's total bound */
        cJSON_AddBoolToObject(j, "log_left_out", 1);
    cJSON_AddNumberToObject(j, "suggest_ms", r->suggest_ms);
    if (r->suggestion.has_prediction) {
        cJSON_AddNumberToObject(j, "predicted_s", r->suggestion.mean_s);
        cJSON_AddNumberToObject(j, "predicted_p10_s", r->suggestion.p10_s);
        cJSON_AddNumberToObject(j, "predicted_p90_s", r->suggestion.p90_s);
    }
    if (r->suggestion.has_ei)
        cJSON_AddNumberToObject(j, "expected_improvement_s", r->suggestion.ei_s);
    if (r->overridden)
        cJSON_AddBoolToObject(j, "overridden", 1);
    cJSON_AddItemToObject(j, "schedule", schedule_to_json(r->suggestion.schedule));
    return j;
}

const char *tune_report_resume_command(char *out, size_t cap, const TuneEnding *e)
{
    const TuneJournal *tj = e->ses->journal;
    if (!tune_journal_id(tj)[0])
        return NULL;
    snprintf(out, cap, "tunedeck tune --resume %s%s", tune_journal_id(tj),
             e->json ? " --json" : "");
    return out;
}

size_t tune_report_trials_done(const Tuner *t)
{
    size_t n = 0;
    for (size_t i = 0; i < tuner_n_trials(t); i++)
        n += tuner_trial(t, i)->obs != NULL;
    return n;
}

size_t tune_report_trials_counted(const Tuner *t)
{
    return tuner_n_trials(t); /* every trial suggested has a record, with an outcome or not */
}

void tune_report_json(const Tuner *t, const TuneEnding *e)
{
    const TuneJournal *tj = e->ses->journal;
    const char *stopped_early = e->stopped_early;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "optimizer", tuner_optimizer_name(t));
    if (tune_journal_id(tj)[0])
        cJSON_AddStringToObject(root, "session", tune_journal_id(tj));
    cJSON_AddNumberToObject(root, "budget", (double)e->budget);
    cJSON_AddNumberToObject(root, "seed", (double)e->seed);
    const TrialRecord *best = tuner_best(t);
    if (best) {
        cJSON_AddNumberToObject(root, "best_time_s", best->obs->time_s);
        cJSON_AddItemToObject(root, "best_schedule", schedule_to_json(best->suggestion.schedule));
    } else {
        cJSON_AddNullToObject(root, "best_time_s");
        cJSON_AddNullToObject(root, "best_schedule");
    }
    if (stopped_early)
        cJSON_AddStringToObject(root, "stopped_early", stopped_early);
    else
        cJSON_AddNullToObject(root, "stopped_early");
    /* Interrupted: by which signal, how many trials were done, and how to go on. */
    if (e->signal) {
        char cmd[256];
        const char *resume = tune_report_resume_command(cmd, sizeof cmd, e);
        cJSON_AddStringToObject(root, "interrupted", tune_signal_name(e->signal));
        cJSON_AddNumberToObject(root, "trials_done", (double)tune_report_trials_done(t));
        cJSON_AddNumberToObject(root, "trials_counted", (double)tune_report_trials_counted(t));
        if (resume)
            cJSON_AddStringToObject(root, "resume", resume);
        else
            cJSON_AddNullToObject(root, "resume");
    } else {
        cJSON_AddNullToObject(root, "interrupted");
    }
    if (session_trial_log(e->ses))
        cJSON_AddStringToObject(root, "trial_log", session_trial_log(e->ses));
    else
        cJSON_AddNullToObject(root, "trial_log");
    cJSON *trials = cJSON_AddArrayToObject(root, "trials");
    for (size_t i = 0; i < tuner_n_trials(t); i++)
        cJSON_AddItemToArray(trials, trial_json(tuner_trial(t, i), e));
    char *text = jsonprint_text(root, 0);
    puts(text);
    free(text);
    cJSON_Delete(root);
}

/* Seconds for the table: three decimals, as before, down to 10 ms; below that three
 * significant digits, so that a sub-millisecond iteration (a small PyTorch job) reads as
 * 0.000412, not as 0.000 (the console's draw_seconds does the same). */
static void format_seconds(char *out, size_t cap, double s)
{
    if (s >= 0.01 || s <= 0)
        snprintf(out, cap, "%.3f", s);
    else
        snprintf(out, cap, "%.3g", s);
}

void tune_report_table(const Tuner *t, const TuneEnding *e)
{
    table_row(stdout, "%5s  %-11s %9s %9s %9s %3s %3s %9s  %s", "trial", "status", "time_s",
              "best_s", "predicted", "W", "PS", "suggest", "note");
    double best = INFINITY;
    for (size_t i = 0; i < tuner_n_trials(t); i++) {
        const TrialRecord *r = tuner_trial(t, i);
        const Observation *o = r->obs;
        const Schedule *s = r->suggestion.schedule;
        int ok = o && o->status == TRIAL_OK;
        if (ok && o->time_s < best)
            best = o->time_s;
        char time_buf[32] = "-", best_buf[32] = "-", pred_buf[32] = "-", note[2048] = "";
        if (ok)
            format_seconds(time_buf, sizeof time_buf, o->time_s);
        if (o) /* a trial's words reach the operator's terminal: never its controls */
            termsafe(note, sizeof note, o->reason);
        else if (e->signal)
            tune_interrupted_reason(note, sizeof note, e->signal, r);
        size_t lines = session_trial_log_lines(e->ses, r->trial);
        if (lines && !ok) { /* where its own words are: the reason is only the last of them */
            size_t used = strlen(note);
            snprintf(note + used, sizeof note - used, "%s[%zu line%s in the trial log]",
                     used ? " " : "", lines, lines == 1 ? "" : "s");
        } else if (!ok && session_trial_log_left_out(e->ses, r->trial)) {
            size_t used = strlen(note);
            snprintf(note + used, sizeof note - used, "%s[its lines left out of the trial log]",
                     used ? " " : "");
        }
        if (isfinite(best))
            format_seconds(best_buf, sizeof best_buf, best);
        if (r->suggestion.has_prediction)
            format_seconds(pred_buf, sizeof pred_buf, r->suggestion.mean_s);
        table_row(stdout, "%5d  %-11s %9s %9s %9s %3d %3d %7.1fms  %s", r->trial,
                  o           ? trial_status_name(o->status)
                  : e->signal ? "interrupted"
                              : "running",
                  time_buf, best_buf, pred_buf, schedule_count_workers(s), schedule_count_ps(s),
                  r->suggest_ms, note);
    }
    const TrialRecord *b = tuner_best(t);
    if (b) {
        char best_buf[32];
        format_seconds(best_buf, sizeof best_buf, b->obs->time_s);
        printf("best: trial %d, %s s per iteration\n", b->trial, best_buf);
    }
    if (session_trial_log(e->ses))
        printf("trial log: %s\n", session_trial_log(e->ses));
    if (e->signal) {
        char cmd[256];
        const char *resume = tune_report_resume_command(cmd, sizeof cmd, e);
        size_t done = tune_report_trials_done(t), counted = tune_report_trials_counted(t);
        printf("interrupted (%s): %zu of %d trials done\n", tune_signal_name(e->signal), done,
               tuner_budget(t));
        /* What a resume's --budget N is measured against: N - counted new trials run. */
        if (counted > done)
            printf("budget: %zu of %d used, %s included (a resume marks %s interrupted and does "
                   "not run %s again)\n",
                   counted, tuner_budget(t),
                   counted - done > 1 ? "the unfinished trials" : "the unfinished trial",
                   counted - done > 1 ? "them" : "it", counted - done > 1 ? "them" : "it");
        if (resume)
            printf("resume: %s\n", resume);
        else
            printf("resume: not possible: --no-journal kept no journal\n");
    }
}
