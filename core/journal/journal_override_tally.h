/* The overrides a journal left waiting, counted one line at a time and without the cluster:
 * the one rule of what a resume queues again (journal_overrides_decode is built on it) and
 * what `tunedeck sessions` needs to say the budget a resume would go on with
 * (journal_resume_budget). Queued, neither dropped nor taken by a trial that began; one taken
 * by a trial that never began waits again at the head. The schedule is not read (a skim of
 * the line would then parse every suggested line whole): the decode reads it for the ids
 * still waiting at the end. The trials are counted too, by journal_suggested_follows' rule
 * (journal_trials_count's). */
#ifndef TUNEDECK_JOURNAL_OVERRIDE_TALLY_H
#define TUNEDECK_JOURNAL_OVERRIDE_TALLY_H

#include <cJSON.h>
#include <stddef.h>

#include "core/base/error.h"

/* Ids run 1..JOURNAL_OVERRIDE_ID_MAX: a damaged line's huge id cannot overflow the next. */
enum { JOURNAL_OVERRIDE_ID_MAX = 1000000000 };

typedef struct {
    int id;
    int trial;    /* unstarted: the trial that took it and never began (the file's number); 0 */
    int fresh;    /* unstarted, and its trial has no outcome nor an earlier resume's mark: the
                   * resume marks it interrupted now (and raises the budget for it) */
    size_t event; /* its queued line: the index among the events taken */
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
    JournalTallied *waiting; /* in the order a resume queues them: the unstarted first */
    size_t n, cap;
    size_t unstarted; /* the first this many of waiting */
    int last_id;
    size_t trials;  /* the suggested lines journal_trials_count keeps */
    int last_trial; /* the file's number of the last of them; 0 none */
    size_t events;  /* taken so far */
    /* the last suggested line that took an override, until the next one says no more of it */
    int taken_id, taken_trial, taken_counted;
    JournalTallyTaken taken;
    int failed; /* out of memory: the counts are short */
} JournalOverrideTally;

/* What one line was to the queue. */
typedef enum {
    TALLY_LINE_OTHER,  /* nothing to say */
    TALLY_LINE_QUEUED, /* an override queued: waiting[n - 1] */
    TALLY_LINE_BAD_ID, /* its override field malformed: err says so, after ctx */
    TALLY_LINE_STRAY,  /* queued at or below last_id: a repeated or stray line, not queued */
} JournalTallyLine;

/* One valid event (a string "event" at least), in the file's order; ctx names the line for
 * err. */
JournalTallyLine journal_override_tally_take(JournalOverrideTally *t, const cJSON *ev,
                                             const char *ctx, Error *err);
/* After the last event: the trial taken last is settled. */
void journal_override_tally_end(JournalOverrideTally *t);
void journal_override_tally_clear(JournalOverrideTally *t);

#endif
