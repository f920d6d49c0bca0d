/* `tunedeck schedule --live`'s command line (schedule_live_args.c): its usage text and its
 * flags read and checked into LiveArgs, before cmd_schedule_live.c opens anything. */
#ifndef TUNEDECK_SCHEDULE_LIVE_ARGS_H
#define TUNEDECK_SCHEDULE_LIVE_ARGS_H

#include "core/sched/sched.h"
#include "remote/live/schedlive.h"

/* What the command line asked for. */
typedef struct {
    SchedConfig cfg;
    SchedLiveOptions lo;
    const char *cluster_path, *workload, *events_path, *data;
    double duration, status_every;
    long gpn;
    int accept;
    int slurm;                  /* --slurm */
    const char *partition;      /* --partition */
    const char *login;          /* --login: refused with advice */
    const char *job_command;    /* --job-command */
} LiveArgs;

/* Fills a from the flags. Returns 0 to go on, 1 after --help (the usage on standard output),
 * 2 on a bad flag (said on stderr). Its strings point into argv. */
int schedule_live_args_parse(int argc, char **argv, LiveArgs *a);

#endif
