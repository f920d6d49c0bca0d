/* The scheduler state: jobs arrive, a policy re-allocates GPUs every interval, jobs stall on
 * each resize and otherwise progress at the measured rate of their placement (the Pollux
 * artifact's simulation, driven step by step). Queries and reports: core/sched/sched_report.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/sched_priv.h"

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

const char *sched_policy_names_joined(void)
{
    return policy_names_joined();
}

int sched_usable_gpus(const SchedState *s)
{
    return s->usable_gpus;
}

int sched_node_available(const SchedState *s, int node)
{
    int free = s->node_free[node] - s->held[node];
    return s->drained[node] || free < 0 ? 0 : free;
}

static int policy_error(Error *err, const char *prefix, const char *name)
{
    return error_set(err, "%sunknown policy '%s': expected one of %s", prefix,
                     name ? name : "", policy_names_joined());
}

/* The nodes as groups: the configuration's own, or one group of nodes × gpus_per_node. */
static int config_groups(const SchedConfig *cfg, const SchedNodeGroup **groups, size_t *n,
                         SchedNodeGroup *uniform, Error *err)
{
    if (!cfg->n_groups) {
        *uniform = (SchedNodeGroup){NULL, cfg->nodes, cfg->gpus_per_node, 1.0};
        *groups = uniform;
        *n = 1;
    } else {
        *groups = cfg->groups;
        *n = cfg->n_groups;
    }
    if (!cfg->n_groups && (cfg->nodes < 1 || cfg->gpus_per_node < 1 || cfg->nodes > 1 << 20 ||
                           cfg->gpus_per_node > 64))
        return error_set(err, "scheduler: expected 1..1048576 nodes of 1..64 GPUs, found %d × %d",
                         cfg->nodes, cfg->gpus_per_node);
    long nodes = 0;
    for (size_t g = 0; g < *n; g++) {
        const SchedNodeGroup *ng = &(*groups)[g];
        if (ng->nodes < 1 || ng->gpus_per_node < 1 || ng->gpus_per_node > 64)
            return error_set(err,
                             "scheduler: node group %zu: expected 1..1048576 nodes of 1..64 "
                             "GPUs, found %d × %d",
                             g + 1, ng->nodes, ng->gpus_per_node);
        if (!(ng->speed > 0) || !isfinite(ng->speed))
            return error_set(err, "scheduler: node group %zu: expected a speed > 0, found %g",
                             g + 1, ng->speed);
        nodes += ng->nodes;
    }
    if (nodes > 1 << 20)
        return error_set(err, "scheduler: expected at most 1048576 nodes, found %ld", nodes);
    return 0;
}

static int nodes_init(SchedState *s, const SchedNodeGroup *groups, size_t n_groups,
                      const char *const *names)
{
    int n = s->cfg.nodes;
    s->node_names = calloc((size_t)n, sizeof *s->node_names);
    s->drained = calloc((size_t)n, sizeof *s->drained);
    s->held = calloc((size_t)n, sizeof *s->held);
    s->node_gpus = malloc((size_t)n * sizeof *s->node_gpus);
    s->node_off = malloc((size_t)n * sizeof *s->node_off);
    s->node_free = malloc((size_t)n * sizeof *s->node_free);
    s->node_speed = malloc((size_t)n * sizeof *s->node_speed);
    s->node_group = malloc((size_t)n * sizeof *s->node_group);
    s->node_class = malloc((size_t)n * sizeof *s->node_class);
    s->class_speed = malloc(n_groups * sizeof *s->class_speed);
    s->group_types = calloc(n_groups, sizeof *s->group_types);
    if (!s->node_names || !s->drained || !s->held || !s->node_gpus || !s->node_off || !s->node_free ||
        !s->node_speed || !s->node_group || !s->node_class || !s->class_speed || !s->group_types)
        return -1;
    s->n_groups = n_groups;
    int i = 0;
    size_t off = 0;
    for (size_t g = 0; g < n_groups; g++) {
        s->group_types[g] = strdup(groups[g].type ? groups[g].type : "");
        if (!s->group_types[g])
            return -1;
        for (int k = 0; k < groups[g].nodes; k++, i++) {
            s->node_gpus[i] = s->node_free[i] = groups[g].gpus_per_node;
            s->node_off[i] = off;
            s->node_speed[i] = groups[g].speed;
            s->node_group[i] = (int)g;
            off += (size_t)groups[g].gpus_per_node;
            if (groups[g].gpus_per_node > s->max_node_gpus)
                s->max_node_gpus = groups[g].gpus_per_node;
        }
    }
    s->total_gpus = s->usable_gpus = s->start_gpus = (int)off;
    /* Classes: a node's rank among the distinct speeds, fastest first. */
    for (i = 0; i < n; i++) {
        int rank = 0;
        for (size_t g = 0; g < n_groups; g++) {
            int seen = 0; /* count each faster speed once */
            for (size_t h = 0; h < g; h++)
                seen |= groups[h].speed == groups[g].speed;
            rank += !seen && groups[g].speed > s->node_speed[i];
        }
        s->node_class[i] = rank;
        s->class_speed[rank] = s->node_speed[i];
        if (rank + 1 > s->n_classes)
            s->n_classes = rank + 1;
    }
    s->owner = malloc(off * sizeof *s->owner);
    if (!s->owner)
        return -1;
    for (size_t q = 0; q < off; q++)
        s->owner[q] = -1;
    for (i = 0; i < n; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "node%02d", i);
        s->node_names[i] = strdup(names ? names[i] : buf);
        if (!s->node_names[i])
            return -1;
    }
    return 0;
}

SchedState *sched_new(const SchedConfig *cfg, const Catalogue *cat, Error *err)
{
    SchedNodeGroup uniform;
    const SchedNodeGroup *groups;
    size_t n_groups;
    if (config_groups(cfg, &groups, &n_groups, &uniform, err) < 0)
        return NULL;
    if (!(cfg->interval_s > 0) || !(cfg->resize_cost_s >= 0))
        return error_set(err,
                         "scheduler: expected interval > 0 and resize cost >= 0, found "
                         "%g and %g",
                         cfg->interval_s, cfg->resize_cost_s),
               NULL;
    const Policy *pol = policy_find(cfg->policy ? cfg->policy : "");
    if (!pol) {
        policy_error(err, "scheduler: ", cfg->policy);
        return NULL;
    }
    SchedState *s = calloc(1, sizeof *s);
    if (!s) {
        error_no_memory(err, "scheduler");
        return NULL;
    }
    s->cfg = *cfg;
    s->cfg.node_names = NULL;
    s->cfg.groups = NULL;
    s->cfg.nodes = 0;
    for (size_t g = 0; g < n_groups; g++)
        s->cfg.nodes += groups[g].nodes;
    s->cfg.gpus_per_node = groups[0].gpus_per_node;
    s->cat = cat;
    s->pol = pol;
    s->rng = cfg->seed * 0x9E3779B97F4A7C15ull + 1;
    if (nodes_init(s, groups, n_groups, cfg->node_names) < 0) {
        sched_free(s);
        error_no_memory(err, "scheduler");
        return NULL;
    }
    return s;
}

/* Fits the job's own model on each observation not yet covered, one fit per observation as
 * they came, so a fit caught up late ends as one made at every observation would. */
static void own_refit(SJob *j)
{
    Error e;
    for (size_t k = j->own_fitted + 1 > 2 ? j->own_fitted + 1 : 2; k <= j->n_obs; k++) {
        j->own_fits++; /* even a failed fit may have written `own` */
        if (tputmodel_fit_best(&j->own, j->obs, k, &e) == 0)
            j->own_ok = 1;
    }
    j->own_fitted = j->n_obs;
}

int sched_set_policy(SchedState *s, const char *name, Error *err)
{
    const Policy *pol = policy_find(name ? name : "");
    if (!pol)
        return policy_error(err, "", name);
    s->pol = pol;
    s->cfg.policy = pol->name;
    if (pol->knowledge == POLICY_KNOWS_EXPLORE) /* its estimates read the own fits */
        for (size_t q = 0; q < s->n_live; q++)
            own_refit(&s->jobs[s->live[q]]);
    return 0;
}

const char *sched_policy_name(const SchedState *s)
{
    return s->pol->name;
}

void sched_job_retire(SJob *j)
{
    free(j->slots), free(j->obs), free(j->spd), free(j->spd_valid);
    free(j->spd_conf);
    j->slots = NULL;
    j->obs = NULL;
    j->spd = NULL;
    j->spd_valid = NULL;
    j->spd_conf = NULL;
    j->n_slots = j->cap_slots = j->n_obs = j->cap_obs = j->own_fitted = 0;
}

void sched_free(SchedState *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_jobs; i++) {
        sched_job_retire(&s->jobs[i]);
        free(s->jobs[i].name), free(s->jobs[i].resizes);
    }
    free(s->jobs);
    free(s->live);
    for (size_t i = 0; i < s->n_events; i++)
        free((void *)s->events[i].slots);
    free(s->events);
    if (s->node_names)
        for (int i = 0; i < s->cfg.nodes; i++)
            free(s->node_names[i]);
    if (s->group_types)
        for (size_t g = 0; g < s->n_groups; g++)
            free(s->group_types[g]);
    free(s->group_types);
    free(s->node_names), free(s->drained), free(s->held), free(s->node_gpus), free(s->node_off);
    free(s->node_free), free(s->node_speed), free(s->node_group), free(s->node_class);
    free(s->class_speed);
    free(s->owner);
    free(s->usable_log);
    free(s->decision_ms);
    free(s);
}

/* The usable GPUs, not the cluster's total: a job that asks for more than a drain or
 * others' holds leave runs at what is left, and exploration skips the stages that do not
 * fit, instead of waiting for GPUs that may never come back. A ceiling (sched_set_ceiling)
 * bounds it the same way, so every policy, pin and exploration stage stays under it, and a
 * node ceiling by what its nodes hold that others do not (sched_set_node_ceiling). */
int sched_job_max_gpus(const SchedState *s, const SJob *j)
{
    int m = jobmodel_max_gpus(j->app, s->pol->adaptive_batch ? 0 : j->req_batch);
    if (j->ceiling > 0 && j->ceiling < m)
        m = j->ceiling;
    if (j->ceiling_nodes > 0) {
        int fit = sched_job_node_ceiling_gpus(s, j);
        m = fit < m ? fit : m;
    }
    return m < s->usable_gpus ? m : s->usable_gpus;
}

/* ---- events ---- */

int sched_log_event(SchedState *s, SchedEventKind kind, size_t job, int from, int to)
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
    /* every allocation before the event is appended: out of memory logs nothing, so the
     * caller can leave the job as it was (sched_evict) and no event is enacted alone */
    if (kind != SCHED_EV_FINISH && j->n_resizes == j->cap_resizes) {
        size_t cap = j->cap_resizes ? 2 * j->cap_resizes : 8;
        SchedResize *bigger = realloc(j->resizes, cap * sizeof *bigger);
        if (!bigger)
            return -1;
        j->resizes = bigger;
        j->cap_resizes = cap;
    }
    SchedSlot *slots = NULL;
    size_t n = (kind == SCHED_EV_START || kind == SCHED_EV_RESIZE) ? j->n_slots : 0;
    if (n) {
        slots = malloc(n * sizeof *slots);
        if (!slots)
            return -1;
        memcpy(slots, j->slots, n * sizeof *slots);
    }
    s->events[s->n_events++] = (SchedEvent){.time_s = s->now_s,
                                            .kind = kind,
                                            .job = (int)job,
                                            .gpus_from = from,
                                            .gpus_to = to,
                                            .batch_size = to ? j->conf.batch : 0,
                                            .n_slots = n,
                                            .slots = slots};
    if (kind != SCHED_EV_FINISH) {
        j->resizes[j->n_resizes++] = (SchedResize){s->now_s, from, to};
        j->n_allocs += to > 0;
    }
    return 0;
}

void sched_release(SchedState *s, size_t job)
{
    SJob *j = &s->jobs[job];
    for (size_t k = 0; k < j->n_slots; k++) {
        int node = j->slots[k].node;
        int *row = s->owner + s->node_off[node];
        for (int q = 0; q < s->node_gpus[node]; q++)
            if (row[q] == (int)job)
                row[q] = -1;
        s->node_free[node] += j->slots[k].gpus;
    }
    j->n_slots = 0;
}

/* ---- simulation between decisions ---- */

/* Only an exploring policy reads the own fit (sched_decide.c, knowledge_source). Under any
 * other the observations are kept and the fit waits: sched_set_policy catches it up when
 * such a policy takes over. Fitting at every new placement under `doubling` was about 10% of
 * a run (perf on bench/schedscale, callgrind on schedule) for a model nobody read. The old way
 * (sched_speed_per_decision) fits at every observation, for the tests to compare. */
static int own_fit_read(const SchedState *s)
{
    return s->pol->knowledge == POLICY_KNOWS_EXPLORE || s->speed_per_decision;
}

void sched_job_observe(const SchedState *s, SJob *j, int nodes, double step_s)
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
    if (own_fit_read(s))
        own_refit(j);
}

void sched_job_done(SchedState *s, size_t i)
{
    SJob *j = &s->jobs[i];
    sched_release(s, i);
    j->gpus = 0;
    j->stall_left_s = 0;
    sched_job_retire(j);
    s->n_done++;
}

int sched_job_finish(SchedState *s, size_t i)
{
    SJob *j = &s->jobs[i];
    double now = s->now_s;
    s->now_s = j->finish_s;
    /* a finish carries no placement: logged before the release, it reads the same */
    int rc = sched_log_event(s, SCHED_EV_FINISH, i, j->gpus, 0);
    s->now_s = now;
    sched_job_done(s, i);
    return rc;
}

static int event_time_cmp(const void *pa, const void *pb)
{
    const SchedEvent *a = pa, *b = pb;
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? -1 : 1;
    return a->job - b->job;
}

/* GPUs our jobs hold that are not usable now: on a drained node, or beyond what others leave
 * on a node (a drain or a hold our jobs leave only at the next decision). */
static int over_gpus(const SchedState *s)
{
    int over = 0;
    if (s->usable_gpus == s->total_gpus)
        return 0; /* no drain, no hold */
    for (int n = 0; n < s->cfg.nodes; n++) {
        int ours = s->node_gpus[n] - s->node_free[n];
        int excess = s->drained[n] ? ours : ours + s->held[n] - s->node_gpus[n];
        over += excess > 0 ? excess : 0;
    }
    return over;
}

static int step_jobs(SchedState *s, double dt, Error *err)
{
    double held = 0;
    /* counted as usable while held: a job finishing in the step only lowers it */
    s->over_gpu_s += over_gpus(s) * dt;
    size_t first_event = s->n_events;
    int per_node[1024];
    for (size_t q = 0; q < s->n_live; q++) {
        size_t i = s->live[q];
        SJob *j = &s->jobs[i];
        if (j->done || j->gpus == 0)
            continue;
        if (j->suspended) { /* its GPUs held, no work done (sched_suspend) */
            j->gpu_s += dt * j->gpus;
            held += dt * j->gpus;
            continue;
        }
        double t = dt, d = fmin(j->stall_left_s, t);
        j->stall_left_s -= d;
        j->lost_gpu_s += d * j->gpus;
        *(j->stall_is_start ? &s->start_lost_gpu_s : &s->lost_gpu_s) += d * j->gpus;
        t -= d;
        double used = d;
        int nn = 0;
        for (size_t k = 0; k < j->n_slots && nn < 1024; k++)
            per_node[nn++] = j->slots[k].gpus;
        double progress_before = j->progress;
        StepSource truth = {j->app, NULL, s->max_node_gpus};
        double speed = sched_slots_speed(s, j->slots, j->n_slots);
        if (t > 0) {
            /* the micro-step, what the own fit models (jobmodel.h), not the whole step */
            double micro_s;
            jobmodel_rate(&truth, &j->conf, per_node, nn, j->epoch, &micro_s);
            sched_job_observe(s, j, nn, micro_s / speed);
            j->explore_run_s += t;
        }
        while (t > 0 && !j->done) {
            double rate = speed * jobmodel_rate(&truth, &j->conf, per_node, nn, j->epoch, NULL);
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
        if (j->progress > progress_before)
            s->last_progress_s = fmax(s->last_progress_s, s->now_s + used);
        j->gpu_s += used * j->gpus;
        held += used * j->gpus;
        if (j->done && sched_job_finish(s, i) < 0)
            return error_no_memory(err, "scheduler");
    }
    /* Jobs finish mid-interval in any order of index: keep the log in time order. */
    if (s->n_events > first_event) /* no log yet: events may still be NULL */
        qsort(s->events + first_event, s->n_events - first_event, sizeof *s->events,
              event_time_cmp);
    s->held_gpu_s += held;
    s->idle_gpu_s += s->total_gpus * dt - held;
    return 0;
}

int sched_advance(SchedState *s, double dt_s, Error *err)
{
    if (!(dt_s >= 0) || !isfinite(dt_s))
        return error_set(err, "scheduler: advance: expected a time step >= 0, found %g", dt_s);
    double end = s->now_s + dt_s;
    while (s->now_s < end - 1e-9) {
        if (s->now_s >= s->next_decision_s - 1e-9) {
            /* the decision's own time, not a hair before it that a sum of wall-clock steps
             * can leave: a job due then arrives at it */
            s->now_s = fmax(s->now_s, s->next_decision_s);
            if (sched_decide(s, err) < 0)
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
    return s->n_done == s->n_jobs;
}

double sched_slots_speed(const SchedState *s, const SchedSlot *slots, size_t n)
{
    /* A ring step waits for its slowest GPU. */
    double v = n ? INFINITY : 1.0;
    for (size_t k = 0; k < n; k++)
        v = fmin(v, s->node_speed[slots[k].node]);
    return v;
}

/* How long a run may go without any job progressing, finishing or arriving before it is
 * called stuck: a day of simulated time, or ten decisions when those are rarer. Any job
 * that holds GPUs progresses within one interval after its stall, so a quiet day means no
 * decision will ever let one run (a pause nobody lifts, a cluster drained whole). */
#define SCHED_STUCK_S 86400.0

int sched_run(SchedState *s, double max_s, Error *err)
{
    double patience_s = fmax(SCHED_STUCK_S, 10 * s->cfg.interval_s);
    while (!sched_finished(s) && s->now_s < max_s) {
        if (sched_advance(s, s->cfg.interval_s, err) < 0)
            return -1;
        int none_to_arrive = s->next_arrival == s->n_jobs;
        if (!sched_finished(s) && none_to_arrive && s->now_s - s->last_progress_s >= patience_s)
            return sched_stuck_error(s, err);
    }
    return 0;
}

double sched_now(const SchedState *s)
{
    return s->now_s;
}
