/* The orphans glue shared by `tunedeck tune` and the console (see tune_orphans.h). */
#include "remote/session/tune_orphans.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

void tune_procs_on_proc(void *userdata, int trial, const char *machine, long pgid)
{
    TuneProcs *pl = userdata;
    /* `trial` is the number its schedule carried (the file's: tuner_outside_number), the one
     * its processes' TUNEDECK_TRIAL holds and a later stop looks for. */
    tune_journal_append(pl->tj, orphans_proc_json(trial, machine, pgid));
    orphans_add(&pl->seen, trial, machine, pgid);
}

void tune_procs_on_proc_lost(void *userdata, int trial, const char *machine, long pgid)
{
    TuneProcs *pl = userdata;
    orphans_add(&pl->lost, trial, machine, pgid);
}

static void journal_stop(TuneJournal *tj, const Orphan *o)
{
    cJSON *ev = orphans_proc_json(o->trial, o->machine, o->pgid);
    cJSON_ReplaceItemInObject(ev, "event", cJSON_CreateString("remote_process_stop"));
    cJSON_AddStringToObject(ev, "result", o->result);
    tune_journal_append(tj, ev);
}

void tune_orphans_stop(HostPool *pool, TuneJournal *tj, OrphanList *l, const char *what, int quiet,
                       TuneOrphanReportFn report, void *userdata)
{
    orphans_stop(pool, l, 15);
    for (size_t i = 0; i < l->n; i++) {
        const Orphan *o = &l->items[i];
        if (quiet && strcmp(o->result, "gone") == 0)
            continue;
        char line[512];
        snprintf(line, sizeof line, "%s trial %d: process group %ld on %s: %s", what, o->trial,
                 o->pgid, o->machine, o->result);
        if (report)
            report(userdata, line);
        journal_stop(tj, o);
    }
}

int tune_orphans_before_trial(HostPool *pool, TuneJournal *tj, OrphanList *lost, const Schedule *s,
                              TuneOrphanReportFn report, void *userdata, char *why, size_t cap)
{
    OrphanList here = {0};
    const Cluster *c = s->cluster;
    for (size_t i = 0; i < lost->n;) {
        char m[sizeof lost->items[i].machine]; /* a copy: taking moves the items */
        snprintf(m, sizeof m, "%s", lost->items[i].machine);
        long k = cluster_find_machine(c, m);
        if (k >= 0 && !s->worker[k] && !s->ps[k]) {
            i++; /* not a machine of this trial: left for one that uses it */
            continue;
        }
        size_t before = lost->n;
        if (orphans_take(lost, s->trial, m, &here) < 0) {
            orphans_clear(&here);
            return 0; /* out of memory: the groups stay for the end of the session */
        }
        if (lost->n == before)
            i++; /* only later trials' groups there */
    }
    if (!here.n)
        return 0;
    orphans_stop(pool, &here, 15);
    int rc = 0;
    why[0] = 0;
    for (size_t i = 0; i < here.n; i++) {
        const Orphan *o = &here.items[i];
        char line[512];
        if (o->answered || strcmp(o->result, "stopped") == 0 || strcmp(o->result, "gone") == 0)
            journal_stop(tj, o);
        if (strcmp(o->result, "stopped") == 0) {
            snprintf(line, sizeof line,
                     "stopped trial %d's leftover process group %ld on %s before trial %d",
                     o->trial, o->pgid, o->machine, s->trial);
            if (report)
                report(userdata, line);
        } else if (orphans_still_running(o)) {
            if (!why[0])
                snprintf(why, cap, "trial %d's leftover process group %ld on %s still runs: %s",
                         o->trial, o->pgid, o->machine, o->result);
            rc = -1;
        }
        if (strcmp(o->result, "stopped") != 0 && strcmp(o->result, "gone") != 0)
            orphans_add(lost, o->trial, o->machine, o->pgid); /* tried again next time */
    }
    orphans_clear(&here);
    return rc;
}

void tune_orphans_stop_interrupted(HostPool *pool, TuneJournal *tj, TuneOrphanReportFn report,
                                   void *userdata)
{
    OrphanList l;
    Error err;
    if (orphans_collect(tune_journal_log(tj), &l, &err) < 0)
        return;
    if (l.n)
        tune_orphans_stop(pool, tj, &l, "interrupted", 0, report, userdata);
    orphans_clear(&l);
}
