/* The scheduler's live mode: decisions of a wall-clock SchedState enacted through a backend's
 * runs (remote/live/liverun.h: SSH or Slurm). */
#include "remote/live/schedlive.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/sched/losscurve.h"
#include "remote/live/liverun.h"

typedef struct {
    char name[128], model[32];
    char *ckpt_path;     /* CHECKPOINT: relative to the job's folder, or absolute */
    void *run;           /* the backend's run (LiveRunOps) */
    int host;     /* machine of the current/last run; -1 before any */
    int run_gpus; /* GPUs of the current run */
    /* what the scheduler wants now */
    int want_gpus, want_host;
    char **want_hosts;
    int *want_nodes; /* node (machine) indices of the wanted placement */
    int *want_slot_gpus; /* GPUs on each of them */
    size_t n_want_hosts;
    int *run_nodes; /* those of the current run */
    int *run_slot_gpus;
    int *run_gpu_ids; /* the GPU indices it holds, node by node (run_slot_gpus of each) */
    size_t n_run_nodes;
    int run_port; /* {master_port} of the current run */
    char run_where[256]; /* its hosts and GPU indices: "h1:0+1,h2:0" */
    char waiting[96];    /* the backend's last reason for not running yet (Slurm's) */
    int wait_logged;
    int need_start;  /* start a run at `want` once no process is up */
    int stop_wanted; /* SIGTERM the current run (once its process group is known) */
    int stopping;    /* SIGTERM sent */
    int64_t stop_sent_ms;
    int killed; /* SIGKILL sent */
    int has_ckpt;
    int runs, resizes, deaths, failed, resize_pending;
    int seen; /* progress lines of the current run already taken */
    long step, saved_step, resumed_step, run_first_step;
    double loss, eps, epoch;
    LossCurve curve;      /* loss_progress: the job's own (step, loss) points */
    double loss_fraction; /* of training done by the curve; -1 unknown */
    int loss_decile_logged;
    char status[300];
} LiveJob;

struct SchedLive {
    SchedState *s;
    const Cluster *c;
    HostPool *pool; /* NULL with a backend of the options' */
    const LiveRunOps *ops;
    void *ops_ctx;
    LiveRunSsh ssh; /* ops_ctx of the default backend */
    SchedLiveOptions o;
    char *checkpoint;
    LiveJob *jobs;
    size_t n_jobs;
    size_t events_seen;
    int64_t last_ms; /* wall time the model was last advanced to */
    int stopping_all, done;
};

static void logf_(SchedLive *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(SchedLive *l, const char *fmt, ...)
{
    if (!l->o.log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    l->o.log(l->o.userdata, line);
}

SchedLive *schedlive_new(SchedState *s, const Cluster *c, HostPool *p, const SchedLiveOptions *o,
                         Error *err)
{
    if (!c->job_command[0]) {
        error_set(err, "%s: field 'job_command': live mode needs the job command template",
                  c->name);
        error_mark(err, ERROR_INPUT);
        return NULL;
    }
    if ((size_t)sched_node_count(s) > c->n_machines ||
        (!(o && o->backend) && (!p || hostpool_size(p) < c->n_machines))) {
        error_set(err, "the scheduler has %d nodes but the inventory %zu machines",
                  sched_node_count(s), c->n_machines);
        return NULL;
    }
    SchedLive *l = calloc(1, sizeof *l);
    l->s = s;
    l->c = c;
    l->pool = p;
    if (o)
        l->o = *o;
    l->ssh = (LiveRunSsh){p, c->job_launch_per_host};
    l->ops = l->o.backend ? l->o.backend : &LIVERUN_SSH;
    l->ops_ctx = l->o.backend ? l->o.backend_ctx : &l->ssh;
    if (l->o.time_scale <= 0)
        l->o.time_scale = 1;
    if (l->o.tick_s <= 0)
        l->o.tick_s = 0.2;
    if (!(l->o.loss_tol > 0 && l->o.loss_tol < 1))
        l->o.loss_tol = 0.05;
    if (l->o.stop_timeout_s <= 0)
        l->o.stop_timeout_s = 20;
    if (!l->o.job_dir)
        l->o.job_dir = "tunedeck-jobs";
    char ck[512];
    if (l->o.checkpoint)
        snprintf(ck, sizeof ck, "%s", l->o.checkpoint);
    else if (schedlive_template_checkpoint(c->job_command, ck, sizeof ck) < 0) {
        error_set(err,
                  "%s: job_command has no '--checkpoint FILE': say which file the job "
                  "writes (--checkpoint-file)",
                  c->name);
        free(l);
        return NULL;
    }
    l->checkpoint = strdup(ck);
    l->n_jobs = sched_job_count(s);
    l->jobs = calloc(l->n_jobs ? l->n_jobs : 1, sizeof *l->jobs);
    for (size_t i = 0; i < l->n_jobs; i++) {
        LiveJob *j = &l->jobs[i];
        SchedJobInfo info;
        sched_job_info(s, i, &info);
        snprintf(j->name, sizeof j->name, "%s", info.name);
        snprintf(j->model, sizeof j->model, "%s", info.model);
        /* checked once here, so a bad name never reaches a start */
        char *wrapped = schedlive_job_template(c->job_command, l->o.job_dir, info.name, err);
        free(wrapped);
        if (!wrapped) {
            if (l->o.workload)
                error_prefix(err, "%s", l->o.workload);
            l->n_jobs = i + 1;
            schedlive_free(l);
            return NULL;
        }
        j->ckpt_path = strdup(ck); /* the command runs in the job's folder */
        j->host = -1;
        j->step = j->saved_step = j->resumed_step = j->run_first_step = -1;
        j->loss_fraction = -1;
        j->loss_decile_logged = -1;
    }
    l->events_seen = sched_event_count(s);
    l->last_ms = clock_now_ms();
    return l;
}

static void free_want(LiveJob *j)
{
    for (size_t i = 0; i < j->n_want_hosts; i++)
        free(j->want_hosts[i]);
    free(j->want_hosts);
    free(j->want_nodes);
    free(j->want_slot_gpus);
    j->want_hosts = NULL;
    j->want_nodes = NULL;
    j->want_slot_gpus = NULL;
    j->n_want_hosts = 0;
}

void schedlive_free(SchedLive *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n_jobs; i++) {
        if (l->jobs[i].run)
            l->ops->free(l->jobs[i].run);
        losscurve_clear(&l->jobs[i].curve);
        free(l->jobs[i].ckpt_path);
        free_want(&l->jobs[i]);
        free(l->jobs[i].run_nodes);
        free(l->jobs[i].run_slot_gpus);
        free(l->jobs[i].run_gpu_ids);
    }
    free(l->jobs);
    free(l->checkpoint);
    free(l);
}

size_t schedlive_pollfds(SchedLive *l, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    size_t n = l->pool ? hostpool_pollfds(l->pool, fds, cap, deadline_ms) : 0;
    int64_t tick = clock_now_ms() + (int64_t)(l->o.tick_s * 1000);
    if (*deadline_ms <= 0 || *deadline_ms > tick)
        *deadline_ms = tick;
    return n;
}

static size_t source_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return schedlive_pollfds(ctx, fds, cap, deadline_ms);
}

static void source_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    schedlive_step(ctx, fds, n, now_ms);
}

long schedlive_attach(SchedLive *l, EvLoop *loop)
{
    return evloop_add(loop, source_pollfds, source_step, l);
}

static const char *machine(const SchedLive *l, int m)
{
    return m >= 0 && (size_t)m < l->c->n_machines ? l->c->machines[m].name : "?";
}

/* The GPU indices of `node` the job is to use, `want` of them: the ones the scheduler's
 * model gives it (so the console's GPU grid shows the real CUDA_VISIBLE_DEVICES), or when
 * the model's slots no longer match (a later decision), the lowest no other running job
 * holds. The start waits until stopped jobs have left its nodes (blocker), so what runs
 * there now is what the scheduler placed there and the count fits. */
static void pick_gpu_ids(const SchedLive *l, const LiveJob *j, int node, int want, int *out)
{
    enum { MAX_GPU_INDEX = 1024 };
    int gpn = sched_node_gpu_count(l->s, node); /* nodes may differ in size */
    int owners[MAX_GPU_INDEX];
    int n = 0, self = (int)(j - l->jobs);
    if (gpn > 0 && gpn <= MAX_GPU_INDEX && sched_node_gpus(l->s, node, owners, gpn) >= 0) {
        for (int g = 0; g < gpn && n < want; g++)
            if (owners[g] == self)
                out[n++] = g;
        if (n == want)
            return;
    }
    unsigned char held[MAX_GPU_INDEX] = {0};
    for (size_t i = 0; i < l->n_jobs; i++) {
        const LiveJob *k = &l->jobs[i];
        if (k == j || !k->run || !l->ops->running(k->run))
            continue;
        const int *ids = k->run_gpu_ids;
        for (size_t h = 0; h < k->n_run_nodes; ids += k->run_slot_gpus[h], h++)
            if (k->run_nodes[h] == node)
                for (int g = 0; g < k->run_slot_gpus[h]; g++)
                    if (ids[g] >= 0 && ids[g] < MAX_GPU_INDEX)
                        held[ids[g]] = 1;
    }
    n = 0;
    for (int idx = 0; n < want; idx++)
        if (idx >= MAX_GPU_INDEX || !held[idx])
            out[n++] = idx;
}

/* The job's rendezvous port: the first from the inventory's base that no other running
 * job uses, so two jobs never meet on one port (a restart may reuse its own). */
static int pick_port(const SchedLive *l, const LiveJob *j)
{
    int base = l->c->job_master_port > 0 ? l->c->job_master_port : CLUSTER_JOB_MASTER_PORT;
    for (int port = base;; port++) {
        int used = 0;
        for (size_t i = 0; i < l->n_jobs && !used; i++) {
            const LiveJob *k = &l->jobs[i];
            used = k != j && k->run && l->ops->running(k->run) && k->run_port == port;
        }
        if (!used)
            return port;
    }
}

/* A backend that picks the GPUs itself (Slurm) says which once it granted them, and why a
 * run waits: the run's placement becomes what was granted (the console's GPU grid). */
static void note_backend(SchedLive *l, LiveJob *j)
{
    const char *why = l->ops->waiting ? l->ops->waiting(j->run) : "";
    if (why[0] && strcmp(why, j->waiting) != 0)
        logf_(l, "%s: %s waits for its allocation: %s", j->name,
              l->ops->label ? l->ops->label(j->run) : "run", why);
    snprintf(j->waiting, sizeof j->waiting, "%s", why);
    const char *got = l->ops->granted ? l->ops->granted(j->run) : "";
    if (got[0] && strcmp(got, j->run_where) != 0) {
        snprintf(j->run_where, sizeof j->run_where, "%s", got);
        logf_(l, "%s: %s running on %s (the GPUs it was granted)", j->name,
              l->ops->label ? l->ops->label(j->run) : "run", got);
    }
}

static void start_run(SchedLive *l, LiveJob *j)
{
    size_t n = j->n_want_hosts;
    int total = 0;
    for (size_t h = 0; h < n; h++)
        total += j->want_slot_gpus[h];
    int *ids = malloc((size_t)(total ? total : 1) * sizeof *ids);
    JobHost *hosts = calloc(n ? n : 1, sizeof *hosts);
    const char **names = calloc(n ? n : 1, sizeof *names);
    int *slots = malloc((n ? n : 1) * sizeof *slots);
    int *nodes = malloc((n ? n : 1) * sizeof *nodes);
    if (!ids || !hosts || !names || !slots || !nodes) {
        free(ids), free(hosts), free(names), free(slots), free(nodes);
        snprintf(j->status, sizeof j->status, "not started: out of memory");
        j->failed = 1;
        return;
    }
    int *next = ids;
    for (size_t h = 0; h < n; h++) {
        const Machine *m = &l->c->machines[j->want_nodes[h]];
        pick_gpu_ids(l, j, j->want_nodes[h], j->want_slot_gpus[h], next);
        hosts[h] = (JobHost){.addr = m->host[0] ? m->host : m->name,
                             .gpus = j->want_slot_gpus[h],
                             .gpu_ids = next};
        names[h] = m->name;
        slots[h] = j->want_slot_gpus[h];
        nodes[h] = j->want_nodes[h];
        next += j->want_slot_gpus[h];
    }
    int port = pick_port(l, j);
    JobAlloc a = {.gpus = j->want_gpus,
                  .hosts = hosts,
                  .n_hosts = n,
                  .master_port = port,
                  .resume = j->has_ckpt ? j->ckpt_path : ""};
    Error err;
    if (j->run)
        l->ops->free(j->run);
    LiveRunSpec spec = {.name = j->name,
                        .job_dir = l->o.job_dir,
                        .command_template = l->c->job_command,
                        .alloc = &a,
                        .nodes = nodes,
                        .node_names = names};
    j->run = l->ops->start(l->ops_ctx, &spec, &err);
    free(hosts);
    j->need_start = 0;
    j->seen = 0;
    j->run_first_step = -1;
    j->stopping = j->stop_wanted = j->killed = 0;
    j->status[0] = 0;
    if (!j->run) {
        free(ids), free(slots), free(nodes), free(names);
        snprintf(j->status, sizeof j->status, "not started: %s", err.msg);
        logf_(l, "%s: could not start on %s: %s", j->name, machine(l, j->want_host), err.msg);
        j->failed = 1;
        return;
    }
    j->host = j->want_host;
    j->run_gpus = j->want_gpus;
    j->run_port = port;
    free(j->run_nodes), free(j->run_slot_gpus), free(j->run_gpu_ids);
    j->run_nodes = nodes;
    j->run_slot_gpus = slots;
    j->run_gpu_ids = ids;
    j->n_run_nodes = n;
    j->wait_logged = 0;
    j->waiting[0] = 0;
    j->runs++;
    if (j->resize_pending) {
        j->resizes++;
        j->resize_pending = 0;
    }
    char *where = j->run_where, asked[256];
    schedlive_where_text(names, slots, ids, n, where, sizeof j->run_where);
    schedlive_where_text(names, slots, NULL, n, asked, sizeof asked);
    free(names);
    const char *label = l->ops->label ? l->ops->label(j->run) : NULL;
    if (l->ops->granted)
        where[0] = 0; /* until the backend says what it granted */
    if (label) /* the backend picks the GPUs: they are known once it grants them */
        logf_(l, "%s: started on %s with %d GPUs (%s, asked for %s), %s", j->name,
              machine(l, j->host), a.gpus, label, asked,
              j->has_ckpt ? "resuming from its checkpoint" : "fresh");
    else
        logf_(l, "%s: started on %s with %d GPUs (GPUs %s%s), %s", j->name, machine(l, j->host),
              a.gpus, where, l->ops->size(j->run) > 1 ? ", one process group per host" : "",
              j->has_ckpt ? "resuming from its checkpoint" : "fresh");
}

static void set_want(SchedLive *l, LiveJob *j, const SchedEvent *ev)
{
    free_want(j);
    j->want_gpus = ev->gpus_to;
    j->want_host = ev->n_slots ? ev->slots[0].node : -1;
    j->n_want_hosts = ev->n_slots;
    j->want_hosts = calloc(ev->n_slots ? ev->n_slots : 1, sizeof *j->want_hosts);
    j->want_nodes = calloc(ev->n_slots ? ev->n_slots : 1, sizeof *j->want_nodes);
    j->want_slot_gpus = calloc(ev->n_slots ? ev->n_slots : 1, sizeof *j->want_slot_gpus);
    for (size_t i = 0; i < ev->n_slots; i++) {
        j->want_hosts[i] = strdup(machine(l, ev->slots[i].node));
        j->want_nodes[i] = ev->slots[i].node;
        j->want_slot_gpus[i] = ev->slots[i].gpus;
    }
}

static void enact(SchedLive *l, const SchedEvent *ev)
{
    if (ev->job < 0 || (size_t)ev->job >= l->n_jobs)
        return;
    LiveJob *j = &l->jobs[ev->job];
    char place[512] = "";
    size_t pl = 0;
    for (size_t i = 0; i < ev->n_slots && pl < sizeof place - 64; i++)
        pl += (size_t)snprintf(place + pl, sizeof place - pl, "%s%s:%d", i ? "," : "",
                               machine(l, ev->slots[i].node), ev->slots[i].gpus);
    logf_(l, "decision t=%.0fs: %s %s %d -> %d GPUs%s%s", ev->time_s,
          sched_event_kind_name(ev->kind), j->name, ev->gpus_from, ev->gpus_to,
          place[0] ? " on " : "", place);
    int up = j->run && l->ops->running(j->run);
    switch (ev->kind) {
    case SCHED_EV_START:
    case SCHED_EV_RESIZE:
        if (ev->n_slots == 0 || ev->gpus_to <= 0)
            return;
        set_want(l, j, ev);
        j->failed = 0;
        if (up) {
            j->stop_wanted = 1;
            j->resize_pending = 1;
            logf_(l, "%s: resize: checkpoint and stop at step %ld, then restart with %d GPUs",
                  j->name, j->step, ev->gpus_to);
        }
        j->need_start = 1;
        break;
    case SCHED_EV_STOP:
    case SCHED_EV_FINISH:
        j->need_start = 0;
        j->want_gpus = 0;
        j->resize_pending = 0;
        if (up) {
            j->stop_wanted = 1;
            logf_(l, "%s: checkpoint and stop at step %ld (%s)", j->name, j->step,
                  ev->kind == SCHED_EV_FINISH ? "the model says it is done" : "preempted");
        }
        break;
    }
}

/* A job being stopped whose run holds GPUs on a node j is to start on: j waits for it (its
 * old process still holds all the GPUs it had). Stops never wait, so nothing deadlocks. */
static const LiveJob *blocker(const SchedLive *l, const LiveJob *j)
{
    for (size_t i = 0; i < l->n_jobs; i++) {
        const LiveJob *k = &l->jobs[i];
        if (k == j || !k->run || !(k->stop_wanted || k->stopping))
            continue;
        for (size_t a = 0; a < k->n_run_nodes; a++)
            for (size_t b = 0; b < j->n_want_hosts; b++)
                if (k->run_nodes[a] == j->want_nodes[b])
                    return k;
    }
    return NULL;
}

/* loss_progress: the job's loss curve, not the catalogue, says how much of it is done; the
 * model's progress becomes that share of the job's epochs (sched_report_progress). */
static void report_loss(SchedLive *l, LiveJob *j, long step, double loss)
{
    if (losscurve_add(&j->curve, (double)step, loss) < 0)
        return;
    double f = losscurve_fraction_done(&j->curve, (double)step, l->o.loss_tol);
    if (f < 0)
        return;
    size_t idx = (size_t)(j - l->jobs);
    SchedJobInfo info;
    Error err;
    if (sched_job_info(l->s, idx, &info) < 0 ||
        sched_report_progress(l->s, idx, f * info.epochs_total, 0, &err) < 0)
        return;
    j->loss_fraction = f;
    int decile = (int)(f * 10);
    if (decile != j->loss_decile_logged) {
        j->loss_decile_logged = decile;
        const ConvModel *m = &j->curve.model;
        logf_(l,
              "%s: loss curve 1/(%.3g k + %.3g) + %.3g from %zu points: %.0f%% done at step %ld "
              "of ~%.0f",
              j->name, m->theta0, m->theta1, m->theta2, j->curve.n, 100 * f, step,
              losscurve_total_steps(&j->curve, l->o.loss_tol));
    }
}

static void serve_job(SchedLive *l, LiveJob *j, int64_t now)
{
    if (j->run) {
        l->ops->step(j->run);
        note_backend(l, j);
        const JobProgress *p = l->ops->progress(j->run);
        if (p->seen > j->seen) {
            if (j->seen == 0) {
                j->run_first_step = p->step;
                if (j->has_ckpt && j->runs > 1) {
                    j->resumed_step = p->step;
                    logf_(l,
                          "%s: run %d on %s (%d GPUs) resumed at step %ld (checkpoint at "
                          "step %ld), loss %.4f",
                          j->name, j->runs, machine(l, j->host), j->run_gpus, p->step,
                          j->saved_step, p->loss);
                } else {
                    logf_(l, "%s: run %d on %s (%d GPUs) first step %ld, loss %.4f", j->name,
                          j->runs, machine(l, j->host), j->run_gpus, p->step, p->loss);
                }
            }
            j->seen = p->seen;
            j->step = p->step;
            j->loss = p->loss;
            j->eps = p->examples_per_s;
            j->epoch = p->epoch;
            Error err;
            if (l->o.loss_progress && !l->stopping_all)
                report_loss(l, j, p->step, p->loss);
            else if (l->o.real_progress && !l->stopping_all &&
                     sched_report_progress(l->s, (size_t)(j - l->jobs), p->epoch, 0, &err) < 0)
                logf_(l, "%s: %s", j->name, err.msg);
        }
    }
    if (j->run && l->ops->running(j->run)) {
        if (j->stop_wanted && !j->stopping && l->ops->ready(j->run)) {
            Error err;
            if (l->ops->signal(j->run, SIGTERM, &err) == 0) {
                j->stopping = 1;
                j->stop_sent_ms = now;
            }
        }
        if (j->stopping && !j->killed &&
            now - j->stop_sent_ms > (int64_t)(l->o.stop_timeout_s * 1000)) {
            Error err;
            if (l->ops->signal(j->run, SIGKILL, &err) == 0) {
                j->killed = 1;
                logf_(l, "%s: no exit %.0f s after SIGTERM: SIGKILL", j->name, l->o.stop_timeout_s);
            }
        }
        return;
    }
    if (j->run && l->ops->status(j->run)[0]) {
        /* the process ended */
        snprintf(j->status, sizeof j->status, "%s", l->ops->status(j->run));
        int asked = j->stop_wanted || j->stopping;
        if (asked && strcmp(j->status, "exited 0") == 0) {
            j->has_ckpt = 1;
            j->saved_step = j->step;
            logf_(l, "%s: stopped at step %ld (epoch %.2f), checkpoint written (loss %.4f)",
                  j->name, j->step, j->epoch, j->loss);
        } else if (asked) {
            logf_(l, "%s: stopped: %s (no new checkpoint)", j->name, j->status);
        } else if (strcmp(j->status, "exited 0") == 0) {
            logf_(l, "%s: ended by itself at step %ld", j->name, j->step);
        } else {
            if (l->ops->rank0_saved(j->run)) { /* another host's run died; rank 0 saved */
                j->has_ckpt = 1;
                j->saved_step = j->step;
            }
            j->deaths++;
            if (j->deaths == 1 && j->want_gpus > 0 && !l->stopping_all) {
                logf_(l, "%s: died unexpectedly at step %ld (%s): restarting %s", j->name, j->step,
                      j->status, j->has_ckpt ? "from its checkpoint" : "fresh (no checkpoint yet)");
                j->need_start = 1;
            } else {
                logf_(l, "%s: died unexpectedly at step %ld (%s)%s", j->name, j->step, j->status,
                      j->want_gpus > 0 && !l->stopping_all ? ": second death, left stopped" : "");
                if (j->want_gpus > 0 && !l->stopping_all)
                    j->failed = 1;
            }
        }
        l->ops->free(j->run);
        j->run = NULL;
        j->run_gpus = 0;
        j->n_run_nodes = 0;
        j->stopping = j->stop_wanted = j->killed = 0;
    }
    if (!j->run && j->need_start && j->want_gpus > 0 && !j->failed && !l->stopping_all) {
        const LiveJob *k = blocker(l, j);
        if (!k)
            start_run(l, j);
        else if (!j->wait_logged) {
            j->wait_logged = 1;
            logf_(l, "%s: waits for %s to checkpoint and free its GPUs", j->name, k->name);
        }
    }
}

void schedlive_step(SchedLive *l, const struct pollfd *fds, size_t n, int64_t now)
{
    if (l->pool)
        hostpool_step(l->pool, fds, n, now);
    if (l->ops->tick)
        l->ops->tick(l->ops_ctx, now);
    if (!l->stopping_all && now > l->last_ms) {
        double dt = (double)(now - l->last_ms) / 1000.0 * l->o.time_scale;
        Error err;
        if (sched_advance(l->s, dt, &err) < 0)
            logf_(l, "scheduler: %s", err.msg);
        l->last_ms = now;
    }
    /* also after stop_all: a finish reported by real progress lands between two steps */
    size_t ne = sched_event_count(l->s);
    for (; l->events_seen < ne; l->events_seen++)
        enact(l, sched_event(l->s, l->events_seen));
    int any = 0;
    for (size_t i = 0; i < l->n_jobs; i++) {
        serve_job(l, &l->jobs[i], now);
        any |= l->jobs[i].run != NULL;
    }
    if (l->stopping_all && !any)
        l->done = 1;
}

void schedlive_stop_all(SchedLive *l)
{
    if (l->stopping_all)
        return;
    l->stopping_all = 1;
    for (size_t i = 0; i < l->n_jobs; i++) {
        LiveJob *j = &l->jobs[i];
        j->need_start = 0;
        j->resize_pending = 0;
        if (j->run && l->ops->running(j->run)) {
            j->stop_wanted = 1;
            logf_(l, "%s: end of the run: checkpoint and stop at step %ld", j->name, j->step);
        }
    }
}

int schedlive_done(const SchedLive *l)
{
    return l->done;
}

double schedlive_sim_time(const SchedLive *l)
{
    return sched_now(l->s);
}

size_t schedlive_job_count(const SchedLive *l)
{
    return l->n_jobs;
}

void schedlive_job(const SchedLive *l, size_t i, SchedLiveJob *out)
{
    const LiveJob *j = &l->jobs[i];
    SchedJobInfo info;
    sched_job_info(l->s, i, &info);
    *out = (SchedLiveJob){.name = j->name,
                          .model = j->model,
                          .running = j->run && l->ops->running(j->run),
                          .gpus = j->run ? j->run_gpus : 0,
                          .gpu_ids = j->run ? j->run_where : "",
                          .host = j->host >= 0 ? machine(l, j->host) : "",
                          .runs = j->runs,
                          .resizes = j->resizes,
                          .deaths = j->deaths,
                          .failed = j->failed,
                          .step = j->step,
                          .loss = j->loss,
                          .examples_per_s = j->eps,
                          .epoch = j->epoch,
                          .saved_step = j->saved_step,
                          .resumed_step = j->resumed_step,
                          .model_progress = info.progress,
                          .loss_fraction = j->loss_fraction,
                          .status = j->status};
}
