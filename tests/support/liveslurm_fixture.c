/* The live Slurm backend's test set-up (tests/support/liveslurm_fixture.h). */
#include "tests/support/liveslurm_fixture.h"
#include "tests/support/ssh_hermetic.h"

#include <criterion/criterion.h>
#include <stdio.h>

Backend backend_new(double timeout_s, LiveLogFn log)
{
    return backend_new_pending(timeout_s, log, 0);
}

Backend backend_new_pending(double timeout_s, LiveLogFn log, double pending_say_s)
{
    SlurmCtlOptions co = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = timeout_s};
    Error err;
    Backend b;
    b.ctl = slurm_ctl_new(&co, &err);
    cr_assert_not_null(b.ctl, "%s", err.msg);
    LiveSlurmOptions o = {
        .ctl = b.ctl, .poll_s = 0.05, .pending_say_s = pending_say_s, .log = log};
    b.s = liveslurm_new(&o, &err);
    cr_assert_not_null(b.s, "%s", err.msg);
    return b;
}

void backend_free(Backend *b)
{
    liveslurm_free(b->s);
    slurm_ctl_free(b->ctl);
}

void *backend_start(Backend *b, const char *dir, const char *name, const char *command_template,
                    Error *err)
{
    JobHost host = {"n1", 1, (int[]){0}};
    JobAlloc a = {.gpus = 1, .hosts = &host, .n_hosts = 1, .master_port = 29500, .resume = ""};
    const char *names[] = {"n1"};
    char job_dir[600];
    snprintf(job_dir, sizeof job_dir, "%s/work", dir);
    LiveRunSpec spec = {.name = name,
                        .job_dir = job_dir,
                        .command_template = command_template,
                        .alloc = &a,
                        .nodes = (int[]){0},
                        .node_names = names};
    return LIVERUN_SLURM.start(b->s, &spec, err);
}
