/* The console's Slurm desk (remote/slurm/slurm_desk.h). */
#include "remote/slurm/slurm_desk.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"

/* The console wants a fresher picture than `hosts --watch` (30 s): a change shows within
 * the cap even while the cluster is quiet. */
enum { MIN_INTERVAL_S = 2 };

struct SlurmDesk {
    SlurmCtl *ctl;
    SlurmWatch *watch;
    int64_t down_since_ms; /* the current outage's first failed round; 0: answering */
    char last_error[300];
    int changed;
    char outcome[512];
    int outcome_bad;
    /* the operator's node update: waiting for the watch's command, then running */
    int update_wanted;
    SlurmCall *update;
    char update_what[160]; /* "drain n1" */
    const char *update_argv[6];
    char arg_node[96], arg_state[32], arg_reason[200];
    long tables_at_update; /* node tables read when the last update ended; -1: none ran */
};

SlurmDesk *slurm_desk_new(SlurmCtl *c, const char *partition, double max_interval_s)
{
    SlurmDesk *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->ctl = c;
    d->tables_at_update = -1;
    if (!(d->watch = slurm_watch_new(c, partition, MIN_INTERVAL_S, max_interval_s))) {
        free(d);
        return NULL;
    }
    return d;
}

void slurm_desk_free(SlurmDesk *d)
{
    if (!d)
        return;
    slurm_call_free(d->update);
    slurm_watch_free(d->watch);
    free(d);
}

const SlurmWatch *slurm_desk_watch(const SlurmDesk *d)
{
    return d->watch;
}

SlurmCtl *slurm_desk_ctl(const SlurmDesk *d)
{
    return d->ctl;
}

int64_t slurm_desk_down_since_ms(const SlurmDesk *d)
{
    return d->down_since_ms;
}

const char *slurm_desk_last_error(const SlurmDesk *d)
{
    return d->last_error;
}

int slurm_desk_changed(SlurmDesk *d)
{
    int c = d->changed;
    d->changed = 0;
    return c;
}

static void say(SlurmDesk *d, int bad, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(SlurmDesk *d, int bad, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->outcome, sizeof d->outcome, fmt, ap);
    va_end(ap);
    d->outcome_bad = bad;
    d->changed = 1;
}

int slurm_desk_take_outcome(SlurmDesk *d, char *msg, size_t cap, int *bad)
{
    if (!d->outcome[0])
        return 0;
    snprintf(msg, cap, "%s", d->outcome);
    *bad = d->outcome_bad;
    d->outcome[0] = 0;
    return 1;
}

void slurm_desk_poke(SlurmDesk *d, int64_t now_ms)
{
    slurm_watch_poke(d->watch, now_ms);
}

int slurm_desk_has_node(const SlurmDesk *d, const char *node)
{
    const SlurmNodes *ns = slurm_watch_nodes(d->watch);
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i].name, node) == 0)
            return 1;
    return 0;
}

const SlurmNode *slurm_desk_listed_node(const SlurmDesk *d, const char *node)
{
    /* the watch reads no table while an update runs: a table counted after it ended was
     * asked after it */
    if (slurm_watch_node_tables(d->watch) <= d->tables_at_update)
        return NULL;
    const SlurmNodes *ns = slurm_watch_nodes(d->watch);
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i].name, node) == 0)
            return &ns->v[i];
    return NULL;
}

int slurm_desk_updating(const SlurmDesk *d)
{
    return d->update_wanted || d->update;
}

int slurm_desk_is_refusal(const char *error)
{
    return strstr(error, "Invalid user id") || strstr(error, "Access/permission denied") ||
           strstr(error, "Permission denied");
}

int slurm_desk_update_node(SlurmDesk *d, const char *node, int drain, const char *reason,
                           Error *err)
{
    if (slurm_desk_updating(d))
        return error_set(err, "%s is still running: one node update at a time", d->update_what);
    size_t n = strlen(node);
    if (!n || n >= 64 ||
        strspn(node, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789-_.") != n)
        return error_set(err, "expected a node name (letters, digits, - _ .), found '%s'", node);
    for (const char *p = reason ? reason : ""; *p; p++)
        if (!isprint((unsigned char)*p))
            return error_set(err, "the reason must be printable text");
    snprintf(d->arg_node, sizeof d->arg_node, "NodeName=%s", node);
    snprintf(d->arg_state, sizeof d->arg_state, "State=%s", drain ? "DRAIN" : "RESUME");
    /* Slurm requires a reason to drain; it is shown by sinfo -R and in every node list. */
    snprintf(d->arg_reason, sizeof d->arg_reason, "Reason=tunedeck: %.150s",
             reason && reason[0] ? reason : "drained from the console");
    const char *argv[] = {
        "scontrol", "update", d->arg_node, d->arg_state, drain ? d->arg_reason : NULL, NULL};
    memcpy(d->update_argv, argv, sizeof argv);
    snprintf(d->update_what, sizeof d->update_what, "%s %s", drain ? "drain" : "undrain", node);
    d->update_wanted = 1;
    return 0;
}

static void update_done(SlurmDesk *d, int64_t now_ms)
{
    Error err;
    int rc = slurm_call_finish(d->update, NULL, &err);
    d->update = NULL;
    d->tables_at_update = slurm_watch_node_tables(d->watch);
    if (rc == 0) {
        say(d, 0, "slurm: %s done (scontrol update %s %s)", d->update_what, d->arg_node,
            d->arg_state);
        slurm_watch_poke(d->watch, now_ms);
    } else if (rc > 0 && slurm_desk_is_refusal(err.msg)) {
        /* Slurm's own words first ("slurm_update error: Invalid user id"): they are what an
         * operator searches for; the exit status adds nothing. */
        const char *said = strstr(err.msg, ": ");
        say(d, 1,
            "slurm: %s refused by Slurm: %s (needs root, the SlurmUser, or an operator or "
            "admin AdminLevel)",
            d->update_what, said ? said + 2 : err.msg);
    } else {
        say(d, 1, "slurm: %s failed: %s", d->update_what, err.msg);
    }
}

size_t slurm_desk_pollfds(SlurmDesk *d, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    if (d->update)
        return slurm_call_pollfds(d->update, fds, cap, deadline_ms);
    if (d->update_wanted && !slurm_watch_busy(d->watch)) {
        *deadline_ms = clock_now_ms(); /* start it at the next step */
        return 0;
    }
    return slurm_watch_pollfds(d->watch, fds, cap, deadline_ms);
}

static void round_ended(SlurmDesk *d, int r, const Error *err, int64_t now_ms)
{
    d->changed = 1;
    if (r < 0) {
        snprintf(d->last_error, sizeof d->last_error, "%s", err->msg);
        if (!d->down_since_ms) {
            d->down_since_ms = slurm_watch_down_since_ms(d->watch);
            say(d, 1, "slurm: the controller does not answer (%s); retrying in %.0f s", err->msg,
                slurm_watch_interval_s(d->watch));
        }
        return;
    }
    if (d->down_since_ms) {
        double s = (double)(now_ms - d->down_since_ms) / 1000.0;
        say(d, 0, "slurm: the controller answers again (it did not for %.0f s)", s);
        d->down_since_ms = 0;
    }
    d->last_error[0] = 0;
}

void slurm_desk_step(SlurmDesk *d, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    if (d->update) {
        slurm_call_step(d->update, fds, n, now_ms);
        if (slurm_call_done(d->update))
            update_done(d, now_ms);
        return;
    }
    if (d->update_wanted && !slurm_watch_busy(d->watch)) {
        Error err;
        d->update_wanted = 0;
        if (!(d->update = slurm_call_start(d->ctl, d->update_argv, &err)))
            say(d, 1, "slurm: %s failed: %s", d->update_what, err.msg);
        return;
    }
    slurm_watch_step(d->watch, fds, n, now_ms);
    Error err;
    int r = slurm_watch_take(d->watch, &err);
    if (r != -2)
        round_ended(d, r, &err, now_ms);
}
