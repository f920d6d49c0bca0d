/* Which nodes of a node-state round the live scheduler adds (liveslurm_joined,
 * remote/live/liverun_slurm_nodes.c): those its partition lists now that it does not watch,
 * usable, with GPUs it can place on. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "remote/live/liverun_slurm.h"

/* sinfo -h -N -o '%N|%T|%G|%E' -p t4 after `scontrol update PartitionName=t4 Nodes=...` */
static const char ROUND[] = "n1|mixed|gpu:t4:2|none\n"
                            "n2|idle|gpu:t4:2|none\n"
                            "n7|idle|gpu:a100:8(S:0-1)|none\n"
                            "n3|idle|gpu:v100:4|none\n"
                            "n4|drained|gpu:v100:4|tunedeck: maintenance\n"
                            "n5|idle*|gpu:v100:4|none\n"
                            "n6|idle|(null)|none\n"
                            "n8|idle|gpu:9999|none\n";

static size_t joined(const char *const *known, size_t n_known, char names[][64])
{
    SlurmNodeStatuses st;
    Error e;
    cr_assert_eq(slurm_nodestate_parse(ROUND, "sinfo", &st, &e), 0, "%s", e.msg);
    size_t idx[16];
    size_t n = liveslurm_joined(&st, known, n_known, idx);
    for (size_t k = 0; k < n; k++)
        snprintf(names[k], 64, "%s", st.v[idx[k]].name);
    slurm_nodestate_clear(&st);
    return n;
}

Test(liverun_slurm_nodes, usable_nodes_with_gpus_that_are_not_watched_join_in_name_order)
{
    const char *known[] = {"n2", "n1"};
    char names[16][64];
    size_t n = joined(known, 2, names);
    /* n4 drained, n5 not responding, n6 has no GPU, n8 more than a node may have */
    cr_assert_eq(n, 2, "%zu", n);
    cr_assert_str_eq(names[0], "n3");
    cr_assert_str_eq(names[1], "n7");
}

Test(liverun_slurm_nodes, a_watched_node_or_one_that_left_adds_nothing)
{
    const char *known[] = {"n1", "n2", "n3", "n7", "gone"};
    char names[16][64];
    cr_assert_eq(joined(known, 5, names), 0, "every usable node is watched already");
}

Test(liverun_slurm_nodes, an_empty_round_adds_nothing)
{
    SlurmNodeStatuses st;
    Error e;
    cr_assert_eq(slurm_nodestate_parse("", "sinfo", &st, &e), 0, "%s", e.msg);
    size_t idx[1];
    const char *known[] = {"n1"};
    cr_assert_eq(liveslurm_joined(&st, known, 1, idx), 0);
    slurm_nodestate_clear(&st);
}
