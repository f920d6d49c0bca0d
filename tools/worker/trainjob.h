/* The worker as a training job for the live scheduler (--job): one PS process and N
 * single-device workers on this host that train until asked to stop, print progress lines,
 * write a checkpoint when they stop and resume from one at any N. */
#ifndef TUNEDECK_TRAINJOB_H
#define TUNEDECK_TRAINJOB_H

#include <signal.h>

#include "core/base/error.h"
#include "tools/worker/psgate.h"

typedef struct {
    int gpus; /* how many workers */
    double model_mb, learning_rate;
    int batch;
    double progress_s;      /* at most this long between progress lines */
    double step_sleep_s;    /* a pause after each step (a stand-in job that needs no core) */
    long max_steps;         /* 0 = until *stop */
    const char *resume;     /* a checkpoint to start from; NULL or "" = start fresh */
    const char *checkpoint; /* where a stop writes; NULL = the resume file, else a default */
    double connect_timeout_s;
    volatile sig_atomic_t *stop; /* set by the caller's SIGTERM handler */
    PsLogFn log;                 /* where a shard's refusals go */
} TrainJobOptions;

/* Trains until *stop becomes non-zero or max_steps are taken, then writes the checkpoint;
 * progress lines go to standard output, the checkpoint's and the resume's notes to standard
 * error. */
int trainjob_run(const TrainJobOptions *o, Error *err);

#endif
