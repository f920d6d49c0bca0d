/* Ranks of a schedule: one per device with inputs on a worker machine, numbered machine by
 * machine, with local ranks and local batches. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/ranks.h"
#include "tests/support/fixtures.h"

static Cluster *c;
static Schedule *s;

static void setup(void)
{
    const char *inv =
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"cpu\", \"kind\": \"cpu\"}, {\"id\": \"gpu0\", \"kind\": \"gpu\"},"
        "{\"id\": \"gpu1\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"m[0-2]\", \"host\": \"10.0.0.[1-3]\", \"type\": \"t\"}]}";
    c = fixture_cluster_json(inv);
    s = fixture_schedule(c, 100);
    s->worker[0] = s->ps[0] = 1;
    s->ps[1] = 1; /* a PS-only machine has no rank */
    s->worker[2] = 1;
    s->inputs[0] = 10; /* m0 cpu */
    s->inputs[2] = 50; /* m0 gpu1 */
    s->inputs[7] = 40; /* m2 gpu0 */
}

static void teardown(void)
{
    schedule_free(s);
    cluster_free(c);
}

TestSuite(ranks, .init = setup, .fini = teardown);

Test(ranks, one_rank_per_device_with_inputs_in_machine_order)
{
    Rank *r;
    size_t n;
    Error err;
    cr_assert_eq(ranks_from_schedule(s, &r, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert(r[0].rank == 0 && r[0].machine == 0 && r[0].device == 0 && r[0].local_batch == 10);
    cr_assert(r[1].rank == 1 && r[1].machine == 0 && r[1].device == 2 && r[1].local_batch == 50);
    cr_assert(r[2].rank == 2 && r[2].machine == 2 && r[2].device == 7 && r[2].local_batch == 40);
    cr_assert(r[0].local_rank == 0 && r[1].local_rank == 1 && r[2].local_rank == 0);
    cr_assert(r[0].local_world == 2 && r[1].local_world == 2 && r[2].local_world == 1);
    free(r);
}

Test(ranks, local_batches_sum_to_the_global_batch)
{
    Rank *r;
    size_t n;
    Error err;
    cr_assert_eq(ranks_from_schedule(s, &r, &n, &err), 0, "%s", err.msg);
    int sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += r[i].local_batch;
    cr_assert_eq(sum, s->job.batch);
    free(r);
}

Test(ranks, a_schedule_without_inputs_has_no_ranks)
{
    for (size_t d = 0; d < c->n_devices; d++)
        s->inputs[d] = 0;
    Rank *r = (Rank *)1;
    size_t n = 1;
    Error err;
    cr_assert_eq(ranks_from_schedule(s, &r, &n, &err), -1);
    cr_assert_null(r);
    cr_assert_eq(n, 0);
    cr_assert(strstr(err.msg, "no device any inputs"), "%s", err.msg);
}
