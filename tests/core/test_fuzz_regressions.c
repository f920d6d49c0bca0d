/* Inputs the fuzzers (tests/fuzz/) found crashing or misbehaving, each kept as a fixture in
 * tests/fixtures/fuzz/ and checked here by the behaviour that was wrong. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/base/jdupkey.h"
#include "core/model/cluster.h"
#include "core/model/hostrange.h"
#include "core/base/jfield.h"
#include "core/model/schedule.h"
#include "core/sim/simcluster.h"
#include "remote/gpu/nvsmi.h"
#include "tests/support/fixtures.h"

static cJSON *fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/fuzz/%s", TUNEDECK_SOURCE_DIR, name);
    Error err;
    cJSON *j = jfield_parse_file(path, &err);
    cr_assert_not_null(j, "%s", err.msg);
    return j;
}

/* fuzz_schedule: top-level "warmup" >= "iterations" was accepted, so the schedule written
 * back could not be read again (its job refused it) and a trial would measure nothing. */
Test(fuzz_regressions, schedule_with_warmup_covering_every_iteration_is_refused)
{
    Error err;
    SimCluster *sim = simcluster_new("B:googlenet", &err);
    cJSON *j = fixture("schedule-warmup-covers-iterations.json");
    Schedule *s = schedule_from_json(j, simcluster_cluster(sim), "stdin", &err);
    cr_assert_null(s, "accepted a warm-up as long as the trial");
    cr_assert(strstr(err.msg, "stdin: field 'warmup': expected fewer warm-up iterations than "
                              "the 10 iterations, found 10"),
              "%s", err.msg);
    cJSON_Delete(j);
    simcluster_free(sim);
}

/* fuzz_hostrange (a timeout): names were built by appending each segment to every name so
 * far, so "[0-99999]" followed by a few hundred one-element groups copied gigabytes before
 * anything was checked. Now the size is known before a name is built, and bounded. */
Test(fuzz_regressions, host_pattern_whose_names_would_fill_memory_is_refused_before_expanding)
{
    char **names;
    size_t n;
    Error err;
    cr_assert_eq(hostrange_expand(fixture_text("fuzz/hostrange-names-fill-memory.txt"), &names, &n,
                                  &err),
                 -1);
    cr_assert_null(names);
    cr_assert(strstr(err.msg, "expected at most 33554432 bytes of host names, found 60"), "%s",
              err.msg);
}

Test(fuzz_regressions, host_pattern_with_many_groups_is_expanded_in_order_or_refused)
{
    char **names;
    size_t n;
    Error err;
    cr_assert_eq(hostrange_expand(fixture_text("fuzz/hostrange-many-groups.txt"), &names, &n, &err),
                 -1);
    cr_assert(strstr(err.msg, "empty brackets"), "%s", err.msg);
    /* Its well-formed head: 2 x 2 names, the last group turning fastest. */
    cr_assert_eq(hostrange_expand("n[1-2]oN.r[2-2][1-2]x", &names, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 4);
    cr_assert_str_eq(names[0], "n1oN.r21x");
    cr_assert_str_eq(names[1], "n1oN.r22x");
    cr_assert_str_eq(names[3], "n2oN.r22x");
    hostrange_free(names, n);
}

/* fuzz_cluster and fuzz_simspec (timeouts): machines were appended with a realloc of one more
 * each (quadratic copying under ASan) and each checked against every earlier one for
 * duplicates (quadratic strcmp): "n[0-99999]" took minutes. Now capacity doubles and
 * duplicates are found with one sort, still naming the entry that repeats a name. */
Test(fuzz_regressions, inventory_of_a_hundred_thousand_machines_loads_and_names_duplicates)
{
    Error err;
    cJSON *j = fixture("inventory-100000-machines.json");
    Cluster *c = cluster_from_json(j, "big.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(c->n_machines, 100000);
    cr_assert_str_eq(c->machines[99999].name, "n99999");
    cr_assert_eq(c->n_devices, 100000);
    cluster_free(c);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", "n5");
    cJSON_AddStringToObject(m, "type", "t");
    cJSON_AddItemToArray(cJSON_GetObjectItem(j, "machines"), m);
    cr_assert_null(cluster_from_json(j, "big.json", &err));
    cr_assert(strstr(err.msg, "big.json: machines[1]: field 'name': machine 'n5' appears twice"),
              "%s", err.msg);
    cJSON_Delete(j);
}

Test(fuzz_regressions, generated_simulated_clusters_build_at_every_allowed_size)
{
    SimCluster *s = fixture_sim(fixture_text("fuzz/simspec-generated-cluster.txt"));
    cr_assert_eq(simcluster_cluster(s)->n_machines, 1219);
    simcluster_free(s);
    s = fixture_sim("G100000:googlenet");
    cr_assert_eq(simcluster_cluster(s)->n_machines, 100000);
    simcluster_free(s);
}

/* fuzz_nvsmi: "-100", "nan" and "inf" were taken as known utilizations and memory sizes, so
 * the console would draw a bar of -100 % or NaN; and an index past INT_MAX was truncated. */
Test(fuzz_regressions, nvidia_smi_values_out_of_range_are_refused_not_known)
{
    GpuSample g;
    GpuProcess p;
    Error err;
    const char *line = strchr(fixture_text("fuzz/nvsmi-negative-utilization.csv"), '\n') + 1;
    char second[200];
    snprintf(second, sizeof second, "%.*s", (int)strcspn(line, "\n"), line);
    cr_assert_eq(nvsmi_parse_gpu_line(second, &g, &err), -1, "accepted '%s'", second);
    cr_assert(strstr(err.msg, "utilization.gpu: expected a number in [0, 100]"), "%s", err.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-1, H100, nan, 1, 2", &g, &err), -1);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-1, H100, 5, inf, 2", &g, &err), -1);
    cr_assert_eq(nvsmi_parse_gpu_line("99999999999, GPU-1, H100, 5, 1, 2", &g, &err), -1);
    cr_assert_eq(nvsmi_parse_app_line("12, GPU-1, -5", &p, &err), -1);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-1, H100, [N/A], 1 MiB, 2", &g, &err), 0, "%s",
                 err.msg);
    cr_assert(!g.has_util && g.has_mem_used);
}

/* Found by fuzz_jdupkey: a long key of bytes that are not UTF-8 on the path, each shown as
 * \xHH (four characters), pushed the key out of the 512-byte message. */
Test(fuzz_regressions, jdupkey_a_path_of_bytes_shown_as_escapes_leaves_room_for_the_key)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/fuzz/jdupkey-long-non-utf8-path.json",
             TUNEDECK_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char text[1024];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    cJSON *root = cJSON_ParseWithLength(text, n);
    cr_assert_not_null(root);
    Error err;
    cr_assert_eq(jdupkey_check(root, &err), -1);
    cr_assert_not_null(strstr(err.msg, "...[0]: key \"id\" appears twice; expected each key once "
                                       "per object"),
                       "%s", err.msg);
    cJSON_Delete(root);
}
