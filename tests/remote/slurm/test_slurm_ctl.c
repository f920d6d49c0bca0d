#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/slurm/slurm_ctl.h"
#include "tests/support/execprobe.h"
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

/* A command that cannot run here (not installed, or no Slurm configuration found) is told
 * from a controller that does not answer: no later call changes it, so a watch stops on it
 * (it printed "the controller did not answer" and retried until Ctrl-C). */
Test(slurm_ctl, a_command_that_cannot_run_here_is_told_from_a_controller_away)
{
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    const char *away[] = {"sh", "-c",
                          "echo 'squeue: error: Unable to contact slurm controller (connect "
                          "failure)' >&2; exit 1",
                          NULL};
    cr_assert_eq(slurm_ctl_run(c, away, NULL, &e), 1);
    cr_assert_eq(slurm_ctl_last_unusable(c), 0, "a controller away may come back");
    const char *no_conf[] = {"sh", "-c",
                             "echo 'squeue: fatal: Could not establish a configuration source' "
                             ">&2; exit 1",
                             NULL};
    cr_assert_eq(slurm_ctl_run(c, no_conf, NULL, &e), 1);
    cr_assert_eq(slurm_ctl_last_unusable(c), 1, "%s", e.msg);
    const char *ok[] = {"true", NULL};
    cr_assert_eq(slurm_ctl_run(c, ok, NULL, &e), 0);
    cr_assert_eq(slurm_ctl_last_unusable(c), 0, "the last call's alone");
    const char *missing[] = {"tunedeck-no-such-slurm-command", NULL};
    cr_assert_eq(slurm_ctl_run(c, missing, NULL, &e), -1);
    cr_assert(strstr(e.msg, "not found here"), "%s", e.msg);
    cr_assert_eq(slurm_ctl_last_unusable(c), 1);
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

/* Why slurmctld refused a submission, which sbatch prints on the line before the error's own
 * words (the limit's reason, or a job_submit plugin's words: job_submit/throttle's, captured on
 * the harness), is kept with them: "Job violates accounting/QOS policy" alone does not say
 * whether a count of jobs (which clears) or a size (which does not) is over. A line before
 * any other last line is not. */
Test(slurm_ctl, a_refused_submissions_error_keeps_the_reason_line_before_its_last_line)
{
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    const char *throttled[] = {"sh", "-c",
                               "cat " TUNEDECK_SOURCE_DIR
                               "/tests/fixtures/slurm/sbatch-22.05-throttled.err >&2; exit 1",
                               NULL};
    cr_assert_eq(slurm_ctl_run(c, throttled, NULL, &e), 1);
    cr_assert_str_eq(e.msg, "sh exited with status 1: sbatch: error: Reached jobs per hour limit; "
                            "sbatch: error: Batch job submission failed: Job violates "
                            "accounting/QOS policy (job submit limit, user's size and/or time "
                            "limits)");
    const char *qos[] = {"sh", "-c",
                         "echo 'sbatch: error: QOSMaxSubmitJobPerUserLimit' >&2; echo 'sbatch: "
                         "error: Batch job submission failed: Job violates accounting/QOS "
                         "policy' >&2; exit 1",
                         NULL};
    cr_assert_eq(slurm_ctl_run(c, qos, NULL, &e), 1);
    cr_assert_str_eq(e.msg, "sh exited with status 1: sbatch: error: "
                            "QOSMaxSubmitJobPerUserLimit; sbatch: error: Batch job submission "
                            "failed: Job violates accounting/QOS policy");
    const char *other[] = {"sh", "-c",
                           "echo 'scancel: error: Kill job error on job id 41: done' >&2; echo "
                           "'scancel: error: Kill job error on job id 42: done' >&2; exit 1",
                           NULL};
    cr_assert_eq(slurm_ctl_run(c, other, NULL, &e), 1);
    cr_assert_str_eq(e.msg, "sh exited with status 1: scancel: error: Kill job error on job id "
                            "42: done");
    slurm_ctl_free(c);
}

static void on_signal(int sig)
{
    (void)sig;
}

/* Regression: a Slurm command run here was forked with tunedeck's handlers (only SIGPIPE was
 * reset): a TERM between its fork and its exec ran tunedeck's handler in the child. Checked
 * in the child at its exec (execprobe.h). */
Test(slurm_ctl, a_command_here_has_no_handler_or_blocked_signal_of_ours_at_its_exec)
{
    char path[] = "/tmp/tunedeck-execprobe-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    struct sigaction sa = {.sa_handler = on_signal}, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term);
    sigset_t usr2, before;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, &before);
    setenv(EXECPROBE_ENV, path, 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    const char *argv[] = {"true", NULL};
    int rc = slurm_ctl_run(c, argv, NULL, &e);
    slurm_ctl_free(c);
    unsetenv(EXECPROBE_ENV);
    sigprocmask(SIG_SETMASK, &before, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    cr_assert_eq(rc, 0, "%s", e.msg);
    unsigned long long blocked, ignored, caught;
    int read = execprobe_read(path, &blocked, &ignored, &caught);
    unlink(path);
    cr_assert_eq(read, 0, "the exec did not pass through the probe");
    cr_assert_eq(caught & (1ULL << (SIGTERM - 1)), 0, "SIGTERM runs our handler");
    cr_assert_eq(blocked, 0, "signals blocked at the command's exec: %llx", blocked);
}

/* Regression: a command cut by the timeout was "no answer within 1 s (is slurmctld up?)"
 * alone, though it had said why it hung: sinfo with SLURM_CONF naming no file retries for 60 s
 * after a first line that says so (seen on the harness). A silent one keeps the guess. */
Test(slurm_ctl, a_command_cut_by_the_timeout_keeps_what_it_said)
{
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 1};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    const char *noconf[] = {"sh", "-c",
                            "echo 'sinfo: error: s_p_parse_file: cannot stat file "
                            "/nowhere/slurm.conf: No such file or directory, retrying in 1sec "
                            "up to 60sec' >&2; exec sleep 30",
                            NULL};
    cr_assert_lt(slurm_ctl_run(c, noconf, NULL, &e), 0);
    cr_assert_str_eq(e.msg, "sh: no answer within 1 s; it said: sinfo: error: s_p_parse_file: "
                            "cannot stat file /nowhere/slurm.conf: No such file or directory, "
                            "retrying in 1sec up to 60sec (the slurm.conf it was given cannot "
                            "be read: check SLURM_CONF)");
    const char *silent[] = {"sleep", "30", NULL};
    cr_assert_lt(slurm_ctl_run(c, silent, NULL, &e), 0);
    cr_assert_str_eq(e.msg, "sleep: no answer within 1 s (is slurmctld up?)");
    slurm_ctl_free(c);
}
