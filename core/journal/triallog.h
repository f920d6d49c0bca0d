/* What the trials printed besides protocol v1 — their standard error, and lines on standard
 * output that are no protocol event — kept for the operator in one file per session beside
 * the journal (ID.jsonl -> ID.log), so a failed trial can be diagnosed after the run: its
 * one-line reason is only the last words. Bounded: of each trial the first
 * TRIALLOG_HEAD_BYTES are written as they come (a killed session keeps them) and the last
 * TRIALLOG_TAIL_BYTES at its end, with a note of how much was left out between; a line is
 * cut at TRIALLOG_LINE_MAX bytes. Every line is made terminal-safe (core/base/termsafe.h)
 * and tagged: "2026-11-27T06:30:01Z trial 3 h1 stderr: text" (the time it arrived, the
 * trial's number as the journal knows it, where it came from as its launcher names it).
 * Nothing is created before a first line, so a session whose trials print nothing else
 * (the simulator's) leaves no file. Only this session writes it: it holds the journal's lock. */
#ifndef TUNEDECK_TRIALLOG_H
#define TUNEDECK_TRIALLOG_H

#include <stddef.h>
#include <time.h>

#define TRIALLOG_EXT ".log"

enum {
    TRIALLOG_HEAD_BYTES = 8 << 10,
    TRIALLOG_TAIL_BYTES = 24 << 10,
    TRIALLOG_LINE_MAX = 1024
};

typedef struct TrialLog TrialLog;

/* The log beside the journal file at journal_path (its JOURNAL_EXT replaced, else
 * TRIALLOG_EXT appended). NULL: out of memory. */
TrialLog *triallog_new(const char *journal_path);
void triallog_free(TrialLog *l);
const char *triallog_path(const TrialLog *l);

/* One line of trial `trial` (a line for another trial than the last ends that one's part,
 * its tail written). source: where it came from ("h1", "local", "slurm"); stream: "stderr"
 * or "stdout". The file is created (mode 0600, never through a link, appended to when it
 * exists: a resumed session) with the first line. */
void triallog_line(TrialLog *l, int trial, const char *source, const char *stream,
                   const char *text, time_t now);
/* Trial `trial` ended: its kept tail is written, then "trial N ended: OUTCOME". Nothing when
 * it printed no line, or its end was written already. */
void triallog_end(TrialLog *l, int trial, const char *outcome, time_t now);
/* How many lines trial `trial` printed (kept or not); 0: none. */
size_t triallog_count(const TrialLog *l, int trial);
/* Whether anything was written: the file exists and is worth naming. */
int triallog_written(const TrialLog *l);
/* Why the file could not be created or written (said once; nothing more is written), or
 * NULL. */
const char *triallog_error(const TrialLog *l);

#endif
