/* What comes into the scheduler state from outside: jobs (one by one, from a workload
 * file, or as the seed's Poisson arrivals) and the operator's overrides. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/sched_priv.h"
#include "core/sched/workload.h"

int sched_submit(SchedState *s, const SchedJobSpec *spec, Error *err)
{
    const AppModel *app = catalogue_find(s->cat, spec->model ? spec->model : "");
    if (!app) {
        char names[256];
        catalogue_names(s->cat, names, sizeof names);
        return error_set(err, "job '%s': model: expected one of %s, found '%s'",
                         spec->name ? spec->name : "", names, spec->model ? spec->model : "");
    }
    if (!spec->name || !*spec->name)
        return error_set(err, "job: name: expected a non-empty name");
    if (!(spec->submit_s >= 0) || !isfinite(spec->submit_s))
        return error_set(err, "job '%s': time: expected a time >= 0, found %g", spec->name,
                         spec->submit_s);
    if (s->n_jobs && spec->submit_s < s->jobs[s->n_jobs - 1].submit_s)
        return error_set(err,
                         "job '%s': time: expected jobs in submission order, found %g "
                         "after %g",
                         spec->name, spec->submit_s, s->jobs[s->n_jobs - 1].submit_s);
    if (spec->gpus < 0 || spec->batch_size < 0)
        return error_set(err, "job '%s': expected GPUs and batch >= 0, found %d and %d", spec->name,
                         spec->gpus, spec->batch_size);
    if (s->n_jobs == s->cap_jobs) {
        size_t cap = s->cap_jobs ? 2 * s->cap_jobs : 64;
        SJob *bigger = realloc(s->jobs, cap * sizeof *bigger);
        if (!bigger)
            return error_no_memory(err, "scheduler");
        s->jobs = bigger;
        s->cap_jobs = cap;
    }
    SJob *j = &s->jobs[s->n_jobs];
    memset(j, 0, sizeof *j);
    j->name = strdup(spec->name); /* the rest is allocated when the job arrives */
    if (!j->name)
        return error_no_memory(err, "scheduler: job '%s'", spec->name);
    j->app = app;
    j->submit_s = spec->submit_s;
    j->req_gpus = spec->gpus > 0 ? spec->gpus : 1;
    j->req_batch = spec->batch_size > 0 ? spec->batch_size : app->init_batch;
    j->start_s = j->finish_s = -1;
    s->n_jobs++;
    return 0;
}

int sched_load_workload(SchedState *s, const char *path, Error *err)
{
    SchedJobSpec *specs;
    size_t n;
    if (workload_load(path, s->cat, &specs, &n, err) < 0)
        return error_mark(err, ERROR_INPUT);
    size_t before = s->n_jobs;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (sched_submit(s, &specs[i], err) < 0)
            rc = error_prefix(err, "%s: row %zu", path, i + 1);
    if (rc < 0) /* nothing half-applied */
        while (s->n_jobs > before) {
            free(s->jobs[--s->n_jobs].name);
        }
    workload_free(specs, n);
    return rc < 0 ? error_mark(err, ERROR_INPUT) : 0;
}

static double rng_uniform(SchedState *s)
{
    /* splitmix64: deterministic for a seed, no global state */
    uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

int sched_add_poisson(SchedState *s, const char *model, double mean_s, int n, Error *err)
{
    if (!(mean_s > 0) || n < 1)
        return error_set(err,
                         "poisson arrivals: expected a mean > 0 and jobs >= 1, found %g "
                         "and %d",
                         mean_s, n);
    double t = s->n_jobs ? s->jobs[s->n_jobs - 1].submit_s : 0;
    for (int i = 0; i < n; i++) {
        t += -mean_s * log(rng_uniform(s));
        char name[64];
        snprintf(name, sizeof name, "%s-%d", model, i);
        if (sched_submit(s, &(SchedJobSpec){name, model, t, 1, 0}, err) < 0)
            return -1;
    }
    return 0;
}

int sched_pin(SchedState *s, size_t job, int gpus, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "pin: no job %zu", job);
    if (gpus < 0 || gpus > sched_usable_gpus(s))
        return error_set(err, "pin '%s': expected 0..%d GPUs (the usable cluster), found %d",
                         s->jobs[job].name, sched_usable_gpus(s), gpus);
    const SJob *j = &s->jobs[job];
    int most = sched_job_max_gpus(s, j);
    if (gpus > most)
        return error_set(err, "pin '%s': expected at most %d GPUs (%s), found %d", j->name, most,
                         j->ceiling > 0 && j->ceiling == most
                             ? "its ceiling: the cluster refused it a larger size"
                         : j->ceiling_nodes > 0
                             ? "what the nodes of its node ceiling hold: the cluster refused "
                               "it more nodes"
                             : "its batch limits",
                         gpus);
    s->jobs[job].pinned = gpus;
    return 0;
}

int sched_pause(SchedState *s, size_t job, int paused, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "pause: no job %zu", job);
    s->jobs[job].paused = paused != 0;
    return 0;
}

int sched_suspend(SchedState *s, size_t job, int suspended, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "suspend: no job %zu", job);
    s->jobs[job].suspended = suspended != 0;
    return 0;
}

int sched_evict(SchedState *s, size_t job, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "evict: no job %zu", job);
    SJob *j = &s->jobs[job];
    if (j->done || j->gpus == 0)
        return 0;
    /* logged first: out of memory leaves the job as it was */
    if (sched_log_event(s, SCHED_EV_STOP, job, j->gpus, 0) < 0)
        return error_no_memory(err, "scheduler");
    sched_release(s, job);
    j->gpus = 0;
    j->stall_left_s = 0;
    return 0;
}

int sched_abandon(SchedState *s, size_t job, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "abandon: no job %zu", job);
    if (s->jobs[job].done)
        return error_set(err, "abandon '%s': expected a job not done, found it done",
                         s->jobs[job].name);
    if (sched_evict(s, job, err) < 0) /* its GPUs back first: out of memory changes nothing */
        return -1;
    s->jobs[job].abandoned = 1;
    return 0;
}

int sched_complete(SchedState *s, size_t job, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "complete: no job %zu", job);
    SJob *j = &s->jobs[job];
    if (j->done || j->abandoned)
        return error_set(err, "complete '%s': expected a job not done and not failed, found it %s",
                         j->name, j->done ? "done" : "failed");
    if (j->submit_s > s->now_s)
        return error_set(err,
                         "complete '%s': expected a job that has arrived (at %g s), found "
                         "the time %g s",
                         j->name, j->submit_s, s->now_s);
    /* logged first: out of memory leaves the job as it was */
    if (sched_log_event(s, SCHED_EV_FINISH, job, j->gpus, 0) < 0)
        return error_no_memory(err, "scheduler");
    s->events[s->n_events - 1].by_itself = 1;
    j->done = 1;
    j->finish_s = s->now_s;
    sched_job_done(s, job);
    s->last_progress_s = s->now_s; /* its GPUs may let a job that waited run */
    return 0;
}

int sched_set_usable(SchedState *s, int usable, Error *err)
{
    if (usable == s->usable_gpus)
        return 0;
    SchedUsableStep *last = s->n_usable_log ? &s->usable_log[s->n_usable_log - 1] : NULL;
    if (last && last->at_s == s->now_s) { /* two changes at once: the later one counts */
        last->usable = usable;
    } else {
        if (s->n_usable_log == s->cap_usable_log) {
            size_t cap = s->cap_usable_log ? 2 * s->cap_usable_log : 8;
            SchedUsableStep *bigger = realloc(s->usable_log, cap * sizeof *bigger);
            if (!bigger)
                return error_no_memory(err, "scheduler");
            s->usable_log = bigger;
            s->cap_usable_log = cap;
        }
        s->usable_log[s->n_usable_log++] = (SchedUsableStep){s->now_s, usable};
    }
    s->usable_gpus = usable;
    return 0;
}

int sched_drain_node_by(SchedState *s, int node, int who, int drained, Error *err)
{
    if (node < 0 || node >= s->cfg.nodes)
        return error_set(err, "drain: expected a node in 0..%d, found %d", s->cfg.nodes - 1, node);
    int was = s->drained[node], now = drained ? was | who : was & ~who;
    if ((was != 0) != (now != 0) &&
        sched_set_usable(
            s, s->usable_gpus + (now ? -1 : 1) * (s->node_gpus[node] - s->held[node]), err) < 0)
        return -1;
    s->drained[node] = now;
    return 0;
}

int sched_drain_node(SchedState *s, int node, int drained, Error *err)
{
    return sched_drain_node_by(s, node, SCHED_DRAIN_OPERATOR, drained, err);
}

int sched_hold_gpus(SchedState *s, int node, int gpus, Error *err)
{
    if (node < 0 || node >= s->cfg.nodes)
        return error_set(err, "hold: expected a node in 0..%d, found %d", s->cfg.nodes - 1, node);
    if (gpus < 0 || gpus > s->node_gpus[node])
        return error_set(err, "hold on %s: expected 0..%d GPUs, found %d", s->node_names[node],
                         s->node_gpus[node], gpus);
    if (!s->drained[node] && sched_set_usable(s, s->usable_gpus + s->held[node] - gpus, err) < 0)
        return -1;
    s->held[node] = gpus;
    return 0;
}

int sched_report_progress(SchedState *s, size_t job, double epochs_done, double step_s, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "progress: no job %zu", job);
    SJob *j = &s->jobs[job];
    if (!(epochs_done >= 0) || !isfinite(epochs_done) || !(step_s >= 0))
        return error_set(err,
                         "progress '%s': expected epochs >= 0 and a step time >= 0, found "
                         "%g and %g",
                         j->name, epochs_done, step_s);
    if (j->done)
        return 0;
    const AppModel *a = j->app;
    int e = (int)floor(epochs_done);
    if (e >= a->epochs) {
        j->progress = app_total_progress(a);
        j->epoch = a->epochs;
        j->done = 1;
        j->finish_s = s->now_s;
        return sched_job_finish(s, job) < 0 ? error_no_memory(err, "scheduler") : 0;
    }
    double lo = a->epoch_progress[e], hi = a->epoch_progress[e + 1];
    s->last_progress_s = s->now_s;
    j->epoch = e;
    j->progress = lo + (epochs_done - e) * (hi - lo);
    if (step_s > 0 && j->gpus > 0)
        sched_job_observe(s, j, (int)j->n_slots, step_s);
    return 0;
}
