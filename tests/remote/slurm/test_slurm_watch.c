#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/readall.h"
#include "remote/slurm/slurm_watch.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

Test(slurm_queue, captured_squeue_with_pending_reason_and_a_bar_in_a_name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/slurm/squeue-22.05.txt", TUNEDECK_SOURCE_DIR);
    Error e;
    char *text = readall_file(path, 0, NULL, &e);
    cr_assert_not_null(text, "%s", e.msg);
    SlurmQueue q;
    cr_assert_eq(slurm_queue_parse(text, "squeue", &q, &e), 0, "%s", e.msg);
    cr_assert_eq(q.n, 3);
    cr_assert_str_eq(q.v[0].state, "PENDING");
    cr_assert_str_eq(q.v[0].reason, "Resources");
    cr_assert_str_eq(q.v[0].nodelist, "");
    cr_assert_str_eq(q.v[1].name, "train|resnet");
    cr_assert_str_eq(q.v[1].nodelist, "n3");
    cr_assert_eq(q.v[2].nodes, 2);
    cr_assert_str_eq(q.v[2].gres, "gres:gpu:1");
    slurm_queue_clear(&q);
    free(text);
    cr_assert_eq(slurm_queue_parse("12|root|RUNNING\n", "squeue", &q, &e), -1);
    cr_assert(strstr(e.msg, "squeue: line 1"), "%s", e.msg);
}

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
