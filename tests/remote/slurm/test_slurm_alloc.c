#include <criterion/criterion.h>

#include "remote/slurm/slurm_alloc.h"

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
