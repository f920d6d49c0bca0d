/* The idle GPUs other users' pending jobs take before a job of ours would
 * (liveslurm_pending_claims, remote/live/liverun_slurm_pending.c). */
#include <criterion/criterion.h>
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
    return liveslurm_pending_claims(l, foreign, partition, NAMES, nodes, 2, claims);
}

/* Captured: root's 10 holds n1's GPU 0, root's 11 both of n2's; nobody's 12 (2 GPUs,
 * planned on n1) takes n1's two (one idle, one a resize of 10 would free); 14 (planned on
 * n[1-2], 2 each) finds no room left on n1 and takes n2's two; 15 (--gpus=3) finds none;
 * 13 is held and takes nothing. */
Test(liverun_slurm_pending, captured_plans_take_the_gpus_they_are_planned_on)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-pending.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    const LiveSlurmClaimNode nodes[] = {{2, 1, 0, 0}, {2, 2, 0, 0}};
    int claims[2];
    cr_assert_eq(claims_of(&l, "t4", nodes, claims), 2);
    cr_assert_eq(claims[0], 2);
    cr_assert_eq(claims[1], 2);
    /* partition debug: only 14 (t4,debug) is there */
    cr_assert_eq(claims_of(&l, "debug", nodes, claims), 1);
    cr_assert_eq(claims[0], 2);
    cr_assert_eq(claims[1], 2);
    /* another user's running job on n1's GPU 1: 12 has room for 1 there, 14 for none */
    const LiveSlurmClaimNode others[] = {{2, 2, 1, 0}, {2, 2, 0, 0}};
    cr_assert_eq(claims_of(&l, "t4", others, claims), 2);
    cr_assert_eq(claims[0], 1);
    cr_assert_eq(claims[1], 2);
    cr_assert_eq(claims_of(&l, "v100", nodes, claims), 0);
    cr_assert_eq(claims[0] + claims[1], 0);
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
    const LiveSlurmClaimNode nodes[] = {{2, 1, 0, 0}, {2, 0, 0, 0}};
    int claims[2];
    cr_assert_eq(claims_of(&l, "t4", nodes, claims), 2);
    cr_assert_eq(claims[0], 2);
    cr_assert_eq(claims[1], 1);
    /* n2 drained: both go to n1; b first, then no room for a */
    const LiveSlurmClaimNode drained[] = {{2, 1, 0, 0}, {2, 0, 0, 1}};
    cr_assert_eq(claims_of(&l, "t4", drained, claims), 1);
    cr_assert_eq(claims[0], 1);
    cr_assert_eq(claims[1], 0);
    /* another user's running job on n1's other GPU: b takes one of n2's, then no node has
     * room for a's two */
    const LiveSlurmClaimNode others[] = {{2, 2, 1, 0}, {2, 0, 0, 0}};
    cr_assert_eq(claims_of(&l, "t4", others, claims), 1);
    cr_assert_eq(claims[0], 0);
    cr_assert_eq(claims[1], 1);
    /* node GPU counts not read yet: nothing claimed */
    const LiveSlurmClaimNode unknown[] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    cr_assert_eq(claims_of(&l, "t4", unknown, claims), 0);
    slurm_jobinfo_clear(&l);
}
