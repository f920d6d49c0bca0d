/* The console's options (cmd/cmd_console.c fills them from the flags) and their defaults. */
#ifndef TUNEDECK_CONSOLE_OPTIONS_H
#define TUNEDECK_CONSOLE_OPTIONS_H

#include "remote/session/session.h"

typedef struct {
    /* The tuning session (remote/session/session.h): the simulator (spec.sim, "B:googlenet"
     * by default) or spec.cluster with spec.job and/or workload; a resumed session's spec
     * comes from its journal. The console opens it (session_open) and closes it; the
     * Session itself, with its journal, belongs to the caller. */
    SessionSpec spec;
    Session *session;
    /* --cluster F --workload W: the scheduler live on the inventory's hosts (with or
     * without a job; without, no tuning) */
    const char *workload;
    const char *job_dir;         /* the live jobs' folders (default: schedlive's) */
    const char *checkpoint_file; /* --checkpoint-file: the file the job_command writes (NULL:
                                    its --checkpoint word), as schedule --live's */
    int gpus_per_node;           /* > 0: every machine's GPU count (else its type's GPU devices) */
    int journal_required;        /* a journal that cannot begin (resume) ends the console */
    const char *theme;           /* a name in themes/ */
    /* where the data lives (main decides: cmd/paths.h) */
    const char *themes_dir, *catalogue_dir;
    const char *plot; /* braille, block, ascii */
    int pace_ms;      /* pause between trials; < 0: 600 on the simulator, 0 otherwise */
    int ascii;        /* no Unicode glyphs */
    /* the simulated cluster scheduler (on the simulator only) */
    int no_sched;
    const char *policy;
    int sched_jobs;
    double sched_speed; /* simulated seconds per real second */
} ConsoleOptions;

void console_defaults(ConsoleOptions *o);

#endif
