/* What `tunedeck sessions` says of one journal: its session line, its trials, its best time
 * and whether a resume would take it, read in one pass that keeps no event but the first. */
#ifndef TUNEDECK_SESSION_SUMMARY_H
#define TUNEDECK_SESSION_SUMMARY_H

#include "core/base/error.h"
#include "core/journal/journal.h"

typedef struct {
    char id[JOURNAL_ID_MAX], created[32], target[128], optimizer[64];
    char state[ERROR_MSG_MAX + 32];
    int suggested, finished, ok, problems;
    long budget;        /* the journal's: the session line's, or the last line to change it */
    long resume_budget; /* the one a resume goes on with (journal_resume_budget); 0 when
                         * the session runs, a resume refuses the journal, or it cannot
                         * be read (state "unreadable: ...") */
    double best_s; /* -1: no ok trial */
    /* The first line a resume skips, in the file's order, as the resume names it ("FILE:N:
     * finished: field 'time_s': expected a number, ..."; "" none) and its line (0 none): the
     * count alone left the operator a resume, which writes to the journal, to learn which. */
    char first_problem[ERROR_MSG_MAX];
    size_t first_problem_line;
} SessionSummary;

/* Summarizes the journal at path, named id, in one pass (journal_scan). */
void session_summary_read(const char *path, const char *id, SessionSummary *s);

/* How a summary reads the journal's events: journal_scan, or a reader with its signature.
 * The tests and bench/sessionlist pass one that parses and holds every event first
 * (journal_load, as the listing did before journal_scan), to check both ways agree. */
typedef int (*SummaryReader)(const char *path, JournalLog *out, const char *const *keys,
                             size_t n_keys, JournalEach each, void *ud, Error *err);
void session_summary_read_by(const char *path, const char *id, SessionSummary *s,
                             SummaryReader read);

#endif
