#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/slurm/slurm_queue.h"
#include "tests/support/fixtures.h"

Test(slurm_queue, captured_squeue_with_pending_reason_and_a_bar_in_a_name)
{
    char *text = fixture_read("slurm/squeue-22.05.txt");
    Error e;
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
