/* The live Slurm backend as its unit tests set it up (tests/remote/live/test_liverun_slurm_*.c):
 * its commands run here, found on PATH (the stand-ins first, tests/support/standins.h), and
 * one run of one GPU on n1; what it says gathered in the suite's buffer. Each helper fails
 * the calling test (Criterion assertions) instead of returning an error, except the start,
 * whose refusals some tests check. */
#ifndef TUNEDECK_TEST_LIVESLURM_FIXTURE_H
#define TUNEDECK_TEST_LIVESLURM_FIXTURE_H

#include "remote/live/liverun_slurm.h"

/* The lines the backend says (LiveSlurmOptions.log), one a line, in the suite's buffer text
 * (cap bytes, the rest cut): the userdata of fixture_log_line. */
typedef struct {
    char *text;
    size_t cap;
} FixtureLog;
/* A LiveLogFn: appends line and a newline to the FixtureLog ud. */
void fixture_log_line(void *ud, const char *line);

/* A suite's set-up: the n stand-ins of table installed in dir (standins_install), an empty
 * file "jobs" there (where the stand-in sbatch records the jobs it accepts), log emptied. */
void liveslurm_fixture_setup(char *dir, const char *const (*table)[2], size_t n, FixtureLog *log);

typedef struct {
    SlurmCtl *ctl;
    LiveSlurm *s;
} Backend;

/* Each command given timeout_s, a job round every 0.05 s at most; what it says goes to log
 * (NULL: nowhere). */
Backend backend_new(double timeout_s, FixtureLog *log);
/* The same, a job of ours pending pending_say_s said (LiveSlurmOptions). */
Backend backend_new_pending(double timeout_s, FixtureLog *log, double pending_say_s);
/* The same, a job's exit line waited for exit_grace_s once Slurm says it ended. */
Backend backend_new_grace(double timeout_s, FixtureLog *log, double exit_grace_s);
void backend_free(Backend *b);

/* Driver steps (the backend's tick, the run's step, every 10 ms) until done(run) holds; the
 * 8 s bound ends a loop that would never end, it is not a timing threshold. */
void backend_steps_until(Backend *b, void *run, int (*done)(void *run));

/* How the last backend_start was refused, when it returned NULL. */
extern LiveRefusal backend_refusal;
/* Starts job `name` (command `command_template`) on n1 with GPU 0, in DIR/work/NAME (dir:
 * the test's folder): the run, or NULL with err set (and backend_refusal). */
void *backend_start(Backend *b, const char *dir, const char *name, const char *command_template,
                    Error *err);

/* The output file of job `id` of the run started as `name` in dir (backend_start), found by
 * the job name the stand-in sbatch recorded with its id in DIR/jobs ("ID NAME" lines), in
 * path (cap bytes). Fails the test when the id is not there. */
void fixture_job_output(const char *dir, const char *name, long id, char *path, size_t cap);

#endif
