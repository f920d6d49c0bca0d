/* The remote processes of trials a killed session left running ("orphans"): the per-host
 * and single launchers report each part's process group (LaunchConfig.on_proc), the
 * session journals it as a "remote_process" event as soon as it is known, and a resume
 * finds the groups of trials that never finished, and those whose last stop said "not
 * stopped" (a finished trial's too), and stops them over SSH. A group is only
 * killed if one of its processes still carries the launch's mark, TUNEDECK_RUN_MARK (128
 * random bits the launcher makes for each launch of a trial on each host), in its
 * environment: a process group id reused since by something else, another session's trial
 * with the same number included, is left alone. The processes that carry the mark are
 * stopped too, wherever they are (a daemon that left the group with setsid). A group
 * journaled without a mark (by a tunedeck before marks) is matched by TUNEDECK_TRIAL alone, as
 * it was then. */
#ifndef TUNEDECK_ORPHANS_H
#define TUNEDECK_ORPHANS_H

#include <stdint.h>
#include <stdio.h>

#include "core/journal/journal.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/hostpool.h"

/* {"event":"remote_process","trial":N,"machine":"h1","pgid":P,"mark":"…"} ("mark" left out
 * when mark is NULL or empty); NULL when memory runs out. */
cJSON *orphans_proc_json(int trial, const char *machine, long pgid, const char *mark);
/* A fresh mark (GROUPSTOP_MARK_CHARS + 1 bytes, one groupstop_mark_ok takes); -1 (err) when
 * the kernel gives no randomness. */
int orphans_mark_new(char *mark, Error *err);

typedef struct {
    int trial;
    char machine[128];
    long pgid;
    char mark[GROUPSTOP_MARK_CHARS + 1]; /* "" when the journal had none */
    char result[256]; /* after orphans_stop: "stopped", "gone" or why it could not be */
    int answered;     /* after orphans_stop: the host ran the stop command to its end */
    int silent;       /* after orphans_stop: its host did not answer (ssh failed, or no answer
                       * in time): nothing of the group was checked */
    int unreached;    /* a stop went unanswered: not tried again until its host is connected */
    int seen_end;     /* its trial's own stop saw it end: an end-of-session sweep checks it
                       * for safety only, and has nothing to say of it when its host is down */
    int finished;     /* orphans_collect: its trial has an outcome (a group left running by a
                       * stop that could not end it), else it was interrupted */
} Orphan;

typedef struct {
    Orphan *items;
    size_t n;
} OrphanList;

/* The process groups a journal says may still run: those of trials that have no "finished"
 * event after the group's own line, and those whose last "remote_process_stop" line says "not
 * stopped" (their host did not answer, or the kill failed), whether their trial finished or
 * not (Orphan.finished tells them apart). A stop line whose "remote_process" line was lost
 * names its group as well. */
int orphans_collect(const JournalLog *log, OrphanList *out, Error *err);
/* Appends one group (-1: out of memory); mark NULL or one groupstop_mark_ok accepts. */
int orphans_add(OrphanList *l, int trial, const char *machine, long pgid, const char *mark);
/* The shell command that stops machine's groups of l: each group that still runs a process
 * of its trial, and the processes that carry its mark outside it; one "PGID RESULT" line per
 * group. Caller frees; NULL when memory runs out. */
char *orphans_stop_command(const OrphanList *l, const char *machine);
/* Stops every group that still runs a process of its trial, and every process that carries
 * its mark (a daemon of the trial that left the group with setsid, what is left of a group
 * that is gone) (TERM, KILL after 2 s, given up 1 s later): one SSH command per host, all
 * hosts at once, waiting at most timeout_s; fills each item's result ("stopped", "gone" or
 * "not stopped: why"). Returns how many were stopped. */
int orphans_stop(HostPool *pool, OrphanList *l, double timeout_s);
/* The same stop in steps, for a caller whose own loop must go on meanwhile (the console reads
 * keys and redraws): begin sends the commands (NULL: out of memory, nothing sent); the
 * caller's loop must step the pool (hostpool_pollfds/step) until settled (every host answered,
 * or the deadline passed); end fills the results as orphans_stop does, frees the stop and
 * returns how many were stopped. wait runs a loop of its own until settled (orphans_stop is
 * begin, wait, end). The list must not change between begin and end. */
typedef struct OrphanStop OrphanStop;
OrphanStop *orphans_stop_begin(HostPool *pool, OrphanList *l, double timeout_s);
/* A sweep's: a host whose ssh failed at the first ask, where a group may still run (not
 * seen_end), is kept by the pool from then on (reconnected on its back-off) and asked once
 * more as soon as it is connected again before the deadline: while it has a reconnect
 * planned before the deadline, the stop is settled only once it answered again, or at the
 * deadline. Never a third ask; a host that said nothing (no answer in time) is not asked
 * again. */
void orphans_stop_retry_when_back(OrphanStop *st);
/* Whether every host answered; sends that second ask once its host is connected again,
 * hence not const. */
int orphans_stop_answered(OrphanStop *st);
int orphans_stop_settled(OrphanStop *st, int64_t now_ms);
int64_t orphans_stop_deadline(const OrphanStop *st);
void orphans_stop_wait(OrphanStop *st);
int orphans_stop_end(OrphanStop *st);
void orphans_clear(OrphanList *l);
/* Marks seen_end each group of l that is not in `lost` (the same trial, machine and group):
 * at a session's end, every group it saw that no stop left undecided. */
void orphans_mark_seen_end(OrphanList *l, const OrphanList *lost);
/* Moves the groups of trials before `trial` on `machine` from `from` to the end of `to`
 * (-1: out of memory, nothing moved). */
int orphans_take(OrphanList *from, int trial, const char *machine, OrphanList *to);
/* After orphans_stop: the group still runs although its host answered (the kill failed), so
 * nothing is to run beside it; a host that did not answer leaves it undecided. */
int orphans_still_running(const Orphan *o);

#endif
