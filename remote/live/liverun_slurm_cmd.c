/* What the Slurm backend of the live driver says to Slurm, and how it reads Slurm's answer:
 * the template check, the batch script, sbatch's arguments, the job id, the end in the
 * driver's words (remote/live/liverun_slurm.h). Pure. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/live/liverun_slurm.h"
#include "remote/ssh/shquote.h"

int liveslurm_check(const char *t, int per_host, size_t n_nodes, Error *err)
{
    if (per_host)
        return error_set(err, "\"job_launch\": \"per-host\" is not supported on Slurm: the job "
                              "command runs once, on the allocation's first node (start the "
                              "ranks with srun inside it, or leave job_launch out)");
    /* As for "first-host" over SSH (cluster_parse.c): a script that starts its node's share of
     * the ranks by {node_rank} waits for the other nodes', which nothing starts. With one
     * node no allocation has another, and {node_rank} 0 is true. */
    if (n_nodes > 1 && strstr(t, "{node_rank}"))
        return error_set(err, "job_command: {node_rank} is always 0 on Slurm when the cluster "
                              "has several nodes (%zu here): the job command runs once, on the "
                              "allocation's first node (start the ranks with srun inside it)",
                         n_nodes);
    if (strstr(t, "{gpu_ids}"))
        return error_set(err, "job_command: {gpu_ids} cannot be known on Slurm before it grants "
                              "the GPUs: the job reads CUDA_VISIBLE_DEVICES, which Slurm sets");
    return 0;
}

char *liveslurm_script(const char *t, const char *name, const JobAlloc *a, Error *err)
{
    char *b = NULL;
    size_t len = 0;
    /* The batch shell survives `scancel --signal=TERM --full` (JOBCTL_TERM_TRAP), waits for
     * the job to write its checkpoint, and exits with its status: exit 0 makes the job
     * COMPLETED. A TERM before the job starts ends it there (JOBCTL_TERM_CHECK). */
    /* A copy Slurm requeued (preemption, a failed node) and started again would run the old
     * placement with the old {resume}, and its TERM could write a checkpoint older than the
     * one it resumed from: it ends at once, and tunedeck cancels and resubmits the job
     * (liveslurm_taken). No braces: they would read as a placeholder. */
    int rc = shquote_append_raw(
        &b, &len,
        "#!/bin/sh\n# tunedeck live job\n" JOBCTL_TERM_TRAP "\n"
        "if [ -n \"$SLURM_RESTART_COUNT\" ] && [ \"$SLURM_RESTART_COUNT\" != 0 ]; then\n"
        "    echo \"tunedeck: Slurm requeued this job and started it again (restart "
        "$SLURM_RESTART_COUNT): not run again, tunedeck resubmits it from its checkpoint\"\n"
        "    exit 0\nfi\nTUNEDECK_JOB=");
    if (rc == 0)
        rc = shquote_append(&b, &len, name);
    if (rc == 0)
        rc = shquote_append_raw(&b, &len,
                                "\nexport TUNEDECK_JOB\n"
                                "printf '%s\\n' {hostfile_text} > " JOBCTL_HOSTFILE "\n"
                                JOBCTL_TERM_CHECK "\n");
    if (rc == 0)
        rc = shquote_append_raw(&b, &len, t);
    /* The end, said in the output file the driver reads anyway: it learns the exit status
     * at once instead of from the next scontrol round (a resize restarts sooner). */
    if (rc == 0)
        rc = shquote_append_raw(&b, &len,
                                "\ntunedeck_rc=$?\nprintf '\\n" LIVESLURM_EXIT_MARK
                                "%s %d\\n' \"$SLURM_JOB_ID\" \"$tunedeck_rc\"\n"
                                "exit \"$tunedeck_rc\"\n");
    if (rc < 0) {
        free(b);
        error_set(err, "job: out of memory");
        return NULL;
    }
    char *script = jobctl_command(b, a, err);
    free(b);
    return script;
}

static int push(char ***v, size_t *n, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int push(char ***v, size_t *n, size_t *cap, const char *fmt, ...)
{
    if (*n + 2 > *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        char **grown = realloc(*v, nc * sizeof *grown);
        if (!grown)
            return -1;
        *v = grown;
        *cap = nc;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&(*v)[*n], fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    (*v)[++*n] = NULL;
    return 0;
}

char **liveslurm_sbatch_argv(const char *job_name, const char *dir, const char *partition,
                             const char *const *names, const int *gpus, size_t n,
                             const char *script_path)
{
    char **v = NULL;
    size_t len = 0, cap = 0;
    int rc = push(&v, &len, &cap, "sbatch");
    rc |= push(&v, &len, &cap, "--parsable");
    rc |= push(&v, &len, &cap, "--job-name=%s", job_name);
    rc |= push(&v, &len, &cap, "--chdir=%s", dir);
    char *out = liveslurm_output_path(dir, job_name, "%j");
    rc |= out ? push(&v, &len, &cap, "--output=%s", out) : -1;
    free(out);
    /* One component per distinct GPU count: --gres is per node, so nodes that hold
     * different counts of the job cannot share one (docs/slurm.md: --gpus=N lets Slurm
     * split the total its own way). */
    unsigned char *done = calloc(n ? n : 1, 1);
    if (!done)
        rc = -1;
    size_t comps = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (done[i])
            continue;
        if (comps++)
            rc |= push(&v, &len, &cap, ":");
        char *list = NULL;
        size_t ll = 0, k = 0;
        for (size_t m = i; m < n; m++) {
            if (done[m] || gpus[m] != gpus[i])
                continue;
            done[m] = 1;
            k++;
            rc |= shquote_append_raw(&list, &ll, ll ? "," : "");
            rc |= shquote_append_raw(&list, &ll, names[m]);
        }
        if (partition && partition[0])
            rc |= push(&v, &len, &cap, "--partition=%s", partition);
        rc |= push(&v, &len, &cap, "--nodes=%zu", k);
        rc |= push(&v, &len, &cap, "--nodelist=%s", list ? list : "");
        rc |= push(&v, &len, &cap, "--gres=gpu:%d", gpus[i]);
        free(list);
    }
    free(done);
    rc |= push(&v, &len, &cap, "%s", script_path);
    if (rc) {
        liveslurm_argv_free(v);
        return NULL;
    }
    return v;
}

void liveslurm_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

long liveslurm_parse_jobid(const char *out)
{
    while (*out == ' ' || *out == '\n')
        out++;
    long id = 0;
    int digits = 0;
    for (; *out >= '0' && *out <= '9' && digits < 12; out++, digits++)
        id = id * 10 + (*out - '0');
    if (!digits || !(*out == 0 || *out == ';' || *out == '\n' || *out == '\r'))
        return -1;
    return id;
}

int liveslurm_job_name(char *out, size_t cap, const char *name, unsigned nonce, long n)
{
    int w = snprintf(out, cap, LIVESLURM_NAME_PREFIX "%s.%06x-%ld", name, nonce & 0xffffffu, n);
    return w < 0 || (size_t)w >= cap ? -1 : 0;
}

char *liveslurm_output_path(const char *dir, const char *job_name, const char *id)
{
    const char *tag = strrchr(job_name, '.');
    char *path = NULL;
    if (asprintf(&path, "%s/slurm-%s.%s.out", dir, id, tag ? tag + 1 : job_name) < 0)
        return NULL;
    return path;
}

int liveslurm_named_by(const char *job_name, unsigned nonce)
{
    char own[32];
    snprintf(own, sizeof own, ".%06x-", nonce & 0xffffffu);
    return strncmp(job_name, LIVESLURM_NAME_PREFIX, strlen(LIVESLURM_NAME_PREFIX)) == 0 &&
           strstr(job_name + strlen(LIVESLURM_NAME_PREFIX), own) != NULL;
}

int liveslurm_ours_by_name(const SlurmJobInfo *j, const char *user, unsigned nonce)
{
    return strcmp(j->user, user) == 0 && liveslurm_named_by(j->name, nonce);
}

long liveslurm_parse_lookup(const char *out)
{
    while (*out == ' ' || *out == '\n' || *out == '\r')
        out++;
    if (!*out)
        return -1;
    long id = 0;
    int digits = 0;
    for (; *out >= '0' && *out <= '9' && digits < 12; out++, digits++)
        id = id * 10 + (*out - '0');
    if (!digits || !(*out == 0 || *out == '+' || *out == '\n' || *out == '\r' || *out == ' '))
        return -2;
    return id;
}

void liveslurm_status_text(const SlurmJobInfo *j, int ran, char *out, size_t cap)
{
    const char *sig = j->exit_signal > 0 ? sigabbrev_np(j->exit_signal) : NULL;
    if (strcmp(j->state, "COMPLETED") == 0 || (strcmp(j->state, "FAILED") == 0 && !j->exit_signal))
        snprintf(out, cap, "exited %d", j->exit_code);
    else if (strcmp(j->state, "FAILED") == 0)
        snprintf(out, cap, "killed by SIG%s", sig ? sig : "?");
    else if (strcmp(j->state, "CANCELLED") == 0 && !ran)
        snprintf(out, cap, "cancelled while pending");
    else
        snprintf(out, cap, "slurm: %s (%s)", j->state, j->reason[0] ? j->reason : "no reason");
}

LiveSlurmTaken liveslurm_taken(const SlurmJobInfo *j)
{
    if (j->restarts > 0)
        return LIVESLURM_TAKEN_REQUEUED;
    if (strcmp(j->state, "PREEMPTED") == 0)
        return LIVESLURM_TAKEN_PREEMPTED;
    if (strcmp(j->state, "SUSPENDED") == 0)
        return LIVESLURM_TAKEN_SUSPENDED;
    return LIVESLURM_TAKEN_NONE;
}

int liveslurm_no_controller(const char *e)
{
    static const char *const words[] = {
        "Unable to contact slurm controller",       /* connect failure: slurmctld is down */
        "Socket timed out",                         /* up but too busy to answer */
        "Zero Bytes were transmitted or received",  /* it went away mid-answer */
        "no answer within",                         /* slurm_ctl's own timeout */
        "ssh failed",                               /* the login node (slurm_ctl over SSH) */
    };
    for (size_t i = 0; e && i < sizeof words / sizeof *words; i++)
        if (strstr(e, words[i]))
            return 1;
    return 0;
}

/* ESLURM_ACCOUNTING_POLICY ("Job violates accounting/QOS policy (job submit limit, user's
 * size and/or time limits)") covers limits of two kinds, which slurmctld tells apart only in
 * the reason it sends with the error and sbatch prints first (`sbatch: error:
 * QOSMaxSubmitJobPerUserLimit`; the names are job_reason_string's, as libslurm 22.05 holds
 * them): a count of jobs (MaxSubmitJobs, GrpSubmitJobs: "SubmitJob" in the name) clears as
 * other jobs end; a wall time or CPU-minutes limit does not depend on the size and never
 * clears (tunedeck asks no time); any other QOS or association reason is a size limit
 * (MaxTRESPerJob, MaxNodesPerJob, GrpTRES with DenyOnLimit: slurmctld checks the job alone
 * against it at submission). A job_submit plugin may answer with the same code and words of
 * its own (throttle's, below). No reason named, or words not known: either. */
static LiveRefusal accounting_refusal(const char *e)
{
    /* job_submit/throttle's "Reached jobs per hour limit" (SchedulerParameters=
     * jobs_per_user_per_hour): a count too, of the last hour's submissions */
    if (strstr(e, "SubmitJob") || strstr(e, "jobs per hour"))
        return LIVERUN_REFUSED_FOR_NOW;
    if (strstr(e, "WallDuration") || strstr(e, "Minutes"))
        return LIVERUN_REFUSED_FOR_GOOD;
    for (const char *p = e; (p = strstr(p, "error: ")) != NULL;) {
        p += strlen("error: ");
        if (strncmp(p, "QOS", 3) == 0 || strncmp(p, "Assoc", 5) == 0)
            return LIVERUN_REFUSED_TOO_BIG;
    }
    return LIVERUN_REFUSED_LIMIT;
}

/* Slurm 22.05's words (src/common/slurm_errno.c) for a submission the controller answered
 * and refused, as `sbatch: error: Batch job submission failed: WORDS` quotes them. */
LiveRefusal liveslurm_sbatch_refusal(const char *e)
{
    /* The request itself is wrong for this cluster: it fails the same way every time. */
    static const char *const for_good[] = {
        "Invalid partition name specified",                /* ESLURM_INVALID_PARTITION_NAME */
        "No partition specified or system default partition", /* ..._DEFAULT_PARTITION_NOT_SET */
        "User's group not permitted to use this partition",
        "Access/permission denied",
        "Requested nodes not in this partition",
        "Requested node configuration is not available", /* more GPUs than a node has, ... */
        "Invalid node name specified",
        "Invalid account or account/partition combination specified",
        "Invalid qos specification",
        "Invalid wckey specification",
        "Requested time limit is invalid",
        "Invalid generic resource (gres) specification",
        "Invalid GRES specification",
        "Requested GRES option unsupported",
        "Invalid Trackable RESource (TRES) specification",
        "Memory required by task is not available",
        "Invalid feature specification",
        "Access denied to requested reservation",
        "Requested reservation is invalid",
        "Pathname of a file, directory or other parameter too long",
        "Invalid user id",
        "Invalid group id",
    };
    for (size_t i = 0; e && i < sizeof for_good / sizeof *for_good; i++)
        if (strstr(e, for_good[i]))
            return LIVERUN_REFUSED_FOR_GOOD;
    /* A limit on the job's size: a partition's MaxNodes (EnforcePartLimits=ALL, captured on
     * the harness: tests/fixtures/slurm/sbatch-22.05-too-big.err), MaxCPUsPerNode, a CPU
     * limit. A smaller job may pass. */
    if (e && (strstr(e, "Node count specification invalid") ||
              strstr(e, "More processors requested than permitted")))
        return liveslurm_nodes_reason(e) ? LIVERUN_REFUSED_TOO_MANY_NODES : LIVERUN_REFUSED_TOO_BIG;
    if (e && strstr(e, "Job violates accounting/QOS policy")) {
        LiveRefusal how = accounting_refusal(e);
        return how == LIVERUN_REFUSED_TOO_BIG && liveslurm_nodes_reason(e)
                   ? LIVERUN_REFUSED_TOO_MANY_NODES
                   : how;
    }
    /* Everything else may pass: the controller's own "try again" answers (sbatch retries
     * these itself first, up to 15 times): "Resource temporarily unavailable" (EAGAIN: busy),
     * "Unable to create job record, try again" (the job queue full), "Requested nodes are
     * busy"; a controller in standby ("Slurm backup controller in standby mode", "Controller
     * is in standby mode, try a different controller"); submissions disabled for a while
     * ("System submissions disabled"); and words this list does not know. One more try, and
     * a second refusal in a row fails the job (schedlive_enact.c). The controller that does
     * not answer at all (liveslurm_no_controller) is no refusal: its sbatch is retried with
     * the back-off, however long the outage. */
    return LIVERUN_REFUSED_ONCE;
}

int liveslurm_size_reason(const char *reason)
{
    if (strcmp(reason, "PartitionNodeLimit") == 0)
        return 1;
    if (strncmp(reason, "QOSMax", 6) != 0 && strncmp(reason, "AssocMax", 8) != 0)
        return 0;
    return strstr(reason, "PerJob") && !strstr(reason, "Minutes") && !strstr(reason, "Wall");
}

int liveslurm_nodes_reason(const char *text)
{
    return strstr(text, "PartitionNodeLimit") || strstr(text, "Node count specification invalid") ||
           strstr(text, "MaxNodePerJob");
}

double liveslurm_backoff_s(double poll_s, int fails)
{
    if (fails < 1)
        return poll_s;
    return poll_s * (1 << (fails < 4 ? fails : 4));
}

int liveslurm_id_in(const char *id, const char *const *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ids[i], id) == 0)
            return 1;
    return 0;
}

size_t liveslurm_leftovers(const SlurmJobInfoList *jobs, const char *user,
                           const char *const *ours, size_t n_ours, unsigned nonce, char *ids,
                           size_t cap)
{
    size_t n = 0, used = 0;
    if (cap)
        ids[0] = 0;
    for (size_t i = 0; i < jobs->n; i++) {
        const SlurmJobInfo *j = &jobs->v[i];
        if (j->doubtful ||
            strncmp(j->name, LIVESLURM_NAME_PREFIX, strlen(LIVESLURM_NAME_PREFIX)) != 0 ||
            strcmp(j->user, user) != 0 || slurm_jobinfo_ended(j->state) ||
            (j->het_id[0] && strcmp(j->het_id, j->id) != 0) || liveslurm_named_by(j->name, nonce))
            continue;
        if (liveslurm_id_in(j->id, ours, n_ours))
            continue;
        int w = snprintf(ids + used, used < cap ? cap - used : 0, "%s%s", n ? " " : "", j->id);
        if (w > 0 && used + (size_t)w < cap)
            used += (size_t)w;
        else if (used < cap)
            ids[used] = 0; /* a cut id is not shown */
        n++;
    }
    return n;
}

size_t liveslurm_doubles(const SlurmJobInfoList *jobs, const char *user, const char *job_name,
                         const char *id, char (*out)[32], size_t cap)
{
    size_t n = 0;
    if (!id[0])
        return 0; /* the run has no job yet: any job of that name may be the one it adopts */
    for (size_t i = 0; i < jobs->n; i++) {
        const SlurmJobInfo *j = &jobs->v[i];
        const char *own = j->het_id[0] ? j->het_id : j->id;
        if (j->doubtful || strcmp(j->name, job_name) != 0 || strcmp(j->user, user) != 0 ||
            slurm_jobinfo_ended(j->state) || strcmp(own, j->id) != 0 || strcmp(own, id) == 0)
            continue;
        if (n < cap)
            snprintf(out[n], sizeof out[n], "%s", own);
        n++;
    }
    return n;
}
