/* Journaling a headless tuning session (DESIGN §5.4): every trial event written before it is
 * acted on. Reading a journal back to resume is tune_journal_resume.c (what both share:
 * tune_journal_priv.h). */
#include "remote/session/tune_journal.h"

#include <cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/dirsync.h"
#include "core/base/utf8.h"
#include "core/journal/journal_override.h"
#include "core/journal/journal_trial.h"
#include "remote/session/tune_journal_priv.h"

TuneJournal *tune_journal_new(const char *dir)
{
    /* A file size limit reached is a failed write to report, not a reason to die. */
    signal(SIGXFSZ, SIG_IGN);
    TuneJournal *tj = calloc(1, sizeof(TuneJournal));
    if (tj && dir)
        snprintf(tj->dir, sizeof tj->dir, "%s", dir);
    return tj;
}

void tune_journal_free(TuneJournal *tj)
{
    if (!tj)
        return;
    journal_close(tj->journal);
    journal_close(tj->held);
    journal_log_clear(&tj->log);
    free(tj);
}

const char *tune_journal_id(const TuneJournal *tj)
{
    return tj->id;
}

size_t tune_journal_problems(const TuneJournal *tj, const char *const **lines)
{
    *lines = (const char *const *)tj->log.problems;
    return tj->log.n_problems;
}

void tune_journal_set_quiet(TuneJournal *tj, int quiet)
{
    tj->quiet = quiet;
}

int tune_journal_failed(const TuneJournal *tj)
{
    return tj->journal && journal_failed(tj->journal);
}

const char *tune_journal_error(const TuneJournal *tj)
{
    return tune_journal_failed(tj) && tj->error[0] ? tj->error : NULL;
}

const char *tune_journal_path(const TuneJournal *tj)
{
    return tj->path;
}

void tune_setup_clear(TuneSetup *s)
{
    cJSON_Delete(s->cluster);
    cJSON_Delete(s->job);
    memset(s, 0, sizeof *s);
}

/* Appends one event (taking it); a failure stops the session from launching anything more. */
static int write_event(TuneJournal *tj, cJSON *ev)
{
    if (!tj->journal || journal_failed(tj->journal)) {
        cJSON_Delete(ev);
        return -1;
    }
    Error err;
    int rc = journal_append(tj->journal, ev, &err);
    cJSON_Delete(ev);
    if (rc < 0) {
        if (!tj->error[0])
            snprintf(tj->error, sizeof tj->error, "%s", err.msg);
        char reason[ERROR_MSG_MAX + 64];
        snprintf(reason, sizeof reason, "%s; no more trials are launched", err.msg);
        if (!tj->quiet)
            fprintf(stderr, "tunedeck tune: %s\n", reason);
        if (tj->tuner)
            tuner_stop(tj->tuner, reason);
    }
    return rc;
}

int tune_journal_append(TuneJournal *tj, cJSON *ev)
{
    return write_event(tj, ev);
}

void tune_journal_add_raised(cJSON *ev, const Tuner *t)
{
    if (tuner_budget_raised(t) > 0)
        cJSON_AddNumberToObject(ev, "raised", (double)tuner_budget_raised(t));
}

void tune_journal_on_event(void *userdata, TunerEvent ev, const TrialRecord *rec)
{
    TuneJournal *tj = userdata;
    if (!tj || tj->muted || !tj->journal)
        return;
    /* The file's number: trials lost to damaged lines before a resume keep theirs taken. */
    int trial = rec ? tuner_outside_number(tj->tuner, rec->trial) : 0;
    switch (ev) {
    case TUNER_EVENT_SUGGESTED: {
        cJSON *j = journal_suggested_json(trial, rec->overridden, rec->override_id,
                                          &rec->suggestion, rec->suggest_ms);
        /* what the suggestion was made leaving out: a resume re-makes it so */
        journal_suggested_add_left_out(j, rec->suggestion.schedule->cluster, rec->left_out);
        write_event(tj, j);
        break;
    }
    /* `started` when the launcher is about to start it, not when before_launch begins to
     * hold it: a session killed while it held (stopping a leftover group, seconds) never ran
     * the trial, and a resume must say so and queue its override again (docs/journal.md). */
    case TUNER_EVENT_STARTED:
        break;
    case TUNER_EVENT_LAUNCHED:
        write_event(tj, journal_started_json(trial));
        break;
    case TUNER_EVENT_FINISHED:
        write_event(tj, journal_finished_json(trial, rec->obs));
        break;
    case TUNER_EVENT_BUDGET: {
        /* Journaled when it changes, not only in `ended`: a console killed outright (SIGKILL,
         * a lost machine) keeps the :budget it was given. */
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "event", "budget");
        cJSON_AddNumberToObject(b, "wall_s", (double)time(NULL));
        cJSON_AddNumberToObject(b, "budget", (double)tuner_budget(tj->tuner));
        tune_journal_add_raised(b, tj->tuner);
        write_event(tj, b);
        break;
    }
    /* The queue a resume restores: nothing the operator planned is lost with the console. */
    /* Each with the budget it leaves (tuner_override_fitted raised it for the override,
     * tuner_override_drop gave the raise back, before the event): one line, so a session
     * killed before the `budget` line after it keeps the two together. */
    case TUNER_EVENT_QUEUED:
    case TUNER_EVENT_DROPPED: {
        cJSON *o = ev == TUNER_EVENT_QUEUED
                       ? journal_override_queued_json(rec->override_id, rec->suggestion.schedule)
                       : journal_override_dropped_json(rec->override_id);
        cJSON_AddNumberToObject(o, "budget", (double)tuner_budget(tj->tuner));
        tune_journal_add_raised(o, tj->tuner);
        write_event(tj, o);
        break;
    }
    case TUNER_EVENT_CONVERGED: /* re-derived on resume from the replayed suggestions */
        break;
    }
}

static int is_utf8(const char *s)
{
    size_t n = strlen(s);
    return utf8_valid_len(s, n) == n;
}

/* The first key under item whose name or string value is not UTF-8, or NULL. */
static const char *not_utf8(const cJSON *item)
{
    for (const cJSON *c = item ? item->child : NULL; c; c = c->next) {
        const char *key = c->string ? c->string : "?";
        if ((c->string && !is_utf8(c->string)) || (cJSON_IsString(c) && !is_utf8(c->valuestring)))
            return key;
        const char *bad = not_utf8(c);
        if (bad)
            return bad;
    }
    return NULL;
}

/* What a resume runs again must read back as it was: a journal is UTF-8 JSON, whose writer
 * puts U+FFFD for bytes that are not UTF-8 (jsonprint.h), and a command of other bytes would
 * come back another command. Refused before a file is made. */
static int check_resumable(const TuneSetup *setup, Error *err)
{
    const char *flag = !is_utf8(setup->trial_cmd) ? "--trial-cmd"
                       : !is_utf8(setup->sim)     ? "--sim"
                                                  : NULL;
    if (flag)
        return error_set(err,
                         "journal: %s holds bytes that are not UTF-8: a journal is UTF-8 JSON, and "
                         "a resume would not run the same",
                         flag);
    const char *file = "cluster", *key = not_utf8(setup->cluster);
    if (!key) {
        file = "job";
        key = not_utf8(setup->job);
    }
    if (key)
        return error_set(err,
                         "journal: the %s's field '%s' holds bytes that are not UTF-8: a journal "
                         "is UTF-8 JSON, and a resume would not get them back",
                         file, key);
    return 0;
}

int tune_journal_start(TuneJournal *tj, Tuner *t, const TuneSetup *setup, Error *err)
{
    if (!tj->dir[0])
        return error_set(err, "journal: no state folder: set TUNEDECK_STATE_DIR, "
                              "XDG_STATE_HOME or HOME");
    if (check_resumable(setup, err) < 0)
        return -1;
    journal_new_id(tj->id, sizeof tj->id);
    tj->journal = journal_create(tj->dir, tj->id, err);
    if (!tj->journal)
        return -1;
    snprintf(tj->path, sizeof tj->path, "%s", journal_file(tj->journal));
    tj->tuner = t;
    char created[32], seed[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(seed, sizeof seed, "%ld", setup->seed);
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "event", "session");
    cJSON_AddNumberToObject(h, "version", 1);
    cJSON_AddStringToObject(h, "id", tj->id);
    cJSON_AddStringToObject(h, "created", created);
    cJSON_AddStringToObject(h, "command", "tune");
    cJSON_AddStringToObject(h, "optimizer", setup->optimizer);
    cJSON_AddStringToObject(h, "seed", seed); /* a string: seeds pass 2^53 */
    cJSON_AddNumberToObject(h, "budget", (double)setup->budget);
    cJSON_AddStringToObject(h, "launcher", setup->launcher);
    if (setup->trial_cmd[0])
        cJSON_AddStringToObject(h, "trial_cmd", setup->trial_cmd);
    cJSON_AddNumberToObject(h, "trial_timeout_s", setup->timeout_s);
    cJSON_AddBoolToObject(h, "prune", !setup->no_prune);
    cJSON_AddBoolToObject(h, "stop_when_converged", setup->stop_when_converged);
    if (setup->sim[0])
        cJSON_AddStringToObject(h, "sim", setup->sim);
    if (setup->cluster)
        cJSON_AddItemToObject(h, "cluster", cJSON_Duplicate(setup->cluster, 1));
    if (setup->job)
        cJSON_AddItemToObject(h, "job", cJSON_Duplicate(setup->job, 1));
    int rc = journal_append(tj->journal, h, err);
    cJSON_Delete(h);
    if (rc < 0) {
        /* A journal without its session line is one --resume refuses: better none (a full
         * disk or a file size limit leaves it empty). Its name goes the way it came: the
         * folder synced, so that it does not come back after a power loss. */
        journal_close(tj->journal);
        tj->journal = NULL;
        if (unlink(tj->path) == 0)
            dirsync_parent(tj->path);
        size_t len = err ? strlen(err->msg) : 0;
        if (err)
            snprintf(err->msg + len, sizeof err->msg - len, "; the file was removed");
    }
    return rc;
}

void tune_journal_end(TuneJournal *tj, const Tuner *t)
{
    if (!tj->journal || journal_failed(tj->journal))
        return;
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "event", "ended");
    cJSON_AddNumberToObject(ev, "wall_s", (double)time(NULL));
    cJSON_AddNumberToObject(ev, "trials", (double)tuner_n_trials(t));
    /* The budget in force at the end: the console's :budget (and an override launched past
     * the budget) changes it, and a resume goes on to it, not to the session line's. */
    cJSON_AddNumberToObject(ev, "budget", (double)tuner_budget(t));
    tune_journal_add_raised(ev, t);
    const TrialRecord *best = tuner_best(t);
    if (best) {
        cJSON_AddNumberToObject(ev, "best_trial", tuner_outside_number(t, best->trial));
        cJSON_AddNumberToObject(ev, "best_time_s", best->obs->time_s);
    }
    if (tuner_last_error(t))
        cJSON_AddStringToObject(ev, "stopped", tuner_last_error(t));
    write_event(tj, ev);
}
