/* The live Slurm backend's test set-up (tests/support/liveslurm_fixture.h). */
#include "tests/support/liveslurm_fixture.h"
#include "core/base/clock.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/standins.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fixture_log_line(void *ud, const char *line)
{
    FixtureLog *log = ud;
    size_t len = strlen(log->text);
    snprintf(log->text + len, log->cap - len, "%s\n", line);
}

void liveslurm_fixture_setup(char *dir, const char *const (*table)[2], size_t n, FixtureLog *log)
{
    standins_install(dir, table, n);
    char path[512];
    snprintf(path, sizeof path, "%s/jobs", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fclose(f);
    log->text[0] = 0;
}

static Backend backend_with(double timeout_s, LiveSlurmOptions o)
{
    SlurmCtlOptions co = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = timeout_s};
    Error err;
    Backend b;
    b.ctl = slurm_ctl_new(&co, &err);
    cr_assert_not_null(b.ctl, "%s", err.msg);
    o.ctl = b.ctl;
    o.poll_s = 0.05;
    b.s = liveslurm_new(&o, &err);
    cr_assert_not_null(b.s, "%s", err.msg);
    return b;
}

Backend backend_new(double timeout_s, FixtureLog *log)
{
    return backend_new_pending(timeout_s, log, 0);
}

Backend backend_new_pending(double timeout_s, FixtureLog *log, double pending_say_s)
{
    return backend_with(timeout_s, (LiveSlurmOptions){.pending_say_s = pending_say_s,
                                                      .log = log ? fixture_log_line : NULL,
                                                      .userdata = log});
}

Backend backend_new_grace(double timeout_s, FixtureLog *log, double exit_grace_s)
{
    return backend_with(timeout_s, (LiveSlurmOptions){.exit_grace_s = exit_grace_s,
                                                      .log = log ? fixture_log_line : NULL,
                                                      .userdata = log});
}

void backend_free(Backend *b)
{
    liveslurm_free(b->s);
    slurm_ctl_free(b->ctl);
}

void backend_steps_until(Backend *b, void *run, int (*done)(void *run))
{
    int64_t give_up_ms = clock_now_ms() + 8000;
    while (clock_now_ms() < give_up_ms && !done(run)) {
        LIVERUN_SLURM.tick(b->s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        usleep(10000);
    }
}

LiveRefusal backend_refusal;

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
    backend_refusal = LIVERUN_REFUSED_ONCE;
    return LIVERUN_SLURM.start(b->s, &spec, &backend_refusal, err);
}

void fixture_job_output(const char *dir, const char *name, long id, char *path, size_t cap)
{
    char jobs[512], line[512], job_name[256] = "", folder[600];
    snprintf(jobs, sizeof jobs, "%s/jobs", dir);
    FILE *f = fopen(jobs, "r");
    cr_assert_not_null(f, "%s", jobs);
    long got;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%ld %255s", &got, job_name) == 2 && got == id)
            break;
        else
            job_name[0] = 0;
    fclose(f);
    cr_assert(job_name[0], "no job %ld in %s", id, jobs);
    char idtext[32];
    snprintf(idtext, sizeof idtext, "%ld", id);
    snprintf(folder, sizeof folder, "%s/work/%s", dir, name);
    char *p = liveslurm_output_path(folder, job_name, idtext);
    cr_assert_not_null(p);
    snprintf(path, cap, "%s", p);
    free(p);
}
