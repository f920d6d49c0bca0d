/* What the scheduler state tells its drivers: job and node views, the decision log as JSON
 * lines (the `--events` stream the console replays), the run's summary figures, and why the
 * jobs of a run that cannot end are waiting. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jsonprint.h"
#include "core/sched/sched_priv.h"

const char *sched_job_state_name(SchedJobState st)
{
    static const char *const N[] = {"queued", "stalled", "running", "paused",
                                    "done",   "future",  "failed"};
    return (unsigned)st < sizeof N / sizeof N[0] ? N[st] : "?";
}

const char *sched_event_kind_name(SchedEventKind k)
{
    static const char *const N[] = {"start", "resize", "stop", "finish"};
    return (unsigned)k < sizeof N / sizeof N[0] ? N[k] : "?";
}

size_t sched_job_count(const SchedState *s)
{
    return s->n_jobs;
}

int sched_job_find(const SchedState *s, const char *name)
{
    for (size_t i = 0; i < s->n_jobs; i++)
        if (strcmp(s->jobs[i].name, name) == 0)
            return (int)i;
    return -1;
}

int sched_job_info(const SchedState *s, size_t job, SchedJobInfo *o)
{
    if (job >= s->n_jobs)
        return -1;
    const SJob *j = &s->jobs[job];
    SchedJobState st;
    if (j->done)
        st = SCHED_JOB_DONE;
    else if (j->submit_s > s->now_s)
        st = SCHED_JOB_FUTURE;
    else if (j->abandoned)
        st = SCHED_JOB_FAILED;
    else if (j->paused && j->gpus == 0)
        st = SCHED_JOB_PAUSED;
    else if (j->gpus == 0)
        st = SCHED_JOB_QUEUED;
    else if (j->stall_left_s > 0)
        st = SCHED_JOB_STALLED;
    else
        st = SCHED_JOB_RUNNING;
    double total = app_total_progress(j->app);
    double ep = j->epoch;
    if (!j->done && j->epoch < j->app->epochs) {
        double a = j->app->epoch_progress[j->epoch], b = j->app->epoch_progress[j->epoch + 1];
        if (b > a)
            ep += (j->progress - a) / (b - a);
    }
    *o = (SchedJobInfo){.name = j->name,
                        .model = j->app->name,
                        .state = st,
                        .submit_s = j->submit_s,
                        .start_s = j->start_s,
                        .finish_s = j->finish_s,
                        .gpus = j->gpus,
                        .nodes = (int)j->n_slots,
                        .batch_size = j->gpus ? j->conf.batch : 0,
                        .requested_gpus = j->req_gpus,
                        /* done is complete: a job that ended by itself (sched_complete)
                         * finished its training though the model had it short of its end */
                        .progress = j->done ? 1 : total > 0 ? fmin(1, j->progress / total) : 0,
                        .epoch = j->done ? j->app->epochs : ep,
                        .epochs_total = j->app->epochs,
                        .gpu_s = j->gpu_s,
                        .stall_left_s = j->stall_left_s,
                        .pinned_gpus = j->pinned,
                        .paused = j->paused,
                        .suspended = j->suspended,
                        .ceiling_gpus = j->ceiling,
                        .ceiling_nodes = j->ceiling_nodes,
                        .n_resizes = j->n_resizes,
                        .resizes = j->resizes};
    return 0;
}

int sched_node_count(const SchedState *s)
{
    return s->cfg.nodes;
}

int sched_gpus_per_node(const SchedState *s)
{
    return s->max_node_gpus;
}

int sched_node_gpu_count(const SchedState *s, int node)
{
    return node >= 0 && node < s->cfg.nodes ? s->node_gpus[node] : 0;
}

const char *sched_node_type(const SchedState *s, int node)
{
    return node >= 0 && node < s->cfg.nodes ? s->group_types[s->node_group[node]] : NULL;
}

double sched_node_speed(const SchedState *s, int node)
{
    return node >= 0 && node < s->cfg.nodes ? s->node_speed[node] : 0;
}

const char *sched_node_name(const SchedState *s, int node)
{
    return node >= 0 && node < s->cfg.nodes ? s->node_names[node] : NULL;
}

int sched_node_drained(const SchedState *s, int node)
{
    return node >= 0 && node < s->cfg.nodes ? s->drained[node] != 0 : 0;
}

int sched_node_drained_by(const SchedState *s, int node, int who)
{
    return node >= 0 && node < s->cfg.nodes ? (s->drained[node] & who) != 0 : 0;
}

int sched_node_held(const SchedState *s, int node)
{
    return node >= 0 && node < s->cfg.nodes ? s->held[node] : 0;
}

int sched_node_gpus(const SchedState *s, int node, int *owners, int n)
{
    if (node < 0 || node >= s->cfg.nodes)
        return -1;
    int g = s->node_gpus[node];
    for (int i = 0; i < n; i++)
        owners[i] = i < g ? s->owner[s->node_off[node] + (size_t)i] : -1;
    return 0;
}

size_t sched_event_count(const SchedState *s)
{
    return s->n_events;
}

const SchedEvent *sched_event(const SchedState *s, size_t i)
{
    return i < s->n_events ? &s->events[i] : NULL;
}

char *sched_event_json(const SchedState *s, const SchedEvent *ev)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    const SJob *j = &s->jobs[ev->job];
    cJSON_AddNumberToObject(o, "time_s", round(ev->time_s * 1000) / 1000);
    cJSON_AddStringToObject(o, "event", sched_event_kind_name(ev->kind));
    cJSON_AddStringToObject(o, "job", j->name);
    cJSON_AddStringToObject(o, "model", j->app->name);
    cJSON_AddNumberToObject(o, "gpus_from", ev->gpus_from);
    cJSON_AddNumberToObject(o, "gpus", ev->gpus_to);
    if (ev->gpus_to)
        cJSON_AddNumberToObject(o, "batch_size", ev->batch_size);
    if (ev->ceiling_gpus > 0) /* the model lowered the job under a backend's refusal */
        cJSON_AddNumberToObject(o, "ceiling_gpus", ev->ceiling_gpus);
    if (ev->by_itself) /* only then: the model's own finish stays as it was */
        cJSON_AddStringToObject(o, "by", "itself");
    cJSON *pl = cJSON_AddArrayToObject(o, "placement");
    for (size_t k = 0; pl && k < ev->n_slots; k++) {
        cJSON *slot = cJSON_CreateObject();
        cJSON_AddStringToObject(slot, "host", s->node_names[ev->slots[k].node]);
        cJSON_AddNumberToObject(slot, "gpus", ev->slots[k].gpus);
        cJSON_AddItemToArray(pl, slot);
    }
    char *text = jsonprint_text(o, 0);
    cJSON_Delete(o);
    return text;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

double sched_usable_gpu_s(const SchedState *s, double until_s)
{
    double sum = 0, from_s = 0;
    int usable = s->start_gpus;
    for (size_t i = 0; i < s->n_usable_log && s->usable_log[i].at_s < until_s; i++) {
        sum += usable * (s->usable_log[i].at_s - from_s);
        from_s = s->usable_log[i].at_s;
        usable = s->usable_log[i].usable;
    }
    return until_s > from_s ? sum + usable * (until_s - from_s) : sum;
}

void sched_summary(const SchedState *s, SchedSummary *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = s->n_jobs;
    double *jct = malloc((s->n_jobs ? s->n_jobs : 1) * sizeof *jct);
    size_t resizes = 0;
    double makespan = 0;
    for (size_t i = 0; i < s->n_jobs; i++) {
        const SJob *j = &s->jobs[i];
        if (j->done && jct) {
            jct[o->done++] = j->finish_s - j->submit_s;
            makespan = fmax(makespan, j->finish_s);
        }
    }
    for (size_t i = 0; i < s->n_events; i++)
        resizes += s->events[i].kind == SCHED_EV_RESIZE || s->events[i].kind == SCHED_EV_STOP;
    if (jct && o->done) {
        double sum = 0;
        for (size_t i = 0; i < o->done; i++)
            sum += jct[i];
        qsort(jct, o->done, sizeof *jct, dbl_cmp);
        o->avg_jct_s = sum / (double)o->done;
        o->p50_jct_s = pct(jct, o->done, 50);
        o->p99_jct_s = pct(jct, o->done, 99);
    }
    free(jct);
    o->makespan_s = makespan;
    o->gpu_s_held = s->held_gpu_s;
    o->gpu_s_idle = s->idle_gpu_s;
    o->gpu_s_usable = sched_usable_gpu_s(s, makespan) + s->over_gpu_s;
    o->gpu_utilization = o->gpu_s_usable > 0 ? s->held_gpu_s / o->gpu_s_usable : 0;
    o->resizes_per_job = s->n_jobs ? (double)resizes / (double)s->n_jobs : 0;
    o->peak_live_jobs = s->peak_live;
    o->gpu_s_lost_to_resizes = s->lost_gpu_s;
    o->gpu_s_lost_to_starts = s->start_lost_gpu_s;
    o->decisions = s->n_dec;
    if (s->n_dec) {
        double *d = malloc(s->n_dec * sizeof *d);
        if (d) {
            memcpy(d, s->decision_ms, s->n_dec * sizeof *d);
            qsort(d, s->n_dec, sizeof *d, dbl_cmp);
            o->decision_ms_median = pct(d, s->n_dec, 50);
            o->decision_ms_max = d[s->n_dec - 1];
            free(d);
        }
    }
}

/* Why a live job makes no progress, as the operator would act on it. */
static void why_waiting(const SchedState *s, const SJob *j, char *buf, size_t n)
{
    if (j->abandoned)
        snprintf(buf, n, "failed outside the scheduler (it runs no more)");
    else if (j->paused)
        snprintf(buf, n, "paused");
    else if (j->gpus > 0)
        snprintf(buf, n, "holds %d GPUs but makes no progress", j->gpus);
    else if (s->usable_gpus == 0)
        snprintf(buf, n, "no GPU is usable");
    else if (j->pinned)
        snprintf(buf, n, "pinned to %d GPUs, %s gives it none", j->pinned, s->pol->name);
    else
        snprintf(buf, n, "asks %d GPUs, %s gives it none", j->req_gpus, s->pol->name);
}

int sched_stuck_error(const SchedState *s, Error *err)
{
    char msg[ERROR_MSG_MAX], why[96];
    size_t len = 0, named = 0, waiting = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (len < sizeof msg)                                                                      \
            len += (size_t)snprintf(msg + len, sizeof msg - len, __VA_ARGS__);                     \
    } while (0)
    PUT("scheduler: stuck at t=%.0f s: no job progressed for %.0f s and none is to arrive;",
        s->now_s, s->now_s - s->last_progress_s);
    for (size_t q = 0; q < s->n_live; q++) {
        const SJob *j = &s->jobs[s->live[q]];
        if (j->done)
            continue;
        waiting++;
        if (named < 3) {
            why_waiting(s, j, why, sizeof why);
            PUT("%s %s (%s): %s", named ? ";" : "", j->name, j->app->name, why);
            named++;
        }
    }
    if (waiting > named)
        PUT("; and %zu more waiting", waiting - named);
    PUT("; %d of %d GPUs usable", s->usable_gpus, s->total_gpus);
    int drained = 0;
    for (int i = 0; i < s->cfg.nodes && drained < 4; i++)
        if (s->drained[i])
            PUT("%s%s", drained++ ? ", " : " (drained: ", s->node_names[i]);
    if (drained)
        PUT(")");
#undef PUT
    return error_set(err, "%s", msg);
}
