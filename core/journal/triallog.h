/* What the trials printed besides protocol v1 — their standard error, and lines on standard
 * output that are no protocol event — kept for the operator in one file per session beside
 * the journal (ID.jsonl -> ID.log), so a failed trial can be diagnosed after the run: its
 * one-line reason is only the last words. Bounded: of each trial the first
 * TRIALLOG_HEAD_BYTES are written as they come (a killed session keeps them) and the last
 * TRIALLOG_TAIL_BYTES at its end, with a note of how much was left out between; a line is
 * cut at TRIALLOG_LINE_MAX bytes. The whole file is bounded too, across the runs of a resumed
 * session (the file is read back when the log is made): past TRIALLOG_TOTAL_BYTES it is
 * rewritten down to three quarters of that, keeping the running trial, then the latest trials
 * whole (half of what is kept), then the failed ones (an outcome other than ok or pruned, or
 * none: a killed run's), newest first; each stretch left out becomes one line naming its
 * trials. An operator reading the log after a long run wants what just happened and what went
 * wrong; an old trial that went well is what can go. Every line is made terminal-safe (core/base/termsafe.h)
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
    TRIALLOG_LINE_MAX = 1024,
    /* 4 MiB: over a hundred trials at their per-trial bound, a thousand printing a few
     * lines; a rewrite (at most 3 MiB) comes once per MiB written at most */
    TRIALLOG_TOTAL_BYTES = 4 << 20,
    /* the least total bound: a trial's own bound, four times over */
    TRIALLOG_TOTAL_MIN = 4 * (TRIALLOG_HEAD_BYTES + TRIALLOG_TAIL_BYTES + 8 * TRIALLOG_LINE_MAX)
};

typedef struct TrialLog TrialLog;

/* The log beside the journal file at journal_path (its JOURNAL_EXT replaced, else
 * TRIALLOG_EXT appended), what an earlier run wrote there read back (its trials' counts,
 * its size). NULL: out of memory. */
TrialLog *triallog_new(const char *journal_path);
/* Another bound on the whole file than TRIALLOG_TOTAL_BYTES (at least TRIALLOG_TOTAL_MIN):
 * for tests. */
void triallog_set_total(TrialLog *l, size_t total_bytes);
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
/* How many lines trial `trial` printed (kept or left out within its part), in this run or
 * an earlier one of the session; 0: none, or its part was left out whole. */
size_t triallog_count(const TrialLog *l, int trial);
/* Whether trial `trial`'s lines were left out whole to keep the total bound. */
int triallog_left_out(const TrialLog *l, int trial);
/* Whether anything was written, in this run or an earlier one: the file is worth naming. */
int triallog_written(const TrialLog *l);
/* Why the file could not be created or written (said once; nothing more is written), or
 * NULL. */
const char *triallog_error(const TrialLog *l);

#endif
