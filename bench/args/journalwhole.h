/* A journal read the way `tunedeck sessions` read it before journal_scan: every event parsed
 * and held first (journal_load), then handed on as journal_scan hands them. bench/sessionlist's
 * baseline, and what tests/cmd/test_session_summary.c holds the one pass to. */
#ifndef TUNEDECK_JOURNALWHOLE_H
#define TUNEDECK_JOURNALWHOLE_H

#include "core/journal/journal.h"

/* journal_scan's signature (a SummaryReader); keys are ignored: every field is parsed. out
 * holds every event, as journal_load leaves it. */
int journalwhole_read(const char *path, JournalLog *out, const char *const *keys, size_t n_keys,
                      JournalEach each, void *ud, Error *err);

#endif
