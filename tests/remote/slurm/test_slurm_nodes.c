#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/slurm/slurm_nodes.h"
#include "tests/support/fixtures.h"

static const SlurmNode *node(const SlurmNodes *ns, const char *name)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i].name, name) == 0)
            return &ns->v[i];
    cr_assert_fail("no node %s", name);
    return NULL;
}

Test(slurm_nodes, captured_sinfo_one_node_per_name_with_every_partition)
{
    char *text = fixture_read("slurm/sinfo-22.05.txt");
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(ns.n, 4);
    const SlurmNode *n1 = node(&ns, "n1");
    cr_assert_eq(n1->cpus, 4);
    cr_assert_eq(n1->mem_mb, 2000);
    cr_assert_str_eq(n1->gpu_type, "t4");
    cr_assert_eq(n1->gpus, 2);
    cr_assert_str_eq(n1->partitions, "debug,t4", "sorted, whatever sinfo's order");
    cr_assert_str_eq(n1->features, "t4");
    cr_assert_eq(n1->state, SLURM_NODE_ALLOC);
    cr_assert_eq(n1->cpus_alloc, 4);
    cr_assert_str_eq(n1->reason, "");
    cr_assert_eq(node(&ns, "n2")->state, SLURM_NODE_DOWN);
    cr_assert_str_eq(node(&ns, "n2")->reason, "test down");
    const SlurmNode *n3 = node(&ns, "n3");
    cr_assert_eq(n3->state, SLURM_NODE_MIXED);
    cr_assert_eq(n3->cpus_alloc, 2);
    cr_assert_eq(n3->gpus, 4);
    cr_assert_str_eq(n3->partitions, "debug");
    const SlurmNode *n4 = node(&ns, "n4");
    cr_assert_eq(n4->state, SLURM_NODE_DRAIN);
    cr_assert_str_eq(n4->state_raw, "drained");
    cr_assert_str_eq(n4->reason, "fan|noisy, test", "the reason keeps its '|'");
    slurm_nodes_clear(&ns);
    free(text);
}

Test(slurm_nodes, busy_cluster_states)
{
    char *text = fixture_read("slurm/sinfo-22.05-busy.txt");
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(node(&ns, "n1")->state, SLURM_NODE_MIXED);
    cr_assert_eq(node(&ns, "n3")->state, SLURM_NODE_ALLOC);
    cr_assert_eq(node(&ns, "n4")->state, SLURM_NODE_IDLE);
    slurm_nodes_clear(&ns);
    free(text);
}

Test(slurm_nodes, state_suffixes_and_other_states)
{
    const char *text = "a|4|100|(null)|idle*|(null)|p|0/4/0/4|a1|none\n"
                       "b|4|100|(null)|idle~|(null)|p|0/4/0/4|a1|none\n"
                       "c|4|100|(null)|draining|(null)|p|0/4/0/4|a1|none\n"
                       "d|4|100|(null)|completing|(null)|p|0/4/0/4|a1|none\n"
                       "e|4|100|(null)|reserved|(null)|p|0/4/0/4|a1|none\n"
                       "f|4+|100+|(null)|fail|(null)|p|0/4/0/4|a1|none\n";
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(ns.n, 6);
    cr_assert_eq(ns.v[0].state, SLURM_NODE_DOWN, "not responding is down");
    cr_assert_eq(ns.v[1].state, SLURM_NODE_OTHER, "powered off is not idle");
    cr_assert_eq(ns.v[2].state, SLURM_NODE_DRAIN);
    cr_assert_eq(ns.v[3].state, SLURM_NODE_ALLOC);
    cr_assert_eq(ns.v[4].state, SLURM_NODE_OTHER);
    cr_assert_eq(ns.v[5].state, SLURM_NODE_DOWN);
    cr_assert_eq(ns.v[5].cpus, 4);
    cr_assert_eq(ns.v[0].gpus, 0);
    cr_assert_str_eq(ns.v[0].features, "");
    slurm_nodes_clear(&ns);
}

Test(slurm_nodes, gres_forms)
{
    char t[32];
    cr_assert_eq(slurm_gres_gpus("gpu:t4:2", t, sizeof t), 2);
    cr_assert_str_eq(t, "t4");
    cr_assert_eq(slurm_gres_gpus("gpu:4", t, sizeof t), 4);
    cr_assert_str_eq(t, "");
    cr_assert_eq(slurm_gres_gpus("gpu:a100:4(S:0-1),shard:8", t, sizeof t), 4);
    cr_assert_str_eq(t, "a100");
    cr_assert_eq(slurm_gres_gpus("shard:8,gpu:v100:2(IDX:0,2),gpu:t4:1", t, sizeof t), 3);
    cr_assert_str_eq(t, "v100");
    cr_assert_eq(slurm_gres_gpus("gpu", t, sizeof t), 1);
    cr_assert_eq(slurm_gres_gpus("", t, sizeof t), 0);
    cr_assert_eq(slurm_gres_gpus("gpumem:100", t, sizeof t), 0);
    cr_assert_eq(slurm_gres_gpus("gpu:20004000", t, sizeof t), SLURM_MAX_GPUS + 1);
    cr_assert_eq(slurm_gres_gpus("gpu:x:2147483647,gpu:y:2147483647", t, sizeof t),
                 SLURM_MAX_GPUS + 1, "no overflow");
}

Test(slurm_nodes, bad_lines_name_the_line_and_field)
{
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse("n1|4|2000\n", "sinfo", &ns, &e), -1);
    cr_assert(strstr(e.msg, "sinfo: line 1") && strstr(e.msg, "expected 10 fields"), "%s", e.msg);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|(null)|idle|x|p|0/4/0/4|h|\n"
                                   "n2|four|2000|(null)|idle|x|p|0/4/0/4|h|\n",
                                   "sinfo", &ns, &e),
                 -1);
    cr_assert(strstr(e.msg, "line 2") && strstr(e.msg, "'cpus'") && strstr(e.msg, "'four'"), "%s",
              e.msg);
    cr_assert_eq(ns.n, 0);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|gpu:20004000|idle|x|p|0/4/0/4|h|\n", "sinfo", &ns, &e),
                 -1, "found by fuzz_slurm: 20 million GPUs ran out of memory");
    cr_assert(strstr(e.msg, "'gres'"), "%s", e.msg);
    cr_assert_eq(slurm_nodes_parse("n1|66666666666666664|2000|(null)|idle|x|p|0/4/0/4|h|\n", "sinfo",
                                   &ns, &e),
                 -1, "found by fuzz_slurm: a CPU count past int");
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|(null)|idle|x|p|0/4/0/4|h;rm -rf ~|\n", "sinfo",
                                   &ns, &e),
                 -1, "an address becomes MASTER_ADDR: nothing a shell would read twice");
    cr_assert(strstr(e.msg, "'address'"), "%s", e.msg);
    cr_assert_eq(slurm_nodes_parse("", "sinfo", &ns, &e), 0);
    cr_assert_eq(ns.n, 0);
}

Test(slurm_nodes, one_machine_type_per_shape)
{
    char *text = fixture_read("slurm/sinfo-22.05.txt");
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    Cluster *c = slurm_nodes_cluster(&ns, "lab", 10, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_eq(c->n_types, 2);
    cr_assert_eq(c->n_machines, 4);
    cr_assert_str_eq(c->types[0].name, "4cpu-2000mb-t4x2");
    cr_assert_str_eq(c->types[1].name, "8cpu-4000mb-v100x4");
    cr_assert_eq(c->types[1].n_devices, 5);
    cr_assert_eq(c->types[1].devices[0].kind, DEVICE_CPU);
    cr_assert_eq(c->types[1].devices[0].threads, 8);
    cr_assert_str_eq(c->types[1].devices[4].id, "gpu3");
    cr_assert_str_eq(c->types[1].devices[4].model, "V100");
    cr_assert_eq(c->machines[0].type, 0);
    cr_assert_eq(c->machines[3].type, 1);
    cr_assert_str_eq(c->machines[2].name, "n3");
    cr_assert_str_eq(c->machines[2].host, "127.0.0.1", "the host is Slurm's NodeAddr");
    cr_assert_eq(c->n_devices, 2 * 3 + 2 * 5);
    cr_assert_str_eq(c->trial.launch, "slurm");
    cluster_free(c);
    SlurmNodes none = {0};
    cr_assert_null(slurm_nodes_cluster(&none, "lab", 10, &e));
    slurm_nodes_clear(&ns);
    free(text);
}

/* An IPv6 NodeAddr as sinfo prints it (bare, never in brackets): kept whole, not cut at a ':'
 * as if it were host:port, and the machine's host is it, bare, as MASTER_ADDR wants it
 * (torch 1.13's gloo rendezvous takes ::1, not [::1]). */
Test(slurm_nodes, an_ipv6_node_address_is_kept_whole_as_the_host)
{
    char *text = fixture_read("slurm/sinfo-22.05-ipv6.txt");
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(ns.n, 4);
    cr_assert_str_eq(node(&ns, "n1")->addr, "::1");
    cr_assert_str_eq(node(&ns, "n1")->partitions, "debug,t4");
    cr_assert_str_eq(node(&ns, "n3")->addr, "fe80::fc00:ff:fe00:1%eth0");
    cr_assert_str_eq(node(&ns, "n4")->addr, "fd00:1234:5678:9abc:def0:1234:5678:9abc");
    cr_assert_eq(node(&ns, "n4")->state, SLURM_NODE_IDLE);
    Cluster *c = slurm_nodes_cluster(&ns, "v6", 10, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_str_eq(c->machines[0].name, "n1");
    cr_assert_str_eq(c->machines[0].host, "::1");
    cr_assert_str_eq(c->machines[2].host, "fe80::fc00:ff:fe00:1%eth0");
    cr_assert_str_eq(c->machines[3].host, "fd00:1234:5678:9abc:def0:1234:5678:9abc");
    cluster_free(c);
    slurm_nodes_clear(&ns);
    free(text);
}

/* A long list whose nodes come back in a second partition far from their first line: every
 * node once, in sinfo's order, with both partitions (the parser finds earlier nodes by name,
 * not by position). */
Test(slurm_nodes, a_long_list_merges_partitions_listed_far_apart)
{
    enum { N = 1500 };
    size_t cap = (size_t)N * 2 * 64, used = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    for (int part = 0; part < 2; part++)
        for (int i = 0; i < N; i++) {
            int k = part ? N - 1 - i : i; /* the second partition lists them backwards */
            used += (size_t)snprintf(text + used, cap - used,
                                     "g%04d|8|4000|gpu:a100:8|idle|a100|%s|0/8/0/8|10.0.0.1|none\n",
                                     k, part ? "debug" : "gpu*");
        }
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(ns.n, N);
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "g%04d", i);
        cr_assert_str_eq(ns.v[i].name, name, "first-seen order");
        cr_assert_str_eq(ns.v[i].partitions, "debug,gpu", "%s", name);
    }
    slurm_nodes_clear(&ns);
    free(text);
}

/* Any user with the right can write a node's reason and an admin its features: text that is
 * printed (hosts --slurm, the console) and must never carry a byte that drives a terminal. */
Test(slurm_nodes, control_bytes_in_a_reason_or_features_are_made_visible)
{
    const char *text = "n1|4|2000|gpu:t4:2|drained|t4\033[31m|debug*|4/0/0/4|127.0.0.1|"
                       "bad \033]0;title\007 reason\n";
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(ns.n, 1);
    cr_assert_str_eq(ns.v[0].features, "t4^[[31m");
    cr_assert_str_eq(ns.v[0].reason, "bad ^[]0;title^G reason");
    slurm_nodes_clear(&ns);
}

Test(slurm_nodes, a_node_name_that_would_drive_a_terminal_is_refused_and_a_gpu_type_made_visible)
{
    SlurmNodes ns;
    Error e;
    const char *named = "n1\033[2J|4|2000|gpu:t4:2|idle|t4|debug*|0/4/0/4|127.0.0.1|none\n";
    cr_assert_eq(slurm_nodes_parse(named, "sinfo", &ns, &e), -1);
    cr_assert(strstr(e.msg, "field 'node': expected a node name, found 'n1^[[2J'"), "%s", e.msg);
    const char *typed = "n1|4|2000|gpu:t4\033]0;x\007:2|idle|t4|debug*|0/4/0/4|127.0.0.1|none\n";
    cr_assert_eq(slurm_nodes_parse(typed, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(ns.v[0].gpus, 2);
    cr_assert_str_eq(ns.v[0].gpu_type, "t4^[]0;x^G");
    slurm_nodes_clear(&ns);
}

/* Regression: "gpu:t4:2,gpu:v100:2" was read as 4 T4s (one type a node, the first). */
Test(slurm_nodes, a_node_of_two_gpu_types_gets_devices_of_both_models)
{
    const char *text = "m1|8|4000|gpu:t4:2(S:0),gpu:v100:2(S:1)|idle|x|p|0/8/0/8|h1|none\n"
                       "m2|8|4000|gpu:t4:4|idle|x|p|0/8/0/8|h2|none\n";
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    cr_assert_eq(ns.v[0].gpus, 4);
    Cluster *c = slurm_nodes_cluster(&ns, "lab", 10, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_eq(c->n_types, 2, "not the same shape as 4 T4s");
    cr_assert_str_eq(c->types[0].name, "8cpu-4000mb-t4x2-v100x2");
    cr_assert_eq(c->types[0].n_devices, 5);
    cr_assert_str_eq(c->types[0].devices[1].model, "T4");
    cr_assert_str_eq(c->types[0].devices[2].model, "T4");
    cr_assert_str_eq(c->types[0].devices[3].model, "V100");
    cr_assert_str_eq(c->types[0].devices[4].id, "gpu3");
    cr_assert_str_eq(c->types[0].devices[4].model, "V100");
    cr_assert_str_eq(c->types[1].name, "8cpu-4000mb-t4x4");
    cluster_free(c);
    slurm_nodes_clear(&ns);
}

Test(slurm_nodes, gpu_kinds_and_labels_as_slurm_22_05_prints_the_gres)
{
    const char *text = "a|8|4000|gpu:t4:2(S:0-1)|idle|x|p|0/8/0/8|h|none\n"
                       "b|8|4000|gpu:2|idle|x|p|0/8/0/8|h|none\n"
                       "c|8|4000|gpu:t4:2,gpu:v100:2,gpu:t4:1|idle|x|p|0/8/0/8|h|none\n"
                       "d|8|4000|(null)|idle|x|p|0/8/0/8|h|none\n";
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
    char label[64], shape[64];
    cr_assert_eq(ns.v[0].n_gpu_kinds, 1);
    cr_assert_str_eq(ns.v[0].gpu_kinds[0].type, "t4", "the socket list is not in the type");
    slurm_node_gpus_label(&ns.v[0], label, sizeof label);
    cr_assert_str_eq(label, "t4:2");
    slurm_node_gpus_label(&ns.v[1], label, sizeof label);
    cr_assert_str_eq(label, "gpu:2", "untyped");
    cr_assert_eq(slurm_node_shape(&ns.v[1], shape, sizeof shape), 0);
    cr_assert_str_eq(shape, "8cpu-4000mb-gpux2");
    cr_assert_eq(ns.v[2].n_gpu_kinds, 2, "the same type twice is one kind");
    cr_assert_eq(ns.v[2].gpus, 5);
    cr_assert_str_eq(ns.v[2].gpu_type, "t4,v100");
    slurm_node_gpus_label(&ns.v[2], label, sizeof label);
    cr_assert_str_eq(label, "t4:3,v100:2");
    slurm_node_gpus_label(&ns.v[3], label, sizeof label);
    cr_assert_str_eq(label, "-");
    slurm_nodes_clear(&ns);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|gpu:a:1,gpu:b:1,gpu:c:1,gpu:d:1,gpu:e:1|idle|x|p|"
                                   "0/4/0/4|h|\n",
                                   "sinfo", &ns, &e),
                 -1);
    cr_assert(strstr(e.msg, "'gres'") && strstr(e.msg, "at most 4 GPU types"), "%s", e.msg);
}

Test(slurm_nodes, a_negative_gpu_count_or_more_cpus_allocated_than_the_total_is_an_error)
{
    SlurmNodes ns;
    Error e;
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|gpu:t4:-2|idle|x|p|0/4/0/4|h|\n", "sinfo", &ns, &e),
                 -1, "a negative count was read as no GPU");
    cr_assert(strstr(e.msg, "line 1") && strstr(e.msg, "'gres'") && strstr(e.msg, "gpu:t4:-2"),
              "%s", e.msg);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|gpu:-1|idle|x|p|0/4/0/4|h|\n", "sinfo", &ns, &e), -1);
    char long_type[300];
    snprintf(long_type, sizeof long_type, "n1|4|2000|gpu:%0150d:8|idle|x|p|0/4/0/4|h|\n", 0);
    cr_assert_eq(slurm_nodes_parse(long_type, "sinfo", &ns, &e), -1,
                 "an item cut before its count read as one GPU");
    cr_assert(strstr(e.msg, "'gres'"), "%s", e.msg);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|(null)|mixed|x|p|6/0/0/4|h|\n", "sinfo", &ns, &e), -1,
                 "6 of 4 CPUs allocated");
    cr_assert(strstr(e.msg, "'cpu counts'") && strstr(e.msg, "6/0/0/4"), "%s", e.msg);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|(null)|mixed|x|p|2/x/0/4|h|\n", "sinfo", &ns, &e),
                 -1);
    cr_assert(strstr(e.msg, "expected A/I/O/T") && strstr(e.msg, "2/x/0/4"), "%s", e.msg);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|(null)|mixed|x|p|2/2/0|h|\n", "sinfo", &ns, &e), -1);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|(null)|mixed|x|p|2/2/0/4/1|h|\n", "sinfo", &ns, &e),
                 -1);
    cr_assert_eq(slurm_nodes_parse("n1|4|2000|(null)|mixed|x|p|4/0/0/4|h|\n", "sinfo", &ns, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(ns.v[0].cpus_alloc, 4);
    slurm_nodes_clear(&ns);
}

/* Regression: a node's partitions were kept in sinfo's order, which changes from one call to
 * the next (seen on the harness: n1's t4 then debug, then debug then t4), so the column
 * flickered between a watch's rounds and hosts --slurm's table and --json disagreed. */
Test(slurm_nodes, a_nodes_partitions_read_the_same_in_any_order_sinfo_lists_them)
{
    static const char *const orders[] = {
        "n1|4|2000|gpu:t4:2|idle|t4|t4|0/4/0/4|n1|none\n"
        "n1|4|2000|gpu:t4:2|idle|t4|debug*|0/4/0/4|n1|none\n"
        "n1|4|2000|gpu:t4:2|idle|t4|t|0/4/0/4|n1|none\n"
        "n1|4|2000|gpu:t4:2|idle|t4|t4x|0/4/0/4|n1|none\n",
        "n1|4|2000|gpu:t4:2|idle|t4|t4x|0/4/0/4|n1|none\n"
        "n1|4|2000|gpu:t4:2|idle|t4|debug*|0/4/0/4|n1|none\n"
        "n1|4|2000|gpu:t4:2|idle|t4|t4|0/4/0/4|n1|none\n"
        "n1|4|2000|gpu:t4:2|idle|t4|t|0/4/0/4|n1|none\n"
        "n1|4|2000|gpu:t4:2|idle|t4|t4|0/4/0/4|n1|none\n",
    };
    for (size_t i = 0; i < 2; i++) {
        char *text = strdup(orders[i]);
        SlurmNodes ns;
        Error e;
        cr_assert_eq(slurm_nodes_parse(text, "sinfo", &ns, &e), 0, "%s", e.msg);
        cr_assert_eq(ns.n, 1);
        cr_assert_str_eq(ns.v[0].partitions, "debug,t,t4,t4x", "order %zu: %s", i,
                         ns.v[0].partitions);
        slurm_nodes_clear(&ns);
        free(text);
    }
}
