/* The journal of a headless tuning session: writes every trial event before it is acted on
 * (tune_journal.c), and rebuilds a session from its journal for `tunedeck tune --resume ID`
 * (tune_journal_resume.c). */
#ifndef TUNEDECK_TUNE_JOURNAL_H
#define TUNEDECK_TUNE_JOURNAL_H

#include "core/journal/journal.h"
#include "remote/launch/tuner.h"

/* What a session was started with: written in its first line, read back on resume. */
typedef struct {
    char sim[128];        /* --sim spec, or empty */
    cJSON *cluster, *job; /* inventory and job objects when not sim (owned) */
    char optimizer[64];
    char launcher[32];
    char trial_cmd[4096]; /* empty: none */
    long seed, budget;
    long budget_raised; /* of budget, what overrides raised it by (the lines' `raised`) */
    double timeout_s;
    int no_prune;            /* --no-prune: trials always ran to their end */
    int stop_when_converged; /* --stop-when-converged */
} TuneSetup;

typedef struct TuneJournal TuneJournal;

/* dir: the journals' folder, decided by main (cmd/paths.c); NULL when there is none (a new
 * journal cannot start then, nor a resume by id). */
TuneJournal *tune_journal_new(const char *dir);
void tune_journal_free(TuneJournal *tj);
/* For TunerConfig.on_event / .userdata. A failed write stops the session from launching. */
void tune_journal_on_event(void *userdata, TunerEvent ev, const TrialRecord *rec);

/* A new session: creates its journal and writes the setup line. Call after tuner_new. */
int tune_journal_start(TuneJournal *tj, Tuner *t, const TuneSetup *setup, Error *err);
/* Resume, step 1: reads the journal of ID (or a path) and the setup it was started with. */
/* It takes the journal's lock first and keeps it (tune_journal_resume writes through it): a
 * session still running is refused before anything else, "session ID is still running
 * (journal PATH is locked by pid N)", with tune_journal_running set, the file untouched. */
int tune_journal_load(TuneJournal *tj, const char *id_or_path, TuneSetup *setup, Error *err);
int tune_journal_running(const TuneJournal *tj);
/* tune_journal_load was refused because the journal may not be written here (a read-only
 * folder, mount or file): the journal could not be written, the input is not wrong. */
int tune_journal_unwritable(const TuneJournal *tj);
/* As tune_journal_load, of the journal at path already read into log (journal_load; taken,
 * emptied): `tunedeck sessions` summarizes a journal and asks whether a resume would take
 * it from one reading (it read each twice: 11 s for 400 journals of 300 trials). */
int tune_journal_load_log(TuneJournal *tj, const char *path, JournalLog *log, TuneSetup *setup,
                          Error *err);
/* Resume: the trials the loaded journal records (each counts against the budget), as the
 * replay keeps them on the cluster its setup (tune_journal_load's) names (journal_trials_count:
 * trials after a damaged line count too, a line whose schedule the cluster refuses does not);
 * 0 when that cluster cannot be built (session_open then refuses it). */
size_t tune_journal_trials(const TuneJournal *tj, const TuneSetup *setup);
/* Resume, step 2: replays its trials into a fresh tuner (running ones become interrupted)
 * and reopens the journal to go on. Problems (skipped lines) go to stderr. */
/* `c` is the cluster the tuner runs on (every schedule refers to it). */
/* budget_given: the tuner's budget is the operator's --budget, not the journal's (a resume
 * raises them differently for an override whose trial never started: tune_journal.c). */
int tune_journal_resume(TuneJournal *tj, Tuner *t, const Cluster *c, int budget_given,
                        Error *err);
/* Writes the closing line of a session. */
void tune_journal_end(TuneJournal *tj, const Tuner *t);
const char *tune_journal_id(const TuneJournal *tj);
int tune_journal_failed(const TuneJournal *tj); /* a write failed: the session stopped */
/* Why the first failed write failed ("journal PATH: write failed: No space left on device"),
 * or NULL. */
const char *tune_journal_error(const TuneJournal *tj);
/* No message on stderr when a write fails (the console, whose screen it would break): the
 * session still stops, and the trial not launched says why in its reason. */
void tune_journal_set_quiet(TuneJournal *tj, int quiet);
/* The lines of a resumed journal that were skipped, each "FILE:LINE: why". */
size_t tune_journal_problems(const TuneJournal *tj, const char *const **lines);
const char *tune_journal_path(const TuneJournal *tj);

/* Appends another event (taken) as write_event does; -1 when it could not be written. */
int tune_journal_append(TuneJournal *tj, cJSON *ev);
/* Resume: the journal as it was read (before this session appended to it). */
const JournalLog *tune_journal_log(const TuneJournal *tj);
/* Resume: the read journal's events freed once nothing reads them again (the trials are in
 * the tuner, the interrupted groups collected); its problems are kept. Parsed, a 41 MB
 * journal of 20,000 trials held 370 MB for the whole session. tune_journal_log has no
 * events after it, and tune_journal_trials counts none. */
void tune_journal_release_events(TuneJournal *tj);

void tune_setup_clear(TuneSetup *s);

#endif
