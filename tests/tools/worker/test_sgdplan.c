#include <cJSON.h>
#include <criterion/criterion.h>
#include <string.h>

#include "core/model/schedule_cluster.h"
#include "tools/worker/sgdplan.h"

static const char *SCHED =
    "{\"protocol\": 1, \"iterations\": 4, \"warmup\": 1,"
    " \"job\": {\"name\": \"t\", \"model_mb\": 0.1, \"batch\": 30, \"classes\": 4},"
    " \"machines\": ["
    "  {\"name\": \"a\", \"host\": \"10.0.0.1\", \"type\": \"big\", \"worker\": true, \"ps\": true,"
    "   \"devices\": [{\"id\": \"cpu\", \"inputs\": 10}, {\"id\": \"gpu0\", \"inputs\": 5}]},"
    "  {\"name\": \"b\", \"type\": \"small\", \"worker\": false, \"ps\": true,"
    "   \"devices\": [{\"id\": \"cpu\", \"inputs\": 0}]},"
    "  {\"name\": \"c\", \"type\": \"small\", \"worker\": true, \"ps\": false,"
    "   \"devices\": [{\"id\": \"cpu\", \"inputs\": 15}]}]}";

Test(schedule_cluster, a_schedule_object_describes_its_cluster)
{
    cJSON *root = cJSON_Parse(SCHED);
    Error e;
    Cluster *c = schedule_cluster_from_json(root, "stdin", &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_eq(c->n_machines, 3);
    cr_assert_eq(c->n_types, 2);
    cr_assert_eq(c->n_devices, 4);
    cr_assert_str_eq(c->machines[0].host, "10.0.0.1");
    cr_assert_str_eq(c->machines[1].host, "b"); /* no host: the name */
    cr_assert_eq(c->types[0].devices[1].kind, DEVICE_GPU);
    Schedule *s = schedule_from_json(root, c, "stdin", &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(schedule_validate(s, &e), 0, "%s", e.msg);

    SgdPlan p;
    cr_assert_eq(sgdplan_build(s, &p, &e), 0, "%s", e.msg);
    cr_assert_eq(p.n_workers, 2);
    cr_assert_eq(p.worker_machine[1], 2);
    cr_assert_eq(p.machine_rank[1], -1);
    cr_assert_eq(p.n_shards, 2);
    cr_assert_eq(p.shard_machine[1], 1);
    cr_assert_eq(p.shard_lo[0], 0);
    cr_assert_eq(p.shard_hi[1], p.net.n_params); /* shards cover every parameter */
    cr_assert_eq(p.shard_hi[0], p.shard_lo[1]);
    cr_assert(p.shard_hi[0] - p.shard_lo[0] - (p.shard_hi[1] - p.shard_lo[1]) + 1 <= 2);
    cr_assert_eq(p.device_offset[0], 0);  /* a/cpu takes examples 0..9 */
    cr_assert_eq(p.device_offset[1], 10); /* a/gpu0 10..14 */
    cr_assert_eq(p.device_offset[3], 15); /* c/cpu 15..29 */
    cr_assert_eq(p.classes, 4);
    double bytes = 8.0 * (double)p.net.n_params;
    cr_assert(bytes > 0.5e5 && bytes < 1.5e5, "%g bytes for 0.1 MB", bytes);
    sgdplan_clear(&p);
    schedule_free(s);
    cluster_free(c);
    cJSON_Delete(root);
}

static void reject(const char *text, const char *frag)
{
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    Error e;
    Cluster *c = schedule_cluster_from_json(root, "stdin", &e);
    cr_assert_null(c, "accepted: %s", text);
    cr_assert(strstr(e.msg, frag), "message '%s' lacks '%s'", e.msg, frag);
    cJSON_Delete(root);
}

Test(schedule_cluster, bad_machines_are_refused_with_the_field_named)
{
    reject("{\"machines\": 3}", "machines");
    reject("{\"machines\": []}", "at least one machine");
    reject("{\"machines\": [{\"host\": \"x\", \"devices\": [{\"id\": \"cpu\"}]}]}", "name");
    reject("{\"machines\": [{\"name\": \"a\", \"devices\": []}]}", "at least one device");
    reject("{\"machines\": [{\"name\": \"a\", \"devices\": [{\"id\": \"cpu\"}]},"
           " {\"name\": \"a\", \"devices\": [{\"id\": \"cpu\"}]}]}",
           "appears twice");
    reject("{\"machines\": [{\"name\": \"a\", \"type\": \"t\", \"devices\": [{\"id\": \"cpu\"}]},"
           " {\"name\": \"b\", \"type\": \"t\", \"devices\": [{\"id\": \"gpu0\"}]}]}",
           "machines[1]: field 'devices': expected machine 'b'");
}
