#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/slurm/slurm_alloc.h"
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

static const char *busy_salloc(const char *then, double timeout_s, char **scancels)
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
    cr_assert_eq(slurm_alloc_open(ctl, c, "t4", NULL, 2, &a, &err), -1);
    cr_assert_eq(err.kind, ERROR_REMOTE, "%s", err.msg);
    *scancels = standins_recorded(sdir, "scancel-calls");
    cluster_free(c);
    slurm_ctl_free(ctl);
    standins_remove(sdir);
    return err.msg;
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
