/* The orphans glue shared by `tunedeck tune` and the console (see tune_orphans.h). */
#include "remote/session/tune_orphans.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

void tune_procs_on_proc(void *userdata, int trial, const char *machine, long pgid)
{
    TuneProcs *pl = userdata;
    tune_journal_append(pl->tj,
                        orphans_proc_json(tune_journal_file_trial(pl->tj, trial), machine, pgid));
    orphans_add(&pl->seen, trial, machine, pgid);
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
        cJSON *ev = orphans_proc_json(o->trial, o->machine, o->pgid);
        cJSON_ReplaceItemInObject(ev, "event", cJSON_CreateString("remote_process_stop"));
        cJSON_AddStringToObject(ev, "result", o->result);
        tune_journal_append(tj, ev);
    }
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
