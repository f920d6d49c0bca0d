#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"

#include "remote/slurm/slurm_watch.h"

/* Without a controller every round fails: the watch backs off all the same, and never
 * asks more often than its minimum interval. */
Test(slurm_watch, backs_off_when_the_controller_does_not_answer)
{
    setenv("PATH", "/nonexistent", 1);
    SlurmCtlOptions o = {.timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    SlurmWatch *w = slurm_watch_new(c, NULL, 0.1, 8);
    cr_assert_eq(slurm_watch_poll(w, 1000, &e), -1);
    cr_assert(strstr(e.msg, "sinfo"), "%s", e.msg);
    cr_assert_float_eq(slurm_watch_interval_s(w), 4, 1e-9, "the minimum is 2 s, doubled");
    cr_assert_eq(slurm_watch_poll(w, 2000, &e), 0, "not due yet");
    cr_assert_eq(slurm_watch_poll(w, 5000, &e), -1);
    cr_assert_float_eq(slurm_watch_interval_s(w), 8, 1e-9);
    cr_assert_eq(slurm_watch_poll(w, 13000, &e), -1);
    cr_assert_float_eq(slurm_watch_interval_s(w), 8, 1e-9, "capped");
    cr_assert_eq(slurm_ctl_calls(c), 3, "one failed call per round");
    slurm_watch_free(w);
    slurm_ctl_free(c);
}

/* Commands named sinfo and squeue that print the captured Slurm 22.05 output, first on PATH:
 * the watch's round on a caller's loop, from start to parsed state. */
static char *fake_slurm_dir(const char *sinfo_fixture)
{
    static char dir[] = "/tmp/td-slurmwatch.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    const char *names[] = {"sinfo", "squeue"};
    const char *fixtures[] = {sinfo_fixture, "squeue-22.05.txt"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fprintf(f, "#!/bin/sh\nexec /bin/cat '%s/tests/fixtures/slurm/%s'\n", TUNEDECK_SOURCE_DIR,
                fixtures[i]);
        fclose(f);
        chmod(path, 0755);
    }
    return dir;
}

static int round_ended(void *ctx)
{
    return !slurm_watch_busy(ctx) && slurm_watch_rounds(ctx) > 0;
}

static size_t watch_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return slurm_watch_pollfds(ctx, fds, cap, deadline_ms);
}

static void watch_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    slurm_watch_step(ctx, fds, n, now_ms);
}

Test(slurm_watch, a_round_on_the_callers_loop_reads_nodes_and_queue)
{
    char *dir = fake_slurm_dir("sinfo-22.05.txt");
    setenv("PATH", dir, 1);
    SlurmCtlOptions o = {.timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmWatch *w = slurm_watch_new(c, NULL, 2, 8);
    cr_assert_eq(slurm_watch_take(w, &e), -2, "no round has ended yet");
    evloop_run_source(watch_pollfds, watch_step, w, round_ended, w, clock_now_ms() + 10000);
    cr_assert_eq(slurm_watch_take(w, &e), 1, "%s", e.msg);
    cr_assert_eq(slurm_watch_take(w, &e), -2, "said once");
    cr_assert_eq(slurm_watch_nodes(w)->n, 4);
    cr_assert_eq(slurm_watch_queue(w)->n, 3);
    cr_assert_eq(slurm_watch_queue(w)->v[0].reason[0], 'R');
    cr_assert_eq(slurm_ctl_calls(c), 2, "one sinfo and one squeue");
    cr_assert_eq(slurm_watch_down_since_ms(w), 0);
    cr_assert_float_eq(slurm_watch_interval_s(w), 2, 1e-9, "a change: the shortest wait");
    slurm_watch_free(w);
    slurm_ctl_free(c);
    char path[300];
    snprintf(path, sizeof path, "%s/sinfo", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/squeue", dir);
    unlink(path);
    rmdir(dir);
}

Test(slurm_watch, a_round_that_fails_on_the_loop_keeps_the_state_and_says_when_it_began)
{
    setenv("PATH", "/nonexistent", 1);
    SlurmCtlOptions o = {.timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmWatch *w = slurm_watch_new(c, NULL, 2, 8);
    evloop_run_source(watch_pollfds, watch_step, w, round_ended, w, clock_now_ms() + 10000);
    cr_assert_eq(slurm_watch_take(w, &e), -1);
    cr_assert(strstr(e.msg, "sinfo"), "%s", e.msg);
    cr_assert_gt(slurm_watch_down_since_ms(w), 0);
    cr_assert_eq(slurm_ctl_calls(c), 1, "squeue is not asked after sinfo failed");
    cr_assert_float_eq(slurm_watch_interval_s(w), 4, 1e-9, "backed off");
    slurm_watch_free(w);
    slurm_ctl_free(c);
}
