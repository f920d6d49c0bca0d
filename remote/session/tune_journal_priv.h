/* What the two halves of the tuning journal share: tune_journal.c writes a session's events,
 * tune_journal_resume.c reads a journal back and replays it into a tuner. Not for others. */
#ifndef TUNEDECK_TUNE_JOURNAL_PRIV_H
#define TUNEDECK_TUNE_JOURNAL_PRIV_H

#include <cJSON.h>

#include "remote/session/tune_journal.h"

struct TuneJournal {
    Journal *journal;
    /* Resume: the journal's writer lock, taken before it is read (tune_journal_load) and
     * kept, so nothing of a session still running is reached; the journal once the resume
     * replayed it. Not written to before: the tuner's events go to `journal` alone. */
    Journal *held;
    int running;    /* tune_journal_load was refused: another process holds the lock */
    int unwritable; /* tune_journal_load was refused: the journal cannot be written here */
    Tuner *tuner;
    int muted; /* replaying: the events are already in the journal */
    int quiet; /* the console draws on the terminal: say nothing on stderr */
    char id[JOURNAL_ID_MAX];
    char path[4096];
    char dir[4096]; /* the journals' folder main decided; "" none */
    JournalLog log; /* resume: what was read */
    char error[ERROR_MSG_MAX]; /* the first failed write's message, "" none */
};


/* Beside every budget a line holds: how much of it overrides raised (tuner_budget_raised),
 * for a resume to give back when one is dropped. Absent (older journals, or none raised): 0. */
void tune_journal_add_raised(cJSON *ev, const Tuner *t);

#endif
