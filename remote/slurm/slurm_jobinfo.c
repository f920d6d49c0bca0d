/* Parsing `scontrol show -d job` (remote/slurm/slurm_jobinfo.h): its records, each line
 * read by the field readers of slurm_jobfields.c. */
#include "remote/slurm/slurm_jobinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"
#include "core/model/hostrange.h"
#include "remote/slurm/slurm_jobfields.h"

static int detail_line(SlurmJobInfo *j, const char *line, size_t len, Error *err)
{
    size_t nl, gl;
    const char *nodes = slurm_jobfields_word(line, len, "Nodes=", &nl);
    const char *gres = slurm_jobfields_word(line, len, "GRES=", &gl);
    uint64_t mask = 0;
    if (gres && slurm_jobfields_gres_gpu_idx(gres, gl, &mask) < 0)
        return error_set(err, "GRES '%.*s': expected gpu[:TYPE]:N(IDX:a-b,c)", (int)gl, gres);
    char **names;
    size_t n;
    if (!nodes || slurm_jobfields_expand_nodes(nodes, nl, &names, &n, err) < 0)
        return nodes ? -1 : error_set(err, "expected Nodes=LIST");
    if (j->n_nodes + n > SLURM_JOBINFO_MAX_NODES) {
        hostrange_free(names, n);
        return error_set(err, "more than %d nodes", SLURM_JOBINFO_MAX_NODES);
    }
    SlurmJobNode *grown = realloc(j->nodes, (j->n_nodes + n + 1) * sizeof *grown);
    if (!grown) {
        hostrange_free(names, n);
        return error_set(err, "out of memory");
    }
    j->nodes = grown;
    for (size_t k = 0; k < n; k++) {
        SlurmJobNode *d = &j->nodes[j->n_nodes++];
        snprintf(d->node, sizeof d->node, "%s", names[k]);
        d->gpu_idx = mask;
    }
    hostrange_free(names, n);
    return 0;
}

/* One line of a record (leading blanks already skipped). */
static int record_line(SlurmJobInfo *j, const char *line, size_t len, Error *err)
{
    size_t vl;
    const char *v;
    if (len >= 6 && memcmp(line, "Nodes=", 6) == 0)
        return detail_line(j, line, len, err);
    if ((v = slurm_jobfields_word(line, len, "JobId=", &vl))) {
        slurm_jobfields_copy(j->id, sizeof j->id, v, vl);
        slurm_jobfields_take(line, len, "HetJobId=", j->het_id, sizeof j->het_id);
        char off[16] = "";
        slurm_jobfields_take(line, len, "HetJobOffset=", off, sizeof off);
        j->het_offset = atoi(off);
        /* the name is the rest of the line: it may hold spaces */
        const char *name = strstr(line, " JobName=");
        if (name && (size_t)(name - line) < len) {
            name += strlen(" JobName=");
            slurm_jobfields_copy(j->name, sizeof j->name, name, len - (size_t)(name - line));
        }
        return 0;
    }
    if ((v = slurm_jobfields_word(line, len, "UserId=", &vl))) {
        const char *paren = memchr(v, '(', vl);
        slurm_jobfields_copy(j->user, sizeof j->user, v, paren ? (size_t)(paren - v) : vl);
    }
    slurm_jobfields_take(line, len, "HetJobIdSet=", j->het_set, sizeof j->het_set);
    slurm_jobfields_take(line, len, "JobState=", j->state, sizeof j->state);
    slurm_jobfields_take(line, len, "Reason=", j->reason, sizeof j->reason);
    slurm_jobfields_take(line, len, "NodeList=", j->nodelist, sizeof j->nodelist);
    slurm_jobfields_take(line, len, "Partition=", j->partition, sizeof j->partition);
    slurm_jobfields_take(line, len, "ReqNodeList=", j->req_nodes, sizeof j->req_nodes);
    slurm_jobfields_take(line, len, "SchedNodeList=", j->sched_nodes, sizeof j->sched_nodes);
    /* What a pending job asks for only tunes how much idle capacity is kept for it: a value
     * this parser does not know reads as unknown, never refuses the round (every job's
     * state and GPUs come with it). */
    if ((v = slurm_jobfields_word(line, len, "Priority=", &vl)) &&
        slurm_jobfields_number(v, vl, &j->priority) < 0)
        j->priority = -1;
    if ((v = slurm_jobfields_word(line, len, "NumNodes=", &vl))) {
        long long n = 0;
        size_t dash = 0;
        while (dash < vl && v[dash] != '-')
            dash++;
        j->num_nodes =
            slurm_jobfields_number(v, dash, &n) == 0 && n <= SLURM_JOBINFO_MAX_NODES ? (int)n : 0;
    }
    if ((v = slurm_jobfields_word(line, len, "NumTasks=", &vl))) {
        long long n = 0;
        j->num_tasks = slurm_jobfields_number(v, vl, &n) == 0 &&
                               n <= SLURM_JOBINFO_MAX_GPU_INDEX * SLURM_JOBINFO_MAX_NODES
                           ? (int)n
                           : 0;
    }
    if ((v = slurm_jobfields_word(line, len, "TresPerTask=", &vl))) {
        j->gpus_per_task = slurm_jobfields_tres_gpus(v, vl);
        slurm_jobfields_tres_gpu_type(v, vl, j->gpu_type, sizeof j->gpu_type);
    }
    if ((v = slurm_jobfields_word(line, len, "TresPerNode=", &vl))) {
        j->gpus_per_node = slurm_jobfields_tres_gpus(v, vl);
        slurm_jobfields_tres_gpu_type(v, vl, j->gpu_type, sizeof j->gpu_type);
    }
    if ((v = slurm_jobfields_word(line, len, "TresPerJob=", &vl))) {
        j->gpus_per_job = slurm_jobfields_tres_gpus(v, vl);
        slurm_jobfields_tres_gpu_type(v, vl, j->gpu_type, sizeof j->gpu_type);
    }
    if ((v = slurm_jobfields_word(line, len, "Restarts=", &vl))) {
        long long n = 0;
        j->restarts = slurm_jobfields_number(v, vl, &n) == 0 && n <= 1000000 ? (int)n : 0;
    }
    if ((v = slurm_jobfields_word(line, len, "ExitCode=", &vl))) {
        char code[32];
        slurm_jobfields_copy(code, sizeof code, v, vl);
        if (sscanf(code, "%d:%d", &j->exit_code, &j->exit_signal) != 2)
            return error_set(err, "ExitCode '%s': expected CODE:SIGNAL", code);
    }
    return 0;
}

static int record_done(SlurmJobInfo *j, size_t line_no, Error *err)
{
    /* Other users' job names and the rest are printed (schedule --live, the console):
     * nothing in them may drive a terminal. */
    termsafe_inplace(j->name, sizeof j->name);
    termsafe_inplace(j->user, sizeof j->user);
    termsafe_inplace(j->state, sizeof j->state);
    termsafe_inplace(j->reason, sizeof j->reason);
    termsafe_inplace(j->partition, sizeof j->partition);
    termsafe_inplace(j->req_nodes, sizeof j->req_nodes);
    termsafe_inplace(j->sched_nodes, sizeof j->sched_nodes);
    termsafe_inplace(j->gpu_type, sizeof j->gpu_type);
    if (strcmp(j->req_nodes, "(null)") == 0)
        j->req_nodes[0] = 0;
    if (strcmp(j->sched_nodes, "(null)") == 0)
        j->sched_nodes[0] = 0;
    if (!j->id[0] || !j->state[0])
        return error_set(
            err, "the job record ending at line %zu: expected JobId= and JobState=", line_no);
    return 0;
}

static int by_id(const void *a, const void *b)
{
    const SlurmJobInfo *x = *(const SlurmJobInfo *const *)a, *y = *(const SlurmJobInfo *const *)b;
    return strcmp(x->id, y->id);
}

/* The first reason found to doubt a record goes to doubt (NULL: not wanted). */
static void doubt_record(SlurmJobInfoList *l, SlurmJobInfo *j, Error *doubt, const Error *why)
{
    if (!j->doubtful) {
        j->doubtful = 1;
        l->n_doubtful++;
    }
    if (doubt && !doubt->msg[0])
        *doubt = *why;
}

/* Slurm prints a job's name, comment and paths as their owner gave them, newlines too, so
 * any user's `sbatch -J $'x\nJobId=7 ...'` writes whole records into the answer: one for a
 * job of ours (failed, or another user's) would come first and be believed. Slurm's own
 * records always come too, each from its own JobId line, so a forged one for a job that
 * exists lists that id twice: then neither record of the id can be told real, and both are
 * doubted. (A forged record for an id Slurm does not list cannot be told from a real one.) */
static int doubt_twice_listed(SlurmJobInfoList *l, Error *doubt, Error *err)
{
    if (l->n < 2)
        return 0;
    SlurmJobInfo **v = malloc(l->n * sizeof *v);
    if (!v)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < l->n; i++)
        v[i] = &l->v[i];
    qsort(v, l->n, sizeof *v, by_id);
    for (size_t i = 1; i < l->n; i++) {
        if (strcmp(v[i - 1]->id, v[i]->id) != 0 || !v[i]->id[0])
            continue;
        Error why;
        error_set(&why,
                  "job %s is listed twice: another job's name, comment or path holds text "
                  "that reads as a record of its own (Slurm prints them as their owner gave "
                  "them, newlines too)",
                  v[i]->id);
        doubt_record(l, v[i - 1], doubt, &why);
        doubt_record(l, v[i], doubt, &why);
    }
    free(v);
    return 0;
}

/* Every record of the answer, the doubtful ones marked; -1 for text that is no answer. */
static int read_records(const char *text, SlurmJobInfoList *out, Error *doubt, Error *err)
{
    size_t cap = 0, line_no = 0;
    SlurmJobInfo *cur = NULL;
    Error why;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *line = p;
        p += len + (eol ? 1 : 0);
        line_no++;
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
            len--;
        int indented = len && (line[0] == ' ' || line[0] == '\t');
        while (len && (line[0] == ' ' || line[0] == '\t'))
            line++, len--;
        if (!len)
            continue;
        if (!indented && len >= 6 && memcmp(line, "JobId=", 6) == 0) {
            if (cur && record_done(cur, line_no - 1, &why) < 0)
                doubt_record(out, cur, doubt, &why);
            if (out->n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                SlurmJobInfo *grown = realloc(out->v, nc * sizeof *grown);
                if (!grown)
                    return error_set(err, "out of memory");
                out->v = grown;
                cap = nc;
            }
            cur = &out->v[out->n++];
            memset(cur, 0, sizeof *cur);
            cur->priority = -1;
        } else if (!cur) {
            if (len >= 21 && memcmp(line, "No jobs in the system", 21) == 0)
                continue;
            return error_set(err, "line %zu: expected a record starting with JobId=", line_no);
        }
        if (record_line(cur, line, len, &why) < 0) {
            error_prefix(&why, "line %zu", line_no);
            doubt_record(out, cur, doubt, &why);
        }
    }
    if (cur && record_done(cur, line_no, &why) < 0)
        doubt_record(out, cur, doubt, &why);
    return doubt_twice_listed(out, doubt, err);
}

int slurm_jobinfo_read(const char *text, const char *source, SlurmJobInfoList *out, Error *doubt,
                       Error *err)
{
    memset(out, 0, sizeof *out);
    if (doubt)
        doubt->msg[0] = 0;
    if (read_records(text, out, doubt, err) < 0) {
        error_prefix(err, "%s", source);
        error_mark(err, ERROR_INPUT);
        slurm_jobinfo_clear(out);
        return -1;
    }
    if (doubt && doubt->msg[0]) {
        error_prefix(doubt, "%s", source);
        error_mark(doubt, ERROR_INPUT);
    }
    return 0;
}

int slurm_jobinfo_parse(const char *text, const char *source, SlurmJobInfoList *out, Error *err)
{
    if (slurm_jobinfo_read(text, source, out, err, err) < 0)
        return -1;
    if (out->n_doubtful) { /* err holds the first doubt */
        slurm_jobinfo_clear(out);
        return -1;
    }
    return 0;
}

void slurm_jobinfo_clear(SlurmJobInfoList *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].nodes);
    free(l->v);
    l->v = NULL;
    l->n = l->n_doubtful = 0;
}

int slurm_nodelist_expand(const char *list, char ***names, size_t *n, Error *err)
{
    return slurm_jobfields_expand_nodes(list, strlen(list), names, n, err);
}

int slurm_nodelist_contains(const char *list, const char *name, Error *err)
{
    size_t len = strlen(list), at = 0, il;
    int found = 0;
    if (!len)
        return error_set(err, "expected node names, found none");
    for (const char *item; (item = slurm_jobfields_next_item(list, len, &at, &il, "[]"));) {
        int in = hostrange_contains(item, il, name, err);
        if (in < 0)
            return -1; /* the whole list is read: a bad piece anywhere is said */
        found |= in;
    }
    return found;
}

const SlurmJobInfo *slurm_jobinfo_find(const SlurmJobInfoList *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->v[i].doubtful && strcmp(l->v[i].id, id) == 0)
            return &l->v[i];
    return NULL;
}

/* Whether the id set ("9-10", "9,11-12") holds id, compared as numbers. */
static int set_holds(const char *set, const char *id)
{
    long long want;
    size_t len = strlen(set), at = 0, il;
    if (slurm_jobfields_number(id, strlen(id), &want) < 0)
        return 0;
    for (const char *item; (item = slurm_jobfields_next_item(set, len, &at, &il, ""));) {
        const char *dash = memchr(item, '-', il);
        size_t first_len = dash ? (size_t)(dash - item) : il;
        long long a, b;
        if (slurm_jobfields_number(item, first_len, &a) < 0)
            return 0;
        b = a;
        if (dash && slurm_jobfields_number(dash + 1, il - first_len - 1, &b) < 0)
            return 0;
        if (want >= a && want <= b)
            return 1;
    }
    return 0;
}

size_t slurm_jobinfo_components(const SlurmJobInfoList *l, const char *id, const SlurmJobInfo **out,
                                size_t cap)
{
    const SlurmJobInfo *lead = slurm_jobinfo_find(l, id);
    if (!lead || (lead->het_id[0] && strcmp(lead->het_id, id) != 0))
        return 0; /* a component is followed through its leader */
    size_t n = 0;
    if (cap)
        out[n] = lead;
    n++;
    if (!lead->het_id[0])
        return n;
    for (size_t i = 0; i < l->n; i++) {
        const SlurmJobInfo *j = &l->v[i];
        if (j == lead || j->doubtful || strcmp(j->het_id, id) != 0 ||
            !set_holds(lead->het_set, j->id))
            continue;
        if (n < cap)
            out[n] = j;
        n++;
    }
    return n;
}

void slurm_jobinfo_where(const SlurmJobInfo *const *parts, size_t n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t p = 0; p < n; p++) {
        for (size_t k = 0; k < parts[p]->n_nodes; k++) {
            const SlurmJobNode *d = &parts[p]->nodes[k];
            if (!d->gpu_idx)
                continue;
            int w = snprintf(out + len, cap - len, "%s%s:", len ? "," : "", d->node);
            if (w < 0 || (size_t)w >= cap - len)
                goto full;
            len += (size_t)w;
            int first = 1;
            for (int g = 0; g < SLURM_JOBINFO_MAX_GPU_INDEX; g++) {
                if (!(d->gpu_idx >> g & 1))
                    continue;
                w = snprintf(out + len, cap - len, "%s%d", first ? "" : "+", g);
                if (w < 0 || (size_t)w >= cap - len)
                    goto full;
                len += (size_t)w;
                first = 0;
            }
        }
    }
    return;
full: /* cut at the last whole node */
    out[cap - 1] = 0;
    char *comma = strrchr(out, ',');
    if (comma)
        *comma = 0;
    else
        out[0] = 0;
}

int slurm_jobinfo_ended(const char *state)
{
    static const char *const ENDED[] = {"COMPLETED",     "FAILED",       "CANCELLED", "TIMEOUT",
                                        "NODE_FAIL",     "PREEMPTED",    "BOOT_FAIL", "DEADLINE",
                                        "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"};
    for (size_t i = 0; i < sizeof ENDED / sizeof *ENDED; i++)
        if (strcmp(state, ENDED[i]) == 0)
            return 1;
    return 0;
}
