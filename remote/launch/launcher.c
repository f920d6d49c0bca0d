/* The launcher registry, and a blocking driver for headless runs and tests. */
#include "remote/launch/launcher.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base/evloop.h"

extern const LauncherKind LAUNCHER_SIM, LAUNCHER_LOCAL, LAUNCHER_PER_HOST, LAUNCHER_SINGLE,
    LAUNCHER_SLURM;

static const LauncherKind *const LAUNCHERS[] = {
    &LAUNCHER_SIM,
    &LAUNCHER_LOCAL,
    &LAUNCHER_PER_HOST,
    &LAUNCHER_SINGLE,
    &LAUNCHER_SLURM,
    NULL,
};

const LauncherKind *launcher_find(const char *name)
{
    for (const LauncherKind *const *k = LAUNCHERS; *k; k++)
        if (strcmp((*k)->name, name) == 0)
            return *k;
    return NULL;
}

const char *launcher_names(void)
{
    static char names[128];
    if (!names[0]) {
        for (const LauncherKind *const *k = LAUNCHERS; *k; k++) {
            if (names[0])
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, (*k)->name, sizeof names - strlen(names) - 1);
        }
    }
    return names;
}

int launcher_end_by_us(Observation *o, int cancelled, int timed_out, double timeout_s)
{
    if (cancelled) {
        o->status = TRIAL_CANCELLED;
        snprintf(o->reason, sizeof o->reason, "cancelled");
    } else if (timed_out) {
        o->status = TRIAL_TIMEOUT;
        snprintf(o->reason, sizeof o->reason, "ran past the %.0f s trial timeout",
                 timeout_s > 0 ? timeout_s : 600);
    }
    return cancelled || timed_out;
}

void launcher_note_bad_line(Observation *o, const char *protocol_error)
{
    if (o->status == TRIAL_OK || !protocol_error[0])
        return;
    char prior[sizeof o->reason];
    snprintf(prior, sizeof prior, "%s", o->reason);
    snprintf(o->reason, sizeof o->reason, "%s; first bad line: %s", prior, protocol_error);
}

typedef struct {
    const LauncherKind *k;
    void *run;
} OneRun;

static int run_finished(void *ctx)
{
    const OneRun *r = ctx;
    return r->k->finished(r->run);
}

Observation *launcher_run_blocking(const LauncherKind *k, const LaunchConfig *cfg,
                                   const Schedule *s, Error *err)
{
    void *run = k->start(cfg, s, err);
    if (!run)
        return NULL;
    OneRun r = {k, run};
    if (evloop_run_source(k->pollfds, k->step, run, run_finished, &r, -1) < 0)
        k->cancel(run);
    Observation *o = k->result(run);
    if (!o)
        error_set(err, "%s launcher: poll: %s", k->name, strerror(errno));
    k->free(run);
    return o;
}
