/* The worker as a training job for the live scheduler (see trainjob.h). */
#include "tools/worker/trainjob.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/secret.h"
#include "core/model/protocol.h"
#include "core/model/schedule_cluster.h"
#include "tools/worker/checkpoint.h"
#include "tools/worker/sgd_local.h"

typedef struct {
    const TrainJobOptions *opts;
    const SgdPlan *plan;
    uint64_t first_step, examples_base;
    double last_print_s;
    uint64_t last_print_examples;
    const char *checkpoint;
} JobCtx;

static uint64_t job_examples(const JobCtx *j, uint64_t step)
{
    return j->examples_base + (step - j->first_step) * (uint64_t)j->plan->batch;
}

static void print_progress(JobCtx *j, uint64_t step, double loss)
{
    double now = clock_now_s();
    uint64_t ex = job_examples(j, step);
    double rate =
        now > j->last_print_s ? (double)(ex - j->last_print_examples) / (now - j->last_print_s) : 0;
    TrialEvent ev = {.kind = EVENT_PROGRESS,
                     .step = (long)step,
                     .epoch = (double)ex / (double)j->plan->n_examples,
                     .loss = loss,
                     .examples_per_s = rate};
    char *line = protocol_format(&ev);
    printf("%s\n", line);
    fflush(stdout);
    free(line);
    j->last_print_s = now;
    j->last_print_examples = ex;
}

/* Runs in the PS process: progress lines, and the checkpoint when a stop is asked for. A
 * checkpoint that cannot be written fails the job (-1): its exit 0 after a SIGTERM is what
 * tells the live scheduler that the checkpoint is there to resume from. */
static int job_step(void *ud, uint64_t step, double loss, uint32_t examples, const double *p,
                    Error *err)
{
    (void)examples;
    JobCtx *j = ud;
    const TrainJobOptions *o = j->opts;
    int stop = *o->stop || (o->max_steps && step >= j->first_step + (uint64_t)o->max_steps);
    if (stop || step == j->first_step + 1 || clock_now_s() - j->last_print_s >= o->progress_s)
        print_progress(j, step, loss);
    if (!stop) {
        /* The workers wait for this step's parameters meanwhile: the whole job idles, a
         * stand-in job that needs no whole core. In slices of at most 50 ms, each after a
         * look at the stop flag: the SIGTERM may be taken by another thread, whose handler
         * does not cut this thread's sleep short. */
        for (double left = o->step_sleep_s; left > 0 && !*o->stop; left -= 0.05) {
            double slice = left < 0.05 ? left : 0.05;
            nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)(slice * 1e9)}, NULL);
        }
        return 0;
    }
    Checkpoint ck = {.net = j->plan->net,
                     .step = step,
                     .examples = job_examples(j, step),
                     .data_seed = j->plan->data_seed,
                     .loss = loss,
                     .workers = (uint32_t)j->plan->n_workers,
                     .params = (double *)p};
    if (checkpoint_save(j->checkpoint, &ck, err) < 0)
        return -1;
    fprintf(stderr, "tunedeck-worker: checkpoint %s written at step %llu (%u workers)\n",
            j->checkpoint, (unsigned long long)step, ck.workers);
    return 1;
}

int trainjob_run(const TrainJobOptions *o, Error *err)
{
    /* The job is a schedule like any trial's: one PS process and N single-device workers. */
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "protocol", 1);
    cJSON_AddNumberToObject(root, "iterations", 2);
    cJSON_AddNumberToObject(root, "warmup", 0);
    cJSON *job = cJSON_AddObjectToObject(root, "job");
    cJSON_AddStringToObject(job, "name", "tunedeck-worker-job");
    cJSON_AddNumberToObject(job, "model_mb", o->model_mb);
    cJSON_AddNumberToObject(job, "batch", o->batch);
    cJSON_AddNumberToObject(job, "learning_rate", o->learning_rate);
    cJSON *machines = cJSON_AddArrayToObject(root, "machines");
    int per = o->batch / o->gpus, extra = o->batch % o->gpus;
    for (int w = -1; w < o->gpus; w++) {
        cJSON *m = cJSON_CreateObject();
        char name[32];
        snprintf(name, sizeof name, w < 0 ? "job-ps" : "job-w%d", w);
        cJSON_AddStringToObject(m, "name", name);
        cJSON_AddStringToObject(m, "host", "127.0.0.1");
        cJSON_AddStringToObject(m, "type", w < 0 ? "job-ps" : "job-worker");
        cJSON_AddBoolToObject(m, "worker", w >= 0);
        cJSON_AddBoolToObject(m, "ps", w < 0);
        cJSON *devs = cJSON_AddArrayToObject(m, "devices");
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "id", "cpu");
        cJSON_AddNumberToObject(d, "inputs", w < 0 ? 0 : per + (w < extra));
        cJSON_AddItemToArray(devs, d);
        cJSON_AddItemToArray(machines, m);
    }
    Checkpoint ck;
    memset(&ck, 0, sizeof ck);
    int rc = -1;
    /* Every process of a job is a child of this one: a secret made here reaches them all by
     * fork and never leaves this host's memory. */
    unsigned char secret[SECRET_BYTES];
    Cluster *c = schedule_cluster_from_json(root, "job", err);
    Schedule *s = c ? schedule_from_json(root, c, "job", err) : NULL;
    SgdPlan plan;
    memset(&plan, 0, sizeof plan);
    if (!s || schedule_validate(s, err) < 0 || sgdplan_build(s, &plan, err) < 0 ||
        secret_random(secret, sizeof secret, err) < 0)
        goto out;
    const char *resume = o->resume && o->resume[0] ? o->resume : NULL;
    if (resume) {
        if (checkpoint_load(resume, &ck, err) < 0)
            goto out;
        int same = ck.net.n_layers == plan.net.n_layers;
        for (size_t l = 0; same && l <= plan.net.n_layers; l++)
            same = ck.net.sizes[l] == plan.net.sizes[l];
        if (!same) {
            error_set(err,
                      "%s: the checkpoint's network (%zu parameters) is not the one "
                      "--model-mb %g makes (%zu parameters)",
                      resume, ck.net.n_params, o->model_mb, plan.net.n_params);
            error_mark(err, ERROR_INPUT); /* the file does not fit this job: bad input */
            goto out;
        }
        fprintf(stderr,
                "tunedeck-worker: resuming %s at step %llu on %d workers (it was "
                "written by %u)\n",
                resume, (unsigned long long)ck.step, o->gpus, ck.workers);
    }
    const char *ckpt = o->checkpoint ? o->checkpoint : resume ? resume : "tunedeck-worker.ckpt";
    if (checkpoint_check_writable(ckpt, err) < 0) { /* now, not after the training */
        error_prefix(err, "--checkpoint");
        goto out;
    }
    JobCtx j = {.opts = o,
                .plan = &plan,
                .first_step = ck.step,
                .examples_base = ck.examples,
                .last_print_s = clock_now_s(),
                .last_print_examples = ck.examples,
                .checkpoint = ckpt};
    SgdLocalConfig lc = {.base = {.plan = &plan,
                                  .schedule = s,
                                  .init_params = ck.params,
                                  .first_step = ck.step,
                                  .examples_base = ck.examples,
                                  .connect_timeout_s = o->connect_timeout_s,
                                  .secret = secret,
                                  .log = o->log,
                                  .on_step = job_step,
                                  .step_userdata = &j},
                         .stop = o->stop};
    rc = sgd_local_run(&lc, stdout, err);
out:
    explicit_bzero(secret, sizeof secret);
    checkpoint_clear(&ck);
    sgdplan_clear(&plan);
    schedule_free(s);
    cluster_free(c);
    cJSON_Delete(root);
    return rc;
}
