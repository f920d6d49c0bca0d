/* The session's Slurm allocation (remote/slurm/slurm_alloc.h). */
#include "remote/slurm/slurm_alloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/slurm/slurm_jobinfo.h"

static long job_after(const char *text, const char *mark)
{
    const char *p = strstr(text, mark);
    if (!p)
        return -1;
    p += strlen(mark);
    if (!isdigit((unsigned char)*p))
        return -1;
    /* Slurm's job ids are 32-bit: a longer number is not an id we could scancel later. */
    errno = 0;
    long id = strtol(p, NULL, 10);
    return errno == ERANGE || id > 4294967295L ? -1 : id;
}

long slurm_alloc_parse_granted(const char *text)
{
    return job_after(text, "Granted job allocation ");
}

long slurm_alloc_parse_queued(const char *text)
{
    long id = job_after(text, "Granted job allocation ");
    return id >= 0 ? id : job_after(text, "Pending job allocation ");
}

int slurm_alloc_machine_gpus(const Cluster *cl, size_t machine)
{
    const MachineType *t = cluster_machine_type(cl, machine);
    int g = 0;
    for (size_t d = 0; d < t->n_devices; d++)
        g += t->devices[d].kind == DEVICE_GPU;
    return g;
}

size_t slurm_alloc_gpu_groups(const Cluster *cl, int *counts)
{
    size_t groups = 0;
    for (size_t m = 0; m < cl->n_machines; m++) {
        int g = slurm_alloc_machine_gpus(cl, m), seen = 0;
        for (size_t k = 0; k < groups; k++)
            seen |= counts[k] == g;
        if (!seen && groups < SLURM_ALLOC_MAX_GROUPS)
            counts[groups++] = g;
    }
    return groups;
}

static int valid_job_id(const char *id)
{
    if (!id[0])
        return 0;
    for (const char *p = id; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '_')
            return 0;
    return 1;
}

int slurm_alloc_check_existing(const char *job, const char *squeue_out, const Cluster *cl,
                               Error *err)
{
    char lists[SLURM_ALLOC_MAX_GROUPS][1024];
    size_t n = 0;
    for (const char *p = squeue_out ? squeue_out : ""; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char line[1100];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p += len + (end != NULL);
        if (!line[0])
            continue;
        char *bar = strchr(line, '|');
        if (!bar)
            return error_set(err, "SLURM_JOB_ID=%s: squeue's line '%.80s': expected STATE|NODES",
                             job, line);
        *bar = 0;
        if (strcmp(line, "RUNNING") != 0) {
            error_set(err,
                      "SLURM_JOB_ID=%s: the job is %.24s in Slurm, not RUNNING: expected "
                      "the allocation tunedeck runs in (unset SLURM_JOB_ID and tunedeck "
                      "makes its own)",
                      job, line);
            return error_mark(err, ERROR_INPUT);
        }
        if (n < SLURM_ALLOC_MAX_GROUPS)
            snprintf(lists[n++], sizeof lists[0], "%s", bar + 1);
    }
    if (!n) {
        error_set(err,
                  "SLURM_JOB_ID=%s: squeue lists no such job (it ended, or the id is not one): "
                  "expected the allocation "
                  "tunedeck runs in (unset SLURM_JOB_ID and tunedeck makes its own)",
                  job);
        return error_mark(err, ERROR_INPUT);
    }
    char missing[256] = "", held[256] = "";
    for (size_t k = 0; k < n; k++)
        snprintf(held + strlen(held), sizeof held - strlen(held), "%s%s", k ? "," : "", lists[k]);
    size_t n_missing = 0;
    for (size_t m = 0; m < cl->n_machines; m++) {
        int in = 0;
        for (size_t k = 0; k < n && !in; k++)
            in = slurm_nodelist_contains(lists[k], cl->machines[m].name, NULL) == 1;
        if (in)
            continue;
        if (n_missing++ < 8)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     n_missing > 1 ? "," : "", cl->machines[m].name);
    }
    if (!n_missing)
        return 0;
    error_set(err,
              "SLURM_JOB_ID=%s: its allocation holds %s, not %s%s of the inventory's machines "
              "(every usable node of its partition): expected an allocation of all of them "
              "(salloc or sbatch with --nodelist), a partition that has only its nodes, or "
              "SLURM_JOB_ID unset (tunedeck makes its own)",
              job, held[0] ? held : "no node", missing, n_missing > 8 ? ",..." : "");
    return error_mark(err, ERROR_INPUT);
}

int slurm_alloc_open(SlurmCtl *c, const Cluster *cl, const char *partition, const char *existing,
                     double wait_s, int (*stop)(void *), void *stop_ud, SlurmAlloc *a, Error *err)
{
    memset(a, 0, sizeof *a);
    if (existing && existing[0]) {
        if (!valid_job_id(existing)) {
            error_set(err, "SLURM_JOB_ID: expected a job number, found '%s'", existing);
            return error_mark(err, ERROR_INPUT); /* exit 3, as every other SLURM_JOB_ID refusal */
        }
        /* A stale SLURM_JOB_ID (left in the shell after its allocation ended), or one of
         * other nodes than the inventory's, would fail every trial of the budget: checked
         * once, before the first. */
        const char *argv[] = {"squeue", "-h", "-j", existing, "-o", "%T|%N", NULL};
        char *out = NULL;
        int rc = slurm_ctl_run(c, argv, &out, err);
        if (rc > 0 && strstr(err->msg, "Invalid job id")) {
            char said[200];
            snprintf(said, sizeof said, "%s", err->msg);
            error_set(err,
                      "SLURM_JOB_ID=%s: Slurm has no such job (squeue: %s): expected the "
                      "allocation tunedeck runs in (unset SLURM_JOB_ID and tunedeck makes "
                      "its own)",
                      existing, said);
            error_mark(err, ERROR_INPUT);
        } else if (rc != 0) {
            error_prefix(err, "SLURM_JOB_ID=%s: squeue", existing);
        }
        rc = rc == 0 ? slurm_alloc_check_existing(existing, out, cl, err) : -1;
        free(out);
        if (rc < 0)
            return -1;
        snprintf(a->job_id, sizeof a->job_id, "%s", existing);
        return 0;
    }
    /* One component per GPU count, in the order the counts first appear among the
     * machines (the launcher finds each node's component by the same rule). */
    int counts[SLURM_ALLOC_MAX_GROUPS];
    size_t groups = slurm_alloc_gpu_groups(cl, counts);
    if (!groups)
        return error_set(err, "the session's allocation: the inventory has no machines");
    if (groups > SLURM_ALLOC_MAX_GROUPS - 1)
        return error_set(err, "the session's allocation: more than %d GPU counts per node",
                         SLURM_ALLOC_MAX_GROUPS - 1);
    const char **argv = calloc(8 + groups * 8, sizeof *argv);
    char **owned = calloc(groups * 4 + 4, sizeof *owned);
    if (!argv || !owned)
        abort();
    size_t n = 0, o = 0;
    argv[n++] = "salloc";
    argv[n++] = "--no-shell";
    owned[o] = malloc(64);
    snprintf(owned[o], 64, "--immediate=%.0f", wait_s > 1 ? wait_s : 1);
    argv[n++] = owned[o++];
    owned[o] = malloc(64);
    snprintf(owned[o], 64, "--job-name=tunedeck-tune-%ld", (long)getpid());
    argv[n++] = owned[o++];
    for (size_t g = 0; g < groups; g++) {
        size_t cap = 16, k = 0;
        for (size_t i = 0; i < cl->n_machines; i++)
            cap += strlen(cl->machines[i].name) + 1;
        char *list = calloc(1, cap);
        if (!list)
            abort();
        for (size_t i = 0; i < cl->n_machines; i++)
            if (slurm_alloc_machine_gpus(cl, i) == counts[g]) {
                snprintf(list + strlen(list), cap - strlen(list), "%s%s", k ? "," : "",
                         cl->machines[i].name);
                k++;
            }
        if (g)
            argv[n++] = ":";
        argv[n++] = "--exclusive";
        owned[o] = malloc(cap + 16);
        snprintf(owned[o], cap + 16, "--nodelist=%s", list);
        argv[n++] = owned[o++];
        free(list);
        owned[o] = malloc(32);
        snprintf(owned[o], 32, "--nodes=%zu", k);
        argv[n++] = owned[o++];
        if (counts[g] > 0) {
            owned[o] = malloc(32);
            snprintf(owned[o], 32, "--gres=gpu:%d", counts[g]);
            argv[n++] = owned[o++];
        }
        if (partition && partition[0]) {
            argv[n++] = "--partition";
            argv[n++] = partition;
        }
    }
    argv[n] = NULL;
    /* stop: the operator's Ctrl-C or SIGTERM, which waited for salloc's own end before
     * (up to command_timeout_s less 5 s, in silence) */
    int rc = slurm_ctl_run_stoppable(c, argv, NULL, stop, stop_ud, slurm_alloc_parse_queued, err);
    int stopped = rc != 0 && stop && stop(stop_ud);
    int cut = slurm_ctl_last_cut(c); /* before the scancel below, a command of its own */
    for (size_t i = 0; i < o; i++)
        free(owned[i]);
    free(owned);
    free(argv);
    if (rc != 0) {
        /* salloc queues the job before it waits. Cut by our timeout it leaves it pending, to
         * start once the nodes free up and hold them, whole, with no one to release them: the
         * job is cancelled (on a login node, after salloc there was interrupted: cut, it ran
         * on there till its --immediate). Ended by its own --immediate, salloc has revoked it
         * already (the scancel then finds nothing). */
        char said[512];
        snprintf(said, sizeof said, "%s", slurm_ctl_last_stderr(c));
        long queued = slurm_alloc_parse_queued(said);
        if (queued >= 0) {
            char job[24];
            snprintf(job, sizeof job, "%ld", queued);
            const char *cancel[] = {"scancel", job, NULL};
            Error ignored;
            slurm_ctl_run(c, cancel, NULL, &ignored);
        }
        if (stopped) {
            char job[48] = "";
            if (queued >= 0)
                snprintf(job, sizeof job, " (job %ld, which it had queued, is cancelled)", queued);
            error_set(err, "the session's allocation: stopped while salloc waited for it%s", job);
            return error_mark(err, ERROR_REMOTE);
        }
        if (queued >= 0 && slurm_alloc_parse_granted(said) == queued) {
            /* granted, and yet the run failed (a login node's pid line that was none) */
            char why[ERROR_MSG_MAX];
            snprintf(why, sizeof why, "%s", err->msg);
            return error_set(err,
                             "the session's allocation: %s (job %ld, which salloc was granted, "
                             "is cancelled)",
                             why, queued);
        }
        if (queued >= 0 && (rc < 0 || strstr(said, "queued and waiting for resources"))) {
            /* The controller answered: it queued the job. salloc's own words when its
             * --immediate ends are "Unable to allocate resources: Connection timed out". */
            char within[96] = "in time";
            if (rc < 0 && cut == 2)
                snprintf(within, sizeof within,
                         "in time (salloc, cut by the command's timeout, was interrupted there)");
            if (rc > 0)
                snprintf(within, sizeof within, "within %.0f s (salloc --immediate)",
                         wait_s > 1 ? wait_s : 1);
            error_set(err,
                      "the session's allocation: Slurm did not start it %s: job %ld waited for "
                      "the inventory's nodes, busy with other jobs (squeue -w NODES shows "
                      "them), and was cancelled; try again once they are free, or wait longer "
                      "with the inventory's \"slurm\": {\"command_timeout_s\": S} (salloc "
                      "waits a little less)",
                      within, queued);
            return error_mark(err, ERROR_REMOTE);
        }
        return error_prefix(err, "the session's allocation");
    }
    long id = slurm_alloc_parse_granted(slurm_ctl_last_stderr(c));
    if (id < 0)
        return error_set(err, "salloc granted no allocation it named (it said: %.200s)",
                         slurm_ctl_last_stderr(c));
    if (stop && stop(stop_ud)) {
        /* Granted as the stop came (salloc --no-shell ends as soon as it is): the session
         * will not run, so its allocation is not handed on to a journal and a close that
         * follow, but cancelled now, as a job still queued is. */
        SlurmAlloc granted = {.owned = 1};
        snprintf(granted.job_id, sizeof granted.job_id, "%ld", id);
        snprintf(granted.name, sizeof granted.name, "tunedeck-tune-%ld", (long)getpid());
        if (slurm_alloc_cancel(c, &granted, err) < 0)
            return -1; /* err names the job and the scancel that releases it */
        error_set(err,
                  "the session's allocation: stopped while salloc waited for it (job %ld, "
                  "granted as it stopped, is cancelled)",
                  id);
        return error_mark(err, ERROR_REMOTE);
    }
    snprintf(a->job_id, sizeof a->job_id, "%ld", id);
    a->owned = 1;
    a->het = groups > 1;
    snprintf(a->name, sizeof a->name, "tunedeck-tune-%ld", (long)getpid());
    return 0;
}

SlurmCancelOutcome slurm_alloc_cancel_outcome(int rc, const char *err_text, const char *id,
                                              int verbose)
{
    static const char said[] = "Terminating job ";
    size_t n = strlen(id);
    /* slurmctld's refusal comes after the "Terminating job" line (one completing: "Job/step
     * already completing or completed"), so a named job counts only without one */
    char refused[96];
    snprintf(refused, sizeof refused, "Kill job error on job id %s:", id);
    for (const char *p = err_text; !strstr(err_text, refused) && (p = strstr(p, said)); p++) {
        const char *q = p + strlen(said);
        if (strncmp(q, id, n) == 0 && (q[n] == 0 || q[n] == '\n' || q[n] == ' '))
            return SLURM_CANCEL_SENT;
    }
    if (strstr(err_text, "Invalid job id specified") ||
        strstr(err_text, "already completing or completed"))
        return SLURM_CANCEL_GONE;
    if (rc != 0)
        return SLURM_CANCEL_REFUSED;
    /* Exit 0 without -v is the only word of a cancel; under -v with --me and --name, no
     * "Terminating job" means no job of ours matched. */
    return verbose ? SLURM_CANCEL_GONE : SLURM_CANCEL_SENT;
}

const char *slurm_alloc_release_hint(const SlurmCtl *c, const char *job_id, char *buf, size_t size)
{
    const char *where = slurm_ctl_where(c);
    int here = strcmp(where, "here") == 0;
    snprintf(buf, size, "release it with `scancel %s`%s%s", job_id, here ? "" : " on ",
             here ? "" : where);
    return buf;
}

int slurm_alloc_left_error(SlurmCtl *c, const SlurmAlloc *a, const char *why, Error *err)
{
    /* Nothing else will: the allocation has no time limit of its own, so it holds every node
     * of the inventory, whole, until the partition's. */
    char hint[SLURM_ALLOC_HINT_MAX];
    error_set(err,
              "the session's allocation, Slurm job %s (%s), was not released: %s; it holds the "
              "inventory's nodes until its time limit: %s",
              a->job_id, a->name[0] ? a->name : "tunedeck's", why,
              slurm_alloc_release_hint(c, a->job_id, hint, sizeof hint));
    return error_mark(err, ERROR_REMOTE);
}

int slurm_alloc_cancel(SlurmCtl *c, const SlurmAlloc *a, Error *err)
{
    if (!a->owned || !a->job_id[0])
        return 0;
    const char *argv[] = {"scancel", a->job_id, NULL};
    Error why;
    memset(&why, 0, sizeof why);
    int run = slurm_ctl_run(c, argv, NULL, &why);
    if (run < 0 || slurm_alloc_cancel_outcome(run, slurm_ctl_last_stderr(c), a->job_id, 0) ==
                       SLURM_CANCEL_REFUSED)
        return slurm_alloc_left_error(c, a, why.msg, err);
    return 0;
}

int slurm_alloc_close(SlurmCtl *c, SlurmAlloc *a, Error *err)
{
    int rc = slurm_alloc_cancel(c, a, err);
    memset(a, 0, sizeof *a);
    return rc;
}

int slurm_alloc_release_left(SlurmCtl *c, const char *job_id, const char *name, Error *err)
{
    if (!valid_job_id(job_id))
        return error_set(err, "job id '%s': expected a Slurm job id", job_id);
    char byname[80];
    snprintf(byname, sizeof byname, "--name=%s", name);
    const char *argv[] = {"scancel", "-v", "--me", byname, job_id, NULL};
    Error why;
    memset(&why, 0, sizeof why);
    int run = slurm_ctl_run(c, argv, NULL, &why);
    if (run < 0) {
        *err = why;
        return -1;
    }
    switch (slurm_alloc_cancel_outcome(run, slurm_ctl_last_stderr(c), job_id, 1)) {
    case SLURM_CANCEL_SENT:
        return 1;
    case SLURM_CANCEL_GONE:
        return 0;
    default:
        *err = why;
        return -1;
    }
}
