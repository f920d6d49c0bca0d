/* Trial protocol v1 output lines: parsing into events and formatting them back. */
#include "core/model/protocol.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jdupkey.h"
#include "core/base/jfield.h"
#include "core/base/jsonprint.h"
#include "core/base/termsafe.h"
#include "core/base/utf8.h"

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

/* A machine's name and a device's id name the schedule's, which are UTF-8 (its files are):
 * bytes that are not could match none, and printed back (protocol_format, through
 * jsonprint) each would become a U+FFFD of three bytes, past the field's bound. */
static int utf8_field(const char *s, const char *ctx, const char *key, Error *err)
{
    size_t n = strlen(s), ok = utf8_valid_len(s, n);
    if (ok < n)
        return error_set(err, "%s: field '%s': expected UTF-8 text, found a byte that is not "
                              "UTF-8 at byte %zu",
                         ctx, key, ok + 1);
    return 0;
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
            utf8_field(mm->name, ctx, "name", err) < 0 ||
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
                utf8_field(dm->id, dctx, "id", err) < 0 ||
                jfield_int(d, dctx, "inputs", 0, 0, 100000000, &dm->inputs, err) < 0 ||
                jfield_number(d, dctx, "time_s", 1, 0, 1e9, &dm->time_s, err) < 0)
                return -1;
        }
    }
    return 0;
}

/* A loss that is not finite is refused like any bad field, saying what it most likely
 * means. */
static int progress_loss(const cJSON *root, double *loss, Error *err)
{
    if (jfield_number(root, "progress", "loss", 0, -1e300, 1e300, loss, err) == 0)
        return 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "loss");
    if (err && cJSON_IsNumber(v) && !isfinite(v->valuedouble)) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, " (training diverged?)");
    }
    return -1;
}

static int parse_object(const cJSON *root, TrialEvent *ev, Error *err)
{
    char event[32];
    if (jfield_string(root, "event line", "event", 1, event, sizeof event, err) < 0)
        return -1;
    if (strcmp(event, "iteration") == 0) {
        ev->kind = EVENT_ITERATION;
        if (jfield_int(root, "iteration", "iter", 1, 0, 100000000, &ev->iter, err) < 0 ||
            jfield_number(root, "iteration", "time_s", 1, PROTOCOL_TIME_MIN_S, 1e9, &ev->time_s, err) < 0 ||
            jfield_number(root, "iteration", "comm_s", 0, 0, 1e9, &ev->comm_s, err) < 0)
            return -1;
        const cJSON *machines = jfield_array(root, "iteration", "machines", 0, err);
        if (!machines)
            return err && err->msg[0] ? -1 : 0;
        return parse_machines(machines, ev, err) < 0 ? error_prefix(err, "iteration") : 0;
    }
    if (strcmp(event, "done") == 0) {
        ev->kind = EVENT_DONE;
        return jfield_number(root, "done", "time_s", 0, PROTOCOL_TIME_MIN_S, 1e9, &ev->time_s, err);
    }
    if (strcmp(event, "error") == 0) {
        ev->kind = EVENT_ERROR;
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
        if (!cJSON_IsString(m)) /* says it is missing, or what it is */
            return jfield_string(root, "error", "message", 1, (char[1]){0}, 1, err);
        /* A long message is the trial's error all the same (torch's load_state_dict lists
         * every missing key): it was refused as too long, so a trial that said it failed, and
         * exited 0, was ok with "first bad line: error: field 'message'..." as its note. Kept
         * whole here; the reason it becomes is cut where it is stored. */
        ev->text = strdup(m->valuestring);
        return ev->text ? 0 : error_no_memory(err, "error: field 'message'");
    }
    if (strcmp(event, "progress") == 0) {
        double step = -1;
        ev->kind = EVENT_PROGRESS;
        if (jfield_number(root, "progress", "step", 1, 0, 9e15, &step, err) < 0 ||
            jfield_number(root, "progress", "epoch", 0, 0, 1e12, &ev->epoch, err) < 0 ||
            progress_loss(root, &ev->loss, err) < 0 ||
            jfield_number(root, "progress", "examples_per_s", 0, 0, 1e15, &ev->examples_per_s,
                          err) < 0)
            return -1;
        if (step != floor(step)) /* 1.5 was taken as step 1 */
            return error_set(err, "progress: field 'step': expected an integer, found %g", step);
        ev->step = (long)step;
        return 0;
    }
    return error_set(err, "event line: field 'event': expected \"iteration\", \"done\", "
                          "\"error\" or \"progress\", found \"%s\"",
                     event);
}

/* Python's json.dumps writes a non-finite float as a bare NaN, Infinity or -Infinity, words
 * JSON does not have: a diverging training script prints {"loss": NaN}. Read as log text, the
 * line would hide the divergence, so these three tokens (only outside strings, only where a
 * value starts) become marker strings cJSON reads, and then the non-finite numbers they stand
 * for: the line is a protocol line whose field is refused by name, as 1e999 is. No other
 * JSON5 is read. */
#define NONFINITE_MARK '\x01'

/* The token that starts at p, or NULL. */
static const char *nonfinite_token_at(const char *p)
{
    static const char *const TOKENS[] = {"-Infinity", "Infinity", "NaN"};
    for (size_t k = 0; k < sizeof TOKENS / sizeof *TOKENS; k++) {
        size_t n = strlen(TOKENS[k]);
        if (strncmp(p, TOKENS[k], n) == 0 && !isalnum((unsigned char)p[n]))
            return TOKENS[k];
    }
    return NULL;
}

/* The line with the tokens marked, or NULL when it has none (or no memory: log text). */
static char *mark_nonfinite(const char *p)
{
    char *out = malloc(strlen(p) * 4 + 1); /* "NaN" (3) becomes "\u0001NaN" (11) at most */
    if (!out)
        return NULL;
    size_t n = 0;
    int in_string = 0, marked = 0;
    char prev = 0; /* the last character outside strings, spaces skipped */
    while (*p) {
        if (in_string) {
            if (*p == '\\' && p[1])
                out[n++] = *p++;
            else if (*p == '"')
                in_string = 0;
            out[n++] = *p++;
            continue;
        }
        int value_starts = prev == ':' || prev == ',' || prev == '[';
        const char *tok = value_starts ? nonfinite_token_at(p) : NULL;
        if (tok) {
            n += (size_t)sprintf(out + n, "\"\\u0001%s\"", tok);
            p += strlen(tok);
            prev = '"';
            marked = 1;
            continue;
        }
        if (*p == '"')
            in_string = 1;
        if (!isspace((unsigned char)*p))
            prev = *p;
        out[n++] = *p++;
    }
    out[n] = 0;
    if (!marked) {
        free(out);
        return NULL;
    }
    return out;
}

/* The marker strings mark_nonfinite left become the numbers they stand for. -1 when one
 * became a key ({"a": 1, NaN: 2}): that line is not JSON with Python's words in it. */
static int unmark_nonfinite(cJSON *node)
{
    cJSON *c;
    cJSON_ArrayForEach(c, node)
    {
        if (c->string && c->string[0] == NONFINITE_MARK)
            return -1;
        const char *word = cJSON_IsString(c) ? c->valuestring : NULL;
        const char *tok = word && word[0] == NONFINITE_MARK ? nonfinite_token_at(word + 1) : NULL;
        if (tok && strcmp(word + 1, tok) == 0) {
            double v = strcmp(word + 1, "NaN") == 0 ? NAN : word[1] == '-' ? -INFINITY : INFINITY;
            cJSON_free(c->valuestring);
            c->valuestring = NULL;
            c->type = cJSON_Number;
            c->valuedouble = v;
            c->valueint = 0;
        } else if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && unmark_nonfinite(c) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The line as a JSON object, Python's non-finite tokens read as numbers; NULL if it is not.
 * *trailing as jfield_parse_whole's. */
static cJSON *parse_object_line(const char *p, int *trailing)
{
    *trailing = 0;
    if (*p != '{')
        return NULL;
    cJSON *root = jfield_parse_whole(p, trailing);
    if (root)
        return root;
    if (!strstr(p, "NaN") && !strstr(p, "Infinity")) /* the common log line: no copy */
        return NULL;
    char *marked = mark_nonfinite(p);
    if (!marked)
        return NULL;
    root = jfield_parse_whole(marked, trailing);
    free(marked);
    if (root && unmark_nonfinite(root) < 0) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* Whether a line that is not JSON opens as an event object (`{"event"` first) and ends before
 * that object closes, in a string or a nested value: a trial killed while writing it, or
 * output cut at a buffer's edge. As log text a cut `done` line left the objective to the mean
 * iteration time with nothing said. A line that closes its object and is malformed elsewhere
 * stays log text, as does one that does not open as an event. */
static int cut_event_line(const char *p)
{
    const char *q = p + 1;
    if (*p != '{')
        return 0;
    while (isspace((unsigned char)*q))
        q++;
    if (strncmp(q, "\"event\"", 7) != 0)
        return 0;
    int depth = 0, in_string = 0;
    for (q = p; *q; q++) {
        if (in_string) {
            if (*q == '\\' && q[1])
                q++;
            else if (*q == '"')
                in_string = 0;
        } else if (*q == '"') {
            in_string = 1;
        } else if (*q == '{' || *q == '[') {
            depth++;
        } else if ((*q == '}' || *q == ']') && --depth == 0) {
            return 0; /* it closed: malformed, not cut */
        }
    }
    return 1;
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
    int trailing = 0;
    cJSON *root = parse_object_line(p, &trailing);
    if (!root && cut_event_line(p))
        return error_set(err, "event line: expected one JSON object, found one cut short after "
                              "%zu bytes",
                         strlen(line));
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        ev->kind = EVENT_LOG;
        ev->text = strdup(line);
        return 0;
    }
    /* A key twice is a bad protocol line, not log text: which copy did the trial mean? So is
     * text after the object: was it another event? */
    int rc = trailing ? error_set(err, "event line: expected one JSON object, found more text "
                                       "after it")
             : jdupkey_check(root, err) < 0 ? error_prefix(err, "event line")
                                            : parse_object(root, ev, err);
    cJSON_Delete(root);
    if (rc < 0) {
        trial_event_clear(ev);
    } else if (ev->kind == EVENT_ERROR && ev->text) {
        /* The trial's message becomes the trial's reason in the journal and `tune --json`:
         * made safe like an error's text (error_set), so no byte there is other than UTF-8
         * (a strict JSON reader refused the whole `--json` output for one) or a control. */
        char *safe = malloc(strlen(ev->text) * 4 + 1); /* \xHH: 4 bytes for 1, the most */
        if (safe) {
            termsafe(safe, strlen(ev->text) * 4 + 1, ev->text);
            free(ev->text);
            ev->text = safe;
        }
    }
    return rc;
}

int protocol_parse_line_n(const char *line, size_t len, TrialEvent *ev, Error *err)
{
    size_t nul_at = strlen(line);
    const char *p = line;
    while (isspace((unsigned char)*p))
        p++;
    if (nul_at < len && *p == '{') {
        memset(ev, 0, sizeof *ev);
        return error_set(err, "event line: expected JSON text, found a NUL byte at byte %zu",
                         nul_at + 1);
    }
    return protocol_parse_line(line, ev, err);
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
    char *s = jsonprint_text(o, 0); /* a terminal may show it: sim-trial's, the worker's */
    cJSON_Delete(o);
    return s;
}
