/* The `sim` launcher: the embedded simulated cluster answers the trial at once, through the
 * same protocol events and accumulator as a real trial. */
#include <stdio.h>
#include <stdlib.h>

#include "core/sim/simcluster.h"
#include "remote/launch/launcher.h"

typedef struct {
    TrialAccumulator *acc;
    Observation *result;
    const LaunchConfig *cfg;
    Error first_error;
    int bad_event;
    int stopped; /* on_iteration asked for a stop: later events never happened */
} SimRun;

static void on_event(void *ud, const TrialEvent *ev)
{
    SimRun *r = ud;
    if (r->stopped)
        return;
    if (!r->bad_event && trial_accumulator_add(r->acc, ev, &r->first_error) < 0)
        r->bad_event = 1;
    if (!r->bad_event && launcher_iteration_stop(r->cfg, ev))
        r->stopped = 1;
}

static void *start(const LaunchConfig *cfg, const Schedule *s, Error *err)
{
    if (!cfg->sim) {
        error_set(err, "sim launcher: no simulated cluster given");
        return NULL;
    }
    SimRun *r = calloc(1, sizeof *r);
    r->acc = trial_accumulator_new(s);
    r->cfg = cfg;
    simcluster_run(cfg->sim, s, cfg->seed, on_event, r);
    r->cfg = NULL;
    r->result = trial_accumulator_finish(r->acc);
    if (r->stopped) {
        launcher_end_by_us(r->result, 1, 0, 0);
    } else if (r->bad_event) {
        r->result->status = TRIAL_FAILED;
        snprintf(r->result->reason, sizeof r->result->reason, "%s", r->first_error.msg);
    }
    trial_accumulator_free(r->acc);
    r->acc = NULL;
    return r;
}

static size_t pollfds(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)run;
    (void)fds;
    (void)cap;
    (void)deadline_ms;
    return 0;
}

static void step(void *run, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)run;
    (void)fds;
    (void)n;
    (void)now_ms;
}

static int finished(const void *run)
{
    (void)run;
    return 1;
}

static Observation *result(void *run)
{
    SimRun *r = run;
    Observation *o = r->result;
    r->result = NULL;
    return o;
}

static void cancel(void *run)
{
    (void)run; /* a simulated trial is over before anyone could cancel it */
}

static void run_free(void *run)
{
    SimRun *r = run;
    if (!r)
        return;
    observation_free(r->result);
    free(r);
}

const LauncherKind LAUNCHER_SIM = {"sim", start, pollfds, step, finished, result, cancel, run_free};
