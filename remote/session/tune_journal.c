/* Journaling a headless tuning session and resuming one from its journal (DESIGN §5.4). */
#include "remote/session/tune_journal.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/decimal.h"
#include "core/base/dirsync.h"
#include "core/base/jfield.h"
#include "core/base/utf8.h"
#include "core/journal/journal_override.h"
#include "core/journal/journal_trial.h"

struct TuneJournal {
    Journal *journal;
    Tuner *tuner;
    int muted; /* replaying: the events are already in the journal */
    int quiet; /* the console draws on the terminal: say nothing on stderr */
    char id[JOURNAL_ID_MAX];
    char path[4096];
    char dir[4096]; /* the journals' folder main decided; "" none */
    JournalLog log; /* resume: what was read */
    char error[ERROR_MSG_MAX]; /* the first failed write's message, "" none */
};

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

const JournalLog *tune_journal_log(const TuneJournal *tj)
{
    return &tj->log;
}

/* Beside every budget a line holds: how much of it overrides raised (tuner_budget_raised),
 * for a resume to give back when one is dropped. Absent (older journals, or none raised): 0. */
static void add_raised(cJSON *ev, const Tuner *t)
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
    case TUNER_EVENT_SUGGESTED:
        write_event(tj, journal_suggested_json(trial, rec->overridden, rec->override_id,
                                               &rec->suggestion, rec->suggest_ms));
        break;
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
        add_raised(b, tj->tuner);
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
        add_raised(o, tj->tuner);
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

static int read_setup(const cJSON *h, const char *ctx, TuneSetup *s, Error *err)
{
    char seed[32] = "", command[32] = "tune";
    int version = 0;
    double budget = 0;
    if (jfield_int(h, ctx, "version", 1, 1, 1, &version, err) < 0 ||
        jfield_string(h, ctx, "command", 0, command, sizeof command, err) < 0 ||
        jfield_string(h, ctx, "optimizer", 1, s->optimizer, sizeof s->optimizer, err) < 0 ||
        jfield_string(h, ctx, "seed", 1, seed, sizeof seed, err) < 0 ||
        jfield_number(h, ctx, "budget", 1, 1, 100000, &budget, err) < 0 ||
        jfield_string(h, ctx, "launcher", 1, s->launcher, sizeof s->launcher, err) < 0 ||
        jfield_string(h, ctx, "trial_cmd", 0, s->trial_cmd, sizeof s->trial_cmd, err) < 0 ||
        jfield_number(h, ctx, "trial_timeout_s", 1, 0.001, 1e7, &s->timeout_s, err) < 0 ||
        jfield_string(h, ctx, "sim", 0, s->sim, sizeof s->sim, err) < 0)
        return -1;
    if (strcmp(command, "tune") != 0)
        return error_set(err,
                         "%s: field 'command': this journal is of a '%s' session, not "
                         "'tune'",
                         ctx, command);
    if (decimal_long(seed, 0, LONG_MAX, &s->seed) < 0)
        return error_set(err, "%s: field 'seed': expected a non-negative integer, found \"%s\"",
                         ctx, seed);
    s->budget = (long)budget;
    /* Journals from before pruning have neither field: pruning on, the stop rule off. */
    int prune = 1, converge = 0;
    if (jfield_bool(h, ctx, "prune", 0, &prune, err) < 0 ||
        jfield_bool(h, ctx, "stop_when_converged", 0, &converge, err) < 0)
        return -1;
    s->no_prune = !prune;
    s->stop_when_converged = converge;
    if (!s->sim[0]) {
        const cJSON *c = jfield_object(h, ctx, "cluster", 1, err);
        const cJSON *j = c ? jfield_object(h, ctx, "job", 1, err) : NULL;
        if (!c || !j)
            return -1;
        s->cluster = cJSON_Duplicate(c, 1);
        s->job = cJSON_Duplicate(j, 1);
    }
    return 0;
}

static int setup_from_log(TuneJournal *tj, TuneSetup *setup, Error *err);

int tune_journal_load(TuneJournal *tj, const char *id_or_path, TuneSetup *setup, Error *err)
{
    memset(setup, 0, sizeof *setup);
    if (journal_path(tj->dir[0] ? tj->dir : NULL, id_or_path, tj->path, sizeof tj->path, err) < 0)
        return -1;
    /* an id (not a path) with no journal is a session that does not exist: said so, not as
     * a file that cannot be opened */
    if (!strchr(id_or_path, '/') && access(tj->path, F_OK) < 0 && errno == ENOENT)
        return error_set(err, "no session '%s' (`tunedeck sessions` lists them; no %s)", id_or_path,
                         tj->path);
    if (journal_check_owned(tj->path, err) < 0 || journal_load(tj->path, &tj->log, err) < 0)
        return -1;
    return setup_from_log(tj, setup, err);
}

int tune_journal_load_log(TuneJournal *tj, const char *path, JournalLog *log, TuneSetup *setup,
                          Error *err)
{
    memset(setup, 0, sizeof *setup);
    journal_log_clear(&tj->log);
    tj->log = *log; /* taken, whatever comes of it */
    memset(log, 0, sizeof *log);
    if (snprintf(tj->path, sizeof tj->path, "%s", path) >= (int)sizeof tj->path)
        return error_set(err, "journal: path too long"); /* as journal_path says it */
    if (journal_check_owned(tj->path, err) < 0)
        return -1;
    return setup_from_log(tj, setup, err);
}

/* The session line and the budgets of the journal read into tj->log, as a resume takes them. */
static int setup_from_log(TuneJournal *tj, TuneSetup *setup, Error *err)
{
    if (tj->log.n == 0 ||
        strcmp(cJSON_GetObjectItemCaseSensitive(tj->log.events[0], "event")->valuestring,
               "session") != 0) {
        /* A damaged first line (cut, a key twice) is skipped like any other: say why, or the
         * operator is told only that the header is missing from a file that has one. */
        char first[4200];
        snprintf(first, sizeof first, "%s:1: ", tj->path);
        const char *why = tj->log.n_problems &&
                                  strncmp(tj->log.problems[0], first, strlen(first)) == 0
                              ? tj->log.problems[0]
                              : NULL;
        return error_set(err, "journal %s: expected a \"session\" line first, found %s%s%s",
                         tj->path, tj->log.n ? "another event" : "no valid line",
                         why ? "; " : "", why ? why : ""),
               error_mark(err, ERROR_INPUT);
    }
    char ctx[4200];
    snprintf(ctx, sizeof ctx, "%s:%zu: session", tj->path, tj->log.lines[0]);
    const cJSON *h = tj->log.events[0];
    if (jfield_string(h, ctx, "id", 1, tj->id, sizeof tj->id, err) < 0 ||
        read_setup(h, ctx, setup, err) < 0) {
        tune_setup_clear(setup);
        return error_mark(err, ERROR_INPUT);
    }
    /* A later resume may have raised the budget, and the console's :budget changed it (the
     * `ended` line has the one in force at the end; older journals' have none), as did
     * queuing or dropping an override (its line has the budget it left; older journals'
     * have none). */
    for (size_t i = 1; i < tj->log.n; i++) {
        const cJSON *ev = tj->log.events[i];
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(ev, "budget");
        const char *kind = cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring;
        if (!b || (strcmp(kind, "resumed") != 0 && strcmp(kind, "ended") != 0 &&
                   strcmp(kind, "budget") != 0 && strcmp(kind, "override_queued") != 0 &&
                   strcmp(kind, "override_dropped") != 0))
            continue;
        /* A budget that is not one (1e300, -3, 2.5, "x") was passed over in silence, or cut
         * to an integer: it is a skipped line like any bad field, said with its line. */
        char bctx[4300];
        int budget = 0;
        Error berr;
        snprintf(bctx, sizeof bctx, "%s:%zu: %s", tj->path, tj->log.lines[i], kind);
        if (jfield_int(ev, bctx, "budget", 1, 1, 100000, &budget, &berr) < 0) {
            journal_log_problem(&tj->log, "%s (budget not used)", berr.msg);
            continue;
        }
        setup->budget = budget;
        /* The part overrides raised comes with each budget: a line without it (a :budget, an
         * older journal) says none, and one out of 0..budget is said and taken as none. */
        int raised = 0;
        if (jfield_int(ev, bctx, "raised", 0, 0, budget, &raised, &berr) < 0) {
            journal_log_problem(&tj->log, "%s (taken as 0)", berr.msg);
            raised = 0;
        }
        setup->budget_raised = raised;
    }
    return 0;
}

void tune_journal_release_events(TuneJournal *tj)
{
    JournalLog *log = &tj->log;
    for (size_t i = 0; i < log->n; i++)
        cJSON_Delete(log->events[i]);
    free(log->events);
    free(log->lines);
    log->events = NULL;
    log->lines = NULL;
    log->n = 0;
#ifdef __GLIBC__
    malloc_trim(0); /* the freed parse is scattered over the heap: given back, not kept */
#endif
}

size_t tune_journal_trials(const TuneJournal *tj)
{
    return journal_trials_count(&tj->log);
}

/* Resume: the operator's queue as the journal left it, restored before the trials are
 * replayed (they do not touch it) so that the `resumed` line can say the budget it needs. An
 * override whose trial started is a trial of the journal, replayed or marked interrupted, and
 * is not queued again; one queued and not yet run goes back in the queue, in its place; one
 * whose trial was suggested and never started goes back at the head. More than the queue holds
 * (a damaged journal) are said, not dropped unseen. *unstarted: how many went back at the
 * head; *fresh: of those, how many this resume marks their trial interrupted (no outcome,
 * nor an earlier resume's mark: a second resume finds the `interrupted` the first one wrote,
 * in its `resumed` line if it was killed before the trial's `finished` line). */
static int restore_overrides(TuneJournal *tj, Tuner *t, const Cluster *c, const JournalTrials *jt,
                             size_t *restored, size_t *unstarted, size_t *fresh, Error *err)
{
    JournalOverrides jo;
    *restored = *unstarted = *fresh = 0;
    if (journal_overrides_decode(&tj->log, c, tj->path, &jo, err) < 0)
        return -1;
    tuner_override_ids_from(t, jo.last_id);
    for (size_t i = 0; i < jo.n; i++) {
        Error e;
        if (tuner_override_restore(t, jo.waiting[i].id, jo.waiting[i].schedule, &e) < 0) {
            journal_log_problem(&tj->log, "%s: override %d not restored: %s", tj->path,
                                jo.waiting[i].id, e.msg);
            continue;
        }
        (*restored)++;
        if (!jo.waiting[i].unstarted)
            continue;
        (*unstarted)++;
        /* fresh by the tally's rule (`tunedeck sessions` says the same budget), and a trial
         * this resume keeps: one whose schedule it refuses gets no mark, so no raise (the
         * next resume would make it again) */
        for (size_t k = 0; k < jt->n && jo.waiting[i].fresh; k++)
            if (jt->trials[k].journal_trial == jo.waiting[i].trial && !jt->trials[k].obs)
                (*fresh)++;
    }
    journal_overrides_clear(&jo);
    return 0;
}

int tune_journal_resume(TuneJournal *tj, Tuner *t, const Cluster *c, int budget_given, Error *err)
{
    JournalTrials jt;
    tj->tuner = t;
    if (journal_trials_decode(&tj->log, c, tj->path, &jt, err) < 0)
        return -1;
    size_t restored = 0, unstarted = 0, fresh = 0;
    if (restore_overrides(tj, t, c, &jt, &restored, &unstarted, &fresh, err) < 0) {
        journal_trials_clear(&jt);
        return -1;
    }
    for (size_t i = 0; i < tj->log.n_problems && !tj->quiet; i++)
        fprintf(stderr, "tunedeck tune: %s\n", tj->log.problems[i]);
    tj->journal = journal_reopen(tj->path, tj->log.valid_bytes, err);
    if (!tj->journal) {
        journal_trials_clear(&jt);
        return -1;
    }
    /* Numbers in the file only grow: the trials to come go on after its last one, in the
     * journal, in TUNEDECK_TRIAL and in the process groups journaled for them alike. */
    tuner_set_number_offset(t, jt.n ? jt.trials[jt.n - 1].journal_trial - (int)jt.n : 0);
    /* Raised before the `resumed` line, which holds it: a session killed after the
     * `interrupted` lines below comes back with the raise, and does not make it twice. */
    tuner_override_raise_budget_to(t, journal_resume_budget(tuner_budget(t), jt.n, restored,
                                                            unstarted, fresh, budget_given));
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "event", "resumed");
    cJSON_AddNumberToObject(ev, "wall_s", (double)time(NULL));
    cJSON_AddNumberToObject(ev, "budget", (double)tuner_budget(t));
    add_raised(ev, t);
    cJSON_AddNumberToObject(ev, "trials", (double)jt.n);
    cJSON *interrupted = cJSON_AddArrayToObject(ev, "interrupted");
    for (size_t i = 0; i < jt.n; i++)
        if (!jt.trials[i].obs)
            cJSON_AddItemToArray(interrupted, cJSON_CreateNumber(jt.trials[i].journal_trial));
    if (write_event(tj, ev) < 0) {
        journal_trials_clear(&jt);
        return error_set(err, "journal %s: cannot append to it", tj->path);
    }
    int rc = 0, warned = 0;
    for (size_t i = 0; i < jt.n && rc == 0; i++) {
        JournalTrial *r = &jt.trials[i];
        if (!r->obs) {
            /* Running when the session died: its outcome is unknown and stays so. */
            r->obs = observation_new(r->suggestion.schedule);
            r->obs->status = TRIAL_INTERRUPTED;
            snprintf(r->obs->reason, sizeof r->obs->reason,
                     "interrupted: the session ended while it %s",
                     r->started ? "ran" : "was about to start");
            if (write_event(tj, journal_finished_json(r->journal_trial, r->obs)) < 0) {
                rc = error_set(err, "journal %s: cannot append to it", tj->path);
                break;
            }
        }
        tj->muted = 1;
        int d = tuner_replay_trial(t, &r->suggestion, r->overridden, r->obs, r->suggest_ms, err);
        tj->muted = 0;
        if (d < 0)
            rc = error_prefix(err, "replaying trial %d", r->trial);
        else if (d > 0 && !warned++ && !tj->quiet)
            fprintf(stderr,
                    "tunedeck tune: trial %d: the optimizer now suggests another schedule than "
                    "the journal records (was it changed?); the journal's trials are kept\n",
                    r->trial);
    }
    size_t n = jt.n;
    journal_trials_clear(&jt);
    /* Those the operator's :budget left without a trial wait: said, or `tune` would end with
     * them queued after saying they run. */
    int room = tuner_budget(t) - (int)n;
    size_t waiting = room < 0 ? restored : restored > (size_t)room ? restored - (size_t)room : 0;
    if (rc == 0 && restored && !tj->quiet && !waiting)
        fprintf(stderr,
                "tunedeck tune: %zu override%s queued before the session ended run%s first\n",
                restored, restored == 1 ? "" : "s", restored == 1 ? "s" : "");
    else if (rc == 0 && !tj->quiet && restored && waiting == restored)
        fprintf(stderr,
                "tunedeck tune: the %zu override%s queued before the session ended wait%s past "
                "the budget of %d (--budget %zu runs %s)\n",
                restored, restored == 1 ? "" : "s",
                restored == 1 ? "s" : "", tuner_budget(t), n + restored,
                restored == 1 ? "it" : "them");
    else if (rc == 0 && !tj->quiet && waiting)
        fprintf(stderr,
                "tunedeck tune: of the %zu override%s queued before the session ended, %zu "
                "run%s first and %zu wait%s past the budget of %d (--budget %zu runs %s)\n",
                restored, restored == 1 ? "" : "s", restored - waiting,
                restored - waiting == 1 ? "s" : "", waiting, waiting == 1 ? "s" : "",
                tuner_budget(t), n + restored, waiting == 1 ? "it" : "them");
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
    add_raised(ev, t);
    const TrialRecord *best = tuner_best(t);
    if (best) {
        cJSON_AddNumberToObject(ev, "best_trial", tuner_outside_number(t, best->trial));
        cJSON_AddNumberToObject(ev, "best_time_s", best->obs->time_s);
    }
    if (tuner_last_error(t))
        cJSON_AddStringToObject(ev, "stopped", tuner_last_error(t));
    write_event(tj, ev);
}
