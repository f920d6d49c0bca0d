/* A scheduler simulation in accelerated time for the console (default: 16 nodes × 4 GPUs,
 * Poisson arrivals, one decision per real second so that resizes show within a minute). */
#include "tui/simsched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/base/clock.h"
#include "core/base/plural.h"
#include "tui/draw.h"

struct SimSched {
    SimSchedOptions o;
    Catalogue *cat;
    SchedState *state;
    SchedLive *live;  /* live mode: the driver advances the state */
    LiveSlurm *slurm; /* live mode on Slurm: the grid is Slurm's grant */
    int paused;
    int64_t last_ms;
};

void simsched_defaults(SimSchedOptions *o)
{
    memset(o, 0, sizeof *o);
    o->nodes = 16;
    o->gpus_per_node = 4;
    o->policy = "doubling";
    o->model = "resnet110";
    o->jobs = 40;
    o->arrival_mean_s = 90;
    o->speed = 60;
    o->tick_ms = 250;
    o->seed = 1;
}

SimSched *simsched_new(const SimSchedOptions *o, Error *err)
{
    Catalogue *cat = catalogue_load(o->catalogue_dir, err);
    if (!cat)
        return NULL;
    SchedConfig cfg;
    sched_config_default(&cfg);
    cfg.nodes = o->nodes;
    cfg.gpus_per_node = o->gpus_per_node;
    cfg.policy = o->policy;
    cfg.seed = o->seed;
    SchedState *st = sched_new(&cfg, cat, err);
    if (!st) {
        catalogue_free(cat);
        return NULL;
    }
    if (sched_add_poisson(st, o->model, o->arrival_mean_s, o->jobs, err) < 0) {
        sched_free(st);
        catalogue_free(cat);
        return NULL;
    }
    SimSched *s = calloc(1, sizeof *s);
    s->o = *o;
    s->cat = cat;
    s->state = st;
    s->last_ms = clock_now_ms();
    return s;
}

SimSched *simsched_new_live(const SimSchedLiveOptions *o, Error *err)
{
    const Cluster *c = o->cluster;
    SchedConfig cfg;
    sched_config_default(&cfg);
    SchedNodeGroup *groups;
    if (schedlive_node_groups(c, o->gpus_per_node, &groups, &cfg.n_groups, err) < 0)
        return NULL;
    cfg.groups = groups;
    cfg.policy = o->policy;
    cfg.seed = o->seed;
    const char **names = calloc(c->n_machines + 1, sizeof *names);
    for (size_t m = 0; m < c->n_machines; m++)
        names[m] = c->machines[m].name;
    cfg.node_names = names;
    SimSched *s = calloc(1, sizeof *s);
    simsched_defaults(&s->o);
    s->o.policy = o->policy;
    s->o.speed = o->time_scale;
    s->cat = catalogue_load(o->catalogue_dir, err);
    if (s->cat)
        s->state = sched_new(&cfg, s->cat, err);
    free(names);
    free(groups);
    SchedLiveOptions lo = {.time_scale = o->time_scale,
                           .job_dir = o->job_dir,
                           .workload = o->workload,
                           .inventory = o->inventory,
                           .job_command_flag = o->job_command_flag,
                           .checkpoint = o->checkpoint,
                           .log = o->log,
                           .userdata = o->userdata};
    if (o->slurm) {
        lo.backend = &LIVERUN_SLURM;
        lo.backend_ctx = o->slurm;
        double first_s, most_s; /* 0: the driver's default */
        liveslurm_ceiling_retry(o->slurm, &first_s, &most_s);
        if (first_s > 0)
            lo.ceiling_retry_s = first_s;
        if (most_s > 0)
            lo.ceiling_retry_max_s = most_s;
        s->slurm = o->slurm;
    }
    if (!s->state || sched_load_workload(s->state, o->workload, err) < 0 ||
        !(s->live = schedlive_new(s->state, c, o->pool, &lo, err))) {
        simsched_free(s);
        return NULL;
    }
    s->last_ms = clock_now_ms();
    return s;
}

SchedLive *simsched_live(const SimSched *s)
{
    return s->live;
}

void simsched_free(SimSched *s)
{
    if (!s)
        return;
    schedlive_free(s->live);
    sched_free(s->state);
    catalogue_free(s->cat);
    free(s);
}

const SchedState *simsched_state(const SimSched *s)
{
    return s->state;
}

SchedState *simsched_state_mut(SimSched *s)
{
    return s->state;
}

int64_t simsched_deadline(const SimSched *s)
{
    /* live: the driver advances the state from the console's poll; this is when the screen
     * next reads it (the operator's pause is for tuning, not for the live jobs) */
    if (s->live)
        return s->last_ms + s->o.tick_ms;
    if (s->paused || sched_finished(s->state))
        return -1;
    return s->last_ms + s->o.tick_ms;
}

void simsched_set_paused(SimSched *s, int paused)
{
    if (s->paused && !paused)
        s->last_ms = clock_now_ms(); /* paused time is not simulated */
    s->paused = paused;
}

int simsched_tick(SimSched *s, int64_t now_ms, Error *err)
{
    if (now_ms < s->last_ms + s->o.tick_ms)
        return 0;
    if (s->live) { /* the driver moved it: only the screen's reading is due */
        s->last_ms = now_ms;
        return 1;
    }
    if (s->paused || sched_finished(s->state))
        return 0;
    double dt = (double)(now_ms - s->last_ms) / 1000.0 * s->o.speed;
    s->last_ms = now_ms;
    return sched_advance(s->state, dt, err) < 0 ? -1 : 1;
}

char simsched_job_label(size_t job)
{
    static const char L[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    return job < sizeof L - 1 ? L[job] : '*';
}

int simsched_mark_where(HostLoad *grid, size_t n, const char *where, short owner)
{
    int marked = 0;
    const char *p = where;
    while (p && *p) {
        const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        if (!colon || colon > end) { /* a host without indices: nothing to mark */
            p = comma ? comma + 1 : NULL;
            continue;
        }
        size_t len = (size_t)(colon - p);
        HostLoad *h = NULL;
        for (size_t i = 0; i < n && !h; i++)
            if (strlen(grid[i].name) == len && strncmp(grid[i].name, p, len) == 0)
                h = &grid[i];
        for (const char *q = colon + 1; h && q < end;) {
            char *after;
            long g = strtol(q, &after, 10);
            if (after == q)
                break;
            if (g >= 0 && g < h->n_gpus) {
                h->gpu_job[g] = owner;
                marked++;
            }
            q = *after == '+' ? after + 1 : after;
            if (*after != '+')
                break;
        }
        p = comma ? comma + 1 : NULL;
    }
    return marked;
}

/* On Slurm the grid is what Slurm granted, not the model's slots: each of our running jobs
 * on the GPU indices it was given, other users' jobs as foreign, and the idle GPUs held out
 * of growth for other users' pending jobs as kept. */
static void slurm_grid(const SimSched *s, ClusterSnapshot *out)
{
    for (size_t n = 0; n < out->n_grid; n++)
        for (int g = 0; g < out->grid[n].n_gpus; g++)
            out->grid[n].gpu_job[g] = -1;
    enum { SHOWN = 64 };
    LiveSlurmForeign f[SHOWN];
    size_t nf = liveslurm_foreign(s->slurm, f, SHOWN);
    for (size_t i = 0; i < nf && i < SHOWN; i++)
        simsched_mark_where(out->grid, out->n_grid, f[i].where, SNAP_GPU_FOREIGN);
    for (size_t j = 0; j < schedlive_job_count(s->live); j++) {
        SchedLiveJob lj;
        schedlive_job(s->live, j, &lj);
        if (lj.running && lj.gpu_ids && lj.gpu_ids[0])
            simsched_mark_where(out->grid, out->n_grid, lj.gpu_ids, (short)j);
    }
    for (size_t n = 0; n < out->n_grid; n++) {
        HostLoad *h = &out->grid[n];
        int kept = schedlive_node_kept(s->live, (int)n), held = 0;
        for (int g = h->n_gpus - 1; g >= 0 && kept > 0; g--) /* idle ones, from the last */
            if (h->gpu_job[g] == -1) {
                h->gpu_job[g] = SNAP_GPU_KEPT;
                kept--;
            }
        for (int g = 0; g < h->n_gpus; g++)
            held += h->gpu_job[g] >= 0 || h->gpu_job[g] == SNAP_GPU_FOREIGN;
        h->gpu = (double)held / (h->n_gpus ? h->n_gpus : 1);
    }
}

void simsched_snapshot(const SimSched *s, ClusterSnapshot *out)
{
    const SchedState *st = s->state;
    int nodes = sched_node_count(st);
    if (!out->grid || out->n_grid != (size_t)nodes) {
        free(out->grid);
        out->grid = calloc((size_t)nodes, sizeof *out->grid);
        out->n_grid = (size_t)nodes;
    }
    int owners[SNAP_MAX_GPUS];
    for (int n = 0; n < nodes; n++) {
        HostLoad *h = &out->grid[n];
        snprintf(h->name, sizeof h->name, "%s", sched_node_name(st, n));
        snprintf(h->role, sizeof h->role, "%s", sched_node_drained(st, n) ? "drain" : "");
        int gpn = sched_node_gpu_count(st, n);
        h->n_gpus = gpn < SNAP_MAX_GPUS ? gpn : SNAP_MAX_GPUS;
        sched_node_gpus(st, n, owners, h->n_gpus);
        int held = 0;
        for (int g = 0; g < h->n_gpus; g++) {
            h->gpu_job[g] = (short)owners[g];
            held += owners[g] >= 0;
        }
        h->gpu = (double)held / (h->n_gpus ? h->n_gpus : 1);
        h->cpu = h->mem = h->share = NAN;
    }
    if (s->slurm)
        slurm_grid(s, out);
    size_t nj = sched_job_count(st);
    if (out->cap_jobs < nj) {
        free(out->jobs);
        out->jobs = calloc(nj, sizeof *out->jobs);
        out->cap_jobs = nj;
    }
    out->n_jobs = nj;
    double now = sched_now(st);
    for (size_t j = 0; j < nj; j++) {
        SchedJobInfo info;
        JobRow *r = &out->jobs[j];
        memset(r, 0, sizeof *r);
        if (sched_job_info(st, j, &info) < 0)
            continue;
        snprintf(r->name, sizeof r->name, "%s", info.name);
        r->label = simsched_job_label(j);
        r->gpus = info.gpus;
        r->progress = info.progress;
        r->state = (int)info.state;
        /* Predicted completion: the rate since it started, carried to the end. */
        r->eta_s = NAN;
        if (info.state == SCHED_JOB_DONE)
            r->eta_s = 0;
        else if (info.start_s >= 0 && info.progress > 0.001 && now > info.start_s)
            r->eta_s = (1 - info.progress) * (now - info.start_s) / info.progress;
        /* resizes and stops: every allocation after a start (the history's first entry,
         * and a restart after a stop, come from 0 GPUs), as schedule counts them */
        r->resizes = 0;
        for (size_t k = 0; k < info.n_resizes; k++)
            r->resizes += info.resizes[k].gpus_from > 0;
        size_t len = 0;
        r->history[0] = 0;
        size_t first = info.n_resizes > 5 ? info.n_resizes - 5 : 0;
        for (size_t k = first; k < info.n_resizes && len < sizeof r->history; k++)
            len += (size_t)snprintf(r->history + len, sizeof r->history - len, "%s%d",
                                    k == first ? "" : ">", info.resizes[k].gpus_to);
        snprintf(r->state_name, sizeof r->state_name, "%s", sched_job_state_name(info.state));
        r->pinned = info.pinned_gpus > 0;
        const SchedResize *last = info.n_resizes ? &info.resizes[info.n_resizes - 1] : NULL;
        r->starting = info.state == SCHED_JOB_STALLED && last && last->gpus_from == 0;
        if (r->starting)
            snprintf(r->note, sizeof r->note, "starting on %d, %.0fs left", last->gpus_to,
                     info.stall_left_s);
        else if (info.state == SCHED_JOB_STALLED && last)
            snprintf(r->note, sizeof r->note, "resize %d>%d, restart %.0fs left", last->gpus_from,
                     last->gpus_to, info.stall_left_s);
        else if (info.paused)
            snprintf(r->note, sizeof r->note, "paused by the operator");
        if (s->live && j < schedlive_job_count(s->live)) {
            /* The real job: its process, its last progress line. */
            SchedLiveJob lj;
            schedlive_job(s->live, j, &lj);
            char model[sizeof r->note];
            snprintf(model, sizeof model, "%s", r->note);
            simsched_live_note(&lj, model, r->note, sizeof r->note);
        }
    }
    SchedSummary sum;
    sched_summary(st, &sum);
    snprintf(out->grid_source, sizeof out->grid_source, "%s%s t=%.0fs", sched_policy_name(st),
             s->live ? " live" : "", now);
    /* no job done yet has no completion time to average (it read "avg JCT 0s") */
    if (sum.done)
        snprintf(out->jobs_source, sizeof out->jobs_source, "%zu/%zu done, avg JCT %.0fs",
                 sum.done, sum.jobs, sum.avg_jct_s);
    else
        snprintf(out->jobs_source, sizeof out->jobs_source, "0/%zu done", sum.jobs);
}

/* A text that filled its cap bytes ends in "..." on a whole UTF-8 character, so that it
 * never reads as whole. */
static void mark_cut(char *text, size_t cap)
{
    size_t k = cap - 4;
    while (k > 0 && ((unsigned char)text[k] & 0xC0) == 0x80)
        k--;
    memcpy(text + k, "...", 4);
}

void simsched_live_note(const SchedLiveJob *lj, const char *model_note, char *out, size_t cap)
{
    if (cap < 4)
        return;
    /* Composed whole first (a failure's status is a whole ssh error), cut once at the end:
     * a 64-byte buffer cut "connect to 127.0.0.1 port 22: Connection refused" to "Con",
     * with nothing to say that more was there. */
    char real[512], ln[32] = "";
    if (!isnan(lj->loss)) /* a loss may be negative; NAN is "none reported" */
        snprintf(ln, sizeof ln, " loss %.4f", lj->loss);
    if (lj->failed)
        snprintf(real, sizeof real, "FAILED (%s)", lj->status);
    else if (lj->suspended) /* holds its GPUs, makes no progress */
        snprintf(real, sizeof real, "suspended %s step %ld%s", lj->gpu_ids, lj->step, ln);
    else if (lj->step >= 0 && lj->running)
        snprintf(real, sizeof real, "run %s step %ld%s", lj->gpu_ids, lj->step, ln);
    else if (lj->step >= 0)
        snprintf(real, sizeof real, "stop %s step %ld%s", lj->host, lj->step, ln);
    else
        snprintf(real, sizeof real, "%s", lj->running ? "starting" : "");
    char ceiling[96];
    /* none for a failed job: schedlive_job clears a done or failed job's ceiling */
    if (schedlive_ceiling_text(lj, ceiling, sizeof ceiling)[0]) {
        size_t k = strlen(real); /* the cluster refused it more GPUs */
        snprintf(real + k, sizeof real - k, "%s%s", k ? " " : "", ceiling);
    }
    if (strlen(real) == sizeof real - 1)
        mark_cut(real, sizeof real);
    size_t n = (size_t)snprintf(out, cap, "%s%s%s", real, real[0] && model_note[0] ? "; " : "",
                                model_note);
    if (n >= cap)
        mark_cut(out, cap);
}

void simsched_event_text(const SimSched *s, size_t i, char *out, size_t cap)
{
    const SchedEvent *ev = sched_event(s->state, i);
    SchedJobInfo info;
    if (!ev || sched_job_info(s->state, (size_t)ev->job, &info) < 0) {
        snprintf(out, cap, "?");
        return;
    }
    char what[32];
    if (ev->kind == SCHED_EV_RESIZE)
        snprintf(what, sizeof what, "resize %d>%d", ev->gpus_from, ev->gpus_to);
    else if (ev->kind == SCHED_EV_START)
        snprintf(what, sizeof what, "start %d GPU%s", ev->gpus_to, plural_s(ev->gpus_to));
    else
        snprintf(what, sizeof what, "%s", sched_event_kind_name(ev->kind));
    if (ev->ceiling_gpus > 0) { /* no decision: the cluster refused it more GPUs */
        size_t k = strlen(what);
        snprintf(what + k, sizeof what - k, " (ceiling %d)", ev->ceiling_gpus);
    }
    /* the name whole (a decision is read in full) but padded by columns, not bytes, so that
     * what was decided lines up after a workload's job named in any script */
    int pad = 12 - draw_width(info.name);
    snprintf(out, cap, "%6.0fs %c %s%*s %s", ev->time_s, simsched_job_label((size_t)ev->job),
             info.name, pad > 0 ? pad : 0, "", what);
}
