/* The operator console: one poll() loop over the terminal, the tuning session's fds, a
 * timer and the background suggestion's wake pipe; redraws only after a change. */
#ifndef TUNEDECK_CONSOLE_H
#define TUNEDECK_CONSOLE_H

#include <cJSON.h>

#include "core/base/error.h"
#include "remote/ssh/hostpool.h"
#include "remote/launch/tuner.h"

typedef struct {
    const char *sim; /* "B:googlenet" when no cluster is given */
    const char *cluster, *job;
    /* --cluster F --workload W: the scheduler live on the inventory's hosts (with or
     * without --job; without, no tuning) */
    const char *workload;
    const char *job_dir; /* the live jobs' folders (default: schedlive's) */
    /* --resume: the cluster and job as the session's journal recorded them (instead of the
     * files; `cluster` then only names the source in messages) */
    const cJSON *cluster_json, *job_json;
    int journal_required; /* a journal that cannot start (resume) ends the console */
    const char *launcher, *trial_cmd;
    const char *optimizer;
    const char *theme; /* a name in themes/ */
    /* where the data lives (main decides: cmd/paths.h) */
    const char *themes_dir, *catalogue_dir;
    const char *plot;  /* braille, block, ascii */
    int budget;
    long seed;
    int pace_ms; /* pause between trials; < 0: 600 on the simulator, 0 otherwise */
    double trial_timeout_s;
    int ascii; /* no Unicode glyphs */
    /* the simulated cluster scheduler (on the simulator only) */
    int no_sched;
    int accept_new_host_keys; /* --accept-new-host-keys: every unknown key (not the default) */
    const char *policy;
    int sched_jobs;
    double sched_speed; /* simulated seconds per real second */
    /* The session journal, owned by the caller (cmd/); NULL: none. The console calls
     * journal_start once its tuner exists, journal_event before acting on every tuner event,
     * and journal_end when the operator quits. */
    void *journal;
    TunerEventFn journal_event;
    int (*journal_start)(void *journal, Tuner *t, const Cluster *c, const char *launcher,
                         Error *err);
    void (*journal_end)(void *journal, const Tuner *t);
    /* Remote trials (per-host, single): journal_proc gets each part's process group
     * (LaunchConfig.on_proc) once the journal runs; journal_hosts is called once after
     * journal_start, before any trial is launched, with the hosts' pool (a resume stops
     * what the killed session left running there), each line it logs goes to the log pane. */
    LaunchProcFn journal_proc;
    void (*journal_hosts)(void *journal, HostPool *pool,
                          void (*log)(void *userdata, const char *line), void *userdata);
} ConsoleOptions;

void console_defaults(ConsoleOptions *o);
/* Runs until the operator quits (0) or the terminal cannot be used (-1 with err). */
int console_run(const ConsoleOptions *o, Error *err);

#endif
