/* The overrides a journal left waiting, counted one line at a time and without the cluster:
 * what `tunedeck sessions` needs to say the budget a resume would go on with
 * (journal_resume_budget), where journal_overrides_decode needs the whole log and a cluster
 * for the schedules. The same rule: queued, neither dropped nor taken by a trial that began;
 * one taken by a trial that never began waits again at the head. The schedule is not read (a
 * skim of the line would then parse every suggested line whole): a queued line whose schedule
 * a resume refuses, said and skipped there, is counted here. */
#ifndef TUNEDECK_JOURNAL_OVERRIDE_TALLY_H
#define TUNEDECK_JOURNAL_OVERRIDE_TALLY_H

#include <cJSON.h>
#include <stddef.h>

typedef struct {
    int id;
    int trial; /* unstarted: the trial that took it and never began (the file's number); 0 */
} JournalTallied;

typedef struct {
    JournalTallied *waiting; /* in the order a resume queues them: the unstarted first */
    size_t n, cap;
    size_t unstarted; /* the first this many of waiting */
    int last_id;
    /* the last suggested line that took an override, until the next one says no more of it */
    int taken_id, taken_trial, taken_state; /* state: 0 none, 1 open, 2 began, 3 did not */
    int failed;                             /* out of memory: the counts are short */
} JournalOverrideTally;

/* One valid event (a string "event" at least), in the file's order. */
void journal_override_tally_take(JournalOverrideTally *t, const cJSON *ev);
/* After the last event: the trial taken last is settled. */
void journal_override_tally_end(JournalOverrideTally *t);
void journal_override_tally_clear(JournalOverrideTally *t);

#endif
