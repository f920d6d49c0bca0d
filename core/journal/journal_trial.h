/* Tuning trials in the session journal: the "suggested", "started" and "finished" events as
 * JSON, and the trials of a journal rebuilt from them (what a resumed session replays). */
#ifndef TUNEDECK_JOURNAL_TRIAL_H
#define TUNEDECK_JOURNAL_TRIAL_H

#include "core/journal/journal.h"
#include "core/opt/optimizer.h"

/* {"event":"suggested","trial":N,"overridden":b,"suggest_ms":x,"prediction":{...}|null,
 *  "schedule":{protocol v1 input},"override":ID} where override_id > 0 (the queued override
 *  the trial takes out of the queue: journal_override.h reads it back); no "override" else */
cJSON *journal_suggested_json(int trial, int overridden, int override_id, const Suggestion *sg,
                              double suggest_ms);
/* Adds "left_out":["NAME",...] to a suggested event: the machines of cluster c the optimizer
 * was told to leave out when it made the suggestion (TrialRecord.left_out, one flag each),
 * so that a resume re-makes it leaving them out; nothing when none is (left_out NULL or all
 * zero: the field is absent, as in older journals). */
void journal_suggested_add_left_out(cJSON *ev, const Cluster *c, const unsigned char *left_out);
/* {"event":"started","trial":N,"wall_s":unix time} */
cJSON *journal_started_json(int trial);
/* {"event":"finished","trial":N,"status":"ok","reason":"","time_s":x|null,"comm_s":x|null,
 *  "iterations":n,"device_time_s":[x|null...],"machine_time_s":[x|null...]}, and
 *  "unreachable":["NAME",...] where o->unreachable names a machine (a trial lost unreachable:
 *  the hosts it did not reach, which a resume checks again) */
cJSON *journal_finished_json(int trial, const Observation *o);
/* The outcome of a "finished" event for a trial of this schedule (copied): every field read
 * and checked (a status it knows; an ok trial's time; an ok or pruned trial's time at least
 * PROTOCOL_TIME_MIN_S, protocol v1's; a time or null in each entry of the per-device and
 * per-machine arrays, as many as the cluster has; "unreachable", absent or the names of
 * machines of the cluster). */
Observation *journal_finished_parse(const cJSON *ev, const Schedule *s, const char *ctx,
                                    Error *err);
/* journal_finished_parse's verdict alone, on cluster c (NULL: the arrays' lengths are not
 * checked), the one reading of a "finished" line that `tunedeck sessions` shares: 0 with
 * its status and time (-1: unknown) in *status and *time_s; -1 with why in err. */
int journal_finished_kept(const cJSON *ev, const Cluster *c, const char *ctx, TrialStatus *status,
                          double *time_s, Error *err);

typedef struct {
    int trial;         /* 1..n: its place among the trials kept */
    int journal_trial; /* its number in the file: above `trial` once earlier suggestions were
                        * lost to damaged lines (its later events are found by this one) */
    int overridden;
    double suggest_ms;
    Suggestion suggestion; /* schedule and the scalar prediction (no per-part arrays) */
    unsigned char *left_out; /* its "left_out": one flag per machine, owned; NULL: none */
    Observation *obs;      /* NULL: suggested or started but never finished (interrupted) */
    int started;
    size_t finished_line_skipped; /* the line of its "finished" event, skipped (a bad field,
                                   * a status it does not know); 0: none was skipped */
} JournalTrial;

typedef struct {
    JournalTrial *trials; /* in trial order, trial numbers 1..n */
    size_t n;
} JournalTrials;

/* Rebuilds the trials from a journal's events; an event that does not fit (a bad schedule,
 * a trial out of order, a second outcome) is reported in log->problems with its line and
 * skipped. A trial suggested past a gap (the suggestions before it lost to damaged lines)
 * is kept, numbered next: one bad line never costs the measurements after it. Fails only
 * when memory runs out. */
int journal_trials_decode(JournalLog *log, const Cluster *c, const char *source, JournalTrials *out,
                          Error *err);
void journal_trials_clear(JournalTrials *t);
/* The numbering rule journal_trials_decode keeps trials by: a "suggested" event's trial
 * number (in *trial) follows the trial numbered `last` in the file (0: none yet) when it is
 * above it; a gap is suggestions lost to damaged lines. -1 with why in err otherwise. */
int journal_suggested_follows(const cJSON *ev, const char *ctx, int last, int *trial, Error *err);
/* A "suggested" event as journal_trials_decode keeps it, the one reading of it that
 * `tunedeck sessions` shares (through the override tally, journal_override_tally.h): its number
 * follows `last` (journal_suggested_follows), its fields are read and its schedule is one the
 * cluster c takes and schedule_validate passes, its "left_out" (absent: none) machines of c.
 * 0 with *out filled (journal_trial, overridden, suggest_ms, the suggestion: its schedule
 * owned; left_out owned; trial, obs and started left 0); -1 with why in err. */
int journal_suggested_read(const cJSON *ev, const Cluster *c, const char *ctx, int last,
                           JournalTrial *out, Error *err);
/* journal_suggested_read's verdict alone: the trial's number in *trial, nothing kept. */
int journal_suggested_kept(const cJSON *ev, const Cluster *c, const char *ctx, int last, int *trial,
                           Error *err);
/* How many trials journal_trials_decode keeps on the cluster c, by the same reading of each
 * "suggested" line (journal_suggested_kept; the override tally counts them so for `tunedeck
 * sessions`): what a resume's budget counts. A line the decoder refuses (its schedule, or
 * another field) is not a trial: counted by its number alone it could make the count above
 * the trials replayed (a resume ran one more than its budget) or, out of order, below them
 * (a refused line numbered past the ones after it made those strays here and trials to the
 * decoder, and the session started past its budget). */
size_t journal_trials_count(const JournalLog *log, const Cluster *c);

#endif
