#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/readall.h"
#include "remote/live/jobctl.h"
#include "remote/live/liverun_slurm.h"
#include "remote/live/liverun_slurm_priv.h"
#include "tests/support/fixtures.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

/* slurm_ctl's err for a command that exits non-zero: its last standard-error line. */
static void failed_call(const char *cmd, const char *fixture_name, char *out, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/slurm/%s", TUNEDECK_SOURCE_DIR, fixture_name);
    Error e;
    char *text = readall_file(path, 0, NULL, &e);
    cr_assert_not_null(text, "%s", e.msg);
    text[strcspn(text, "\n")] = 0;
    snprintf(out, cap, "%s exited with status 1: %s", cmd, text);
    free(text);
}

static char *joined(char **argv)
{
    static char buf[2048];
    buf[0] = 0;
    for (size_t i = 0; argv[i]; i++) {
        strcat(buf, i ? " " : "");
        strcat(buf, argv[i]);
    }
    return buf;
}

Test(liverun_slurm, nodes_of_one_gpu_count_are_one_component)
{
    const char *names[] = {"n1", "n2"};
    int gpus[] = {2, 2};
    char **v = liveslurm_sbatch_argv("tunedeck-live-j0.00abcd-1", "/shared/jobs/j0", "t4", names,
                                     gpus, 2,
                                     "/shared/jobs/j0/tunedeck-job.sbatch");
    cr_assert_not_null(v);
    cr_assert_str_eq(joined(v),
                     "sbatch --parsable --job-name=tunedeck-live-j0.00abcd-1 "
                     "--chdir=/shared/jobs/j0 --output=/shared/jobs/j0/slurm-%j.00abcd-1.out "
                     "--partition=t4 --nodes=2 --nodelist=n1,n2 --gres=gpu:2 "
                     "/shared/jobs/j0/tunedeck-job.sbatch");
    liveslurm_argv_free(v);
}

Test(liverun_slurm, different_gpu_counts_make_a_heterogeneous_job_in_first_seen_order)
{
    const char *names[] = {"n1", "n3", "n2"};
    int gpus[] = {2, 4, 2};
    char **v =
        liveslurm_sbatch_argv("tunedeck-live-j0.00abcd-2", "/d", NULL, names, gpus, 3, "/d/s");
    cr_assert_str_eq(joined(v), "sbatch --parsable --job-name=tunedeck-live-j0.00abcd-2 --chdir=/d "
                                "--output=/d/slurm-%j.00abcd-2.out --nodes=2 --nodelist=n1,n2 "
                                "--gres=gpu:2 : --nodes=1 --nodelist=n3 --gres=gpu:4 /d/s");
    liveslurm_argv_free(v);
}

/* Each submission's output file is its own (an earlier job under the same id left its
 * slurm-ID.out: ids start again when Slurm's state is reset, and wrap). */
Test(liverun_slurm, each_submission_writes_its_own_output_file)
{
    char *a = liveslurm_output_path("/j/a.b", "tunedeck-live-a.b.00abcd-3", "41");
    char *b = liveslurm_output_path("/j/a.b", "tunedeck-live-a.b.00abce-3", "41");
    char *p = liveslurm_output_path("/d", "plain", "%j");
    cr_assert_str_eq(a, "/j/a.b/slurm-41.00abcd-3.out", "the tail after the name's last '.'");
    cr_assert_str_neq(a, b, "another driver's (nonce's) job 41: another file");
    cr_assert_str_eq(p, "/d/slurm-%j.plain.out");
    free(a);
    free(b);
    free(p);
}

Test(liverun_slurm, script_traps_term_and_fills_placeholders_quoted)
{
    JobHost hosts[] = {{"n1", 2, (int[]){0, 1}}, {"n3", 1, (int[]){0}}};
    JobAlloc a = {.gpus = 3, .hosts = hosts, .n_hosts = 2, .master_port = 29500,
                  .resume = "ck pt"};
    Error e;
    char *s = liveslurm_script("train --gpus {gpus} --hosts {hosts} --resume {resume}", "j0", &a,
                               &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert(strncmp(s, "#!/bin/sh\n", 10) == 0, "%s", s);
    cr_assert(strstr(s, "\ntd_term=; trap 'td_term=1' TERM\n"), "%s", s);
    /* a copy Slurm requeued and started again ends at once: tunedeck resubmits the job */
    cr_assert(strstr(s, "\ntd_term=; trap 'td_term=1' TERM\nif [ -n \"$SLURM_RESTART_COUNT\" ] && "
                        "[ \"$SLURM_RESTART_COUNT\" != 0 ]; then\n"),
              "%s", s);
    cr_assert(strstr(s, "tunedeck resubmits it from its checkpoint\"\n    exit 0\nfi\n"
                        "TUNEDECK_JOB="),
              "%s", s);
    cr_assert(strstr(s, "TUNEDECK_JOB='j0'\nexport TUNEDECK_JOB\n"), "%s", s);
    /* a TERM before the job starts stops it there (test_job_early_stop.c runs the check) */
    cr_assert(strstr(s, "printf '%s\\n' 'n1:2\nn3:1' > tunedeck-hostfile\n" JOBCTL_TERM_CHECK
                        "\ntrain --gpus"),
              "%s", s);
    cr_assert(strstr(s, "train --gpus '3' --hosts 'n1,n3' --resume 'ck pt'\n"), "%s", s);
    cr_assert(strstr(s, "'ck pt'\ntunedeck_rc=$?\nprintf '\\ntunedeck-batch-exit %s %d\\n' "
                        "\"$SLURM_JOB_ID\" \"$tunedeck_rc\"\nexit \"$tunedeck_rc\"\n"),
              "the exit line ends the script: %s", s);
    free(s);
    cr_assert_null(liveslurm_script("train {nope}", "j0", &a, &e));
    cr_assert(strstr(e.msg, "{nope}"), "%s", e.msg);
}

Test(liverun_slurm, refuses_what_slurm_cannot_run)
{
    Error e;
    cr_assert_eq(liveslurm_check("train --gpus {gpus}", 0, 4, &e), 0);
    cr_assert_eq(liveslurm_check("train --devices {gpu_ids}", 0, 4, &e), -1);
    cr_assert(strstr(e.msg, "CUDA_VISIBLE_DEVICES"), "%s", e.msg);
    cr_assert_eq(liveslurm_check("train", 1, 4, &e), -1);
    cr_assert(strstr(e.msg, "per-host"), "%s", e.msg);
    /* a script starting its host's ranks by {node_rank} would wait for the other nodes' */
    cr_assert_eq(liveslurm_check("python3 train.py --node-rank {node_rank}", 0, 2, &e), -1);
    cr_assert(strstr(e.msg, "{node_rank} is always 0 on Slurm when the cluster has several "
                            "nodes (2 here)"), "%s", e.msg);
}

/* One node: every allocation is that node, and {node_rank} 0 is true (as over SSH with one
 * machine, cluster_parse.c); it was refused always. Before the nodes are known (0), not checked. */
Test(liverun_slurm, node_rank_is_taken_on_a_cluster_of_one_node)
{
    Error e;
    cr_assert_eq(liveslurm_check("python3 train.py --node-rank {node_rank}", 0, 1, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(liveslurm_check("python3 train.py --node-rank {node_rank}", 0, 0, &e), 0,
                 "%s", e.msg);
}

Test(liverun_slurm, every_submission_has_its_own_job_name_under_the_prefix)
{
    char a[64], b[64], c[64];
    cr_assert_eq(liveslurm_job_name(a, sizeof a, "j0", 0xabc123, 1), 0);
    cr_assert_str_eq(a, "tunedeck-live-j0.abc123-1");
    cr_assert_eq(liveslurm_job_name(b, sizeof b, "j0", 0xabc123, 2), 0);
    cr_assert_eq(liveslurm_job_name(c, sizeof c, "j0", 0x1abc124, 1), 0);
    cr_assert_str_eq(c, "tunedeck-live-j0.abc124-1", "six hex digits of the nonce");
    cr_assert_str_neq(a, b);
    cr_assert_eq(strncmp(b, LIVESLURM_NAME_PREFIX, strlen(LIVESLURM_NAME_PREFIX)), 0);
    cr_assert_eq(liveslurm_job_name(a, 20, "j0", 0xabc123, 1), -1, "cut is refused");
}

Test(liverun_slurm, a_job_is_told_ours_by_the_nonce_in_its_name)
{
    char a[64];
    cr_assert_eq(liveslurm_job_name(a, sizeof a, "j0", 0xabc123, 7), 0);
    cr_assert(liveslurm_named_by(a, 0xabc123));
    cr_assert_not(liveslurm_named_by(a, 0xabc124), "another tunedeck's");
    cr_assert_not(liveslurm_named_by("train.abc123-1", 0xabc123), "not a live run's");
    cr_assert_not(liveslurm_named_by("tunedeck-live-j0", 0xabc123), "an older tunedeck's");
}

/* squeue shows every user our jobs' names, nonce and all: another user's job named like one
 * of ours (running on GPUs the model would then think free) is not ours. The console's and
 * the driver's "is it foreign" asked the name alone. */
Test(liverun_slurm, a_job_named_like_ours_by_another_user_is_not_ours)
{
    SlurmJobInfo j = {.id = "40", .user = "root", .state = "RUNNING"};
    cr_assert_eq(liveslurm_job_name(j.name, sizeof j.name, "j0", 0xabc123, 7), 0);
    cr_assert(liveslurm_ours_by_name(&j, "root", 0xabc123));
    cr_assert_not(liveslurm_ours_by_name(&j, "root", 0xabc124), "another tunedeck's");
    snprintf(j.user, sizeof j.user, "nobody");
    cr_assert_not(liveslurm_ours_by_name(&j, "root", 0xabc123), "another user's");
}

Test(liverun_slurm, the_look_up_by_name_finds_the_job_id_or_none)
{
    cr_assert_eq(liveslurm_parse_lookup("12\n"), 12);
    cr_assert_eq(liveslurm_parse_lookup("16+0\n16+1\n"), 16, "a heterogeneous job's parts");
    cr_assert_eq(liveslurm_parse_lookup(""), -1);
    cr_assert_eq(liveslurm_parse_lookup("\n"), -1);
    cr_assert_eq(liveslurm_parse_lookup("squeue: error: Invalid user\n"), -2);
    cr_assert_eq(liveslurm_parse_lookup("12abc"), -2);
}

Test(liverun_slurm, sbatch_job_ids)
{
    cr_assert_eq(liveslurm_parse_jobid("12\n"), 12);
    cr_assert_eq(liveslurm_parse_jobid("345;tdtest\n"), 345);
    cr_assert_eq(liveslurm_parse_jobid(""), -1);
    cr_assert_eq(liveslurm_parse_jobid("Submitted batch job 12\n"), -1);
    cr_assert_eq(liveslurm_parse_jobid("12abc"), -1);
}

static void status_of(const char *state, int code, int sig, const char *reason, int ran,
                      const char *want)
{
    SlurmJobInfo j;
    memset(&j, 0, sizeof j);
    strcpy(j.state, state);
    strcpy(j.reason, reason);
    j.exit_code = code;
    j.exit_signal = sig;
    char out[128];
    liveslurm_status_text(&j, ran, out, sizeof out);
    cr_assert_str_eq(out, want);
}

Test(liverun_slurm, ends_in_the_drivers_words)
{
    status_of("COMPLETED", 0, 0, "None", 1, "exited 0"); /* checkpointed on TERM */
    status_of("FAILED", 3, 0, "NonZeroExitCode", 1, "exited 3");
    status_of("FAILED", 0, 15, "JobLaunchFailure", 1, "killed by SIGTERM");
    status_of("CANCELLED", 0, 0, "None", 0, "cancelled while pending");
    status_of("CANCELLED", 0, 15, "None", 1, "slurm: CANCELLED (None)");
    status_of("TIMEOUT", 0, 15, "TimeLimit", 1, "slurm: TIMEOUT (TimeLimit)");
    status_of("NODE_FAIL", 0, 0, "", 1, "slurm: NODE_FAIL (no reason)");
}

Test(liverun_slurm, controller_not_answering_is_told_from_a_refusal)
{
    char e[512];
    failed_call("sbatch", "sbatch-22.05-no-controller.err", e, sizeof e);
    cr_assert(liveslurm_no_controller(e), "%s", e);
    failed_call("scancel", "scancel-22.05-no-controller.err", e, sizeof e);
    cr_assert(liveslurm_no_controller(e), "%s", e);
    failed_call("sbatch", "sbatch-22.05-refused.err", e, sizeof e);
    cr_assert_not(liveslurm_no_controller(e), "%s", e);
    cr_assert(liveslurm_no_controller("sbatch: no answer within 30 s (is slurmctld up?)"));
    cr_assert_not(liveslurm_no_controller("sbatch exited with status 1: sbatch: error: Invalid "
                                          "generic resource (gres) specification"));
    cr_assert_not(liveslurm_no_controller(""));
}

/* Slurm 22.05's own words (src/common/slurm_errno.c) as sbatch quotes them after "Batch job
 * submission failed: ": what can never pass fails the job at once, the rest is tried once
 * more. */
Test(liverun_slurm, a_refused_sbatch_is_for_good_by_slurms_words)
{
    static const char *const for_good[] = {
        "Invalid partition name specified",
        "Requested node configuration is not available",
        "Invalid account or account/partition combination specified",
        "Invalid qos specification",
        "Invalid generic resource (gres) specification",
    };
    static const char *const once[] = {
        "Resource temporarily unavailable",
        "Unable to create job record, try again",
        "Requested nodes are busy",
        "Slurm backup controller in standby mode",
        "Something Slurm 23 may say",
    };
    char e[300];
    for (size_t i = 0; i < sizeof for_good / sizeof *for_good; i++) {
        snprintf(e, sizeof e,
                 "sbatch exited with status 1: sbatch: error: Batch job submission failed: %s",
                 for_good[i]);
        cr_assert_eq(liveslurm_sbatch_refusal(e), LIVERUN_REFUSED_FOR_GOOD, "%s", e);
    }
    for (size_t i = 0; i < sizeof once / sizeof *once; i++) {
        snprintf(e, sizeof e,
                 "sbatch exited with status 1: sbatch: error: Batch job submission failed: %s",
                 once[i]);
        cr_assert_eq(liveslurm_sbatch_refusal(e), LIVERUN_REFUSED_ONCE, "%s", e);
    }
}

/* Regression: a limit on the job's size ("Node count specification invalid", a partition's
 * MaxNodes; a QOS's MaxTRESPerJob) was for good, and a grow Slurm refused failed a job that
 * had run at its old size a moment before. A size limit passes smaller; a count of jobs
 * (MaxSubmitJobs) passes later; the accounting words without their reason say neither. */
Test(liverun_slurm, a_refused_sbatch_over_a_limit_says_which_kind_of_limit)
{
    char e[400];
    failed_call("sbatch", "sbatch-22.05-too-big.err", e, sizeof e);
    /* a partition's MaxNodes counts nodes: its ceiling is what fits on one node fewer */
    cr_assert_eq(liveslurm_sbatch_refusal(e), LIVERUN_REFUSED_TOO_MANY_NODES, "%s", e);
    cr_assert_eq(liveslurm_sbatch_refusal("sbatch exited with status 1: sbatch: error: Batch job "
                                          "submission failed: More processors requested than "
                                          "permitted"),
                 LIVERUN_REFUSED_TOO_BIG);
    /* job_submit/throttle's count of the last hour's jobs, as the harness answered it */
    char *t = fixture_read("slurm/sbatch-22.05-throttled.err");
    size_t first = strcspn(t, "\n");
    t[first] = 0;
    char *last = t + first + 1;
    last[strcspn(last, "\n")] = 0;
    snprintf(e, sizeof e, "sbatch exited with status 1: %s; %s", t, last); /* as slurm_ctl says */
    free(t);
    cr_assert_eq(liveslurm_sbatch_refusal(e), LIVERUN_REFUSED_FOR_NOW, "%s", e);
    static const char *const qos = "sbatch: error: Batch job submission failed: Job violates "
                                   "accounting/QOS policy (job submit limit, user's size and/or "
                                   "time limits)";
    static const struct {
        const char *reason;
        LiveRefusal kind;
    } cases[] = {
        {"", LIVERUN_REFUSED_LIMIT},
        {"QOSMaxSubmitJobPerUserLimit", LIVERUN_REFUSED_FOR_NOW},
        {"AssocGrpSubmitJobsLimit", LIVERUN_REFUSED_FOR_NOW},
        {"QOSMaxNodePerJobLimit", LIVERUN_REFUSED_TOO_MANY_NODES},
        {"QOSMaxGRESPerJob", LIVERUN_REFUSED_TOO_BIG},
        {"AssocGrpGRES", LIVERUN_REFUSED_TOO_BIG},
        {"QOSMaxWallDurationPerJobLimit", LIVERUN_REFUSED_FOR_GOOD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(e, sizeof e, "sbatch exited with status 1: %s%s%s%s",
                 cases[i].reason[0] ? "sbatch: error: " : "", cases[i].reason,
                 cases[i].reason[0] ? "\n" : "", qos);
        cr_assert_eq(liveslurm_sbatch_refusal(e), cases[i].kind, "%s", e);
    }
}

/* A pending job's reason that is a limit of its size it never passes as it is (the job was
 * taken under it: no EnforcePartLimits, no DenyOnLimit), against those that clear. */
Test(liverun_slurm, a_pending_reason_says_whether_it_is_a_limit_of_the_jobs_size)
{
    static const char *const size[] = {"PartitionNodeLimit", "QOSMaxGRESPerJob",
                                       "QOSMaxNodePerJobLimit", "AssocMaxCpuPerJobLimit"};
    static const char *const other[] = {"Resources",         "Priority",
                                        "QOSMaxGRESPerUser", "AssocGrpGRES",
                                        "QOSMaxWallDurationPerJobLimit", "None",
                                        "QOSMaxCpuMinutesPerJobLimit",   ""};
    for (size_t i = 0; i < sizeof size / sizeof *size; i++)
        cr_assert(liveslurm_size_reason(size[i]), "%s", size[i]);
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        cr_assert_not(liveslurm_size_reason(other[i]), "%s", other[i]);
}

/* Which size limits count nodes (a ceiling on one node fewer) rather than GPUs (one GPU
 * fewer): the partition's MaxNodes, in both its forms, and MaxNodesPerJob. */
Test(liverun_slurm, a_size_limit_says_whether_it_counts_nodes)
{
    static const char *const nodes[] = {"PartitionNodeLimit", "QOSMaxNodePerJobLimit",
                                        "AssocMaxNodePerJobLimit",
                                        "Batch job submission failed: Node count specification "
                                        "invalid"};
    static const char *const gpus[] = {"QOSMaxGRESPerJob", "AssocMaxCpuPerJobLimit",
                                       "More processors requested than permitted"};
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
        cr_assert(liveslurm_nodes_reason(nodes[i]), "%s", nodes[i]);
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++)
        cr_assert_not(liveslurm_nodes_reason(gpus[i]), "%s", gpus[i]);
}

Test(liverun_slurm, retries_back_off_like_the_rounds)
{
    cr_assert_float_eq(liveslurm_backoff_s(1, 0), 1, 1e-9);
    cr_assert_float_eq(liveslurm_backoff_s(1, 1), 2, 1e-9);
    cr_assert_float_eq(liveslurm_backoff_s(1, 3), 8, 1e-9);
    cr_assert_float_eq(liveslurm_backoff_s(1, 4), 16, 1e-9);
    cr_assert_float_eq(liveslurm_backoff_s(0.5, 9), 8, 1e-9);
}

static const char *record(char *buf, size_t cap, const char *id, const char *het, const char *name,
                          const char *user, const char *state)
{
    char hetline[64] = "";
    if (het)
        snprintf(hetline, sizeof hetline, " HetJobId=%s HetJobOffset=%s", het,
                 strcmp(het, id) == 0 ? "0" : "1");
    snprintf(buf, cap,
             "JobId=%s%s JobName=%s\n   UserId=%s(0) GroupId=g(0) MCS_label=N/A\n"
             "   JobState=%s Reason=None Dependency=(null)\n   ExitCode=0:0\n\n",
             id, hetline, name, user, state);
    return buf;
}

Test(liverun_slurm, an_earlier_runs_batch_jobs_are_found_by_name_user_and_state)
{
    char text[4096] = "", r[512];
    strcat(text, record(r, sizeof r, "10", NULL, "tunedeck-live-a", "ops", "RUNNING"));
    strcat(text, record(r, sizeof r, "11", NULL, "tunedeck-live-b", "ops", "PENDING"));
    strcat(text, record(r, sizeof r, "12", NULL, "tunedeck-live-c", "ops", "COMPLETED"));
    strcat(text, record(r, sizeof r, "13", NULL, "tunedeck-live-d", "ana", "RUNNING"));
    strcat(text, record(r, sizeof r, "14", NULL, "train", "ops", "RUNNING"));
    strcat(text, record(r, sizeof r, "15", NULL, "tunedeck-live-e", "ops", "RUNNING"));
    strcat(text, record(r, sizeof r, "16", "16", "tunedeck-live-f", "ops", "RUNNING"));
    strcat(text, record(r, sizeof r, "17", "16", "tunedeck-live-f", "ops", "RUNNING"));
    strcat(text, record(r, sizeof r, "18", NULL, "tunedeck-live-g.abc123-4", "ops", "PENDING"));
    strcat(text, record(r, sizeof r, "19", NULL, "tunedeck-live-h.fed987-1", "ops", "PENDING"));
    SlurmJobInfoList jobs;
    Error err;
    cr_assert_eq(slurm_jobinfo_parse(text, "test", &jobs, &err), 0, "%s", err.msg);
    const char *ours[] = {"15"};
    char ids[64];
    /* 12 ended, 13 is another user's, 14 is not a live run's, 15 is ours, 17 is 16's part,
     * 18 is named with our nonce (its sbatch has not answered yet) */
    cr_assert_eq(liveslurm_leftovers(&jobs, "ops", ours, 1, 0xabc123, ids, sizeof ids), 4);
    cr_assert_str_eq(ids, "10 11 16 19");
    cr_assert_eq(liveslurm_leftovers(&jobs, "nobody", ours, 1, 0xabc123, ids, sizeof ids), 0);
    cr_assert_str_eq(ids, "");
    /* a list too long for the buffer still counts every job and shows only whole ids */
    char small[5];
    cr_assert_eq(liveslurm_leftovers(&jobs, "ops", ours, 1, 0xabc123, small, sizeof small), 4);
    cr_assert_str_eq(small, "10");
    slurm_jobinfo_clear(&jobs);
}

Test(liverun_slurm, a_job_id_is_among_ours_only_when_equal_to_one)
{
    const char *ours[] = {"15", "160"};
    cr_assert(liveslurm_id_in("15", ours, 2));
    cr_assert(liveslurm_id_in("160", ours, 2));
    cr_assert_not(liveslurm_id_in("1", ours, 2)); /* not a prefix match */
    cr_assert_not(liveslurm_id_in("16", ours, 2));
    cr_assert_not(liveslurm_id_in("15", ours, 0));
}

Test(liverun_slurm, a_second_job_under_a_submissions_name_is_its_double)
{
    const char *name = "tunedeck-live-j0.abc123-2";
    char text[4096] = "", r[512];
    strcat(text, record(r, sizeof r, "20", NULL, name, "ops", "RUNNING"));   /* the run's */
    strcat(text, record(r, sizeof r, "21", NULL, name, "ops", "PENDING"));   /* a double */
    strcat(text, record(r, sizeof r, "22", NULL, name, "ops", "CANCELLED")); /* ended */
    strcat(text, record(r, sizeof r, "23", NULL, name, "ana", "RUNNING"));   /* not ours */
    strcat(text, record(r, sizeof r, "24", NULL, "tunedeck-live-j0.abc123-3", "ops", "RUNNING"));
    strcat(text, record(r, sizeof r, "25", "25", name, "ops", "RUNNING")); /* a heterogeneous */
    strcat(text, record(r, sizeof r, "26", "25", name, "ops", "RUNNING")); /* double, once */
    SlurmJobInfoList jobs;
    Error err;
    cr_assert_eq(slurm_jobinfo_parse(text, "test", &jobs, &err), 0, "%s", err.msg);
    char ids[4][32];
    cr_assert_eq(liveslurm_doubles(&jobs, "ops", name, "20", ids, 4), 2);
    cr_assert_str_eq(ids[0], "21");
    cr_assert_str_eq(ids[1], "25");
    /* the run follows the heterogeneous one: the other is the double */
    cr_assert_eq(liveslurm_doubles(&jobs, "ops", name, "25", ids, 4), 2);
    cr_assert_str_eq(ids[0], "20");
    cr_assert_str_eq(ids[1], "21");
    cr_assert_eq(liveslurm_doubles(&jobs, "ops", name, "", ids, 4),
                 0, "no job yet: any of them may be the one it adopts");
    cr_assert_eq(liveslurm_doubles(&jobs, "ops", name, "20", ids, 1), 2, "counted past cap");
    cr_assert_str_eq(ids[0], "21");
    slurm_jobinfo_clear(&jobs);
}

/* Slurm's preemption, captured (PreemptType=preempt/partition_prio): a job requeued is
 * pending with Restarts=1, one cancelled ended PREEMPTED, the preemptors run; and a job
 * suspended keeps its GPUs. */
Test(liverun_slurm, preempted_requeued_and_suspended_jobs_are_told_apart)
{
    const char *files[] = {"slurm/scontrol-job-22.05-preempted.txt",
                           "slurm/scontrol-job-22.05-suspended.txt"};
    SlurmJobInfoList l[2];
    Error e;
    for (int i = 0; i < 2; i++) {
        char *text = fixture_read(files[i]);
        cr_assert_eq(slurm_jobinfo_parse(text, "scontrol", &l[i], &e), 0, "%s", e.msg);
        free(text);
    }
    cr_assert_eq(liveslurm_taken(slurm_jobinfo_find(&l[0], "1")), LIVESLURM_TAKEN_REQUEUED);
    cr_assert_eq(liveslurm_taken(slurm_jobinfo_find(&l[0], "2")), LIVESLURM_TAKEN_PREEMPTED);
    cr_assert_eq(liveslurm_taken(slurm_jobinfo_find(&l[0], "3")), LIVESLURM_TAKEN_NONE);
    const SlurmJobInfo *sus = slurm_jobinfo_find(&l[1], "1");
    cr_assert_eq(liveslurm_taken(sus), LIVESLURM_TAKEN_SUSPENDED);
    char where[64];
    slurm_jobinfo_where(&sus, 1, where, sizeof where);
    cr_assert_str_eq(where, "n1:0+1", "a suspended job still holds its GPUs");
    /* a requeued copy Slurm started again, or one that ended, is still a requeue */
    SlurmJobInfo again = *slurm_jobinfo_find(&l[0], "1");
    snprintf(again.state, sizeof again.state, "RUNNING");
    cr_assert_eq(liveslurm_taken(&again), LIVESLURM_TAKEN_REQUEUED);
    snprintf(again.state, sizeof again.state, "CANCELLED");
    cr_assert_eq(liveslurm_taken(&again), LIVESLURM_TAKEN_REQUEUED);
    slurm_jobinfo_clear(&l[0]);
    slurm_jobinfo_clear(&l[1]);
}

/* The inventory's "slurm" block over the caller's options: what it sets wins, what it
 * leaves out (0) keeps the caller's (or, unset there too, liveslurm_new's default). */
Test(liverun_slurm, the_inventory_intervals_override_only_what_they_set)
{
    LiveSlurmOptions o = {
        .poll_s = 0.05, .node_poll_s = 0, .pending_say_s = 7, .exit_grace_s = 3, .poll_idle = 1};
    SlurmIntervals every = {.command_timeout_s = 5, .node_round_s = 2};
    liveslurm_options_intervals(&o, &every);
    cr_assert_float_eq(o.poll_s, 0.05, 1e-12);
    cr_assert_float_eq(o.node_poll_s, 2, 1e-12);
    cr_assert_float_eq(o.pending_say_s, 7, 1e-12);
    cr_assert_float_eq(o.exit_grace_s, 3, 1e-12);
    cr_assert_eq(o.poll_idle, 1);
    every = (SlurmIntervals){.job_round_s = 0.5, .pending_say_s = 60, .exit_grace_s = 20};
    liveslurm_options_intervals(&o, &every);
    cr_assert_float_eq(o.poll_s, 0.5, 1e-12);
    cr_assert_float_eq(o.node_poll_s, 2, 1e-12);
    cr_assert_float_eq(o.pending_say_s, 60, 1e-12);
    cr_assert_float_eq(o.exit_grace_s, 20, 1e-12);
}

/* Regression: Slurm 22.05's scancel exits 1 when one listed id has ended, yet cancels the
 * others and names them; the cancelled one was logged "refused" and cancelled again at every
 * round. (The words are scancel 22.05's verbose and error lines, written here, not captured.) */
Test(liverun_slurm, a_scancel_that_failed_on_an_ended_id_still_counts_the_others_cancelled)
{
    const char *err = "scancel: Terminating job 13\n"
                      "scancel: error: Kill job error on job id 12: Invalid job id specified\n";
    cr_assert_eq(liveslurm_cancel_outcome(1, err, "13"), LIVESLURM_CANCEL_SENT);
    cr_assert_eq(liveslurm_cancel_outcome(1, err, "12"), LIVESLURM_CANCEL_ENDED);
    cr_assert_eq(liveslurm_cancel_outcome(1,
                                          "scancel: error: Kill job error on job id 12: "
                                          "Access/permission denied\n",
                                          "12"),
                 LIVESLURM_CANCEL_REFUSED);
    cr_assert_eq(liveslurm_cancel_outcome(0, "", "14"), LIVESLURM_CANCEL_NOTHING);
    cr_assert_not(liveslurm_scancel_sent("scancel: Terminating job 130\n", "13"));
    cr_assert_not(liveslurm_scancel_sent("scancel: Signal 9 to job 13\n", "13"),
                  "no --signal is passed: \" to job \" is no word of ours");
}

/* scancel -v --user=U --name=N's standard error, captured from Slurm 22.05 (with the exit
 * status each had): ours (0), another name's filter (0), an ended id (1), an ended id beside
 * ours (1, ours cancelled); and scancel -v ID of a job that had just completed, without the
 * filters (0: "Terminating job 1", then "Job/step already completing or completed"), which
 * production never runs (it always filters, and then Slurm says "Invalid job id specified"
 * of such a job): its words are ended too, not nothing done nor a refusal. Regression: an
 * ended id was taken for a refusal ("scancel refused"); the completing words for nothing. */
Test(liverun_slurm, scancel_verbose_words_from_slurm_22_05_say_which_ids_were_cancelled)
{
    char *ours = fixture_read("slurm/scancel-22.05-ours.err");
    char *other = fixture_read("slurm/scancel-22.05-other-name.err");
    char *ended = fixture_read("slurm/scancel-22.05-ended.err");
    char *mixed = fixture_read("slurm/scancel-22.05-ended-and-ours.err");
    cr_assert(liveslurm_scancel_sent(ours, "1"), "%s", ours);
    cr_assert_eq(liveslurm_cancel_outcome(0, ours, "1"), LIVESLURM_CANCEL_SENT);
    cr_assert_not(liveslurm_scancel_sent(other, "1"), "%s", other);
    cr_assert_eq(liveslurm_cancel_outcome(0, other, "1"), LIVESLURM_CANCEL_NOTHING);
    cr_assert_not(liveslurm_scancel_sent(ended, "3"), "%s", ended);
    cr_assert_eq(liveslurm_cancel_outcome(1, ended, "3"), LIVESLURM_CANCEL_ENDED);
    cr_assert_eq(liveslurm_cancel_outcome(1, mixed, "4"), LIVESLURM_CANCEL_SENT, "%s", mixed);
    cr_assert_eq(liveslurm_cancel_outcome(1, mixed, "3"), LIVESLURM_CANCEL_ENDED, "%s", mixed);
    char *done = fixture_read("slurm/scancel-22.05-completed.err");
    cr_assert_not(liveslurm_scancel_sent(done, "1"), "its kill came too late: %s", done);
    cr_assert_eq(liveslurm_cancel_outcome(0, done, "1"), LIVESLURM_CANCEL_ENDED, "%s", done);
    free(ours), free(other), free(ended), free(mixed), free(done);
}

/* Regression: the refusal of a login node said it "serves hosts and watching only", though
 * tuning sessions run through it too (salloc, srun and scancel there; docs/slurm.md): an
 * operator was told their workstation setup could not tune. No command runs. */
Test(liverun_slurm, a_login_node_is_refused_naming_what_it_does_serve)
{
    cJSON *root = cJSON_Parse("{\"name\": \"c\", \"backend\": \"slurm\", \"login\": \"login1\", "
                              "\"job_command\": \"x {gpus} --checkpoint c --resume {resume}\"}");
    cr_assert_not_null(root);
    Cluster *cl;
    SlurmCtl *ctl;
    LiveSlurm *ls;
    Error e = {0};
    cr_assert_eq(liveslurm_open(root, "inv.json", NULL, &cl, &ctl, &ls, &e), -1);
    cJSON_Delete(root);
    cr_assert_eq(e.kind, ERROR_INPUT);
    cr_assert_str_eq(e.msg, "inv.json: live mode on Slurm runs sbatch and reads each job's output "
                            "file on this machine: run tunedeck on the login node login1 (the "
                            "inventory's \"login\" serves hosts, watching and tuning sessions, "
                            "not the live scheduler)");
    cr_assert_null(cl);
}
