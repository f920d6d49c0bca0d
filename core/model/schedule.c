/* Schedules: roles and device inputs for one job, their validation and the protocol v1
 * input object a trial command reads on standard input. */
#include "core/model/schedule.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"

Schedule *schedule_new(const Cluster *c, const JobSpec *job)
{
    Schedule *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cluster = c;
    job_copy(&s->job, job);
    s->worker = calloc(c->n_machines, 1);
    s->ps = calloc(c->n_machines, 1);
    s->inputs = calloc(c->n_devices ? c->n_devices : 1, sizeof *s->inputs);
    if (!s->worker || !s->ps || !s->inputs) {
        schedule_free(s);
        return NULL;
    }
    return s;
}

Schedule *schedule_copy(const Schedule *src)
{
    Schedule *s = schedule_new(src->cluster, &src->job);
    if (s)
        schedule_copy_into(s, src);
    return s;
}

void schedule_copy_into(Schedule *dst, const Schedule *src)
{
    const Cluster *c = src->cluster;
    dst->trial = src->trial;
    memcpy(dst->worker, src->worker, c->n_machines);
    memcpy(dst->ps, src->ps, c->n_machines);
    memcpy(dst->inputs, src->inputs, c->n_devices * sizeof *dst->inputs);
}

void schedule_free(Schedule *s)
{
    if (!s)
        return;
    job_clear(&s->job);
    free(s->worker);
    free(s->ps);
    free(s->inputs);
    free(s);
}

int schedule_machine_inputs(const Schedule *s, size_t machine)
{
    const Machine *m = &s->cluster->machines[machine];
    size_t n = s->cluster->types[m->type].n_devices;
    int sum = 0;
    for (size_t d = 0; d < n; d++)
        sum += s->inputs[m->first_device + d];
    return sum;
}

int schedule_count_workers(const Schedule *s)
{
    int n = 0;
    for (size_t i = 0; i < s->cluster->n_machines; i++)
        n += s->worker[i] != 0;
    return n;
}

int schedule_count_ps(const Schedule *s)
{
    int n = 0;
    for (size_t i = 0; i < s->cluster->n_machines; i++)
        n += s->ps[i] != 0;
    return n;
}

int schedule_equal(const Schedule *a, const Schedule *b)
{
    const Cluster *c = a->cluster;
    return a->cluster == b->cluster && memcmp(a->worker, b->worker, c->n_machines) == 0 &&
           memcmp(a->ps, b->ps, c->n_machines) == 0 &&
           memcmp(a->inputs, b->inputs, c->n_devices * sizeof *a->inputs) == 0;
}

int schedule_validate(const Schedule *s, Error *err)
{
    const Cluster *c = s->cluster;
    if (schedule_count_workers(s) == 0)
        return error_set(err, "schedule: expected at least one worker, found none");
    if (s->job.sync == JOB_SYNC_ALLREDUCE && schedule_count_ps(s) > 0)
        return error_set(err, "schedule: an allreduce job has no parameter servers, found %d",
                         schedule_count_ps(s));
    if (s->job.sync == JOB_SYNC_PS && schedule_count_ps(s) == 0)
        return error_set(err, "schedule: expected at least one parameter server, found none");
    long total = 0;
    for (size_t i = 0; i < c->n_machines; i++) {
        const Machine *m = &c->machines[i];
        const MachineType *t = &c->types[m->type];
        long machine_total = 0;
        for (size_t d = 0; d < t->n_devices; d++) {
            int x = s->inputs[m->first_device + d];
            if (x < 0)
                return error_set(err, "schedule: machine '%s' device '%s': expected "
                                      "non-negative inputs, found %d",
                                 m->name, t->devices[d].id, x);
            if (t->devices[d].max_inputs && x > t->devices[d].max_inputs)
                return error_set(err, "schedule: machine '%s' device '%s': expected at most "
                                      "%d inputs (its memory), found %d",
                                 m->name, t->devices[d].id, t->devices[d].max_inputs, x);
            machine_total += x;
        }
        if (!s->worker[i] && machine_total > 0)
            return error_set(err, "schedule: machine '%s' is not a worker: expected 0 inputs, "
                                  "found %ld",
                             m->name, machine_total);
        total += machine_total;
    }
    if (total != s->job.batch)
        return error_set(err, "schedule: worker inputs must sum to the batch %d, found %ld",
                         s->job.batch, total);
    return 0;
}

int schedule_leave_out(Schedule *s, const unsigned char *out, Error *err)
{
    const Cluster *c = s->cluster;
    double *w = calloc(c->n_devices ? c->n_devices : 1, sizeof *w);
    if (!w)
        return error_no_memory(err, "schedule");
    int any = 0; /* a device that keeps inputs: the rest follow its shape */
    for (size_t m = 0; m < c->n_machines; m++) {
        const Machine *mc = &c->machines[m];
        for (size_t d = 0; d < c->types[mc->type].n_devices; d++) {
            size_t i = mc->first_device + d;
            w[i] = out[m] || !s->worker[m] ? 0 : s->inputs[i];
            any |= w[i] > 0;
        }
        if (out[m])
            s->worker[m] = s->ps[m] = 0;
    }
    /* none left: every device of the machines left, as the optimizers' first design */
    for (size_t m = 0; !any && m < c->n_machines; m++) {
        const Machine *mc = &c->machines[m];
        for (size_t d = 0; !out[m] && d < c->types[mc->type].n_devices; d++)
            w[mc->first_device + d] = 1;
        s->worker[m] = !out[m];
    }
    int rc = schedule_split_integer(w, c->n_devices, s->job.batch, s->inputs);
    free(w);
    if (rc < 0)
        return error_set(err, "schedule: no machine left to run it");
    for (size_t m = 0; m < c->n_machines; m++) /* a worker left without inputs is none */
        s->worker[m] = s->worker[m] && schedule_machine_inputs(s, m) > 0;
    if (s->job.sync == JOB_SYNC_PS && schedule_count_ps(s) == 0)
        for (size_t m = 0; m < c->n_machines; m++)
            s->ps[m] = s->worker[m];
    return schedule_validate(s, err);
}

int schedule_split_integer(const double *weights, size_t n, int total, int *out)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += weights[i] > 0 ? weights[i] : 0;
    if (sum <= 0)
        return -1;
    int given = 0;
    for (size_t i = 0; i < n; i++) {
        double w = weights[i] > 0 ? weights[i] : 0;
        out[i] = (int)floor(total * w / sum);
        given += out[i];
    }
    /* Largest remainder: hand out what flooring left, biggest fractional part first;
     * ties go to the lower index so the split is deterministic. */
    while (given < total) {
        size_t best = n;
        double best_frac = -1;
        for (size_t i = 0; i < n; i++) {
            if (weights[i] <= 0)
                continue;
            double frac = total * weights[i] / sum - out[i];
            if (frac > best_frac) {
                best_frac = frac;
                best = i;
            }
        }
        out[best]++;
        given++;
    }
    return 0;
}

cJSON *schedule_to_json(const Schedule *s)
{
    const Cluster *c = s->cluster;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "protocol", 1);
    cJSON_AddNumberToObject(root, "trial", s->trial);
    cJSON_AddNumberToObject(root, "iterations", s->job.iterations);
    cJSON_AddNumberToObject(root, "warmup", s->job.warmup);
    cJSON_AddItemToObject(root, "job", job_to_json(&s->job));
    cJSON *machines = cJSON_AddArrayToObject(root, "machines");
    for (size_t i = 0; i < c->n_machines; i++) {
        const Machine *m = &c->machines[i];
        const MachineType *t = &c->types[m->type];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", m->name);
        cJSON_AddStringToObject(j, "host", m->host);
        cJSON_AddStringToObject(j, "type", t->name);
        cJSON_AddBoolToObject(j, "worker", s->worker[i]);
        cJSON_AddBoolToObject(j, "ps", s->ps[i]);
        cJSON *devs = cJSON_AddArrayToObject(j, "devices");
        for (size_t d = 0; d < t->n_devices; d++) {
            cJSON *dj = cJSON_CreateObject();
            cJSON_AddStringToObject(dj, "id", t->devices[d].id);
            cJSON_AddNumberToObject(dj, "inputs", s->inputs[m->first_device + d]);
            cJSON_AddItemToArray(devs, dj);
        }
        cJSON_AddItemToArray(machines, j);
    }
    return root;
}

/* seen: one flag per machine of the cluster, set here, so that a machine given twice is
 * refused rather than the second silently replacing the first. */
static int parse_machine(const cJSON *j, const char *ctx, Schedule *s, unsigned char *seen,
                         Error *err)
{
    const Cluster *c = s->cluster;
    char name[128], type[64] = "";
    if (!cJSON_IsObject(j))
        return error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(j));
    if (jfield_string(j, ctx, "name", 1, name, sizeof name, err) < 0 ||
        jfield_string(j, ctx, "type", 0, type, sizeof type, err) < 0)
        return -1;
    long mi = cluster_find_machine(c, name);
    if (mi < 0)
        return error_set(err, "%s: field 'name': unknown machine '%s' (not in the cluster)", ctx,
                         name);
    if (seen[mi])
        return error_set(err, "%s: field 'name': machine '%s' appears twice", ctx, name);
    seen[mi] = 1;
    const Machine *m = &c->machines[mi];
    const MachineType *t = &c->types[m->type];
    if (type[0] && strcmp(type, t->name) != 0)
        return error_set(err, "%s: field 'type': machine '%s' is a %s, found '%s'", ctx, name,
                         t->name, type);
    int worker = 0, ps = 0;
    if (jfield_bool(j, ctx, "worker", 1, &worker, err) < 0 ||
        jfield_bool(j, ctx, "ps", 1, &ps, err) < 0)
        return -1;
    s->worker[mi] = (unsigned char)worker;
    s->ps[mi] = (unsigned char)ps;
    const cJSON *devs = jfield_array(j, ctx, "devices", 0, err);
    if (!devs)
        return err && err->msg[0] ? -1 : 0;
    size_t k = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, devs)
    {
        char dctx[320], id[32];
        int inputs = 0;
        snprintf(dctx, sizeof dctx, "%s.devices[%zu]", ctx, k++);
        if (!cJSON_IsObject(d))
            return error_set(err, "%s: expected an object, found %s", dctx, jfield_type_name(d));
        if (jfield_string(d, dctx, "id", 1, id, sizeof id, err) < 0 ||
            jfield_int(d, dctx, "inputs", 1, 0, 100000000, &inputs, err) < 0)
            return -1;
        size_t di = 0;
        while (di < t->n_devices && strcmp(t->devices[di].id, id) != 0)
            di++;
        if (di == t->n_devices)
            return error_set(err, "%s: field 'id': a %s has no device '%s'", dctx, t->name, id);
        s->inputs[m->first_device + di] = inputs;
    }
    return 0;
}

char *schedule_to_line(const Schedule *s, size_t *len)
{
    return schedule_to_input(s, NULL, len);
}

char *schedule_to_input(const Schedule *s, const char *ps_secret, size_t *len)
{
    /* The secret is written into the line by hand, never through cJSON: its node and the
     * print buffers cJSON grows by copy would go back to the heap holding it, unwiped, and
     * the line is the one copy its callers wipe (launcher_input_free). Hex digits need no
     * escaping; anything else is refused rather than written unescaped. */
    static const char KEY[] = ",\"ps_secret\":\"";
    size_t secret_len = ps_secret ? strlen(ps_secret) : 0;
    if (ps_secret && strspn(ps_secret, "0123456789abcdefABCDEF") != secret_len)
        return NULL;
    cJSON *j = schedule_to_json(s);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!text)
        return NULL;
    size_t n = strlen(text); /* an object with members: it ends in '}' */
    char *line = malloc(n + (ps_secret ? sizeof KEY - 1 + secret_len + 1 : 0) + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    memcpy(line, text, n);
    free(text);
    if (ps_secret) {
        n--; /* over the closing brace */
        memcpy(line + n, KEY, sizeof KEY - 1);
        n += sizeof KEY - 1;
        memcpy(line + n, ps_secret, secret_len);
        n += secret_len;
        memcpy(line + n, "\"}", 2);
        n += 2;
    }
    line[n] = '\n';
    line[n + 1] = 0;
    *len = n + 1;
    return line;
}

Schedule *schedule_from_json(const cJSON *root, const Cluster *c, const char *source, Error *err)
{
    if (!cJSON_IsObject(root)) {
        error_set(err, "%s: expected a JSON object, found %s", source, jfield_type_name(root));
        return NULL;
    }
    int protocol = 0;
    if (jfield_int(root, source, "protocol", 1, 1, 1, &protocol, err) < 0)
        return NULL;
    const cJSON *jobj = jfield_object(root, source, "job", 1, err);
    if (!jobj)
        return NULL;
    char jctx[300];
    snprintf(jctx, sizeof jctx, "%s: job", source);
    JobSpec job;
    if (job_from_json(jobj, jctx, &job, err) < 0)
        return NULL;
    /* Top-level iterations/warmup are what the trial runs; they win over the job's. */
    if (jfield_int(root, source, "iterations", 0, 1, 1000000, &job.iterations, err) < 0 ||
        jfield_int(root, source, "warmup", 0, 0, 1000000, &job.warmup, err) < 0) {
        job_clear(&job);
        return NULL;
    }
    /* As for a job file: a warm-up covering every iteration leaves nothing to measure. */
    if (job.warmup >= job.iterations) {
        error_set(err, "%s: field 'warmup': expected fewer warm-up iterations than the %d "
                       "iterations, found %d",
                  source, job.iterations, job.warmup);
        job_clear(&job);
        return NULL;
    }
    Schedule *s = schedule_new(c, &job);
    job_clear(&job);
    if (jfield_int(root, source, "trial", 0, 0, 1000000000, &s->trial, err) < 0)
        goto fail;
    const cJSON *machines = jfield_array(root, source, "machines", 1, err);
    if (!machines)
        goto fail;
    unsigned char *seen = calloc(c->n_machines ? c->n_machines : 1, 1);
    if (!seen) {
        error_no_memory(err, "%s: machines", source);
        goto fail;
    }
    size_t i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, machines)
    {
        char ctx[300];
        snprintf(ctx, sizeof ctx, "%s: machines[%zu]", source, i++);
        if (parse_machine(m, ctx, s, seen, err) < 0) {
            free(seen);
            goto fail;
        }
    }
    free(seen);
    return s;
fail:
    schedule_free(s);
    return NULL;
}
