/* Trial protocol v1 output lines: parsing into events and formatting them back. */
#include "core/model/protocol.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"

void trial_event_clear(TrialEvent *ev)
{
    if (!ev)
        return;
    for (size_t i = 0; i < ev->n_machines; i++)
        free(ev->machines[i].devices);
    free(ev->machines);
    free(ev->text);
    memset(ev, 0, sizeof *ev);
}

static int parse_machines(const cJSON *arr, TrialEvent *ev, Error *err)
{
    size_t n = (size_t)cJSON_GetArraySize(arr);
    ev->machines = calloc(n ? n : 1, sizeof *ev->machines);
    if (!ev->machines)
        return error_no_memory(err, "machines: %zu machines", n);
    size_t i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, arr)
    {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "machines[%zu]", i);
        MachineMeasure *mm = &ev->machines[i];
        ev->n_machines = ++i;
        mm->compute_s = -1;
        if (!cJSON_IsObject(m))
            return error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(m));
        if (jfield_string(m, ctx, "name", 1, mm->name, sizeof mm->name, err) < 0 ||
            jfield_number(m, ctx, "compute_s", 0, 0, 1e9, &mm->compute_s, err) < 0)
            return -1;
        const cJSON *devs = jfield_array(m, ctx, "devices", 0, err);
        if (!devs) {
            if (err && err->msg[0])
                return -1;
            continue;
        }
        size_t nd = (size_t)cJSON_GetArraySize(devs);
        mm->devices = calloc(nd ? nd : 1, sizeof *mm->devices);
        if (!mm->devices)
            return error_no_memory(err, "%s.devices: %zu devices", ctx, nd);
        const cJSON *d;
        cJSON_ArrayForEach(d, devs)
        {
            char dctx[96];
            snprintf(dctx, sizeof dctx, "%s.devices[%zu]", ctx, mm->n_devices);
            DeviceMeasure *dm = &mm->devices[mm->n_devices++];
            dm->inputs = -1;
            if (!cJSON_IsObject(d))
                return error_set(err, "%s: expected an object, found %s", dctx,
                                 jfield_type_name(d));
            if (jfield_string(d, dctx, "id", 1, dm->id, sizeof dm->id, err) < 0 ||
                jfield_int(d, dctx, "inputs", 0, 0, 100000000, &dm->inputs, err) < 0 ||
                jfield_number(d, dctx, "time_s", 1, 0, 1e9, &dm->time_s, err) < 0)
                return -1;
        }
    }
    return 0;
}

/* A training iteration takes at least a microsecond: 0 or a subnormal is a broken clock
 * and would become the best time. */
#define TIME_MIN_S 1e-6

static int parse_object(const cJSON *root, TrialEvent *ev, Error *err)
{
    char event[32];
    if (jfield_string(root, "event line", "event", 1, event, sizeof event, err) < 0)
        return -1;
    if (strcmp(event, "iteration") == 0) {
        ev->kind = EVENT_ITERATION;
        if (jfield_int(root, "iteration", "iter", 1, 0, 100000000, &ev->iter, err) < 0 ||
            jfield_number(root, "iteration", "time_s", 1, TIME_MIN_S, 1e9, &ev->time_s, err) < 0 ||
            jfield_number(root, "iteration", "comm_s", 0, 0, 1e9, &ev->comm_s, err) < 0)
            return -1;
        const cJSON *machines = jfield_array(root, "iteration", "machines", 0, err);
        if (!machines)
            return err && err->msg[0] ? -1 : 0;
        return parse_machines(machines, ev, err) < 0 ? error_prefix(err, "iteration") : 0;
    }
    if (strcmp(event, "done") == 0) {
        ev->kind = EVENT_DONE;
        return jfield_number(root, "done", "time_s", 0, TIME_MIN_S, 1e9, &ev->time_s, err);
    }
    if (strcmp(event, "error") == 0) {
        char msg[1024] = "";
        ev->kind = EVENT_ERROR;
        if (jfield_string(root, "error", "message", 1, msg, sizeof msg, err) < 0)
            return -1;
        ev->text = strdup(msg);
        return 0;
    }
    if (strcmp(event, "progress") == 0) {
        double step = -1;
        ev->kind = EVENT_PROGRESS;
        if (jfield_number(root, "progress", "step", 1, 0, 9e15, &step, err) < 0 ||
            jfield_number(root, "progress", "epoch", 0, 0, 1e12, &ev->epoch, err) < 0 ||
            jfield_number(root, "progress", "loss", 0, -1e300, 1e300, &ev->loss, err) < 0 ||
            jfield_number(root, "progress", "examples_per_s", 0, 0, 1e15, &ev->examples_per_s,
                          err) < 0)
            return -1;
        ev->step = (long)step;
        return 0;
    }
    return error_set(err, "event line: field 'event': expected \"iteration\", \"done\", "
                          "\"error\" or \"progress\", found \"%s\"",
                     event);
}

int protocol_parse_line(const char *line, TrialEvent *ev, Error *err)
{
    memset(ev, 0, sizeof *ev);
    ev->time_s = ev->comm_s = ev->epoch = ev->examples_per_s = -1;
    ev->loss = NAN; /* a loss may be negative (a log-likelihood, an ELBO): no sentinel */
    ev->step = -1;
    const char *p = line;
    while (isspace((unsigned char)*p))
        p++;
    cJSON *root = *p == '{' ? cJSON_Parse(p) : NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        ev->kind = EVENT_LOG;
        ev->text = strdup(line);
        return 0;
    }
    int rc = parse_object(root, ev, err);
    cJSON_Delete(root);
    if (rc < 0)
        trial_event_clear(ev);
    return rc;
}

char *protocol_format(const TrialEvent *ev)
{
    if (ev->kind == EVENT_LOG)
        return strdup(ev->text ? ev->text : "");
    cJSON *o = cJSON_CreateObject();
    switch (ev->kind) {
    case EVENT_ITERATION: {
        cJSON_AddStringToObject(o, "event", "iteration");
        cJSON_AddNumberToObject(o, "iter", ev->iter);
        cJSON_AddNumberToObject(o, "time_s", ev->time_s);
        if (ev->comm_s >= 0)
            cJSON_AddNumberToObject(o, "comm_s", ev->comm_s);
        cJSON *ms = cJSON_AddArrayToObject(o, "machines");
        for (size_t i = 0; i < ev->n_machines; i++) {
            const MachineMeasure *mm = &ev->machines[i];
            cJSON *m = cJSON_CreateObject();
            cJSON_AddStringToObject(m, "name", mm->name);
            if (mm->compute_s >= 0)
                cJSON_AddNumberToObject(m, "compute_s", mm->compute_s);
            cJSON *ds = cJSON_AddArrayToObject(m, "devices");
            for (size_t d = 0; d < mm->n_devices; d++) {
                cJSON *dj = cJSON_CreateObject();
                cJSON_AddStringToObject(dj, "id", mm->devices[d].id);
                if (mm->devices[d].inputs >= 0)
                    cJSON_AddNumberToObject(dj, "inputs", mm->devices[d].inputs);
                cJSON_AddNumberToObject(dj, "time_s", mm->devices[d].time_s);
                cJSON_AddItemToArray(ds, dj);
            }
            cJSON_AddItemToArray(ms, m);
        }
        break;
    }
    case EVENT_DONE:
        cJSON_AddStringToObject(o, "event", "done");
        if (ev->time_s >= 0)
            cJSON_AddNumberToObject(o, "time_s", ev->time_s);
        break;
    case EVENT_ERROR:
        cJSON_AddStringToObject(o, "event", "error");
        cJSON_AddStringToObject(o, "message", ev->text ? ev->text : "");
        break;
    case EVENT_PROGRESS:
        cJSON_AddStringToObject(o, "event", "progress");
        cJSON_AddNumberToObject(o, "step", (double)ev->step);
        if (ev->epoch >= 0)
            cJSON_AddNumberToObject(o, "epoch", ev->epoch);
        if (!isnan(ev->loss))
            cJSON_AddNumberToObject(o, "loss", ev->loss);
        if (ev->examples_per_s >= 0)
            cJSON_AddNumberToObject(o, "examples_per_s", ev->examples_per_s);
        break;
    case EVENT_LOG:
        break;
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
