/* The scheduler state: jobs arrive, a policy re-allocates GPUs every interval, jobs stall on
 * each resize and otherwise progress at the measured rate of their placement (the Pollux
 * artifact's simulation, driven step by step). Queries and reports: core/sched/sched_report.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/sched/placement.h"
#include "core/sched/sched_priv.h"

#define EXPLORE_STAGE_S 150.0 /* the seed: 2.5 minutes at each of 1, 2, 4, 8 GPUs */
#define EXPLORE_STAGES 4
#define SPD_CACHE SCHED_SPEED_CACHE

void sched_config_default(SchedConfig *c)
{
    *c = (SchedConfig){.nodes = 16,
                       .gpus_per_node = 4,
                       .interval_s = 60,
                       .resize_cost_s = 30,
                       .policy = "doubling",
                       .seed = 1,
                       .node_names = NULL};
}

const char *const *sched_policy_names(void)
{
    return policy_names();
}

static int total_gpus(const SchedState *s)
{
    return s->cfg.nodes * s->cfg.gpus_per_node;
}

int sched_usable_gpus(const SchedState *s)
{
    int n = 0;
    for (int i = 0; i < s->cfg.nodes; i++)
        n += s->drained[i] ? 0 : s->cfg.gpus_per_node;
    return n;
}

SchedState *sched_new(const SchedConfig *cfg, const Catalogue *cat, Error *err)
{
    if (cfg->nodes < 1 || cfg->gpus_per_node < 1 || cfg->nodes > 1 << 20 || cfg->gpus_per_node > 64)
        return error_set(err, "scheduler: expected 1..1048576 nodes of 1..64 GPUs, found %d × %d",
                         cfg->nodes, cfg->gpus_per_node),
               NULL;
    if (!(cfg->interval_s > 0) || !(cfg->resize_cost_s >= 0))
        return error_set(err,
                         "scheduler: expected interval > 0 and resize cost >= 0, found "
                         "%g and %g",
                         cfg->interval_s, cfg->resize_cost_s),
               NULL;
    const Policy *pol = policy_find(cfg->policy ? cfg->policy : "");
    if (!pol) {
        char names[256] = "";
        for (const char *const *p = policy_names(); *p; p++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     p == policy_names() ? "" : ", ", *p);
        error_set(err, "scheduler: policy: expected one of %s, found '%s'", names,
                  cfg->policy ? cfg->policy : "");
        return NULL;
    }
    SchedState *s = calloc(1, sizeof *s);
    if (!s) {
        error_set(err, "scheduler: out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->cfg.node_names = NULL;
    s->cat = cat;
    s->pol = pol;
    s->rng = cfg->seed * 0x9E3779B97F4A7C15ull + 1;
    s->node_names = calloc((size_t)cfg->nodes, sizeof *s->node_names);
    s->drained = calloc((size_t)cfg->nodes, sizeof *s->drained);
    s->owner = malloc((size_t)cfg->nodes * (size_t)cfg->gpus_per_node * sizeof *s->owner);
    if (!s->node_names || !s->drained || !s->owner) {
        sched_free(s);
        error_set(err, "scheduler: out of memory");
        return NULL;
    }
    for (int i = 0; i < total_gpus(s); i++)
        s->owner[i] = -1;
    for (int i = 0; i < cfg->nodes; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "node%02d", i);
        s->node_names[i] = strdup(cfg->node_names ? cfg->node_names[i] : buf);
        if (!s->node_names[i]) {
            sched_free(s);
            error_set(err, "scheduler: out of memory");
            return NULL;
        }
    }
    return s;
}

int sched_set_policy(SchedState *s, const char *name, Error *err)
{
    const Policy *pol = policy_find(name ? name : "");
    if (!pol) {
        char names[256] = "";
        for (const char *const *p = policy_names(); *p; p++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     p == policy_names() ? "" : ", ", *p);
        return error_set(err, "unknown policy '%s': expected one of %s", name ? name : "", names);
    }
    s->pol = pol;
    s->cfg.policy = pol->name;
    return 0;
}

const char *sched_policy_name(const SchedState *s)
{
    return s->pol->name;
}

void sched_free(SchedState *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_jobs; i++) {
        SJob *j = &s->jobs[i];
        free(j->name), free(j->slots), free(j->resizes), free(j->obs), free(j->spd),
            free(j->spd_valid);
    }
    free(s->jobs);
    for (size_t i = 0; i < s->n_events; i++)
        free((void *)s->events[i].slots);
    free(s->events);
    if (s->node_names)
        for (int i = 0; i < s->cfg.nodes; i++)
            free(s->node_names[i]);
    free(s->node_names);
    free(s->drained);
    free(s->owner);
    free(s->decision_ms);
    free(s);
}

/* ---- estimates the policy may use ---- */

typedef struct {
    SchedState *s;
    const size_t *active;
} SpeedCtx;

static StepSource knowledge_source(const SchedState *s, const SJob *j)
{
    StepSource src = {j->app, NULL, s->cfg.gpus_per_node};
    switch (s->pol->knowledge) {
    case POLICY_KNOWS_PRECOMPUTE:
        src.model = &j->app->fitted;
        break;
    case POLICY_KNOWS_EXPLORE:
        /* Until its own fit exists the job is exploring and its size is forced; the
         * catalogue fit only fills the gap should a policy ask early. */
        src.model = j->own_ok ? &j->own : &j->app->fitted;
        break;
    default:
        break; /* oracle: the measured traces themselves */
    }
    return src;
}

int sched_job_max_gpus(const SchedState *s, const SJob *j)
{
    int m = jobmodel_max_gpus(j->app, s->pol->adaptive_batch ? 0 : j->req_batch);
    int cap = total_gpus(s);
    return m < cap ? m : cap;
}

static int job_config(const SchedState *s, SJob *j, int w, JobConfig *c, double *rate)
{
    StepSource src = knowledge_source(s, j);
    int exploring = s->pol->knowledge == POLICY_KNOWS_EXPLORE && j->explore_stage < EXPLORE_STAGES;
    if (s->pol->adaptive_batch && !exploring)
        return jobmodel_best(&src, w, j->epoch, c, rate);
    int batch = j->req_batch;
    /* An exploring job runs its owner's batch, grown when the stage's GPUs would get fewer
     * samples each than were ever measured (cifar10 at 128 on 8 GPUs). */
    if (exploring && batch < j->app->min_local * w)
        batch = j->app->min_local * w;
    if (jobmodel_fixed(j->app, batch, w, c) < 0)
        return -1;
    *rate = jobmodel_rate_packed(&src, c, w, j->epoch);
    return 0;
}

static double speed_cb(void *ud, size_t i, int w)
{
    SpeedCtx *ctx = ud;
    SchedState *s = ctx->s;
    SJob *j = &s->jobs[ctx->active[i]];
    if (w < 1 || w > sched_job_max_gpus(s, j))
        return 0;
    int k = -1;
    if ((w & (w - 1)) == 0) {
        k = 0;
        while ((1 << k) < w)
            k++;
        if (j->spd_valid[k] == s->gen)
            return j->spd[k];
    }
    JobConfig c;
    double rate = 0;
    if (job_config(s, j, w, &c, &rate) < 0)
        rate = 0;
    if (k >= 0) {
        j->spd[k] = rate;
        j->spd_valid[k] = s->gen;
    }
    return rate;
}

/* ---- events ---- */

static int log_event(SchedState *s, SchedEventKind kind, size_t job, int from, int to)
{
    if (s->n_events == s->cap_events) {
        size_t cap = s->cap_events ? 2 * s->cap_events : 256;
        SchedEvent *bigger = realloc(s->events, cap * sizeof *bigger);
        if (!bigger)
            return -1;
        s->events = bigger;
        s->cap_events = cap;
    }
    SJob *j = &s->jobs[job];
    SchedSlot *slots = NULL;
    size_t n = (kind == SCHED_EV_START || kind == SCHED_EV_RESIZE) ? j->n_slots : 0;
    if (n) {
        slots = malloc(n * sizeof *slots);
        if (!slots)
            return -1;
        memcpy(slots, j->slots, n * sizeof *slots);
    }
    s->events[s->n_events++] =
        (SchedEvent){s->now_s, kind, (int)job, from, to, to ? j->conf.batch : 0, n, slots};
    if (kind != SCHED_EV_FINISH) {
        if (j->n_resizes == j->cap_resizes) {
            size_t cap = j->cap_resizes ? 2 * j->cap_resizes : 8;
            SchedResize *bigger = realloc(j->resizes, cap * sizeof *bigger);
            if (!bigger)
                return -1;
            j->resizes = bigger;
            j->cap_resizes = cap;
        }
        j->resizes[j->n_resizes++] = (SchedResize){s->now_s, from, to};
    }
    return 0;
}

static void release(SchedState *s, size_t job)
{
    SJob *j = &s->jobs[job];
    int g = s->cfg.gpus_per_node;
    for (size_t k = 0; k < j->n_slots; k++) {
        int *row = s->owner + (size_t)j->slots[k].node * (size_t)g;
        for (int q = 0; q < g; q++)
            if (row[q] == (int)job)
                row[q] = -1;
    }
    j->n_slots = 0;
}

static int slot_cmp(const void *a, const void *b)
{
    return ((const SchedSlot *)a)->node - ((const SchedSlot *)b)->node;
}

static int on_drained(const SchedState *s, const SJob *j)
{
    for (size_t k = 0; k < j->n_slots; k++)
        if (s->drained[j->slots[k].node])
            return 1;
    return 0;
}

static int job_active(const SchedState *s, const SJob *j)
{
    return !j->done && j->submit_s <= s->now_s;
}

typedef struct {
    int want;
    size_t job;
} PlaceOrder;

static int place_cmp(const void *pa, const void *pb)
{
    const PlaceOrder *a = pa, *b = pb;
    if (a->want != b->want)
        return b->want - a->want;
    return a->job < b->job ? -1 : a->job > b->job;
}

static int delta_cmp(const void *pa, const void *pb)
{
    const PlaceOrder *a = pa, *b = pb; /* want = GPUs gained */
    if (a->want != b->want)
        return a->want - b->want;
    return a->job < b->job ? -1 : a->job > b->job;
}

static void explore_advance(SchedState *s, SJob *j)
{
    if (s->pol->knowledge != POLICY_KNOWS_EXPLORE || j->explore_stage >= EXPLORE_STAGES)
        return;
    if (j->explore_run_s >= EXPLORE_STAGE_S) {
        j->explore_stage++;
        j->explore_run_s = 0;
    }
    if (j->explore_stage < EXPLORE_STAGES && (1 << j->explore_stage) > sched_job_max_gpus(s, j))
        j->explore_stage = EXPLORE_STAGES;
}

/* Decision latency is measured in this thread's CPU time: on a shared machine wall-clock
 * time mostly measures the neighbours. */
static double cpu_now_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return clock_now_s();
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int decide(SchedState *s, Error *err)
{
    double t0 = cpu_now_s();
    s->gen++;
    size_t n = s->n_jobs, m = 0;
    size_t *active = malloc((n ? n : 1) * sizeof *active);
    PolicyJob *pj = malloc((n ? n : 1) * sizeof *pj);
    int *target = malloc((n ? n : 1) * sizeof *target);
    PlaceOrder *order = malloc((n ? n : 1) * sizeof *order);
    PlaceOrder *pending = malloc((n ? n : 1) * sizeof *pending);
    size_t npend = 0;
    int *nodes = malloc((size_t)s->cfg.nodes * sizeof *nodes);
    int *gp = malloc((size_t)s->cfg.nodes * sizeof *gp);
    int *freeg = malloc((size_t)s->cfg.nodes * sizeof *freeg);
    int rc = 0;
    if (!active || !pj || !target || !order || !pending || !nodes || !gp || !freeg) {
        rc = error_set(err, "scheduler: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        SJob *j = &s->jobs[i];
        if (!job_active(s, j))
            continue;
        if (j->paused) {
            if (j->gpus > 0) {
                int from = j->gpus;
                release(s, i);
                j->gpus = 0;
                j->stall_left_s = 0;
                if (log_event(s, SCHED_EV_STOP, i, from, 0) < 0)
                    rc = error_set(err, "scheduler: out of memory");
            }
            continue;
        }
        explore_advance(s, j);
        int explore =
            s->pol->knowledge == POLICY_KNOWS_EXPLORE && j->explore_stage < EXPLORE_STAGES;
        active[m] = i;
        pj[m] = (PolicyJob){.submit_s = j->submit_s,
                            .attained_gpu_s = j->gpu_s,
                            .requested_gpus = j->req_gpus,
                            .cur_gpus = j->gpus,
                            .pinned = j->pinned,
                            .max_gpus = sched_job_max_gpus(s, j),
                            .explore_gpus = explore ? 1 << j->explore_stage : 0,
                            .remaining = app_total_progress(j->app) - j->progress};
        m++;
    }
    SpeedCtx ctx = {s, active};
    PolicyInput in = {pj, m, sched_usable_gpus(s), s->now_s, s->cfg.resize_cost_s, speed_cb, &ctx};
    if (rc == 0 && policy_decide(s->pol, &in, target) < 0)
        rc = error_set(err, "scheduler: out of memory in policy %s", s->pol->name);
    if (rc < 0)
        goto out;

    /* Jobs whose size changes (or that sit on a drained node) give their GPUs back. */
    int G = s->cfg.gpus_per_node;
    size_t no = 0;
    for (size_t k = 0; k < m; k++) {
        SJob *j = &s->jobs[active[k]];
        int moved = j->gpus != target[k] || (j->gpus && on_drained(s, j));
        if (moved && j->gpus)
            release(s, active[k]);
        if (moved && target[k] > 0)
            order[no++] = (PlaceOrder){target[k], k};
        if (moved && target[k] == 0 && j->gpus > 0) {
            int from = j->gpus;
            j->gpus = 0;
            j->stall_left_s = 0;
            if (log_event(s, SCHED_EV_STOP, active[k], from, 0) < 0)
                rc = error_set(err, "scheduler: out of memory");
        }
    }
    for (int i = 0; i < s->cfg.nodes; i++) {
        int f = 0;
        for (int q = 0; q < G; q++)
            f += s->owner[(size_t)i * (size_t)G + (size_t)q] < 0;
        freeg[i] = s->drained[i] ? 0 : f;
    }
    PlacementPool pool;
    if (rc == 0 && placement_pool_init(&pool, s->cfg.nodes, G, freeg) < 0)
        rc = error_set(err, "scheduler: out of memory");
    if (rc < 0)
        goto out;
    qsort(order, no, sizeof *order, place_cmp);
    for (size_t q = 0; q < no && rc == 0; q++) {
        size_t k = order[q].job, ji = active[k];
        SJob *j = &s->jobs[ji];
        int from = j->gpus;
        int ns = placement_take(&pool, order[q].want, nodes, gp, s->cfg.nodes);
        JobConfig conf;
        double rate;
        if (ns < 0 || job_config(s, j, order[q].want, &conf, &rate) < 0) {
            j->gpus = 0; /* cannot happen while policies respect capacity and limits */
            if (from && log_event(s, SCHED_EV_STOP, ji, from, 0) < 0)
                rc = error_set(err, "scheduler: out of memory");
            continue;
        }
        j->n_slots = (size_t)ns;
        for (int t = 0; t < ns; t++) {
            j->slots[t] = (SchedSlot){nodes[t], gp[t]};
            int *row = s->owner + (size_t)nodes[t] * (size_t)G, left = gp[t];
            for (int g = 0; g < G && left > 0; g++)
                if (row[g] < 0) {
                    row[g] = (int)ji;
                    left--;
                }
        }
        qsort(j->slots, j->n_slots, sizeof *j->slots, slot_cmp);
        j->gpus = order[q].want;
        j->conf = conf;
        j->stall_left_s = s->cfg.resize_cost_s;
        if (j->start_s < 0)
            j->start_s = s->now_s;
        pending[npend++] = (PlaceOrder){j->gpus - from, ji};
    }
    placement_pool_free(&pool);
    /* Log shrinks before grows, so that a replay of the stream never holds more GPUs than
     * the cluster has, even between the events of one decision. */
    qsort(pending, npend, sizeof *pending, delta_cmp);
    for (size_t q = 0; q < npend && rc == 0; q++) {
        SJob *j = &s->jobs[pending[q].job];
        int from = j->gpus - pending[q].want;
        if (log_event(s, from ? SCHED_EV_RESIZE : SCHED_EV_START, pending[q].job, from, j->gpus) <
            0)
            rc = error_set(err, "scheduler: out of memory");
    }
    /* Unmoved jobs may still change batch (adaptive policies, between steps; no restart). */
    for (size_t k = 0; k < m && rc == 0; k++) {
        SJob *j = &s->jobs[active[k]];
        JobConfig conf;
        double rate;
        if (j->gpus > 0 && s->pol->adaptive_batch && job_config(s, j, j->gpus, &conf, &rate) == 0)
            j->conf = conf;
    }
out:
    if (rc == 0) {
        if (s->n_dec == s->cap_dec) {
            size_t cap = s->cap_dec ? 2 * s->cap_dec : 256;
            double *bigger = realloc(s->decision_ms, cap * sizeof *bigger);
            if (bigger) {
                s->decision_ms = bigger;
                s->cap_dec = cap;
            }
        }
        if (s->n_dec < s->cap_dec)
            s->decision_ms[s->n_dec++] = (cpu_now_s() - t0) * 1000.0;
    }
    free(active), free(pj), free(target), free(order), free(pending), free(nodes), free(gp),
        free(freeg);
    return rc;
}

/* ---- simulation between decisions ---- */

void sched_job_observe(SJob *j, int nodes, double step_s)
{
    if (j->n_obs && j->obs[j->n_obs - 1].gpus == j->gpus && j->obs[j->n_obs - 1].nodes == nodes &&
        j->obs[j->n_obs - 1].local_batch == j->conf.atomic)
        return;
    if (j->n_obs == j->cap_obs) {
        size_t cap = j->cap_obs ? 2 * j->cap_obs : 8;
        TputPoint *bigger = realloc(j->obs, cap * sizeof *bigger);
        if (!bigger)
            return;
        j->obs = bigger;
        j->cap_obs = cap;
    }
    j->obs[j->n_obs++] = (TputPoint){j->gpus, nodes, j->conf.atomic, step_s};
    Error e;
    if (j->n_obs >= 2 && tputmodel_fit_best(&j->own, j->obs, j->n_obs, &e) == 0)
        j->own_ok = 1;
}

int sched_job_finish(SchedState *s, size_t i)
{
    SJob *j = &s->jobs[i];
    double now = s->now_s;
    s->now_s = j->finish_s;
    int from = j->gpus;
    release(s, i);
    j->gpus = 0;
    j->stall_left_s = 0;
    int rc = log_event(s, SCHED_EV_FINISH, i, from, 0);
    s->now_s = now;
    return rc;
}

static int event_time_cmp(const void *pa, const void *pb)
{
    const SchedEvent *a = pa, *b = pb;
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? -1 : 1;
    return a->job - b->job;
}

static int step_jobs(SchedState *s, double dt, Error *err)
{
    double held = 0;
    size_t first_event = s->n_events;
    int per_node[1024];
    for (size_t i = 0; i < s->n_jobs; i++) {
        SJob *j = &s->jobs[i];
        if (j->done || j->gpus == 0)
            continue;
        double t = dt, d = fmin(j->stall_left_s, t);
        j->stall_left_s -= d;
        j->lost_gpu_s += d * j->gpus;
        s->lost_gpu_s += d * j->gpus;
        t -= d;
        double used = d;
        int nn = 0;
        for (size_t k = 0; k < j->n_slots && nn < 1024; k++)
            per_node[nn++] = j->slots[k].gpus;
        StepSource truth = {j->app, NULL, s->cfg.gpus_per_node};
        if (t > 0) {
            double step_s;
            jobmodel_rate(&truth, &j->conf, per_node, nn, j->epoch, &step_s);
            sched_job_observe(j, nn, step_s);
            j->explore_run_s += t;
        }
        while (t > 0 && !j->done) {
            double rate = jobmodel_rate(&truth, &j->conf, per_node, nn, j->epoch, NULL);
            if (!(rate > 0)) {
                used += t;
                break;
            }
            double next = j->app->epoch_progress[j->epoch + 1];
            if (j->progress + rate * t < next) {
                j->progress += rate * t;
                used += t;
                t = 0;
            } else {
                double dd = (next - j->progress) / rate;
                j->progress = next;
                j->epoch++;
                used += dd;
                t -= dd;
                if (j->epoch >= j->app->epochs) {
                    j->done = 1;
                    j->finish_s = s->now_s + used;
                }
            }
        }
        j->gpu_s += used * j->gpus;
        held += used * j->gpus;
        if (j->done && sched_job_finish(s, i) < 0)
            return error_set(err, "scheduler: out of memory");
    }
    /* Jobs finish mid-interval in any order of index: keep the log in time order. */
    if (s->n_events > first_event) /* no log yet: events may still be NULL */
        qsort(s->events + first_event, s->n_events - first_event, sizeof *s->events,
              event_time_cmp);
    s->held_gpu_s += held;
    s->idle_gpu_s += total_gpus(s) * dt - held;
    return 0;
}

int sched_advance(SchedState *s, double dt_s, Error *err)
{
    if (!(dt_s >= 0) || !isfinite(dt_s))
        return error_set(err, "scheduler: advance: expected a time step >= 0, found %g", dt_s);
    double end = s->now_s + dt_s;
    while (s->now_s < end - 1e-9) {
        if (s->now_s >= s->next_decision_s - 1e-9) {
            if (decide(s, err) < 0)
                return -1;
            s->next_decision_s += s->cfg.interval_s;
        }
        double to = fmin(end, s->next_decision_s);
        if (step_jobs(s, to - s->now_s, err) < 0)
            return -1;
        s->now_s = to;
    }
    return 0;
}

int sched_finished(const SchedState *s)
{
    for (size_t i = 0; i < s->n_jobs; i++)
        if (!s->jobs[i].done)
            return 0;
    return 1;
}

int sched_run(SchedState *s, double max_s, Error *err)
{
    while (!sched_finished(s) && s->now_s < max_s)
        if (sched_advance(s, s->cfg.interval_s, err) < 0)
            return -1;
    return 0;
}

double sched_now(const SchedState *s)
{
    return s->now_s;
}
