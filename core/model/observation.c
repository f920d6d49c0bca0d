/* Observations and the accumulator that builds one from a trial's events: iteration lines
 * from several hosts are merged by `iter`; part measurements are averaged after warm-up. */
#include "core/model/observation.h"
#include "core/model/peerloss.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"

typedef struct {
    int seen;
    double time_s, comm_s;
    double *device_s;  /* n_devices, < 0 unknown */
    double *machine_s; /* n_machines, < 0 unknown */
} IterRecord;

struct TrialAccumulator {
    const Schedule *schedule;
    IterRecord *iters;
    size_t n_iters;
    int has_done;
    double done_time_s;
    char *error;
};

const char *trial_status_name(TrialStatus s)
{
    static const char *const NAMES[] = {"ok",          "failed",    "timeout",
                                        "unreachable", "cancelled", "interrupted",
                                        "pruned"};
    return (unsigned)s < sizeof NAMES / sizeof *NAMES ? NAMES[s] : "unknown";
}

int trial_status_from_name(const char *name, TrialStatus *out)
{
    for (int s = TRIAL_OK; name && s <= TRIAL_PRUNED; s++)
        if (strcmp(trial_status_name((TrialStatus)s), name) == 0) {
            *out = (TrialStatus)s;
            return 0;
        }
    return -1;
}

int observation_measured(const Observation *o)
{
    return o->status == TRIAL_OK || (o->status == TRIAL_PRUNED && o->time_s > 0);
}

static void fill(double *a, size_t n, double v)
{
    for (size_t i = 0; i < n; i++)
        a[i] = v;
}

Observation *observation_new(const Schedule *s)
{
    const Cluster *c = s->cluster;
    Observation *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->schedule = schedule_copy(s);
    o->device_time_s = malloc((c->n_devices ? c->n_devices : 1) * sizeof(double));
    o->machine_time_s = malloc((c->n_machines ? c->n_machines : 1) * sizeof(double));
    if (!o->schedule || !o->device_time_s || !o->machine_time_s) {
        observation_free(o);
        return NULL;
    }
    fill(o->device_time_s, c->n_devices, -1);
    fill(o->machine_time_s, c->n_machines, -1);
    o->time_s = -1;
    o->comm_s = -1;
    return o;
}

Observation *observation_copy(const Observation *src)
{
    const Cluster *c = src->schedule->cluster;
    Observation *o = observation_new(src->schedule);
    if (!o)
        return NULL;
    o->status = src->status;
    memcpy(o->reason, src->reason, sizeof o->reason);
    o->time_s = src->time_s;
    o->comm_s = src->comm_s;
    o->iterations_seen = src->iterations_seen;
    memcpy(o->device_time_s, src->device_time_s, c->n_devices * sizeof(double));
    memcpy(o->machine_time_s, src->machine_time_s, c->n_machines * sizeof(double));
    if (src->unreachable) {
        if (!(o->unreachable = malloc(c->n_machines ? c->n_machines : 1))) {
            observation_free(o);
            return NULL;
        }
        memcpy(o->unreachable, src->unreachable, c->n_machines);
    }
    return o;
}

int observation_mark_unreachable(Observation *o, size_t m)
{
    size_t n = o->schedule->cluster->n_machines;
    if (m >= n)
        return 0;
    if (!o->unreachable && !(o->unreachable = calloc(n, 1)))
        return -1;
    o->unreachable[m] = 1;
    return 0;
}

void observation_free(Observation *o)
{
    if (!o)
        return;
    schedule_free(o->schedule);
    free(o->device_time_s);
    free(o->machine_time_s);
    free(o->unreachable);
    free(o);
}

TrialAccumulator *trial_accumulator_new(const Schedule *s)
{
    TrialAccumulator *a = calloc(1, sizeof *a);
    if (a)
        a->schedule = s;
    return a;
}

void trial_accumulator_free(TrialAccumulator *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_iters; i++) {
        free(a->iters[i].device_s);
        free(a->iters[i].machine_s);
    }
    free(a->iters);
    free(a->error);
    free(a);
}

enum { ITER_SPARE = 1 };

static IterRecord *record(TrialAccumulator *a, int iter)
{
    const Cluster *c = a->schedule->cluster;
    if ((size_t)iter >= a->n_iters) {
        size_t n = (size_t)iter + 1;
        IterRecord *grown = realloc(a->iters, n * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + a->n_iters, 0, (n - a->n_iters) * sizeof *grown);
        a->iters = grown;
        a->n_iters = n;
    }
    IterRecord *r = &a->iters[iter];
    if (!r->device_s) {
        r->device_s = malloc((c->n_devices ? c->n_devices : 1) * sizeof(double));
        r->machine_s = malloc((c->n_machines ? c->n_machines : 1) * sizeof(double));
        if (!r->device_s || !r->machine_s) {
            free(r->device_s), free(r->machine_s);
            r->device_s = r->machine_s = NULL;
            return NULL;
        }
        fill(r->device_s, c->n_devices, -1);
        fill(r->machine_s, c->n_machines, -1);
        r->time_s = r->comm_s = -1;
    }
    return r;
}


static double max2(double a, double b)
{
    return a > b ? a : b;
}

int trial_accumulator_add(TrialAccumulator *a, const TrialEvent *ev, Error *err)
{
    const Cluster *c = a->schedule->cluster;
    switch (ev->kind) {
    case EVENT_DONE:
        /* Each worker host (or rank) prints its own done line: the slowest is the trial's
         * time, as for an iteration, whatever order the lines arrive in. */
        if (ev->time_s >= 0) {
            a->done_time_s = a->has_done ? max2(a->done_time_s, ev->time_s) : ev->time_s;
            a->has_done = 1;
        }
        return 0;
    case EVENT_ERROR:
        /* The first error is the trial's, but a peer's lost connection gives way to the
         * first cause that follows it: the ranks of several hosts reach us through
         * separate streams (SSH channels, srun's per-node forwarding), so the crashed
         * rank's own words may arrive after a peer's (core/model/peerloss.h). An error
         * without text is no cause: it would only put "error event" in the peer's place. */
        if (!a->error || (peerloss_said(a->error) && ev->text && !peerloss_said(ev->text))) {
            char *text = strdup(ev->text ? ev->text : "error event");
            if (text) {
                free(a->error);
                a->error = text;
            }
        }
        return 0;
    case EVENT_ITERATION:
        break;
    default:
        return 0;
    }
    /* Memory follows the schedule, never the numbers a trial sends: an iteration past the
     * schedule's count (counting from 0 or 1, plus one spare) is a protocol error. */
    long max_iter = (long)a->schedule->job.iterations + ITER_SPARE;
    if (ev->iter < 0 || ev->iter > max_iter)
        return error_set(err,
                         "iteration %d: expected an iteration number from 0 to %ld (the schedule "
                         "runs %d iterations)",
                         ev->iter, max_iter, a->schedule->job.iterations);
    IterRecord *r = record(a, ev->iter);
    if (!r)
        return error_no_memory(err, "iteration %d", ev->iter);
    /* Hosts of one synchronous iteration each report it: the slowest view is the truth. */
    r->seen = 1;
    r->time_s = max2(r->time_s, ev->time_s);
    r->comm_s = max2(r->comm_s, ev->comm_s);
    for (size_t i = 0; i < ev->n_machines; i++) {
        const MachineMeasure *mm = &ev->machines[i];
        long mi = cluster_find_machine(c, mm->name);
        if (mi < 0)
            return error_set(err, "iteration %d: unknown machine '%s'", ev->iter, mm->name);
        const Machine *m = &c->machines[mi];
        const MachineType *t = &c->types[m->type];
        /* Ranks of one machine (one per device) each report it: the slowest is the
         * machine's time, as for hosts above. */
        if (mm->compute_s >= 0)
            r->machine_s[mi] = max2(r->machine_s[mi], mm->compute_s);
        for (size_t d = 0; d < mm->n_devices; d++) {
            size_t di = 0;
            while (di < t->n_devices && strcmp(t->devices[di].id, mm->devices[d].id) != 0)
                di++;
            if (di == t->n_devices)
                return error_set(err, "iteration %d: machine '%s' has no device '%s'", ev->iter,
                                 mm->name, mm->devices[d].id);
            r->device_s[m->first_device + di] = mm->devices[d].time_s;
        }
    }
    return 0;
}

int trial_accumulator_has_error(const TrialAccumulator *a, const char **message)
{
    if (a->error && message)
        *message = a->error;
    return a->error != NULL;
}

/* Mean of one quantity over the measured iterations at or after `from`. */
static double mean_after(const TrialAccumulator *a, size_t from, double (*get)(const IterRecord *, size_t),
                         size_t index)
{
    double sum = 0;
    int n = 0;
    for (size_t i = from; i < a->n_iters; i++) {
        if (!a->iters[i].seen)
            continue;
        double v = get(&a->iters[i], index);
        if (v >= 0) {
            sum += v;
            n++;
        }
    }
    return n ? sum / n : -1;
}

/* The smallest of one quantity over the measured iterations at or after `from`. */
static double min_after(const TrialAccumulator *a, size_t from, double (*get)(const IterRecord *, size_t),
                        size_t index)
{
    double least = -1;
    for (size_t i = from; i < a->n_iters; i++) {
        if (!a->iters[i].seen)
            continue;
        double v = get(&a->iters[i], index);
        if (v >= 0 && (least < 0 || v < least))
            least = v;
    }
    return least;
}

static double get_time(const IterRecord *r, size_t i)
{
    (void)i;
    return r->time_s;
}
static double get_comm(const IterRecord *r, size_t i)
{
    (void)i;
    return r->comm_s;
}
static double get_device(const IterRecord *r, size_t i)
{
    return r->device_s[i];
}
static double get_machine(const IterRecord *r, size_t i)
{
    return r->machine_s[i];
}

Observation *trial_accumulator_finish(TrialAccumulator *a)
{
    const Cluster *c = a->schedule->cluster;
    Observation *o = observation_new(a->schedule);
    if (!o)
        return NULL;
    /* Warm-up is the first `warmup` iterations reported, whether a trial counts from 0 or 1;
     * `warmup` below becomes the index of the first iteration after them. */
    size_t n_warm = (size_t)a->schedule->job.warmup, warmup = a->n_iters;
    int seen = 0, seen_after = 0;
    for (size_t i = 0; i < a->n_iters; i++) {
        if (!a->iters[i].seen)
            continue;
        if ((size_t)seen == n_warm)
            warmup = i;
        seen++;
        seen_after += (size_t)seen > n_warm;
    }
    o->iterations_seen = seen;
    /* Part measurements after warm-up when there are any; the first iterations are noisy. */
    size_t from = seen_after ? warmup : 0;
    /* With none (a trial stopped in warm-up: a probe, a prune), each part's fastest iteration:
     * warm-up slows an iteration by an unknown amount but never speeds it up, so the mean would
     * carry that slowness into the model as if it were the schedule's. */
    double (*summary)(const TrialAccumulator *, size_t, double (*)(const IterRecord *, size_t),
                      size_t) = seen_after ? mean_after : min_after;
    o->comm_s = summary(a, from, get_comm, 0);
    for (size_t d = 0; d < c->n_devices; d++)
        o->device_time_s[d] = summary(a, from, get_device, d);
    for (size_t m = 0; m < c->n_machines; m++)
        o->machine_time_s[m] = summary(a, from, get_machine, m);
    if (a->error) {
        o->status = TRIAL_FAILED;
        /* Cut at a whole character (termsafe): a message longer than the reason, cut
         * mid-character, made the journal's and `tune --json`'s text invalid UTF-8. */
        size_t at = (size_t)snprintf(o->reason, sizeof o->reason, "error event: ");
        termsafe(o->reason + at, sizeof o->reason - at, a->error);
        return o;
    }
    if (a->has_done) {
        o->time_s = a->done_time_s;
    } else if (seen_after) {
        o->time_s = mean_after(a, warmup, get_time, 0);
    } else {
        o->status = TRIAL_FAILED;
        if (seen)
            snprintf(o->reason, sizeof o->reason,
                     "no iteration after the %zu warm-up iterations and no done event", n_warm);
        else
            snprintf(o->reason, sizeof o->reason, "no usable output: no iteration or done event");
        return o;
    }
    o->status = TRIAL_OK;
    return o;
}
