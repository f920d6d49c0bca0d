/* The launcher registry, and a blocking driver for headless runs and tests. */
#include "remote/launch/launcher.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/evloop.h"
#include "core/base/registry.h"
#include "core/base/secret.h"
#include "remote/launch/rankfan.h"

extern const LauncherKind LAUNCHER_SIM, LAUNCHER_LOCAL, LAUNCHER_PER_HOST, LAUNCHER_SINGLE,
    LAUNCHER_SLURM;

_Static_assert(offsetof(LauncherKind, name) == 0, "registry entries begin with their name");

static const void *const LAUNCHERS[] = {
    &LAUNCHER_SIM,
    &LAUNCHER_LOCAL,
    &LAUNCHER_PER_HOST,
    &LAUNCHER_SINGLE,
    &LAUNCHER_SLURM,
    NULL,
};

static const Registry REGISTRY = {LAUNCHERS, NULL};

const LauncherKind *launcher_find(const char *name)
{
    return registry_find(&REGISTRY, name);
}

const char *launcher_names(void)
{
    static char names[128];
    return names[0] ? names : registry_names(&REGISTRY, names, sizeof names);
}

int launcher_iteration_stop(const LaunchConfig *cfg, const TrialEvent *ev)
{
    if (!cfg->on_iteration || ev->kind != EVENT_ITERATION)
        return 0;
    return cfg->on_iteration(cfg->iter_userdata, ev->iter, ev->time_s) != 0;
}

int launcher_past_stop(int stop_iter, const TrialEvent *ev)
{
    if (ev->kind == EVENT_LOG)
        return 0;
    return ev->kind != EVENT_ITERATION || ev->iter > stop_iter;
}

char *launcher_trial_input(const Schedule *s, size_t *len, Error *err)
{
    /* Per-device ranks run the user's own command (PyTorch and the like), never
     * tunedeck-worker's parameter servers, so nothing in them reads the secret; and the rank
     * fan-out writes its input to a file under $TMPDIR (remote/launch/rankfan.c), which a
     * SIGKILL leaves behind. */
    if (rankfan_wanted(s)) {
        char *line = schedule_to_input(s, NULL, len);
        if (!line)
            error_set(err, "trial %d: out of memory for its input", s->trial);
        return line;
    }
    char secret[SECRET_HEX_CHARS + 1];
    if (secret_new_hex(secret, err) < 0) {
        error_prefix(err, "trial %d: its secret", s->trial);
        return NULL;
    }
    char *line = schedule_to_input(s, secret, len);
    explicit_bzero(secret, sizeof secret);
    if (!line)
        error_set(err, "trial %d: out of memory for its input", s->trial);
    return line;
}

void launcher_input_free(char *input, size_t len)
{
    if (input)
        explicit_bzero(input, len);
    free(input);
}

int launcher_end_by_us(Observation *o, int cancelled, int timed_out, double timeout_s)
{
    if (cancelled) {
        o->status = TRIAL_CANCELLED;
        snprintf(o->reason, sizeof o->reason, "cancelled");
    } else if (timed_out) {
        o->status = TRIAL_TIMEOUT;
        snprintf(o->reason, sizeof o->reason, "ran past the %g s trial timeout",
                 timeout_s > 0 ? timeout_s : 600);
    }
    return cancelled || timed_out;
}

void launcher_note_bad_line(Observation *o, const char *protocol_error)
{
    if (!protocol_error[0])
        return;
    /* An ok trial keeps its status (its objective came from good lines), but a refused line
     * (a NaN loss from a diverged run, say) is its note: otherwise it could become the best
     * schedule with nothing said. */
    if (o->status == TRIAL_OK && !o->reason[0]) {
        snprintf(o->reason, sizeof o->reason, "first bad line: %s", protocol_error);
        return;
    }
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

int launcher_wait(const LauncherKind *k, void *run)
{
    OneRun r = {k, run};
    return evloop_run_source(k->pollfds, k->step, run, run_finished, &r, -1) < 0 ? -1 : 0;
}

Observation *launcher_run_blocking(const LauncherKind *k, const LaunchConfig *cfg,
                                   const Schedule *s, Error *err)
{
    void *run = k->start(cfg, s, err);
    if (!run)
        return NULL;
    if (launcher_wait(k, run) < 0)
        k->cancel(run);
    Observation *o = k->result(run);
    if (!o)
        error_set(err, "%s launcher: poll: %s", k->name, strerror(errno));
    k->free(run);
    return o;
}
