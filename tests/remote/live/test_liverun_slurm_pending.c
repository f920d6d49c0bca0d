/* The idle GPUs other users' pending jobs take before a job of ours would
 * (liveslurm_pending_claims, remote/live/liverun_slurm_pending.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/live/liverun_slurm.h"
#include "tests/support/fixtures.h"

static const char *const NAMES[] = {"n1", "n2"};

/* foreign: every job whose user is not root (the captures' submitter) */
static size_t claims_of(const SlurmJobInfoList *l, const char *partition,
                        const LiveSlurmClaimNode *nodes, int *claims)
{
    unsigned char foreign[16] = {0};
    for (size_t k = 0; k < l->n && k < 16; k++)
        foreign[k] = strcmp(l->v[k].user, "root") != 0;
    return liveslurm_pending_claims(l, foreign, partition, NULL, 0, NAMES, nodes, 2, claims);
}

/* Captured: root's 10 holds n1's GPU 0, root's 11 both of n2's; nobody's 12 (2 GPUs,
 * planned on n1) takes n1's two (one idle, one a resize of 10 would free); 14 (planned on
 * n[1-2], 2 each) finds no room left on n1 and takes n2's two; 15 (--gpus=3) finds none;
 * 13 is held and takes nothing. A plan names the nodes whatever our partition. */
Test(liverun_slurm_pending, captured_plans_take_the_gpus_they_are_planned_on)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-pending.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    const LiveSlurmClaimNode nodes[] = {{2, 1, 0, 0, NULL}, {2, 2, 0, 0, NULL}};
    int claims[2];
    cr_assert_eq(claims_of(&l, "t4", nodes, claims), 2);
    cr_assert_eq(claims[0], 2);
    cr_assert_eq(claims[1], 2);
    /* partition debug (n[1-4] on the harness): the t4 jobs' plans name n1 and n2, so they
     * take the same GPUs there */
    cr_assert_eq(claims_of(&l, "debug", nodes, claims), 2);
    cr_assert_eq(claims[0], 2);
    cr_assert_eq(claims[1], 2);
    /* another user's running job on n1's GPU 1: 12 has room for 1 there, 14 for none */
    const LiveSlurmClaimNode others[] = {{2, 2, 1, 0, NULL}, {2, 2, 0, 0, NULL}};
    cr_assert_eq(claims_of(&l, "t4", others, claims), 2);
    cr_assert_eq(claims[0], 1);
    cr_assert_eq(claims[1], 2);
    slurm_jobinfo_clear(&l);
    free(text);
}

static const char UNPLANNED[] =
    "JobId=21 JobName=a\n   UserId=alice(1001) GroupId=g(1)\n   Priority=50 Nice=0\n"
    "   JobState=PENDING Reason=Resources Dependency=(null)\n   Partition=t4\n"
    "   NumNodes=1-1 NumCPUs=1\n   TresPerNode=gres:gpu:2\n\n"
    "JobId=22 JobName=b\n   UserId=bob(1002) GroupId=g(1)\n   Priority=90 Nice=0\n"
    "   JobState=PENDING Reason=Priority Dependency=(null)\n   Partition=t4\n"
    "   NumNodes=1 NumCPUs=1\n   TresPerNode=gres:gpu:1\n\n"
    "JobId=23 JobName=held\n   UserId=bob(1002) GroupId=g(1)\n   Priority=0 Nice=0\n"
    "   JobState=PENDING Reason=JobHeldUser Dependency=(null)\n   Partition=t4\n"
    "   NumNodes=1 NumCPUs=1\n   TresPerNode=gres:gpu:2\n\n"
    "JobId=24 JobName=later\n   UserId=bob(1002) GroupId=g(1)\n   Priority=99 Nice=0\n"
    "   JobState=PENDING Reason=BeginTime Dependency=(null)\n   Partition=t4\n"
    "   NumNodes=1 NumCPUs=1\n   TresPerNode=gres:gpu:2\n\n"
    "JobId=25 JobName=elsewhere\n   UserId=bob(1002) GroupId=g(1)\n   Priority=99 Nice=0\n"
    "   JobState=PENDING Reason=Resources Dependency=(null)\n   Partition=v100\n"
    "   NumNodes=1 NumCPUs=1\n   TresPerNode=gres:gpu:2\n\n"
    "JobId=26 JobName=mine\n   UserId=root(0) GroupId=g(1)\n   Priority=99 Nice=0\n"
    "   JobState=PENDING Reason=Resources Dependency=(null)\n   Partition=t4\n"
    "   NumNodes=1 NumCPUs=1\n   TresPerNode=gres:gpu:2\n";

/* No plan: the most important job first, on the most idle node with room for it. b (90)
 * takes one of n2's two idle GPUs; a (50) needs 2 on one node: n2 has room for 1 left, n1
 * for 2 (ours holds one: a resize of ours frees it), so a takes n1's two. Held,
 * begin-time, other partitions' and our own pending jobs take nothing. */
Test(liverun_slurm_pending, unplanned_jobs_take_the_most_idle_nodes_most_important_first)
{
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(UNPLANNED, "scontrol", &l, &e), 0, "%s", e.msg);
    const LiveSlurmClaimNode nodes[] = {{2, 1, 0, 0, NULL}, {2, 0, 0, 0, NULL}};
    int claims[2];
    cr_assert_eq(claims_of(&l, "t4", nodes, claims), 2);
    cr_assert_eq(claims[0], 2);
    cr_assert_eq(claims[1], 1);
    /* n2 drained: both go to n1; b first, then no room for a */
    const LiveSlurmClaimNode drained[] = {{2, 1, 0, 0, NULL}, {2, 0, 0, 1, NULL}};
    cr_assert_eq(claims_of(&l, "t4", drained, claims), 1);
    cr_assert_eq(claims[0], 1);
    cr_assert_eq(claims[1], 0);
    /* another user's running job on n1's other GPU: b takes one of n2's, then no node has
     * room for a's two */
    const LiveSlurmClaimNode others[] = {{2, 2, 1, 0, NULL}, {2, 0, 0, 0, NULL}};
    cr_assert_eq(claims_of(&l, "t4", others, claims), 1);
    cr_assert_eq(claims[0], 0);
    cr_assert_eq(claims[1], 1);
    /* node GPU counts not read yet: nothing claimed */
    const LiveSlurmClaimNode unknown[] = {{0, 0, 0, 0, NULL}, {0, 0, 0, 0, NULL}};
    cr_assert_eq(claims_of(&l, "t4", unknown, claims), 0);
    slurm_jobinfo_clear(&l);
}

/* Only the jobs whose ids are listed are other users' (the captures hold nobody's jobs of
 * every form at once; each test looks at a few). */
static size_t claims_for(const SlurmJobInfoList *l, const char *const *ids, const char *partition,
                         const LiveSlurmPartition *parts, size_t n_parts,
                         const LiveSlurmClaimNode *nodes, int *claims)
{
    unsigned char foreign[32] = {0};
    for (size_t k = 0; k < l->n && k < 32; k++)
        for (const char *const *id = ids; *id; id++)
            foreign[k] |= strcmp(l->v[k].id, *id) == 0;
    return liveslurm_pending_claims(l, foreign, partition, parts, n_parts, NAMES, nodes, 2, claims);
}

static SlurmJobInfoList parsed(const char *fixture)
{
    char *text = fixture_read(fixture);
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    free(text);
    return l;
}

static const LiveSlurmClaimNode IDLE_T4[] = {{2, 0, 0, 0, "t4"}, {2, 0, 0, 0, "t4"}};

/* Captured with every GPU busy and no time limits (no backfill plan): each way of asking for
 * GPUs in partition t4 (n1, n2: 2 t4 GPUs each), one job at a time on idle nodes. */
Test(liverun_slurm_pending, captured_gpu_forms_take_what_they_ask_for)
{
    SlurmJobInfoList l = parsed("slurm/scontrol-job-22.05-gpu-forms-unplanned.txt");
    int c[2];
    static const struct {
        const char *id, *form;
        int n1, n2;
    } cases[] = {
        {"5", "--gres=gpu:2", 2, 0},
        {"6", "--gres=gpu:t4:1", 1, 0},
        {"7", "--gpus=3 (NumNodes=2)", 2, 1},
        {"8", "--gpus-per-node=2", 2, 0},
        {"9", "-n 2 --gpus-per-task=1", 2, 0},
        {"10", "-N 2 --gres=gpu:1", 1, 1},
        {"11", "-N 2 --gpus=3", 2, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *ids[] = {cases[k].id, NULL};
        cr_assert_eq(claims_for(&l, ids, "t4", NULL, 0, IDLE_T4, c), 1, "%s", cases[k].form);
        cr_assert(c[0] == cases[k].n1 && c[1] == cases[k].n2, "%s: n1 %d, n2 %d", cases[k].form,
                  c[0], c[1]);
    }
    /* a v100 job on t4 nodes: no node of its type */
    const char *v100[] = {"6", NULL};
    const LiveSlurmClaimNode v100_nodes[] = {{2, 0, 0, 0, "v100"}, {2, 0, 0, 0, "v100"}};
    cr_assert_eq(claims_for(&l, v100, "t4", NULL, 0, v100_nodes, c), 0);
    slurm_jobinfo_clear(&l);
}

/* Partition debug (n[1-4]) shares n1, n2 with t4 (sinfo -h -o '%R|%N', captured). Its
 * jobs without a plan go to those two; without the partitions' lists they take nothing. */
Test(liverun_slurm_pending, captured_jobs_of_an_overlapping_partition_count)
{
    SlurmJobInfoList l = parsed("slurm/scontrol-job-22.05-gpu-forms-unplanned.txt");
    char *text = fixture_read("slurm/sinfo-partitions-22.05.txt");
    LiveSlurmPartition *parts;
    size_t np;
    Error e;
    cr_assert_eq(liveslurm_partitions_parse(text, "sinfo", &parts, &np, &e), 0, "%s", e.msg);
    cr_assert_eq(np, 2);
    cr_assert_str_eq(parts[0].name, "debug");
    cr_assert_str_eq(parts[0].nodes, "n[1-4]");
    cr_assert_str_eq(parts[1].name, "t4");
    int c[2];
    const char *dbg2[] = {"12", NULL}; /* -p debug --gres=gpu:2 */
    cr_assert_eq(claims_for(&l, dbg2, "t4", parts, np, IDLE_T4, c), 1);
    cr_assert(c[0] + c[1] == 2 && (c[0] == 2 || c[1] == 2));
    cr_assert_eq(claims_for(&l, dbg2, "t4", NULL, 0, IDLE_T4, c), 0);
    const char *tasks[] = {"17", NULL}; /* -p debug -N 2 -n 4 --gpus-per-task=1 */
    cr_assert_eq(claims_for(&l, tasks, "t4", parts, np, IDLE_T4, c), 1);
    cr_assert(c[0] == 2 && c[1] == 2);
    /* v100 jobs of debug (--gres=gpu:v100:4; -N 2 --gpus-per-node=v100:1) fit no t4 node;
     * with the nodes' types unknown, the second takes one GPU on each */
    const char *v100[] = {"14", "18", NULL};
    cr_assert_eq(claims_for(&l, v100, "t4", parts, np, IDLE_T4, c), 0);
    const LiveSlurmClaimNode untyped[] = {{2, 0, 0, 0, NULL}, {2, 0, 0, 0, NULL}};
    cr_assert_eq(claims_for(&l, v100, "t4", parts, np, untyped, c), 1);
    cr_assert(c[0] == 1 && c[1] == 1);
    /* a partition sharing none of our nodes */
    LiveSlurmPartition apart = {"debug", "n[3-4]"};
    cr_assert_eq(claims_for(&l, dbg2, "t4", &apart, 1, IDLE_T4, c), 0);
    liveslurm_partitions_free(parts, np);
    free(text);
    slurm_jobinfo_clear(&l);
}

/* The same forms with time limits: the backfill planned each (SchedNodeList), and a plan
 * names the nodes whatever the partition: debug's 13 (-w n1) takes n1's, debug's 12 and
 * the t4,debug job 15 planned on n3 take none of ours. */
Test(liverun_slurm_pending, captured_plans_of_every_form_and_partition)
{
    SlurmJobInfoList l = parsed("slurm/scontrol-job-22.05-gpu-forms.txt");
    int c[2];
    static const struct {
        const char *id;
        int n1, n2;
    } cases[] = {{"9", 0, 2}, {"10", 1, 1}, {"11", 2, 1}, {"13", 1, 0}, {"12", 0, 0}, {"15", 0, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *ids[] = {cases[k].id, NULL};
        claims_for(&l, ids, "t4", NULL, 0, IDLE_T4, c);
        cr_assert(c[0] == cases[k].n1 && c[1] == cases[k].n2, "job %s: n1 %d, n2 %d",
                  cases[k].id, c[0], c[1]);
    }
    slurm_jobinfo_clear(&l);
}

Test(liverun_slurm_pending, partitions_parse_refuses_a_line_without_a_bar)
{
    LiveSlurmPartition *parts;
    size_t np;
    Error e;
    cr_assert_eq(liveslurm_partitions_parse("t4*|n[1-2]\n\n", "sinfo", &parts, &np, &e), 0);
    cr_assert_eq(np, 1);
    cr_assert_str_eq(parts[0].name, "t4");
    liveslurm_partitions_free(parts, np);
    cr_assert_lt(liveslurm_partitions_parse("t4|n1\nwhat\n", "sinfo", &parts, &np, &e), 0);
    cr_assert(strstr(e.msg, "sinfo line 2"), "%s", e.msg);
    cr_assert_eq(np, 0);
}

/* A partition of 5000 nodes, and one whose list runs past 1000 bytes (and a piece past 511):
 * neither is expanded (SLURM_JOBINFO_MAX_NODES, a bounded pattern), both hold n1 and n2. */
Test(liverun_slurm_pending, partitions_of_any_size_share_their_nodes)
{
    SlurmJobInfoList l = parsed("slurm/scontrol-job-22.05-gpu-forms-unplanned.txt");
    const char *dbg2[] = {"12", NULL}; /* -p debug --gres=gpu:2 */
    int c[2];
    LiveSlurmPartition huge = {"debug", "n[1-5000]"};
    cr_assert_eq(claims_for(&l, dbg2, "t4", &huge, 1, IDLE_T4, c), 1);
    cr_assert_eq(c[0] + c[1], 2);
    char list[4096] = "x[", piece[32];
    for (int k = 0; k < 300; k++) {
        snprintf(piece, sizeof piece, "%s%d", k ? "," : "", 3 * k);
        strcat(list, piece);
    }
    strcat(list, "],n2,y7");
    cr_assert_gt(strlen(list), 1000);
    LiveSlurmPartition long_list = {"debug", list};
    cr_assert_eq(claims_for(&l, dbg2, "t4", &long_list, 1, IDLE_T4, c), 1);
    cr_assert(c[0] == 0 && c[1] == 2, "n1 %d, n2 %d", c[0], c[1]);
    slurm_jobinfo_clear(&l);
}

/* The partitions are read with -a: without it sinfo hides hidden partitions and those our
 * group may not use, which are exactly other users'. */
Test(liverun_slurm_pending, partitions_are_read_with_hidden_ones)
{
    const char *argv[] = LIVESLURM_PARTITIONS_ARGV;
    int all = 0;
    for (const char *const *a = argv; *a; a++)
        all |= strcmp(*a, "-a") == 0 || strcmp(*a, "--all") == 0;
    cr_assert(all);
    cr_assert_str_eq(argv[0], "sinfo");
}

/* A list that does not read is named with its partition and reason (said in the run's log). */
Test(liverun_slurm_pending, an_unreadable_partition_list_is_named)
{
    LiveSlurmPartition parts[] = {{"t4", "n[1-2]"}, {"debug", "n[1-"}};
    char why[200] = "";
    cr_assert_eq(liveslurm_partitions_unreadable(parts, 1, why, sizeof why), 0);
    cr_assert_eq(liveslurm_partitions_unreadable(parts, 2, why, sizeof why), 1);
    cr_assert(strstr(why, "partition debug") && strstr(why, "']'"), "%s", why);
}

/* sinfo -a lists partitions with no nodes too ("", "n/a" or "(null)" by version): such a
 * partition reads, holds nothing, and is not said to be unreadable. */
Test(liverun_slurm_pending, a_partition_with_no_nodes_reads_as_empty)
{
    LiveSlurmPartition *parts;
    size_t np;
    Error e;
    cr_assert_eq(liveslurm_partitions_parse("a|\nb|n/a\nc|(null)\nt4|n[1-2]\n", "sinfo", &parts,
                                            &np, &e),
                 0, "%s", e.msg);
    cr_assert_eq(np, 4);
    for (size_t k = 0; k < 3; k++)
        cr_assert_str_empty(parts[k].nodes, "%s: %s", parts[k].name, parts[k].nodes);
    char why[200] = "";
    cr_assert_eq(liveslurm_partitions_unreadable(parts, np, why, sizeof why), 0, "%s", why);
    liveslurm_partitions_free(parts, np);
}

/* --gpus-per-task=40000 -n 60000: the product does not fit an int; the job takes every GPU
 * it has room for, never a negative count. */
Test(liverun_slurm_pending, huge_task_counts_take_all_not_less_than_nothing)
{
    SlurmJobInfo j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "7");
    snprintf(j.user, sizeof j.user, "nobody");
    snprintf(j.state, sizeof j.state, "PENDING");
    snprintf(j.reason, sizeof j.reason, "Resources");
    snprintf(j.partition, sizeof j.partition, "t4");
    j.priority = 1;
    j.num_nodes = 2;
    j.gpus_per_task = 40000;
    j.num_tasks = 60000;
    SlurmJobInfoList l = {.v = &j, .n = 1};
    const char *ids[] = {"7", NULL};
    int c[2];
    cr_assert_eq(claims_for(&l, ids, "t4", NULL, 0, IDLE_T4, c), 1);
    cr_assert(c[0] == 2 && c[1] == 2, "n1 %d, n2 %d", c[0], c[1]);
}

/* A node of a100 and t4 GPUs (Gres=gpu:a100:2,gpu:t4:2, read as "a100,t4") takes a gpu:t4
 * job; a node of a100s alone does not. */
Test(liverun_slurm_pending, a_node_of_several_gpu_types_takes_a_job_of_any_of_them)
{
    SlurmJobInfoList l = parsed("slurm/scontrol-job-22.05-gpu-forms-unplanned.txt");
    const char *t4[] = {"6", NULL}; /* --gres=gpu:t4:1 */
    const LiveSlurmClaimNode nodes[] = {{4, 0, 0, 0, "a100"}, {4, 0, 0, 0, "a100,t4"}};
    int c[2];
    cr_assert_eq(claims_for(&l, t4, "t4", NULL, 0, nodes, c), 1);
    cr_assert(c[0] == 0 && c[1] == 1, "n1 %d, n2 %d", c[0], c[1]);
    slurm_jobinfo_clear(&l);
}
