/* The live Slurm backend as its unit tests set it up (tests/remote/live/test_liverun_slurm_*.c):
 * its commands run here, found on PATH (the stand-ins first, tests/support/standins.h), and
 * one run of one GPU on n1. Each helper fails the calling test (Criterion assertions) instead
 * of returning an error, except the start, whose refusals some tests check. */
#ifndef TUNEDECK_TEST_LIVESLURM_FIXTURE_H
#define TUNEDECK_TEST_LIVESLURM_FIXTURE_H

#include "remote/live/liverun_slurm.h"

typedef struct {
    SlurmCtl *ctl;
    LiveSlurm *s;
} Backend;

/* Each command given timeout_s, a job round every 0.05 s at most; log may be NULL. */
Backend backend_new(double timeout_s, LiveLogFn log);
/* The same, a job of ours pending pending_say_s said (LiveSlurmOptions). */
Backend backend_new_pending(double timeout_s, LiveLogFn log, double pending_say_s);
void backend_free(Backend *b);

/* Starts job `name` (command `command_template`) on n1 with GPU 0, in DIR/work/NAME (dir:
 * the test's folder): the run, or NULL with err set. */
void *backend_start(Backend *b, const char *dir, const char *name, const char *command_template,
                    Error *err);

#endif
