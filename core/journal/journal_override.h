/* The operator's override queue in the session journal: the "override_queued" and
 * "override_dropped" events as JSON; the overrides a journal left waiting (queued, neither
 * dropped nor taken by a started trial whose "suggested" line names their id), which a resume
 * queues again (the rule is journal_override_tally.h's, shared with `tunedeck sessions`); and
 * the budget a resume goes on with for them (journal_resume_budget: raised by one trial for
 * each override whose trial this resume marks interrupted, and never short of the trials the
 * unstarted ones run as). */
#ifndef TUNEDECK_JOURNAL_OVERRIDE_H
#define TUNEDECK_JOURNAL_OVERRIDE_H

#include "core/journal/journal.h"
#include "core/journal/journal_override_tally.h"
#include "core/model/schedule.h"


/* {"event":"override_queued","override":ID,"wall_s":unix time,"schedule":{protocol v1 input}} */
cJSON *journal_override_queued_json(int id, const Schedule *s);
/* {"event":"override_dropped","override":ID,"wall_s":unix time} */
cJSON *journal_override_dropped_json(int id);

typedef struct {
    int id;
    Schedule *schedule; /* on the cluster decoded against (owned) */
    int unstarted;      /* taken by a trial that never started (the session died first) */
    int trial;          /* unstarted: that trial's number in the file (its last suggested line) */
    int fresh;          /* unstarted, and the resume marks its trial interrupted now (no outcome
                         * nor an earlier resume's mark): the budget is raised for it */
} JournalOverride;

typedef struct {
    JournalOverride *waiting; /* in the order queued */
    size_t n;
    int last_id; /* the largest id any line used (queued, dropped or run); 0 none */
} JournalOverrides;

/* The overrides still waiting at the journal's end, by the tally's rule
 * (journal_override_tally.h) run over the events; the schedules read here. One whose trial's
 * suggested line has no `started` line, nor an outcome but the `interrupted` a resume gives it,
 * never ran (the session died between the two lines): it waits again, at the head, marked
 * unstarted, once however many such lines name it, and fresh where this resume marks its trial
 * interrupted (no `finished` line for it, nor an earlier `resumed` line listing it). A line
 * that does not fit (a field missing, a schedule the cluster refuses, a queued id not above
 * every id before it: a repeated or stray line) is reported in log->problems with its line,
 * "(override not restored)", and skipped; a "suggested" line whose override field is malformed
 * is reported as such, and takes none from the queue. Fails only when memory runs out. */
int journal_overrides_decode(JournalLog *log, const Cluster *c, const char *source,
                             JournalOverrides *out, Error *err);
void journal_overrides_clear(JournalOverrides *o);

/* The budget a resume goes on with (never below `budget`, the one it starts from: the
 * journal's, at least its trials, or --budget when budget_given), given its `trials`, the
 * overrides restored to the queue (the i-th runs as trial trials + i + 1), the `unstarted`
 * ones at its head (their trial never started) and, of those, the ones `fresh` this resume
 * marks interrupted. Shared by the resume and `tunedeck sessions`, which shows it. */
int journal_resume_budget(int budget, size_t trials, size_t restored, size_t unstarted,
                          size_t fresh, int budget_given);

#endif
