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
    long budget;
    double best_s; /* -1: no ok trial */
} SessionSummary;

/* Summarizes the journal at path, named id. whole: every event parsed and held first
 * (journal_load), as the listing did before journal_scan; kept as the baseline of the tests
 * and bench/sessionlist, which check both ways agree. */
void session_summary_read(const char *path, const char *id, SessionSummary *s, int whole);

#endif
