/* The remote processes of trials a killed session left running ("orphans"): the per-host
 * and single launchers report each part's process group (LaunchConfig.on_proc), the
 * session journals it as a "remote_process" event as soon as it is known, and a resume
 * finds the groups of trials that never finished and stops them over SSH. A group is only
 * killed if one of its processes still carries the trial's TUNEDECK_TRIAL in its
 * environment, so a process group id reused since by something else is left alone. */
#ifndef TUNEDECK_ORPHANS_H
#define TUNEDECK_ORPHANS_H

#include <stdio.h>

#include "core/journal/journal.h"
#include "remote/ssh/hostpool.h"

/* {"event":"remote_process","trial":N,"machine":"h1","pgid":P} */
cJSON *orphans_proc_json(int trial, const char *machine, long pgid);

typedef struct {
    int trial;
    char machine[128];
    long pgid;
    char result[256]; /* after orphans_stop: "stopped", "gone" or why it could not be */
    int answered;     /* after orphans_stop: the host ran the stop command to its end */
    int unreached;    /* a stop went unanswered: not tried again until its host is connected */
} Orphan;

typedef struct {
    Orphan *items;
    size_t n;
} OrphanList;

/* The process groups journaled for trials that have no "finished" event. */
int orphans_collect(const JournalLog *log, OrphanList *out, Error *err);
/* Appends one group (-1: out of memory). */
int orphans_add(OrphanList *l, int trial, const char *machine, long pgid);
/* Stops every group that still runs a process of its trial (TERM, KILL after 2 s, given up
 * 1 s later): one SSH command per host, all hosts at once, waiting at most timeout_s; fills
 * each item's result ("stopped", "gone" or "not stopped: why"). Returns how many were
 * stopped. */
int orphans_stop(HostPool *pool, OrphanList *l, double timeout_s);
void orphans_clear(OrphanList *l);
/* Moves the groups of trials before `trial` on `machine` from `from` to the end of `to`
 * (-1: out of memory, nothing moved). */
int orphans_take(OrphanList *from, int trial, const char *machine, OrphanList *to);
/* After orphans_stop: the group still runs although its host answered (the kill failed), so
 * nothing is to run beside it; a host that did not answer leaves it undecided. */
int orphans_still_running(const Orphan *o);

#endif
