#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/hostrange.h"
#include "remote/slurm/slurm_jobinfo.h"
#include "tests/support/fixtures.h"

static void where_of(const SlurmJobInfoList *l, const char *id, char *out, size_t cap)
{
    const SlurmJobInfo *parts[8];
    size_t n = slurm_jobinfo_components(l, id, parts, 8);
    slurm_jobinfo_where(parts, n, out, cap);
}

Test(slurm_jobinfo, captured_running_pending_failed_and_heterogeneous_jobs)
{
    char *text = fixture_read("slurm/scontrol-job-22.05.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 10);
    const SlurmJobInfo *j = slurm_jobinfo_find(&l, "5");
    cr_assert_not_null(j);
    cr_assert_str_eq(j->name, "a1");
    cr_assert_str_eq(j->user, "root");
    cr_assert_str_eq(j->state, "RUNNING");
    cr_assert_str_eq(j->nodelist, "n3");
    cr_assert_eq(j->n_nodes, 1);
    cr_assert_eq(j->nodes[0].gpu_idx, 0x3);
    char where[128];
    where_of(&l, "5", where, sizeof where);
    cr_assert_str_eq(where, "n3:0+1");
    /* one detail line for two nodes with the same allocation */
    where_of(&l, "6", where, sizeof where);
    cr_assert_str_eq(where, "n1:0,n2:0");
    /* --gpus=4 over two nodes: Slurm chose 1 + 3 */
    where_of(&l, "7", where, sizeof where);
    cr_assert_str_eq(where, "n2:1,n4:0+1+2");
    j = slurm_jobinfo_find(&l, "8");
    cr_assert_str_eq(j->state, "PENDING");
    cr_assert_str_eq(j->reason, "Resources");
    cr_assert_str_eq(j->nodelist, "");
    cr_assert_eq(j->n_nodes, 0);
    j = slurm_jobinfo_find(&l, "1");
    cr_assert_str_eq(j->state, "FAILED");
    cr_assert_str_eq(j->reason, "JobLaunchFailure");
    cr_assert_eq(j->exit_signal, 53);
    where_of(&l, "1", where, sizeof where);
    cr_assert_str_eq(where, "", "an ended job holds no GPU");
    const SlurmJobInfo *parts[4];
    cr_assert_eq(slurm_jobinfo_components(&l, "9", parts, 4), 2);
    cr_assert_eq(parts[1]->het_offset, 1);
    cr_assert_str_eq(parts[1]->het_id, "9");
    cr_assert_str_eq(parts[1]->id, "10");
    slurm_jobinfo_clear(&l);
    free(text);
}

Test(slurm_jobinfo, captured_ended_jobs_and_a_running_heterogeneous_job)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-ended.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    const SlurmJobInfo *j = slurm_jobinfo_find(&l, "11");
    cr_assert_str_eq(j->state, "COMPLETED", "a job that trapped TERM and exited 0");
    cr_assert_eq(j->exit_code, 0);
    cr_assert_eq(j->exit_signal, 0);
    cr_assert(slurm_jobinfo_ended(j->state));
    j = slurm_jobinfo_find(&l, "8");
    cr_assert_str_eq(j->state, "CANCELLED");
    cr_assert_eq(j->exit_signal, 15);
    char where[128];
    where_of(&l, "9", where, sizeof where);
    cr_assert_str_eq(where, "n1:0,n4:0+1+2");
    cr_assert(!slurm_jobinfo_ended("RUNNING"));
    cr_assert(!slurm_jobinfo_ended("PENDING"));
    slurm_jobinfo_clear(&l);
    free(text);

    text = fixture_read("slurm/scontrol-job-22.05-het.txt");
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 2, "one job asked by id: both components");
    slurm_jobinfo_clear(&l);
    free(text);
}

Test(slurm_jobinfo, names_with_spaces_gres_lists_and_an_empty_system)
{
    const char *text = "JobId=42 JobName=train resnet 50\n"
                       "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
                       "   JobState=RUNNING Reason=None Dependency=(null)\n"
                       "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
                       "   ReqNodeList=(null) ExcNodeList=(null)\n"
                       "   NodeList=gpu[07-08],cpu1\n"
                       "     Nodes=gpu[07-08] CPU_IDs=0-3 Mem=0 GRES=gpu:a100:3(IDX:0-1,5),mps:100(0/100)\n"
                       "     Nodes=cpu1 CPU_IDs=0 Mem=0 GRES=\n";
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "x", &l, &e), 0, "%s", e.msg);
    cr_assert_str_eq(l.v[0].name, "train resnet 50");
    cr_assert_str_eq(l.v[0].user, "alice");
    cr_assert_str_eq(l.v[0].nodelist, "gpu[07-08],cpu1");
    cr_assert_eq(l.v[0].n_nodes, 3);
    char where[128];
    const SlurmJobInfo *p = &l.v[0];
    slurm_jobinfo_where(&p, 1, where, sizeof where);
    cr_assert_str_eq(where, "gpu07:0+1+5,gpu08:0+1+5");
    slurm_jobinfo_where(&p, 1, where, 16);
    cr_assert_str_eq(where, "gpu07:0+1+5", "a short buffer keeps whole nodes");
    slurm_jobinfo_clear(&l);
    cr_assert_eq(slurm_jobinfo_parse("No jobs in the system\n", "x", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 0);
}

Test(slurm_jobinfo, refuses_records_it_cannot_read_and_names_the_line)
{
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse("hello\n", "scontrol", &l, &e), -1);
    cr_assert(strstr(e.msg, "scontrol: line 1"), "%s", e.msg);
    cr_assert_eq(slurm_jobinfo_parse("JobId=1 JobName=x\n   NodeList=n1\n", "s", &l, &e), -1);
    cr_assert(strstr(e.msg, "JobState"), "%s", e.msg);
    cr_assert_eq(slurm_jobinfo_parse("JobId=1 JobName=x\n JobState=RUNNING\n"
                                     "  Nodes=n1 GRES=gpu:2(IDX:0-99)\n",
                                     "s", &l, &e),
                 -1, "an index past 63");
    cr_assert(strstr(e.msg, "line 3"), "%s", e.msg);
    cr_assert_eq(slurm_jobinfo_parse("JobId=1 JobName=x\n JobState=RUNNING ExitCode=zz\n", "s", &l,
                                     &e),
                 -1);
    cr_assert_eq(slurm_jobinfo_parse("JobId=1 JobName=x\n JobState=RUNNING\n"
                                     "  Nodes=n[1-999999] GRES=gpu:1(IDX:0)\n",
                                     "s", &l, &e),
                 -1, "a node list too long for one job");
}

Test(slurm_jobinfo, captured_time_limit_end)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-timeout.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 1);
    cr_assert_str_eq(l.v[0].state, "TIMEOUT");
    cr_assert_str_eq(l.v[0].reason, "TimeLimit");
    cr_assert(slurm_jobinfo_ended(l.v[0].state));
    slurm_jobinfo_clear(&l);
    free(text);
}

/* A foreign job's name and reason reach the terminal (schedule --live, the console): made
 * visible, never passed raw. */
Test(slurm_jobinfo, control_bytes_in_a_name_or_reason_are_made_visible)
{
    const char *text = "JobId=9 JobName=evil\033]0;t\007 name\n"
                       "   UserId=eve\033[2J(1000) GroupId=eve(1000)\n"
                       "   JobState=PENDING Reason=Res\033[1A Dependency=(null)\n";
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 1);
    cr_assert_str_eq(l.v[0].name, "evil^[]0;t^G name");
    cr_assert_str_eq(l.v[0].user, "eve^[[2J");
    cr_assert_str_eq(l.v[0].reason, "Res^[[1A");
    slurm_jobinfo_clear(&l);
}

/* Other users' pending jobs, captured: what each asks for and the backfill plan. */
Test(slurm_jobinfo, captured_pending_requests_priorities_and_plans)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-pending.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 6);
    const SlurmJobInfo *j = slurm_jobinfo_find(&l, "12");
    cr_assert_str_eq(j->user, "nobody");
    cr_assert_str_eq(j->reason, "Resources");
    cr_assert_eq(j->priority, 4294901749LL);
    cr_assert_eq(j->num_nodes, 1);
    cr_assert_eq(j->gpus_per_node, 2);
    cr_assert_eq(j->gpus_per_job, 0);
    cr_assert_str_eq(j->sched_nodes, "n1");
    cr_assert_str_eq(j->req_nodes, "");
    cr_assert_str_eq(j->partition, "t4");
    j = slurm_jobinfo_find(&l, "13");
    cr_assert_eq(j->priority, 0);
    cr_assert_str_eq(j->reason, "JobHeldUser");
    cr_assert_str_eq(j->sched_nodes, "");
    j = slurm_jobinfo_find(&l, "14");
    cr_assert_str_eq(j->partition, "t4,debug");
    cr_assert_str_eq(j->req_nodes, "n[1-2]");
    cr_assert_str_eq(j->sched_nodes, "n[1-2]");
    cr_assert_eq(j->num_nodes, 2);
    cr_assert_eq(j->gpus_per_node, 2);
    j = slurm_jobinfo_find(&l, "15");
    cr_assert_eq(j->gpus_per_node, 0);
    cr_assert_eq(j->gpus_per_job, 3);
    cr_assert_eq(j->num_nodes, 2);
    j = slurm_jobinfo_find(&l, "10"); /* running: its own node asked for */
    cr_assert_str_eq(j->req_nodes, "n1");
    cr_assert_eq(j->gpus_per_node, 1);
    char **names;
    size_t n;
    cr_assert_eq(slurm_nodelist_expand("n[1-2],gpu07", &names, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(names[2], "gpu07");
    hostrange_free(names, n);
    slurm_jobinfo_clear(&l);
    free(text);
}

/* A node list of any size or shape is read range by range: 5000 nodes (past
 * SLURM_JOBINFO_MAX_NODES), a list of over 1000 bytes and pieces over 511. */
Test(slurm_jobinfo, nodelist_contains_reads_lists_of_any_size)
{
    Error e;
    cr_assert_eq(slurm_nodelist_contains("n[0001-5000]", "n4321", &e), 1, "%s", e.msg);
    cr_assert_eq(slurm_nodelist_contains("n[0001-5000],gpu07", "gpu07", &e), 1);
    cr_assert_eq(slurm_nodelist_contains("n[0001-5000],gpu07", "n5001", &e), 0);
    char piece[32];
    char big[2048] = "n[";
    for (int k = 0; k < 300; k++) {
        snprintf(piece, sizeof piece, "%s%d", k ? "," : "", 3 * k);
        strcat(big, piece);
    }
    strcat(big, "],m1");
    cr_assert_gt(strlen(big), 1000);
    cr_assert_eq(slurm_nodelist_contains(big, "n897", &e), 1, "%s", e.msg);
    cr_assert_eq(slurm_nodelist_contains(big, "n898", &e), 0);
    cr_assert_eq(slurm_nodelist_contains(big, "m1", &e), 1);
    cr_assert_lt(slurm_nodelist_contains("n[1-2,", "n1", &e), 0);
    cr_assert_lt(slurm_nodelist_contains("n1,,n2", "n1", &e), 0);
}

/* What a pending job asks for is read leniently: a value not understood is unknown, and the
 * round (every job's state and GPUs) is kept. */
Test(slurm_jobinfo, unreadable_requests_read_as_unknown)
{
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse("JobId=1 JobName=x\n   Priority=high Nice=0\n"
                                     "   JobState=PENDING Reason=None\n"
                                     "   NumNodes=x-2 NumCPUs=1\n"
                                     "   TresPerNode=gres:gpu:lots,gres:gpu:t4:1\n",
                                     "scontrol", &l, &e),
                 0, "%s", e.msg);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.v[0].priority, -1);
    cr_assert_eq(l.v[0].num_nodes, 0);
    cr_assert_eq(l.v[0].gpus_per_node, 1);
    slurm_jobinfo_clear(&l);
}

/* Captured: one pending job for each way of asking for GPUs (Slurm 22.05 writes TresPerNode
 * for --gres and --gpus-per-node, TresPerJob for --gpus, TresPerTask for --gpus-per-task,
 * with NumTasks). */
Test(slurm_jobinfo, captured_gpu_request_forms)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-gpu-forms-unplanned.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    static const struct {
        const char *id, *type;
        int per_node, per_job, per_task, tasks, nodes;
    } want[] = {
        {"5", "", 2, 0, 0, 1, 1},       /* --gres=gpu:2 */
        {"6", "t4", 1, 0, 0, 1, 1},     /* --gres=gpu:t4:1 */
        {"7", "", 0, 3, 0, 1, 2},       /* --gpus=3 */
        {"8", "", 2, 0, 0, 1, 1},       /* --gpus-per-node=2 */
        {"9", "", 0, 0, 1, 2, 1},       /* -n 2 --gpus-per-task=1 */
        {"10", "", 1, 0, 0, 2, 2},      /* -N 2 --gres=gpu:1 */
        {"11", "", 0, 3, 0, 2, 2},      /* -N 2 --gpus=3 */
        {"17", "", 0, 0, 1, 4, 2},      /* -N 2 -n 4 --gpus-per-task=1 */
        {"18", "v100", 1, 0, 0, 2, 2},  /* -N 2 --gpus-per-node=v100:1 */
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        const SlurmJobInfo *j = slurm_jobinfo_find(&l, want[k].id);
        cr_assert(j, "job %s", want[k].id);
        cr_assert_str_eq(j->state, "PENDING");
        cr_assert_str_eq(j->gpu_type, want[k].type, "job %s", want[k].id);
        cr_assert(j->gpus_per_node == want[k].per_node && j->gpus_per_job == want[k].per_job &&
                      j->gpus_per_task == want[k].per_task && j->num_tasks == want[k].tasks &&
                      j->num_nodes == want[k].nodes,
                  "job %s: per node %d, job %d, task %d, tasks %d, nodes %d", want[k].id,
                  j->gpus_per_node, j->gpus_per_job, j->gpus_per_task, j->num_tasks, j->num_nodes);
    }
    slurm_jobinfo_clear(&l);
    free(text);
}

/* Preemption, captured: a requeued job counts its restarts; an ended one says PREEMPTED. */
Test(slurm_jobinfo, captured_preemptions_requeued_and_cancelled)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-preempted.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 4);
    const SlurmJobInfo *rq = slurm_jobinfo_find(&l, "1"), *pe = slurm_jobinfo_find(&l, "2");
    cr_assert(rq && pe);
    cr_assert_str_eq(rq->state, "PENDING");
    cr_assert_str_eq(rq->reason, "BeginTime");
    cr_assert_eq(rq->restarts, 1);
    cr_assert_str_eq(pe->state, "PREEMPTED");
    cr_assert_eq(pe->restarts, 0);
    cr_assert(slurm_jobinfo_ended(pe->state));
    cr_assert_eq(slurm_jobinfo_find(&l, "3")->restarts, 0);
    slurm_jobinfo_clear(&l);
    free(text);
}

/* Slurm prints a job's name as its owner gave it, newlines too (captured, README): another
 * user's held job 1 named "a\n   JobState=...\nJobId=2 ... JobState=FAILED ...\nJobId=99 ..."
 * wrote a record for our job 2, failed, before Slurm's own (running). The old parser took
 * the answer whole, and slurm_jobinfo_find("2") found the forged record: our job read as
 * failed, by another user's word. */
Test(slurm_jobinfo, a_job_name_forging_a_record_of_a_listed_job_refuses_the_answer)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-forged.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol show -d job", &l, &e), -1);
    cr_assert(strstr(e.msg, "job 2 is listed twice"), "%s", e.msg);
    cr_assert_eq(l.n, 0);
    free(text);
}

/* Captured (README): nobody's held job 14 named "a\nJobId=12 ... JobState=FAILED ...\nJobId=11
 * ... JobState=COMPLETED ..." forges records of our running job 12 and of root's job 11
 * (running on n2), the second taking 14's own lines; 14's record is left without JobState.
 * Read whole, every record stays, and each of 11, 12 and 14 is doubted; 13 is not, and
 * slurm_jobinfo_find never returns a doubted one. The old parser had only the refusal: the
 * round was lost whole, for as long as job 14 was listed. */
Test(slurm_jobinfo, an_answer_with_forged_records_is_read_whole_with_them_doubted)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-forged-ours.txt");
    SlurmJobInfoList l;
    Error doubt, e;
    cr_assert_eq(slurm_jobinfo_read(text, "scontrol show -d job", &l, &doubt, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 6);
    cr_assert_eq(l.n_doubtful, 5);
    size_t clean = 0;
    for (size_t i = 0; i < l.n; i++)
        if (!l.v[i].doubtful) {
            cr_assert_str_eq(l.v[i].id, "13");
            clean++;
        }
    cr_assert_eq(clean, 1);
    cr_assert(strstr(doubt.msg, "scontrol show -d job: the job record ending at line 97: "
                                "expected JobId= and JobState="),
              "%s", doubt.msg);
    cr_assert_null(slurm_jobinfo_find(&l, "12"));
    cr_assert_null(slurm_jobinfo_find(&l, "14"));
    cr_assert_str_eq(slurm_jobinfo_find(&l, "13")->state, "RUNNING");
    cr_assert_eq(slurm_jobinfo_components(&l, "12", (const SlurmJobInfo *[1]){0}, 1), 0);
    slurm_jobinfo_clear(&l);
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol show -d job", &l, &e), -1);
    cr_assert(strstr(e.msg, "line 97"), "%s", e.msg);
    free(text);
    /* the same moment asked by id (scontrol show -d job 12): our job's record alone, its
     * name ours, nothing in it another user's text */
    text = fixture_read("slurm/scontrol-job-22.05-forged-ours-12.txt");
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol show -d job 12", &l, &e), 0, "%s", e.msg);
    cr_assert_eq(l.n, 1);
    char where[64];
    where_of(&l, "12", where, sizeof where);
    cr_assert_str_eq(l.v[0].state, "RUNNING");
    cr_assert_str_eq(where, "n1:0+1");
    slurm_jobinfo_clear(&l);
    free(text);
}

/* Captured (README): nobody's job 5, submitted before ours (6) and renamed with `scontrol
 * update JobName=`, forges a record 998 "HetJobId=6 ... JobState=FAILED" and sends its own
 * lines to a record 997: every id once, so the answer reads clean. The old
 * slurm_jobinfo_components took every record whose HetJobId was 6, in the answer's order:
 * the forged one first, so our running job read as failed. Job 6 leads no heterogeneous
 * job (its own record, Slurm's, has no HetJobId): it is its one component. */
Test(slurm_jobinfo, a_forged_record_of_an_unlisted_id_never_joins_our_job)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-forged-het.txt");
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol show -d job", &l, &e), 0, "%s", e.msg);
    const SlurmJobInfo *parts[4];
    cr_assert_eq(slurm_jobinfo_components(&l, "6", parts, 4), 1);
    cr_assert_str_eq(parts[0]->id, "6");
    cr_assert_str_eq(parts[0]->state, "RUNNING");
    slurm_jobinfo_clear(&l);
    free(text);
}

/* A heterogeneous job's components are the ones its leader's HetJobIdSet lists: a record
 * claiming HetJobId=9 with an id outside 9-10 is no component of it. */
Test(slurm_jobinfo, a_component_outside_the_leaders_set_is_not_the_jobs)
{
    const char *text = "JobId=9 HetJobId=9 HetJobOffset=0 JobName=het\n   HetJobIdSet=9-10\n"
                       "   UserId=root(0)\n   JobState=RUNNING Reason=None\n"
                       "JobId=998 HetJobId=9 HetJobOffset=2 JobName=het\n   HetJobIdSet=9-10\n"
                       "   UserId=root(0)\n   JobState=FAILED Reason=None\n"
                       "JobId=10 HetJobId=9 HetJobOffset=1 JobName=het\n   HetJobIdSet=9-10\n"
                       "   UserId=root(0)\n   JobState=RUNNING Reason=None\n";
    SlurmJobInfoList l;
    Error e;
    cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l, &e), 0, "%s", e.msg);
    const SlurmJobInfo *parts[4];
    cr_assert_eq(slurm_jobinfo_components(&l, "9", parts, 4), 2);
    cr_assert_str_eq(parts[0]->id, "9");
    cr_assert_str_eq(parts[1]->id, "10");
    cr_assert_eq(slurm_jobinfo_components(&l, "10", parts, 4), 0, "followed through its leader");
    slurm_jobinfo_clear(&l);
}

/* Ids are unique in Slurm's own answers, heterogeneous components included (JobId 9 and 10
 * of HetJobId 9): the check refuses none of them. */
Test(slurm_jobinfo, every_captured_answer_lists_each_id_once)
{
    const char *files[] = {"slurm/scontrol-job-22.05.txt", "slurm/scontrol-job-22.05-ended.txt",
                           "slurm/scontrol-job-22.05-het.txt", "slurm/scontrol-job-22.05-pending.txt",
                           "slurm/scontrol-job-22.05-preempted.txt"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *text = fixture_read(files[i]);
        SlurmJobInfoList l;
        Error e;
        cr_assert_eq(slurm_jobinfo_parse(text, files[i], &l, &e), 0, "%s", e.msg);
        slurm_jobinfo_clear(&l);
        free(text);
    }
}
