/* One scheduling decision, phase by phase: admit arrivals, show the live jobs to the policy,
 * give back the GPUs of jobs whose size changes, place them (sched_place.c), log the changes
 * (shrinks before grows) and let unmoved jobs retune their batch. Only live jobs are visited. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/sched/sched_keep.h"
#include "core/sched/sched_place.h"
#include "core/sched/sched_priv.h"

#define EXPLORE_STAGE_S 150.0 /* the seed: 2.5 minutes at each of 1, 2, 4, 8 GPUs */

/* ---- estimates the policy may use ---- */

static StepSource knowledge_source(const SchedState *s, const SJob *j)
{
    StepSource src = {j->app, NULL, s->max_node_gpus};
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

static int exploring(const SchedState *s, const SJob *j)
{
    return s->pol->knowledge == POLICY_KNOWS_EXPLORE && j->explore_stage < SCHED_EXPLORE_STAGES;
}

int sched_job_config(const SchedState *s, SJob *j, int w, JobConfig *c, double *rate)
{
    StepSource src = knowledge_source(s, j);
    if (s->pol->adaptive_batch && !exploring(s, j))
        return jobmodel_best(&src, w, j->epoch, c, rate);
    int batch = j->req_batch;
    /* An exploring job runs its owner's batch, grown when the stage's GPUs would get fewer
     * samples each than were ever measured (cifar10 at 128 on 8 GPUs). */
    if (exploring(s, j) && batch < j->app->min_local * w)
        batch = j->app->min_local * w;
    if (jobmodel_fixed(j->app, batch, w, c) < 0)
        return -1;
    *rate = jobmodel_rate_packed(&src, c, w, j->epoch);
    return 0;
}

typedef struct {
    SchedState *s;
    const size_t *active;
    const PolicyJob *pj; /* max_gpus as gather counted it: the state does not move meanwhile */
} SpeedCtx;

/* A job's speed on w GPUs depends on w and, through job_config, only on its epoch (the
 * gain), its exploration stage, its own throughput fit, the largest node (packing) and the
 * policy (sched_set_policy: knowledge, batch choice); its model and owner's batch never
 * change. The cache is dropped when one of these moves, not at every decision: a queue of
 * thousands of waiting jobs, whose speeds cannot change, was re-estimated at every decision
 * (jobmodel_best: 11 batches each), which made a long trace quadratic in its jobs
 * (bench/schedscale.c, docs/benchmarks.md). */
static void speed_cache_check(const SchedState *s, SJob *j)
{
    if ((!s->speed_per_decision || j->spd_gen == s->gen) && j->spd_epoch == j->epoch &&
        j->spd_stage == j->explore_stage && j->spd_fits == j->own_fits &&
        j->spd_node_gpus == s->max_node_gpus && j->spd_pol == s->pol)
        return;
    memset(j->spd_valid, 0, SCHED_SPEED_CACHE * sizeof *j->spd_valid);
    j->spd_epoch = j->epoch;
    j->spd_stage = j->explore_stage;
    j->spd_fits = j->own_fits;
    j->spd_node_gpus = s->max_node_gpus;
    j->spd_gen = s->gen;
    j->spd_pol = s->pol;
}

void sched_speed_per_decision(SchedState *s, int on)
{
    s->speed_per_decision = on;
}

/* job_config through the cache (powers of two only): -1 when w GPUs cannot run the job. */
static int cached_config(const SchedState *s, SJob *j, int w, JobConfig *c, double *rate)
{
    speed_cache_check(s, j);
    int k = -1;
    if ((w & (w - 1)) == 0) {
        k = 0;
        while ((1 << k) < w)
            k++;
        if (j->spd_valid[k]) {
            *c = j->spd_conf[k];
            *rate = j->spd[k];
            return j->spd_valid[k] > 0 ? 0 : -1;
        }
    }
    int rc = sched_job_config(s, j, w, c, rate);
    if (rc < 0)
        *rate = 0;
    if (k >= 0) {
        j->spd[k] = *rate;
        j->spd_conf[k] = *c;
        j->spd_valid[k] = rc < 0 ? -1 : 1;
    }
    return rc;
}

static double speed_cb(void *ud, size_t i, int w)
{
    SpeedCtx *ctx = ud;
    SchedState *s = ctx->s;
    SJob *j = &s->jobs[ctx->active[i]];
    /* not sched_job_max_gpus: under a node ceiling it allocates and scans the nodes, and
     * a policy asks many sizes of each job at every decision */
    if (w < 1 || w > ctx->pj[i].max_gpus)
        return 0;
    JobConfig c = {0};
    double rate = 0;
    cached_config(s, j, w, &c, &rate);
    return rate;
}

/* ---- the decision's working set ---- */

static void decision_free(Decision *d)
{
    free(d->active), free(d->pj), free(d->target), free(d->order), free(d->placed);
    free(d->nodes), free(d->gp), free(d->move), free(d->was_slots), free(d->was_owner);
}

static int decision_init(Decision *d, size_t n_live, int n_nodes)
{
    size_t n = n_live ? n_live : 1;
    *d = (Decision){0};
    d->active = malloc(n * sizeof *d->active);
    d->pj = malloc(n * sizeof *d->pj);
    d->target = malloc(n * sizeof *d->target);
    d->order = malloc(n * sizeof *d->order);
    d->placed = malloc(n * sizeof *d->placed);
    d->nodes = malloc((size_t)n_nodes * sizeof *d->nodes);
    d->gp = malloc((size_t)n_nodes * sizeof *d->gp);
    d->move = calloc(n, 1);
    d->was_slots = calloc(n, sizeof *d->was_slots);
    if (!d->active || !d->pj || !d->target || !d->order || !d->placed || !d->nodes || !d->gp ||
        !d->move || !d->was_slots) {
        decision_free(d);
        return -1;
    }
    return 0;
}

/* ---- phases ---- */

/* Arrived jobs join the live list; finished ones leave it (in submission order). */
static int admit_arrivals(SchedState *s)
{
    size_t k = 0;
    for (size_t q = 0; q < s->n_live; q++)
        if (!s->jobs[s->live[q]].done)
            s->live[k++] = s->live[q];
    s->n_live = k;
    while (s->next_arrival < s->n_jobs && s->jobs[s->next_arrival].submit_s <= s->now_s) {
        SJob *j = &s->jobs[s->next_arrival];
        if (s->n_live == s->cap_live) {
            size_t cap = s->cap_live ? 2 * s->cap_live : 64;
            size_t *bigger = realloc(s->live, cap * sizeof *bigger);
            if (!bigger)
                return -1;
            s->live = bigger;
            s->cap_live = cap;
        }
        if (!j->done) { /* a live driver may report a job done before it arrives */
            j->spd = calloc(SCHED_SPEED_CACHE, sizeof *j->spd);
            j->spd_valid = calloc(SCHED_SPEED_CACHE, sizeof *j->spd_valid);
            j->spd_conf = calloc(SCHED_SPEED_CACHE, sizeof *j->spd_conf);
            if (!j->spd || !j->spd_valid || !j->spd_conf)
                return -1;
            s->live[s->n_live++] = s->next_arrival;
            s->last_progress_s = s->now_s; /* a new job may run where the others could not */
        }
        s->next_arrival++;
    }
    if (s->n_live > s->peak_live)
        s->peak_live = s->n_live;
    return 0;
}

static void explore_advance(SchedState *s, SJob *j)
{
    if (!exploring(s, j))
        return;
    /* The stage's run time is a sum over however the caller sliced time (the live driver:
     * wall-clock steps); a stage that ends at a decision must not wait a whole interval
     * more for a rounding hair. */
    if (j->explore_run_s >= EXPLORE_STAGE_S - 1e-6) {
        j->explore_stage++;
        j->explore_run_s = 0;
    }
    /* Stages larger than the job's limit or the usable cluster are skipped for good, so
     * exploration never waits for GPUs that are not there (a small cluster, a drain, others'
     * holds); with nothing usable at all the job just waits at its stage. */
    int most = sched_job_max_gpus(s, j);
    if (most >= 1 && j->explore_stage < SCHED_EXPLORE_STAGES && (1 << j->explore_stage) > most)
        j->explore_stage = SCHED_EXPLORE_STAGES;
}

/* Paused jobs stop; abandoned ones (holding nothing: sched_abandon) are not shown to the
 * policy at all; every other live job becomes a PolicyJob. */
static int gather(SchedState *s, Decision *d)
{
    for (size_t q = 0; q < s->n_live; q++) {
        size_t i = s->live[q];
        SJob *j = &s->jobs[i];
        if (j->abandoned)
            continue;
        if (j->paused) {
            if (j->gpus > 0) {
                int from = j->gpus;
                sched_release(s, i);
                j->gpus = 0;
                j->stall_left_s = 0;
                if (sched_log_event(s, SCHED_EV_STOP, i, from, 0) < 0)
                    return -1;
            }
            continue;
        }
        explore_advance(s, j);
        d->active[d->m] = i;
        d->pj[d->m] = (PolicyJob){.submit_s = j->submit_s,
                                  .attained_gpu_s = j->gpu_s,
                                  .requested_gpus = j->req_gpus,
                                  .cur_gpus = j->gpus,
                                  /* suspended: kept at its size (sched_suspend) */
                                  .pinned = j->suspended && j->gpus ? j->gpus : j->pinned,
                                  .max_gpus = sched_job_max_gpus(s, j),
                                  .explore_gpus = exploring(s, j) ? 1 << j->explore_stage : 0,
                                  .remaining = app_total_progress(j->app) - j->progress,
                                  .age_s = s->now_s - j->submit_s,
                                  .n_restarts = j->n_allocs ? j->n_allocs - 1 : 0,
                                  .most_gpus_held = j->most_gpus};
        d->m++;
    }
    return 0;
}

static int on_drained(const SchedState *s, const SJob *j)
{
    for (size_t k = 0; k < j->n_slots; k++)
        if (s->drained[j->slots[k].node])
            return 1;
    return 0;
}

static int gpus_on(const SJob *j, int node)
{
    for (size_t k = 0; k < j->n_slots; k++)
        if (j->slots[k].node == node)
            return j->slots[k].gpus;
    return 0;
}

/* A node where our jobs and someone else's hold more GPUs than it has: theirs started while
 * one of ours was between runs or still waiting, so one of ours cannot run there. The most
 * recently placed of ours there (the likeliest to be the one waiting) move, until the rest
 * fit. Only such nodes cost a look at the jobs. */
static void mark_over_held(const SchedState *s, Decision *d)
{
    for (int n = 0; n < s->cfg.nodes; n++) {
        int over = s->held[n] - s->node_free[n];
        while (over > 0) {
            size_t pick = d->m;
            int pick_gen = -1, pick_gpus = 0;
            for (size_t k = 0; k < d->m; k++) {
                const SJob *j = &s->jobs[d->active[k]];
                int g = d->move[k] ? 0 : gpus_on(j, n);
                if (g > 0 && j->placed_gen >= pick_gen) {
                    pick = k;
                    pick_gen = j->placed_gen;
                    pick_gpus = g;
                }
            }
            if (pick == d->m)
                break;
            d->move[pick] = 1;
            over -= pick_gpus;
        }
    }
}

/* Jobs whose size changes (or that sit on a drained node, or no longer fit beside GPUs held
 * by someone else) give their GPUs back; those that keep some are queued for placement, the
 * others are logged as stopped. */
static int release_moved(SchedState *s, Decision *d)
{
    mark_over_held(s, d);
    for (size_t k = 0; k < d->m; k++) {
        size_t i = d->active[k];
        SJob *j = &s->jobs[i];
        d->move[k] = j->gpus && (on_drained(s, j) || d->move[k]);
        if (j->gpus == d->target[k] && !d->move[k])
            continue;
        d->was_slots[k] = j->n_slots;
        /* The copy holds every job's numbers as they were before this loop (jobs it
         * released before hold -1, read as free: only occupy's order and the keeping read
         * them); sched_forget_unkept then clears those of the capped jobs that cannot keep
         * their place. Without such a job, occupy takes the lowest free numbers, as it
         * always did. */
        if (j->gpus && j->ceiling_nodes > 0 && d->target[k] > 0 && !d->was_owner) {
            size_t n_gpus = s->node_off[s->cfg.nodes - 1] + (size_t)s->node_gpus[s->cfg.nodes - 1];
            d->was_owner = malloc(n_gpus * sizeof *d->was_owner);
            if (!d->was_owner)
                return -1;
            memcpy(d->was_owner, s->owner, n_gpus * sizeof *d->was_owner);
        }
        if (j->gpus)
            sched_release(s, i);
        if (d->target[k] > 0) {
            d->order[d->n_order++] = (PlaceOrder){d->target[k], k};
        } else if (j->gpus > 0) {
            int from = j->gpus;
            j->gpus = 0;
            j->stall_left_s = 0;
            if (sched_log_event(s, SCHED_EV_STOP, i, from, 0) < 0)
                return -1;
        }
    }
    sched_forget_unkept(s, d);
    return 0;
}

static int delta_cmp(const void *pa, const void *pb)
{
    const PlaceOrder *a = pa, *b = pb; /* want = GPUs gained */
    if (a->want != b->want)
        return a->want - b->want;
    return a->job < b->job ? -1 : a->job > b->job;
}

/* Shrinks before grows, so that a replay of the stream never holds more GPUs than the
 * cluster has, even between the events of one decision. */
static int log_placed(SchedState *s, Decision *d)
{
    qsort(d->placed, d->n_placed, sizeof *d->placed, delta_cmp);
    for (size_t q = 0; q < d->n_placed; q++) {
        SJob *j = &s->jobs[d->placed[q].job];
        int from = j->gpus - d->placed[q].want;
        if (sched_log_event(s, from ? SCHED_EV_RESIZE : SCHED_EV_START, d->placed[q].job, from,
                            j->gpus) < 0)
            return -1;
    }
    return 0;
}

/* Unmoved jobs may still change batch (adaptive policies, between steps; no restart). */
static void retune_batches(SchedState *s, Decision *d)
{
    if (!s->pol->adaptive_batch)
        return;
    for (size_t k = 0; k < d->m; k++) {
        SJob *j = &s->jobs[d->active[k]];
        JobConfig conf;
        double rate;
        if (j->gpus == 0)
            continue;
        /* the old way (sched_speed_per_decision) recomputed it here, uncached */
        int rc = s->speed_per_decision ? sched_job_config(s, j, j->gpus, &conf, &rate)
                                       : cached_config(s, j, j->gpus, &conf, &rate);
        if (rc == 0)
            j->conf = conf;
    }
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

static void record_time(SchedState *s, double t0)
{
    if (s->n_dec == s->cap_dec) {
        size_t cap = s->cap_dec ? 2 * s->cap_dec : 256;
        double *bigger = realloc(s->decision_ms, cap * sizeof *bigger);
        if (!bigger)
            return; /* the figure is lost, the decision is not */
        s->decision_ms = bigger;
        s->cap_dec = cap;
    }
    s->decision_ms[s->n_dec++] = (cpu_now_s() - t0) * 1000.0;
}

int sched_decide(SchedState *s, Error *err)
{
    double t0 = cpu_now_s();
    s->gen++;
    Decision d;
    if (admit_arrivals(s) < 0 || decision_init(&d, s->n_live, s->cfg.nodes) < 0)
        return error_no_memory(err, "scheduler");
    int rc = 0;
    if (gather(s, &d) < 0)
        rc = error_no_memory(err, "scheduler");
    SpeedCtx ctx = {s, d.active, d.pj};
    PolicyInput in = {.jobs = d.pj,
                      .n = d.m,
                      .capacity = sched_usable_gpus(s),
                      .node_gpus = s->max_node_gpus,
                      .now_s = s->now_s,
                      .resize_cost_s = s->cfg.resize_cost_s,
                      .speed = speed_cb,
                      .ud = &ctx};
    if (rc == 0 && policy_decide(s->pol, &in, d.target) < 0)
        rc = error_no_memory(err, "scheduler: policy %s", s->pol->name);
    if (rc == 0 && release_moved(s, &d) < 0)
        rc = error_no_memory(err, "scheduler");
    if (rc == 0)
        rc = sched_place_moved(s, &d, err);
    if (rc == 0 && log_placed(s, &d) < 0)
        rc = error_no_memory(err, "scheduler");
    if (rc == 0) {
        retune_batches(s, &d);
        record_time(s, t0);
    }
    decision_free(&d);
    return rc;
}
