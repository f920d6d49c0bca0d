/* A job round whose answer holds records that cannot be told real (another user's job name,
 * comment or path forging records): each job of ours still followed is read by id, where
 * all the text is ours and Slurm's, and other users' jobs are taken from every record the
 * answer gives them (remote/live/liverun_slurm_priv.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/live/liverun_slurm_priv.h"

/* scontrol 22.05 takes one id a call ("scontrol show -d job 1,2": Invalid job id; two ids:
 * too many arguments); a long workload's calls go a few at a time. */
enum { BYID_IN_FLIGHT = 8 };

struct LiveSlurmById {
    SlurmJobInfoList answer; /* the doubtful answer: other users' jobs come from it */
    char **ids;              /* ours to read: the followed ids when the answer came */
    SlurmJobInfoList *got;   /* each id's records; none when Slurm no longer lists it */
    SlurmCall **calls;       /* each id's call while in flight */
    size_t n, started, done;
    int failed;
    Error err;
};

static void byid_free(LiveSlurmById *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        free(b->ids[i]);
        slurm_call_free(b->calls[i]); /* NULL once finished */
        slurm_jobinfo_clear(&b->got[i]);
    }
    slurm_jobinfo_clear(&b->answer);
    free(b->ids), free(b->got), free(b->calls);
    free(b);
}

int liveslurm_byid_start(LiveSlurm *s, SlurmJobInfoList *answer, Error *err)
{
    LiveSlurmById *b = calloc(1, sizeof *b);
    size_t n = s->followed.n;
    if (!b || !(b->ids = calloc(n ? n : 1, sizeof *b->ids)) ||
        !(b->got = calloc(n ? n : 1, sizeof *b->got)) ||
        !(b->calls = calloc(n ? n : 1, sizeof *b->calls))) {
        byid_free(b);
        return error_set(err, "scontrol show -d job: out of memory");
    }
    for (; b->n < n; b->n++)
        if (!(b->ids[b->n] = strdup(s->followed.v[b->n]))) {
            byid_free(b);
            return error_set(err, "scontrol show -d job: out of memory");
        }
    b->answer = *answer; /* ours now */
    memset(answer, 0, sizeof *answer);
    s->byid = b;
    return 0;
}

/* Whether the record is one of the job id (itself, or a component of it). */
static int of_job(const SlurmJobInfo *j, const char *id)
{
    return strcmp(j->id, id) == 0 || strcmp(j->het_id, id) == 0;
}

/* Call i's answer: the job's records, or none when Slurm no longer lists it ("Invalid job id
 * specified", exit 1). Anything else fails the round, as a failed scontrol does. */
static void take_answer(LiveSlurmById *b, size_t i, int rc, const char *text, const Error *call_err)
{
    char source[64];
    snprintf(source, sizeof source, "scontrol show -d job %s", b->ids[i]);
    if (rc != 0) {
        if (!strstr(call_err->msg, "Invalid job id specified")) {
            b->err = *call_err;
            b->failed = 1;
        }
        return;
    }
    if (slurm_jobinfo_parse(text, source, &b->got[i], &b->err) < 0) {
        b->failed = 1;
        return;
    }
    for (size_t k = 0; k < b->got[i].n; k++)
        if (!of_job(&b->got[i].v[k], b->ids[i])) {
            error_set(&b->err, "%s: lists job %s, expected only job %s and its components", source,
                      b->got[i].v[k].id, b->ids[i]);
            b->failed = 1;
            return;
        }
}

/* Every record of `from` that `keep` says yes to (NULL: every record), moved to the end of
 * `to` (room made for them by the caller). */
static void move_records(SlurmJobInfoList *to, SlurmJobInfoList *from, const LiveSlurmById *b,
                         int (*keep)(const SlurmJobInfo *, const LiveSlurmById *))
{
    for (size_t i = 0; i < from->n; i++) {
        SlurmJobInfo *j = &from->v[i];
        if (keep && !keep(j, b))
            continue;
        to->v[to->n++] = *j;
        to->n_doubtful += j->doubtful != 0;
        j->nodes = NULL; /* to's now */
        j->n_nodes = 0;
    }
}

/* Not a record of a job read by id: those come from its own answer. */
static int not_read_by_id(const SlurmJobInfo *j, const LiveSlurmById *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (of_job(j, b->ids[i]))
            return 0;
    return 1;
}

int liveslurm_byid_collect(LiveSlurm *s, SlurmJobInfoList *jobs, Error *err)
{
    LiveSlurmById *b = s->byid;
    size_t flying = 0;
    for (size_t i = 0; i < b->started; i++) {
        if (!b->calls[i] || !liveslurm_call_poll(b->calls[i])) {
            flying += b->calls[i] != NULL;
            continue;
        }
        char *text = NULL;
        Error call_err;
        int rc = slurm_call_finish(b->calls[i], &text, &call_err);
        b->calls[i] = NULL;
        b->done++;
        if (!b->failed)
            take_answer(b, i, rc, text ? text : "", &call_err);
        free(text);
    }
    while (!b->failed && b->started < b->n && flying < BYID_IN_FLIGHT) {
        const char *argv[] = {"scontrol", "show", "-d", "job", b->ids[b->started], NULL};
        Error call_err;
        if (!(b->calls[b->started] = slurm_call_start(s->o.ctl, argv, &call_err))) {
            b->err = call_err;
            b->failed = 1;
            break;
        }
        b->started++;
        flying++;
    }
    if (b->failed) {
        *err = b->err;
        liveslurm_byid_free(s);
        return -1;
    }
    if (b->done < b->n)
        return 0;
    memset(jobs, 0, sizeof *jobs);
    size_t room = b->answer.n;
    for (size_t i = 0; i < b->n; i++)
        room += b->got[i].n;
    if (!(jobs->v = malloc((room ? room : 1) * sizeof *jobs->v))) {
        liveslurm_byid_free(s);
        return error_set(err, "scontrol show -d job: out of memory");
    }
    move_records(jobs, &b->answer, b, not_read_by_id);
    for (size_t i = 0; i < b->n; i++)
        move_records(jobs, &b->got[i], b, NULL);
    liveslurm_byid_free(s);
    return 1;
}

size_t liveslurm_byid_pollfds(LiveSlurm *s, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    size_t n = 0;
    for (size_t i = 0; s->byid && i < s->byid->started && n < cap; i++)
        if (s->byid->calls[i])
            n += slurm_call_pollfds(s->byid->calls[i], fds + n, cap - n, deadline_ms);
    return n;
}

void liveslurm_byid_free(LiveSlurm *s)
{
    byid_free(s->byid);
    s->byid = NULL;
}
