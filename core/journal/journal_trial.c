/* Journal events of a tuning session's trials, and the trials rebuilt from a journal. */
#include "core/journal/journal_trial.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/jfield.h"
#include "core/base/termsafe.h"
#include "core/model/protocol.h"

/* A measurement written so that it reads back bit for bit: cJSON prints 15 digits whenever
 * they come within an epsilon, which loses the last bits, and a resumed optimizer must see
 * exactly what the first one saw. Unknown (< 0) is null: -1 would read as a time. */
static cJSON *exact_time(double v)
{
    if (!(v >= 0 && isfinite(v)))
        return cJSON_CreateNull();
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
}

static void add_time(cJSON *o, const char *key, double v)
{
    cJSON_AddItemToObject(o, key, exact_time(v));
}

cJSON *journal_suggested_json(int trial, int overridden, int override_id, const Suggestion *sg,
                              double suggest_ms)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "event", "suggested");
    cJSON_AddNumberToObject(j, "trial", trial);
    cJSON_AddBoolToObject(j, "overridden", overridden);
    cJSON_AddNumberToObject(j, "suggest_ms", isfinite(suggest_ms) ? suggest_ms : 0);
    if (sg->has_prediction) {
        cJSON *p = cJSON_AddObjectToObject(j, "prediction");
        add_time(p, "mean_s", sg->mean_s);
        add_time(p, "p10_s", sg->p10_s);
        add_time(p, "p90_s", sg->p90_s);
        add_time(p, "comm_mean_s", sg->comm_mean_s);
    } else {
        cJSON_AddNullToObject(j, "prediction");
    }
    cJSON_AddItemToObject(j, "schedule", schedule_to_json(sg->schedule));
    if (override_id > 0)
        cJSON_AddNumberToObject(j, "override", override_id);
    return j;
}

/* An event's array of machine names `key` (absent or empty: none) into *out, one flag per
 * machine of c (NULL: none; out NULL: only checked). Each entry names a machine of the
 * cluster; c NULL (no cluster to say it): a name, only. */
static int read_machine_names(const cJSON *ev, const Cluster *c, const char *ctx, const char *key,
                              unsigned char **out, Error *err)
{
    unsigned char *flags = NULL;
    if (out)
        *out = NULL;
    if (!cJSON_GetObjectItemCaseSensitive(ev, key))
        return 0; /* none, as in journals from before it */
    const cJSON *a = jfield_array(ev, ctx, key, 1, err);
    if (!a)
        return -1;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        long m = !cJSON_IsString(e) ? -1 : c ? cluster_find_machine(c, e->valuestring) : 0;
        if (m < 0) {
            free(flags);
            if (cJSON_IsString(e)) {
                char safe[256];
                termsafe(safe, sizeof safe, e->valuestring);
                return error_set(err,
                                 "%s: field '%s': entry %d: expected a machine of cluster "
                                 "'%s', found '%s'",
                                 ctx, key, i, c->name, safe);
            }
            return error_set(err, "%s: field '%s': entry %d: expected a machine's name, found %s",
                             ctx, key, i, jfield_type_name(e));
        }
        if (out && c && !flags && !(flags = calloc(c->n_machines, 1)))
            return error_no_memory(err, "%s", ctx);
        if (flags)
            flags[m] = 1;
        i++;
    }
    if (out)
        *out = flags;
    return 0;
}

/* Adds the array of machine names `key` to ev: those flagged of cluster c (none: nothing). */
static void add_machine_names(cJSON *ev, const char *key, const Cluster *c,
                              const unsigned char *flags)
{
    cJSON *names = NULL;
    for (size_t m = 0; flags && m < c->n_machines; m++)
        if (flags[m]) {
            if (!names)
                names = cJSON_AddArrayToObject(ev, key);
            cJSON_AddItemToArray(names, cJSON_CreateString(c->machines[m].name));
        }
}

void journal_suggested_add_left_out(cJSON *ev, const Cluster *c, const unsigned char *left_out)
{
    add_machine_names(ev, "left_out", c, left_out);
}

cJSON *journal_started_json(int trial)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "event", "started");
    cJSON_AddNumberToObject(j, "trial", trial);
    cJSON_AddNumberToObject(j, "wall_s", (double)time(NULL));
    return j;
}

cJSON *journal_finished_json(int trial, const Observation *o)
{
    const Cluster *c = o->schedule->cluster;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "event", "finished");
    cJSON_AddNumberToObject(j, "trial", trial);
    cJSON_AddStringToObject(j, "status", trial_status_name(o->status));
    /* A reason is made with snprintf in many places, each cutting where its bytes ran out,
     * maybe inside a character: written safe (termsafe), the line is always UTF-8. */
    char reason[sizeof o->reason];
    termsafe(reason, sizeof reason, o->reason);
    cJSON_AddStringToObject(j, "reason", reason);
    add_time(j, "time_s", o->time_s);
    add_time(j, "comm_s", o->comm_s);
    cJSON_AddNumberToObject(j, "iterations", o->iterations_seen);
    cJSON *d = cJSON_AddArrayToObject(j, "device_time_s");
    for (size_t i = 0; i < c->n_devices; i++)
        cJSON_AddItemToArray(d, exact_time(o->device_time_s[i]));
    cJSON *m = cJSON_AddArrayToObject(j, "machine_time_s");
    for (size_t i = 0; i < c->n_machines; i++)
        cJSON_AddItemToArray(m, exact_time(o->machine_time_s[i]));
    /* which hosts a trial lost unreachable did not reach: a resume checks only those again */
    add_machine_names(j, "unreachable", c, o->unreachable);
    return j;
}

/* A time that may be null (unknown, read as -1). */
static int read_time(const cJSON *obj, const char *ctx, const char *key, double *out, Error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) {
        *out = -1;
        return 0;
    }
    return jfield_number(obj, ctx, key, 1, 0, 1e12, out, err);
}

/* Into out[0..n) when out is not NULL, else only checked; `unsized`: any length (no cluster
 * to say it). */
static int read_times(const cJSON *obj, const char *ctx, const char *key, double *out, size_t n,
                      int unsized, Error *err)
{
    const cJSON *arr = jfield_array(obj, ctx, key, 1, err);
    if (!arr)
        return -1;
    if (!unsized && (size_t)cJSON_GetArraySize(arr) != n)
        return error_set(err, "%s: field '%s': expected %zu entries (the cluster's), found %d", ctx,
                         key, n, cJSON_GetArraySize(arr));
    size_t i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        double t;
        if (cJSON_IsNull(v))
            t = -1;
        else if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0)
            t = v->valuedouble;
        else
            return error_set(err, "%s: field '%s'[%zu]: expected a time or null, found %s", ctx,
                             key, i, jfield_type_name(v));
        if (out)
            out[i] = t;
        i++;
    }
    return 0;
}

/* A "finished" event's fields into o, read on cluster c: its per-device and per-machine
 * arrays are of the cluster's sizes, or NULL and those entries only checked (c NULL: of any
 * length), as its "unreachable" is (c NULL: names only) unless `keep`. */
static int read_finished(const cJSON *ev, const Cluster *c, const char *ctx, Observation *o,
                         int keep, Error *err)
{
    char status[32];
    size_t n_devices = c ? c->n_devices : 0, n_machines = c ? c->n_machines : 0;
    if (jfield_string(ev, ctx, "status", 1, status, sizeof status, err) < 0 ||
        jfield_string(ev, ctx, "reason", 0, o->reason, sizeof o->reason, err) < 0 ||
        read_time(ev, ctx, "time_s", &o->time_s, err) < 0 ||
        read_time(ev, ctx, "comm_s", &o->comm_s, err) < 0 ||
        jfield_int(ev, ctx, "iterations", 0, 0, 1000000000, &o->iterations_seen, err) < 0 ||
        read_times(ev, ctx, "device_time_s", o->device_time_s, n_devices, !c, err) < 0 ||
        read_times(ev, ctx, "machine_time_s", o->machine_time_s, n_machines, !c, err) < 0 ||
        read_machine_names(ev, c, ctx, "unreachable", keep ? &o->unreachable : NULL, err) < 0)
        return -1;
    if (trial_status_from_name(status, &o->status) < 0)
        return error_set(err,
                         "%s: field 'status': expected a trial status such as \"ok\" or "
                         "\"failed\", found \"%s\"",
                         ctx, status);
    if (o->status == TRIAL_OK && o->time_s < 0)
        return error_set(err, "%s: field 'time_s': an ok trial needs its time, found null", ctx);
    /* A measured time is what protocol v1 accepts: an edited or damaged 0 became the
     * session's best ("best: trial 3, 0.000 s per iteration") and steered the optimizer. */
    if ((o->status == TRIAL_OK || o->status == TRIAL_PRUNED) && o->time_s >= 0 &&
        o->time_s < PROTOCOL_TIME_MIN_S)
        return error_set(err,
                         "%s: field 'time_s': expected a time of at least %g s for a%s trial, "
                         "found %g",
                         ctx, PROTOCOL_TIME_MIN_S, o->status == TRIAL_OK ? "n ok" : " pruned",
                         o->time_s);
    return 0;
}

Observation *journal_finished_parse(const cJSON *ev, const Schedule *s, const char *ctx, Error *err)
{
    Observation *o = observation_new(s);
    if (!o) {
        error_no_memory(err, "%s", ctx);
        return NULL;
    }
    if (read_finished(ev, s->cluster, ctx, o, 1, err) < 0) {
        observation_free(o);
        return NULL;
    }
    return o;
}

int journal_finished_kept(const cJSON *ev, const Cluster *c, const char *ctx, TrialStatus *status,
                          double *time_s, Error *err)
{
    Observation o;
    memset(&o, 0, sizeof o);
    if (read_finished(ev, c, ctx, &o, 0, err) < 0)
        return -1;
    *status = o.status;
    *time_s = o.time_s;
    return 0;
}

static int read_prediction(const cJSON *ev, const char *ctx, Suggestion *sg, Error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(ev, "prediction");
    if (!p || cJSON_IsNull(p))
        return 0;
    if (!cJSON_IsObject(p))
        return error_set(err, "%s: field 'prediction': expected an object or null, found %s", ctx,
                         jfield_type_name(p));
    char pctx[300];
    snprintf(pctx, sizeof pctx, "%s: prediction", ctx);
    sg->has_prediction = 1;
    return read_time(p, pctx, "mean_s", &sg->mean_s, err) < 0 ||
                   read_time(p, pctx, "p10_s", &sg->p10_s, err) < 0 ||
                   read_time(p, pctx, "p90_s", &sg->p90_s, err) < 0 ||
                   read_time(p, pctx, "comm_mean_s", &sg->comm_mean_s, err) < 0
               ? -1
               : 0;
}

int journal_suggested_read(const cJSON *ev, const Cluster *c, const char *ctx, int last,
                           JournalTrial *out, Error *err)
{
    memset(out, 0, sizeof *out);
    if (journal_suggested_follows(ev, ctx, last, &out->journal_trial, err) < 0 ||
        jfield_bool(ev, ctx, "overridden", 0, &out->overridden, err) < 0 ||
        jfield_number(ev, ctx, "suggest_ms", 0, 0, 1e12, &out->suggest_ms, err) < 0 ||
        read_prediction(ev, ctx, &out->suggestion, err) < 0)
        return -1;
    const cJSON *sj = jfield_object(ev, ctx, "schedule", 1, err);
    if (!sj)
        return -1;
    char sctx[4400];
    snprintf(sctx, sizeof sctx, "%s: schedule", ctx);
    Schedule *s = schedule_from_json(sj, c, sctx, err);
    if (!s)
        return -1;
    if (schedule_validate(s, err) < 0) {
        schedule_free(s);
        return error_prefix(err, "%s", ctx);
    }
    if (read_machine_names(ev, c, ctx, "left_out", &out->left_out, err) < 0) {
        schedule_free(s);
        return -1;
    }
    out->suggestion.schedule = s;
    return 0;
}

int journal_suggested_kept(const cJSON *ev, const Cluster *c, const char *ctx, int last, int *trial,
                           Error *err)
{
    JournalTrial jt;
    if (journal_suggested_read(ev, c, ctx, last, &jt, err) < 0)
        return -1;
    *trial = jt.journal_trial;
    suggestion_clear(&jt.suggestion);
    free(jt.left_out);
    return 0;
}

static int add_trial(JournalTrials *out, const cJSON *ev, const Cluster *c, const char *ctx,
                     int last, Error *err)
{
    JournalTrial jt;
    if (journal_suggested_read(ev, c, ctx, last, &jt, err) < 0)
        return -1;
    jt.trial = (int)out->n + 1;
    jt.suggestion.schedule->trial = jt.trial;
    JournalTrial *grown = realloc(out->trials, (out->n + 1) * sizeof *grown);
    if (!grown) {
        suggestion_clear(&jt.suggestion);
        free(jt.left_out);
        return error_no_memory(err, "%s", ctx);
    }
    out->trials = grown;
    out->trials[out->n++] = jt;
    return 0;
}

/* The trial a started or finished event names by its number in the file. */
static JournalTrial *find_trial(JournalTrials *t, int journal_trial)
{
    /* Numbers in the file only grow: a binary search finds it. */
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->trials[mid].journal_trial < journal_trial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->trials[lo].journal_trial == journal_trial ? &t->trials[lo] : NULL;
}

int journal_suggested_follows(const cJSON *ev, const char *ctx, int last, int *trial, Error *err)
{
    if (jfield_int(ev, ctx, "trial", 1, 1, 100000000, trial, err) < 0)
        return -1;
    /* Numbers only grow: one below the next is a repeated or stray line. One above it follows
     * suggestions lost to damaged lines: its measurement is kept. */
    if (*trial <= last)
        return error_set(err, "%s: trial %d: expected trial %d next", ctx, *trial, last + 1);
    return 0;
}

size_t journal_trials_count(const JournalLog *log, const Cluster *c)
{
    size_t n = 0;
    int last = 0;
    for (size_t i = 0; i < log->n; i++) {
        const cJSON *ev = log->events[i];
        if (strcmp(cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring, "suggested") != 0)
            continue;
        int trial;
        Error e;
        if (journal_suggested_kept(ev, c, "", last, &trial, &e) == 0) {
            last = trial;
            n++;
        }
    }
    return n;
}

int journal_trials_decode(JournalLog *log, const Cluster *c, const char *source, JournalTrials *out,
                          Error *err)
{
    (void)err;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < log->n; i++) {
        const cJSON *ev = log->events[i];
        const char *kind = cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring;
        int is_suggested = strcmp(kind, "suggested") == 0;
        int is_started = strcmp(kind, "started") == 0;
        int is_finished = strcmp(kind, "finished") == 0;
        if (!is_suggested && !is_started && !is_finished)
            continue; /* session, budget, resumed, ended and others' events */
        char ctx[300];
        snprintf(ctx, sizeof ctx, "%s:%zu: %s", source, log->lines[i], kind);
        Error e;
        int trial = 0;
        if (is_suggested) {
            int next = out->n ? out->trials[out->n - 1].journal_trial + 1 : 1;
            if (add_trial(out, ev, c, ctx, next - 1, &e) < 0)
                journal_log_problem(log, "%s (event skipped)", e.msg);
            else if ((trial = out->trials[out->n - 1].journal_trial) > next)
                journal_log_problem(log,
                                    "%s: trial %d follows trial %d: the suggestions between "
                                    "were lost to damaged lines; kept as trial %zu",
                                    ctx, trial, next - 1, out->n);
            continue;
        }
        if (jfield_int(ev, ctx, "trial", 1, 1, 100000000, &trial, &e) < 0) {
            journal_log_problem(log, "%s (event skipped)", e.msg);
            continue;
        }
        JournalTrial *jt = find_trial(out, trial);
        if (!jt) {
            journal_log_problem(log, "%s: trial %d was never suggested (event skipped)", ctx,
                                trial);
            continue;
        }
        if (is_started) {
            jt->started = 1;
            continue;
        }
        if (jt->obs) {
            journal_log_problem(log, "%s: trial %d already has an outcome (event skipped)", ctx,
                                trial);
            continue;
        }
        jt->obs = journal_finished_parse(ev, jt->suggestion.schedule, ctx, &e);
        if (!jt->obs) {
            journal_log_problem(log, "%s (event skipped)", e.msg);
            jt->finished_line_skipped = log->lines[i];
        }
    }
    return 0;
}

void journal_trials_clear(JournalTrials *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        suggestion_clear(&t->trials[i].suggestion);
        observation_free(t->trials[i].obs);
        free(t->trials[i].left_out);
    }
    free(t->trials);
    memset(t, 0, sizeof *t);
}
