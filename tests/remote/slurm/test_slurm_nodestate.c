#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/readall.h"
#include "remote/slurm/slurm_nodes.h"
#include "remote/slurm/slurm_nodestate.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

Test(slurm_nodestate, captured_states_with_reasons_one_record_a_node)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/slurm/sinfo-states-22.05.txt",
             TUNEDECK_SOURCE_DIR);
    Error e;
    char *text = readall_file(path, 0, NULL, &e);
    cr_assert_not_null(text, "%s", e.msg);
    SlurmNodeStatuses l;
    cr_assert_eq(slurm_nodestate_parse(text, "sinfo", &l, &e), 0, "%s", e.msg);
    free(text);
    cr_assert_eq(l.n, 4, "n1 and n2 are listed once per partition: one record each");
    const SlurmNodeStatus *n1 = slurm_nodestate_find(&l, "n1");
    cr_assert_not_null(n1);
    cr_assert_str_eq(n1->state, "draining");
    cr_assert_str_eq(n1->reason, "fan noise | loud", "a '|' in the reason stays in it");
    cr_assert(n1->unusable);
    cr_assert(slurm_nodestate_find(&l, "n2")->unusable, "down");
    cr_assert(slurm_nodestate_find(&l, "n4")->unusable, "drained");
    const SlurmNodeStatus *n3 = slurm_nodestate_find(&l, "n3");
    cr_assert(!n3->unusable);
    cr_assert_str_eq(n3->reason, "", "Slurm's 'none' is no reason");
    cr_assert_null(slurm_nodestate_find(&l, "n5"));
    cr_assert_eq(n1->gpus, 2);
    cr_assert_str_eq(n1->gpu_type, "t4");
    cr_assert_eq(n3->gpus, 4);
    cr_assert_str_eq(n3->gpu_type, "v100");
    slurm_nodestate_clear(&l);
}

Test(slurm_nodestate, gpus_from_the_gres_as_the_inventory_reads_them)
{
    SlurmNodeStatuses l;
    Error e;
    cr_assert_eq(slurm_nodestate_parse("a|idle|(null)|none\n"
                                       "b|mixed|gpu:a100:8(S:0-1),shard:2|none\n"
                                       "c|idle|gpu:9999|none\n"
                                       "d|idle|gpu:a100:2(IDX:0-1),gpu:t4:2(IDX:2-3)|none\n",
                                       "sinfo", &l, &e),
                 0, "%s", e.msg);
    /* a node of two GPU types keeps both: it takes a job of either */
    cr_assert_eq(slurm_nodestate_find(&l, "d")->gpus, 4);
    cr_assert_str_eq(slurm_nodestate_find(&l, "d")->gpu_type, "a100,t4");
    cr_assert_eq(slurm_nodestate_find(&l, "a")->gpus, 0, "no GRES: no GPU");
    cr_assert_eq(slurm_nodestate_find(&l, "b")->gpus, 8);
    cr_assert_str_eq(slurm_nodestate_find(&l, "b")->gpu_type, "a100");
    cr_assert_gt(slurm_nodestate_find(&l, "c")->gpus, SLURM_MAX_GPUS,
                 "too many: the caller refuses");
    slurm_nodestate_clear(&l);
}

Test(slurm_nodestate, what_takes_a_node_out_and_what_does_not)
{
    const char *out[] = {"drained", "draining", "drain", "DRAINED", "down",       "down*",
                         "fail",    "failing",  "idle*", "mixed*",  "allocated*", "drained*"};
    const char *in[] = {"idle",  "mixed",   "allocated", "completing", "reserved", "maint",
                        "idle~", "planned", "unknown",   "unknown*",   "mixed#"};
    for (size_t i = 0; i < sizeof out / sizeof *out; i++)
        cr_assert(slurm_node_unusable(out[i]), "%s takes the node out", out[i]);
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        cr_assert(!slurm_node_unusable(in[i]), "%s leaves the node usable", in[i]);
}

Test(slurm_nodestate, a_broken_line_names_the_line_and_the_field)
{
    SlurmNodeStatuses l;
    Error e;
    cr_assert_eq(slurm_nodestate_parse("n1|idle|gpu:2|none\nn2|idle|none\n", "sinfo", &l, &e), -1);
    cr_assert(strstr(e.msg, "sinfo: line 2: expected 4 fields separated by '|' (%N|%T|%G|%E), "
                            "found 3"),
              "%s", e.msg);
    cr_assert_eq(l.n, 0);
    cr_assert_eq(slurm_nodestate_parse("n1||gpu:2|none\n", "sinfo", &l, &e), -1);
    cr_assert(strstr(e.msg, "line 1: field 'state'"), "%s", e.msg);
    cr_assert_eq(slurm_nodestate_parse("|idle|gpu:2|none\n", "sinfo", &l, &e), -1);
    cr_assert(strstr(e.msg, "field 'node'"), "%s", e.msg);
    cr_assert_eq(slurm_nodestate_parse("", "sinfo", &l, &e), 0, "no node: an empty list");
    cr_assert_eq(l.n, 0);
    slurm_nodestate_clear(&l);
}

Test(slurm_nodestate, remote_text_is_made_visible_and_a_hostile_node_name_refused)
{
    SlurmNodeStatuses st;
    Error e;
    cr_assert_eq(slurm_nodestate_parse("n1|drained\033[2J|gpu:a\033[31m:2|bad \033]0;x\007 disk\n",
                                       "sinfo", &st, &e),
                 0, "%s", e.msg);
    cr_assert_eq(st.n, 1);
    cr_assert_str_eq(st.v[0].state, "drained^[[2J");
    cr_assert_str_eq(st.v[0].gpu_type, "a^[[31m");
    cr_assert_str_eq(st.v[0].reason, "bad ^[]0;x^G disk");
    cr_assert(st.v[0].unusable, "the state is still read from Slurm's own word");
    slurm_nodestate_clear(&st);
    cr_assert_eq(slurm_nodestate_parse("n\033[2J1|idle|(null)|none\n", "sinfo", &st, &e), -1);
    cr_assert(strstr(e.msg, "expected a node name"), "%s", e.msg);
}

Test(slurm_nodestate, a_negative_gpu_count_is_an_error_not_no_gpu)
{
    SlurmNodeStatuses l;
    Error e;
    cr_assert_eq(slurm_nodestate_parse("a|idle|gpu:t4:-2|none\n", "sinfo", &l, &e), -1);
    cr_assert(strstr(e.msg, "'gres'") && strstr(e.msg, "gpu:t4:-2"), "%s", e.msg);
}
