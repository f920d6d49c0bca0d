/* What `tune` prints when its session ends (tune_report.c): the trials as a table or as one
 * JSON object, and how an interrupted session goes on. cmd_tune.c fills a TuneEnding. */
#ifndef TUNEDECK_TUNE_REPORT_H
#define TUNEDECK_TUNE_REPORT_H

#include <stddef.h>

#include "remote/launch/tuner.h"
#include "remote/session/session.h"

/* How a session ended, for its summary: interrupted by a signal (0: it was not), why it
 * stopped early, its session (journal and trial log); the budget and seed it ran with (with
 * --resume, the journal's), and whether the resume command carries --json. */
typedef struct {
    int signal;
    const char *stopped_early;
    const Session *ses;
    long budget, seed;
    int json;
} TuneEnding;

/* The result object on standard output, on one line. */
void tune_report_json(const Tuner *t, const TuneEnding *e);
/* A row per trial on standard output, the best, the trial log and, interrupted, the resume. */
void tune_report_table(const Tuner *t, const TuneEnding *e);
/* The command that goes on with an interrupted session, in out, or NULL without a journal. */
const char *tune_report_resume_command(char *out, size_t cap, const TuneEnding *e);
/* Trials with an outcome. */
size_t tune_report_trials_done(const Tuner *t);
/* The trials the budget counts: those done and the unfinished ones a signal stopped (a resume
 * marks them interrupted and does not run them again: docs/journal.md, "Resuming"). */
size_t tune_report_trials_counted(const Tuner *t);

#endif
