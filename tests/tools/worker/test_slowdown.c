/* --slowdown specs resolved against a trial's cluster (tools/worker/slowdown.c). */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/schedule_cluster.h"
#include "tools/worker/slowdown.h"

static const char *SCHED =
    "{\"protocol\": 1, \"iterations\": 4, \"warmup\": 1,"
    " \"job\": {\"name\": \"t\", \"model_mb\": 0.1, \"batch\": 30},"
    " \"machines\": ["
    "  {\"name\": \"a\", \"type\": \"big\", \"worker\": true, \"ps\": true,"
    "   \"devices\": [{\"id\": \"cpu\", \"inputs\": 10}, {\"id\": \"gpu0\", \"inputs\": 5}]},"
    "  {\"name\": \"b\", \"type\": \"small\", \"worker\": true, \"ps\": false,"
    "   \"devices\": [{\"id\": \"cpu\", \"inputs\": 15}]}]}";

static Cluster *cluster(void)
{
    cJSON *root = cJSON_Parse(SCHED);
    Error e;
    Cluster *c = schedule_cluster_from_json(root, "stdin", &e);
    cr_assert_not_null(c, "%s", e.msg);
    cJSON_Delete(root);
    return c;
}

Test(slowdown, specs_set_every_device_a_machine_or_one_device)
{
    Cluster *c = cluster();
    SlowdownSpec specs[] = {{"", 2}, {"b", 3}, {"a/gpu0", 4}};
    Error e;
    double *f = slowdown_resolve(specs, 3, c, &e);
    cr_assert_not_null(f, "%s", e.msg);
    cr_assert_eq(f[0], 2);
    cr_assert_eq(f[1], 4);
    cr_assert_eq(f[2], 3);
    free(f);
    cluster_free(c);
}

/* Regression: an unknown name was a failed run (exit 1, "found none"); it is bad input
 * (exit 3, as --machine's), naming what was given and what the schedule has. */
Test(slowdown, an_unknown_machine_is_bad_input_naming_it_and_the_schedules)
{
    Cluster *c = cluster();
    SlowdownSpec specs[] = {{"zz", 2}};
    Error e;
    cr_assert_null(slowdown_resolve(specs, 1, c, &e));
    cr_assert_eq(e.kind, ERROR_INPUT);
    cr_assert(
        strstr(e.msg, "--slowdown zz=2: expected a machine of the schedule (a, b), found 'zz'"),
        "%s", e.msg);
    cluster_free(c);
}

Test(slowdown, an_unknown_device_is_bad_input_naming_it_and_the_machines)
{
    Cluster *c = cluster();
    SlowdownSpec specs[] = {{"a/gpu1", 2}};
    Error e;
    cr_assert_null(slowdown_resolve(specs, 1, c, &e));
    cr_assert_eq(e.kind, ERROR_INPUT);
    cr_assert(strstr(e.msg, "--slowdown a/gpu1=2: expected a device of machine 'a' (cpu, gpu0), "
                            "found 'gpu1'"),
              "%s", e.msg);
    cluster_free(c);
}
