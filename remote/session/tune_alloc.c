/* The session's Slurm allocation in its journal (see tune_alloc.h). */
#include "remote/session/tune_alloc.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char GRANTED[] = "slurm_allocation", RELEASED[] = "slurm_allocation_released";

cJSON *tune_alloc_json(const char *job, const char *name, const char *where)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "event", GRANTED);
    cJSON_AddStringToObject(j, "job", job);
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddStringToObject(j, "where", where);
    cJSON_AddNumberToObject(j, "wall_s", (double)time(NULL));
    return j;
}

cJSON *tune_alloc_released_json(const char *job, const char *result)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "event", RELEASED);
    cJSON_AddStringToObject(j, "job", job);
    cJSON_AddStringToObject(j, "result", result);
    cJSON_AddNumberToObject(j, "wall_s", (double)time(NULL));
    return j;
}

int tune_alloc_event(const char *kind)
{
    return kind && (strcmp(kind, GRANTED) == 0 || strcmp(kind, RELEASED) == 0);
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int all_digits(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* Ours, as slurm_alloc_open names it: nothing else is cancelled on a journal's word. */
static int ours(const char *job, const char *name)
{
    static const char prefix[] = "tunedeck-tune-";
    return job && name && all_digits(job, 10) && strncmp(name, prefix, sizeof prefix - 1) == 0 &&
           all_digits(name + sizeof prefix - 1, 10);
}

size_t tune_alloc_left(const JournalLog *log, TuneAllocLeft *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; log && i < log->n; i++) {
        const cJSON *ev = log->events[i];
        const char *kind = str(ev, "event"), *job = str(ev, "job");
        if (kind && strcmp(kind, RELEASED) == 0 && job) {
            for (size_t k = 0; k < n; k++)
                if (strcmp(out[k].job, job) == 0) {
                    memmove(&out[k], &out[k + 1], (n - k - 1) * sizeof *out);
                    n--;
                    break;
                }
        } else if (kind && strcmp(kind, GRANTED) == 0 && ours(job, str(ev, "name"))) {
            size_t k = 0;
            while (k < n && strcmp(out[k].job, job) != 0)
                k++;
            if (k == n && n == cap) /* the oldest goes: the latest are the likelier to hold */
                memmove(&out[0], &out[1], (--n) * sizeof *out);
            if (k >= n)
                k = n++;
            snprintf(out[k].job, sizeof out[k].job, "%s", job);
            snprintf(out[k].name, sizeof out[k].name, "%s", str(ev, "name"));
            snprintf(out[k].where, sizeof out[k].where, "%s",
                     str(ev, "where") ? str(ev, "where") : "");
        }
    }
    return n;
}
