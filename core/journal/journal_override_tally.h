/* The overrides a journal left waiting, counted one line at a time and without the cluster:
 * the one rule of what a resume queues again (journal_overrides_decode is built on it) and
 * what `tunedeck sessions` needs to say the budget a resume would go on with
 * (journal_resume_budget). Queued, neither dropped nor taken by a trial that began; one taken
 * by a trial that never began waits again at the head. The trials are counted too. With a
 * cluster, the lines are read as a resume reads them: a queued line's schedule is one the
 * cluster takes and schedule_validate passes, or the override is not queued (its id still
 * counts), and a trial is counted as journal_trials_decode keeps it (journal_suggested_read,
 * the one reading of a suggested line: its number, fields and schedule), so that `sessions`
 * and the resume queue the same overrides, count the same trials and take the same ones as
 * fresh (and `sessions` says the budget the resume goes on with, which counts the trials kept:
 * journal_trials_count). Without one, a queued line's schedule is not read and a trial is
 * counted by journal_suggested_follows' rule alone. */
#ifndef TUNEDECK_JOURNAL_OVERRIDE_TALLY_H
#define TUNEDECK_JOURNAL_OVERRIDE_TALLY_H

#include <cJSON.h>
#include <stddef.h>

#include "core/base/error.h"
#include "core/model/schedule.h"

/* Ids run 1..JOURNAL_OVERRIDE_ID_MAX: a damaged line's huge id cannot overflow the next. */
enum { JOURNAL_OVERRIDE_ID_MAX = 1000000000 };

typedef struct {
    int id;
    int trial;    /* unstarted: the trial that took it and never began (the file's number); 0 */
    int fresh;    /* unstarted, and its trial has no outcome nor an earlier resume's mark: the
                   * resume marks it interrupted now (and raises the budget for it) */
    size_t event; /* its queued line: the index among the events taken */
    Schedule *schedule; /* read on the tally's cluster (owned: freed when the override is
                         * forgotten, dropped or run, so none is held for nothing); NULL
                         * without one */
} JournalTallied;

/* How far the trial that took an override last has got, until the next suggested line. */
typedef enum {
    TALLY_TAKEN_NONE,
    TALLY_TAKEN_OPEN,   /* suggested, nothing since */
    TALLY_TAKEN_BEGAN,  /* started, or an outcome of its own */
    TALLY_TAKEN_MARKED, /* never began, and a resume marked it interrupted (its `finished`
                         * line, or its number in a `resumed` line's `interrupted`) */
} JournalTallyTaken;

typedef struct {
    const Cluster *cluster;  /* set before the first event: the lines are read on it; NULL:
                              * no schedule read, the trials numbered only */
    JournalTallied *waiting; /* in the order a resume queues them: the unstarted first */
    size_t n, cap;
    size_t unstarted; /* the first this many of waiting */
    int last_id;
    size_t trials;  /* the trials counted (journal_trials_decode's, journal_trials_count's,
                     * with a cluster) */
    int last_trial; /* the file's number of the last of them; 0 none */
    size_t events;  /* taken so far */
    /* the last suggested line that took an override, until the next one says no more of it */
    int taken_id, taken_trial, taken_counted;
    JournalTallyTaken taken;
    int failed; /* out of memory: the counts are short */
} JournalOverrideTally;

/* What one line was to the queue. */
typedef enum {
    TALLY_LINE_OTHER,   /* nothing to say */
    TALLY_LINE_QUEUED,  /* an override queued: waiting[n - 1] */
    TALLY_LINE_BAD_ID,  /* its override field malformed: err says so, after ctx */
    TALLY_LINE_STRAY,   /* queued at or below last_id: a repeated or stray line, not queued */
    TALLY_LINE_REFUSED, /* queued, its schedule refused on the cluster: err says why, after
                         * ctx; not queued (its id counts) */
} JournalTallyLine;

/* One valid event (a string "event" at least), in the file's order; ctx names the line for
 * err. */
JournalTallyLine journal_override_tally_take(JournalOverrideTally *t, const cJSON *ev,
                                             const char *ctx, Error *err);
/* After the last event: the trial taken last is settled. The schedules of those still
 * waiting stay the tally's until cleared (a caller may take one: set its pointer NULL). */
void journal_override_tally_end(JournalOverrideTally *t);
void journal_override_tally_clear(JournalOverrideTally *t);

#endif
