/* Resuming a tuning session from its journal (DESIGN §5.4): the journal read and its setup
 * checked, then its trials replayed into a fresh tuner and the operator's queue restored;
 * the journal goes on in tune_journal.c (what both share: tune_journal_priv.h). */
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/decimal.h"
#include "core/base/jfield.h"
#include "core/base/termsafe.h"
#include "core/journal/journal_override.h"
#include "core/journal/journal_trial.h"
#include "core/model/cluster.h"
#include "core/sim/simcluster.h"
#include "remote/session/tune_journal_priv.h"

const JournalLog *tune_journal_log(const TuneJournal *tj)
{
    return &tj->log;
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

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* For "no session": the sessions in dir whose id begins with `prefix` ("" none). Ids are
 * taken whole (the start of two sessions' ids names neither), but the operator who typed the
 * start of one, or of two, is shown them, as `tunedeck sessions` spells them. */
static void ids_beginning(const char *dir, const char *prefix, char *out, size_t size)
{
    enum { SHOWN = 4 };
    char *names[SHOWN];
    size_t n = 0, shown = 0, plen = strlen(prefix), ext = strlen(JOURNAL_EXT);
    out[0] = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= ext + plen || strcmp(e->d_name + len - ext, JOURNAL_EXT) != 0 ||
            strncmp(e->d_name, prefix, plen) != 0)
            continue;
        n++;
        if (shown < SHOWN && (names[shown] = strndup(e->d_name, len - ext)))
            shown++;
    }
    closedir(d);
    if (shown)
        qsort(names, shown, sizeof *names, by_name);
    /* a file's name is any bytes but '/': shown terminal-safe, as `tunedeck sessions` does */
    char safe[SHOWN][256];
    for (size_t i = 0; i < shown; i++)
        termsafe(safe[i], sizeof safe[i], names[i]);
    size_t used = 0;
    if (n == 1 && shown == 1)
        used = (size_t)snprintf(out, size, "; ids are taken whole: did you mean %s?", safe[0]);
    else if (n > 1)
        used = (size_t)snprintf(out, size, "; ids are taken whole: %zu sessions begin so:", n);
    for (size_t i = 0; n > 1 && i < shown && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s %s", i ? "," : "", safe[i]);
    if (n > shown && n > 1 && used < size)
        snprintf(out + used, size - used, ", and %zu more", n - shown);
    for (size_t i = 0; i < shown; i++)
        free(names[i]);
}

int tune_journal_load(TuneJournal *tj, const char *id_or_path, TuneSetup *setup, Error *err)
{
    memset(setup, 0, sizeof *setup);
    if (journal_path(tj->dir[0] ? tj->dir : NULL, id_or_path, tj->path, sizeof tj->path, err) < 0)
        return -1;
    /* an id (not a path) with no journal is a session that does not exist: said so, not as
     * a file that cannot be opened */
    if (!strchr(id_or_path, '/') && access(tj->path, F_OK) < 0 && errno == ENOENT) {
        char near[512];
        ids_beginning(tj->dir, id_or_path, near, sizeof near);
        return error_set(err, "no session '%s' (`tunedeck sessions` lists them; no %s%s)",
                         id_or_path, tj->path, near);
    }
    if (journal_check_owned(tj->path, err) < 0)
        return -1;
    /* The lock first, kept to the end: a session still running is refused before its
     * resume reaches anything (a Slurm salloc, the hosts), and cannot start meanwhile. */
    int busy;
    journal_close(tj->held);
    if (!(tj->held = journal_take(tj->path, &busy, err))) {
        tj->running = busy;
        tj->unwritable = !busy && (errno == EROFS || errno == EACCES || errno == EPERM);
        if (busy) {
            Error why = *err;
            return error_set(err, "session %s is still running (%s)", id_or_path, why.msg);
        }
        return -1;
    }
    if (journal_load(tj->path, &tj->log, err) < 0)
        return -1;
    return setup_from_log(tj, setup, err);
}

int tune_journal_running(const TuneJournal *tj)
{
    return tj->running;
}

int tune_journal_unwritable(const TuneJournal *tj)
{
    return tj->unwritable;
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

size_t tune_journal_trials(const TuneJournal *tj, const TuneSetup *setup)
{
    /* The cluster as session_open builds it for a resume, from what the journal recorded
     * (nothing is reached: no host, no Slurm), so that the count is the decoder's. */
    Error err;
    SimCluster *sim = setup->sim[0] ? simcluster_new(setup->sim, &err) : NULL;
    Cluster *own =
        !setup->sim[0] && setup->cluster ? cluster_from_json(setup->cluster, tj->path, &err) : NULL;
    const Cluster *c = sim ? simcluster_cluster(sim) : own;
    /* none: session_open refuses the journal's cluster in its own words */
    size_t n = c ? journal_trials_count(&tj->log, c) : 0;
    simcluster_free(sim);
    cluster_free(own);
    return n;
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
static int restore_overrides(TuneJournal *tj, Tuner *t, const Cluster *c, size_t *restored,
                             size_t *unstarted, size_t *fresh, Error *err)
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
        /* fresh by the tally's rule, which `tunedeck sessions` runs too and which reads a
         * suggested line as the trials' decode does (journal_suggested_read): a fresh
         * override's trial is one this resume keeps, without an outcome, and marks now. One
         * whose schedule it refuses is not kept, so not fresh: no mark, so no raise (the next
         * resume would make it again). */
        *fresh += jo.waiting[i].fresh != 0;
    }
    journal_overrides_clear(&jo);
    return 0;
}

/* Why a trial of the journal has no outcome, in the words its `finished` line keeps. Trials
 * run one at a time and a resume marks its interrupted ones before it suggests another, so a
 * trial with a later one after it did not end with the session: its outcome line was damaged
 * (said "the session ended" before, the operator looked for a crash that never happened). */
static void interrupted_reason(const JournalTrial *r, int later, char *out, size_t size)
{
    if (r->finished_line_skipped)
        snprintf(out, size,
                 "interrupted: its finished line (journal line %zu) could not be read, so "
                 "its outcome is unknown",
                 r->finished_line_skipped);
    else if (later)
        snprintf(out, size,
                 "interrupted: its outcome was lost to a damaged journal line (the session "
                 "went on to later trials)");
    else
        snprintf(out, size, "interrupted: the session ended while it %s",
                 r->started ? "ran" : "was about to start");
}

int tune_journal_resume(TuneJournal *tj, Tuner *t, const Cluster *c, int budget_given, Error *err)
{
    JournalTrials jt;
    tj->tuner = t;
    if (journal_trials_decode(&tj->log, c, tj->path, &jt, err) < 0)
        return -1;
    size_t restored = 0, unstarted = 0, fresh = 0;
    if (restore_overrides(tj, t, c, &restored, &unstarted, &fresh, err) < 0) {
        journal_trials_clear(&jt);
        return -1;
    }
    for (size_t i = 0; i < tj->log.n_problems && !tj->quiet; i++)
        fprintf(stderr, "tunedeck tune: %s\n", tj->log.problems[i]);
    if (tj->held) {
        if (journal_cut(tj->held, tj->log.valid_bytes, err) == 0) {
            tj->journal = tj->held;
            tj->held = NULL;
        }
    } else
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
    tune_journal_add_raised(ev, t);
    cJSON_AddNumberToObject(ev, "trials", (double)jt.n);
    cJSON *interrupted = cJSON_AddArrayToObject(ev, "interrupted");
    for (size_t i = 0; i < jt.n; i++)
        if (!jt.trials[i].obs)
            cJSON_AddItemToArray(interrupted, cJSON_CreateNumber(jt.trials[i].journal_trial));
    if (tune_journal_append(tj, ev) < 0) {
        journal_trials_clear(&jt);
        return error_set(err, "journal %s: cannot append to it", tj->path);
    }
    int rc = 0, warned = 0;
    for (size_t i = 0; i < jt.n && rc == 0; i++) {
        JournalTrial *r = &jt.trials[i];
        if (!r->obs) {
            /* Running when the session died, or its outcome line damaged: unknown and
             * stays so. */
            r->obs = observation_new(r->suggestion.schedule);
            r->obs->status = TRIAL_INTERRUPTED;
            interrupted_reason(r, i + 1 < jt.n, r->obs->reason, sizeof r->obs->reason);
            if (tune_journal_append(tj, journal_finished_json(r->journal_trial, r->obs)) < 0) {
                rc = error_set(err, "journal %s: cannot append to it", tj->path);
                break;
            }
        }
        tj->muted = 1;
        int d = tuner_replay_trial(t, &r->suggestion, r->overridden, r->left_out, r->obs,
                                   r->suggest_ms, err);
        tj->muted = 0;
        if (d < 0)
            rc = error_prefix(err, "replaying trial %d", r->trial);
        else if (d > 0 && !warned++ && !tj->quiet)
            /* skipped lines change what the optimizer observes, and so what it suggests */
            fprintf(stderr,
                    "tunedeck tune: trial %d: the optimizer now suggests another schedule than "
                    "the journal records (%s); the journal's trials are kept\n",
                    r->trial,
                    tj->log.n_problems ? "the skipped lines above changed what it observed, or "
                                         "its code changed"
                                       : "was it changed?");
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
