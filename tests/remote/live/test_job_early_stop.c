/* A SIGTERM to a live job's group that lands while its wrapping shell still sets the job up
 * (folder, lock, hostfile) stops it there: the job is not started. With `trap : TERM` the
 * signal was lost, the job started without ever seeing it and was killed stop_timeout_s
 * later with no checkpoint. The shell runs here by /bin/sh on a real folder; a stand-in
 * chmod, first on PATH, sends the TERM to its shell at the set-up's chmod. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/live/jobctl.h"
#include "remote/live/schedlive.h"

static char top[] = "/tmp/tunedeck-earlystop.XXXXXX";

static void setup(void)
{
    cr_assert_not_null(mkdtemp(top));
    char path[256];
    snprintf(path, sizeof path, "%s/bin", top);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/bin/chmod", top);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    /* TERM to the shell that runs it, then the real chmod (this folder off PATH) */
    fputs("#!/bin/sh\nkill -TERM $PPID\nPATH=${PATH#*:}\nexec chmod \"$@\"\n", f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(path, 0700), 0);
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    cr_assert_eq(system(cmd), 0);
}

/* The job's whole command for one host, run by sh in top after env (assignments); its exit
 * status. */
static int run_job(const char *env)
{
    Error e;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/jobs", top);
    char *t = schedlive_job_template("echo started > started.txt", dir, "j-0", &e);
    cr_assert_not_null(t, "%s", e.msg);
    static const int ids[] = {0};
    const JobHost h[] = {{"h1", 1, ids}};
    JobAlloc a = {.gpus = 1, .hosts = h, .n_hosts = 1, .resume = ""};
    char *cmd = jobctl_command(t, &a, &e);
    free(t);
    cr_assert_not_null(cmd, "%s", e.msg);
    char path[256];
    snprintf(path, sizeof path, "%s/job.sh", top);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s\n", cmd);
    free(cmd);
    cr_assert_eq(fclose(f), 0);
    char run[512];
    snprintf(run, sizeof run, "cd '%s' && %s sh job.sh 2>err.txt", top, env);
    int st = system(run);
    cr_assert(WIFEXITED(st), "status %d", st);
    return WEXITSTATUS(st);
}

static int started(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/jobs/j-0/started.txt", top);
    return access(path, F_OK) == 0;
}

Test(job_early_stop, a_term_while_the_shell_sets_the_job_up_stops_it_before_it_starts,
     .init = setup, .fini = teardown)
{
    cr_assert_eq(run_job("PATH=\"$PWD/bin:$PATH\""), 143);
    cr_assert_not(started(), "the job started after its SIGTERM");
    char path[256];
    snprintf(path, sizeof path, "%s/err.txt", top);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[256] = "";
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_str_eq(line, "tunedeck: asked to stop before the job started: not started\n");
}

/* The same shell with no signal starts the job (the stand-in is what stops it above), even
 * in an environment that happens to set the trap's variable. */
Test(job_early_stop, with_no_term_the_job_starts, .init = setup, .fini = teardown)
{
    cr_assert_eq(run_job("td_term=1"), 0);
    cr_assert(started());
}
