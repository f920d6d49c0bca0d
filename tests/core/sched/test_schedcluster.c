#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sched/catalogue.h"
#include "core/sched/schedcluster.h"
#include "tests/support/fixtures.h"

#define EXAMPLE TUNEDECK_SOURCE_DIR "/examples/sched-mixed-cluster.json"

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/schedcluster-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

Test(schedcluster, the_example_loads_into_a_scheduler)
{
    Error e;
    SchedCluster *c = schedcluster_load(EXAMPLE, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_eq(c->n_groups, 2);
    cr_assert_str_eq(c->groups[0].type, "T4");
    cr_assert_float_eq(c->groups[0].speed, 1.0, 1e-12);
    cr_assert_str_eq(c->groups[1].type, "V100");
    cr_assert_eq(c->groups[1].gpus_per_node, 8);
    Catalogue *cat = fixture_catalogue();
    SchedConfig cfg;
    sched_config_default(&cfg);
    schedcluster_apply(c, &cfg);
    SchedState *s = sched_new(&cfg, cat, &e);
    schedcluster_free(c); /* the state keeps its own copy of the type names */
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(sched_node_count(s), 12);
    cr_assert_str_eq(sched_node_type(s, 11), "V100");
    cr_assert_float_eq(sched_node_speed(s, 11), 1.94, 1e-12);
    sched_free(s);
    catalogue_free(cat);
}

static void refused(const char *text, const char *a, const char *b)
{
    char *path = write_tmp(text);
    Error e;
    cr_assert_null(schedcluster_load(path, &e), "accepted: %s", text);
    cr_assert(strstr(e.msg, path) && strstr(e.msg, a) && (!b || strstr(e.msg, b)), "%s", e.msg);
    /* a bad file is bad input (exit status 3), not a usage error */
    cr_assert_eq(e.kind, ERROR_INPUT, "%s", e.msg);
    unlink(path);
}

Test(schedcluster, a_key_twice_is_refused_with_its_path)
{
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [{\"nodes\": 1, \"gpus_per_node\": "
            "4, \"gpu\": \"T4\", \"nodes\": 8}]}",
            ": node_groups[0]: key \"nodes\" appears twice; expected each key once per object",
            NULL);
}

Test(schedcluster, bad_descriptions_name_the_field)
{
    refused("{\"node_groups\": []}", "gpu_speeds", NULL);
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": []}", "node_groups", "at least one");
    refused("{\"gpu_speeds\": {\"T4\": -1}, \"node_groups\": [{\"nodes\": 1, "
            "\"gpus_per_node\": 4, \"gpu\": \"T4\"}]}",
            "gpu_speeds.T4", "found -1");
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [{\"nodes\": 1, "
            "\"gpus_per_node\": 4, \"gpu\": \"A100\"}]}",
            "node_groups[0].gpu", "A100");
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [{\"nodes\": 0, "
            "\"gpus_per_node\": 4, \"gpu\": \"T4\"}]}",
            "node_groups[0]", "nodes");
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [{\"nodes\": 1, "
            "\"gpus_per_node\": 65, \"gpu\": \"T4\"}]}",
            "gpus_per_node", NULL);
    refused("[1, 2]", "object", NULL);
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [", "malformed", NULL);
}

/* A node group's key the reader does not know ("speed" for the group, "gpus" for
 * gpus_per_node beside it) changed nothing, with nothing said. */
Test(schedcluster, an_unknown_key_of_a_node_group_is_refused_by_name)
{
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [{\"nodes\": 1, \"gpus_per_node\": "
            "4, \"gpu\": \"T4\", \"speed\": 2}]}",
            ": node_groups[0]: field 'speed': unknown; expected nodes, gpus_per_node or gpu",
            NULL);
}

/* A top-level key the reader does not know (a "node_group" beside node_groups, a second
 * "gpu_speed" block) was dropped without a word, and an empty gpu_speeds was said as
 * "expected one of gpu_speeds (), found 'T4'" at the first group. */
Test(schedcluster, an_unknown_top_level_key_or_no_gpu_type_is_refused_by_name)
{
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [{\"nodes\": 1, \"gpus_per_node\": "
            "4, \"gpu\": \"T4\"}], \"node_group\": []}",
            ": field 'node_group': unknown; expected gpu_speeds or node_groups", NULL);
    refused("{\"gpu_speeds\": {}, \"node_groups\": [{\"nodes\": 1, \"gpus_per_node\": 4, "
            "\"gpu\": \"T4\"}]}",
            ": gpu_speeds: expected at least one GPU type and its speed, found none", NULL);
}

/* An empty GPU type name ("": 1) was taken as a type, and a node group's "gpu": "" ran on it:
 * a group whose GPU type was left blank simulated GPUs of speed 1 without a word. */
Test(schedcluster, an_empty_gpu_type_name_is_refused)
{
    refused("{\"gpu_speeds\": {\"\": 1}, \"node_groups\": [{\"nodes\": 1, \"gpus_per_node\": "
            "4, \"gpu\": \"\"}]}",
            ": gpu_speeds: expected type names of 1 to 31 characters, found ''", NULL);
    refused("{\"gpu_speeds\": {\"T4\": 1}, \"node_groups\": [{\"nodes\": 1, \"gpus_per_node\": "
            "4, \"gpu\": \"\"}]}",
            ": node_groups[0].gpu: expected one of gpu_speeds (T4), found ''", NULL);
}
