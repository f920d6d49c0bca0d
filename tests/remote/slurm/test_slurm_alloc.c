#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/slurm/slurm_alloc.h"
#include "tests/support/fixtures.h"
#include "tests/support/standins.h"

Test(slurm_alloc, granted_job_from_salloc_stderr)
{
    cr_assert_eq(slurm_alloc_parse_granted("salloc: Granted job allocation 42\n"), 42);
    cr_assert_eq(slurm_alloc_parse_granted("salloc: Pending job allocation 7\n"
                                           "salloc: job 7 queued and waiting for resources\n"
                                           "salloc: job 7 has been allocated resources\n"
                                           "salloc: Granted job allocation 7\n"),
                 7);
    cr_assert_eq(slurm_alloc_parse_granted("salloc: error: Unable to allocate resources\n"), -1);
    cr_assert_eq(slurm_alloc_parse_granted("salloc: Granted job allocation \n"), -1);
    cr_assert_eq(slurm_alloc_parse_granted("salloc: Granted job allocation 4294967296\n"), -1);
    cr_assert_eq(slurm_alloc_parse_granted("salloc: Granted job allocation 99999999999999999999\n"),
                 -1);
    cr_assert_eq(slurm_alloc_parse_granted("salloc: Granted job allocation 4294967295\n"),
                 4294967295L);
}

static Cluster *two_shapes(void)
{
    Cluster *c = cluster_new("t");
    DeviceSpec d4[3] = {{.id = "cpu", .kind = DEVICE_CPU}, {.id = "gpu0", .kind = DEVICE_GPU},
                        {.id = "gpu1", .kind = DEVICE_GPU}};
    MachineType small = {.name = "small", .bandwidth_gbps = 10, .devices = d4, .n_devices = 3};
    MachineType cpu = {.name = "cpu", .bandwidth_gbps = 10, .devices = d4, .n_devices = 1};
    Error e;
    cr_assert_geq(cluster_add_type(c, &small, &e), 0);
    cr_assert_geq(cluster_add_type(c, &cpu, &e), 0);
    cr_assert_eq(cluster_add_machine(c, "a", "a", 1, &e), 0);
    cr_assert_eq(cluster_add_machine(c, "b", "b", 0, &e), 0);
    cr_assert_eq(cluster_add_machine(c, "c", "c", 1, &e), 0);
    cluster_finish(c);
    return c;
}

Test(slurm_alloc, one_component_per_gpu_count_in_machine_order)
{
    Cluster *c = two_shapes();
    int counts[SLURM_ALLOC_MAX_GROUPS];
    cr_assert_eq(slurm_alloc_gpu_groups(c, counts), 2);
    cr_assert_eq(counts[0], 0, "machine a (no GPU) comes first");
    cr_assert_eq(counts[1], 2);
    cr_assert_eq(slurm_alloc_machine_gpus(c, 1), 2);
    cluster_free(c);
}

/* SLURM_JOB_ID checked before the first trial (the walk on the harness: a stale id, and an
 * allocation of n1 alone for partition t4's n1 and n2, each failed every trial of the budget
 * with srun's error). */
static const char *existing_refused(const char *squeue_out)
{
    static Error err;
    Cluster *c = two_shapes();
    memset(&err, 0, sizeof err);
    cr_assert_eq(slurm_alloc_check_existing("43", squeue_out, c, &err), -1, "%s accepted",
                 squeue_out);
    cr_assert_eq(err.kind, ERROR_INPUT, "%s", err.msg);
    cluster_free(c);
    return err.msg;
}

Test(slurm_alloc, an_allocation_of_every_machine_is_taken)
{
    Cluster *c = two_shapes();
    Error err = {0};
    cr_assert_eq(slurm_alloc_check_existing("43", "RUNNING|a,b,c\n", c, &err), 0, "%s", err.msg);
    /* a heterogeneous job: a line per component */
    cr_assert_eq(slurm_alloc_check_existing("43", "RUNNING|a,c\nRUNNING|b\n", c, &err), 0, "%s",
                 err.msg);
    cluster_free(c);
}

Test(slurm_alloc, an_allocation_without_some_machines_is_refused_naming_them)
{
    cr_assert_str_eq(existing_refused("RUNNING|a\nRUNNING|b\n"),
                     "SLURM_JOB_ID=43: its allocation holds a,b, not c of the inventory's "
                     "machines (every usable node of its partition): expected an allocation of "
                     "all of them (salloc or sbatch with --nodelist), a partition that has only "
                     "its nodes, or SLURM_JOB_ID unset (tunedeck makes its own)");
}

Test(slurm_alloc, a_job_squeue_does_not_list_or_that_does_not_run_is_refused)
{
    cr_assert_str_eq(existing_refused(""),
                     "SLURM_JOB_ID=43: squeue lists no such job (it ended, or the id is not "
                     "one): expected the allocation tunedeck runs in (unset SLURM_JOB_ID and "
                     "tunedeck makes its own)");
    cr_assert(strstr(existing_refused("COMPLETED|a,b,c\n"),
                     "SLURM_JOB_ID=43: the job is COMPLETED in Slurm, not RUNNING"));
    cr_assert(strstr(existing_refused("RUNNING|a,b,c\nPENDING|\n"), "the job is PENDING"));
}

/* salloc against a busy partition, stood in (tests/support/standins.h): it queues job 77,
 * waits, and gives up by its --immediate (exit 1) or is cut by the command's timeout (it
 * sleeps on). The walk on the harness: cut at 30 s, its job stayed pending, then started
 * once the nodes were free and held them, with no one to release it. */
static char sdir[] = "/tmp/tunedeck-salloc.XXXXXX";

static char *interrupted; /* what a stopped stand-in's trap wrote */

static const char *busy_salloc_until(const char *then, double timeout_s, int (*stop)(void *),
                                     char **scancels)
{
    char body[512];
    snprintf(body, sizeof body,
             "echo 'salloc: Pending job allocation 77' >&2\n"
             "echo 'salloc: job 77 queued and waiting for resources' >&2\n%s",
             then);
    const char *const table[][2] = {{"salloc", body},
                                    {"scancel", "echo \"$*\" >> \"$D/scancel-calls\"\n"}};
    standins_install(sdir, table, 2);
    static Error err;
    memset(&err, 0, sizeof err);
    SlurmCtlOptions o = {.timeout_s = timeout_s};
    SlurmCtl *ctl = slurm_ctl_new(&o, &err);
    cr_assert_not_null(ctl, "%s", err.msg);
    Cluster *c = two_shapes();
    SlurmAlloc a;
    cr_assert_eq(slurm_alloc_open(ctl, c, "t4", NULL, 2, stop, sdir, &a, &err), -1);
    cr_assert_eq(err.kind, ERROR_REMOTE, "%s", err.msg);
    *scancels = standins_recorded(sdir, "scancel-calls");
    if (stop)
        interrupted = standins_recorded(sdir, "interrupted");
    cluster_free(c);
    slurm_ctl_free(ctl);
    standins_remove(sdir);
    return err.msg;
}

static const char *busy_salloc(const char *then, double timeout_s, char **scancels)
{
    return busy_salloc_until(then, timeout_s, NULL, scancels);
}

/* The operator's signal, once the stand-in has queued its job and waits. */
static int signalled_once_queued(void *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/queued", (const char *)dir);
    return access(path, F_OK) == 0;
}

/* Regression: Ctrl-C or SIGTERM while salloc waited for busy nodes took effect only when
 * salloc's own --immediate ended (25 s by default, up to an hour with a long
 * command_timeout_s), with no word meanwhile. Now salloc gets SIGINT at once (22.05 then
 * says "Job aborted due to signal" and its queued job is gone; seen on the harness), the job
 * is cancelled all the same, and the error says it was stopped, not that Slurm was busy. */
Test(slurm_alloc, a_signal_while_salloc_waits_stops_it_at_once)
{
    char *scancels = NULL;
    interrupted = NULL;
    const char *msg = busy_salloc_until(
        "trap 'kill $! 2>/dev/null; echo INT > \"$D/interrupted\"; "
        "echo \"salloc: Job aborted due to signal\" >&2; exit 1' INT\n"
        "sleep 60 > /dev/null 2>&1 &\n: > \"$D/queued\"\necho 'salloc: waiting' >&2\n"
        "wait\nexit 0\n",
        60, signalled_once_queued, &scancels);
    cr_assert_str_eq(msg, "the session's allocation: stopped while salloc waited for it (job 77, "
                          "which it had queued, is cancelled)");
    cr_assert_str_eq(scancels, "77\n");
    cr_assert_str_eq(interrupted, "INT\n", "salloc was not interrupted");
    free(scancels);
    free(interrupted);
}

/* A stop just after salloc was granted its allocation (salloc --no-shell then ends, exit 0)
 * cancels it before the open fails: it was handed on as the session's before, which began a
 * journal and released it only at its close. */
Test(slurm_alloc, a_stop_just_after_the_grant_cancels_the_allocation)
{
    char *scancels = NULL;
    interrupted = NULL;
    const char *msg =
        busy_salloc_until("echo 'salloc: Granted job allocation 77' >&2\n"
                          "trap 'kill $! 2>/dev/null; echo INT > \"$D/interrupted\"; exit 0' INT\n"
                          "sleep 60 > /dev/null 2>&1 &\n: > \"$D/queued\"\n"
                          "echo 'salloc: Nodes n1 are ready for job' >&2\nwait\nexit 0\n",
                          60, signalled_once_queued, &scancels);
    cr_assert_str_eq(msg, "the session's allocation: stopped while salloc waited for it (job 77, "
                          "granted as it stopped, is cancelled)");
    cr_assert_str_eq(scancels, "77\n");
    free(scancels);
    free(interrupted);
}

Test(slurm_alloc, a_busy_partition_is_said_so_and_its_queued_job_cancelled)
{
    char *scancels = NULL;
    const char *msg = busy_salloc(
        "echo 'salloc: error: Unable to allocate resources: Connection timed out' >&2\nexit 1\n",
        10, &scancels);
    cr_assert_str_eq(msg, "the session's allocation: Slurm did not start it within 2 s (salloc "
                          "--immediate): job 77 waited for the inventory's nodes, busy with other "
                          "jobs (squeue -w NODES shows them), and was cancelled; try again once "
                          "they are free, or wait longer with the inventory's \"slurm\": "
                          "{\"command_timeout_s\": S} (salloc waits a little less)");
    cr_assert_str_eq(scancels, "77\n");
    free(scancels);
}

Test(slurm_alloc, a_salloc_cut_by_the_timeout_has_its_queued_job_cancelled)
{
    char *scancels = NULL;
    const char *msg = busy_salloc("exec sleep 30\n", 1, &scancels);
    cr_assert(strstr(msg, "Slurm did not start it in time: job 77 waited"), "%s", msg);
    cr_assert_str_eq(scancels, "77\n", "the job left pending is cancelled");
    free(scancels);
}

Test(slurm_alloc, the_job_salloc_queued_or_granted)
{
    cr_assert_eq(slurm_alloc_parse_queued("salloc: Pending job allocation 7\n"), 7);
    cr_assert_eq(slurm_alloc_parse_queued("salloc: Pending job allocation 7\n"
                                          "salloc: Granted job allocation 7\n"),
                 7);
    cr_assert_eq(slurm_alloc_parse_queued("salloc: error: Invalid partition name\n"), -1);
}

/* scancel's words (Slurm 22.05, seen on the harness: exit 1 for an id it no longer has). */
Test(slurm_alloc, what_scancel_says_of_a_job)
{
    cr_assert_eq(slurm_alloc_cancel_outcome(0, "", "57", 0), SLURM_CANCEL_SENT);
    cr_assert_eq(
        slurm_alloc_cancel_outcome(
            1, "scancel: error: Kill job error on job id 57: Invalid job id specified\n", "57", 0),
        SLURM_CANCEL_GONE);
    cr_assert_eq(slurm_alloc_cancel_outcome(
                     1,
                     "scancel: error: Kill job error on job id 57: Job/step already completing "
                     "or completed\n",
                     "57", 0),
                 SLURM_CANCEL_GONE);
    cr_assert_eq(
        slurm_alloc_cancel_outcome(
            1, "scancel: error: Kill job error on job id 57: Access/permission denied\n", "57", 0),
        SLURM_CANCEL_REFUSED);
    /* -v with --me --name: the job signalled is named; none named is none of ours */
    cr_assert_eq(slurm_alloc_cancel_outcome(0, "scancel: Terminating job 57\n", "57", 1),
                 SLURM_CANCEL_SENT);
    cr_assert_eq(slurm_alloc_cancel_outcome(0, "scancel: Terminating job 571\n", "57", 1),
                 SLURM_CANCEL_GONE);
    cr_assert_eq(slurm_alloc_cancel_outcome(0, "", "57", 1), SLURM_CANCEL_GONE);
}

/* The words captured on the harness (tests/fixtures/slurm/README says each command). */
static SlurmCancelOutcome captured(const char *file, int rc, const char *id, int verbose)
{
    char *text = fixture_read(file);
    SlurmCancelOutcome o = slurm_alloc_cancel_outcome(rc, text, id, verbose);
    free(text);
    return o;
}

Test(slurm_alloc, what_scancel_said_on_the_harness)
{
    cr_assert_eq(captured("slurm/scancel-22.05-ours.err", 0, "1", 1), SLURM_CANCEL_SENT);
    cr_assert_eq(captured("slurm/scancel-22.05-other-name.err", 0, "1", 1), SLURM_CANCEL_GONE,
                 "another job's name: not ours, left alone");
    cr_assert_eq(captured("slurm/scancel-22.05-ended.err", 1, "3", 1), SLURM_CANCEL_GONE);
    cr_assert_eq(captured("slurm/scancel-22.05-ended-and-ours.err", 1, "3", 1), SLURM_CANCEL_GONE);
    cr_assert_eq(captured("slurm/scancel-22.05-ended-and-ours.err", 1, "4", 1), SLURM_CANCEL_SENT);
    cr_assert_eq(captured("slurm/scancel-22.05-completed.err", 0, "1", 1), SLURM_CANCEL_GONE,
                 "\"Terminating job 1\", then refused: it was completing already");
    cr_assert_eq(captured("slurm/scancel-22.05-no-controller.err", 1, "1", 0),
                 SLURM_CANCEL_REFUSED);
}

static char cdir[] = "/tmp/tunedeck-scancel.XXXXXX";

/* slurm_alloc_close with scancel stood in by `body`: its return, err, and what it was asked */
static int close_with(const char *body, Error *err, char **calls)
{
    const char *const table[][2] = {{"scancel", body}};
    standins_install(cdir, table, 1);
    SlurmCtlOptions o = {.timeout_s = 10};
    SlurmCtl *ctl = slurm_ctl_new(&o, err);
    cr_assert_not_null(ctl, "%s", err->msg);
    SlurmAlloc a = {.job_id = "57", .name = "tunedeck-tune-1234", .owned = 1};
    memset(err, 0, sizeof *err);
    int rc = slurm_alloc_close(ctl, &a, err);
    cr_assert_eq(a.job_id[0], 0, "forgotten either way");
    *calls = standins_recorded(cdir, "calls");
    slurm_ctl_free(ctl);
    standins_remove(cdir);
    return rc;
}

/* The walk on the harness: the login node's sshd stopped, Ctrl-C during the wait for it; the
 * scancel could not reach the login node and the allocation held n1 and n2 until its time
 * limit, said nowhere. */
Test(slurm_alloc, a_release_that_fails_names_the_job_and_the_command)
{
    Error err;
    char *calls = NULL;
    int rc = close_with("echo \"$*\" >> \"$D/calls\"\n"
                        "echo 'scancel: error: Unable to contact slurm controller (connect "
                        "failure)' >&2\nexit 1\n",
                        &err, &calls);
    cr_assert_eq(rc, -1);
    cr_assert_str_eq(calls, "57\n");
    cr_assert_eq(err.kind, ERROR_REMOTE);
    cr_assert(strstr(err.msg, "the session's allocation, Slurm job 57 (tunedeck-tune-1234), was "
                              "not released: "),
              "%s", err.msg);
    cr_assert(strstr(err.msg, "Unable to contact slurm controller"), "%s", err.msg);
    cr_assert(strstr(err.msg, "; it holds the inventory's nodes until its time limit: release it "
                              "with `scancel 57`"),
              "%s", err.msg);
    free(calls);
}

Test(slurm_alloc, a_job_slurm_no_longer_has_counts_as_released)
{
    Error err;
    char *calls = NULL;
    cr_assert_eq(close_with("echo 'scancel: error: Kill job error on job id 57: Invalid job id "
                            "specified' >&2\nexit 1\n",
                            &err, &calls),
                 0, "%s", err.msg);
    free(calls);
    cr_assert_eq(close_with("exit 0\n", &err, &calls), 0, "%s", err.msg);
    free(calls);
}

/* A left allocation is cancelled only as a job of ours under its name (an id Slurm handed
 * to another job since is left alone). */
Test(slurm_alloc, a_left_allocation_is_released_by_id_name_and_owner)
{
    const char *const table[][2] = {
        {"scancel", "echo \"$*\" >> \"$D/calls\"\n"
                    "[ \"$4\" = 57 ] && echo 'scancel: Terminating job 57' >&2\nexit 0\n"}};
    standins_install(cdir, table, 1);
    Error err;
    SlurmCtlOptions o = {.timeout_s = 10};
    SlurmCtl *ctl = slurm_ctl_new(&o, &err);
    cr_assert_not_null(ctl, "%s", err.msg);
    cr_assert_eq(slurm_alloc_release_left(ctl, "57", "tunedeck-tune-1234", &err), 1, "%s", err.msg);
    cr_assert_eq(slurm_alloc_release_left(ctl, "58", "tunedeck-tune-1234", &err), 0, "%s", err.msg);
    cr_assert_eq(slurm_alloc_release_left(ctl, "57;x", "tunedeck-tune-1234", &err), -1);
    char *calls = standins_recorded(cdir, "calls");
    cr_assert_str_eq(calls, "-v --me --name=tunedeck-tune-1234 57\n"
                            "-v --me --name=tunedeck-tune-1234 58\n");
    free(calls);
    slurm_ctl_free(ctl);
    standins_remove(cdir);
}

/* Regression: a SLURM_JOB_ID that is not a number was refused unmarked, so `tune` exited 2
 * (a usage error) where every other refusal of it exits 3 (docs/slurm.md); no command runs. */
Test(slurm_alloc, a_slurm_job_id_that_is_no_number_is_an_input_error)
{
    SlurmCtlOptions o = {.timeout_s = 5};
    Error err = {0};
    SlurmCtl *ctl = slurm_ctl_new(&o, &err);
    cr_assert_not_null(ctl, "%s", err.msg);
    Cluster *c = two_shapes();
    SlurmAlloc a;
    cr_assert_eq(slurm_alloc_open(ctl, c, "t4", "abc", 2, NULL, NULL, &a, &err), -1);
    cr_assert_str_eq(err.msg, "SLURM_JOB_ID: expected a job number, found 'abc'");
    cr_assert_eq(err.kind, ERROR_INPUT);
    cr_assert_eq(slurm_ctl_calls(ctl), 0);
    cluster_free(c);
    slurm_ctl_free(ctl);
}
