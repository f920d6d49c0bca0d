#include <criterion/criterion.h>
#include <string.h>

#include "remote/slurm/slurm_ctl.h"
#include "tests/support/ssh_hermetic.h"

/* The counters the controller-load benchmark reads: every command is one call, and the
 * bytes are its standard output only (not its standard error), failed calls included. */
Test(slurm_ctl, counts_calls_and_bytes_of_standard_output)
{
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    cr_assert_eq(slurm_ctl_calls(c), 0);
    cr_assert_eq(slurm_ctl_bytes_read(c), 0);
    const char *twelve[] = {"printf", "node|8|4000\n", NULL};
    char *out = NULL;
    cr_assert_eq(slurm_ctl_run(c, twelve, &out, &e), 0, "%s", e.msg);
    cr_assert_str_eq(out, "node|8|4000\n");
    free(out);
    const char *to_stderr[] = {"sh", "-c", "echo no >&2; printf abc; exit 3", NULL};
    cr_assert_eq(slurm_ctl_run(c, to_stderr, NULL, &e), 3);
    cr_assert_eq(slurm_ctl_calls(c), 2);
    cr_assert_eq(slurm_ctl_bytes_read(c), 12 + 3);
    slurm_ctl_free(c);
}

/* Regression: with no slurm.conf (and no configless slurmctld) a command's error was Slurm's
 * "Could not establish a configuration source" alone, which names no way out. */
Test(slurm_ctl, no_configuration_found_says_to_set_slurm_conf)
{
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    const char *sinfo[] = {"sh", "-c",
                           "echo 'sinfo: fatal: Could not establish a configuration source' >&2; "
                           "exit 1",
                           NULL};
    cr_assert_eq(slurm_ctl_run(c, sinfo, NULL, &e), 1);
    cr_assert(strstr(e.msg, "Could not establish a configuration source (no Slurm configuration "
                            "here: set SLURM_CONF to the cluster's slurm.conf"),
              "%s", e.msg);
    slurm_ctl_free(c);
}
